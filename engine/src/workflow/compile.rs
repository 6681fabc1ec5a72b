//! Compile: the positioned tree of a workflow file becomes a
//! `model::Workflow`. Sections are read one by one (top-level keys, inputs,
//! providers, triggers, each step), then the graph pass checks the steps
//! together. Every problem is reported and compiling carries on; the
//! workflow is returned only when there were none.

use std::path::Path;

use super::context::Ctx;
use super::cursor::{describe, Cursor};
use super::documents::DocumentSource;
use super::file::TOP_LEVEL_KEYS;
use super::graph;
use super::model::Workflow;
use super::providers::providers;
use super::sections::{inputs, triggers};
use super::steps::{compile_step, Env};
use super::yaml::Node;

pub fn compile(
    cx: &mut Ctx,
    root: &Node,
    source: &Path,
    documents: &DocumentSource,
) -> Option<Workflow> {
    let top = Cursor::root(root);
    if !top.is_map() {
        cx.error(
            &top,
            format!(
                "a workflow file is a mapping with `name`, `providers` and `steps`, got {}",
                describe(root)
            ),
        );
        return None;
    }
    dragnet_located::load::check_keys(cx, &top, &TOP_LEVEL_KEYS);
    if let Some(c) = top.key("$schema") {
        cx.deserialize::<Option<String>>(&c);
    }
    let name = match top.key("name") {
        None => {
            cx.error(&top, "missing field `name`; give the workflow a name");
            None
        }
        Some(c) => match c.as_str().map(str::trim) {
            Some("") => {
                cx.error(&c, "`name` is empty; give the workflow a name");
                None
            }
            Some(name) => Some(name.to_string()),
            None => {
                cx.error(
                    &c,
                    format!("`name` must be a string, got {}", describe(c.node)),
                );
                None
            }
        },
    };
    let description = top
        .key("description")
        .and_then(|c| cx.deserialize::<Option<String>>(&c))
        .flatten();
    let concurrency = top.key("concurrency").and_then(|c| {
        let n = cx.deserialize::<u32>(&c)?;
        match std::num::NonZeroU32::new(n).filter(|n| n.get() <= MAX_RUN_CONCURRENCY) {
            Some(n) => Some(n),
            None => {
                cx.error(
                    &c,
                    format!(
                        "`concurrency` is {n}; runs of this workflow at once on a server: 1 to \
                         {MAX_RUN_CONCURRENCY}"
                    ),
                );
                None
            }
        }
    });
    let inputs = inputs(cx, top.key("inputs"));
    let providers = providers(cx, top.key("providers"), documents);
    let triggers = triggers(cx, top.key("triggers"));
    let env = Env {
        inputs: &inputs.names,
        providers: &providers,
    };
    let drafts = match top.key("steps") {
        None => {
            cx.error(
                &top,
                "missing field `steps`; a workflow needs at least one step",
            );
            Vec::new()
        }
        Some(c) if !c.is_seq() => {
            cx.error(
                &c,
                format!("`steps` is a list of steps, got {}", describe(c.node)),
            );
            Vec::new()
        }
        Some(c) => {
            let drafts: Vec<_> = c.items().map(|s| compile_step(cx, &s, &env)).collect();
            if drafts.is_empty() {
                cx.error(&c, "`steps` is empty; a workflow needs at least one step");
            }
            drafts
        }
    };
    graph::check(cx, &drafts);
    if cx.count() > 0 {
        return None;
    }
    let steps = drafts
        .into_iter()
        .map(|d| d.step)
        .collect::<Option<Vec<_>>>()?;
    Some(Workflow {
        name: name?,
        description,
        source: source.to_path_buf(),
        inputs: inputs.defs,
        providers: providers.ok,
        triggers,
        concurrency,
        steps,
    })
}

/// The most runs of one workflow at once that can be asked for.
pub const MAX_RUN_CONCURRENCY: u32 = 1000;
