//! `dragnet shop --port N`: serves the demo shop until Ctrl-C.

use std::net::SocketAddr;

use anyhow::{Context, Result};
use clap::Args;

use crate::out::say;
use crate::EXIT_COMPLETE;

#[derive(Args)]
pub struct ShopArgs {
    /// Port to listen on (127.0.0.1); 0 picks a free one.
    #[arg(long, default_value_t = 8080)]
    port: u16,
}

pub async fn run(args: ShopArgs) -> Result<u8> {
    let addr = SocketAddr::from(([127, 0, 0, 1], args.port));
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let local = listener.local_addr()?;
    say(&format!(
        "demo shop listening on http://{local} (OpenAPI document: {}); Ctrl-C stops it",
        dragnet_shop::openapi_path().display()
    ));
    dragnet_shop::serve(listener, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await?;
    Ok(EXIT_COMPLETE)
}
