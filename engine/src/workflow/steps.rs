//! The `steps:` section, one step at a time: shape (serde), id, kind
//! (tool or branch) and the fields each kind allows, timeout and retry.
//! Each step yields a `Draft` carrying what the graph pass needs (id,
//! needs, step refs, branch targets, all with positions) even when the
//! step itself was refused, so one bad step hides nothing about another.

use dragnet_walk::filter::Op;

use super::context::Ctx;
use super::cursor::{describe, Cursor};
use super::file::{StepFile, StepType};
use super::looping::{self, LoopTool};
use super::model::{
    BranchStep, Condition, Location, LoopSpec, Step, StepId, StepKind, StepRetry, StepTool,
    Template, ToolStep,
};
use super::path::YamlPath;
use super::providers::Providers;
use super::template::{RefCheck, RefSite};
use super::tool::{check_input, resolve, Resolved};
use super::values::{bad_name, is_name, parse_duration_upto, MAX_RETRY_DELAY, MAX_TIMEOUT};
use super::yaml::Pos;

/// What the other compile passes know about the workflow.
pub struct Env<'a> {
    pub inputs: &'a [String],
    pub providers: &'a Providers,
}

/// A step name written somewhere (`needs`, `then`, `else`).
#[derive(Debug, Clone)]
pub struct Named<'a> {
    pub name: String,
    pub role: &'static str,
    pub pos: Pos,
    pub path: YamlPath<'a>,
}

/// One step as far as it compiled.
#[derive(Debug)]
pub struct Draft<'a> {
    pub id: Option<String>,
    /// Where the `id` value is (the step when absent).
    pub id_pos: Pos,
    pub location: Location,
    pub needs: Vec<Named<'a>>,
    pub refs: Vec<RefSite<'a>>,
    /// Branch steps: the `then` and `else` steps.
    pub targets: Vec<Named<'a>>,
    /// Set when the step compiled without problems.
    pub step: Option<Step>,
}

pub fn compile_step<'a>(cx: &mut Ctx, c: &Cursor<'a>, env: &Env<'a>) -> Draft<'a> {
    let id_cursor = c.key("id");
    let mut draft = Draft {
        id: id_cursor
            .as_ref()
            .and_then(Cursor::as_str)
            .map(str::to_string),
        id_pos: id_cursor.as_ref().map_or(c.pos(), Cursor::pos),
        location: c.location(),
        needs: Vec::new(),
        refs: Vec::new(),
        targets: Vec::new(),
        step: None,
    };
    if !c.is_map() {
        cx.error(
            c,
            format!(
                "a step is a mapping {{id, tool, ...}}, got {}",
                describe(c.node)
            ),
        );
        return draft;
    }
    let before = cx.count();
    let Some(file) = cx.deserialize::<StepFile>(c) else {
        return draft;
    };
    if !is_name(&file.id) {
        cx.value_error(c, "id", bad_name("step id", &file.id));
    }
    draft.needs = names(c, "needs", &file.needs);
    let mut refs = RefCheck::new(env.inputs);
    let kind = match file.kind.unwrap_or(StepType::Tool) {
        StepType::Tool => tool_step(cx, c, &file, env, &mut refs),
        StepType::Branch => {
            draft.targets = names(c, "then", &file.then);
            draft.targets.extend(names(c, "else", &file.otherwise));
            branch_step(cx, c, &file, &mut refs)
        }
    };
    let timeout = file.timeout.as_deref().and_then(|t| {
        match parse_duration_upto(t, "timeout", MAX_TIMEOUT) {
            Ok(d) if d.is_zero() => {
                cx.value_error(c, "timeout", "timeout must be more than 0");
                None
            }
            Ok(d) => Some(d),
            Err(message) => {
                cx.value_error(c, "timeout", message);
                None
            }
        }
    });
    let retry = file.retry.as_ref().and_then(|r| {
        let rc = c.key("retry")?;
        if r.attempts == 0 {
            cx.value_error(
                &rc,
                "attempts",
                "retry.attempts must be at least 1 (it counts the first try)",
            );
        }
        let delay = match r
            .delay
            .as_deref()
            .map(|d| parse_duration_upto(d, "retry delay", MAX_RETRY_DELAY))
        {
            None => std::time::Duration::from_secs(1),
            Some(Ok(d)) => d,
            Some(Err(message)) => {
                cx.value_error(&rc, "delay", message);
                return None;
            }
        };
        Some(StepRetry {
            attempts: r.attempts,
            delay,
        })
    });
    draft.refs = refs.sites;
    if let (Some(kind), true) = (kind, cx.count() == before) {
        draft.step = Some(Step {
            id: StepId(file.id.clone()),
            needs: file.needs.iter().map(|n| StepId(n.clone())).collect(),
            kind,
            timeout,
            retry,
            location: draft.location.clone(),
        });
    }
    draft
}

/// The names under `key` with their positions.
fn names<'a>(c: &Cursor<'a>, key: &'static str, values: &[String]) -> Vec<Named<'a>> {
    let Some(list) = c.key(key) else {
        return Vec::new();
    };
    values
        .iter()
        .zip(list.items())
        .map(|(name, at)| Named {
            name: name.clone(),
            role: key,
            pos: at.pos(),
            path: at.path,
        })
        .collect()
}

fn tool_step<'a>(
    cx: &mut Ctx,
    c: &Cursor<'a>,
    file: &StepFile,
    env: &Env<'_>,
    refs: &mut RefCheck<'a>,
) -> Option<StepKind> {
    for (key, present) in [
        ("if", file.condition.is_some()),
        ("then", !file.then.is_empty()),
        ("else", !file.otherwise.is_empty()),
    ] {
        if present {
            cx.key_error(
                c,
                key,
                format!("`{key}` belongs to branch steps; add `type: branch` or remove `{key}`"),
            );
        }
    }
    let resolved = match (&file.tool, c.key("tool")) {
        (Some(text), Some(at)) => resolve(cx, &at, text, env.providers),
        _ => {
            cx.error(
                c,
                format!(
                    "tool step `{}` needs `tool: <provider>.<operation>` (or `type: branch`)",
                    file.id
                ),
            );
            Resolved::Failed
        }
    };
    let input = match c.key("input").filter(|i| !i.is_null()) {
        Some(ic) => refs.template(cx, &ic),
        None => Some(Template::Literal(serde_json::Value::Object(
            Default::default(),
        ))),
    };
    let qualified = file.tool.as_deref().unwrap_or_default().trim();
    let found = match &resolved {
        Resolved::Found {
            tool: StepTool::OpenApi(tool),
            ..
        } => Some(LoopTool {
            qualified,
            tool: tool.as_ref(),
        }),
        _ => None,
    };
    let looping = match (&file.looping, c.key("loop")) {
        (Some(lf), Some(lc)) => looping::compile(cx, &lc, lf, found.as_ref(), refs),
        _ => Some(LoopSpec::default()),
    };
    if let Some(t) = &found {
        let looping = file.looping.as_ref();
        let key = looping
            .and_then(|l| l.for_each.as_ref())
            .map(|f| f.key.as_str());
        let param = looping
            .and_then(|l| l.incremental.as_ref())
            .map(|i| i.param.trim());
        check_input(cx, c, qualified, t.tool, key, param);
    }
    let Resolved::Found { provider, tool } = resolved else {
        return None;
    };
    Some(StepKind::Tool(Box::new(ToolStep {
        provider,
        tool,
        input: input?,
        looping: looping?,
    })))
}

fn branch_step<'a>(
    cx: &mut Ctx,
    c: &Cursor<'a>,
    file: &StepFile,
    refs: &mut RefCheck<'a>,
) -> Option<StepKind> {
    let id = &file.id;
    if file.tool.is_some() {
        cx.key_error(
            c,
            "tool",
            format!("branch step `{id}` cannot call a tool; remove `tool`, or `type: branch` to make it a tool step"),
        );
    }
    for (key, present) in [
        ("input", file.input.is_some()),
        ("loop", file.looping.is_some()),
    ] {
        if present {
            cx.key_error(
                c,
                key,
                format!("branch step `{id}` takes no `{key}`; remove it"),
            );
        }
    }
    if file.then.is_empty() && file.otherwise.is_empty() {
        cx.error(
            c,
            format!("branch step `{id}` selects nothing; list steps under `then` and/or `else`"),
        );
    }
    if let Some((name, at)) = file
        .otherwise
        .iter()
        .zip(
            c.key("else")
                .iter()
                .flat_map(|e| e.items().collect::<Vec<_>>()),
        )
        .find(|(name, _)| file.then.contains(name))
    {
        cx.error(
            &at,
            format!(
                "step `{name}` is listed under both `then` and `else` of branch `{id}`; keep one"
            ),
        );
    }
    let (Some(cond), Some(ic)) = (&file.condition, c.key("if")) else {
        cx.error(
            c,
            format!("branch step `{id}` needs a condition: `if: {{ref: \"$.steps.<id>...\"}}`"),
        );
        return None;
    };
    let reference = match ic.key("ref") {
        Some(rc) => refs.reference(cx, &rc, &cond.reference),
        None => None,
    };
    let op: Option<Op> = match &cond.op {
        Some(op) => Some(looping::operator(cx, &ic, op)?),
        None => {
            if ic.key("value").is_some() {
                cx.key_error(
                    &ic,
                    "value",
                    "`value` needs an `op` to compare with; add one (e.g. `op: eq`) or remove `value`",
                );
            }
            None
        }
    };
    let value = looping::operand(cx, &ic, op, refs)?;
    Some(StepKind::Branch(Box::new(BranchStep {
        condition: Condition {
            reference: reference?,
            op,
            value,
        },
        then: file.then.iter().map(|s| StepId(s.clone())).collect(),
        otherwise: file.otherwise.iter().map(|s| StepId(s.clone())).collect(),
    })))
}
