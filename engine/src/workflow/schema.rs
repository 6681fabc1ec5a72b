//! The published JSON Schema (draft-07, what editors' YAML plugins read
//! best) of the workflow file, generated from the serde types in `file.rs`
//! and tidied for editors: no `"default": null` noise, and doc-comment line
//! wraps joined so hover texts read as sentences.

use serde_json::Value;

use super::file::WorkflowFile;

pub fn json_schema() -> Value {
    let mut schema = schemars::generate::SchemaSettings::draft07()
        .into_generator()
        .into_root_schema_for::<WorkflowFile>()
        .to_value();
    tidy(&mut schema);
    schema
}

/// Tidies one schema object and every schema below it. The generated
/// schema is a few levels deep, so recursion is bounded.
fn tidy(schema: &mut Value) {
    let Value::Object(map) = schema else {
        if let Value::Array(items) = schema {
            items.iter_mut().for_each(tidy);
        }
        return;
    };
    if map.get("default").is_some_and(Value::is_null) {
        map.remove("default");
    }
    if let Some(Value::String(text)) = map.get_mut("description") {
        *text = unwrap_lines(text);
    }
    for (key, value) in map.iter_mut() {
        match (key.as_str(), value) {
            // Maps of name to schema: the names are not keywords.
            ("properties" | "definitions", Value::Object(named)) => {
                named.values_mut().for_each(tidy);
            }
            ("description" | "title" | "pattern" | "enum" | "const" | "required", _) => {}
            (_, value) => tidy(value),
        }
    }
}

/// Joins wrapped lines of one paragraph; blank lines stay paragraph breaks.
fn unwrap_lines(text: &str) -> String {
    text.split("\n\n")
        .map(|p| p.lines().map(str::trim).collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tidies_defaults_and_descriptions() {
        let mut s = json!({
            "properties": {
                "default": {"type": "string", "default": null, "description": "a\nb\n\nc"},
                "x": {"default": []}
            }
        });
        tidy(&mut s);
        assert_eq!(
            s,
            json!({"properties": {
                "default": {"type": "string", "description": "a b\n\nc"},
                "x": {"default": []}
            }})
        );
    }
}
