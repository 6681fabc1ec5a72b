//! Small value checks shared by the compile passes: names (step ids,
//! provider and input names), durations and dot-paths.

use std::time::Duration;

/// `^[A-Za-z_][A-Za-z0-9_-]*$`.
pub fn is_name(s: &str) -> bool {
    let mut bytes = s.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The message for a name that `is_name` refuses.
pub fn bad_name(what: &str, name: &str) -> String {
    format!(
        "invalid {what} `{name}`: use letters, digits, `_` and `-`, starting with a letter or `_`"
    )
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
    fn dot_paths() {
        assert_eq!(dot_path("data.items").unwrap(), vec!["data", "items"]);
        assert!(dot_path("data..items").is_err());
        assert!(dot_path("").is_err());
    }
}
