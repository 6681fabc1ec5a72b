//! Small value checks shared by the compile passes: names (step ids,
//! provider and input names), durations and dot-paths. Every duration a
//! workflow sets has a ceiling (below), so no deadline built from one can
//! overflow.

use std::time::Duration;

pub use dragnet_located::names::{bad_name, is_name};

/// Longest step `timeout`.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 3600);
/// Longest pause between two tries of a step (`retry.delay`).
pub const MAX_RETRY_DELAY: Duration = Duration::from_secs(3600);
/// Longest `loop.cache.ttl_minutes`: a year.
pub const MAX_TTL_MINUTES: u64 = 365 * 24 * 60;

/// As `parse_duration`, refusing more than `max`; `what` names the setting.
pub fn parse_duration_upto(text: &str, what: &str, max: Duration) -> Result<Duration, String> {
    let d = parse_duration(text)?;
    if d > max {
        return Err(format!(
            "`{}` is longer than the longest {what}, {}",
            text.trim(),
            show(max)
        ));
    }
    Ok(d)
}

/// A whole duration in the largest unit that divides it: `24h`, `90s`.
fn show(d: Duration) -> String {
    let ms = d.as_millis();
    match ms {
        ms if ms > 0 && ms % 3_600_000 == 0 => format!("{}h", ms / 3_600_000),
        ms if ms > 0 && ms % 60_000 == 0 => format!("{}m", ms / 60_000),
        ms if ms % 1_000 == 0 => format!("{}s", ms / 1_000),
        ms => format!("{ms}ms"),
    }
}

/// `<n>ms`, `<n>s`, `<n>m` or `<n>h` with a whole number `n`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad = || {
        format!(
            "`{text}` is not a duration; write a whole number followed by ms, s, m or h (e.g. 30s)"
        )
    };
    let t = text.trim();
    let digits_end = t
        .bytes()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(t.len());
    let (digits, unit) = t.split_at(digits_end);
    let n: u64 = digits.parse().map_err(|_| bad())?;
    let duration = match unit {
        "ms" => Some(Duration::from_millis(n)),
        "s" => Some(Duration::from_secs(n)),
        "m" => n.checked_mul(60).map(Duration::from_secs),
        "h" => n.checked_mul(3600).map(Duration::from_secs),
        _ => return Err(bad()),
    };
    duration.ok_or_else(|| format!("`{text}` is too long a duration"))
}

/// Splits `data.items` into segments; an empty path or segment is refused.
pub fn dot_path(text: &str) -> Result<Vec<String>, String> {
    let t = text.trim();
    if t.is_empty() || t.split('.').any(str::is_empty) {
        return Err(format!(
            "`{text}` is not a dot-path; write field names joined by dots, e.g. data.items"
        ));
    }
    Ok(t.split('.').map(str::to_string).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(is_name("fetch_orders-2"));
        assert!(is_name("_x"));
        assert!(!is_name("2fetch"));
        assert!(!is_name("a.b"));
        assert!(!is_name(""));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert!(parse_duration("30").is_err());
        assert!(parse_duration("s").is_err());
        assert!(parse_duration("1.5s").is_err());
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("99999999999999999999h").is_err());
        assert!(parse_duration("18446744073709551615h").is_err());
    }

    #[test]
    fn durations_have_a_ceiling() {
        assert_eq!(
            parse_duration_upto("24h", "timeout", MAX_TIMEOUT),
            Ok(MAX_TIMEOUT)
        );
        assert_eq!(
            parse_duration_upto("86400001ms", "timeout", MAX_TIMEOUT),
            Err("`86400001ms` is longer than the longest timeout, 24h".to_string())
        );
        assert!(parse_duration_upto("18446744073709551615s", "timeout", MAX_TIMEOUT).is_err());
        assert_eq!(show(Duration::from_secs(90)), "90s");
        assert_eq!(show(Duration::from_secs(120)), "2m");
        assert_eq!(show(Duration::from_millis(1500)), "1500ms");
    }

    #[test]
    fn dot_paths() {
        assert_eq!(dot_path("data.items").unwrap(), vec!["data", "items"]);
        assert!(dot_path("data..items").is_err());
        assert!(dot_path("").is_err());
    }
}
