//! What an agent's `tools/list` holds: one definition per binding, the
//! retrieval tools when any binding loops. Every name matches
//! `^[A-Za-z0-9_-]{1,64}$` and is unique in the list (a name two providers
//! share is prefixed with its provider's, shortened with a hash when too
//! long; the retrieval tools' names are never taken). Every input schema is
//! `"type": "object"`. A looping binding adds `_fields`, `_for_each`,
//! `_refresh` and, only on a walkable tool, `_all_pages`; `_filter` is
//! honoured but never advertised. No definition declares an output schema:
//! a cut answer would fail a client's check of it.

use std::collections::{BTreeSet, HashMap};

use dragnet_core::Tool;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use crate::definition::ToolDefinition;
use crate::restriction::{FETCH_TOOL, QUERY_TOOL};
use crate::results::RESULT_TTL;

/// One bound tool of an agent.
#[derive(Debug, Clone)]
pub struct Bound<'a> {
    pub provider: &'a str,
    pub tool: &'a Tool,
    /// The binding's `loop_responses`.
    pub looping: bool,
}

/// The longest tool name MCP clients accept.
pub const MAX_NAME: usize = 64;

/// Whether `name` can be a tool's name.
pub fn valid_name(name: &str) -> bool {
    (1..=MAX_NAME).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// `text` made a valid name: other characters become `_`, and a name too
/// long keeps its start and a hash of the whole.
fn sanitize(text: &str) -> String {
    let clean: String = text
        .chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                true => c,
                false => '_',
            },
        )
        .collect();
    if clean.len() <= MAX_NAME && !clean.is_empty() {
        return clean;
    }
    let hash = dragnet_core::hex::lower(&Sha256::digest(text.as_bytes())[..4]);
    format!("{}_{hash}", &clean[..clean.len().min(MAX_NAME - 9)])
}

/// The definitions of an agent's tools: its bindings, then the retrieval
/// tools when one of them loops.
pub fn agent_tools(bound: &[Bound<'_>]) -> Vec<ToolDefinition> {
    // The retrieval and discovery tools' names are never a bound tool's.
    let mut taken: BTreeSet<String> = [
        QUERY_TOOL,
        FETCH_TOOL,
        crate::discovery::pool::SEARCH_TOOL,
        crate::discovery::pool::LOAD_TOOL,
        crate::discovery::pool::CALL_TOOL,
    ]
    .map(String::from)
    .into();
    let mut count: HashMap<&str, usize> = HashMap::new();
    for b in bound {
        *count.entry(b.tool.name.as_str()).or_default() += 1;
    }
    let mut out = Vec::with_capacity(bound.len() + 2);
    for b in bound {
        let plain = b.tool.name.as_str();
        let mut name = match count.get(plain) == Some(&1) && !taken.contains(plain) {
            true => sanitize(plain),
            false => sanitize(&format!("{}_{plain}", b.provider)),
        };
        let mut n = 2;
        while taken.contains(&name) {
            name = sanitize(&format!("{}_{plain}_{n}", b.provider));
            n += 1;
        }
        taken.insert(name.clone());
        out.push(definition(b, name));
    }
    if bound.iter().any(|b| b.looping) {
        out.extend(retrieval_tools());
    }
    out
}

fn definition(b: &Bound<'_>, name: String) -> ToolDefinition {
    let mut schema = match &b.tool.input_schema {
        Value::Object(o) => o.clone(),
        _ => Map::new(),
    };
    schema.insert("type".into(), json!("object"));
    let mut description = b.tool.description.clone();
    if b.looping {
        let props = schema.entry("properties").or_insert_with(|| json!({}));
        if let Some(props) = props.as_object_mut() {
            for (key, value) in reserved(b.tool.can_walk()) {
                props.insert(key.into(), value);
            }
        }
        if !description.is_empty() {
            description.push_str("\n\n");
        }
        description.push_str(match b.tool.can_walk() {
            true => {
                "Pass _all_pages: true to get every page in one call; _fields to keep only the \
                 fields you need; _for_each to call it once per value of a list. The answer says \
                 whether it is complete (_pagingComplete)."
            }
            false => {
                "Pass _fields to keep only the fields you need, or _for_each to call it once per \
                 value of a list. The answer says whether it is complete (_pagingComplete)."
            }
        });
    }
    ToolDefinition {
        name,
        description,
        input_schema: Value::Object(schema),
    }
}

/// The reserved arguments a looping binding advertises.
fn reserved(walkable: bool) -> Vec<(&'static str, Value)> {
    let mut out = vec![
        (
            "_fields",
            json!({
                "description": "Keep only these fields of each row (dot-paths such as customer.name).",
                "type": "array",
                "items": {"type": "string"},
            }),
        ),
        (
            "_for_each",
            json!({
                "description": "Call the tool once per value, setting argument `key` to each; the rows are merged in value order.",
                "type": "object",
                "properties": {
                    "key": {"type": "string"},
                    "values": {"type": "array"},
                    "concurrency": {"type": "integer", "minimum": 1, "maximum": 16},
                },
                "required": ["key", "values"],
            }),
        ),
        (
            "_refresh",
            json!({"description": "Bypass a cached answer and fetch again.", "type": "boolean"}),
        ),
    ];
    if walkable {
        out.insert(
            0,
            (
                "_all_pages",
                json!({"description": "Walk every page and return all rows in one answer.", "type": "boolean"}),
            ),
        );
    }
    out
}

/// `queryToolResult` and `fetchToolResult`.
pub fn retrieval_tools() -> Vec<ToolDefinition> {
    let minutes = RESULT_TTL.num_minutes();
    vec![
        ToolDefinition {
            name: QUERY_TOOL.into(),
            description: format!(
                "Read the rows of a stored result (the _resultId of an earlier answer, kept \
                 {minutes} minutes for this conversation). The filter runs on every stored row \
                 before paging, so it may use fields the answer did not show. Answers with the \
                 rows, how many matched and the next offset."
            ),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "resultId": {"type": "string"},
                    "fields": {"type": "array", "items": {"type": "string"}},
                    "filter": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"field": {"type": "string"}, "op": {"type": "string"}, "value": {}},
                            "required": ["field", "op"],
                        },
                    },
                    "offset": {"type": "integer", "minimum": 0},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 500},
                },
                "required": ["resultId"],
            }),
        },
        ToolDefinition {
            name: FETCH_TOOL.into(),
            description: format!(
                "Read a stored result's raw text in character slices (the _resultId of an \
                 earlier answer, kept {minutes} minutes for this conversation), e.g. when it \
                 has no rows to query."
            ),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "resultId": {"type": "string"},
                    "offset": {"type": "integer", "minimum": 0},
                    "length": {"type": "integer", "minimum": 1, "maximum": 100000},
                },
                "required": ["resultId"],
            }),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shop() -> dragnet_core::Toolkit {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../shop/openapi.yaml");
        dragnet_openapi::import_file(std::path::Path::new(path)).expect("the shop imports")
    }

    #[test]
    fn looping_bindings_advertise_the_reserved_arguments_they_can_use() {
        let kit = shop();
        let orders = kit.tool("listOrders").expect("listOrders");
        let order = kit.tool("getOrder").expect("getOrder");
        let list = agent_tools(&[
            Bound {
                provider: "shop",
                tool: orders,
                looping: true,
            },
            Bound {
                provider: "shop",
                tool: order,
                looping: true,
            },
        ]);
        let props = |i: usize| list[i].input_schema["properties"].clone();
        assert!(props(0).get("_all_pages").is_some(), "walkable");
        assert!(props(1).get("_all_pages").is_none(), "not walkable");
        for def in &list[..2] {
            let p = &def.input_schema["properties"];
            assert!(p.get("_fields").is_some() && p.get("_refresh").is_some());
            assert!(p.get("_filter").is_none(), "never advertised");
            assert_eq!(def.input_schema["type"], "object");
        }
        let names: Vec<&str> = list.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["listOrders", "getOrder", QUERY_TOOL, FETCH_TOOL]);
        assert!(list[2].description.contains("15 minutes"));
    }

    #[test]
    fn a_plain_binding_is_the_tool_as_it_is_and_names_stay_unique() {
        let kit = shop();
        let orders = kit.tool("listOrders").expect("listOrders");
        let plain = agent_tools(&[Bound {
            provider: "shop",
            tool: orders,
            looping: false,
        }]);
        assert_eq!(
            plain.len(),
            1,
            "no retrieval tools without a looping binding"
        );
        assert!(plain[0].input_schema["properties"].get("_fields").is_none());
        // Two providers with the same tool; one tool named like a retrieval tool.
        let mut clash = orders.clone();
        clash.name = QUERY_TOOL.into();
        let long = "x".repeat(80);
        let list = agent_tools(&[
            Bound {
                provider: "shop",
                tool: orders,
                looping: false,
            },
            Bound {
                provider: "backup",
                tool: orders,
                looping: false,
            },
            Bound {
                provider: "odd",
                tool: &clash,
                looping: true,
            },
            Bound {
                provider: &long,
                tool: orders,
                looping: false,
            },
        ]);
        let names: Vec<&str> = list.iter().map(|d| d.name.as_str()).collect();
        let unique: BTreeSet<&&str> = names.iter().collect();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        assert!(names.iter().all(|n| valid_name(n)), "{names:?}");
        assert_eq!(names[0], "shop_listOrders");
        assert_eq!(names[1], "backup_listOrders");
        assert_eq!(names[2], "odd_queryToolResult");
        assert_eq!(names[3].len(), MAX_NAME);
    }
}
