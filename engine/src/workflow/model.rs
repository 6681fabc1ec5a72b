//! The compiled workflow: validated types the planner and runner use. Built
//! only by `workflow::compile`, so holding a `Workflow` means every id,
//! tool, ref and loop setting in it was checked.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use dragnet_core::{Tool, Toolkit};
use dragnet_walk::fields::Projection;
use dragnet_walk::filter::Op;
use dragnet_walk::options::Concurrency;
use serde_json::Value;

use crate::refs::RefExpr;

/// A step id (vocabulary refs and the model share).
pub use crate::step_id::StepId;

/// Where something sits in the workflow file.
pub use dragnet_located::Location;

/// A validated workflow.
#[derive(Debug, Clone)]
pub struct Workflow {
    pub name: String,
    pub description: Option<String>,
    /// The file it came from.
    pub source: PathBuf,
    pub inputs: Vec<InputDef>,
    pub providers: BTreeMap<String, Provider>,
    pub triggers: Vec<Trigger>,
    /// On a server, how many runs of it may run at once (more wait,
    /// queued); `None`: only the server's own limit.
    pub concurrency: Option<std::num::NonZeroU32>,
    /// In file order.
    pub steps: Vec<Step>,
}

impl Workflow {
    pub fn step(&self, id: &StepId) -> Option<&Step> {
        self.steps.iter().find(|s| &s.id == id)
    }
}

/// The type of an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputType {
    String,
    Integer,
    Number,
    Boolean,
    Array,
    Object,
}

impl InputType {
    /// The schema type name (`string`, `integer`…).
    pub fn name(self) -> &'static str {
        match self {
            InputType::String => "string",
            InputType::Integer => "integer",
            InputType::Number => "number",
            InputType::Boolean => "boolean",
            InputType::Array => "array",
            InputType::Object => "object",
        }
    }

    /// Whether `v` is a value of this type.
    pub fn accepts(self, v: &Value) -> bool {
        match self {
            InputType::String => v.is_string(),
            InputType::Integer => v.is_i64() || v.is_u64(),
            InputType::Number => v.is_number(),
            InputType::Boolean => v.is_boolean(),
            InputType::Array => v.is_array(),
            InputType::Object => v.is_object(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct InputDef {
    pub name: String,
    pub ty: InputType,
    pub default: Option<Value>,
    /// Required when there is no default.
    pub required: bool,
    pub description: Option<String>,
}

/// A provider of tools: an OpenAPI document and where to call it, or an
/// upstream MCP server.
#[derive(Debug, Clone)]
pub struct Provider {
    pub name: String,
    pub kind: ProviderKind,
}

/// Closed set of provider kinds.
#[derive(Debug, Clone)]
pub enum ProviderKind {
    OpenApi(OpenApiProvider),
    /// Its tools are known once it is connected, when a run starts.
    Mcp(McpSource),
}

/// An imported OpenAPI document and where its requests go.
#[derive(Debug, Clone)]
pub struct OpenApiProvider {
    /// The `openapi:` path as written (where the document was read from).
    pub document: String,
    pub toolkit: Arc<Toolkit>,
    pub base_url: String,
    /// By variable name (or team secret name); read when a run starts.
    pub credentials: Option<CredentialsFile>,
    /// Sent with every request.
    pub headers: Vec<(String, String)>,
}

pub use dragnet_providers::file::CredentialsFile;
pub use dragnet_providers::{ChildEnv, DeclaredServer, McpServer, McpSource};

impl Provider {
    /// The OpenAPI side of the provider, when it is one.
    pub fn openapi(&self) -> Option<&OpenApiProvider> {
        match &self.kind {
            ProviderKind::OpenApi(p) => Some(p),
            ProviderKind::Mcp(_) => None,
        }
    }
}

/// When a workflow runs by itself.
#[derive(Debug, Clone)]
pub enum Trigger {
    Cron(crate::schedule::CronTrigger),
}

#[derive(Debug, Clone)]
pub struct Step {
    pub id: StepId,
    /// Explicit `needs`.
    pub needs: Vec<StepId>,
    pub kind: StepKind,
    pub timeout: Option<Duration>,
    pub retry: Option<StepRetry>,
    pub location: Location,
}

/// Retry of a failed step as a whole.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepRetry {
    /// Attempts in all, at least 1.
    pub attempts: u32,
    pub delay: Duration,
}

/// Closed set of step kinds.
#[derive(Debug, Clone)]
pub enum StepKind {
    Tool(Box<ToolStep>),
    Branch(Box<BranchStep>),
}

/// Calls a tool, optionally through the loop layer.
#[derive(Debug, Clone)]
pub struct ToolStep {
    pub provider: String,
    pub tool: StepTool,
    pub input: Template,
    pub looping: LoopSpec,
}

/// The tool a step calls.
#[derive(Debug, Clone)]
pub enum StepTool {
    /// Resolved when the workflow compiled (a copy from the provider's
    /// toolkit).
    OpenApi(Arc<Tool>),
    /// A tool of an upstream MCP server, by name: resolved (and its
    /// `loop:` checked against it) when a run connects to the server.
    Mcp(String),
}

impl StepTool {
    /// The tool's name.
    pub fn name(&self) -> &str {
        match self {
            StepTool::OpenApi(tool) => &tool.name,
            StepTool::Mcp(name) => name,
        }
    }
}

/// A step's `loop:` block, validated. Values may still hold refs.
#[derive(Debug, Clone, Default)]
pub struct LoopSpec {
    pub all_pages: bool,
    pub fields: Option<Projection>,
    pub for_each: Option<ForEachSpec>,
    pub filter: Vec<FilterClause>,
    pub items_path: Option<Vec<String>>,
    /// The step opted in to the cache.
    pub cache: Option<StepCache>,
    /// The step walks only what changed since its last complete walk.
    pub incremental: Option<IncrementalSpec>,
}

/// A step's incremental walk, validated (`loop.incremental`).
#[derive(Debug, Clone, PartialEq)]
pub struct IncrementalSpec {
    /// The rows' change marker, as a dot-path.
    pub field: Vec<String>,
    /// The tool argument the starting value goes in.
    pub param: String,
    /// How values compare, from `initial`.
    pub scale: crate::watermark::Scale,
    /// Where the first walk starts.
    pub initial: serde_json::Value,
    pub lag: Option<crate::watermark::Lag>,
    /// A row's key, as a dot-path.
    pub dedupe_by: Option<Vec<String>>,
}

/// A step's cache opt-in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepCache {
    pub ttl: Duration,
}

#[derive(Debug, Clone)]
pub struct ForEachSpec {
    pub key: String,
    /// A list, or a ref to one.
    pub values: Template,
    /// Values walked at a time (1 unless the file says otherwise).
    pub concurrency: Concurrency,
}

/// A filter clause whose value may be a ref.
#[derive(Debug, Clone)]
pub struct FilterClause {
    pub field: String,
    pub op: Op,
    pub value: Template,
}

/// Selects `then` or `else` steps.
#[derive(Debug, Clone)]
pub struct BranchStep {
    pub condition: Condition,
    pub then: Vec<StepId>,
    pub otherwise: Vec<StepId>,
}

/// `if: {ref, op?, value?}`: without `op`, the ref's value must be truthy.
#[derive(Debug, Clone)]
pub struct Condition {
    pub reference: RefExpr,
    pub op: Option<Op>,
    pub value: Template,
}

/// A value that may hold `{ref: "<JSONPath>"}` anywhere.
#[derive(Debug, Clone)]
pub enum Template {
    Literal(Value),
    Ref(RefExpr),
    Array(Vec<Template>),
    Object(Vec<(String, Template)>),
}

impl Template {
    /// Every ref inside, in order.
    pub fn refs(&self) -> Vec<&RefExpr> {
        let mut out = Vec::new();
        self.collect_refs(&mut out);
        out
    }

    fn collect_refs<'a>(&'a self, out: &mut Vec<&'a RefExpr>) {
        match self {
            Template::Literal(_) => {}
            Template::Ref(r) => out.push(r),
            Template::Array(items) => items.iter().for_each(|t| t.collect_refs(out)),
            Template::Object(fields) => fields.iter().for_each(|(_, t)| t.collect_refs(out)),
        }
    }
}

impl Step {
    /// Every ref the step holds (input, loop values, filter values, condition).
    pub fn refs(&self) -> Vec<&RefExpr> {
        match &self.kind {
            StepKind::Tool(t) => {
                let mut out = t.input.refs();
                if let Some(fe) = &t.looping.for_each {
                    out.extend(fe.values.refs());
                }
                for c in &t.looping.filter {
                    out.extend(c.value.refs());
                }
                out
            }
            StepKind::Branch(b) => {
                let mut out = vec![&b.condition.reference];
                out.extend(b.condition.value.refs());
                out
            }
        }
    }
}
