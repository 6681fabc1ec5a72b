//! Cache keys (SPEC §5): never less than what makes two answers differ —
//! which upstream answered (its canonical base URL), which operation (method,
//! path template and the document's parameter set, as the tool's input
//! schema), how it pages (detected or named by hand: one walk is not the
//! other), the tool id, its arguments (reserved ones are never in them),
//! the all-pages setting, where the collection is, and the de-duplicated,
//! sorted fan-out values. Canonical JSON (keys sorted), hashed with SHA-256.
//! Projection and filter are not in the key: the stored set is unshaped.
//! Whose data it is (the scope) is part of every lookup beside the key.

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use dragnet_core::json::canonical;
use dragnet_core::Tool;

/// Everything a key is made of.
#[derive(Debug, Clone, Copy)]
pub struct KeyMaterial<'a> {
    /// The tool id, e.g. `shop.listOrders`.
    pub tool_id: &'a str,
    /// `Upstream::identity()` of the upstream that answers.
    pub upstream: &'a str,
    pub tool: &'a Tool,
    pub arguments: &'a Map<String, Value>,
    pub all_pages: bool,
    pub items_path: Option<&'a [String]>,
    pub for_each: Option<(&'a str, &'a [Value])>,
}

/// The key of a call's walk.
pub fn cache_key(m: KeyMaterial<'_>) -> String {
    let material = json!({
        "tool": m.tool_id,
        "upstream": m.upstream,
        "operation": {
            "method": m.tool.method.as_upper(),
            "path": m.tool.path,
            "parameters": canonical(&m.tool.input_schema),
            "paging": paging_of(m.tool),
        },
        "arguments": canonical(&Value::Object(m.arguments.clone())),
        "all_pages": m.all_pages,
        "items_path": m.items_path,
        "for_each": m.for_each.map(|(key, values)| json!({"key": key, "values": values})),
    });
    let digest = Sha256::digest(material.to_string().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// How the tool pages, as the walk will follow it.
fn paging_of(tool: &Tool) -> Value {
    use dragnet_core::paging::detect::{Position, Walkability};
    let param = |p: &dragnet_core::paging::detect::PagingParam| json!([p.name, p.location]);
    let page = match &tool.walkability {
        Walkability::Walkable(p) => match &p.position {
            Position::Page(q) => json!({"size": param(&p.size), "page": param(q)}),
            Position::Offset(q) => json!({"size": param(&p.size), "offset": param(q)}),
        },
        _ => Value::Null,
    };
    let cursor = tool.cursor.as_ref().map(|c| {
        json!({
            "style": c.style,
            "cursor": c.param.as_ref().map(param),
            "next": c.next.describe(),
            "size": c.size.as_ref().map(param),
        })
    });
    json!({"page": page, "cursor": cursor})
}

#[cfg(test)]
mod tests {
    use super::*;
    use dragnet_core::paging::detect::Walkability;
    use dragnet_core::tool::Method;

    fn tool(path: &str, schema: Value) -> Tool {
        Tool {
            name: "list".into(),
            description: String::new(),
            method: Method::Get,
            path: path.into(),
            params: Vec::new(),
            body: None,
            input_schema: schema,
            response_items_path: None,
            response_is_resource: false,
            cursor: None,
            walkability: Walkability::NoPaging,
        }
    }

    #[test]
    fn everything_that_makes_answers_differ_is_in_the_key() {
        let t = tool(
            "/orders",
            json!({"type":"object","properties":{"a":{},"b":{}}}),
        );
        let args = json!({"a":1,"b":{"x":1,"y":2}})
            .as_object()
            .unwrap()
            .clone();
        let v = [json!(1), json!(2)];
        let base = KeyMaterial {
            tool_id: "shop.list",
            upstream: "http://127.0.0.1:1",
            tool: &t,
            arguments: &args,
            all_pages: true,
            items_path: None,
            for_each: Some(("id", &v)),
        };
        let a = cache_key(base);
        assert_eq!(a.len(), 64);
        // argument order does not matter
        let reordered = json!({"b":{"y":2,"x":1},"a":1})
            .as_object()
            .unwrap()
            .clone();
        assert_eq!(
            a,
            cache_key(KeyMaterial {
                arguments: &reordered,
                ..base
            })
        );
        // everything else does
        let other_args = json!({"a":2}).as_object().unwrap().clone();
        let moved = tool("/v2/orders", t.input_schema.clone());
        let reshaped = tool("/orders", json!({"type":"object","properties":{"a":{}}}));
        let path = vec!["data".to_string()];
        // The same operation walked by roles named by hand.
        let roles = crate::overrides::PagingRoles {
            size: Some("a".into()),
            offset: Some("b".into()),
            ..Default::default()
        };
        let named = crate::overrides::apply_roles(&t, &roles).unwrap();
        for different in [
            KeyMaterial {
                tool: &named,
                ..base
            },
            KeyMaterial {
                upstream: "http://127.0.0.1:2",
                ..base
            },
            KeyMaterial {
                tool_id: "other.list",
                ..base
            },
            KeyMaterial {
                tool: &moved,
                ..base
            },
            KeyMaterial {
                tool: &reshaped,
                ..base
            },
            KeyMaterial {
                arguments: &other_args,
                ..base
            },
            KeyMaterial {
                all_pages: false,
                ..base
            },
            KeyMaterial {
                items_path: Some(&path),
                ..base
            },
            KeyMaterial {
                for_each: Some(("id", &v[..1])),
                ..base
            },
            KeyMaterial {
                for_each: None,
                ..base
            },
        ] {
            assert_ne!(a, cache_key(different), "{different:?}");
        }
    }
}
