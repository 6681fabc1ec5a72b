//! The OpenAPI importer on arbitrary text (JSON or YAML): a toolkit or an
//! error, never a panic.
#![no_main]
#![forbid(unsafe_code)]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = dragnet_openapi::import_str("fuzz.yaml", text);
});
