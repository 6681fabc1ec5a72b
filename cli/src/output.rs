//! Printing a result: one JSON document with `--json`, else the rows as
//! JSON lines followed by a plain verdict block. An answer without a
//! collection is printed whole, with its note and no walk counters.

use std::io::Write;

use anyhow::Result;
use dragnet_core::{json, Payload};
use dragnet_walk::LoopResult;

use crate::out::Out;
use crate::{EXIT_COMPLETE, EXIT_PARTIAL};

pub fn print_result(result: &LoopResult, as_json: bool, out: &mut Out) -> Result<u8> {
    let v = &result.verdict;
    if as_json {
        dragnet_gateway::render::write(result, &mut *out)?;
        writeln!(out)?;
    } else {
        match &result.payload {
            Payload::Single(raw) => {
                serde_json::to_writer_pretty(&mut *out, &json::leaf(raw))?;
                writeln!(out)?;
            }
            _ => {
                for row in result.visible().iter() {
                    writeln!(out, "{row}")?;
                }
            }
        }
        writeln!(out)?;
        if !matches!(result.payload, Payload::Single(_)) {
            writeln!(
                out,
                "{}: {} rows, {} requests{}",
                if v.complete { "complete" } else { "PARTIAL" },
                v.item_count,
                v.requests,
                v.stopped_by
                    .map(|s| format!(", stopped by {}", s.as_str()))
                    .unwrap_or_default()
            )?;
        }
        writeln!(out, "{}", v.note)?;
        for (key, report) in result.reports() {
            write!(out, "{key}: ")?;
            serde_json::to_writer_pretty(&mut *out, &report)?;
            writeln!(out)?;
        }
    }
    Ok(if v.complete {
        EXIT_COMPLETE
    } else {
        EXIT_PARTIAL
    })
}
