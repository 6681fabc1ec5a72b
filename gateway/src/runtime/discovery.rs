//! The gateway's side of discovery ([`crate::discovery`]): each agent's pool built from its
//! served tools, its split explained, and the discovery tools' calls
//! (`search_tools`, `load_tool`, and `call_tool` handing its inner call
//! back to the bound-tool path).

use serde_json::{Map, Value};

use super::{Answer, Gateway};
use crate::caller::Caller;
use crate::config::ProviderKind;
use crate::discovery::pool::{
    names_to_load, AgentPool, PoolEntry, CALL_TOOL, LOAD_TOOL, SEARCH_TOOL,
};
use crate::discovery::split::{Placement, DEFAULT_BUDGET};

impl Gateway {
    /// `agent`'s split and pool index, from its served tools.
    pub(crate) fn pool_of(&self, agent: &str) -> AgentPool {
        let (bindings, defs) = self.served(agent);
        let entries: Vec<PoolEntry<'_>> = bindings
            .iter()
            .zip(defs)
            .map(|(b, d)| {
                let openapi = match self.config.providers.get(&b.provider).map(|p| &p.kind) {
                    Some(ProviderKind::OpenApi { app, .. }) => Some(*app),
                    _ => None,
                };
                PoolEntry {
                    definition: d,
                    provider: &b.provider,
                    tool_id: &b.tool_id,
                    method: openapi.and(b.tool.as_deref()).map(|t| t.method.as_upper()),
                    app: openapi == Some(true),
                    discovery: b.discovery,
                }
            })
            .collect();
        let budget = self
            .config
            .agents
            .get(agent)
            .map_or(DEFAULT_BUDGET, |a| a.tool_budget);
        AgentPool::new(&entries, budget)
    }

    /// The split of `agent`'s tools, each with its definition's name and
    /// provider (for `--explain`).
    pub fn explain(&self, agent: &str) -> Option<Vec<(String, String, Placement)>> {
        let pool = self.pools.get(agent)?;
        let (bindings, defs) = self.served(agent);
        Some(
            bindings
                .iter()
                .zip(defs)
                .zip(&pool.split.placements)
                .map(|((b, d), p)| (d.name.clone(), b.provider.clone(), p.clone()))
                .collect(),
        )
    }

    /// Whether `agent` has pooled tools (and so the discovery tools).
    pub fn has_pool(&self, agent: &str) -> bool {
        self.pools.get(agent).is_some_and(AgentPool::has_pool)
    }

    /// The discovery tools' calls: a search, a load, or a call through
    /// `call_tool` (`Err` with its tool name and arguments).
    pub(crate) fn discovery_call(
        &self,
        caller: &Caller,
        name: &str,
        args: Map<String, Value>,
    ) -> Result<Answer, (String, Map<String, Value>)> {
        let agent = &caller.claims.agent;
        let Some(pool) = self.pools.get(agent).filter(|p| p.has_pool()) else {
            return Err((name.to_string(), args));
        };
        let answer = |r: Result<String, String>| match r {
            Ok(text) => Answer::said(text),
            Err(e) => Answer::error(e),
        };
        match name {
            SEARCH_TOOL => Ok(answer(pool.search(self.served(agent).1, &args))),
            LOAD_TOOL => Ok(answer(self.load(caller, &args))),
            CALL_TOOL => {
                let Some(inner) = args.get("toolName").and_then(Value::as_str) else {
                    return Ok(Answer::error(
                        "give `toolName`: a tool loaded with load_tool",
                    ));
                };
                let arguments = match args.get("arguments") {
                    None => Map::new(),
                    Some(Value::Object(o)) => o.clone(),
                    Some(_) => return Ok(Answer::error("`arguments` is an object")),
                };
                Err((inner.to_string(), arguments))
            }
            _ => Err((name.to_string(), args)),
        }
    }

    /// `load_tool`: records the pooled tools asked for in the caller's
    /// thread; answers with their schemas and how to call them.
    fn load(&self, caller: &Caller, args: &Map<String, Value>) -> Result<String, String> {
        let agent = &caller.claims.agent;
        let names = names_to_load(args)?;
        let (bindings, defs) = self.served(agent);
        let mut found = Vec::new();
        for n in &names {
            let at = defs[..bindings.len()].iter().position(|d| &d.name == n);
            match at {
                Some(i) => found.push(defs[i].clone()),
                None => {
                    return Err(format!(
                        "agent `{agent}` has no tool `{n}`: find tools with {SEARCH_TOOL}"
                    ))
                }
            }
        }
        self.loaded.load(agent, &caller.scope, &names);
        let how = match caller.session {
            true => "Loaded for this conversation: they are in your tool list now (call them by name, or through call_tool).",
            false => "Loaded for this conversation. Call them through call_tool {\"toolName\": ..., \"arguments\": {...}}: this connection's tool list does not change.",
        };
        let tools: Vec<Value> = found
            .iter()
            .map(|d| serde_json::json!({"name": d.name, "description": d.description, "inputSchema": d.input_schema}))
            .collect();
        Ok(serde_json::json!({"loaded": names, "tools": tools, "note": how}).to_string())
    }
}

#[cfg(test)]
#[path = "discovery_tests.rs"]
mod tests;
