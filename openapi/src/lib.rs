//! dragnet-openapi imports an OpenAPI 3.0/3.1 or Swagger 2.0 document,
//! JSON or YAML, into a [`Toolkit`] with one tool per operation. This file
//! owns the public entry points ([`import_file`], [`import_str`]), the
//! version check and the walk over `paths`; the private modules own the
//! rest: `parse` (JSON or YAML text), `doc` (`$ref` lookup and located
//! errors), `schema` (inlining), `params` and `body` (a tool's inputs),
//! `response` (the collection an operation answers with), `examples`,
//! `operation` (one operation to one tool, its paging detected with
//! dragnet-core's `paging`) and `naming` (unique tool names). `testing`
//! says where the workspace's tests find the real-world corpus.
//!
//! Lenient by design where real documents are sloppy: references to other
//! files are not followed (an empty schema stands in), undeclared `{path}`
//! variables become required string parameters, cookie parameters are
//! dropped. Strict where a guess would be wrong: a local `$ref` that names
//! nothing, a parameter without `name` or `in`, an operation or `paths`
//! that is not an object are errors naming the file and a JSON pointer.
#![forbid(unsafe_code)]

mod body;
mod doc;
mod examples;
mod naming;
mod operation;
mod params;
mod parse;
mod response;
mod schema;
#[doc(hidden)]
pub mod testing;

use std::path::Path;

use serde_json::Value;

use doc::{child, Doc, Resolved, Version};
use dragnet_core::error::Error;
use dragnet_core::tool::{Method, Toolkit};
use operation::{Built, Site};

/// Reads and imports the document at `path`; messages name it by its
/// display string.
pub fn import_file(path: &Path) -> Result<Toolkit, Error> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::ReadDocument {
        file: path.to_path_buf(),
        source,
    })?;
    import_str(&path.display().to_string(), &text)
}

/// Imports a document given as text; `source` names it in messages and in
/// `Toolkit::source`.
pub fn import_str(source: &str, text: &str) -> Result<Toolkit, Error> {
    let root = parse::parse(source, text)?;
    let version = version(source, &root)?;
    let doc = Doc {
        source,
        root: &root,
        version,
    };
    let Some(paths) = root.get("paths").and_then(Value::as_object) else {
        return Err(doc.invalid("/paths", "`paths` must be an object"));
    };
    let mut built: Vec<Built> = Vec::new();
    for (path, item) in paths {
        if path.starts_with("x-") {
            continue;
        }
        let item_at = child("/paths", path);
        let (item, item_at) = match doc.deref(item, &item_at)? {
            Resolved::Found(item, at) => (item, at),
            Resolved::Elsewhere => continue,
        };
        let Some(item_obj) = item.as_object() else {
            return Err(doc.invalid(&item_at, "a path item must be an object"));
        };
        let item_params = item_obj
            .get("parameters")
            .map(|p| (p, child(&item_at, "parameters")));
        for (key, operation) in item_obj {
            let Some(method) = Method::ALL
                .into_iter()
                .find(|m| m.key().eq_ignore_ascii_case(key))
            else {
                continue;
            };
            built.push(operation::build(
                &doc,
                Site {
                    path,
                    method,
                    operation,
                    pointer: child(&item_at, key),
                    item_params: item_params.clone(),
                },
            )?);
        }
    }
    let (tools, operation_ids) = naming::name_tools(built);
    Ok(Toolkit {
        source: source.to_string(),
        title: root
            .get("info")
            .and_then(|i| i.get("title"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim()
            .to_string(),
        tools,
        operation_ids,
    })
}

/// Which kind of document `root` is, or why it is not one we read.
fn version(source: &str, root: &Value) -> Result<Version, Error> {
    let invalid = |pointer: &str, message: String| Error::InvalidDocument {
        file: source.to_string(),
        pointer: pointer.to_string(),
        message,
    };
    let Some(obj) = root.as_object() else {
        return Err(invalid("", "the document is not an object".into()));
    };
    // YAML reads an unquoted `3.0` or `2.0` as a number: accept that too.
    let text = |v: &Value| match v {
        Value::String(s) => s.trim().to_string(),
        Value::Number(n) => n.to_string(),
        _ => String::new(),
    };
    if let Some(v) = obj.get("openapi") {
        let v = text(v);
        return if v == "3" || v.starts_with("3.0") || v.starts_with("3.1") {
            Ok(Version::OpenApi3)
        } else {
            Err(invalid(
                "/openapi",
                format!("unsupported OpenAPI version `{v}` (3.0 and 3.1 are read)"),
            ))
        };
    }
    if let Some(v) = obj.get("swagger") {
        let v = text(v);
        return if v == "2.0" || v == "2" {
            Ok(Version::Swagger2)
        } else {
            Err(invalid(
                "/swagger",
                format!("unsupported Swagger version `{v}` (2.0 is read)"),
            ))
        };
    }
    Err(invalid(
        "",
        "not an OpenAPI document: no `openapi` or `swagger` version".into(),
    ))
}

#[cfg(test)]
mod tests;
