//! An agent's pool at work (SPEC §7): which of its tools are listed, the
//! meta-tools that reach the rest, and the tools each thread has loaded.
//!
//! - `search_tools {query, limit?}` ranks the pooled tools (`search`).
//! - `load_tool {toolName | toolNames}` makes pooled tools callable for the
//!   rest of the thread. On a legacy session the session's tool list then
//!   holds them (and the transport says `tools/list_changed`); a stateless
//!   request's list never changes, so the answer gives the tools' schemas
//!   and says to call them through `call_tool`.
//! - `call_tool {toolName, arguments}` calls a tool loaded in this thread
//!   (or a direct one), with the same guard, looping and verdict.
//!
//! A pooled tool not loaded in the caller's thread cannot be called.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::Mutex;

use dragnet_core::ResultScope;
use serde_json::{json, Map, Value};

use super::search::{verbs_of, SearchDoc, SearchIndex};
use super::split::{split, Candidate, Split};
use crate::definition::ToolDefinition;

pub const SEARCH_TOOL: &str = "search_tools";
pub const LOAD_TOOL: &str = "load_tool";
pub const CALL_TOOL: &str = "call_tool";

/// The most search results one answer lists.
const MAX_LIMIT: usize = 25;
/// Threads whose loaded tools are remembered; the oldest go first.
const MAX_THREADS: usize = 10_000;

/// What one bound tool is, for the split and the index.
pub struct PoolEntry<'a> {
    pub definition: &'a ToolDefinition,
    pub provider: &'a str,
    pub tool_id: &'a str,
    pub method: Option<&'a str>,
    pub app: bool,
    pub discovery: Option<bool>,
}

/// One agent's split and the index over its pooled tools.
pub struct AgentPool {
    pub split: Split,
    /// Positions (in the agent's served order) of the pooled tools, and
    /// the index over them in that order.
    pooled: Vec<usize>,
    index: SearchIndex,
    /// Toolkit of each pooled tool, for answers.
    toolkits: Vec<String>,
}

impl AgentPool {
    pub fn new(entries: &[PoolEntry<'_>], budget: usize) -> AgentPool {
        let candidates: Vec<Candidate> = entries
            .iter()
            .map(|e| Candidate {
                tool_id: e.tool_id.to_string(),
                provider: e.provider.to_string(),
                app: e.app,
                discovery: e.discovery,
            })
            .collect();
        let split = split(&candidates, budget);
        let pooled: Vec<usize> = (0..entries.len())
            .filter(|i| !split.is_direct(*i))
            .collect();
        let docs: Vec<SearchDoc> = pooled
            .iter()
            .map(|&i| {
                let e = &entries[i];
                let params = e.definition.input_schema["properties"]
                    .as_object()
                    .map(|p| p.keys().cloned().collect())
                    .unwrap_or_default();
                SearchDoc {
                    name: e.definition.name.clone(),
                    toolkit: e.provider.to_string(),
                    description: e.definition.description.clone(),
                    params,
                    action: e.method.map(verbs_of).unwrap_or_default().to_string(),
                }
            })
            .collect();
        AgentPool {
            split,
            toolkits: pooled
                .iter()
                .map(|&i| entries[i].provider.to_string())
                .collect(),
            index: SearchIndex::new(&docs),
            pooled,
        }
    }

    pub fn has_pool(&self) -> bool {
        !self.pooled.is_empty()
    }

    pub fn is_direct(&self, i: usize) -> bool {
        self.split.is_direct(i)
    }

    /// `search_tools`: the best matches among the pooled tools (`defs` in
    /// served order), as the answer's JSON text.
    pub fn search(
        &self,
        defs: &[ToolDefinition],
        args: &Map<String, Value>,
    ) -> Result<String, String> {
        let query = args
            .get("query")
            .and_then(Value::as_str)
            .filter(|q| !q.trim().is_empty())
            .ok_or("give `query`: what the tool should do, in words")?;
        let limit = match args.get("limit") {
            None => 5,
            Some(v) => v
                .as_u64()
                .filter(|n| (1..=MAX_LIMIT as u64).contains(n))
                .ok_or(format!("`limit` is a number from 1 to {MAX_LIMIT}"))?
                as usize,
        };
        let hits = self.index.search(query, limit);
        let tools: Vec<Value> = hits
            .iter()
            .map(|h| {
                let d = &defs[self.pooled[h.doc]];
                json!({
                    "name": d.name,
                    "toolkit": self.toolkits[h.doc],
                    "description": short(&d.description),
                })
            })
            .collect();
        let note = match tools.is_empty() {
            true => "No pooled tool matches; try other words.".to_string(),
            false => format!(
                "Load the ones you need with {LOAD_TOOL} {{\"toolNames\": [...]}}; {} pooled tools in all.",
                self.pooled.len()
            ),
        };
        Ok(json!({"tools": tools, "note": note}).to_string())
    }

    /// Whether served tool `i` is in the pool.
    pub fn is_pooled(&self, i: usize) -> bool {
        !self.split.is_direct(i)
    }
}

/// The description's first line, cut to 160 characters.
fn short(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    match line.char_indices().nth(160) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_string(),
    }
}

/// The tool names `load_tool`'s arguments ask for.
pub fn names_to_load(args: &Map<String, Value>) -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    if let Some(one) = args.get("toolName") {
        names.push(
            one.as_str()
                .ok_or("`toolName` is a tool's name")?
                .to_string(),
        );
    }
    if let Some(many) = args.get("toolNames") {
        let list = many
            .as_array()
            .ok_or("`toolNames` is a list of tool names")?;
        for n in list {
            names.push(
                n.as_str()
                    .ok_or("`toolNames` is a list of tool names")?
                    .to_string(),
            );
        }
    }
    if names.is_empty() {
        return Err("give `toolName` or `toolNames`: tools `search_tools` found".into());
    }
    Ok(names)
}

/// Whose loaded tools: the agent, and the caller's thread (within its user).
type ThreadKey = (String, String, String);

/// Each thread's loaded tools, and the threads in the order they came.
#[derive(Default)]
struct Threads {
    tools: HashMap<ThreadKey, BTreeSet<String>>,
    order: VecDeque<ThreadKey>,
}

/// The tools each thread loaded.
#[derive(Default)]
pub struct Loaded(Mutex<Threads>);

impl Loaded {
    fn key(agent: &str, scope: &ResultScope) -> ThreadKey {
        (agent.to_string(), scope.org.clone(), scope.thread.clone())
    }

    /// Adds `names` to the thread's loaded tools.
    pub fn load(&self, agent: &str, scope: &ResultScope, names: &[String]) {
        let key = Loaded::key(agent, scope);
        let mut guard = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let threads = &mut *guard;
        if !threads.tools.contains_key(&key) {
            threads.order.push_back(key.clone());
            if threads.order.len() > MAX_THREADS {
                if let Some(oldest) = threads.order.pop_front() {
                    threads.tools.remove(&oldest);
                }
            }
        }
        threads
            .tools
            .entry(key)
            .or_default()
            .extend(names.iter().cloned());
    }

    /// The thread's loaded tools.
    pub fn of(&self, agent: &str, scope: &ResultScope) -> BTreeSet<String> {
        let guard = self.0.lock().unwrap_or_else(|p| p.into_inner());
        guard
            .tools
            .get(&Loaded::key(agent, scope))
            .cloned()
            .unwrap_or_default()
    }
}

/// The meta-tools an agent with a pool lists (never counted).
pub fn meta_tools() -> Vec<ToolDefinition> {
    vec![
        ToolDefinition {
            name: SEARCH_TOOL.into(),
            description: "Find tools beyond the ones listed: a ranked search over this agent's \
                          pooled tools by what they do (names, toolkits, descriptions, \
                          parameters). Answers with the best matches; load them with load_tool."
                .into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What the tool should do, in words."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": 5}
                },
                "required": ["query"]
            }),
        },
        ToolDefinition {
            name: LOAD_TOOL.into(),
            description: "Make pooled tools callable for the rest of this conversation. On a \
                          session they join the tool list; otherwise call them through \
                          call_tool. Answers with their input schemas."
                .into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "toolName": {"type": "string"},
                    "toolNames": {"type": "array", "items": {"type": "string"}}
                }
            }),
        },
        ToolDefinition {
            name: CALL_TOOL.into(),
            description: "Call a tool loaded with load_tool in this conversation: \
                          {toolName, arguments}. Answers as the tool does."
                .into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "toolName": {"type": "string"},
                    "arguments": {"type": "object"}
                },
                "required": ["toolName"]
            }),
        },
    ]
}
