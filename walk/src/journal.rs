//! The page journal as a walk uses it (SPEC §9): the journal and scope of
//! one call, and the key each request's page is kept under. The port itself
//! (`PageJournal`, `KeptPage`) is dragnet-core's.

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use dragnet_core::json::canonical;
use dragnet_core::ports::journal::PageJournal;
use dragnet_core::Tool;
use dragnet_http::Target;

/// A journal and the scope a call's pages are kept in (a step of a run).
#[derive(Clone, Copy)]
pub struct Journal<'a> {
    pub store: &'a dyn PageJournal,
    pub scope: &'a str,
}

/// The key of one request: the upstream that answers, the operation, and
/// the arguments (keys sorted), position included — or, for a page reached
/// by a next-page link, the link too.
pub fn request_key(upstream: &str, tool: &Tool, target: Target<'_>) -> String {
    let (arguments, link) = match target {
        Target::Arguments(arguments) => (arguments, None),
        Target::Link { arguments, url } => (arguments, Some(url)),
    };
    let mut material = json!({
        "upstream": upstream,
        "method": tool.method.as_upper(),
        "path": tool.path,
        "arguments": canonical(&Value::Object(arguments.clone())),
    });
    if let Some(link) = link {
        material["link"] = Value::String(link.to_string());
    }
    dragnet_core::hex::lower(&Sha256::digest(material.to_string().as_bytes()))
}
