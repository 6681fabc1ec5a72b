//! JSONPath refs: the first line parsed as a ref, the rest as JSON that the
//! ref is resolved over (as the inputs, the trigger and a step `s`'s output).
#![no_main]
#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::sync::Arc;

use dragnet_core::Document;
use dragnet_engine::refs::{RefExpr, Scope};
use dragnet_engine::workflow::model::StepId;
use libfuzzer_sys::fuzz_target;
use serde_json::value::RawValue;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (ref_text, json) = text.split_once('\n').unwrap_or((&text, "null"));
    let Ok(expr) = RefExpr::parse(ref_text) else {
        return;
    };
    let Ok(raw) = serde_json::from_str::<Box<RawValue>>(json) else {
        return;
    };
    let value: Value = serde_json::from_str(raw.get()).unwrap_or(Value::Null);
    let mut steps = HashMap::new();
    steps.insert(StepId("s".into()), Document::from(raw));
    let value = Arc::new(value);
    let scope = Scope {
        inputs: value.clone(),
        trigger: value,
        steps,
    };
    let _ = scope.resolve(&expr);
});
