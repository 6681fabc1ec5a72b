//! The workflow parser and compiler on arbitrary text: `load_str` must
//! return a workflow or diagnostics, never panic. The source path sits
//! beside the engine's valid fixtures, so seeds naming
//! `../../../../shop/openapi.yaml` compile against the shop's
//! document.
#![no_main]
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

fn source() -> &'static PathBuf {
    static SOURCE: OnceLock<PathBuf> = OnceLock::new();
    SOURCE.get_or_init(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../engine/tests/fixtures/valid/fuzz.workflow.yaml")
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(workflow) = dragnet_engine::workflow::load_str(source(), text) {
        // A compiled workflow must also plan (cycles are diagnostics).
        let _ = dragnet_engine::plan::Plan::new(&workflow);
    }
});
