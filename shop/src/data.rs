//! The seeded dataset: properties, customers, orders and events, built once from a fixed seed.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// Seed of the dataset's generator; changing it changes every row.
const SEED: u64 = 0x5EED_D4A6_0000_2026;

/// 2025-01-01T00:00:00Z as Unix seconds: the first possible order time.
const ORDERS_FROM: u64 = 1_735_689_600;
/// 2027-01-01T00:00:00Z as Unix seconds: orders are created strictly before it.
const ORDERS_UNTIL: u64 = 1_798_761_600;
/// 2026-01-01T00:00:00Z as Unix seconds: the first event's time.
const EVENTS_FROM: u64 = 1_767_225_600;

const PROPERTY_COUNT: u64 = 30;
const CUSTOMER_COUNT: u64 = 400;
const ORDER_COUNT: u64 = 6000;
const EVENT_COUNT: u64 = 500;

const FIRST_NAMES: [&str; 24] = [
    "Ada", "Bruno", "Chiara", "Dmitri", "Elena", "Farid", "Greta", "Hiro", "Ines", "Jonas",
    "Kemal", "Lena", "Mateo", "Nadia", "Oskar", "Priya", "Quinn", "Rosa", "Sami", "Tess", "Umar",
    "Vera", "Wim", "Yara",
];
const LAST_NAMES: [&str; 24] = [
    "Almeida", "Berg", "Costa", "Duval", "Eriksen", "Fischer", "Garcia", "Hansen", "Ito", "Jansen",
    "Kowalski", "Laurent", "Moreau", "Novak", "Okafor", "Petrov", "Quist", "Rossi", "Schmidt",
    "Tanaka", "Ueda", "Vargas", "Weber", "Zimmer",
];
const PROPERTY_STEMS: [&str; 10] = [
    "Harbor", "Linden", "Granite", "Willow", "Beacon", "Juniper", "Meadow", "Copper", "Alder",
    "Saffron",
];
const PROPERTY_KINDS: [&str; 3] = ["Lodge", "Suites", "House"];
const CITIES: [&str; 12] = [
    "Lisbon", "Porto", "Valencia", "Lyon", "Ghent", "Utrecht", "Bergen", "Graz", "Turin", "Krakow",
    "Aarhus", "Bilbao",
];
const EVENT_TYPES: [&str; 6] = [
    "order.created",
    "order.paid",
    "order.shipped",
    "order.cancelled",
    "customer.created",
    "customer.updated",
];

/// A hotel-like property that orders belong to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Property {
    pub id: u64,
    pub name: String,
    pub city: String,
}

/// A customer; orders carry a copy of their customer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Customer {
    pub id: u64,
    pub name: String,
    pub email: String,
}

/// The lifecycle state of an order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OrderStatus {
    Open,
    Paid,
    Shipped,
    Cancelled,
}

impl OrderStatus {
    /// Every status, in the order the OpenAPI document lists them.
    pub const ALL: [OrderStatus; 4] = [Self::Open, Self::Paid, Self::Shipped, Self::Cancelled];

    /// The wire name (`open`, `paid`, `shipped`, `cancelled`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Paid => "paid",
            Self::Shipped => "shipped",
            Self::Cancelled => "cancelled",
        }
    }

    /// Parses a wire name; `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

/// One line of an order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OrderLine {
    pub sku: String,
    pub qty: u32,
    pub price: f64,
}

/// An order: the main paginated collection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Order {
    pub id: u64,
    pub status: OrderStatus,
    pub total: f64,
    pub created_at: String,
    pub property_id: u64,
    pub customer: Customer,
    pub lines: Vec<OrderLine>,
}

impl Order {
    /// The total in cents, for exact comparisons.
    pub fn total_cents(&self) -> i64 {
        (self.total * 100.0).round() as i64
    }
}

/// An entry of the event feed served by the cursor endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub id: u64,
    #[serde(rename = "type")]
    pub kind: String,
    pub at: String,
}

/// All seeded rows, sorted by id.
#[derive(Debug)]
pub struct Dataset {
    properties: Vec<Property>,
    customers: Vec<Customer>,
    orders: Vec<Order>,
    events: Vec<Event>,
}

impl Dataset {
    pub fn properties(&self) -> &[Property] {
        &self.properties
    }

    pub fn customers(&self) -> &[Customer] {
        &self.customers
    }

    pub fn orders(&self) -> &[Order] {
        &self.orders
    }

    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// The order with this id, if any.
    pub fn order(&self, id: u64) -> Option<&Order> {
        let index = usize::try_from(id.checked_sub(1)?).ok()?;
        self.orders.get(index)
    }

    /// The property with this id, if any.
    pub fn property(&self, id: u64) -> Option<&Property> {
        let index = usize::try_from(id.checked_sub(1)?).ok()?;
        self.properties.get(index)
    }
}

/// The dataset, built on first use and shared by every server in the process.
pub fn dataset() -> &'static Dataset {
    static DATA: OnceLock<Dataset> = OnceLock::new();
    DATA.get_or_init(build)
}

/// A splitmix64 generator: tiny, fast and good enough for demo data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `low..=high`.
    fn range(&mut self, low: u64, high: u64) -> u64 {
        low + self.next() % (high - low + 1)
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

fn build() -> Dataset {
    let mut rng = Rng(SEED);
    let properties = (1..=PROPERTY_COUNT)
        .map(|id| {
            let i = (id - 1) as usize;
            Property {
                id,
                name: format!("{} {}", PROPERTY_STEMS[i / 3], PROPERTY_KINDS[i % 3]),
                city: rng.pick(&CITIES).to_string(),
            }
        })
        .collect();
    let customers: Vec<Customer> = (1..=CUSTOMER_COUNT)
        .map(|id| {
            let first = rng.pick(&FIRST_NAMES);
            let last = rng.pick(&LAST_NAMES);
            Customer {
                id,
                name: format!("{first} {last}"),
                email: format!("{}.{}{id}@example.com", first, last).to_lowercase(),
            }
        })
        .collect();
    let mut times: Vec<u64> = (0..ORDER_COUNT)
        .map(|_| rng.range(ORDERS_FROM, ORDERS_UNTIL - 1))
        .collect();
    times.sort_unstable();
    let orders = times
        .into_iter()
        .zip(1..=ORDER_COUNT)
        .map(|(at, id)| make_order(&mut rng, &customers, id, at))
        .collect();
    let mut at = EVENTS_FROM;
    let events = (1..=EVENT_COUNT)
        .map(|id| {
            at += rng.range(1, 3600);
            Event {
                id,
                kind: rng.pick(&EVENT_TYPES).to_string(),
                at: iso8601(at),
            }
        })
        .collect();
    Dataset {
        properties,
        customers,
        orders,
        events,
    }
}

fn make_order(rng: &mut Rng, customers: &[Customer], id: u64, at: u64) -> Order {
    let status = match rng.range(0, 99) {
        0..=29 => OrderStatus::Open,
        30..=59 => OrderStatus::Paid,
        60..=89 => OrderStatus::Shipped,
        _ => OrderStatus::Cancelled,
    };
    let customer = customers[(rng.next() % customers.len() as u64) as usize].clone();
    let mut total_cents = 0;
    let lines = (0..rng.range(1, 4))
        .map(|_| {
            let qty = rng.range(1, 5);
            let cents = rng.range(199, 24_999);
            total_cents += qty * cents;
            OrderLine {
                sku: format!("SKU-{:04}", rng.range(1, 250)),
                qty: qty as u32,
                price: cents as f64 / 100.0,
            }
        })
        .collect();
    Order {
        id,
        status,
        total: total_cents as f64 / 100.0,
        created_at: iso8601(at),
        property_id: rng.range(1, PROPERTY_COUNT),
        customer,
        lines,
    }
}

/// Formats Unix seconds as an ISO-8601 UTC timestamp (`2026-03-14T09:26:53Z`).
pub(crate) fn iso8601(unix_secs: u64) -> String {
    let mut days = unix_secs / 86_400;
    let secs = unix_secs % 86_400;
    let mut year = 1970;
    loop {
        let len = if is_leap(year) { 366 } else { 365 };
        if days < len {
            break;
        }
        days -= len;
        year += 1;
    }
    let feb = if is_leap(year) { 29 } else { 28 };
    let months = [31, feb, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    let mut month = 1;
    for len in months {
        if days < len {
            break;
        }
        days -= len;
        month += 1;
    }
    format!(
        "{year:04}-{month:02}-{:02}T{:02}:{:02}:{:02}Z",
        days + 1,
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

fn is_leap(year: u64) -> bool {
    // Written as a match (not `is_multiple_of`) to keep the workspace's MSRV of 1.85.
    matches!(
        (year % 400, year % 100, year % 4),
        (0, _, _) | (1.., 1.., 0)
    )
}

/// The current time as an ISO-8601 UTC timestamp.
pub(crate) fn now_iso8601() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    iso8601(secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso8601_formats_known_instants() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601(ORDERS_FROM), "2025-01-01T00:00:00Z");
        assert_eq!(iso8601(ORDERS_UNTIL), "2027-01-01T00:00:00Z");
        assert_eq!(iso8601(1_709_164_800), "2024-02-29T00:00:00Z");
        assert_eq!(iso8601(1_773_480_413), "2026-03-14T09:26:53Z");
    }

    #[test]
    fn dataset_has_the_promised_shape() {
        let data = dataset();
        assert_eq!(data.properties().len(), 30);
        assert_eq!(data.customers().len(), 400);
        assert_eq!(data.orders().len(), 6000);
        assert_eq!(data.events().len(), 500);
        let open = data
            .orders()
            .iter()
            .filter(|o| o.status == OrderStatus::Open)
            .count();
        assert!((1500..2100).contains(&open), "open orders: {open}");
        for (i, order) in data.orders().iter().enumerate() {
            assert_eq!(order.id, i as u64 + 1);
            assert!((1..=4).contains(&order.lines.len()));
            assert!((1..=30).contains(&order.property_id));
            assert!(order.created_at.starts_with("2025") || order.created_at.starts_with("2026"));
            let cents: i64 = order
                .lines
                .iter()
                .map(|l| i64::from(l.qty) * (l.price * 100.0).round() as i64)
                .sum();
            assert_eq!(cents, order.total_cents());
        }
        assert!(data.order(0).is_none() && data.order(6001).is_none());
        assert_eq!(data.order(42).map(|o| o.id), Some(42));
    }

    #[test]
    fn generation_is_deterministic() {
        let a = build();
        let b = build();
        assert_eq!(a.orders, b.orders);
        assert_eq!(a.events, b.events);
    }
}
