//! Walkable-tool detection (SPEC §3.1): a tool is walkable when its input
//! schema has a page-size parameter and a page-number or offset parameter,
//! at the top level or one level down inside an object of the request body.
//! Names match exactly; nothing is configured.

use serde_json::{Map, Value};

/// Page-size parameter names, exact.
pub const PAGE_SIZE_NAMES: [&str; 10] = [
    "itemsPerPage",
    "items_per_page",
    "perPage",
    "per_page",
    "pageSize",
    "page_size",
    "maxResults",
    "max_results",
    "limit",
    "$top",
];
/// Page-number parameter names, exact.
pub const PAGE_NUMBER_NAMES: [&str; 5] = [
    "page",
    "pageNumber",
    "page_number",
    "pageIndex",
    "page_index",
];
/// Offset parameter names, exact.
pub const OFFSET_NAMES: [&str; 5] = ["offset", "skip", "$skip", "startIndex", "start_index"];
/// Parameters that mark a cursor-style tool: never page-walked; walked by
/// its cursor when its response says where the next one comes from
/// (`cursor.rs`).
pub const CURSOR_NAMES: [&str; 16] = [
    "cursor",
    "pageToken",
    "page_token",
    "nextPageToken",
    "next_page_token",
    "starting_after",
    "ending_before",
    "after",
    "before",
    "continuationToken",
    "continuation_token",
    "marker",
    "since_id",
    "max_id",
    "pageCursor",
    "page_cursor",
];

/// One paging parameter and where its value lives.
#[derive(Debug, Clone, PartialEq)]
pub struct PagingParam {
    pub name: String,
    /// Path of the value inside the call's arguments, e.g. `["paging", "page"]`.
    pub arg_path: Vec<String>,
    /// Where it goes on the wire: `query`, `header`, `path`, `body` or `body.<prop>`.
    pub location: String,
    pub minimum: Option<i64>,
    pub maximum: Option<i64>,
    pub default: Option<i64>,
}

/// How the walk moves from one page to the next.
#[derive(Debug, Clone, PartialEq)]
pub enum Position {
    /// A page number that advances by one.
    Page(PagingParam),
    /// An offset that advances by the number of items received.
    Offset(PagingParam),
}

impl Position {
    pub fn param(&self) -> &PagingParam {
        match self {
            Position::Page(p) | Position::Offset(p) => p,
        }
    }
}

/// The paging parameters of a walkable tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Paging {
    pub size: PagingParam,
    pub position: Position,
}

/// Whether a tool can be walked, and if not, why.
#[derive(Debug, Clone, PartialEq)]
pub enum Walkability {
    Walkable(Box<Paging>),
    /// Pages by an opaque cursor; not page-walked (see `Tool::cursor`).
    Cursor {
        param: String,
    },
    /// A page-size parameter but no page number or offset.
    SizeOnly {
        size: String,
    },
    /// A page number or offset but no page-size parameter.
    PositionOnly {
        position: String,
    },
    /// No paging parameters at all.
    NoPaging,
}

impl Walkability {
    pub fn is_walkable(&self) -> bool {
        matches!(self, Walkability::Walkable(_))
    }

    /// Plain words on why a tool is not walkable (empty when it is).
    pub fn reason(&self) -> String {
        match self {
            Walkability::Walkable(_) => String::new(),
            Walkability::Cursor { param } => format!(
                "it pages with a cursor (parameter `{param}`), but its response does not say \
                 where the next one comes from; name its paging roles by hand: `cursor` and \
                 `next` (`body:<dot.path>`, `header:link` or `last_item:<field>`) in the \
                 provider's `paging:` block, or `--paging cursor={param},next=body:<dot.path>` \
                 on `dragnet call`"
            ),
            Walkability::SizeOnly { size } => format!(
                "it has a page-size parameter (`{size}`) but no page-number or offset parameter"
            ),
            Walkability::PositionOnly { position } => format!(
                "it has a page-number or offset parameter (`{position}`) but no page-size parameter"
            ),
            Walkability::NoPaging => {
                "its input schema has no page-size and page-number or offset parameters".into()
            }
        }
    }
}

/// One object whose properties are searched for paging parameters.
struct Container<'a> {
    /// Argument path prefix of the object's properties.
    prefix: Vec<String>,
    properties: &'a Map<String, Value>,
    /// Wire location of each property name.
    location: Box<dyn Fn(&str) -> String + 'a>,
}

/// Detects paging from a tool's input schema.
///
/// `param_location` answers where a top-level argument goes on the wire
/// (`Some("query")` for a query parameter…, `None` for a body argument);
/// `whole_body` says the body is one argument named `body`.
pub fn detect(
    input_schema: &Value,
    param_location: &dyn Fn(&str) -> Option<&'static str>,
    whole_body: bool,
) -> Walkability {
    let empty = Map::new();
    let top = input_schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);

    let mut containers = vec![Container {
        prefix: Vec::new(),
        properties: top,
        location: Box::new(|name: &str| param_location(name).unwrap_or("body").to_string()),
    }];
    // One level down: object properties of the body.
    let body_level: Vec<(Vec<String>, &Map<String, Value>, String)> = if whole_body {
        let mut out = Vec::new();
        if let Some(body_props) = top.get("body").and_then(object_properties) {
            out.push((vec!["body".to_string()], body_props, "body".to_string()));
            for (key, schema) in body_props {
                if let Some(props) = object_properties(schema) {
                    out.push((
                        vec!["body".to_string(), key.clone()],
                        props,
                        format!("body.{key}"),
                    ));
                }
            }
        }
        out
    } else {
        top.iter()
            .filter(|(key, _)| param_location(key).is_none())
            .filter_map(|(key, schema)| {
                object_properties(schema).map(|p| (vec![key.clone()], p, format!("body.{key}")))
            })
            .collect()
    };
    for (prefix, properties, location) in body_level {
        containers.push(Container {
            prefix,
            properties,
            location: Box::new(move |_| location.clone()),
        });
    }

    let find = |c: &Container, names: &[&str]| -> Option<PagingParam> {
        names.iter().find_map(|name| {
            c.properties.get(*name).map(|schema| {
                let mut arg_path = c.prefix.clone();
                arg_path.push((*name).to_string());
                PagingParam {
                    name: (*name).to_string(),
                    arg_path,
                    location: (c.location)(name),
                    minimum: int_of(schema, "minimum"),
                    maximum: int_of(schema, "maximum"),
                    default: int_of(schema, "default"),
                }
            })
        })
    };

    let mut first_size = None;
    let mut first_position = None;
    for c in &containers {
        let size = find(c, &PAGE_SIZE_NAMES);
        let position = find(c, &PAGE_NUMBER_NAMES)
            .map(Position::Page)
            .or_else(|| find(c, &OFFSET_NAMES).map(Position::Offset));
        if let (Some(size), Some(position)) = (&size, &position) {
            return Walkability::Walkable(Box::new(Paging {
                size: size.clone(),
                position: position.clone(),
            }));
        }
        first_size = first_size.or(size);
        first_position = first_position.or(position);
    }
    if let Some(param) = containers
        .iter()
        .find_map(|c| CURSOR_NAMES.iter().find(|n| c.properties.contains_key(**n)))
    {
        return Walkability::Cursor {
            param: (*param).to_string(),
        };
    }
    match (first_size, first_position) {
        (Some(size), Some(position)) => Walkability::Walkable(Box::new(Paging { size, position })),
        (Some(size), None) => Walkability::SizeOnly { size: size.name },
        (None, Some(position)) => Walkability::PositionOnly {
            position: position.param().name.clone(),
        },
        (None, None) => Walkability::NoPaging,
    }
}

fn object_properties(schema: &Value) -> Option<&Map<String, Value>> {
    schema.get("properties").and_then(Value::as_object)
}

fn int_of(schema: &Value, key: &str) -> Option<i64> {
    let v = schema.get(key)?;
    v.as_i64()
        .or_else(|| v.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn query(_: &str) -> Option<&'static str> {
        Some("query")
    }
    fn body(_: &str) -> Option<&'static str> {
        None
    }

    #[test]
    fn page_and_per_page_in_query() {
        let schema = json!({"type":"object","properties":{
            "page":{"type":"integer","minimum":1},
            "per_page":{"type":"integer","maximum":100,"default":25}}});
        let Walkability::Walkable(p) = detect(&schema, &query, false) else {
            panic!("not walkable")
        };
        assert_eq!(p.size.name, "per_page");
        assert_eq!(p.size.maximum, Some(100));
        assert_eq!(p.size.default, Some(25));
        assert_eq!(p.size.location, "query");
        assert!(matches!(p.position, Position::Page(ref q) if q.minimum == Some(1)));
    }

    #[test]
    fn odata_top_skip() {
        let schema = json!({"properties":{"$top":{"type":"integer"},"$skip":{"type":"integer"}}});
        let Walkability::Walkable(p) = detect(&schema, &query, false) else {
            panic!()
        };
        assert!(matches!(p.position, Position::Offset(ref o) if o.name == "$skip"));
    }

    #[test]
    fn one_level_down_in_body() {
        let schema = json!({"properties":{
            "filter":{"type":"object"},
            "paging":{"type":"object","properties":{"page":{},"pageSize":{"maximum":50}}}}});
        let Walkability::Walkable(p) = detect(&schema, &body, false) else {
            panic!()
        };
        assert_eq!(p.size.arg_path, vec!["paging", "pageSize"]);
        assert_eq!(p.size.location, "body.paging");
        assert_eq!(p.position.param().location, "body.paging");
    }

    #[test]
    fn whole_body_argument() {
        let schema = json!({"properties":{"body":{"type":"object","properties":{
            "limit":{},"offset":{}}}}});
        let Walkability::Walkable(p) = detect(&schema, &body, true) else {
            panic!()
        };
        assert_eq!(p.size.arg_path, vec!["body", "limit"]);
        assert_eq!(p.size.location, "body");
    }

    #[test]
    fn names_match_exactly() {
        let schema = json!({"properties":{"Page":{},"pagesize":{}}});
        assert_eq!(detect(&schema, &query, false), Walkability::NoPaging);
    }

    #[test]
    fn cursor_is_not_walkable() {
        let schema = json!({"properties":{"cursor":{},"limit":{}}});
        let w = detect(&schema, &query, false);
        assert_eq!(
            w,
            Walkability::Cursor {
                param: "cursor".into()
            }
        );
        let reason = w.reason();
        assert!(
            reason.contains("`--paging cursor=cursor,next=body:<dot.path>`")
                && reason.contains("`paging:`")
                && !reason.contains("not followed yet"),
            "{reason}"
        );
    }

    #[test]
    fn size_only_and_position_only() {
        let w = detect(&json!({"properties":{"limit":{}}}), &query, false);
        assert!(matches!(w, Walkability::SizeOnly { .. }));
        let w = detect(&json!({"properties":{"offset":{}}}), &query, false);
        assert!(matches!(w, Walkability::PositionOnly { .. }));
    }
}
