//! The router and the paginated list endpoints, one per paging style.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::PathRejection;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, Uri};
use axum::response::Response;
use axum::routing::{get, post};
use axum::{middleware, Router};
use serde_json::{json, Map, Value};

use crate::cursors::{self, ChainAt};
use crate::data::{dataset, Event, Order, OrderStatus};
use crate::drf;
use crate::error::ShopError;
use crate::faults::Faults;
use crate::log::{self, MAX_BODY_BYTES};
use crate::pages::{serve_page, PageRequest, Served};
use crate::params::{
    int_field, json_object, number_field, object_field, opt_int_field, parse_int, parse_status,
    string_field, Bounds, QueryParams,
};
use crate::resources;
use crate::state::Shared;
use crate::tickets;

const PAGE: Bounds = Bounds::new(1, 1, None);
const PER_PAGE: Bounds = Bounds::new(25, 1, Some(100));
const OFFSET: Bounds = Bounds::new(0, 0, None);
const CUSTOMER_LIMIT: Bounds = Bounds::new(50, 1, Some(200));
const ODATA_TOP: Bounds = Bounds::new(100, 1, Some(500));
const PAGE_SIZE: Bounds = Bounds::new(20, 1, Some(100));
const EVENT_LIMIT: Bounds = Bounds::new(50, 1, Some(100));

/// Mixed into cursors so they read as opaque tokens.
const CURSOR_MASK: u64 = 0x6A09_E667_F3BC_C908;
/// Bits of a cursor that hold the chain position.
const CHAIN_BITS: u32 = 24;

/// Every route, with the request log around them, sharing `shared`.
pub(crate) fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/orders", get(list_orders))
        .route("/orders/search", post(search_orders))
        .route("/orders/{order_id}", get(resources::get_order))
        .route("/customers", get(list_customers))
        .route("/drf/orders", get(drf::list_orders))
        .route("/drf/customers", get(drf::list_customers))
        .route("/odata/orders", get(list_orders_odata))
        .route("/events", get(list_events))
        .route("/tickets", get(tickets::list))
        .route("/tickets/{ticket_id}", axum::routing::put(tickets::put))
        .route(
            "/_admin/tickets/outage",
            post(tickets::start_outage).delete(tickets::end_outage),
        )
        .route("/stripe/customers", get(cursors::stripe))
        .route("/github/customers", get(cursors::github))
        .route("/twilio/customers", get(cursors::twilio))
        .route("/jira/customers", get(cursors::jira))
        .route("/properties", get(resources::list_properties))
        .route(
            "/properties/{property_id}/orders",
            get(list_property_orders),
        )
        .route(
            "/reports",
            post(resources::create_report).get(resources::list_reports),
        )
        .route(
            "/alerts",
            post(resources::create_alert).get(resources::list_alerts),
        )
        .route(
            "/_admin/requests",
            get(resources::admin_requests).delete(resources::admin_clear),
        )
        .fallback(resources::not_found)
        .layer(middleware::from_fn_with_state(shared.clone(), log::record))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(shared)
}

/// The orders matching every given filter, in id order.
pub(crate) fn orders(
    status: Option<OrderStatus>,
    property_id: Option<u64>,
    min_total: Option<f64>,
) -> Vec<&'static Order> {
    let min_cents = min_total.map(|t| (t * 100.0).round() as i64);
    dataset()
        .orders()
        .iter()
        .filter(|o| status.is_none_or(|s| o.status == s))
        .filter(|o| property_id.is_none_or(|p| o.property_id == p))
        .filter(|o| min_cents.is_none_or(|m| o.total_cents() >= m))
        .collect()
}

/// `{"data": [...], "meta": {"total", "page", "per_page"}}`.
pub(crate) fn page_envelope(per_page: u64) -> impl Fn(Option<Vec<Value>>, &Served) -> Value {
    move |items, served| {
        let mut meta = Map::new();
        if let Some(total) = served.total {
            meta.insert("total".into(), json!(total));
        }
        meta.insert("page".into(), json!(served.page));
        meta.insert("per_page".into(), json!(per_page));
        let mut body = Map::new();
        if let Some(items) = items {
            body.insert("data".into(), Value::Array(items));
        }
        body.insert("meta".into(), Value::Object(meta));
        Value::Object(body)
    }
}

async fn list_orders(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    uri: Uri,
) -> Result<Response, ShopError> {
    let faults = Faults::from_headers(&headers)?;
    let query = QueryParams::from_uri(&uri)?;
    let page = query.int("page", PAGE)?;
    let per_page = query.int("per_page", PER_PAGE)?;
    let mut rows = orders(query.status()?, query.opt_int("property_id", 1)?, None);
    if let Some(since) = query.created_since()? {
        rows.retain(|o| {
            o.created_at
                .get(..19)
                .is_some_and(|at| at >= since.as_str())
        });
    }
    let request = PageRequest::Numbered {
        page,
        size: per_page,
    };
    let shape = page_envelope(per_page);
    Ok(serve_page(&shared.once, &faults, &rows, request, &shape).await)
}

async fn list_property_orders(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    uri: Uri,
    path: Result<Path<String>, PathRejection>,
) -> Result<Response, ShopError> {
    let faults = Faults::from_headers(&headers)?;
    let Path(raw) = path.map_err(|e| ShopError::bad(format!("bad path: {e}")))?;
    let id = parse_int("property_id", &raw)?;
    let property = u64::try_from(id)
        .ok()
        .and_then(|id| dataset().property(id))
        .ok_or_else(|| ShopError::NotFound(format!("no property with id {id}")))?;
    let query = QueryParams::from_uri(&uri)?;
    let page = query.int("page", PAGE)?;
    let per_page = query.int("per_page", PER_PAGE)?;
    let rows = orders(query.status()?, Some(property.id), None);
    let request = PageRequest::Numbered {
        page,
        size: per_page,
    };
    let shape = page_envelope(per_page);
    Ok(serve_page(&shared.once, &faults, &rows, request, &shape).await)
}

async fn list_customers(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    uri: Uri,
) -> Result<Response, ShopError> {
    let faults = Faults::from_headers(&headers)?;
    let query = QueryParams::from_uri(&uri)?;
    let request = PageRequest::Offset {
        offset: query.int("offset", OFFSET)?,
        size: query.int("limit", CUSTOMER_LIMIT)?,
    };
    let rows: Vec<_> = dataset().customers().iter().collect();
    let shape = |items: Option<Vec<Value>>, _: &Served| match items {
        Some(items) => Value::Array(items),
        None => json!({ "error": "gone" }),
    };
    Ok(serve_page(&shared.once, &faults, &rows, request, &shape).await)
}

async fn list_orders_odata(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    uri: Uri,
) -> Result<Response, ShopError> {
    let faults = Faults::from_headers(&headers)?;
    let query = QueryParams::from_uri(&uri)?;
    let request = PageRequest::Offset {
        offset: query.int("$skip", OFFSET)?,
        size: query.int("$top", ODATA_TOP)?,
    };
    let rows = orders(query.status()?, None, None);
    let shape = |items: Option<Vec<Value>>, served: &Served| {
        let mut body = Map::new();
        if let Some(total) = served.total {
            body.insert("@odata.count".into(), json!(total));
        }
        if let Some(items) = items {
            body.insert("value".into(), Value::Array(items));
        }
        Value::Object(body)
    };
    Ok(serve_page(&shared.once, &faults, &rows, request, &shape).await)
}

async fn search_orders(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ShopError> {
    let faults = Faults::from_headers(&headers)?;
    let body = json_object(&body)?.unwrap_or_default();
    let paging = object_field(&body, "paging")?;
    let filter = object_field(&body, "filter")?;
    let request = PageRequest::Numbered {
        page: int_field(paging, "page", "paging.page", PAGE)?,
        size: int_field(paging, "pageSize", "paging.pageSize", PAGE_SIZE)?,
    };
    let status = match filter {
        Some(filter) => string_field(filter, "status", false)?
            .map(|s| parse_status(&s))
            .transpose()?,
        None => None,
    };
    let property_id = opt_int_field(filter, "property_id", "filter.property_id", 1)?;
    let min_total = number_field(filter, "min_total", "filter.min_total")?;
    let rows = orders(status, property_id, min_total);
    let shape = |items: Option<Vec<Value>>, served: &Served| {
        let mut body = Map::new();
        if let Some(items) = items {
            body.insert("results".into(), Value::Array(items));
        }
        let pagination = match served.total {
            Some(total) => json!({ "total": total }),
            None => json!({}),
        };
        body.insert("pagination".into(), pagination);
        Value::Object(body)
    };
    Ok(serve_page(&shared.once, &faults, &rows, request, &shape).await)
}

async fn list_events(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    uri: Uri,
) -> Result<Response, ShopError> {
    let faults = Faults::from_headers(&headers)?;
    let query = QueryParams::from_uri(&uri)?;
    let rows: Vec<&Event> = dataset().events().iter().collect();
    let count = rows.len();
    let at = ChainAt::read(&query, "limit", EVENT_LIMIT, "cursor", count)?;
    let shape = |items: Option<Vec<Value>>, served: &Served| {
        let mut body = Map::new();
        if let Some(items) = items {
            body.insert("items".into(), Value::Array(items));
        }
        body.insert(
            "next_cursor".into(),
            json!(at.next(&faults, served.end, count)),
        );
        Value::Object(body)
    };
    Ok(serve_page(&shared.once, &faults, &rows, at.request(), &shape).await)
}

/// The opaque cursor of the cursor-chain endpoints for the page that
/// starts at row `offset` and is the `chain`-th of its chain (first = 1).
pub fn encode_cursor(offset: u64, chain: u64) -> String {
    let chain = chain.min((1 << CHAIN_BITS) - 1);
    format!("ev_{:016x}", ((offset << CHAIN_BITS) | chain) ^ CURSOR_MASK)
}

/// `(offset, chain)` of a cursor this server issued; anything else is a 400.
pub(crate) fn decode_cursor(text: &str, count: u64) -> Result<(u64, u64), ShopError> {
    let invalid = || {
        ShopError::bad(format!(
            "`cursor` is not a cursor this API issued: `{text}`"
        ))
    };
    let hex = text.strip_prefix("ev_").ok_or_else(invalid)?;
    let raw = u64::from_str_radix(hex, 16).map_err(|_| invalid())? ^ CURSOR_MASK;
    let (offset, chain) = (raw >> CHAIN_BITS, raw & ((1 << CHAIN_BITS) - 1));
    if chain < 2 || offset > count {
        return Err(invalid());
    }
    Ok((offset, chain))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_refuse_forgeries() {
        let cursor = encode_cursor(150, 4);
        assert_eq!(decode_cursor(&cursor, 500).unwrap(), (150, 4));
        assert!(decode_cursor("ev_zz", 500).is_err());
        assert!(decode_cursor("150", 500).is_err());
        assert!(decode_cursor(&encode_cursor(900, 2), 500).is_err());
        assert!(decode_cursor(&encode_cursor(10, 1), 500).is_err());
    }
}
