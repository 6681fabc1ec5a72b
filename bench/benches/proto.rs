//! Scratch (deleted after use): a fused, allocation-light item pass.
#![forbid(unsafe_code)]
use std::fmt;
use std::time::Instant;

use dragnet_bench::orders::order_page;
use dragnet_steps::json::{Key, RawItem};
use dragnet_steps::looping::fields::Projection;
use dragnet_steps::looping::filter::Filter;
use dragnet_steps::looping::shape::shape;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::json;
use serde_json::value::RawValue;

/// Picks up to 4 wanted top-level keys of an object, no allocation.
struct Pick<'k>(&'k [&'k str]);
impl<'de> DeserializeSeed<'de> for Pick<'_> {
    type Value = [Option<&'de RawValue>; 4];
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}
impl<'de> Visitor<'de> for Pick<'_> {
    type Value = [Option<&'de RawValue>; 4];
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = [None; 4];
        while let Some(key) = map.next_key::<Key<'de>>()? {
            match self.0.iter().position(|k| *k == key.0) {
                Some(i) => out[i] = Some(map.next_value::<&'de RawValue>()?),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(out)
    }
}
fn pick<'a>(raw: &'a RawValue, keys: &[&str]) -> [Option<&'a RawValue>; 4] {
    let mut de = serde_json::Deserializer::from_str(raw.get());
    Pick(keys).deserialize(&mut de).unwrap_or([None; 4])
}
struct Elems<F>(F);
impl<'de, F: FnMut(&'de RawValue)> Visitor<'de> for Elems<F> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("array")
    }
    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        while let Some(v) = seq.next_element::<&'de RawValue>()? {
            (self.0)(v);
        }
        Ok(())
    }
}
fn each<'a>(raw: &'a RawValue, f: impl FnMut(&'a RawValue)) {
    let mut de = serde_json::Deserializer::from_str(raw.get());
    let _ = (&mut de).deserialize_seq(Elems(f));
}

const TOP: [&str; 4] = ["status", "total", "id", "customer"];

fn fused(items: &[RawItem]) -> Vec<RawItem> {
    let mut out = Vec::new();
    for item in items {
        let [status, total, id, customer] = pick(item, &TOP_WITH_LINES[..4]);
        let _ = (status, total, id, customer);
        // status eq "open" (raw compare of a plain string), total gt 100
        let ok = status.is_some_and(|s| s.get() == "\"open\"")
            && total
                .and_then(|t| t.get().parse::<f64>().ok())
                .is_some_and(|t| t > 100.0);
        if !ok {
            continue;
        }
        // second pick for lines (4-slot limit in this scratch)
        let [lines, ..] = pick(item, &["lines"]);
        let mut text = String::with_capacity(96);
        text.push_str("{\"id\":");
        text.push_str(id.map_or("null", |v| v.get()));
        text.push_str(",\"total\":");
        text.push_str(total.map_or("null", |v| v.get()));
        text.push_str(",\"customer\":");
        match customer {
            Some(c) => {
                let [name, ..] = pick(c, &["name"]);
                text.push_str("{\"name\":");
                text.push_str(name.map_or("null", |v| v.get()));
                text.push('}');
            }
            None => text.push_str("null"),
        }
        text.push_str(",\"lines\":");
        match lines {
            Some(l) => {
                text.push('[');
                let mut first = true;
                each(l, |line| {
                    if !first {
                        text.push(',');
                    }
                    first = false;
                    let [sku, ..] = pick(line, &["sku"]);
                    text.push_str("{\"sku\":");
                    text.push_str(sku.map_or("null", |v| v.get()));
                    text.push('}');
                });
                text.push(']');
            }
            None => text.push_str("null"),
        }
        text.push('}');
        out.push(RawValue::from_string(text).unwrap());
    }
    out
}
const TOP_WITH_LINES: [&str; 4] = TOP;

fn med(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let page = order_page(24_000_000).unwrap();
    let items: Vec<RawItem> =
        serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(&[])
            .map(|_| Vec::new())
            .unwrap_or_else(|_| {
                #[derive(serde::Deserialize)]
                struct P {
                    data: Vec<RawItem>,
                }
                serde_json::from_slice::<P>(&page.bytes).unwrap().data
            });
    let filter = Filter::from_json(&json!([
        {"field": "status", "op": "eq", "value": "open"},
        {"field": "total", "op": "gt", "value": 100}
    ]))
    .unwrap();
    let proj = Projection::new(&[
        "id".into(),
        "total".into(),
        "customer.name".into(),
        "lines.sku".into(),
    ])
    .unwrap();
    let mut a = Vec::new();
    let mut b = Vec::new();
    let mut c = Vec::new();
    for _ in 0..9 {
        let s = Instant::now();
        let (cur, _) = shape(&items, &filter, Some(&proj));
        a.push(s.elapsed().as_secs_f64() * 1e3);
        let s = Instant::now();
        let new = fused(&items);
        b.push(s.elapsed().as_secs_f64() * 1e3);
        let cur = cur.unwrap();
        assert_eq!(cur.len(), new.len());
        assert!(cur.iter().zip(&new).all(|(x, y)| x.get() == y.get()));
        let s = Instant::now();
        let matching: Vec<&RawValue> = items
            .iter()
            .map(|i| i.as_ref())
            .filter(|i| filter.matches(i))
            .collect();
        let f = s.elapsed().as_secs_f64() * 1e3;
        let s = Instant::now();
        let (out, _) = proj.apply(matching.iter().copied());
        let p = s.elapsed().as_secs_f64() * 1e3;
        println!(
            "filter alone {f:.2} ms, projection alone {p:.2} ms ({} rows)",
            out.len()
        );
        let s = Instant::now();
        let v: serde_json::Value = serde_json::from_slice(&page.bytes).unwrap();
        c.push(s.elapsed().as_secs_f64() * 1e3);
        drop(v);
    }
    println!(
        "current shape() {:.2} ms, fused pick pass {:.2} ms, Value parse {:.2} ms",
        med(a),
        med(b),
        med(c)
    );
}
