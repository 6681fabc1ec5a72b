//! A schema of its own on the test PostgreSQL (`DATABASE_URL`, else the
//! local server), for suites that run the binary on PostgreSQL.

use std::process::Command;

use super::{stderr, stdout};

/// A fresh schema of the test PostgreSQL, dropped when this is.
pub struct Schema {
    pub url: String,
    base: String,
    name: String,
}

impl Schema {
    pub fn new(tag: &str) -> Schema {
        let base = std::env::var("DATABASE_URL")
            .ok()
            .filter(|u| u.starts_with("postgres"))
            .unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432/postgres".into());
        let name = format!("dragnet_{tag}_{:08x}", std::process::id());
        let made = Command::new("psql")
            .args([&base, "-q", "-c", &format!("CREATE SCHEMA {name}")])
            .output()
            .expect("psql runs (the PostgreSQL client)");
        assert!(made.status.success(), "{}", stderr(&made));
        let separator = if base.contains('?') { '&' } else { '?' };
        let url = format!("{base}{separator}options[search_path]={name}");
        Schema { url, base, name }
    }

    /// The rows of `sql`, each a `|`-separated line.
    pub fn query(&self, sql: &str) -> Vec<String> {
        let out = Command::new("psql")
            .env("PGOPTIONS", format!("-c search_path={}", self.name))
            .args([&self.base, "-At", "-c", sql])
            .output()
            .expect("psql runs");
        assert!(out.status.success(), "{sql}: {}", stderr(&out));
        stdout(&out).lines().map(str::to_string).collect()
    }

    pub fn one(&self, sql: &str) -> String {
        self.query(sql).into_iter().next().unwrap_or_default()
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        let _ = Command::new("psql")
            .args([
                &self.base,
                "-q",
                "-c",
                &format!("DROP SCHEMA {} CASCADE", self.name),
            ])
            .output();
    }
}
