//! Run inputs: typed against the workflow's declared inputs, defaults
//! filled, unknown and missing ones rejected by name.

use dragnet_steps::args::parse_value;
use serde_json::{json, Map, Value};

use crate::error::Error;
use crate::workflow::model::{InputType, Workflow};

fn type_name(ty: InputType) -> &'static str {
    match ty {
        InputType::String => "string",
        InputType::Integer => "integer",
        InputType::Number => "number",
        InputType::Boolean => "boolean",
        InputType::Array => "array",
        InputType::Object => "object",
    }
}

/// Parses `name=value` pairs from the command line, typed by the inputs.
pub fn parse_input_pairs(
    workflow: &Workflow,
    pairs: &[String],
) -> Result<Map<String, Value>, Error> {
    let mut out = Map::new();
    for pair in pairs {
        let Some((name, text)) = pair.split_once('=') else {
            return Err(Error::Input {
                name: pair.clone(),
                message: "expected name=value".into(),
            });
        };
        let def = workflow
            .inputs
            .iter()
            .find(|i| i.name == name)
            .ok_or_else(|| unknown(workflow, name))?;
        let schema = json!({"type": type_name(def.ty)});
        let value = parse_value(name, text, Some(&schema)).map_err(|e| Error::Input {
            name: name.to_string(),
            message: e.to_string(),
        })?;
        out.insert(name.to_string(), value);
    }
    Ok(out)
}

/// Checks given inputs and fills defaults; the result is `$.inputs`.
pub fn resolve_inputs(workflow: &Workflow, given: &Map<String, Value>) -> Result<Value, Error> {
    if let Some(name) = given
        .keys()
        .find(|k| !workflow.inputs.iter().any(|i| &i.name == *k))
    {
        return Err(unknown(workflow, name));
    }
    let mut out = Map::new();
    for def in &workflow.inputs {
        let value = match (given.get(&def.name), &def.default) {
            (Some(v), _) => v.clone(),
            (None, Some(d)) => d.clone(),
            (None, None) => {
                return Err(Error::Input {
                    name: def.name.clone(),
                    message: "required, and the run did not give it (use --input name=value)"
                        .into(),
                })
            }
        };
        if !matches_type(&value, def.ty) {
            return Err(Error::Input {
                name: def.name.clone(),
                message: format!("expected {}, got {value}", type_name(def.ty)),
            });
        }
        out.insert(def.name.clone(), value);
    }
    Ok(Value::Object(out))
}

fn matches_type(v: &Value, ty: InputType) -> bool {
    match ty {
        InputType::String => v.is_string(),
        InputType::Integer => v.is_i64() || v.is_u64(),
        InputType::Number => v.is_number(),
        InputType::Boolean => v.is_boolean(),
        InputType::Array => v.is_array(),
        InputType::Object => v.is_object(),
    }
}

fn unknown(workflow: &Workflow, name: &str) -> Error {
    let known: Vec<&str> = workflow.inputs.iter().map(|i| i.name.as_str()).collect();
    Error::Input {
        name: name.to_string(),
        message: format!(
            "not an input of `{}`; its inputs are: {}",
            workflow.name,
            if known.is_empty() {
                "(none)".to_string()
            } else {
                known.join(", ")
            }
        ),
    }
}
