//! Django REST framework's paging, as a real DRF server answers (the shape
//! that exposed false verdicts in dragnet before): `{"count", "next",
//! "previous", "results"}` with absolute `next`/`previous` links (from the
//! real rows, whatever count a `total` fault declares), a page
//! size capped silently below the documented maximum (`max_page_size`), a
//! 404 `{"detail": "Invalid page."}` for a page number past the end, and
//! limit/offset paging that answers an empty page past the end.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use crate::data::dataset;
use crate::error::ShopError;
use crate::faults::Faults;
use crate::pages::{serve_page, PageRequest, Served};
use crate::params::{Bounds, QueryParams};
use crate::routes::orders;
use crate::state::Shared;

/// Documented: `page_size` up to 100. Served: at most `MAX_PAGE_SIZE`.
const PAGE_SIZE: Bounds = Bounds::new(20, 1, Some(100));
const PAGE: Bounds = Bounds::new(1, 1, None);
const LIMIT: Bounds = Bounds::new(20, 1, Some(100));
const OFFSET: Bounds = Bounds::new(0, 0, None);
/// The silent cap (DRF's `max_page_size` / `max_limit`).
pub(crate) const MAX_PAGE_SIZE: u64 = 50;

/// `GET /drf/orders?page=&page_size=&status=`: DRF's PageNumberPagination.
pub(crate) async fn list_orders(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    uri: Uri,
) -> Result<Response, ShopError> {
    let faults = Faults::from_headers(&headers)?;
    let query = QueryParams::from_uri(&uri)?;
    let page = query.int("page", PAGE)?;
    let size = query.int("page_size", PAGE_SIZE)?.min(MAX_PAGE_SIZE);
    let rows = orders(query.status()?, None, None);
    let pages = (rows.len() as u64).div_ceil(size).max(1);
    if page > pages {
        let body = Json(json!({ "detail": "Invalid page." }));
        return Ok((StatusCode::NOT_FOUND, body).into_response());
    }
    let link = |p: u64| format!("{}?page={p}&page_size={size}", here(&headers, &uri));
    let len = rows.len();
    let shape = move |items: Option<Vec<Value>>, served: &Served| {
        envelope(
            items,
            served,
            (served.end < len).then(|| link(page + 1)),
            (page > 1).then(|| link(page - 1)),
        )
    };
    let request = PageRequest::Numbered { page, size };
    Ok(serve_page(&shared.once, &faults, &rows, request, &shape).await)
}

/// `GET /drf/customers?limit=&offset=`: DRF's LimitOffsetPagination.
pub(crate) async fn list_customers(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    uri: Uri,
) -> Result<Response, ShopError> {
    let faults = Faults::from_headers(&headers)?;
    let query = QueryParams::from_uri(&uri)?;
    let offset = query.int("offset", OFFSET)?;
    let limit = query.int("limit", LIMIT)?.min(MAX_PAGE_SIZE);
    let rows: Vec<_> = dataset().customers().iter().collect();
    let link = |o: u64| format!("{}?limit={limit}&offset={o}", here(&headers, &uri));
    let len = rows.len();
    let shape = move |items: Option<Vec<Value>>, served: &Served| {
        envelope(
            items,
            served,
            (served.end < len).then(|| link(offset + limit)),
            (offset > 0).then(|| link(offset.saturating_sub(limit))),
        )
    };
    let request = PageRequest::Offset {
        offset,
        size: limit,
    };
    Ok(serve_page(&shared.once, &faults, &rows, request, &shape).await)
}

fn envelope(
    items: Option<Vec<Value>>,
    served: &Served,
    next: Option<String>,
    previous: Option<String>,
) -> Value {
    let mut body = serde_json::Map::new();
    if let Some(count) = served.total {
        body.insert("count".into(), json!(count));
    }
    body.insert("next".into(), json!(next));
    body.insert("previous".into(), json!(previous));
    if let Some(items) = items {
        body.insert("results".into(), Value::Array(items));
    }
    Value::Object(body)
}

/// The absolute URL of this endpoint, as DRF builds its links.
fn here(headers: &HeaderMap, uri: &Uri) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    format!("http://{host}{}", uri.path())
}
