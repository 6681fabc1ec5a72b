//! Paging named by hand (issue 14): for APIs whose paging parameters the
//! detection does not know (Jira's `startAt` + `maxResults`, Twilio's
//! `Page` + `PageSize`…), a provider may name the roles for a tool:
//! `{size, page}` or `{size, offset}` for page walks, `{cursor, next}` for
//! cursor walks (`next`: `body:<dot.path>`, `header:link` or
//! `last_item:<field>`). Each name is checked against the tool's real
//! parameters; the tool then walks exactly as a detected one would.
//! Detection without an override is unchanged.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use dragnet_core::paging::cursor::{CursorPaging, NextSource};
use dragnet_core::paging::detect::{Paging, PagingParam, Position, Walkability};
use dragnet_core::tool::{Tool, Toolkit};

/// The paging roles of one tool, named by hand: `size` with `page` or
/// `offset`, or `cursor` with `next`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PagingRoles {
    /// The parameter that sets how many rows a page holds (a cursor walk
    /// that is not given one asks for its declared maximum).
    pub size: Option<String>,
    /// The page-number parameter.
    pub page: Option<String>,
    /// The offset parameter (rows to skip).
    pub offset: Option<String>,
    /// The parameter the next cursor goes in.
    pub cursor: Option<String>,
    /// Where the next cursor or URL is read: `body:<dot.path>`,
    /// `header:link` or `last_item:<field>`.
    pub next: Option<String>,
}

/// A `--paging` spec (`dragnet call`) that cannot be read as roles.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RolesSpecError {
    #[error("name the paging roles as role=value pairs, e.g. `size=maxResults,offset=startAt` or `cursor=page_token,next=body:meta.next`")]
    Nothing,
    #[error("`{part}` is not role=value")]
    NotAPair { part: String },
    #[error("`{role}` is not a paging role: name `size`, `page`, `offset`, `cursor` or `next`")]
    UnknownRole { role: String },
    #[error("`{role}` is named twice")]
    Repeated { role: String },
    #[error("`{role}=` names nothing")]
    Empty { role: String },
}

impl PagingRoles {
    /// The roles a comma-separated `role=value` spec names, with the roles
    /// and values of the file form (`size=maxResults,offset=startAt`,
    /// `cursor=page_token,next=body:meta.next`). The names are checked
    /// against a tool by `apply_roles`, as the file form's are.
    pub fn from_spec(spec: &str) -> Result<PagingRoles, RolesSpecError> {
        let mut roles = PagingRoles::default();
        let parts: Vec<&str> = spec
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect();
        if parts.is_empty() {
            return Err(RolesSpecError::Nothing);
        }
        for part in parts {
            let Some((role, value)) = part.split_once('=') else {
                return Err(RolesSpecError::NotAPair { part: part.into() });
            };
            let (role, value) = (role.trim(), value.trim());
            let slot = match role {
                "size" => &mut roles.size,
                "page" => &mut roles.page,
                "offset" => &mut roles.offset,
                "cursor" => &mut roles.cursor,
                "next" => &mut roles.next,
                _ => return Err(RolesSpecError::UnknownRole { role: role.into() }),
            };
            if value.is_empty() {
                return Err(RolesSpecError::Empty { role: role.into() });
            }
            if slot.replace(value.to_string()).is_some() {
                return Err(RolesSpecError::Repeated { role: role.into() });
            }
        }
        Ok(roles)
    }
}

/// A problem with a provider's `paging:` entry for `tool`: with `key`
/// (`size`, `page`…), or with the entry itself when `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolRoleProblem {
    pub tool: String,
    pub key: Option<&'static str>,
    pub message: String,
}

/// `kit` with the tools `roles` names walking as named, or every problem.
pub fn toolkit_with_roles(
    kit: &Toolkit,
    roles: &BTreeMap<String, PagingRoles>,
) -> Result<Toolkit, Vec<ToolRoleProblem>> {
    let mut out = kit.clone();
    let mut problems = Vec::new();
    for (name, entry) in roles {
        let Some(tool) = kit.tool(name) else {
            problems.push(ToolRoleProblem {
                tool: name.clone(),
                key: None,
                message: format!(
                    "`{name}` is not an operation of `{}` (`dragnet tools --spec` lists them)",
                    kit.source
                ),
            });
            continue;
        };
        match apply_roles(tool, entry) {
            Ok(walked) => {
                if let Some(slot) = out.tools.iter_mut().find(|t| t.name == walked.name) {
                    *slot = walked;
                }
            }
            Err(list) => problems.extend(list.into_iter().map(|p| ToolRoleProblem {
                tool: name.clone(),
                key: (!p.key.is_empty()).then_some(p.key),
                message: format!("paging of `{name}`: {}", p.message),
            })),
        }
    }
    match problems.is_empty() {
        true => Ok(out),
        false => Err(problems),
    }
}

/// One thing wrong with a tool's roles: the role's key and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleProblem {
    /// `size`, `page`, `offset`, `cursor`, `next`, or empty for the entry.
    pub key: &'static str,
    pub message: String,
}

impl RoleProblem {
    fn new(key: &'static str, message: String) -> RoleProblem {
        RoleProblem { key, message }
    }
}

/// Body fields whose value is a next page's URL, not a cursor: by name.
fn names_a_url(field: &str) -> bool {
    let lower = field.to_ascii_lowercase();
    lower == "next" || lower.ends_with("uri") || lower.ends_with("url") || lower.ends_with("link")
}

/// `tool` with its paging named by `roles`, or every problem with them.
pub fn apply_roles(tool: &Tool, roles: &PagingRoles) -> Result<Tool, Vec<RoleProblem>> {
    let mut problems = Vec::new();
    let mut param = |key: &'static str, name: &Option<String>| -> Option<PagingParam> {
        let name = name.as_deref()?;
        let found = parameter(tool, name);
        if found.is_none() {
            problems.push(RoleProblem::new(
                key,
                format!(
                    "`{name}` is not a parameter of `{}` (it has: {})",
                    tool.name,
                    list(&tool.argument_names())
                ),
            ));
        }
        found
    };
    let size = param("size", &roles.size);
    let page = param("page", &roles.page);
    let offset = param("offset", &roles.offset);
    let cursor = param("cursor", &roles.cursor);
    let mut out = tool.clone();
    let positional = roles.page.is_some() || roles.offset.is_some();
    let by_cursor = roles.cursor.is_some() || roles.next.is_some();
    if positional && by_cursor {
        problems.push(RoleProblem::new(
            "",
            "name either `size` with `page` or `offset`, or `cursor` with `next`, not both".into(),
        ));
    } else if positional {
        if roles.page.is_some() && roles.offset.is_some() {
            problems.push(RoleProblem::new(
                "offset",
                "name `page` or `offset`, not both".into(),
            ));
        }
        if roles.size.is_none() {
            problems.push(RoleProblem::new(
                "size",
                "a page walk needs `size` too: the parameter that sets how many rows a page holds"
                    .into(),
            ));
        }
        let position = page.map(Position::Page).or(offset.map(Position::Offset));
        if let (Some(size), Some(position), true) = (size, position, problems.is_empty()) {
            out.walkability = Walkability::Walkable(Box::new(Paging { size, position }));
            out.cursor = None;
        }
    } else if by_cursor {
        match next_source(roles.next.as_deref()) {
            Err(message) => problems.push(RoleProblem::new("next", message)),
            Ok((style, next)) => {
                let needs_cursor =
                    matches!(next, NextSource::Body(_) | NextSource::LastItem { .. });
                if needs_cursor && roles.cursor.is_none() {
                    problems.push(RoleProblem::new(
                        "cursor",
                        format!(
                            "`next: {}` gives a cursor: name the parameter it goes in with `cursor`",
                            next.describe()
                        ),
                    ));
                }
                if problems.is_empty() {
                    out.walkability = match &cursor {
                        Some(p) => Walkability::Cursor {
                            param: p.name.clone(),
                        },
                        None => Walkability::NoPaging,
                    };
                    out.cursor = Some(CursorPaging {
                        style,
                        param: cursor,
                        next,
                        size,
                    });
                }
            }
        }
    } else {
        problems.push(RoleProblem::new(
            "",
            "name the paging roles: `size` with `page` or `offset`, or `cursor` with `next`".into(),
        ));
    }
    match problems.is_empty() {
        true => Ok(out),
        false => Err(problems),
    }
}

/// `next`'s source and the walk's style.
fn next_source(next: Option<&str>) -> Result<(&'static str, NextSource), String> {
    let Some(text) = next.map(str::trim) else {
        return Err("a cursor walk needs `next`: where the next cursor or URL is read (`body:<path>`, `header:link` or `last_item:<field>`)".into());
    };
    let path = |rest: &str| -> Option<Vec<String>> {
        let parts: Vec<String> = rest.split('.').map(|p| p.trim().to_string()).collect();
        parts.iter().all(|p| !p.is_empty()).then_some(parts)
    };
    match text.split_once(':') {
        Some(("header", name)) if name.trim().eq_ignore_ascii_case("link") => {
            Ok(("link_header", NextSource::LinkHeader))
        }
        Some(("body", rest)) => match path(rest) {
            Some(p) if p.last().is_some_and(|f| names_a_url(f)) => {
                Ok(("next_url", NextSource::NextUrl(p)))
            }
            Some(p) => Ok(("cursor", NextSource::Body(p))),
            None => Err(format!("`{text}`: name a body field after `body:`, e.g. `body:meta.next_cursor`")),
        },
        Some(("last_item", field)) if !field.trim().is_empty() => Ok((
            "cursor",
            NextSource::LastItem {
                field: field.trim().to_string(),
                more: vec!["has_more".into()],
            },
        )),
        _ => Err(format!(
            "`{text}` is not a next source: use `body:<dot.path>`, `header:link` or `last_item:<field>`"
        )),
    }
}

/// The tool's argument `name` (a top-level one, or `outer.inner` one level
/// into a body object) as a paging parameter.
fn parameter(tool: &Tool, name: &str) -> Option<PagingParam> {
    let properties = tool.input_schema.get("properties")?;
    let (arg_path, schema, location) = match name.split_once('.') {
        None => {
            let schema = properties.get(name)?;
            let location = tool
                .params
                .iter()
                .find(|p| p.name == name)
                .map_or("body", |p| p.location.as_str());
            (vec![name.to_string()], schema, location.to_string())
        }
        Some((outer, inner)) => {
            let schema = properties.get(outer)?.get("properties")?.get(inner)?;
            let location = format!("body.{outer}");
            (vec![outer.to_string(), inner.to_string()], schema, location)
        }
    };
    let int = |key: &str| schema.get(key).and_then(Value::as_i64);
    Some(PagingParam {
        name: name.to_string(),
        arg_path,
        location,
        minimum: int("minimum"),
        maximum: int("maximum"),
        default: int("default"),
    })
}

fn list(names: &[String]) -> String {
    match names.is_empty() {
        true => "no parameters".into(),
        false => names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jira() -> Tool {
        let doc = r#"{"openapi":"3.0.0","info":{"title":"j","version":"1"},"paths":{"/search":{"get":{
            "operationId":"searchForIssuesUsingJql","parameters":[
              {"name":"jql","in":"query","schema":{"type":"string"}},
              {"name":"startAt","in":"query","schema":{"type":"integer","default":0}},
              {"name":"maxResults","in":"query","schema":{"type":"integer","default":50}}],
            "responses":{"200":{"description":"ok","content":{"application/json":{"schema":{
              "type":"object","properties":{"startAt":{"type":"integer"},"maxResults":{"type":"integer"},
              "total":{"type":"integer"},"issues":{"type":"array","items":{"type":"object"}}}}}}}}}}}}"#;
        dragnet_openapi::import_str("jira.json", doc)
            .unwrap()
            .tool("searchForIssuesUsingJql")
            .unwrap()
            .clone()
    }

    fn roles(yaml: &str) -> PagingRoles {
        serde_yaml_ng::from_str(yaml).unwrap()
    }

    #[test]
    fn named_roles_make_a_tool_walk() {
        let tool = jira();
        assert!(!tool.can_walk(), "startAt is not a known name");
        let walked = apply_roles(&tool, &roles("{size: maxResults, offset: startAt}")).unwrap();
        let paging = walked.paging().unwrap();
        assert_eq!(paging.size.name, "maxResults");
        assert_eq!(paging.size.default, Some(50));
        assert!(
            matches!(&paging.position, Position::Offset(p) if p.name == "startAt" && p.location == "query")
        );

        let by_cursor = apply_roles(
            &tool,
            &roles("{cursor: startAt, next: 'body:nextPageToken'}"),
        )
        .unwrap();
        let cursor = by_cursor.cursor_walk().unwrap();
        assert_eq!(
            (cursor.style, cursor.next.describe().as_str()),
            ("cursor", "body:nextPageToken")
        );
        let by_url = apply_roles(&tool, &roles("{next: 'body:links.next_page_uri'}")).unwrap();
        assert_eq!(by_url.cursor_walk().unwrap().style, "next_url");
        let by_link = apply_roles(&tool, &roles("{next: 'header:Link'}")).unwrap();
        assert_eq!(by_link.cursor_walk().unwrap().style, "link_header");
        let stripe = apply_roles(&tool, &roles("{cursor: startAt, next: 'last_item:id'}")).unwrap();
        assert_eq!(
            stripe.cursor_walk().unwrap().next.describe(),
            "last_item:id"
        );
    }

    #[test]
    fn every_mistake_is_named() {
        let tool = jira();
        let problems = |yaml: &str| apply_roles(&tool, &roles(yaml)).unwrap_err();
        let p = problems("{size: maxResult, offset: start}");
        assert_eq!(p.len(), 2, "{p:?}");
        assert_eq!(p[0].key, "size");
        assert!(
            p[0].message
                .contains("`maxResult` is not a parameter of `searchForIssuesUsingJql`"),
            "{}",
            p[0].message
        );
        assert!(
            p[0].message.contains("`startAt`"),
            "lists what it has: {}",
            p[0].message
        );
        assert_eq!(p[1].key, "offset");
        assert_eq!(problems("{offset: startAt}")[0].key, "size");
        assert_eq!(
            problems("{size: maxResults, page: startAt, offset: startAt}")[0].key,
            "offset"
        );
        assert_eq!(
            problems("{size: maxResults, offset: startAt, cursor: jql}")[0].key,
            ""
        );
        assert_eq!(problems("{cursor: jql}")[0].key, "next");
        assert_eq!(problems("{next: 'body:token'}")[0].key, "cursor");
        assert!(problems("{cursor: jql, next: 'query:x'}")[0]
            .message
            .contains("not a next source"));
        assert_eq!(problems("{}")[0].key, "");
        assert!(serde_yaml_ng::from_str::<PagingRoles>("{sise: maxResults}").is_err());
    }

    #[test]
    fn a_spec_names_the_roles_the_file_form_does() {
        let spec = |text: &str| PagingRoles::from_spec(text);
        assert_eq!(
            spec(" size=maxResults, offset=startAt "),
            Ok(roles("{size: maxResults, offset: startAt}"))
        );
        assert_eq!(
            spec("cursor=page_token,next=body:meta.next,size=limit"),
            Ok(roles(
                "{cursor: page_token, next: 'body:meta.next', size: limit}"
            ))
        );
        assert_eq!(spec("next=header:link"), Ok(roles("{next: 'header:link'}")));
        assert_eq!(spec(" , "), Err(RolesSpecError::Nothing));
        assert_eq!(
            spec("size=maxResults,startAt"),
            Err(RolesSpecError::NotAPair {
                part: "startAt".into()
            })
        );
        assert_eq!(
            spec("sise=maxResults"),
            Err(RolesSpecError::UnknownRole {
                role: "sise".into()
            })
        );
        assert_eq!(
            spec("size=a,size=b"),
            Err(RolesSpecError::Repeated {
                role: "size".into()
            })
        );
        assert_eq!(
            spec("size=,page=p"),
            Err(RolesSpecError::Empty {
                role: "size".into()
            })
        );
        // Read, then checked against the tool as the file form is.
        let p = apply_roles(&jira(), &spec("size=maxResult,offset=startAt").unwrap()).unwrap_err();
        assert!(p[0].message.contains("`maxResults`"), "{}", p[0].message);
    }
}
