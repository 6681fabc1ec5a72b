//! Team secrets at rest on both backends: a secret round-trips sealed (the
//! stored bytes never hold the value), a listing gives names and update
//! times only, setting again replaces, deleting removes, and a sealed value
//! copied into another team's row — or under another name — does not open.

use anyhow::{ensure, Context, Result};
use chrono::{DateTime, Duration, Utc};
use dragnet_core::secret::Secret;
use dragnet_http::Sealer;
use dragnet_store::{on_both_backends, open_secret, seal_secret, Db};

on_both_backends!(team_secrets_round_trip_sealed_and_stay_their_teams);

fn at() -> DateTime<Utc> {
    DateTime::from_timestamp(1_790_000_000, 0).unwrap_or_default()
}

const VALUE: &str = "ghp-SECRET-a5f1c09e";

async fn team_secrets_round_trip_sealed_and_stay_their_teams(db: Db) -> Result<()> {
    db.teams().create_team("t_a", "a", at()).await?;
    db.teams().create_team("t_b", "b", at()).await?;
    let sealer = Sealer::new(b"the operator's secrets key, 32+ bytes long")?;
    let sealed = seal_secret(&sealer, "t_a", "GITHUB_TOKEN", &Secret::new(VALUE))?;
    ensure!(
        !sealed.windows(VALUE.len()).any(|w| w == VALUE.as_bytes()),
        "the sealed bytes hold the value"
    );
    db.secrets()
        .put_secret("t_a", "GITHUB_TOKEN", &sealed, at())
        .await?;

    // Round trip: what is stored opens as team a's GITHUB_TOKEN only.
    let stored = db
        .secrets()
        .get_sealed_secret("t_a", "GITHUB_TOKEN")
        .await?
        .context("the secret is stored")?;
    ensure!(stored == sealed, "the stored bytes changed");
    let opened = open_secret(&sealer, "t_a", "GITHUB_TOKEN", &stored).context("it opens")?;
    ensure!(opened.expose() == VALUE);
    ensure!(db
        .secrets()
        .get_sealed_secret("t_b", "GITHUB_TOKEN")
        .await?
        .is_none());
    ensure!(db
        .secrets()
        .get_sealed_secret("t_a", "OTHER")
        .await?
        .is_none());

    // The sealed value copied into team b's row does not open for b, nor
    // under another name of a's.
    db.secrets()
        .put_secret("t_b", "GITHUB_TOKEN", &stored, at())
        .await?;
    let copied = db
        .secrets()
        .get_sealed_secret("t_b", "GITHUB_TOKEN")
        .await?
        .context("the copy is stored")?;
    ensure!(open_secret(&sealer, "t_b", "GITHUB_TOKEN", &copied).is_none());
    db.secrets()
        .put_secret("t_a", "OTHER", &stored, at())
        .await?;
    ensure!(open_secret(&sealer, "t_a", "OTHER", &stored).is_none());
    // Another key opens nothing.
    let other = Sealer::new(b"another operator's key, also 32+ bytes")?;
    ensure!(open_secret(&other, "t_a", "GITHUB_TOKEN", &stored).is_none());

    // A listing: names and update times, in name order; no value anywhere.
    let list = db.secrets().list_secrets("t_a").await?;
    let names: Vec<&str> = list.iter().map(|s| s.name.as_str()).collect();
    ensure!(names == ["GITHUB_TOKEN", "OTHER"], "{names:?}");
    ensure!(list.iter().all(|s| s.updated_at == at()), "{list:?}");
    let shown = format!("{list:?} {}", serde_json::to_string(&list)?);
    ensure!(!shown.contains(VALUE), "{shown}");
    ensure!(db.secrets().list_secrets("t_b").await?.len() == 1);
    let all = db.secrets().sealed_secrets("t_a").await?;
    ensure!(all.len() == 2, "{}", all.len());

    // Setting again replaces the value and its time.
    let later = at() + Duration::minutes(5);
    let again = seal_secret(
        &sealer,
        "t_a",
        "GITHUB_TOKEN",
        &Secret::new("new-value-123"),
    )?;
    db.secrets()
        .put_secret("t_a", "GITHUB_TOKEN", &again, later)
        .await?;
    let stored = db
        .secrets()
        .get_sealed_secret("t_a", "GITHUB_TOKEN")
        .await?
        .context("still stored")?;
    let opened = open_secret(&sealer, "t_a", "GITHUB_TOKEN", &stored).context("it opens")?;
    ensure!(opened.expose() == "new-value-123");
    let list = db.secrets().list_secrets("t_a").await?;
    ensure!(list[0].updated_at == later, "{list:?}");

    // Deleting removes it (and says whether there was one).
    ensure!(db.secrets().delete_secret("t_a", "GITHUB_TOKEN").await?);
    ensure!(!db.secrets().delete_secret("t_a", "GITHUB_TOKEN").await?);
    ensure!(db
        .secrets()
        .get_sealed_secret("t_a", "GITHUB_TOKEN")
        .await?
        .is_none());
    ensure!(db
        .secrets()
        .get_sealed_secret("t_b", "GITHUB_TOKEN")
        .await?
        .is_some());
    Ok(())
}
