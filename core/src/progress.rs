//! Live progress of a walk (SPEC §6): events carry page and request
//! counters, and a throttle lets at most one through per 750 ms. Time comes
//! from an injected `Clock` so the throttle is tested with paused time.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

pub use crate::clock::{Clock, SystemClock};

/// The least time between two delivered events.
pub const MIN_INTERVAL: Duration = Duration::from_millis(750);

/// One progress event. Nothing in it is needed for correctness.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressEvent {
    /// Pages fetched of the current collection.
    pub page: u32,
    pub pages_max: u32,
    /// Items gathered so far in the whole call.
    pub items: usize,
    pub requests: u32,
    pub requests_max: u32,
    pub elapsed_ms: u64,
    /// In a fan-out, the value being fetched.
    pub value: Option<Value>,
}

impl ProgressEvent {
    /// The event as the JSON object SPEC §6 describes.
    pub fn to_json(&self) -> Value {
        let mut v = serde_json::json!({
            "page": self.page,
            "pagesMax": self.pages_max,
            "items": self.items,
            "requests": self.requests,
            "requestsMax": self.requests_max,
            "elapsedMs": self.elapsed_ms,
        });
        if let (Some(value), Some(obj)) = (&self.value, v.as_object_mut()) {
            obj.insert("value".into(), value.clone());
        }
        v
    }
}

/// Where events go (a CLI progress line, an SSE stream, MCP notifications).
pub trait ProgressSink: Send + Sync {
    fn emit(&self, event: &ProgressEvent);
}

/// A sink that drops everything.
pub struct NoProgress;

impl ProgressSink for NoProgress {
    fn emit(&self, _: &ProgressEvent) {}
}

impl<F: Fn(&ProgressEvent) + Send + Sync> ProgressSink for F {
    fn emit(&self, event: &ProgressEvent) {
        self(event)
    }
}

/// Lets at most one event through per `MIN_INTERVAL`.
pub struct Throttled<'a> {
    sink: &'a dyn ProgressSink,
    clock: Arc<dyn Clock>,
    last: Option<tokio::time::Instant>,
}

impl<'a> Throttled<'a> {
    pub fn new(sink: &'a dyn ProgressSink, clock: Arc<dyn Clock>) -> Self {
        Throttled {
            sink,
            clock,
            last: None,
        }
    }

    /// Delivers `event` unless one was delivered less than 750 ms ago.
    /// Returns whether it was delivered.
    pub fn offer(&mut self, event: ProgressEvent) -> bool {
        let now = self.clock.instant();
        if self
            .last
            .is_some_and(|last| now.duration_since(last) < MIN_INTERVAL)
        {
            return false;
        }
        self.last = Some(now);
        self.sink.emit(&event);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn event(page: u32) -> ProgressEvent {
        ProgressEvent {
            page,
            pages_max: 20,
            items: 0,
            requests: page,
            requests_max: 60,
            elapsed_ms: 0,
            value: None,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn at_most_one_event_per_750ms() {
        let seen = Mutex::new(Vec::new());
        let sink = |e: &ProgressEvent| seen.lock().unwrap().push(e.page);
        let mut t = Throttled::new(&sink, Arc::new(SystemClock));
        assert!(t.offer(event(1)));
        tokio::time::advance(Duration::from_millis(300)).await;
        assert!(!t.offer(event(2)));
        tokio::time::advance(Duration::from_millis(449)).await;
        assert!(!t.offer(event(3)));
        tokio::time::advance(Duration::from_millis(1)).await;
        assert!(t.offer(event(4)));
        for page in 5..100 {
            tokio::time::advance(Duration::from_millis(100)).await;
            t.offer(event(page));
        }
        let seen = seen.lock().unwrap().clone();
        // 9.5 s of 100 ms steps after page 4: one event per 800 ms step-aligned window
        assert_eq!(&seen[..2], &[1, 4]);
        assert!(seen.windows(2).all(|w| w[1] - w[0] >= 3), "{seen:?}");
        assert_eq!(seen.len(), 2 + 95 / 8);
    }

    #[test]
    fn event_json_names() {
        let mut e = event(2);
        e.value = Some(serde_json::json!(7));
        let v = e.to_json();
        for key in [
            "page",
            "pagesMax",
            "items",
            "requests",
            "requestsMax",
            "elapsedMs",
            "value",
        ] {
            assert!(v.get(key).is_some(), "{key}");
        }
    }
}
