//! `[server] upstream_hosts` when a workflow is pushed (issue 21): each
//! provider's `base_url` held to the server's host policy by name, a
//! refused one reported at that `base_url`. Its addresses are held to the
//! policy again when it is called (the upstream's resolver).

use std::path::Path as FsPath;

use dragnet_engine::workflow::model::Workflow;
use dragnet_engine::workflow::Diagnostics;
use dragnet_http::{HostPolicy, HostRefused};
use dragnet_located::cursor::Cursor;
use dragnet_located::load::{load, Kind};
use dragnet_located::yaml::Pos;

/// A diagnostic at the `base_url` of every provider of `wf` whose host
/// the policy refuses; `Ok` when none is.
pub fn check(
    policy: &HostPolicy,
    file_name: &str,
    source: &str,
    wf: &Workflow,
) -> Result<(), Diagnostics> {
    let refused: Vec<(&str, HostRefused)> = wf
        .providers
        .iter()
        .filter_map(|(name, p)| {
            policy
                .check_base_url(&p.base_url)
                .err()
                .map(|r| (name.as_str(), r))
        })
        .collect();
    if refused.is_empty() {
        return Ok(());
    }
    let message = |name: &str, r: &HostRefused| {
        format!("the base_url of provider `{name}` may not be used on this server: {r}")
    };
    let kind = Kind {
        when_empty: "the workflow file is empty",
        when_failed: "a provider's base_url points where this server refuses",
    };
    let located = load(FsPath::new(file_name), source, kind, |cx, root| {
        let root = Cursor::root(root);
        for (name, r) in &refused {
            let at = root
                .key("providers")
                .and_then(|p| p.key(name))
                .and_then(|p| p.key("base_url"));
            match at {
                Some(at) => cx.error(&at, message(name, r)),
                None => cx.at(Pos::START, "", message(name, r)),
            }
        }
        Some(())
    });
    match located {
        Err(diagnostics) => Err(diagnostics),
        // Unreachable (every refusal is reported), but never an `Ok`.
        Ok(()) => {
            let mut cx = dragnet_located::context::Ctx::new(FsPath::new(file_name));
            for (name, r) in &refused {
                cx.at(Pos::START, "", message(name, r));
            }
            Err(cx.finish())
        }
    }
}
