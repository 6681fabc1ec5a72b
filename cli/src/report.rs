//! How a failed command says so: one line on stderr saying each thing once
//! (a cause is added only when its text is not already in the message),
//! and with `--json` also one document on stdout,
//! `{"error": {"kind", "message", …structured fields}}`.

use std::io::Write;

use serde_json::{json, Map, Value};

use crate::failure::CliError;
use crate::out::{say, Out};

/// The error's message with the causes that add something.
pub fn message(e: &anyhow::Error) -> String {
    let mut text = e.to_string();
    for cause in e.chain().skip(1) {
        let more = cause.to_string();
        if !more.is_empty() && !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
    }
    text
}

/// `{"error": {"kind", "message", …}}` for `e`: the kind and fields of the
/// first error in the chain of a type that has them.
pub fn document(e: &anyhow::Error) -> Value {
    let (kind, fields) = describe(e);
    let mut body = Map::new();
    body.insert("kind".into(), json!(kind));
    body.insert("message".into(), json!(message(e)));
    for (k, v) in fields {
        body.entry(k).or_insert(v);
    }
    json!({ "error": body })
}

fn describe(e: &anyhow::Error) -> (&'static str, Map<String, Value>) {
    for cause in e.chain() {
        if let Some(e) = cause.downcast_ref::<dragnet_core::Error>() {
            return (e.kind(), e.details());
        }
        if let Some(e) = cause.downcast_ref::<dragnet_core::UpstreamError>() {
            return (e.kind(), e.details());
        }
        if let Some(e) = cause.downcast_ref::<CliError>() {
            let mut fields = Map::new();
            fields.insert("argument".into(), json!(e.argument()));
            return (e.kind(), fields);
        }
        if let Some(d) = cause.downcast_ref::<dragnet_engine::workflow::Diagnostics>() {
            return ("invalid_workflow", diagnostics(d));
        }
        if let Some(e) = cause.downcast_ref::<dragnet_engine::Error>() {
            return engine(e);
        }
        if cause.downcast_ref::<dragnet_store::Error>().is_some() {
            return ("database", Map::new());
        }
    }
    ("error", Map::new())
}

fn engine(e: &dragnet_engine::Error) -> (&'static str, Map<String, Value>) {
    use dragnet_engine::Error as E;
    let mut fields = Map::new();
    let kind = match e {
        E::Invalid(d) => return ("invalid_workflow", diagnostics(d)),
        E::Cycle(_) => "invalid_workflow",
        E::Input { name, .. } => {
            fields.insert("argument".into(), json!(format!("--input {name}")));
            "invalid_input"
        }
        E::UnknownProvider { name, .. } => {
            fields.insert("argument".into(), json!(format!("--base-url {name}")));
            "unknown_provider"
        }
    };
    (kind, fields)
}

fn diagnostics(d: &dragnet_engine::workflow::Diagnostics) -> Map<String, Value> {
    let list: Vec<Value> =
        d.0.iter()
            .map(|d| {
                json!({"file": d.file.display().to_string(), "line": d.line, "column": d.column,
                "path": d.path, "message": d.message})
            })
            .collect();
    let mut fields = Map::new();
    fields.insert("diagnostics".into(), Value::Array(list));
    fields
}

/// Says `e` on stderr and, with `as_json`, as one document on stdout.
pub fn report(e: &anyhow::Error, as_json: bool, out: &mut Out) {
    say(&format!("error: {}", message(e)));
    if as_json {
        let _ = writeln!(out, "{}", document(e)).and_then(|()| out.flush());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dragnet_core::{Error, UpstreamError};

    #[test]
    fn each_thing_is_said_once() {
        let e = anyhow::Error::new(Error::from(UpstreamError::Status {
            status: 500,
            excerpt: "{\"error\":\"boom\"}".into(),
            retry_after_ms: None,
        }));
        assert_eq!(
            message(&e),
            "upstream answered HTTP 500: {\"error\":\"boom\"}"
        );
        let e =
            anyhow::Error::new(std::io::Error::other("disk full")).context("writing the record");
        assert_eq!(message(&e), "writing the record: disk full");
    }

    #[test]
    fn documents_carry_the_kind_and_fields() {
        let e = anyhow::Error::new(Error::InvalidArgument {
            argument: "page".into(),
            message: "expected an integer".into(),
        })
        .context("calling listOrders");
        let doc = document(&e);
        assert_eq!(doc["error"]["kind"], "invalid_argument");
        assert_eq!(doc["error"]["argument"], "page");
        assert_eq!(
            doc["error"]["message"],
            "calling listOrders: invalid argument `page`: expected an integer"
        );
        let plain = anyhow::anyhow!("something else");
        assert_eq!(document(&plain)["error"]["kind"], "error");
    }
}
