//! Serving one page of a list: the window asked for, the faults that bend it, the JSON body.

use std::time::{Duration, SystemTime};

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use serde_json::{json, Value};

use crate::faults::{Faults, OnceSet, RetryAfter, StatusFault};

/// How the client addressed its page.
#[derive(Debug, Clone, Copy)]
pub(crate) enum PageRequest {
    /// `page` (1-based) of `size` rows.
    Numbered { page: u64, size: u64 },
    /// `size` rows from `offset`.
    Offset { offset: u64, size: u64 },
    /// `size` rows from `offset`, the `chain`-th request of a cursor chain (first = 1).
    Chain { offset: u64, chain: u64, size: u64 },
}

/// What was actually served, for the envelope.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Served {
    /// The page number served (1 when the page input was ignored).
    pub page: u64,
    /// One past the last row of the window, before `short-page` dropped any.
    pub end: usize,
    /// The total to declare, if any.
    pub total: Option<u64>,
}

/// Builds an endpoint's body from its items (`None`: leave the collection out) and what was
/// served.
pub(crate) type Shape<'a> = &'a (dyn Fn(Option<Vec<Value>>, &Served) -> Value + Sync);

/// Answers one page of `rows` as asked by `request`, with `faults` applied.
pub(crate) async fn serve_page<T: Serialize + Sync>(
    once: &OnceSet,
    faults: &Faults,
    rows: &[&T],
    request: PageRequest,
    shape: Shape<'_>,
) -> Response {
    let (asked_offset, asked_size) = match request {
        PageRequest::Numbered { page, size } => (page.saturating_sub(1), size),
        PageRequest::Offset { offset, size } | PageRequest::Chain { offset, size, .. } => {
            (offset, size)
        }
    };
    let size = faults
        .cap()
        .map_or(asked_size, |cap| asked_size.min(cap as u64));
    let size = size.max(1);
    let (page_no, offset) = match request {
        PageRequest::Numbered { page, .. } => (page, asked_offset.saturating_mul(size)),
        PageRequest::Offset { offset, .. } => ((offset / size).saturating_add(1), offset),
        PageRequest::Chain { offset, chain, .. } => (chain, offset),
    };
    if let Some(delay) = faults.delay(page_no) {
        tokio::time::sleep(delay).await;
    }
    let rate = faults.rate(once);
    if let Some(limited) = rate.filter(|r| r.limited) {
        return limited.response();
    }
    if let Some(status) = faults.status_hit(page_no, once) {
        return status_response(status);
    }
    let ignored = faults.ignore_page();
    let offset = if ignored { 0 } else { to_index(offset) };
    let start = offset.min(rows.len());
    let end = offset.saturating_add(to_index(size)).min(rows.len());
    let mut items: Vec<Value> = rows[start..end]
        .iter()
        .filter_map(|row| serde_json::to_value(row).ok())
        .collect();
    if faults.short_page(page_no) {
        items.truncate(items.len() / 2);
    }
    let served = Served {
        page: match request {
            PageRequest::Numbered { page, .. } if !ignored => page,
            _ => 1,
        },
        end,
        total: faults.total(rows.len() as u64, page_no),
    };
    let body = if faults.missing_collection(page_no) {
        shape(None, &served)
    } else {
        let body = shape(Some(items.clone()), &served);
        match faults.huge(page_no) {
            Some(target) => pad(items, target, body, &served, shape),
            None => body,
        }
    };
    let mut response = json_response(&body, faults.malformed(page_no));
    if let Some(rate) = rate {
        rate.apply(response.headers_mut());
    }
    response
}

/// The error response of a `status` fault, with its `Retry-After` if any.
fn status_response(fault: &StatusFault) -> Response {
    let message = format!(
        "injected fault: HTTP {} on page {}",
        fault.code.as_u16(),
        fault.page
    );
    let mut response = (fault.code, Json(json!({ "error": message }))).into_response();
    let value = match fault.retry_after {
        None => None,
        Some(RetryAfter::Seconds(s)) => HeaderValue::from_str(&s.to_string()).ok(),
        Some(RetryAfter::DateIn(s)) => {
            let when = SystemTime::now() + Duration::from_secs(s);
            HeaderValue::from_str(&httpdate::fmt_http_date(when)).ok()
        }
    };
    if let Some(value) = value {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

/// Adds a `notes` string to every item so the body reaches at least `target` bytes.
fn pad(mut items: Vec<Value>, target: usize, body: Value, served: &Served, shape: Shape) -> Value {
    let current = serde_json::to_vec(&body).map_or(0, |b| b.len());
    if current >= target || items.is_empty() {
        return body;
    }
    let each = (target - current).div_ceil(items.len());
    let notes = "n".repeat(each);
    for item in &mut items {
        if let Value::Object(map) = item {
            map.insert("notes".into(), Value::String(notes.clone()));
        }
    }
    shape(Some(items), served)
}

/// A 200 JSON response; `malformed` cuts the body in half so it no longer parses.
pub(crate) fn json_response(body: &Value, malformed: bool) -> Response {
    let mut bytes = serde_json::to_vec(body).unwrap_or_default();
    if malformed {
        bytes.truncate(bytes.len() / 2);
    }
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        bytes,
    )
        .into_response()
}

/// A `u64` position as a slice index, saturating.
fn to_index(value: u64) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderMap;

    fn faults(text: &str) -> Faults {
        let mut headers = HeaderMap::new();
        headers.insert("x-shop-fault", HeaderValue::from_str(text).unwrap());
        Faults::from_headers(&headers).unwrap()
    }

    async fn page(fault: &str, request: PageRequest) -> Value {
        let numbers: Vec<u64> = (1..=10).collect();
        let rows: Vec<&u64> = numbers.iter().collect();
        let shape = |items: Option<Vec<Value>>, served: &Served| json!({"items": items, "total": served.total, "page": served.page, "end": served.end});
        let response =
            serve_page(&OnceSet::default(), &faults(fault), &rows, request, &shape).await;
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[tokio::test]
    async fn windows_and_faults() {
        let numbered = |page| PageRequest::Numbered { page, size: 4 };
        let body = page("", numbered(3)).await;
        assert_eq!(body["items"], json!([9, 10]));
        assert_eq!(body["total"], json!(10));
        assert_eq!(page("cap=3", numbered(2)).await["items"], json!([4, 5, 6]));
        assert_eq!(
            page("ignore-page", numbered(2)).await["items"],
            json!([1, 2, 3, 4])
        );
        let short = page("short-page=2", numbered(2)).await;
        assert_eq!(short["items"], json!([5, 6]));
        assert_eq!(short["end"], json!(8));
        let offset = PageRequest::Offset { offset: 6, size: 3 };
        assert_eq!(page("short-page=3", offset).await["items"], json!([7]));
        assert_eq!(
            page("missing-collection=1", numbered(1)).await["items"],
            Value::Null
        );
        assert_eq!(page("total=3", numbered(1)).await["total"], json!(3));
        let beyond = page("", numbered(9)).await;
        assert_eq!(beyond["items"], json!([]));
    }
}
