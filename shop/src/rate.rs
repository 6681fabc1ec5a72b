//! The `rate=N:MS[:headers]` fault: a fixed-window rate limit counted per shop server
//! (across every session), as a real API counts one API key. The first counted request
//! opens a window of `MS` milliseconds; it admits `N` requests and answers every later one
//! with 429 and `Retry-After` (whole seconds until the window ends, at least 1). With
//! `headers`, every answer also carries `X-RateLimit-Limit`, `X-RateLimit-Remaining` and
//! `X-RateLimit-Reset` (seconds until the window ends, with millisecond decimals).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use crate::state::lock;

/// A `rate` fault as parsed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RateFault {
    pub limit: u64,
    pub window: Duration,
    pub headers: bool,
}

/// The current window of one shop server.
#[derive(Debug, Default)]
pub(crate) struct RateWindow(Mutex<Option<(Instant, u64)>>);

/// What the limiter decided for one request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RateAnswer {
    pub fault: RateFault,
    pub limited: bool,
    pub remaining: u64,
    /// Until the window ends.
    pub reset: Duration,
}

impl RateWindow {
    /// Counts one request under `fault`.
    pub(crate) fn admit(&self, fault: RateFault) -> RateAnswer {
        let now = Instant::now();
        let mut window = lock(&self.0);
        let (start, count) = match *window {
            Some((start, count)) if now.duration_since(start) < fault.window => (start, count),
            _ => (now, 0),
        };
        let reset = fault.window.saturating_sub(now.duration_since(start));
        let limited = count >= fault.limit;
        let count = if limited { count } else { count + 1 };
        *window = Some((start, count));
        RateAnswer {
            fault,
            limited,
            remaining: fault.limit - count,
            reset,
        }
    }
}

impl RateAnswer {
    /// The 429 of a request over the limit.
    pub(crate) fn response(&self) -> Response {
        let message = format!(
            "rate limited: more than {} requests in {} ms",
            self.fault.limit,
            self.fault.window.as_millis()
        );
        let mut response = (
            StatusCode::TOO_MANY_REQUESTS,
            Json(json!({ "error": message })),
        )
            .into_response();
        let seconds = self.reset.as_millis().div_ceil(1000).max(1);
        if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        self.apply(response.headers_mut());
        response
    }

    /// Adds the `X-RateLimit-*` headers when the fault asks for them.
    pub(crate) fn apply(&self, headers: &mut HeaderMap) {
        if !self.fault.headers {
            return;
        }
        let reset = format!("{:.3}", self.reset.as_secs_f64());
        for (name, value) in [
            ("x-ratelimit-limit", self.fault.limit.to_string()),
            ("x-ratelimit-remaining", self.remaining.to_string()),
            ("x-ratelimit-reset", reset),
        ] {
            if let Ok(value) = HeaderValue::from_str(&value) {
                headers.insert(name, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_n_per_window_then_limits() {
        let window = RateWindow::default();
        let fault = RateFault {
            limit: 2,
            window: Duration::from_secs(60),
            headers: true,
        };
        let a = window.admit(fault);
        let b = window.admit(fault);
        let c = window.admit(fault);
        assert_eq!((a.limited, a.remaining), (false, 1));
        assert_eq!((b.limited, b.remaining), (false, 0));
        assert!(c.limited);
        let response = c.response();
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(response.headers()[header::RETRY_AFTER], "60");
        assert_eq!(response.headers()["x-ratelimit-remaining"], "0");
    }

    #[test]
    fn a_new_window_starts_after_the_last() {
        let window = RateWindow::default();
        let fault = RateFault {
            limit: 1,
            window: Duration::from_millis(1),
            headers: false,
        };
        assert!(!window.admit(fault).limited);
        std::thread::sleep(Duration::from_millis(5));
        let again = window.admit(fault);
        assert!(!again.limited);
        let mut headers = HeaderMap::new();
        again.apply(&mut headers);
        assert!(headers.is_empty());
    }
}
