//! Support tickets, the one resource that changes while the shop runs: a
//! seeded list that `PUT /tickets/{id}` adds to or updates, each write
//! setting the ticket's `updated_at` (given, so a test can commit a row
//! "late": with a time before rows already served). `GET /tickets` pages
//! them oldest change first (`updated_at`, then `id`), from
//! `updated_since` on when given: the shape incremental walks read.
//! `POST /_admin/tickets/outage` `{"from_page": N, "status": CODE}` makes
//! every page from N on answer CODE until `DELETE` of the same path.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use serde_json::json;

use crate::data::iso8601;
use crate::error::ShopError;
use crate::faults::Faults;
use crate::pages::{serve_page, PageRequest};
use crate::params::{int_field, json_object, string_field, utc_time, Bounds, QueryParams};
use crate::routes::page_envelope;
use crate::state::{lock, Shared};

const PAGE: Bounds = Bounds::new(1, 1, None);
const PER_PAGE: Bounds = Bounds::new(25, 1, Some(100));
const STATUSES: [&str; 3] = ["open", "pending", "solved"];
/// Tickets the shop starts with, one changed every three hours from
/// 2026-01-01T00:00:00Z.
const SEEDED: u64 = 40;
const SEED_FROM: u64 = 1_767_225_600;

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Ticket {
    pub id: u64,
    pub subject: String,
    pub status: String,
    pub updated_at: String,
}

/// The tickets a shop starts with.
pub(crate) fn seeded() -> Vec<Ticket> {
    (1..=SEEDED)
        .map(|id| Ticket {
            id,
            subject: format!("Ticket {id}"),
            status: STATUSES[(id % 3) as usize].to_string(),
            updated_at: iso8601(SEED_FROM + (id - 1) * 3 * 3600),
        })
        .collect()
}

/// An outage of `GET /tickets`: pages from `from_page` on answer `status`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Outage {
    from_page: u64,
    status: StatusCode,
}

/// `GET /tickets`.
pub(crate) async fn list(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    uri: Uri,
) -> Result<Response, ShopError> {
    let faults = Faults::from_headers(&headers)?;
    let query = QueryParams::from_uri(&uri)?;
    let page = query.int("page", PAGE)?;
    let per_page = query.int("per_page", PER_PAGE)?;
    let since = query.utc_since("updated_since")?;
    if let Some(outage) = *lock(&shared.ticket_outage) {
        if page >= outage.from_page {
            let message = format!(
                "outage: HTTP {} from page {}",
                outage.status.as_u16(),
                outage.from_page
            );
            return Ok((outage.status, Json(json!({ "error": message }))).into_response());
        }
    }
    let mut rows: Vec<Ticket> = lock(&shared.tickets)
        .iter()
        .filter(|t| since.as_deref().is_none_or(|s| t.updated_at[..19] >= *s))
        .cloned()
        .collect();
    rows.sort_by(|a, b| (&a.updated_at[..19], a.id).cmp(&(&b.updated_at[..19], b.id)));
    let rows: Vec<&Ticket> = rows.iter().collect();
    let request = PageRequest::Numbered {
        page,
        size: per_page,
    };
    let shape = page_envelope(per_page);
    Ok(serve_page(&shared.once, &faults, &rows, request, &shape).await)
}

/// `PUT /tickets/{id}`: adds or updates a ticket; `updated_at` is required.
pub(crate) async fn put(
    State(shared): State<Arc<Shared>>,
    id: Result<Path<u64>, PathRejection>,
    body: Bytes,
) -> Result<Response, ShopError> {
    let Path(id) = id.map_err(|_| ShopError::bad("the ticket id must be a positive integer"))?;
    let body = json_object(&body)?.ok_or_else(|| {
        ShopError::bad("the request body must be a JSON object with `updated_at`")
    })?;
    let updated_at = string_field(&body, "updated_at", true)?.unwrap_or_default();
    if utc_time(&updated_at).is_none() {
        return Err(ShopError::bad(format!(
            "`updated_at` must be a UTC time like 2026-01-01T00:00:00Z, got `{updated_at}`"
        )));
    }
    let status = string_field(&body, "status", false)?;
    if let Some(s) = status.as_deref().filter(|s| !STATUSES.contains(s)) {
        return Err(ShopError::bad(format!(
            "`status` must be one of open, pending, solved; got `{s}`"
        )));
    }
    let subject = string_field(&body, "subject", false)?;
    let mut tickets = lock(&shared.tickets);
    let (code, ticket) = match tickets.iter_mut().find(|t| t.id == id) {
        Some(t) => {
            t.updated_at = updated_at;
            if let Some(s) = status {
                t.status = s;
            }
            if let Some(s) = subject {
                t.subject = s;
            }
            (StatusCode::OK, t.clone())
        }
        None => {
            let t = Ticket {
                id,
                subject: subject.unwrap_or_else(|| format!("Ticket {id}")),
                status: status.unwrap_or_else(|| "open".into()),
                updated_at,
            };
            tickets.push(t.clone());
            (StatusCode::CREATED, t)
        }
    };
    Ok((code, Json(ticket)).into_response())
}

/// `POST /_admin/tickets/outage`.
pub(crate) async fn start_outage(
    State(shared): State<Arc<Shared>>,
    body: Bytes,
) -> Result<Response, ShopError> {
    let body = json_object(&body)?;
    let from_page = int_field(body.as_ref(), "from_page", "from_page", PAGE)?;
    let code = int_field(
        body.as_ref(),
        "status",
        "status",
        Bounds::new(503, 400, Some(599)),
    )?;
    let status = StatusCode::from_u16(code as u16)
        .map_err(|_| ShopError::bad("`status` must be an HTTP status"))?;
    *lock(&shared.ticket_outage) = Some(Outage { from_page, status });
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `DELETE /_admin/tickets/outage`.
pub(crate) async fn end_outage(State(shared): State<Arc<Shared>>) -> Response {
    *lock(&shared.ticket_outage) = None;
    StatusCode::NO_CONTENT.into_response()
}
