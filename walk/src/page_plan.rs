//! Where a walk starts and how it moves: the page size (caller's value, else
//! the schema maximum, else its default, else 100, never above a declared
//! maximum) and the first page number or offset.

use serde_json::{Map, Value};

use dragnet_core::args::{get_path, set_path};
use dragnet_core::paging::detect::{Paging, Position};

/// The paging arguments of a walk in progress.
#[derive(Debug, Clone)]
pub struct PagePlan<'a> {
    paging: &'a Paging,
    /// The page size asked for.
    pub size: u64,
    /// The current page number or offset.
    pub position: u64,
}

impl<'a> PagePlan<'a> {
    /// Starts a walk from the caller's arguments and the schema.
    pub fn new(paging: &'a Paging, args: &Map<String, Value>) -> Self {
        let p = &paging.size;
        let asked = get_path(args, &p.arg_path).and_then(as_u64);
        let mut size = asked
            .or(p.maximum.and_then(positive))
            .or(p.default.and_then(positive))
            .unwrap_or(100);
        if let Some(max) = p.maximum.and_then(positive) {
            size = size.min(max);
        }
        let size = size.max(1);
        let position = match &paging.position {
            Position::Page(q) => get_path(args, &q.arg_path)
                .and_then(as_u64)
                .or(q.default.and_then(non_negative))
                .or(q.minimum.and_then(non_negative))
                .unwrap_or(1),
            Position::Offset(q) => get_path(args, &q.arg_path).and_then(as_u64).unwrap_or(0),
        };
        PagePlan {
            paging,
            size,
            position,
        }
    }

    /// Writes the page size and position into the arguments.
    pub fn apply(&self, args: &mut Map<String, Value>) {
        set_path(args, &self.paging.size.arg_path, Value::from(self.size));
        set_path(
            args,
            &self.paging.position.param().arg_path,
            Value::from(self.position),
        );
    }

    /// Moves to the next page after one of `received` items.
    pub fn advance(&mut self, received: usize) {
        match self.paging.position {
            Position::Page(_) => self.position += 1,
            Position::Offset(_) => self.position += received as u64,
        }
    }
}

fn positive(v: i64) -> Option<u64> {
    u64::try_from(v).ok().filter(|v| *v > 0)
}

fn non_negative(v: i64) -> Option<u64> {
    u64::try_from(v).ok()
}

fn as_u64(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                .map(|f| f as u64)
        }),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dragnet_core::paging::detect::PagingParam;
    use serde_json::json;

    fn param(
        name: &str,
        path: &[&str],
        min: Option<i64>,
        max: Option<i64>,
        default: Option<i64>,
    ) -> PagingParam {
        PagingParam {
            name: name.into(),
            arg_path: path.iter().map(|s| s.to_string()).collect(),
            location: "query".into(),
            minimum: min,
            maximum: max,
            default,
        }
    }

    #[test]
    fn size_rules() {
        let paging = Paging {
            size: param("per_page", &["per_page"], Some(1), Some(100), Some(25)),
            position: Position::Page(param("page", &["page"], Some(1), None, None)),
        };
        let args = Map::new();
        assert_eq!(PagePlan::new(&paging, &args).size, 100);
        let args = json!({"per_page": 40}).as_object().unwrap().clone();
        assert_eq!(PagePlan::new(&paging, &args).size, 40);
        let args = json!({"per_page": 400}).as_object().unwrap().clone();
        assert_eq!(PagePlan::new(&paging, &args).size, 100);
        let no_max = Paging {
            size: param("limit", &["limit"], None, None, Some(30)),
            position: Position::Offset(param("offset", &["offset"], None, None, None)),
        };
        assert_eq!(PagePlan::new(&no_max, &Map::new()).size, 30);
        let bare = Paging {
            size: param("limit", &["limit"], None, None, None),
            position: Position::Offset(param("offset", &["offset"], None, None, None)),
        };
        let mut plan = PagePlan::new(&bare, &Map::new());
        assert_eq!((plan.size, plan.position), (100, 0));
        plan.advance(37);
        assert_eq!(plan.position, 37);
    }

    #[test]
    fn page_start_and_nested_apply() {
        let paging = Paging {
            size: param("pageSize", &["paging", "pageSize"], None, Some(50), None),
            position: Position::Page(param("page", &["paging", "page"], Some(0), None, None)),
        };
        let mut args = json!({"filter": {"status": "open"}})
            .as_object()
            .unwrap()
            .clone();
        let mut plan = PagePlan::new(&paging, &args);
        assert_eq!(plan.position, 0);
        plan.advance(50);
        plan.apply(&mut args);
        assert_eq!(
            args,
            *json!({"filter":{"status":"open"},"paging":{"pageSize":50,"page":1}})
                .as_object()
                .unwrap()
        );
    }
}
