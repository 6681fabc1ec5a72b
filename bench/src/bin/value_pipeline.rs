//! The `serde_json::Value` pipeline of `bench/compare/run.sh`: the filter and
//! projection a user writes with serde_json alone — parse the whole page into a
//! `Value`, keep the rows whose `total` is above 100, project each to `id`,
//! `customer.name` and `total`, print one JSON line per row.
#![forbid(unsafe_code)]

use std::io::Write;

use anyhow::{Context, Result};
use serde_json::{json, Value};

fn main() -> Result<()> {
    let file = std::env::args()
        .nth(1)
        .context("usage: value_pipeline FILE")?;
    let text = std::fs::read(&file)?;
    let page: Value = serde_json::from_slice(&text)?;
    let rows = page["data"].as_array().context("a data array")?;
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    for row in rows {
        if row["total"].as_f64().is_some_and(|t| t > 100.0) {
            let projected = json!({
                "id": row["id"],
                "customer": {"name": row["customer"]["name"]},
                "total": row["total"],
            });
            serde_json::to_writer(&mut out, &projected)?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    Ok(())
}
