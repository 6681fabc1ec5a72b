//! A node's YAML path (`steps[2].loop.for_each.key`), kept as the steps
//! that lead to it and written out only when something asks: a message, a
//! location. Validating a workflow takes a cursor to every node it reads,
//! and almost none of those paths is ever shown, so writing each one out
//! as it was taken cost more than reading the node (about 7k instructions
//! of a branch step's 150k, `docs/PERFORMANCE.md`, P4).

use std::fmt;
use std::rc::Rc;

use serde_json::Value;

/// The path of a node: the root's is empty.
#[derive(Clone, Default)]
pub struct YamlPath<'a>(Option<Rc<Link<'a>>>);

struct Link<'a> {
    parent: YamlPath<'a>,
    step: Step<'a>,
}

#[derive(Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

impl<'a> YamlPath<'a> {
    /// The root's path.
    pub fn root() -> YamlPath<'a> {
        YamlPath(None)
    }

    /// The path of the value under `key`.
    pub fn key(&self, key: &'a str) -> YamlPath<'a> {
        self.then(Step::Key(key))
    }

    /// The path of item `i`.
    pub fn index(&self, i: usize) -> YamlPath<'a> {
        self.then(Step::Index(i))
    }

    fn then(&self, step: Step<'a>) -> YamlPath<'a> {
        YamlPath(Some(Rc::new(Link {
            parent: self.clone(),
            step,
        })))
    }

    /// The steps from the root, in order.
    fn steps(&self) -> Vec<Step<'a>> {
        let mut steps = Vec::new();
        let mut at = &self.0;
        while let Some(link) = at {
            steps.push(link.step);
            at = &link.parent.0;
        }
        steps.reverse();
        steps
    }
}

impl fmt::Display for YamlPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for step in self.steps() {
            match step {
                Step::Key(key) if is_plain(key) => match first {
                    true => f.write_str(key)?,
                    false => write!(f, ".{key}")?,
                },
                Step::Key(key) => write!(f, "[{}]", Value::String(key.to_string()))?,
                Step::Index(i) => write!(f, "[{i}]")?,
            }
            first = false;
        }
        Ok(())
    }
}

impl fmt::Debug for YamlPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.to_string())
    }
}

/// A key written as `.key` (letters, digits, `_`, `-`, `$`); any other is
/// written as `["odd key"]`.
pub(crate) fn is_plain(key: &str) -> bool {
    !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'$'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_written_out_as_yaml_paths() {
        let root = YamlPath::root();
        assert_eq!(root.to_string(), "");
        let step = root.key("steps").index(2);
        assert_eq!(step.to_string(), "steps[2]");
        assert_eq!(
            step.key("loop").key("for_each").to_string(),
            "steps[2].loop.for_each"
        );
        assert_eq!(root.index(0).key("a").to_string(), "[0].a");
        assert_eq!(step.key("x-$_1").to_string(), "steps[2].x-$_1");
        for (odd, quoted) in [
            ("odd key", r#"["odd key"]"#),
            ("", r#"[""]"#),
            ("a.b", r#"["a.b"]"#),
            ("x\"y", r#"["x\"y"]"#),
        ] {
            assert_eq!(
                step.key(odd).to_string(),
                format!("steps[2]{quoted}"),
                "{odd:?}"
            );
            assert_eq!(root.key(odd).to_string(), quoted, "{odd:?}");
        }
        assert_eq!(format!("{:?}", step.key("id")), "\"steps[2].id\"");
    }
}
