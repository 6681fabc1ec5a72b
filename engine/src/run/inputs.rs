//! Run inputs: typed against the workflow's declared inputs, defaults
//! filled, unknown and missing ones rejected by name.

use dragnet_core::args::parse_value;
use serde_json::{json, Map, Value};

use crate::error::Error;
use crate::workflow::model::Workflow;

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
        let schema = json!({"type": def.ty.name()});
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
        if !def.ty.accepts(&value) {
            return Err(Error::Input {
                name: def.name.clone(),
                message: format!("expected {}, got {value}", def.ty.name()),
            });
        }
        out.insert(def.name.clone(), value);
    }
    Ok(Value::Object(out))
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
