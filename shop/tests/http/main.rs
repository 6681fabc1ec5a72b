//! Real-HTTP tests of the shop: endpoint shapes, fault modes, the request log and the spec.

mod faults;
mod log_spec;
mod shapes;
mod tickets;

use std::net::SocketAddr;

use dragnet_shop::ShopHandle;
use reqwest::StatusCode;
use serde_json::Value;

/// A shop on a free loopback port.
async fn shop() -> ShopHandle {
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    dragnet_shop::start(addr).await.expect("shop starts")
}

/// A shop and a client for it.
struct Fixture {
    shop: ShopHandle,
    client: reqwest::Client,
}

impl Fixture {
    async fn new() -> Self {
        Self {
            shop: shop().await,
            client: reqwest::Client::new(),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.shop.base_url())
    }

    /// GET `path` with optional fault header; status and JSON body (`Null` if not JSON).
    async fn get(&self, path: &str, fault: Option<&str>) -> (StatusCode, Value) {
        let mut request = self.client.get(self.url(path));
        if let Some(fault) = fault {
            request = request.header("X-Shop-Fault", fault);
        }
        let response = request.send().await.expect("request is answered");
        let status = response.status();
        let bytes = response.bytes().await.expect("body is read");
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    }

    /// POST JSON to `path`; status and JSON body.
    async fn post(&self, path: &str, body: &Value, fault: Option<&str>) -> (StatusCode, Value) {
        let mut request = self.client.post(self.url(path)).json(body);
        if let Some(fault) = fault {
            request = request.header("X-Shop-Fault", fault);
        }
        let response = request.send().await.expect("request is answered");
        let status = response.status();
        let bytes = response.bytes().await.expect("body is read");
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    }
}

/// The `id`s of the items of a JSON array.
fn ids(items: &Value) -> Vec<u64> {
    items
        .as_array()
        .expect("an array")
        .iter()
        .map(|item| item["id"].as_u64().expect("an integer id"))
        .collect()
}
