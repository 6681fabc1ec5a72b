//! The fetch-only floor of `bench/compare/run.sh`: GET `/orders?page=N&per_page=SIZE`
//! sequentially with reqwest, read every body to bytes and keep them, stop after
//! `PAGES` pages. No JSON work at all: what any walker must pay at least.
#![forbid(unsafe_code)]

use anyhow::{Context, Result};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let base = args
        .next()
        .context("usage: fetch_floor BASE_URL SIZE PAGES")?;
    let size: u32 = args.next().context("SIZE")?.parse()?;
    let pages: u32 = args.next().context("PAGES")?.parse()?;
    let client = reqwest::Client::new();
    let mut kept = Vec::with_capacity(pages as usize);
    for page in 1..=pages {
        let url = format!("{base}/orders?page={page}&per_page={size}");
        let body = client.get(&url).send().await?.bytes().await?;
        kept.push(body);
    }
    let bytes: usize = kept.iter().map(|b| b.len()).sum();
    println!("{bytes}");
    Ok(())
}
