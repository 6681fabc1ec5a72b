//! Cache keys (SPEC §5): never less than what makes two answers differ —
//! which upstream answered (its canonical base URL), which operation (method,
//! path template and the document's parameter set, as the tool's input
//! schema), how it pages (detected or named by hand: one walk is not the
//! other), the tool id, its arguments (reserved ones are never in them),
//! the all-pages setting, where the collection is, and the de-duplicated,
//! sorted fan-out values. Canonical JSON (keys sorted), hashed with SHA-256.
//! Projection and filter are not in the key: the stored set is unshaped.
//! Whose data it is (the scope) is part of every lookup beside the key.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

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

/// The key of a call's walk: the SHA-256 of the material's JSON, written
/// from the material as it is (nothing copied or sorted into a new value).
pub fn cache_key(m: KeyMaterial<'_>) -> String {
    let material = Material {
        tool: m.tool_id,
        upstream: m.upstream,
        operation: Operation {
            method: m.tool.method.as_upper(),
            path: &m.tool.path,
            parameters: Canonical(&m.tool.input_schema),
            paging: paging_of(m.tool),
        },
        arguments: CanonicalMap(m.arguments),
        all_pages: m.all_pages,
        items_path: m.items_path,
        for_each: m.for_each.map(|(key, values)| ForEach { key, values }),
    };
    let mut text = Vec::with_capacity(1024);
    // Writing into a Vec cannot fail, and the material is plain JSON.
    let _ = serde_json::to_writer(&mut text, &material);
    dragnet_core::hex::lower(&Sha256::digest(&text))
}

/// The key's JSON, its members in this order (the order keys were always
/// made in: a key's value must not change between versions, or every
/// stored entry misses once).
#[derive(serde::Serialize)]
struct Material<'a> {
    tool: &'a str,
    upstream: &'a str,
    operation: Operation<'a>,
    arguments: CanonicalMap<'a>,
    all_pages: bool,
    items_path: Option<&'a [String]>,
    for_each: Option<ForEach<'a>>,
}

#[derive(serde::Serialize)]
struct Operation<'a> {
    method: &'a str,
    path: &'a str,
    parameters: Canonical<'a>,
    paging: Paging<'a>,
}

#[derive(serde::Serialize)]
struct ForEach<'a> {
    key: &'a str,
    values: &'a [Value],
}

/// A value written with every object's keys sorted (canonical JSON).
struct Canonical<'a>(&'a Value);

/// An object written with its keys sorted, and its values canonical.
struct CanonicalMap<'a>(&'a Map<String, Value>);

impl Serialize for Canonical<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Object(map) => CanonicalMap(map).serialize(serializer),
            Value::Array(items) => serializer.collect_seq(items.iter().map(Canonical)),
            other => other.serialize(serializer),
        }
    }
}

impl Serialize for CanonicalMap<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut entries: Vec<(&String, &Value)> = self.0.iter().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut map = serializer.serialize_map(Some(entries.len()))?;
        for (key, value) in entries {
            map.serialize_entry(key, &Canonical(value))?;
        }
        map.end()
    }
}

/// How the tool pages, as the walk will follow it.
fn paging_of(tool: &Tool) -> Paging<'_> {
    use dragnet_core::paging::detect::{Position, Walkability};
    let page = match &tool.walkability {
        Walkability::Walkable(p) => Some(match &p.position {
            Position::Page(q) => PageKey::Page {
                size: param(&p.size),
                page: param(q),
            },
            Position::Offset(q) => PageKey::Offset {
                size: param(&p.size),
                offset: param(q),
            },
        }),
        _ => None,
    };
    let cursor = tool.cursor.as_ref().map(|c| CursorKey {
        style: c.style,
        cursor: c.param.as_ref().map(param),
        next: c.next.describe(),
        size: c.size.as_ref().map(param),
    });
    Paging { page, cursor }
}

/// A paging parameter in a key: `[name, location]`.
type ParamKey<'a> = (&'a str, &'a str);

fn param(p: &dragnet_core::paging::detect::PagingParam) -> ParamKey<'_> {
    (&p.name, &p.location)
}

#[derive(serde::Serialize)]
struct Paging<'a> {
    page: Option<PageKey<'a>>,
    cursor: Option<CursorKey<'a>>,
}

#[derive(serde::Serialize)]
#[serde(untagged)]
enum PageKey<'a> {
    Page {
        size: ParamKey<'a>,
        page: ParamKey<'a>,
    },
    Offset {
        size: ParamKey<'a>,
        offset: ParamKey<'a>,
    },
}

#[derive(serde::Serialize)]
struct CursorKey<'a> {
    style: &'a str,
    cursor: Option<ParamKey<'a>>,
    next: String,
    size: Option<ParamKey<'a>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use dragnet_core::json::canonical;
    use dragnet_core::paging::detect::Walkability;
    use dragnet_core::tool::Method;
    use proptest::prelude::*;
    use serde_json::json;

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

    /// How keys were made before they were written straight into the
    /// hash: a key's value never changes, or every stored entry misses.
    fn key_as_made_before(m: KeyMaterial<'_>) -> String {
        let material = json!({
            "tool": m.tool_id,
            "upstream": m.upstream,
            "operation": {
                "method": m.tool.method.as_upper(),
                "path": m.tool.path,
                "parameters": canonical(&m.tool.input_schema),
                "paging": paging_as_made_before(m.tool),
            },
            "arguments": canonical(&Value::Object(m.arguments.clone())),
            "all_pages": m.all_pages,
            "items_path": m.items_path,
            "for_each": m.for_each.map(|(key, values)| json!({"key": key, "values": values})),
        });
        let digest = Sha256::digest(material.to_string().as_bytes());
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn paging_as_made_before(tool: &Tool) -> Value {
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

    /// Tools paging every way a key tells apart: none, page number,
    /// offset (named by hand), cursor.
    fn tools() -> Vec<Tool> {
        let doc = r#"{"openapi":"3.0.0","info":{"title":"t","version":"1"},"paths":{
          "/pages":{"get":{"operationId":"pages","parameters":[
            {"name":"page","in":"query","schema":{"type":"integer"}},
            {"name":"per_page","in":"query","schema":{"type":"integer","maximum":100}}],
            "responses":{"200":{"description":"ok","content":{"application/json":{"schema":{
              "type":"array","items":{"type":"object"}}}}}}}},
          "/cursor":{"get":{"operationId":"cursor","parameters":[
            {"name":"cursor","in":"query","schema":{"type":"string"}},
            {"name":"limit","in":"query","schema":{"type":"integer"}}],
            "responses":{"200":{"description":"ok","content":{"application/json":{"schema":{
              "type":"object","properties":{"next_cursor":{"type":"string"},
              "data":{"type":"array","items":{"type":"object"}}}}}}}}}},
          "/linked":{"get":{"operationId":"linked","parameters":[],
            "responses":{"200":{"description":"ok","content":{"application/json":{"schema":{
              "type":"object","properties":{"next":{"type":"string","format":"uri"},
              "results":{"type":"array","items":{"type":"object"}}}}}}}}}}}}"#;
        let kit = dragnet_openapi::import_str("t.json", doc).unwrap();
        let plain = tool(
            "/orders/{id}",
            json!({"type":"object","properties":{"id":{"type":"string"},"é":{"enum":[1,2.5,null]}}}),
        );
        let roles = crate::overrides::PagingRoles {
            size: Some("a".into()),
            offset: Some("b".into()),
            ..Default::default()
        };
        let offset = crate::overrides::apply_roles(
            &tool(
                "/o",
                json!({"type":"object","properties":{"b":{"type":"integer"},"a":{"type":"integer"}}}),
            ),
            &roles,
        )
        .unwrap();
        let walked = kit.tool("pages").unwrap().clone();
        let cursor = kit.tool("cursor").unwrap().clone();
        let linked = kit.tool("linked").unwrap().clone();
        assert!(walked.walkability.is_walkable() && cursor.cursor.is_some());
        assert!(linked.cursor.as_ref().is_some_and(|c| c.param.is_none()));
        vec![plain, offset, walked, cursor, linked]
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            "\\PC{0,8}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 40, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec(("\\PC{0,6}", inner), 0..6)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    fn object() -> impl Strategy<Value = Map<String, Value>> {
        prop::collection::vec(("[a-zA-Z_é\"\\\\]{0,6}", json_value()), 0..6)
            .prop_map(|members| members.into_iter().collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Keys keep the value they always had, for any arguments, input
        /// schema, fan-out values and paging.
        #[test]
        fn keys_are_the_values_they_always_were(
            which in 0usize..5,
            schema in object(),
            arguments in object(),
            values in prop::collection::vec(json_value(), 0..4),
            all_pages in any::<bool>(),
            items in prop::option::of(prop::collection::vec("[a-z.]{0,4}", 0..3)),
            fan_out in any::<bool>(),
        ) {
            let mut tool = tools().swap_remove(which);
            // Another schema for the same paging: the paging is read from
            // the tool's fields, not its schema.
            if !schema.is_empty() {
                tool.input_schema = Value::Object(schema);
            }
            let m = KeyMaterial {
                tool_id: "shop.list\u{e9}\"",
                upstream: "http://127.0.0.1:1/v1",
                tool: &tool,
                arguments: &arguments,
                all_pages,
                items_path: items.as_deref(),
                for_each: fan_out.then_some(("id", values.as_slice())),
            };
            prop_assert_eq!(cache_key(m), key_as_made_before(m));
        }
    }
}
