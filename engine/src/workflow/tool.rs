//! A tool step's `tool: provider.operation` resolved against the imported
//! toolkits (an MCP provider's tool is resolved when a run connects) (`operation` is the tool's name or the document's original
//! `operationId`, e.g. `shop.café`), and its literal `input` checked against the tool's arguments
//! (unknown names, reserved `_` names, missing required arguments).

use std::sync::Arc;

use dragnet_core::Tool;
use dragnet_walk::options::RESERVED;

use super::context::Ctx;
use super::cursor::{describe, Cursor};
use super::diagnostic::{list, suggest};
use super::model::{ProviderKind, StepTool};
use super::providers::Providers;
use super::yaml::NodeValue;

/// What `tool:` named.
pub enum Resolved {
    Found {
        provider: String,
        tool: StepTool,
    },
    /// The provider was declared but refused; already reported.
    Unchecked,
    /// Reported here.
    Failed,
}

/// Resolves `provider.operation`; `at` is the `tool` value.
pub fn resolve(cx: &mut Ctx, at: &Cursor<'_>, text: &str, providers: &Providers) -> Resolved {
    let text = text.trim();
    let Some((provider, operation)) = text
        .split_once('.')
        .filter(|(p, o)| !p.is_empty() && !o.is_empty())
    else {
        let example = match providers.declared.as_slice() {
            [only] => format!(
                "`{only}.{}`",
                if text.is_empty() { "listOrders" } else { text }
            ),
            _ => "`shop.listOrders`".to_string(),
        };
        cx.error(
            at,
            format!("tool `{text}` must be written `provider.operation`, e.g. {example}"),
        );
        return Resolved::Failed;
    };
    let Some(found) = providers.ok.get(provider) else {
        if providers.declared.iter().any(|p| p == provider) {
            return Resolved::Unchecked;
        }
        let hint = suggest(
            provider,
            providers.declared.iter().map(String::as_str),
            || {
                if providers.declared.is_empty() {
                    "; no providers are declared, add one under `providers:`".into()
                } else {
                    format!("; declared providers: {}", list(&providers.declared))
                }
            },
        );
        cx.error(at, format!("unknown provider `{provider}`{hint}"));
        return Resolved::Failed;
    };
    let openapi = match &found.kind {
        ProviderKind::OpenApi(openapi) => openapi,
        // An MCP server's tools are read when a run connects to it.
        ProviderKind::Mcp(_) => {
            return Resolved::Found {
                provider: provider.to_string(),
                tool: StepTool::Mcp(operation.to_string()),
            }
        }
    };
    match openapi.toolkit.tool(operation) {
        Some(tool) => Resolved::Found {
            provider: provider.to_string(),
            tool: StepTool::OpenApi(Arc::new(tool.clone())),
        },
        None => {
            let names: Vec<&str> = openapi
                .toolkit
                .tools
                .iter()
                .map(|t| t.name.as_str())
                .collect();
            let originals = openapi
                .toolkit
                .operation_ids
                .iter()
                .filter(|(name, id)| name != id)
                .map(|(_, id)| id.as_str());
            let hint = suggest(operation, names.iter().copied().chain(originals), || {
                format!("; its tools are: {}", list(&names))
            });
            cx.error(
                at,
                format!("unknown tool `{operation}` in provider `{provider}`{hint}"),
            );
            Resolved::Failed
        }
    }
}

/// Checks a tool step's `input` against the tool. `for_each_key` counts as
/// given. A ref in place of the whole input is checked when the step runs.
pub fn check_input(
    cx: &mut Ctx,
    step: &Cursor<'_>,
    qualified: &str,
    tool: &Tool,
    for_each_key: Option<&str>,
    incremental_param: Option<&str>,
) {
    let input = step.key("input").filter(|i| !i.is_null());
    let arguments = tool.argument_names();
    let mut given: Vec<&str> = for_each_key.into_iter().chain(incremental_param).collect();
    if let Some(input) = &input {
        match &input.node.value {
            NodeValue::Map(entries) if entries.len() == 1 && entries[0].key == "ref" => return,
            NodeValue::Map(_) => {}
            _ => {
                cx.error(
                    input,
                    format!(
                        "`input` is a mapping of the arguments of `{qualified}`, got {}",
                        describe(input.node)
                    ),
                );
                return;
            }
        }
        for (key, pos, c) in input.entries() {
            if incremental_param == Some(key) {
                let message = format!(
                    "`{key}` is passed by loop.incremental (the watermark less its lag); \
                     remove it from `input`"
                );
                cx.at(pos, &c.path, message);
                continue;
            }
            given.push(key);
            if arguments.iter().any(|a| a == key) {
                continue;
            }
            let message = if RESERVED.contains(&key) {
                format!(
                    "`{key}` is a loop setting; set `{}` in the step's `loop:` block instead",
                    key.trim_start_matches('_')
                )
            } else {
                let hint = suggest(key, arguments.iter().map(String::as_str), || {
                    format!("; its arguments are: {}", list(&arguments))
                });
                format!("`{key}` is not an argument of `{qualified}`{hint}")
            };
            cx.at(pos, &c.path, message);
        }
    }
    // A wrong for_each key is reported on its own; do not also report the
    // argument it was meant to fill.
    if for_each_key.is_some_and(|k| !arguments.iter().any(|a| a == k)) {
        return;
    }
    let required = tool.required_arguments();
    for name in required {
        if !given.contains(&name) {
            let message = format!(
                "missing required argument `{name}` of `{qualified}`; set it under `input` \
                 or fan out over it with loop.for_each.key"
            );
            match &input {
                Some(input) => cx.error(input, message),
                None => cx.value_error(step, "tool", message),
            }
        }
    }
}
