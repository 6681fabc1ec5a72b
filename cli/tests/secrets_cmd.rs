//! `dragnet secrets` on a store: a value read from stdin (its trailing
//! newline trimmed) is stored sealed — the database file never holds it —
//! listed by name and time only, and deleted; without DRAGNET_SECRETS_KEY
//! (or with one too short) setting is refused saying how to configure it;
//! unknown teams and bad names are refused.

mod common;

use std::io::Write;
use std::process::{Output, Stdio};

use common::{acme_token, command, fresh_db, stderr, stdout};

const KEY: &str = "a secrets key for the cli test, 32+ bytes";
const VALUE: &str = "cli-SECRET-61f0a9d3";

/// `dragnet secrets ARGS` on `db` with `key` (if any) and `input` on stdin.
fn secrets(db: &str, key: Option<&str>, args: &[&str], input: &str) -> Output {
    let mut c = command(db);
    c.arg("secrets")
        .args(args)
        .env_remove("DRAGNET_SECRETS_KEY");
    if let Some(k) = key {
        c.env("DRAGNET_SECRETS_KEY", k);
    }
    let mut child = c
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(input.as_bytes()).expect("stdin");
    }
    child.wait_with_output().expect("the binary ends")
}

#[test]
fn secrets_are_set_from_stdin_sealed_listed_by_name_and_deleted() {
    let db = fresh_db();
    acme_token(&db);
    let file = db.trim_start_matches("sqlite://").to_string();
    let said = |o: &Output| format!("{}{}", stdout(o), stderr(o));

    // No key: refused, saying how to configure one.
    let o = secrets(&db, None, &["set", "GITHUB_TOKEN", "--team", "acme"], VALUE);
    assert!(!o.status.success());
    assert!(said(&o).contains("DRAGNET_SECRETS_KEY"), "{}", said(&o));
    let o = secrets(&db, Some("short"), &["list", "--team", "acme"], "");
    assert!(!o.status.success());
    assert!(said(&o).contains("at least 32"), "{}", said(&o));

    // Set from stdin, the trailing newline trimmed.
    let o = secrets(
        &db,
        Some(KEY),
        &["set", "GITHUB_TOKEN", "--team", "acme"],
        &format!("{VALUE}\n"),
    );
    assert!(o.status.success(), "{}", said(&o));
    assert!(!said(&o).contains(VALUE));
    let stored = std::fs::read(&file).expect("the database file");
    assert!(
        !stored.windows(VALUE.len()).any(|w| w == VALUE.as_bytes()),
        "the database holds the value in the clear"
    );

    // Listed by name and time, never the value.
    let o = secrets(&db, Some(KEY), &["list", "--team", "acme"], "");
    assert!(o.status.success(), "{}", said(&o));
    assert!(stdout(&o).starts_with("GITHUB_TOKEN"), "{}", stdout(&o));
    assert!(stdout(&o).contains("updated "), "{}", stdout(&o));
    assert!(!said(&o).contains(VALUE));

    // Bad names and unknown teams are refused.
    let o = secrets(&db, Some(KEY), &["set", "1-BAD", "--team", "acme"], "x");
    assert!(!o.status.success());
    assert!(said(&o).contains("is not a secret name"), "{}", said(&o));
    let o = secrets(&db, Some(KEY), &["set", "TOKEN", "--team", "nobody"], "x");
    assert!(!o.status.success());
    assert!(said(&o).contains("no team `nobody`"), "{}", said(&o));

    // Deleted once; a second delete says there is none.
    let o = secrets(
        &db,
        Some(KEY),
        &["delete", "GITHUB_TOKEN", "--team", "acme"],
        "",
    );
    assert!(o.status.success(), "{}", said(&o));
    let o = secrets(
        &db,
        Some(KEY),
        &["delete", "GITHUB_TOKEN", "--team", "acme"],
        "",
    );
    assert!(!o.status.success());
    assert!(
        said(&o).contains("no secret `GITHUB_TOKEN`"),
        "{}",
        said(&o)
    );
    let o = secrets(&db, Some(KEY), &["list", "--team", "acme"], "");
    assert!(
        o.status.success() && stdout(&o).trim().is_empty(),
        "{}",
        said(&o)
    );
}
