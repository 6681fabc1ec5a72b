//! Each agent's served tools: its bindings that have a tool and the
//! definitions they are listed by, built once when the gateway starts (the
//! configuration does not change while it runs), rather than for every
//! call, listing and search.

use super::Gateway;
use crate::config::Binding;
use crate::definition::ToolDefinition;
use crate::listing::{agent_tools, Bound};

/// An agent's bindings that have a tool (by their index in the agent's
/// configuration) and the definitions they are listed by, the retrieval
/// tools after them when one loops.
pub(super) struct ServedTools {
    bindings: Vec<usize>,
    defs: Vec<ToolDefinition>,
}

impl ServedTools {
    pub(super) fn of(all: &[Binding]) -> ServedTools {
        let (bindings, bound): (Vec<usize>, Vec<Bound<'_>>) = all
            .iter()
            .enumerate()
            .filter_map(|(i, b)| {
                let tool = b.tool.as_deref()?;
                Some((
                    i,
                    Bound {
                        provider: &b.provider,
                        tool,
                        looping: b.looping,
                    },
                ))
            })
            .unzip();
        ServedTools {
            bindings,
            defs: agent_tools(&bound),
        }
    }
}

impl Gateway {
    /// The bindings of `agent`, with the definitions they are listed by,
    /// and after them the retrieval tools when one loops (built once, when
    /// the gateway starts).
    pub(crate) fn served(&self, agent: &str) -> (Vec<&Binding>, &[ToolDefinition]) {
        let (Some(a), Some(served)) = (self.config.agents.get(agent), self.served.get(agent))
        else {
            return (Vec::new(), &[]);
        };
        let bindings = served.bindings.iter().map(|&i| &a.bindings[i]).collect();
        (bindings, &served.defs)
    }
}
