//! `dragnet tools`: every tool of a document with method, path, and which
//! parameters page it (and where), or why it cannot be walked.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use dragnet_steps::looping::detect::{Position, Walkability};
use dragnet_steps::openapi;
use dragnet_steps::Tool;
use serde_json::{json, Value};

use crate::out::Out;
use crate::EXIT_COMPLETE;

#[derive(Args)]
pub struct ToolsArgs {
    /// The OpenAPI 3.x or Swagger 2.0 document (JSON or YAML).
    #[arg(long)]
    spec: PathBuf,
    /// Print a JSON array instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ToolsArgs, out: &mut Out) -> Result<u8> {
    let toolkit = openapi::import_file(&args.spec)?;
    if args.json {
        let list: Vec<Value> = toolkit.tools.iter().map(tool_json).collect();
        serde_json::to_writer_pretty(&mut *out, &list)?;
        writeln!(out)?;
        return Ok(EXIT_COMPLETE);
    }
    let walkable = toolkit
        .tools
        .iter()
        .filter(|t| t.walkability.is_walkable())
        .count();
    writeln!(
        out,
        "{}: {} tools, {} walkable",
        toolkit.source,
        toolkit.tools.len(),
        walkable
    )?;
    let name_width = toolkit
        .tools
        .iter()
        .map(|t| t.name.len())
        .max()
        .unwrap_or(4)
        .min(48);
    for tool in &toolkit.tools {
        writeln!(
            out,
            "{:<name_width$}  {:<6} {:<40} {}",
            tool.name,
            tool.method.as_upper(),
            tool.path,
            paging_text(tool)
        )?;
    }
    Ok(EXIT_COMPLETE)
}

fn paging_text(tool: &Tool) -> String {
    match &tool.walkability {
        Walkability::Walkable(p) => {
            let (role, pos) = match &p.position {
                Position::Page(q) => ("page", q),
                Position::Offset(q) => ("offset", q),
            };
            format!(
                "walkable: size={} {role}={} ({})",
                p.size.name, pos.name, p.size.location
            )
        }
        Walkability::Cursor { param } => format!("not walkable: cursor ({param})"),
        Walkability::SizeOnly { size } => format!("not walkable: size only ({size})"),
        Walkability::PositionOnly { position } => {
            format!("not walkable: no page size ({position})")
        }
        Walkability::NoPaging => "-".to_string(),
    }
}

/// `{"name","method","path","walkable","paging":{"size","page","offset","location"}}`.
pub fn tool_json(tool: &Tool) -> Value {
    let paging = match &tool.walkability {
        Walkability::Walkable(p) => {
            let (page, offset) = match &p.position {
                Position::Page(q) => (json!(q.name), Value::Null),
                Position::Offset(q) => (Value::Null, json!(q.name)),
            };
            json!({"size": p.size.name, "page": page, "offset": offset, "location": p.size.location})
        }
        _ => json!({"size": null, "page": null, "offset": null, "location": null}),
    };
    let mut v = json!({
        "name": tool.name,
        "method": tool.method.as_upper(),
        "path": tool.path,
        "walkable": tool.walkability.is_walkable(),
        "paging": paging,
    });
    if !tool.walkability.is_walkable() {
        if let Some(obj) = v.as_object_mut() {
            obj.insert("reason".into(), json!(tool.walkability.reason()));
        }
    }
    v
}
