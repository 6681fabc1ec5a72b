//! Tool names from awkward `operationId`s: non-ASCII (`café`, `列出订单`),
//! 500 characters, ids that sanitise to one name. Every tool gets a valid,
//! distinct, stable name, and both the name and the original id find it.

use std::collections::HashSet;

use dragnet_core::tool::Method;
use dragnet_core::Toolkit;
use dragnet_openapi::import_str;
use serde_json::json;

fn valid(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn long_id() -> String {
    "listEveryOrderOfEveryPropertyIncludingArchived".repeat(11)[..500].to_string()
}

fn document() -> String {
    json!({
        "openapi": "3.0.3",
        "info": {"title": "names", "version": "1"},
        "paths": {
            "/orders": {"get": {"operationId": "café"}},
            "/properties": {"get": {"operationId": "列出订单"}},
            "/customers": {"get": {"operationId": long_id()}},
            "/reports": {"get": {"operationId": "orders.list"}},
            "/alerts": {"get": {"operationId": "orders list"}},
            "/events": {"get": {"operationId": "orders_list"}},
            "/plain": {"get": {"operationId": "listPlain"}}
        }
    })
    .to_string()
}

fn kit() -> Toolkit {
    import_str("names.json", &document()).unwrap()
}

fn name_of<'a>(kit: &'a Toolkit, path: &str) -> &'a str {
    &kit.tools.iter().find(|t| t.path == path).unwrap().name
}

#[test]
fn every_tool_gets_a_valid_distinct_name() {
    let kit = kit();
    let mut seen = HashSet::new();
    for tool in &kit.tools {
        assert!(valid(&tool.name), "`{}`", tool.name);
        assert!(seen.insert(tool.name.clone()), "duplicate `{}`", tool.name);
    }
    assert_eq!(seen.len(), 7);
    // an id that is already a name stays as it is, and claims it first
    assert_eq!(name_of(&kit, "/plain"), "listPlain");
    assert_eq!(name_of(&kit, "/events"), "orders_list");
    // lost letters and cut ids are tagged
    let cafe = name_of(&kit, "/orders");
    assert!(cafe.starts_with("caf_") && cafe.len() == 12, "{cafe}");
    let chinese = name_of(&kit, "/properties");
    assert!(chinese.starts_with("get_properties_"), "{chinese}");
    let long = name_of(&kit, "/customers");
    assert_eq!(long.len(), 64);
    assert!(long.starts_with("listEveryOrder"), "{long}");
    // two ids that sanitise to the taken `orders_list` are told apart
    let dotted = name_of(&kit, "/reports");
    let spaced = name_of(&kit, "/alerts");
    assert!(dotted.starts_with("orders_list_"), "{dotted}");
    assert!(spaced.starts_with("orders_list_"), "{spaced}");
    assert_ne!(dotted, spaced);
}

#[test]
fn names_are_deterministic_and_tags_do_not_depend_on_order() {
    let names = |kit: &Toolkit| {
        let mut v: Vec<(String, String)> = kit
            .tools
            .iter()
            .map(|t| (t.path.clone(), t.name.clone()))
            .collect();
        v.sort();
        v
    };
    assert_eq!(names(&kit()), names(&kit()));
    // the same operations listed the other way round get the same names
    let mut doc: serde_json::Value = serde_json::from_str(&document()).unwrap();
    let paths = doc["paths"].as_object().unwrap().clone();
    let reversed: serde_json::Map<_, _> = paths.into_iter().rev().collect();
    doc["paths"] = serde_json::Value::Object(reversed);
    let other = import_str("names.json", &doc.to_string()).unwrap();
    assert_eq!(names(&other), names(&kit()));
}

#[test]
fn the_original_id_and_the_name_both_find_the_tool() {
    let kit = kit();
    for (id, path) in [
        ("café", "/orders"),
        ("列出订单", "/properties"),
        (long_id().as_str(), "/customers"),
        ("orders.list", "/reports"),
        ("orders list", "/alerts"),
        ("orders_list", "/events"),
    ] {
        let by_id = kit
            .tool(id)
            .unwrap_or_else(|| panic!("`{id}` finds a tool"));
        assert_eq!(by_id.path, path, "{id}");
        assert_eq!(by_id.method, Method::Get);
        let by_name = kit.tool(&by_id.name).unwrap();
        assert_eq!(by_name, by_id);
        assert_eq!(kit.operation_id(&by_id.name), Some(id));
    }
    assert!(
        kit.tool("caf").is_none(),
        "a cut-down spelling is not a name"
    );
}
