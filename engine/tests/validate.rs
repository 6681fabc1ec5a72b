//! Workflow file validation end to end: valid fixtures and the shipped
//! examples load into the expected model; every invalid fixture yields
//! exactly the diagnostics in its `.expected` file; truncated files never
//! panic; the checked-in JSON Schema matches `json_schema()`.
//!
//! `DRAGNET_WRITE_EXPECTED=1` rewrites the `.expected` files and
//! `DRAGNET_WRITE_SCHEMA=1` rewrites `schemas/workflow.schema.json`.

use std::path::{Path, PathBuf};

use dragnet_engine::workflow::model::{InputType, StepKind, Template, Trigger};
use dragnet_engine::workflow::{json_schema, load, load_str};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Files in `dir` with one of `exts`, sorted.
fn files(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| exts.contains(&e))
        })
        .collect();
    out.sort();
    out
}

#[test]
fn valid_fixtures_load() {
    let valid = files(&fixtures().join("valid"), &["yaml", "json"]);
    assert!(valid.len() >= 2);
    for path in valid {
        if let Err(e) = load(&path) {
            panic!("{} should load:\n{e}", path.display());
        }
    }
}

#[test]
fn shipped_examples_load() {
    let shop = workspace().join("shop");
    let found: Vec<PathBuf> = files(&shop, &["yaml"])
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".workflow.yaml"))
        .collect();
    for path in found {
        if let Err(e) = load(&path) {
            panic!("{} should load:\n{e}", path.display());
        }
    }
}

#[test]
fn full_fixture_compiles_into_the_model() {
    let wf = load(&fixtures().join("valid/full.yaml")).unwrap();
    assert_eq!(wf.name, "full-feature-tour");
    assert_eq!(wf.inputs.len(), 7);
    assert_eq!(wf.inputs[0].ty, InputType::Number);
    assert!(!wf.inputs[0].required);
    assert!(wf.inputs[6].required);
    assert_eq!(wf.providers.len(), 2);
    let shop = wf.providers["shop"].openapi().unwrap();
    assert!(shop
        .headers
        .contains(&("X-Trace".to_string(), "demo".to_string())));
    // One document, imported once, shared by both providers.
    assert!(std::sync::Arc::ptr_eq(
        &shop.toolkit,
        &wf.providers["backup"].openapi().unwrap().toolkit
    ));
    assert_eq!(wf.triggers.len(), 2);
    let Trigger::Cron(first) = &wf.triggers[0];
    assert_eq!(first.expression, "0 2 * * *");
    assert_eq!(first.timezone.name(), "Europe/Berlin");
    assert_eq!(first.catch_up, dragnet_engine::schedule::CatchUp::Last);
    assert_eq!(first.overlap, dragnet_engine::schedule::Overlap::Skip);
    let Trigger::Cron(second) = &wf.triggers[1];
    assert_eq!(second.timezone, chrono_tz::Tz::UTC);

    assert_eq!(wf.steps.len(), 6);
    let props = &wf.steps[0];
    assert_eq!(props.timeout, Some(std::time::Duration::from_secs(30)));
    assert_eq!(props.retry.unwrap().attempts, 3);
    assert_eq!(props.location.path, "steps[0]");
    assert_eq!(props.location.line, 31);
    assert_eq!(props.location.column, 5);

    let StepKind::Tool(orders) = &wf.steps[1].kind else {
        panic!("open_orders is a tool step")
    };
    assert_eq!(orders.tool.name(), "listPropertyOrders");
    assert!(orders.looping.all_pages);
    assert_eq!(orders.looping.fields.as_ref().unwrap().paths().len(), 3);
    assert_eq!(orders.looping.for_each.as_ref().unwrap().key, "property_id");
    assert_eq!(orders.looping.filter.len(), 3);
    assert_eq!(orders.looping.items_path, Some(vec!["data".to_string()]));
    assert!(matches!(orders.input, Template::Object(_)));
    let step_refs: Vec<String> = wf.steps[1]
        .refs()
        .iter()
        .filter_map(|r| r.step().map(|s| s.to_string()))
        .collect();
    assert_eq!(step_refs, vec!["properties"]);

    let StepKind::Branch(gate) = &wf.steps[3].kind else {
        panic!("gate is a branch")
    };
    assert_eq!(gate.then[0].as_str(), "report");
    assert_eq!(gate.otherwise[0].as_str(), "alert");
    assert!(gate.condition.op.is_some());
    assert_eq!(wf.steps[2].needs[0].as_str(), "properties");
    assert_eq!(wf.steps[4].refs().len(), 3);
}

#[test]
fn invalid_fixtures_report_exactly_the_expected_diagnostics() {
    let dir = fixtures().join("invalid");
    let write = std::env::var_os("DRAGNET_WRITE_EXPECTED").is_some();
    let prefix = format!("{}/", dir.display());
    let mut failures = Vec::new();
    let invalid = files(&dir, &["yaml", "json"]);
    assert!(invalid.len() >= 17);
    for path in invalid {
        let got = match load(&path) {
            Ok(_) => "(loaded without errors)".to_string(),
            Err(e) => {
                for d in &e {
                    assert!(d.line >= 1 && d.column >= 1, "{d}");
                    assert!(!d.message.is_empty());
                }
                e.to_string().replace(&prefix, "")
            }
        };
        let expected_path = path.with_extension("expected");
        if write {
            std::fs::write(&expected_path, format!("{got}\n")).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if expected.trim_end() != got {
            failures.push(format!(
                "{}:\n--- expected\n{}\n--- got\n{got}\n",
                path.display(),
                expected.trim_end()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{}\n(DRAGNET_WRITE_EXPECTED=1 cargo test -p dragnet-engine --test validate rewrites the .expected files)",
        failures.join("\n")
    );
}

#[test]
fn diagnostics_carry_the_yaml_path() {
    let err = load(&fixtures().join("invalid/many_errors.yaml")).unwrap_err();
    let paths: Vec<&str> = err.iter().map(|d| d.path.as_str()).collect();
    assert!(paths.iter().all(|p| !p.is_empty()), "{paths:?}");
    assert!(paths.iter().any(|p| p.starts_with("steps[0]")), "{paths:?}");
    assert!(paths.iter().any(|p| p.starts_with("steps[3]")), "{paths:?}");
}

#[test]
fn unreadable_file_is_one_diagnostic() {
    let path = fixtures().join("does-not-exist.yaml");
    let err = load(&path).unwrap_err();
    assert_eq!(err.len(), 1);
    assert_eq!((err.0[0].line, err.0[0].column), (1, 1));
    assert!(err.0[0]
        .message
        .starts_with("cannot read the workflow file"));
}

/// Every prefix of every fixture (cut at each line, and at each char of the
/// full tour) loads or fails without panicking.
#[test]
fn truncated_files_never_panic() {
    let mut all = files(&fixtures().join("valid"), &["yaml", "json"]);
    all.extend(files(&fixtures().join("invalid"), &["yaml", "json"]));
    for path in &all {
        let text = std::fs::read_to_string(path).unwrap();
        let mut cut = 0;
        for line in text.split_inclusive('\n') {
            cut += line.len();
            let _ = load_str(path, &text[..cut]);
            let _ = load_str(path, line);
        }
    }
    let path = fixtures().join("valid/full.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    for (i, _) in text.char_indices().step_by(7) {
        let _ = load_str(&path, &text[..i]);
    }
}

/// Random edits of every fixture (characters YAML cares about, put in,
/// replaced or removed) load or fail without panicking.
#[test]
fn mutated_files_never_panic() {
    const ALPHABET: &[&str] = &[
        "{", "}", "[", "]", ":", "-", " ", "\n", "\"", "'", "&a", "*a", "!!str ", "#", ",", "? ",
        "|", ">", "$", ".", "ref", "0", "~", "\t",
    ];
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move |bound: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound.max(1) as u64) as usize
    };
    let mut all = files(&fixtures().join("valid"), &["yaml", "json"]);
    all.extend(files(&fixtures().join("invalid"), &["yaml"]));
    for path in &all {
        let text = std::fs::read_to_string(path).unwrap();
        for _ in 0..60 {
            let mut mutated = text.clone();
            for _ in 0..=next(3) {
                let mut at = next(mutated.len() + 1);
                while !mutated.is_char_boundary(at) {
                    at -= 1;
                }
                let piece = ALPHABET[next(ALPHABET.len())];
                match next(3) {
                    0 => mutated.insert_str(at, piece),
                    1 => {
                        let mut end = (at + 1 + next(8)).min(mutated.len());
                        while !mutated.is_char_boundary(end) {
                            end -= 1;
                        }
                        mutated.replace_range(at..end, piece);
                    }
                    _ => {
                        let mut end = (at + 1 + next(20)).min(mutated.len());
                        while !mutated.is_char_boundary(end) {
                            end -= 1;
                        }
                        mutated.replace_range(at..end, "");
                    }
                }
            }
            let _ = load_str(path, &mutated);
        }
    }
}

#[test]
fn odd_inputs_never_panic() {
    let path = fixtures().join("valid/x.yaml");
    let deep = format!("steps: {}{}", "[".repeat(500), "]".repeat(500));
    let cases = [
        "",
        "~",
        "[]",
        "- a\n- b\n",
        "name: x\n---\nname: y\n",
        "name: &a x\nsteps: *a\n",
        "name: x\nsteps: [{id: a, tool: shop.x, input: *nope}]\n",
        "? [a, b]\n: c\n",
        "name: x\nsteps:\n  - {id: a, input: {ref: {ref: 1}}}\n",
        "\u{feff}name: x\n",
        "name: x\nsteps: [{id: \"\u{1F600}\", needs: [\"\u{1F600}\"]}]\n",
        "name: 1e999\nsteps: [{id: a, retry: {attempts: 99999999999999999999}}]\n",
        &deep,
    ];
    for text in cases {
        assert!(load_str(&path, text).is_err(), "{text:?} should not load");
    }
}

#[test]
fn checked_in_schema_matches() {
    let path = workspace().join("schemas/workflow.schema.json");
    let generated = format!(
        "{}\n",
        serde_json::to_string_pretty(&json_schema()).unwrap()
    );
    if std::env::var_os("DRAGNET_WRITE_SCHEMA").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == generated,
        "{} is out of date; regenerate it with\n  DRAGNET_WRITE_SCHEMA=1 cargo test -p dragnet-engine --test validate checked_in_schema_matches",
        path.display()
    );
}

#[test]
fn schema_documents_the_format() {
    let schema = json_schema();
    let props = schema["properties"].as_object().unwrap();
    for key in [
        "name",
        "description",
        "inputs",
        "providers",
        "triggers",
        "steps",
    ] {
        assert!(props.contains_key(key), "{key}");
    }
    assert_eq!(schema["additionalProperties"], serde_json::json!(false));
    let text = schema.to_string();
    assert!(text.contains("for_each"));
    assert!(text.contains("all_pages"));
}
