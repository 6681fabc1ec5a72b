//! Values that may hold `{ref: "<JSONPath>"}` anywhere (step input, loop
//! values, filter and condition operands) compiled into `Template`s. Every
//! ref is parsed with `RefExpr::parse`, `$.inputs.<name>` is checked
//! against the declared inputs, and `$.steps.<id>` refs are collected with
//! their position so the graph pass can check and order them.

use crate::refs::RefExpr;

use super::context::Ctx;
use super::cursor::Cursor;
use super::diagnostic::{list, suggest};
use super::model::Template;
use super::path::YamlPath;
use super::yaml::{NodeValue, Pos};

/// A `$.steps.<id>` ref and where it was written.
#[derive(Debug, Clone)]
pub struct RefSite<'a> {
    pub step: String,
    pub text: String,
    pub pos: Pos,
    pub path: YamlPath<'a>,
}

/// What refs are checked against while compiling one step.
pub struct RefCheck<'a> {
    /// Declared input names, in file order.
    pub inputs: &'a [String],
    /// Step refs found so far.
    pub sites: Vec<RefSite<'a>>,
}

impl<'a> RefCheck<'a> {
    pub fn new(inputs: &'a [String]) -> RefCheck<'a> {
        RefCheck {
            inputs,
            sites: Vec::new(),
        }
    }

    /// Parses and checks the ref text under `c` (a string node).
    pub fn reference(&mut self, cx: &mut Ctx, c: &Cursor<'a>, text: &str) -> Option<RefExpr> {
        let r = match RefExpr::parse(text) {
            Ok(r) => r,
            Err(e) => {
                cx.error(c, format!("bad ref: {}", tidy(text.trim(), &e.0)));
                return None;
            }
        };
        if let Some(step) = r.step() {
            self.sites.push(RefSite {
                step: step.as_str().to_string(),
                text: r.text.clone(),
                pos: c.pos(),
                path: c.path.clone(),
            });
        }
        if let Some(name) = r.input_name() {
            if !self.inputs.iter().any(|i| i == name) {
                let hint = suggest(name, self.inputs.iter().map(String::as_str), || {
                    format!("; declared inputs: {}", list(self.inputs))
                });
                cx.error(
                    c,
                    format!(
                        "`{}` reads undeclared input `{name}`; declare it under `inputs:`{hint}",
                        r.text
                    ),
                );
                return None;
            }
        }
        Some(r)
    }

    /// Compiles any value; `None` when something inside was reported.
    pub fn template(&mut self, cx: &mut Ctx, c: &Cursor<'a>) -> Option<Template> {
        let before = cx.count();
        let t = self.build(cx, c);
        (cx.count() == before).then_some(t)
    }

    fn build(&mut self, cx: &mut Ctx, c: &Cursor<'a>) -> Template {
        match &c.node.value {
            NodeValue::Map(entries) if entries.len() == 1 && entries[0].key == "ref" => {
                let Some(value) = c.key("ref") else {
                    return Template::Literal(c.to_json());
                };
                match value.as_str() {
                    Some(text) => match self.reference(cx, &value, text) {
                        Some(r) => Template::Ref(r),
                        None => Template::Literal(serde_json::Value::Null),
                    },
                    None => {
                        cx.error(
                            &value,
                            "a ref is a JSONPath string, e.g. {ref: \"$.steps.fetch.data\"}",
                        );
                        Template::Literal(serde_json::Value::Null)
                    }
                }
            }
            NodeValue::Map(_) => {
                let fields: Vec<(String, Template)> = c
                    .entries()
                    .map(|(k, _, v)| (k.to_string(), self.build(cx, &v)))
                    .collect();
                if fields
                    .iter()
                    .all(|(_, t)| matches!(t, Template::Literal(_)))
                {
                    Template::Literal(c.to_json())
                } else {
                    Template::Object(fields)
                }
            }
            NodeValue::Seq(_) => {
                let items: Vec<Template> = c.items().map(|v| self.build(cx, &v)).collect();
                if items.iter().all(|t| matches!(t, Template::Literal(_))) {
                    Template::Literal(c.to_json())
                } else {
                    Template::Array(items)
                }
            }
            _ => Template::Literal(c.to_json()),
        }
    }
}

/// A JSONPath parser error drawn over several lines becomes one clause:
/// `… is not a valid JSONPath: expected X at character N`.
fn tidy(text: &str, message: &str) -> String {
    if !message.contains("Failed to parse") {
        return message.to_string();
    }
    let column = message
        .split("-->")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|line_col| line_col.split(':').nth(1));
    let note = message.lines().find_map(|l| l.trim().strip_prefix("= "));
    match (note, column) {
        (Some(note), Some(column)) => {
            format!("`{text}` is not a valid JSONPath: {note} at character {column}")
        }
        _ => message.to_string(),
    }
}

/// The literal value of a template, if it holds no ref.
pub fn literal(t: &Template) -> Option<&serde_json::Value> {
    match t {
        Template::Literal(v) => Some(v),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::yaml::parse;
    use serde_json::json;
    use std::path::Path;

    /// The template, each step ref's step and path, and the problems.
    fn compile(text: &str) -> (Option<Template>, Vec<(String, String)>, usize) {
        let node = parse(text).unwrap().root.unwrap();
        let inputs = vec!["size".to_string()];
        let mut check = RefCheck::new(&inputs);
        let mut cx = Ctx::new(Path::new("w.yaml"));
        let t = check.template(&mut cx, &Cursor::root(&node));
        let sites = check
            .sites
            .iter()
            .map(|s| (s.step.clone(), s.path.to_string()))
            .collect();
        (t, sites, cx.count())
    }

    #[test]
    fn literal_values_stay_literal() {
        let (t, _, _) = compile("{status: open, n: [1, 2]}");
        assert_eq!(
            literal(&t.unwrap()),
            Some(&json!({"status": "open", "n": [1, 2]}))
        );
    }

    #[test]
    fn refs_anywhere() {
        let (t, sites, errors) =
            compile("{a: {ref: \"$.inputs.size\"}, b: [{ref: \"$.steps.fetch.data[*].id\"}]}");
        assert_eq!(errors, 0);
        assert_eq!(t.unwrap().refs().len(), 2);
        assert_eq!(sites.len(), 1);
        assert_eq!(sites[0], ("fetch".into(), "b[0].ref".into()));
    }

    #[test]
    fn bad_refs_are_reported() {
        let (t, _, errors) =
            compile("{a: {ref: \"$.inputs.sise\"}, b: {ref: \"$.nope\"}, c: {ref: 3}}");
        assert!(t.is_none());
        assert_eq!(errors, 3);
    }
}
