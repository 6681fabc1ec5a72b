//! `dragnet call`: one tool call through the loop layer, with a live
//! progress line, printing the merged result and its verdict.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Result;
use clap::Args;
use dragnet_core::clock::SystemClock;
use dragnet_core::secret::Secret;
use dragnet_core::{args, Error, Tool};
use dragnet_http::{Credentials, HttpUpstream};
use dragnet_walk::filter::Filter;
use dragnet_walk::options::{parse_fields, Concurrency, ForEachSpec};
use dragnet_walk::overrides::{apply_roles, PagingRoles};
use dragnet_walk::{LoopOptions, Runtime, ToolCall, Unshaped};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::bounds::LimitFlags;
use crate::config::Config;
use crate::failure::CliError;
use crate::out::Out;
use crate::output::print_result;
use crate::progress_line::ProgressLine;

#[derive(Args)]
pub struct CallArgs {
    /// The OpenAPI document the tool comes from.
    #[arg(long)]
    spec: PathBuf,
    /// Base URL requests go to, e.g. http://127.0.0.1:8080.
    #[arg(long)]
    base_url: String,
    /// The tool (operationId, or method_path when the document has none).
    tool: String,
    /// Arguments as name=value; dotted names set nested body fields (paging.page=2).
    #[arg(value_name = "NAME=VALUE")]
    arguments: Vec<String>,
    /// Walk every page (walkable tools only).
    #[arg(long)]
    all_pages: bool,
    /// Name the tool's paging roles by hand, as a provider's `paging:` block does:
    /// size=…,page=…|offset=…  or  cursor=…,next=body:<path>|header:link|last_item:<field>[,size=…]
    #[arg(long, value_name = "SPEC")]
    paging: Option<String>,
    /// Project every item to these dot-paths: id,customer.name,lines.sku
    #[arg(long, value_name = "PATHS")]
    fields: Option<String>,
    /// Call once per value: key=v1,v2,…
    #[arg(long, value_name = "KEY=V1,V2,…")]
    for_each: Option<String>,
    /// With --for-each: walk this many values at a time (1–16; default 1). The pages of
    /// one value stay sequential; rows are merged in value order.
    #[arg(long, value_name = "N", requires = "for_each")]
    concurrency: Option<u64>,
    /// Keep rows matching 'field op value' (ops: eq neq gt gte lt lte contains in exists); repeatable, ANDed.
    #[arg(long, value_name = "CLAUSE")]
    filter: Vec<String>,
    /// Where the collection is in the response, as a dot-path, when it is not plain.
    #[arg(long, value_name = "PATH")]
    items_path: Option<String>,
    /// Extra request header 'Name: value' (repeatable). Values are never printed.
    #[arg(long, value_name = "HEADER")]
    header: Vec<String>,
    /// Credentials read from env vars: bearer:VAR, header:NAME:VAR, basic:USER_VAR:PASS_VAR.
    #[arg(long, value_name = "SPEC")]
    credentials: Option<String>,
    #[command(flatten)]
    limits: LimitFlags,
    /// Print the result as one JSON document (payload with _pagingComplete, _likelyMoreRows, _note…).
    #[arg(long)]
    pub json: bool,
}

pub async fn run(config: &Config, a: CallArgs, out: &mut Out) -> Result<u8> {
    let limits = a.limits.apply(&config.limits)?;
    let toolkit = dragnet_openapi::import_file(&a.spec)?;
    let tool = toolkit.tool(&a.tool).ok_or_else(|| Error::UnknownTool {
        name: a.tool.clone(),
        suggestions: suggest(&a.tool, toolkit.tools.iter().map(|t| t.name.as_str())),
    })?;
    let named;
    let tool = match &a.paging {
        None => tool,
        Some(spec) => {
            named = with_roles(tool, spec)?;
            &named
        }
    };
    let arguments = args::parse_pairs(tool, &a.arguments)?;
    let mut options = LoopOptions {
        all_pages: a.all_pages,
        ..LoopOptions::default()
    };
    if let Some(fields) = &a.fields {
        options.fields = Some(parse_fields(&Value::String(fields.clone()))?);
    }
    for (index, clause) in a.filter.iter().enumerate() {
        options
            .filter
            .clauses
            .push(Filter::clause_from_text(index, clause)?);
    }
    if let Some(spec) = &a.for_each {
        let Some((key, values)) = spec.split_once('=') else {
            return Err(CliError::argument_error(
                "--for-each",
                format!("expects key=v1,v2,…, got `{spec}`"),
            )
            .into());
        };
        let values: Vec<Value> = values
            .split(',')
            .map(|v| Value::String(v.trim().to_string()))
            .filter(|v| v.as_str() != Some(""))
            .collect();
        if values.is_empty() {
            return Err(
                CliError::argument_error("--for-each", format!("`{key}` has no values")).into(),
            );
        }
        let concurrency = match a.concurrency {
            None => Concurrency::ONE,
            Some(n) => Concurrency::new(n)
                .map_err(|e| CliError::argument_error("--concurrency", e.to_string()))?,
        };
        options.for_each = Some(ForEachSpec {
            key: key.trim().to_string(),
            values,
            concurrency,
        });
    }
    options.items_path = a
        .items_path
        .as_ref()
        .map(|p| p.split('.').map(str::to_string).collect());

    let credentials = match &a.credentials {
        Some(spec) => Credentials::from_spec(spec, &|var| std::env::var(var).ok())
            .map_err(|error| CliError::argument_error("--credentials", error.to_string()))?,
        None => Credentials::None,
    };
    let mut upstream = HttpUpstream::new(&a.base_url, credentials)?;
    for header in &a.header {
        let Some((name, value)) = header.split_once(':') else {
            return Err(CliError::argument_error("--header", "expects 'Name: value'").into());
        };
        upstream = upstream.with_header(name.trim(), Secret::new(value.trim()));
    }

    let line = ProgressLine::start(&tool.name);
    let cancel = CancellationToken::new();
    let on_ctrl_c = cancel.clone();
    let watcher = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_ctrl_c.cancel();
        }
    });
    let runtime = Runtime {
        progress: &line,
        clock: Arc::new(SystemClock),
        cancel,
        journal: None,
        // Only the rows shaped are printed: a large page is shaped while
        // it arrives instead of being held whole.
        unshaped: Unshaped::Dropped,
    };
    let call = ToolCall {
        tool,
        arguments,
        options,
        limits,
        cache: None,
    };
    let outcome = dragnet_walk::execute(call, &upstream, &runtime).await;
    watcher.abort();
    line.finish();
    let result = outcome?;
    print_result(&result, a.json, out)
}

/// `tool` walking by the roles `spec` names, checked against its
/// parameters as a provider's `paging:` entry is.
fn with_roles(tool: &Tool, spec: &str) -> Result<Tool, CliError> {
    let roles = PagingRoles::from_spec(spec)
        .map_err(|e| CliError::argument_error("--paging", e.to_string()))?;
    apply_roles(tool, &roles).map_err(|problems| {
        let text: Vec<String> = problems
            .iter()
            .map(|p| match p.key {
                "" => p.message.clone(),
                key => format!("{key}: {}", p.message),
            })
            .collect();
        CliError::argument_error("--paging", text.join("; "))
    })
}

/// Tool names close to what was typed (shared prefix or substring).
fn suggest<'a>(typed: &str, names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let lower = typed.to_lowercase();
    let mut out: Vec<String> = names
        .filter(|n| {
            let n = n.to_lowercase();
            n.contains(&lower) || lower.contains(&n) || common_prefix(&n, &lower) >= 4
        })
        .map(str::to_string)
        .collect();
    out.truncate(5);
    out
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}
