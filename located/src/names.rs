//! Names in hand-written files (step ids, provider, input and agent
//! names): `^[A-Za-z_][A-Za-z0-9_-]*$`, and the message for one that is not.

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
