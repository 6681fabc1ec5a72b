//! The `X-Shop-Fault` header: parsed into a closed set of faults, with per-session "once" state.
//!
//! Grammar: comma-separated tokens, each `name` or `name=field[:field…]`; blank tokens are
//! skipped and an unknown or malformed token is a 400 naming it. "Page N" is the page number
//! the endpoint derives from its paging input (see the crate docs).

use std::collections::HashSet;
use std::str::FromStr;
use std::sync::Mutex;
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};

use crate::error::ShopError;
use crate::rate::{RateAnswer, RateFault, RateWindow};

/// The request header that selects faults.
pub(crate) const FAULT_HEADER: &str = "x-shop-fault";
/// The request header that names the session "once" faults are counted in.
pub(crate) const SESSION_HEADER: &str = "x-shop-session";

/// Longest delay `slow` may ask for.
const MAX_SLOW_MS: u64 = 60_000;
/// Largest body `huge` may ask for.
const MAX_HUGE_BYTES: usize = 64 * 1024 * 1024;

/// One injected misbehaviour.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Fault {
    IgnorePage,
    Cap(usize),
    ShortPage(u64),
    Total(u64),
    TotalFirstPageOnly,
    NoTotal,
    Status(StatusFault),
    Malformed(u64),
    Slow {
        page: u64,
        millis: u64,
    },
    /// Every page is delayed (a distant upstream).
    Latency(u64),
    Huge {
        page: u64,
        bytes: usize,
    },
    MissingCollection(u64),
    /// Page N points onward with the cursor (or next URL) that reached it.
    RepeatCursor(u64),
    /// Page N's next URL names another origin (the other loopback name).
    ForeignNext(u64),
    /// `rate=N:MS[:headers]`: at most N requests per MS-millisecond window, per shop.
    Rate(RateFault),
}

/// `status=N:CODE[:always][:retry-after=S][:retry-after-date=S]`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StatusFault {
    pub page: u64,
    pub code: StatusCode,
    pub always: bool,
    pub retry_after: Option<RetryAfter>,
}

/// How a `Retry-After` header is written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum RetryAfter {
    /// `Retry-After: S`.
    Seconds(u64),
    /// `Retry-After: <HTTP date S seconds from now>`.
    DateIn(u64),
}

/// The faults of one request, each with the token text it came from.
#[derive(Debug, Clone, Default)]
pub(crate) struct Faults {
    session: String,
    entries: Vec<(String, Fault)>,
}

impl Faults {
    /// Reads `X-Shop-Fault` (every occurrence) and `X-Shop-Session`.
    pub(crate) fn from_headers(headers: &HeaderMap) -> Result<Self, ShopError> {
        let mut entries = Vec::new();
        for value in headers.get_all(FAULT_HEADER) {
            let text = value
                .to_str()
                .map_err(|_| ShopError::bad("X-Shop-Fault must be visible ASCII"))?;
            for token in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
                entries.push((token.to_string(), parse_token(token)?));
            }
        }
        let session = headers
            .get(SESSION_HEADER)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .unwrap_or_default();
        Ok(Self { session, entries })
    }

    fn all(&self) -> impl Iterator<Item = &Fault> {
        self.entries.iter().map(|(_, fault)| fault)
    }

    /// Whether the page/offset/skip/cursor input is ignored.
    pub(crate) fn ignore_page(&self) -> bool {
        self.all().any(|f| *f == Fault::IgnorePage)
    }

    /// The silent page-size cap, the smallest one given.
    pub(crate) fn cap(&self) -> Option<usize> {
        self.all()
            .filter_map(|f| match f {
                Fault::Cap(n) => Some(*n),
                _ => None,
            })
            .min()
    }

    /// Whether page `page` loses the second half of its items.
    pub(crate) fn short_page(&self, page: u64) -> bool {
        self.all().any(|f| *f == Fault::ShortPage(page))
    }

    /// The total to declare on page `page` when `truth` rows match.
    pub(crate) fn total(&self, truth: u64, page: u64) -> Option<u64> {
        if self.all().any(|f| *f == Fault::NoTotal) {
            return None;
        }
        if page != 1 && self.all().any(|f| *f == Fault::TotalFirstPageOnly) {
            return None;
        }
        let forced = self.all().filter_map(|f| match f {
            Fault::Total(n) => Some(*n),
            _ => None,
        });
        Some(forced.last().unwrap_or(truth))
    }

    /// The status fault that fires on page `page` now, if any; "once" faults fire the first
    /// time their page is asked for in this session.
    pub(crate) fn status_hit(&self, page: u64, once: &OnceSet) -> Option<&StatusFault> {
        self.entries.iter().find_map(|(token, fault)| match fault {
            Fault::Status(s) if s.page == page => {
                (s.always || once.first_time(&self.session, token, page)).then_some(s)
            }
            _ => None,
        })
    }

    /// Whether page `page` answers with an invalid JSON body.
    pub(crate) fn malformed(&self, page: u64) -> bool {
        self.all().any(|f| *f == Fault::Malformed(page))
    }

    /// The delay before page `page` is answered (all matching `slow` tokens added up).
    pub(crate) fn delay(&self, page: u64) -> Option<Duration> {
        let millis: u64 = self
            .all()
            .filter_map(|f| match f {
                Fault::Slow { page: p, millis } if *p == page => Some(*millis),
                Fault::Latency(millis) => Some(*millis),
                _ => None,
            })
            .sum();
        (millis > 0).then(|| Duration::from_millis(millis))
    }

    /// The size page `page` is padded to, the largest one given.
    pub(crate) fn huge(&self, page: u64) -> Option<usize> {
        self.all()
            .filter_map(|f| match f {
                Fault::Huge { page: p, bytes } if *p == page => Some(*bytes),
                _ => None,
            })
            .max()
    }

    /// Counts this request against the `rate` fault, if one is given.
    pub(crate) fn rate(&self, once: &OnceSet) -> Option<RateAnswer> {
        self.all().find_map(|f| match f {
            Fault::Rate(rate) => Some(once.rate.admit(*rate)),
            _ => None,
        })
    }

    /// Whether page `page` gives back the cursor that reached it.
    pub(crate) fn repeat_cursor(&self, page: u64) -> bool {
        self.all().any(|f| *f == Fault::RepeatCursor(page))
    }

    /// Whether page `page`'s next URL names another origin.
    pub(crate) fn foreign_next(&self, page: u64) -> bool {
        self.all().any(|f| *f == Fault::ForeignNext(page))
    }

    /// Whether page `page` leaves out its collection.
    pub(crate) fn missing_collection(&self, page: u64) -> bool {
        self.all().any(|f| *f == Fault::MissingCollection(page))
    }
}

/// The fault state one server keeps: which "once" faults have already fired (session,
/// token, page), and the `rate` fault's window.
#[derive(Debug, Default)]
pub(crate) struct OnceSet {
    fired: Mutex<HashSet<(String, String, u64)>>,
    rate: RateWindow,
}

impl OnceSet {
    /// True the first time this (session, token, page) is seen.
    fn first_time(&self, session: &str, token: &str, page: u64) -> bool {
        let mut seen = self.fired.lock().unwrap_or_else(|e| e.into_inner());
        seen.insert((session.to_string(), token.to_string(), page))
    }
}

fn parse_token(token: &str) -> Result<Fault, ShopError> {
    let (name, args) = match token.split_once('=') {
        Some((name, args)) => (name.trim(), Some(args)),
        None => (token, None),
    };
    let fields: Vec<&str> = args.map(|a| a.split(':').collect()).unwrap_or_default();
    let arity = |n: usize, form: &str| {
        if fields.len() == n {
            Ok(())
        } else {
            Err(ShopError::bad(format!(
                "fault token `{token}`: expected `{form}`"
            )))
        }
    };
    let fault = match name {
        "ignore-page" | "total-first-page-only" | "no-total" => {
            arity(0, name)?;
            match name {
                "ignore-page" => Fault::IgnorePage,
                "no-total" => Fault::NoTotal,
                _ => Fault::TotalFirstPageOnly,
            }
        }
        "cap" | "short-page" | "malformed" | "missing-collection" | "repeat-cursor"
        | "foreign-next" => {
            arity(1, &format!("{name}=N"))?;
            let n = positive(token, fields[0])?;
            match name {
                "cap" => Fault::Cap(usize::try_from(n).unwrap_or(usize::MAX)),
                "short-page" => Fault::ShortPage(n),
                "malformed" => Fault::Malformed(n),
                "repeat-cursor" => Fault::RepeatCursor(n),
                "foreign-next" => Fault::ForeignNext(n),
                _ => Fault::MissingCollection(n),
            }
        }
        "total" => {
            arity(1, "total=N")?;
            Fault::Total(number(token, fields[0])?)
        }
        "slow" => {
            arity(2, "slow=N:MS")?;
            let millis = number(token, fields[1])?;
            if millis > MAX_SLOW_MS {
                return Err(ShopError::bad(format!(
                    "fault token `{token}`: at most {MAX_SLOW_MS} ms"
                )));
            }
            Fault::Slow {
                page: positive(token, fields[0])?,
                millis,
            }
        }
        "latency" => {
            arity(1, "latency=MS")?;
            let millis = number(token, fields[0])?;
            if millis > MAX_SLOW_MS {
                return Err(ShopError::bad(format!(
                    "fault token `{token}`: at most {MAX_SLOW_MS} ms"
                )));
            }
            Fault::Latency(millis)
        }
        "huge" => {
            arity(2, "huge=N:BYTES")?;
            let bytes = number(token, fields[1])?;
            if bytes > MAX_HUGE_BYTES {
                return Err(ShopError::bad(format!(
                    "fault token `{token}`: at most {MAX_HUGE_BYTES} bytes"
                )));
            }
            Fault::Huge {
                page: positive(token, fields[0])?,
                bytes,
            }
        }
        "status" => Fault::Status(parse_status(token, &fields)?),
        "rate" => {
            let form = "rate=N:MS[:headers]";
            let headers = match fields.as_slice() {
                [_, _] => false,
                [_, _, "headers"] => true,
                _ => {
                    return Err(ShopError::bad(format!(
                        "fault token `{token}`: expected `{form}`"
                    )))
                }
            };
            let window = positive(token, fields[1])?;
            if window > MAX_SLOW_MS {
                return Err(ShopError::bad(format!(
                    "fault token `{token}`: a window of at most {MAX_SLOW_MS} ms"
                )));
            }
            Fault::Rate(RateFault {
                limit: positive(token, fields[0])?,
                window: Duration::from_millis(window),
                headers,
            })
        }
        _ => {
            return Err(ShopError::bad(format!(
                "unknown fault token `{token}` in X-Shop-Fault"
            )))
        }
    };
    Ok(fault)
}

fn parse_status(token: &str, fields: &[&str]) -> Result<StatusFault, ShopError> {
    let form = "status=N:CODE[:always][:retry-after=S][:retry-after-date=S]";
    let [page, code, options @ ..] = fields else {
        return Err(ShopError::bad(format!(
            "fault token `{token}`: expected `{form}`"
        )));
    };
    let code: u16 = number(token, code)?;
    let code = StatusCode::from_u16(code)
        .ok()
        .filter(|c| c.is_client_error() || c.is_server_error())
        .ok_or_else(|| ShopError::bad(format!("fault token `{token}`: CODE must be 400..=599")))?;
    let mut fault = StatusFault {
        page: positive(token, page)?,
        code,
        always: false,
        retry_after: None,
    };
    for option in options {
        let retry = match option.split_once('=') {
            None if *option == "always" => {
                fault.always = true;
                continue;
            }
            Some(("retry-after", s)) => RetryAfter::Seconds(number(token, s)?),
            Some(("retry-after-date", s)) => RetryAfter::DateIn(number(token, s)?),
            _ => {
                return Err(ShopError::bad(format!(
                    "fault token `{token}`: unknown option `{option}` (expected `{form}`)"
                )))
            }
        };
        if fault.retry_after.replace(retry).is_some() {
            return Err(ShopError::bad(format!(
                "fault token `{token}`: at most one retry-after option"
            )));
        }
    }
    Ok(fault)
}

fn number<T: FromStr>(token: &str, text: &str) -> Result<T, ShopError> {
    text.trim().parse().map_err(|_| {
        ShopError::bad(format!(
            "fault token `{token}`: `{text}` is not a non-negative integer"
        ))
    })
}

fn positive(token: &str, text: &str) -> Result<u64, ShopError> {
    let value: u64 = number(token, text)?;
    if value == 0 {
        return Err(ShopError::bad(format!(
            "fault token `{token}`: `{text}` must be at least 1"
        )));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn parse(text: &str) -> Result<Faults, ShopError> {
        let mut headers = HeaderMap::new();
        headers.insert(FAULT_HEADER, HeaderValue::from_str(text).unwrap());
        Faults::from_headers(&headers)
    }

    #[test]
    fn latency_delays_every_page() {
        let faults = parse("latency=20,slow=2:5").unwrap();
        assert_eq!(faults.delay(1), Some(Duration::from_millis(20)));
        assert_eq!(faults.delay(2), Some(Duration::from_millis(25)));
        assert!(parse("latency=999999").is_err());
    }

    #[test]
    fn parses_every_token_kind() {
        let faults = parse(
            "ignore-page, cap=7,short-page=2,total=99,total-first-page-only,no-total,\
             status=3:429:always:retry-after=5,malformed=4,slow=1:20,huge=2:5000,\
             missing-collection=5,repeat-cursor=3,foreign-next=2",
        )
        .unwrap();
        let kinds: Vec<&Fault> = faults.all().collect();
        assert_eq!(kinds.len(), 13);
        assert!(faults.repeat_cursor(3) && !faults.repeat_cursor(2));
        assert!(faults.foreign_next(2) && !faults.foreign_next(3));
        assert!(parse("repeat-cursor=0").is_err());
        assert!(faults.ignore_page());
        assert_eq!(faults.cap(), Some(7));
        assert!(faults.short_page(2) && !faults.short_page(1));
        assert_eq!(faults.total(10, 1), None);
        assert!(faults.malformed(4));
        assert_eq!(faults.delay(1), Some(Duration::from_millis(20)));
        assert_eq!(faults.huge(2), Some(5000));
        assert!(faults.missing_collection(5));
        assert_eq!(
            kinds[6],
            &Fault::Status(StatusFault {
                page: 3,
                code: StatusCode::TOO_MANY_REQUESTS,
                always: true,
                retry_after: Some(RetryAfter::Seconds(5)),
            })
        );
    }

    #[test]
    fn totals_follow_their_faults() {
        assert_eq!(parse("total=5").unwrap().total(10, 3), Some(5));
        let first_only = parse("total-first-page-only").unwrap();
        assert_eq!(first_only.total(10, 1), Some(10));
        assert_eq!(first_only.total(10, 2), None);
        assert_eq!(parse("").unwrap().total(10, 2), Some(10));
    }

    #[test]
    fn rejects_bad_tokens_by_name() {
        for bad in [
            "cpa=3",
            "cap",
            "cap=0",
            "cap=x",
            "status=1",
            "status=1:200",
            "status=1:500:sometimes",
            "status=1:500:retry-after=1:retry-after-date=2",
            "slow=1:999999",
            "ignore-page=1",
            "rate=0:100",
            "rate=5",
            "rate=5:0",
            "rate=5:100:loud",
            "rate=5:999999",
        ] {
            let err = parse(bad).unwrap_err().to_string();
            assert!(err.contains(bad), "{bad}: {err}");
        }
    }

    #[test]
    fn rate_counts_per_server_across_sessions() {
        let once = OnceSet::default();
        let faults = parse("rate=2:60000:headers").unwrap();
        assert!(!faults.rate(&once).unwrap().limited);
        let mut headers = HeaderMap::new();
        headers.insert(FAULT_HEADER, HeaderValue::from_static("rate=2:60000"));
        headers.insert(SESSION_HEADER, HeaderValue::from_static("other"));
        let other = Faults::from_headers(&headers).unwrap();
        assert!(!other.rate(&once).unwrap().limited);
        assert!(faults.rate(&once).unwrap().limited);
        assert!(parse("cap=3").unwrap().rate(&once).is_none());
    }

    #[test]
    fn once_fires_once_per_session() {
        let once = OnceSet::default();
        let faults = parse("status=2:500").unwrap();
        assert!(faults.status_hit(1, &once).is_none());
        assert!(faults.status_hit(2, &once).is_some());
        assert!(faults.status_hit(2, &once).is_none());
        let mut headers = HeaderMap::new();
        headers.insert(FAULT_HEADER, HeaderValue::from_static("status=2:500"));
        headers.insert(SESSION_HEADER, HeaderValue::from_static("other"));
        let other = Faults::from_headers(&headers).unwrap();
        assert!(other.status_hit(2, &once).is_some());
    }
}
