//! Tool discovery (SPEC §7): which of an agent's tools are listed directly
//! and which go to its pool (`split`), and the ranked search over a pool
//! (`search`: BM25F over tool names, toolkits, descriptions and parameter
//! names), and the pool built from them (`pool`: the listed tools, the
//! meta-tools' definitions, what each thread loaded). The gateway answers
//! the meta-tools in `runtime` (its `discovery` module).

pub mod pool;
pub mod search;
pub mod split;
