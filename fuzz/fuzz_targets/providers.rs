//! The one provider format on arbitrary text, in both places it is
//! written: the first byte chooses `agent.yaml` as a whole
//! (`dragnet_gateway::config::load_str`, providers, agents, `oauth:`) or a
//! workflow whose `providers:` block holds the rest, indented under one
//! provider name (`dragnet_engine::workflow::load_str`). Either returns a
//! configuration or located diagnostics, never panics.
#![no_main]
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

fn beside_fixtures(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(name)
}

fn agent_source() -> &'static PathBuf {
    static SOURCE: OnceLock<PathBuf> = OnceLock::new();
    SOURCE.get_or_init(|| beside_fixtures("../gateway/tests/fixtures/fuzz-agent.yaml"))
}

fn workflow_source() -> &'static PathBuf {
    static SOURCE: OnceLock<PathBuf> = OnceLock::new();
    SOURCE.get_or_init(|| beside_fixtures("../engine/tests/fixtures/valid/fuzz.workflow.yaml"))
}

fuzz_target!(|data: &[u8]| {
    let Some((&choice, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    if choice % 2 == 0 {
        let _ = dragnet_gateway::config::load_str(agent_source(), text);
        return;
    }
    let mut workflow = String::from("name: fuzz\nproviders:\n  p:\n");
    for line in text.lines() {
        workflow.push_str("    ");
        workflow.push_str(line);
        workflow.push('\n');
    }
    workflow.push_str("steps:\n  - id: s\n    tool: p.anything\n");
    let _ = dragnet_engine::workflow::load_str(workflow_source(), &workflow);
});
