//! `dragnet demo`: starts the demo shop in-process on a free port and runs
//! the two example workflows against it — `nightly-open-orders` (fan-out,
//! every page, projection, filter, branch to a report) and `all-orders-audit`
//! (a walk that hits its page bound, so the branch raises an alert). Needs no
//! network and no services.

use std::collections::HashMap;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use dragnet_engine::run::RunOptions;
use dragnet_engine::workflow;

use crate::config::{Config, Lifetime};
use crate::out::Out;
use crate::run_display::print_summary;
use crate::services::Services;
use crate::workflow_cmd::{exit_code, run_with_display};
use crate::EXIT_ERROR;

/// The example workflows, next to the shop's OpenAPI document.
pub fn example(name: &str) -> PathBuf {
    let dir = dragnet_shop::openapi_path()
        .parent()
        .map(PathBuf::from)
        .unwrap_or_default();
    dir.join(name)
}

pub async fn run(config: &Config, out: &mut Out) -> Result<u8> {
    let shop = dragnet_shop::start(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .context("cannot start the demo shop")?;
    writeln!(out, "demo shop listening on {}", shop.base_url())?;
    let services = Services::open(config, Lifetime::OneShot).await?;
    services.start_sweeper();
    let outcome = run_both(shop.base_url(), &services, out).await;
    services.shutdown().await;
    let received = shop.requests();
    shop.shutdown().await;
    let code = outcome?;
    writeln!(
        out,
        "Run records are kept in {}; see them with `dragnet runs list`.",
        config.database_url
    )?;
    let posted = |path: &str| {
        received
            .iter()
            .filter(|r| r.method == "POST" && r.path == path)
            .count()
    };
    writeln!(
        out,
        "\nThe shop received {} requests: {} report(s) and {} alert(s) were posted.",
        received.len(),
        posted("/reports"),
        posted("/alerts")
    )?;
    Ok(code)
}

async fn run_both(base_url: &str, services: &Services, out: &mut Out) -> Result<u8> {
    let mut code = EXIT_ERROR;
    for file in [
        "nightly-open-orders.workflow.yaml",
        "all-orders-audit.workflow.yaml",
    ] {
        let path = example(file);
        let wf = Arc::new(workflow::load(&path)?);
        writeln!(
            out,
            "\n== {} — {}",
            wf.name,
            wf.description.clone().unwrap_or_default()
        )?;
        out.flush()?;
        let options = RunOptions {
            base_urls: HashMap::from([("shop".to_string(), base_url.to_string())]),
            concurrency: services.config.concurrency.get(),
            limits: services.config.limits.clone(),
            cache: services.run_cache(false, false),
            clock: services.clock.clone(),
            ..RunOptions::default()
        };
        let record = run_with_display(wf, options, services).await?;
        print_summary(&record, out)?;
        // The nightly run decides the demo's exit code; the audit is partial
        // by design (its walk hits the page bound) and shows the else path.
        if file.starts_with("nightly") {
            code = exit_code(&record);
        }
    }
    Ok(code)
}
