//! The deterministic input of the shape benchmark: one large page of orders
//! in the demo shop's own shape (`id, status, total, created_at,
//! property_id, customer{id,name,email}, lines[{sku,qty,price}]`), built by
//! serializing the shop's seeded orders over and over with fresh ids, inside
//! `{"data":[…],"meta":{"total":N}}`.

use std::io::Write;

/// A page of orders as the bytes an upstream would send.
#[derive(Debug)]
pub struct OrderPage {
    pub bytes: Vec<u8>,
    /// How many orders `data` holds.
    pub items: usize,
}

/// Builds a page of at least `min_bytes` (compact JSON, like the shop
/// serves). Same size, same bytes, every time.
pub fn order_page(min_bytes: usize) -> Result<OrderPage, serde_json::Error> {
    let seeded = dragnet_shop::dataset().orders();
    let mut bytes = Vec::with_capacity(min_bytes + 64 * 1024);
    bytes.extend_from_slice(br#"{"data":["#);
    let mut items = 0usize;
    while bytes.len() < min_bytes && !seeded.is_empty() {
        let mut order = seeded[items % seeded.len()].clone();
        order.id = items as u64 + 1;
        if items > 0 {
            bytes.push(b',');
        }
        serde_json::to_writer(&mut bytes, &order)?;
        items += 1;
    }
    write!(bytes, r#"],"meta":{{"total":{items}}}}}"#).map_err(serde_json::Error::io)?;
    Ok(OrderPage { bytes, items })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn page_is_valid_deterministic_and_shop_shaped() {
        let page = order_page(50_000).unwrap();
        assert!(page.bytes.len() >= 50_000);
        assert_eq!(page.bytes, order_page(50_000).unwrap().bytes);
        let v: Value = serde_json::from_slice(&page.bytes).unwrap();
        let data = v["data"].as_array().unwrap();
        assert_eq!(data.len(), page.items);
        assert_eq!(v["meta"]["total"], page.items);
        let first = &data[0];
        for key in [
            "id",
            "status",
            "total",
            "created_at",
            "property_id",
            "customer",
            "lines",
        ] {
            assert!(first.get(key).is_some(), "missing {key}");
        }
        assert!(first["customer"]["name"].is_string());
        assert!(first["lines"][0]["sku"].is_string());
        let ids: Vec<u64> = data.iter().map(|o| o["id"].as_u64().unwrap()).collect();
        assert_eq!(ids, (1..=page.items as u64).collect::<Vec<_>>());
    }
}
