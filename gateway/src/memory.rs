//! A `ResultStore` held in memory, for this crate's tests: it keeps scope
//! and expiry as a store does.
#![cfg(test)]

use std::collections::HashMap;
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use dragnet_core::items::Items;
use dragnet_core::{json, Payload};
use dragnet_core::{Form, ResultId, ResultScope, ResultStore, StoreFuture};
use serde_json::json;

use crate::results::{Lookup, StoredResult};

/// One kept result, as a store keeps it.
#[derive(Clone)]
pub struct Row {
    scope: ResultScope,
    text: String,
    form: Form,
    items: Vec<String>,
    single: bool,
    expires_at: DateTime<Utc>,
}

/// The port held in memory.
#[derive(Default)]
pub struct Memory(Mutex<HashMap<String, Row>>);

impl Memory {
    /// How many results are kept.
    pub fn kept(&self) -> usize {
        self.0.lock().unwrap().len()
    }
}

impl ResultStore<Payload> for Memory {
    fn put<'a>(
        &'a self,
        id: &'a ResultId,
        scope: &'a ResultScope,
        result: &'a StoredResult,
        _now: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> StoreFuture<'a, ()> {
        let items: Vec<String> = result.payload.items().iter().map(str::to_string).collect();
        let single = matches!(result.payload, Payload::Single(_));
        let row = Row {
            scope: scope.clone(),
            text: result.text.clone(),
            form: result.form.clone(),
            items,
            single,
            expires_at,
        };
        self.0.lock().unwrap().insert(id.to_string(), row);
        Box::pin(async { Ok(()) })
    }

    fn get<'a>(
        &'a self,
        id: &'a ResultId,
        scope: &'a ResultScope,
        now: DateTime<Utc>,
    ) -> StoreFuture<'a, Lookup> {
        let found = self.0.lock().unwrap().get(id.as_str()).cloned();
        Box::pin(async move {
            Ok(match found {
                Some(row) if &row.scope != scope => Lookup::Unknown,
                Some(row) if row.expires_at <= now => Lookup::Expired {
                    expired_at: row.expires_at,
                },
                Some(row) => Lookup::Found(StoredResult {
                    payload: payload(&row.items, row.single),
                    text: row.text,
                    form: row.form,
                }),
                None => Lookup::Unknown,
            })
        })
    }
}

pub fn payload(items: &[String], single: bool) -> Payload {
    if single {
        return Payload::Single(json::to_raw(json!({"ok": true}).to_string()));
    }
    let mut out = Items::new();
    for i in items {
        out.push_text(i);
    }
    Payload::Items(out)
}
