//! The shop's customers in three more cursor styles, as real APIs spell
//! them (issue 14):
//! - `GET /stripe/customers?limit=&starting_after=`: Stripe's list object,
//!   `{"object": "list", "data", "has_more", "url"}`, the next page asked
//!   for by the last item's `id`;
//! - `GET /github/customers?limit=&after=`: a bare array with a `Link`
//!   header (`<…>; rel="next"`, absolute), as GitHub sends it;
//! - `GET /twilio/customers?PageSize=&PageToken=`: Twilio's body with a
//!   relative `next_page_uri` (null on the last page);
//! - `GET /jira/customers?startAt=&maxResults=`: Jira's page bean,
//!   `{"startAt", "maxResults", "total", "isLast", "values"}`, with
//!   `maxResults` capped at 50 silently. Its names are unknown to the
//!   detection: it walks only with its paging roles named by hand.
//!
//! "Page N" is the position in the chain (first page = 1; for Stripe,
//! `offset / limit + 1`). Besides the common faults, `repeat-cursor=N`
//! makes page N point onward with the cursor (or URL) that reached it, and
//! `foreign-next=N` makes page N's next URL name the other loopback host
//! (`localhost` for `127.0.0.1` and back): the same server under another
//! origin, so a client that follows it shows up in the request log.

use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, Uri};
use axum::response::Response;
use serde_json::{json, Map, Value};

use crate::data::{dataset, Customer};
use crate::error::ShopError;
use crate::faults::Faults;
use crate::pages::{serve_page, PageRequest, Served};
use crate::params::{Bounds, QueryParams};
use crate::routes::{decode_cursor, encode_cursor};
use crate::state::Shared;

const LIMIT: Bounds = Bounds::new(10, 1, Some(100));

fn customers() -> Vec<&'static Customer> {
    dataset().customers().iter().collect()
}

/// `GET /stripe/customers`: the page after `starting_after` (an id).
pub(crate) async fn stripe(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    uri: Uri,
) -> Result<Response, ShopError> {
    let faults = Faults::from_headers(&headers)?;
    let query = QueryParams::from_uri(&uri)?;
    let size = query.int("limit", LIMIT)?;
    let rows = customers();
    let offset = match query.get("starting_after") {
        None => 0,
        Some(id) => {
            let at = rows
                .iter()
                .position(|c| c.id.to_string() == id)
                .ok_or_else(|| ShopError::bad(format!("No such customer: '{id}'")))?;
            at as u64 + 1
        }
    };
    let page = offset / size.max(1) + 1;
    let repeat = faults.repeat_cursor(page);
    let after = query.get("starting_after").map(str::to_string);
    let len = rows.len();
    let shape = move |items: Option<Vec<Value>>, served: &Served| {
        let mut body = Map::new();
        body.insert("object".into(), json!("list"));
        if let Some(mut items) = items {
            // The last item is the one the request started after: its id,
            // the next cursor, is one already followed.
            let more = served.end < len;
            if let (true, true, Some(after), Some(last)) = (repeat, more, &after, items.last_mut())
            {
                if let Some(id) = last.get_mut("id") {
                    *id = after.parse::<u64>().map_or(json!(after), |n| json!(n));
                }
            }
            body.insert("data".into(), Value::Array(items));
        }
        body.insert("has_more".into(), json!(served.end < len));
        body.insert("url".into(), json!("/v1/customers"));
        Value::Object(body)
    };
    let request = PageRequest::Offset { offset, size };
    Ok(serve_page(&shared.once, &faults, &rows, request, &shape).await)
}

/// `GET /github/customers`: a bare array; the next page in `Link`.
pub(crate) async fn github(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    uri: Uri,
) -> Result<Response, ShopError> {
    let faults = Faults::from_headers(&headers)?;
    let query = QueryParams::from_uri(&uri)?;
    let rows = customers();
    let len = rows.len();
    let at = ChainAt::read(&query, "limit", LIMIT, "after", len)?;
    let size = at.size;
    let next = Mutex::new(None);
    let shape = |items: Option<Vec<Value>>, served: &Served| {
        let link = at.next(&faults, served.end, len).map(|cursor| {
            let base = here(&headers, &uri, faults.foreign_next(at.chain));
            format!("{base}?limit={size}&after={cursor}")
        });
        *next.lock().unwrap_or_else(|e| e.into_inner()) = link;
        match items {
            Some(items) => Value::Array(items),
            None => json!({ "message": "gone" }),
        }
    };
    let request = at.request();
    let mut response = serve_page(&shared.once, &faults, &rows, request, &shape).await;
    let next = next.into_inner().unwrap_or_else(|e| e.into_inner());
    if let (true, Some(next)) = (response.status().is_success(), next) {
        let first = format!("{}?limit={size}", here(&headers, &uri, false));
        let value = format!("<{next}>; rel=\"next\", <{first}>; rel=\"first\"");
        if let Ok(value) = HeaderValue::from_str(&value) {
            response.headers_mut().insert(header::LINK, value);
        }
    }
    Ok(response)
}

/// `GET /twilio/customers`: Twilio's body with a relative `next_page_uri`.
pub(crate) async fn twilio(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    uri: Uri,
) -> Result<Response, ShopError> {
    let faults = Faults::from_headers(&headers)?;
    let query = QueryParams::from_uri(&uri)?;
    let rows = customers();
    let len = rows.len();
    let at = ChainAt::read(&query, "PageSize", LIMIT, "PageToken", len)?;
    let (size, chain) = (at.size, at.chain);
    let shape = |items: Option<Vec<Value>>, served: &Served| {
        // The next page's index; a repeated link repeats this page's.
        let index = match at.current.is_some() && faults.repeat_cursor(chain) {
            true => chain - 1,
            false => chain,
        };
        // Twilio's links are relative to the host; a foreign one is absolute.
        let next = at.next(&faults, served.end, len).map(|cursor| {
            let base = match faults.foreign_next(chain) {
                true => here(&headers, &uri, true),
                false => uri.path().to_string(),
            };
            format!("{base}?PageSize={size}&Page={index}&PageToken={cursor}")
        });
        let mut body = Map::new();
        if let Some(items) = items {
            body.insert("customers".into(), Value::Array(items));
        }
        body.insert("page".into(), json!(chain - 1));
        body.insert("page_size".into(), json!(size));
        body.insert("next_page_uri".into(), json!(next));
        Value::Object(body)
    };
    Ok(serve_page(&shared.once, &faults, &rows, at.request(), &shape).await)
}

/// Jira's silent cap on `maxResults`.
const JIRA_MAX: u64 = 50;

/// `GET /jira/customers`: Jira's page bean, by `startAt`.
pub(crate) async fn jira(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    uri: Uri,
) -> Result<Response, ShopError> {
    let faults = Faults::from_headers(&headers)?;
    let query = QueryParams::from_uri(&uri)?;
    let start = query.int("startAt", Bounds::new(0, 0, None))?;
    let size = query
        .int("maxResults", Bounds::new(50, 1, None))?
        .min(JIRA_MAX);
    let rows = customers();
    let len = rows.len();
    let shape = move |items: Option<Vec<Value>>, served: &Served| {
        let mut body = Map::new();
        body.insert("startAt".into(), json!(start));
        body.insert("maxResults".into(), json!(size));
        if let Some(total) = served.total {
            body.insert("total".into(), json!(total));
        }
        body.insert("isLast".into(), json!(served.end >= len));
        if let Some(items) = items {
            body.insert("values".into(), Value::Array(items));
        }
        Value::Object(body)
    };
    let request = PageRequest::Offset {
        offset: start,
        size,
    };
    Ok(serve_page(&shared.once, &faults, &rows, request, &shape).await)
}

/// Where a request of a cursor-chain endpoint (`/events`, `/github/…`,
/// `/twilio/…`) is: its page size, the cursor that reached it, and the
/// place in the chain that cursor names.
pub(crate) struct ChainAt<'q> {
    pub size: u64,
    pub current: Option<&'q str>,
    pub offset: u64,
    /// The page's number in the chain (first = 1).
    pub chain: u64,
}

impl<'q> ChainAt<'q> {
    /// The page size from `size_param`, the cursor from `cursor_param`
    /// (a 400 when this API did not issue it).
    pub(crate) fn read(
        query: &'q QueryParams,
        size_param: &str,
        size: Bounds,
        cursor_param: &str,
        count: usize,
    ) -> Result<ChainAt<'q>, ShopError> {
        let current = query.get(cursor_param);
        let (offset, chain) = match current {
            None => (0, 1),
            Some(text) => decode_cursor(text, count as u64)?,
        };
        Ok(ChainAt {
            size: query.int(size_param, size)?,
            current,
            offset,
            chain,
        })
    }

    pub(crate) fn request(&self) -> PageRequest {
        PageRequest::Chain {
            offset: self.offset,
            chain: self.chain,
            size: self.size,
        }
    }

    /// The cursor of the page after this one, which ended at `end`; `None`
    /// after the last row. With `repeat-cursor` on this page, the cursor
    /// that reached it instead.
    pub(crate) fn next(&self, faults: &Faults, end: usize, count: usize) -> Option<String> {
        if end >= count {
            return None;
        }
        match self.current {
            Some(current) if faults.repeat_cursor(self.chain) => Some(current.to_string()),
            _ => Some(encode_cursor(end as u64, self.chain + 1)),
        }
    }
}

/// This endpoint's absolute URL, on the host the request named, or on the
/// other loopback name when `foreign`.
fn here(headers: &HeaderMap, uri: &Uri, foreign: bool) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    let host = match (foreign, host.split_once(':')) {
        (false, _) => host.to_string(),
        (true, Some(("localhost", port))) => format!("127.0.0.1:{port}"),
        (true, Some((_, port))) => format!("localhost:{port}"),
        (true, None) => "localhost".to_string(),
    };
    format!("http://{host}{}", uri.path())
}
