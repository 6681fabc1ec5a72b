//! Printing a result: one JSON document with `--json`, else the rows as
//! JSON lines followed by a plain verdict block.

use anyhow::Result;
use dragnet_steps::{json, LoopResult, Payload};

use crate::{EXIT_COMPLETE, EXIT_PARTIAL};

pub fn print_result(result: &LoopResult, as_json: bool) -> Result<u8> {
    let v = &result.verdict;
    if as_json {
        println!("{}", result.render_agent());
    } else {
        match &result.payload {
            Payload::Single(raw) => {
                println!("{}", serde_json::to_string_pretty(&json::leaf(raw))?);
            }
            _ => {
                for row in result.visible().iter() {
                    println!("{row}");
                }
            }
        }
        println!();
        println!(
            "{}: {} rows, {} requests{}",
            if v.complete { "complete" } else { "PARTIAL" },
            v.item_count,
            v.requests,
            v.stopped_by
                .map(|s| format!(", stopped by {}", s.as_str()))
                .unwrap_or_default()
        );
        println!("{}", v.note);
        for (key, report) in result.reports() {
            println!("{key}: {}", serde_json::to_string_pretty(&report)?);
        }
    }
    Ok(if v.complete {
        EXIT_COMPLETE
    } else {
        EXIT_PARTIAL
    })
}
