//! Unit tests of whole-document import: versions and formats, naming,
//! parameters, bodies (OpenAPI 3 and Swagger 2.0), the input schema,
//! paging detection and error pointers. Response collections are tested in
//! `response_tests.rs`, schema inlining in `schema_tests.rs`.

use serde_json::{json, Value};

use super::import_str;
use dragnet_core::error::Error;
use dragnet_core::tool::{BodyArguments, BodyEncoding, Method, ParamLocation, Toolkit};

/// Imports an OpenAPI 3 document with the given `paths` (and components).
pub(super) fn oas3(paths: Value, components: Value) -> Toolkit {
    let doc =
        json!({"openapi":"3.0.3","info":{"title":" Shop "},"paths":paths,"components":components});
    import_str("shop.json", &doc.to_string()).unwrap()
}

fn swagger(paths: Value, definitions: Value) -> Toolkit {
    let doc =
        json!({"swagger":"2.0","info":{"title":"Old"},"paths":paths,"definitions":definitions});
    import_str("old.json", &doc.to_string()).unwrap()
}

fn invalid(text: &str) -> (String, String) {
    match import_str("bad.json", text) {
        Err(Error::InvalidDocument {
            file,
            pointer,
            message,
        }) => {
            assert_eq!(file, "bad.json");
            (pointer, message)
        }
        other => panic!("expected InvalidDocument, got {other:?}"),
    }
}

#[test]
fn one_tool_per_operation_with_schema_and_description() {
    let kit = oas3(
        json!({"/orders": {
            "parameters": [{"name":"X-Tenant","in":"header","schema":{"type":"string"}}],
            "get": {"operationId":"listOrders","summary":"List orders","description":"All of them.",
                "parameters":[
                    {"name":"page","in":"query","description":"Page number","schema":{"type":"integer","minimum":1}},
                    {"name":"per_page","in":"query","schema":{"type":"integer","maximum":100}},
                    {"name":"session","in":"cookie","schema":{"type":"string"}},
                    {"name":"Accept","in":"header","schema":{"type":"string"}}]},
            "post": {"requestBody":{"required":true,"content":{"application/json":{"schema":{
                "type":"object","required":["sku"],"properties":{"sku":{"type":"string"},"qty":{"type":"integer"}}}}}}},
            "x-extra": {}}}),
        json!({}),
    );
    assert_eq!(kit.title, "Shop");
    assert_eq!(kit.source, "shop.json");
    assert_eq!(kit.tools.len(), 2);
    let list = &kit.tools[0];
    assert_eq!(list.name, "listOrders");
    assert_eq!(list.method, Method::Get);
    assert_eq!(list.description, "List orders\n\nAll of them.");
    assert_eq!(list.argument_names(), ["X-Tenant", "page", "per_page"]);
    assert_eq!(
        list.input_schema["properties"]["page"],
        json!({"type":"integer","minimum":1,"description":"Page number"})
    );
    assert!(list.input_schema.get("required").is_none());
    assert!(list.input_schema.get("additionalProperties").is_none());
    assert_eq!(
        list.param("X-Tenant").unwrap().location,
        ParamLocation::Header
    );
    let paging = list.paging().expect("page + per_page is walkable");
    assert_eq!(paging.size.name, "per_page");
    assert_eq!(paging.size.maximum, Some(100));
    assert_eq!(paging.size.location, "query");

    let create = &kit.tools[1];
    assert_eq!(create.name, "post_orders");
    let body = create.body.as_ref().unwrap();
    assert_eq!(body.encoding, BodyEncoding::Json);
    assert!(body.required);
    assert_eq!(
        body.arguments,
        BodyArguments::Flattened {
            properties: vec!["sku".into(), "qty".into()]
        }
    );
    assert_eq!(create.argument_names(), ["X-Tenant", "sku", "qty"]);
    assert_eq!(create.input_schema["required"], json!(["sku"]));
    assert!(!create.walkability.is_walkable());
}

#[test]
fn operation_parameters_override_path_item_ones() {
    let kit = oas3(
        json!({"/a/{id}": {
            "parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"string"}},
                          {"name":"q","in":"query","schema":{"type":"string"}}],
            "get":{"parameters":[{"name":"q","in":"query","required":true,"schema":{"type":"integer"}}]}}}),
        json!({}),
    );
    let tool = &kit.tools[0];
    assert_eq!(tool.params.len(), 2);
    let q = tool.param("q").unwrap();
    assert!(q.required);
    assert_eq!(q.schema["type"], "integer");
    assert_eq!(tool.input_schema["required"], json!(["id", "q"]));
}

#[test]
fn undeclared_path_variables_become_required_strings() {
    let kit = oas3(json!({"/a/{id}/b": {"get":{}}}), json!({}));
    let id = kit.tools[0].param("id").unwrap();
    assert_eq!(id.location, ParamLocation::Path);
    assert!(id.required);
}

#[test]
fn names_sanitised_fallen_back_and_unique() {
    let long_id = format!("{}.x", "a".repeat(70));
    let kit = oas3(
        json!({
            "/orders/{order_id}": {"get":{}, "delete":{"operationId":"orders.delete"}},
            "/dupes": {"get":{"operationId":"same"}, "put":{"operationId":"same"},
                       "post":{"operationId":"get_orders_order_id"}, "patch":{"operationId":"!!!"}},
            "/long": {"get":{"operationId": long_id.clone()}, "put":{"operationId": long_id.clone()}}}),
        json!({}),
    );
    let names: Vec<&str> = kit.tools.iter().map(|t| t.name.as_str()).collect();
    let hash = |s: &str| {
        use sha2::Digest;
        let d = sha2::Sha256::digest(s.as_bytes());
        d.iter()
            .take(4)
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let get_fallback = format!("get_orders_order_id_{}", hash("get /orders/{order_id}"));
    let delete = "orders_delete".to_string();
    let same_put = format!("same_{}", hash("put /dupes"));
    let bangs = format!("patch_dupes_{}", hash("!!!"));
    let long_get = format!("{}_{}", "a".repeat(55), hash(&long_id));
    let long_put = format!("{}_{}", "a".repeat(55), hash("put /long"));
    assert_eq!(
        names,
        [
            get_fallback.as_str(),
            delete.as_str(),
            "same",
            same_put.as_str(),
            "get_orders_order_id",
            bangs.as_str(),
            long_get.as_str(),
            long_put.as_str(),
        ]
    );
    // the document's own ids find their tools, unless an id is shared
    assert_eq!(kit.tool("orders.delete").unwrap().name, delete);
    assert_eq!(kit.tool("!!!").unwrap().name, bangs);
    assert_eq!(kit.tool("same").unwrap().name, "same");
    assert!(kit.tool(&long_id).is_none(), "two operations share it");
    assert_eq!(kit.tool(&long_put).unwrap().method, Method::Put);
    assert_eq!(kit.operation_id(&delete), Some("orders.delete"));
    assert_eq!(kit.operation_id(&get_fallback), None);
}

#[test]
fn swagger_body_parameter_and_keywords_on_parameters() {
    let kit = swagger(
        json!({"/pets/{petId}": {"put": {"operationId":"updatePet","parameters":[
            {"name":"petId","in":"path","required":true,"type":"integer","format":"int64","minimum":1},
            {"name":"tags","in":"query","type":"array","items":{"type":"string","enum":["a","b"]}},
            {"name":"pet","in":"body","required":true,"description":"The pet","schema":{"$ref":"#/definitions/Pet"}}]}}}),
        json!({"Pet":{"type":"object","properties":{"petId":{"type":"integer"},"name":{"type":"string"}}}}),
    );
    let tool = &kit.tools[0];
    assert_eq!(
        tool.param("petId").unwrap().schema,
        json!({"type":"integer","format":"int64","minimum":1})
    );
    assert_eq!(
        tool.param("tags").unwrap().schema["items"]["enum"],
        json!(["a", "b"])
    );
    let body = tool.body.as_ref().unwrap();
    assert_eq!(body.encoding, BodyEncoding::Json);
    // `petId` is both a parameter and a body property: the body stays whole.
    assert_eq!(body.arguments, BodyArguments::Whole);
    assert_eq!(tool.argument_names(), ["petId", "tags", "body"]);
    assert_eq!(
        tool.input_schema["properties"]["body"]["description"],
        "The pet"
    );
    assert_eq!(
        tool.input_schema["properties"]["body"]["properties"]["name"]["type"],
        "string"
    );
    assert_eq!(tool.input_schema["required"], json!(["petId", "body"]));
}

#[test]
fn swagger_form_data_is_a_form_body() {
    let kit = swagger(
        json!({"/upload": {"post": {"operationId":"upload","parameters":[
            {"name":"note","in":"formData","required":true,"type":"string","description":"A note"},
            {"name":"file","in":"formData","type":"file"}]}}}),
        json!({}),
    );
    let tool = &kit.tools[0];
    let body = tool.body.as_ref().unwrap();
    assert_eq!(body.encoding, BodyEncoding::Form);
    assert_eq!(
        body.arguments,
        BodyArguments::Flattened {
            properties: vec!["note".into(), "file".into()]
        }
    );
    assert_eq!(body.schema["required"], json!(["note"]));
    assert_eq!(
        tool.input_schema["properties"]["file"],
        json!({"type":"string","format":"binary"})
    );
    assert_eq!(
        tool.input_schema["properties"]["note"]["description"],
        "A note"
    );
    assert_eq!(tool.input_schema["required"], json!(["note"]));
}

#[test]
fn request_body_media_types() {
    let body = |content: Value| {
        let kit = oas3(
            json!({"/x": {"post": {"requestBody": {"$ref":"#/components/requestBodies/B"}}}}),
            json!({"requestBodies":{"B":{"content":content}}}),
        );
        kit.tools[0].body.clone().unwrap()
    };
    let form = body(
        json!({"application/x-www-form-urlencoded":{"schema":{"properties":{"a":{}}}},
        "multipart/form-data":{"schema":{}}}),
    );
    assert_eq!(form.encoding, BodyEncoding::Form);
    assert!(!form.required);
    let json_wins = body(json!({"application/x-www-form-urlencoded":{},
        "application/vnd.api+json":{"schema":{"type":"array"}}}));
    assert_eq!(json_wins.encoding, BodyEncoding::Json);
    assert_eq!(json_wins.schema["type"], "array");
    assert_eq!(json_wins.arguments, BodyArguments::Whole);
    let other =
        body(json!({"application/octet-stream":{"schema":{"type":"string","format":"binary"}}}));
    assert_eq!(other.encoding, BodyEncoding::Json);
    assert_eq!(other.schema["format"], "binary");
}

#[test]
fn whole_body_paging_is_detected_inside_body() {
    let kit = oas3(
        json!({"/search": {"post": {"parameters":[{"name":"query","in":"query","schema":{}}],
            "requestBody":{"content":{"application/json":{"schema":{"type":"object","properties":{
                "query":{"type":"string"},"limit":{"type":"integer"},"offset":{"type":"integer"}}}}}}}}}),
        json!({}),
    );
    let tool = &kit.tools[0];
    assert_eq!(tool.body.as_ref().unwrap().arguments, BodyArguments::Whole);
    let paging = tool.paging().expect("limit + offset in the whole body");
    assert_eq!(paging.size.arg_path, ["body", "limit"]);
}

#[test]
fn yaml_with_bom_numeric_keys_and_swagger_number_version() {
    let text = "\u{feff}swagger: 2.0\ninfo: {title: Y}\npaths:\n  /things:\n    get:\n      responses:\n        200:\n          schema:\n            type: array\n            items: {type: object}\n";
    let kit = import_str("y.yaml", text).unwrap();
    assert_eq!(kit.title, "Y");
    assert_eq!(kit.tools[0].name, "get_things");
    assert_eq!(kit.tools[0].response_items_path, Some(vec![]));
}

#[test]
fn empty_paths_is_an_empty_toolkit() {
    let kit = import_str("e.yaml", "openapi: 3.1.0\npaths: {}\n").unwrap();
    assert!(kit.tools.is_empty());
    assert_eq!(kit.title, "");
}

#[test]
fn broken_documents_name_the_pointer() {
    assert_eq!(invalid("[1]").0, "");
    assert_eq!(invalid(r#"{"info":{}}"#).0, "");
    assert_eq!(invalid(r#"{"openapi":"4.0.0","paths":{}}"#).0, "/openapi");
    assert_eq!(invalid(r#"{"swagger":"1.2","paths":{}}"#).0, "/swagger");
    assert_eq!(invalid(r#"{"openapi":"3.0.0"}"#).0, "/paths");
    assert_eq!(invalid(r#"{"openapi":"3.0.0","paths":[]}"#).0, "/paths");
    let (pointer, message) = invalid(
        r#"{"openapi":"3.0.0","paths":{"/orders":{"get":{"parameters":[{"in":"query"}]}}}}"#,
    );
    assert_eq!(pointer, "/paths/~1orders/get/parameters/0");
    assert!(message.contains("name"), "{message}");
    let (pointer, _) =
        invalid(r#"{"openapi":"3.0.0","paths":{"/orders":{"get":{"parameters":[{"name":"q"}]}}}}"#);
    assert_eq!(pointer, "/paths/~1orders/get/parameters/0");
    assert_eq!(
        invalid(r#"{"openapi":"3.0.0","paths":{"/a/{b}":{"get":"nope"}}}"#).0,
        "/paths/~1a~1{b}/get"
    );
    assert_eq!(
        invalid(r#"{"openapi":"3.0.0","paths":{"/a":{"get":{"parameters":{}}}}}"#).0,
        "/paths/~1a/get/parameters"
    );
    assert!(matches!(
        import_str("bad.json", "{"),
        Err(Error::ParseDocument { .. })
    ));
}

#[test]
fn dangling_ref_names_the_ref_and_its_target() {
    let (pointer, message) = invalid(
        r##"{"openapi":"3.0.0","paths":{"/o":{"get":{"parameters":[
            {"name":"q","in":"query","schema":{"$ref":"#/components/schemas/Gone"}}]}}}}"##,
    );
    assert_eq!(pointer, "/paths/~1o/get/parameters/0/schema/$ref");
    assert!(message.contains("#/components/schemas/Gone"), "{message}");
    let (pointer, _) = invalid(
        r##"{"openapi":"3.0.0","paths":{"/o":{"get":{"parameters":[{"$ref":"#/components/parameters/P"}]}}}}"##,
    );
    assert_eq!(pointer, "/paths/~1o/get/parameters/0/$ref");
}

#[test]
fn import_file_reads_and_reports_missing_files() {
    let missing = std::path::Path::new("/nonexistent/dragnet/openapi.yaml");
    assert!(matches!(
        super::import_file(missing),
        Err(Error::ReadDocument { .. })
    ));
}

#[test]
fn empty_optional_bodies_are_dropped_and_fragments_cut() {
    let empty = json!({"content":{"application/x-www-form-urlencoded":{"schema":{
        "type":"object","properties":{},"additionalProperties":false}}}});
    let kit = oas3(
        json!({"/v1/things#list": {"get": {"operationId":"GetThings","requestBody": empty}},
               "/v1/things#stream": {"post": {}}}),
        json!({}),
    );
    assert!(kit.tools[0].body.is_none());
    assert_eq!(kit.tools[0].argument_names(), Vec::<String>::new());
    assert_eq!(kit.tools[0].path, "/v1/things");
    assert_eq!(kit.tools[1].path, "/v1/things");
    assert_eq!(kit.tools[1].name, "post_v1_things_stream");
}

/// Every node of a document replaced, in turn, by values of the wrong
/// kind: the import may fail, but never panics.
#[test]
fn mangled_documents_never_panic() {
    let doc = json!({"openapi":"3.1.0","info":{"title":"T"},
        "paths":{"/a/{id}":{"parameters":[{"$ref":"#/components/parameters/Id"}],
            "get":{"operationId":"getA","parameters":[{"name":"limit","in":"query","schema":{"type":"integer"}},
                {"name":"page","in":"query","content":{"application/json":{"schema":{"type":"integer"}}}}],
                "responses":{"200":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/List"}}}}}},
            "post":{"requestBody":{"content":{"application/json":{"schema":{"allOf":[
                {"$ref":"#/components/schemas/Item"},{"properties":{"n":{"type":"integer"}}}]}}}},
                "responses":{"201":{"$ref":"#/components/responses/R"}}}}},
        "components":{"parameters":{"Id":{"name":"id","in":"path","schema":{"type":"string"}}},
            "responses":{"R":{"content":{"application/json":{"schema":{"type":"array"}}}}},
            "schemas":{"Item":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/components/schemas/Item"}}}},
                "List":{"type":"object","properties":{"data":{"type":"array","items":{"$ref":"#/components/schemas/Item"}}}}}}});
    let garbage = [
        json!(null),
        json!(7),
        json!("x"),
        json!([]),
        json!({}),
        json!({"$ref":"#/"}),
    ];
    let mut pointers = Vec::new();
    collect_pointers(&doc, String::new(), &mut pointers);
    for pointer in &pointers {
        for bad in &garbage {
            let mut mangled = doc.clone();
            if let Some(slot) = mangled.pointer_mut(pointer) {
                *slot = bad.clone();
            }
            let _ = import_str("m.json", &mangled.to_string());
            let _ = import_str(
                "m.yaml",
                &serde_yaml_ng::to_string(&mangled).unwrap_or_default(),
            );
        }
    }
    assert!(pointers.len() > 50);
}

fn collect_pointers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                let next = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                collect_pointers(child, next, out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                collect_pointers(child, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

#[test]
fn a_parameter_named_body_gives_way_to_a_whole_body() {
    let kit = oas3(
        json!({"/x": {"post": {"parameters":[{"name":"body","in":"query","schema":{"type":"string"}}],
            "requestBody":{"required":true,"content":{"application/json":{"schema":{"type":"array"}}}}}}}),
        json!({}),
    );
    let tool = &kit.tools[0];
    assert!(tool.params.is_empty());
    assert_eq!(tool.argument_names(), ["body"]);
    assert_eq!(tool.input_schema["properties"]["body"]["type"], "array");
    assert_eq!(tool.input_schema["required"], json!(["body"]));
}
