//! Tool discovery (SPEC §7): which of an agent's tools are listed directly
//! and which go to its pool (`split`), and the ranked search over a pool
//! (`search`: BM25F over tool names, toolkits, descriptions and parameter
//! names).

pub mod calls;
pub mod pool;
pub mod search;
pub mod split;

#[cfg(test)]
mod tests;
