//! `dragnet tools`: every tool of a document with method, path, and which
//! parameters page it (and where), or why it cannot be walked; the
//! document's `operationId` beside any name that differs from it.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use dragnet_core::paging::detect::{Position, Walkability};

use dragnet_core::Tool;
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
    let toolkit = dragnet_openapi::import_file(&args.spec)?;
    if args.json {
        let list: Vec<Value> = toolkit
            .tools
            .iter()
            .map(|t| tool_json(t, toolkit.operation_id(&t.name)))
            .collect();
        serde_json::to_writer_pretty(&mut *out, &list)?;
        writeln!(out)?;
        return Ok(EXIT_COMPLETE);
    }
    let walkable = toolkit.tools.iter().filter(|t| t.can_walk()).count();
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
            "{:<name_width$}  {:<6} {:<40} {}{}",
            tool.name,
            tool.method.as_upper(),
            tool.path,
            paging_text(tool),
            original_text(&tool.name, toolkit.operation_id(&tool.name))
        )?;
    }
    Ok(EXIT_COMPLETE)
}

/// `  (operationId: café)` when the document's id is not the tool's name.
fn original_text(name: &str, operation_id: Option<&str>) -> String {
    match operation_id {
        Some(id) if id != name => format!("  (operationId: {id})"),
        _ => String::new(),
    }
}

fn paging_text(tool: &Tool) -> String {
    if let Some(c) = tool.cursor_walk() {
        let size = c
            .size
            .as_ref()
            .map(|s| format!(" size={}", s.name))
            .unwrap_or_default();
        return match &c.param {
            Some(p) => format!(
                "walkable: cursor={}{size} next={}",
                p.name,
                c.next.describe()
            ),
            None => format!(
                "walkable: follows the next URL in {}{size}",
                c.next.describe()
            ),
        };
    }
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

/// `{"name","operationId","method","path","walkable","paging":{"size","page","offset","location"}}`;
/// `operationId` is the document's own (null when the tool is named by
/// method and path), `name` the one to call it by (the id works too).
pub fn tool_json(tool: &Tool, operation_id: Option<&str>) -> Value {
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
    let mut paging = paging;
    if let Some(obj) = paging.as_object_mut() {
        let style = match (&tool.walkability, &tool.cursor) {
            (Walkability::Walkable(p), _) => match p.position {
                Position::Page(_) => json!("page"),
                Position::Offset(_) => json!("offset"),
            },
            (_, Some(c)) => json!(c.style),
            _ => Value::Null,
        };
        obj.insert("style".into(), style);
        if let Some(c) = &tool.cursor {
            obj.insert(
                "cursor".into(),
                c.param.as_ref().map_or(
                    Value::Null,
                    |p| json!({"name": p.name, "location": p.location}),
                ),
            );
            obj.insert("next".into(), json!(c.next.describe()));
            if let Some(size) = &c.size {
                obj.insert("size".into(), json!(size.name));
                obj.insert("location".into(), json!(size.location));
            }
        }
    }
    let mut v = json!({
        "name": tool.name,
        "operationId": operation_id,
        "method": tool.method.as_upper(),
        "path": tool.path,
        "walkable": tool.can_walk(),
        "paging": paging,
    });
    if !tool.can_walk() {
        if let Some(obj) = v.as_object_mut() {
            obj.insert("reason".into(), json!(tool.walkability.reason()));
        }
    }
    v
}
