//! The workflow file as written: serde types that mirror the YAML
//! one-to-one, reject unknown keys, and document themselves through
//! schemars (the doc comments become the descriptions editors show).
//! Nothing here is checked beyond shape; `compile` does the rest.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// A dragnet workflow: providers of tools, optional inputs and cron
/// triggers, and steps that form a DAG through `needs`, refs and branches.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "dragnet workflow")]
pub struct WorkflowFile {
    /// Editors' schema reference (JSON files); ignored.
    #[serde(rename = "$schema", default)]
    pub schema: Option<String>,
    /// The workflow's name; not empty.
    #[schemars(length(min = 1))]
    pub name: String,
    /// What the workflow does.
    #[serde(default)]
    pub description: Option<String>,
    /// Values a run takes, by name; read with `{ref: "$.inputs.<name>"}`.
    #[serde(default)]
    pub inputs: BTreeMap<String, InputFile>,
    /// Sources of tools, by name (`^[A-Za-z_][A-Za-z0-9_-]*$`): OpenAPI
    /// documents or MCP servers; a step's `tool` is
    /// `<provider>.<operationId>` or `<provider>.<MCP tool name>`.
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderFile>,
    /// When the workflow runs by itself; manual and API runs need none.
    #[serde(default)]
    pub triggers: Vec<TriggerFile>,
    /// On a server: how many runs of this workflow may run at once (1 to
    /// 1000); later ones wait, queued. Not the steps of one run at once.
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub concurrency: Option<u32>,
    /// The steps, in any order: the DAG comes from `needs`, refs and
    /// branches.
    #[schemars(length(min = 1))]
    pub steps: Vec<StepFile>,
}

/// Top-level keys, in the order of `WorkflowFile`.
pub const TOP_LEVEL_KEYS: [&str; 8] = [
    "$schema",
    "name",
    "description",
    "inputs",
    "providers",
    "triggers",
    "concurrency",
    "steps",
];

/// A workflow input. Without a default it is required.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(
    deny_unknown_fields,
    expecting = "an input: {type, default?, description?}"
)]
pub struct InputFile {
    #[serde(rename = "type")]
    pub ty: InputTypeFile,
    /// Used when a run does not give the input; must match `type`.
    #[serde(default)]
    pub default: Option<Value>,
    #[serde(default)]
    pub description: Option<String>,
}

/// The JSON type of an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum InputTypeFile {
    String,
    Integer,
    Number,
    Boolean,
    Array,
    Object,
}

/// A provider, written as in `agent.yaml` (one format, one schema type).
pub use dragnet_providers::file::{CredentialsFile, McpFile, ProviderFile};

/// A cron trigger.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(
    deny_unknown_fields,
    expecting = "a trigger: {cron, timezone?, catch_up?, overlap?, pause_after?}"
)]
pub struct TriggerFile {
    /// 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds
    /// first), e.g. `0 2 * * *`.
    pub cron: String,
    /// IANA time zone name, e.g. `Europe/Berlin`; UTC when absent.
    #[serde(default)]
    pub timezone: Option<String>,
    /// Ticks missed while no server was running: `none` records them as
    /// missed, `last` (the default) fires the latest, `all` fires them (the
    /// 100 most recent at most).
    #[serde(default)]
    pub catch_up: Option<CatchUpFile>,
    /// A tick while the previous run of this trigger is still running:
    /// `skip` (the default) records it as skipped, `allow` starts it anyway,
    /// `queue` starts it when the previous run ends.
    #[serde(default)]
    pub overlap: Option<OverlapFile>,
    /// Pause the schedule after this many consecutive failed (or partial)
    /// runs it fired since it was last resumed, e.g. `{failed: 3,
    /// partial: 5}`: each 1 to 100, absent for no limit.
    #[serde(default)]
    pub pause_after: Option<PauseAfterFile>,
}

/// `pause_after` of a trigger.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, expecting = "pause_after: {failed?, partial?}")]
pub struct PauseAfterFile {
    /// Consecutive failed runs (1 to 100).
    #[serde(default)]
    pub failed: Option<u32>,
    /// Consecutive partial runs: every step done, some walk cut short (1 to
    /// 100).
    #[serde(default)]
    pub partial: Option<u32>,
}

/// `catch_up` values.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CatchUpFile {
    None,
    Last,
    All,
}

/// `overlap` values.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OverlapFile {
    Skip,
    Allow,
    Queue,
}

/// One step: a tool call (the default) or a branch.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, expecting = "a step: {id, tool, ...}")]
pub struct StepFile {
    /// Unique step id, `^[A-Za-z_][A-Za-z0-9_-]*$`; other steps read its
    /// output with `{ref: "$.steps.<id>..."}`.
    #[schemars(regex(pattern = r"^[A-Za-z_][A-Za-z0-9_-]*$"))]
    pub id: String,
    /// `tool` (default) or `branch`.
    #[serde(rename = "type", default)]
    pub kind: Option<StepType>,
    /// Tool steps: `<provider>.<operationId>`.
    #[serde(default)]
    pub tool: Option<String>,
    /// Steps that must finish first (refs add their steps by themselves).
    #[serde(default)]
    pub needs: Vec<String>,
    /// Tool steps: the tool's arguments. Any value may be
    /// `{ref: "<JSONPath>"}` over `$.inputs`, `$.steps.<id>` or `$.trigger`.
    #[serde(default)]
    pub input: Option<Value>,
    /// Tool steps: the loop layer (walk all pages, fan out, filter, project).
    #[serde(rename = "loop", default)]
    pub looping: Option<LoopFile>,
    /// Fails the step when it runs longer: `<n>ms`, `<n>s`, `<n>m` or `<n>h`.
    #[serde(default)]
    #[schemars(regex(pattern = r"^[0-9]+(ms|s|m|h)$"))]
    pub timeout: Option<String>,
    /// Runs a failed step again as a whole.
    #[serde(default)]
    pub retry: Option<RetryFile>,
    /// Branch steps: the condition.
    #[serde(rename = "if", default)]
    pub condition: Option<ConditionFile>,
    /// Branch steps: steps that run when the condition holds; skipped
    /// otherwise, with their dependants.
    #[serde(default)]
    pub then: Vec<String>,
    /// Branch steps: steps that run when the condition does not hold.
    #[serde(rename = "else", default)]
    pub otherwise: Vec<String>,
}

/// The kind of a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StepType {
    Tool,
    Branch,
}

/// A step's `loop:` block (the same settings agents pass as `_all_pages`,
/// `_fields`, `_for_each` and `_filter`).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoopFile {
    /// Walk every page; the tool must be walkable.
    #[serde(default)]
    pub all_pages: bool,
    /// Dot-paths every item is projected to, e.g. `customer.name`.
    #[serde(default)]
    pub fields: Option<Vec<String>>,
    /// One call per value of a tool parameter, rows merged.
    #[serde(default)]
    pub for_each: Option<ForEachFile>,
    /// Clauses, ANDed, on the merged rows (before projection).
    #[serde(default)]
    pub filter: Vec<FilterFile>,
    /// Dot-path of the collection when the response does not make it plain,
    /// e.g. `data.items`.
    #[serde(default)]
    pub items_path: Option<String>,
    /// Opt in to the cache of complete walks for this step (off by default:
    /// a scheduled run's fixed arguments would otherwise always hit).
    #[serde(default)]
    pub cache: Option<CacheFile>,
    /// Walk only what changed since the last complete walk: the step passes
    /// its watermark (less `lag`) in `param` and keeps the largest `field`
    /// it read, moved only by a complete walk.
    #[serde(default)]
    pub incremental: Option<IncrementalFile>,
}

/// A step's incremental walk (`loop.incremental`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IncrementalFile {
    /// Dot-path of the rows' change marker, e.g. `updated_at`.
    pub field: String,
    /// The tool argument the walk passes its starting value in, e.g.
    /// `updated_since`.
    pub param: String,
    /// Where the first walk starts. A string (RFC 3339, with or without an
    /// offset, or a date) compares values as times, and epoch seconds or
    /// milliseconds are read as times too; a number compares them as
    /// numbers.
    pub initial: Value,
    /// How far before the watermark the next walk asks from, so rows
    /// committed late are read: a duration (`30s`, `5m`, `2h`) on the time
    /// scale, a number on the numeric one. None by default.
    #[serde(default)]
    pub lag: Option<Value>,
    /// Dot-path of a row's key: a row at the watermark's own value whose
    /// key the last walk read there is dropped (read again, not new).
    #[serde(default)]
    pub dedupe_by: Option<String>,
}

/// A step's cache setting.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CacheFile {
    /// How long a complete walk is served from the cache, in minutes (at least 1).
    pub ttl_minutes: u64,
}

/// A fan-out over the values of one parameter.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForEachFile {
    /// A parameter of the tool.
    pub key: String,
    /// A list, or `{ref: "<JSONPath>"}` to one.
    pub values: Value,
    /// How many values are walked at a time, 1 (the default) to 16; the
    /// pages of one value are always fetched one after another.
    #[serde(default)]
    #[schemars(range(min = 1, max = 16))]
    pub concurrency: Option<u64>,
}

/// One filter clause.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FilterFile {
    /// Dot-path of the item field.
    pub field: String,
    /// One of eq, neq, gt, gte, lt, lte, contains, in, exists.
    #[schemars(extend("enum" = ["eq", "neq", "gt", "gte", "lt", "lte", "contains", "in", "exists"]))]
    pub op: String,
    /// The operand (an array for `in`, a boolean for `exists`); may be a ref.
    #[serde(default)]
    pub value: Option<Value>,
}

/// Retry of a failed step.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetryFile {
    /// Attempts in all, the first included; at least 1.
    #[schemars(range(min = 1))]
    pub attempts: u32,
    /// Wait between attempts (`<n>ms|s|m|h`); 1s when absent.
    #[serde(default)]
    #[schemars(regex(pattern = r"^[0-9]+(ms|s|m|h)$"))]
    pub delay: Option<String>,
}

/// A branch condition: without `op`, the ref's value must be truthy.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConditionFile {
    /// JSONPath over `$.inputs`, `$.steps.<id>` or `$.trigger`, e.g.
    /// `$.steps.fetch._loop.complete`.
    #[serde(rename = "ref")]
    pub reference: String,
    /// One of eq, neq, gt, gte, lt, lte, contains, in, exists.
    #[serde(default)]
    #[schemars(extend("enum" = ["eq", "neq", "gt", "gte", "lt", "lte", "contains", "in", "exists"]))]
    pub op: Option<String>,
    /// The operand for `op`; may be a ref.
    #[serde(default)]
    pub value: Option<Value>,
}
