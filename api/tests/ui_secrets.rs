//! The web UI's Secrets page over real HTTP, on both backends: a team sets
//! a secret with the page's form (refused without the session's CSRF
//! value), sees its name and update time but never its value, another
//! team sees none of it, and the delete button removes it. Without
//! `DRAGNET_SECRETS_KEY` the page says how to configure it and a set is
//! refused.

mod support;

use std::sync::Arc;

use anyhow::{ensure, Context, Result};
use dragnet_api::ServerConfig;
use dragnet_http::Sealer;
use dragnet_runner::RunnerConfig;
use dragnet_store::{on_both_backends, Db};
use reqwest::header::{COOKIE, SET_COOKIE};
use reqwest::StatusCode;
use support::Api;

on_both_backends!(
    a_team_sets_lists_and_deletes_its_secrets_on_the_page,
    without_a_key_the_page_says_how_to_configure_one,
);

const VALUE: &str = "ui-SECRET-4c8d2e";

fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("a client")
}

/// Signs in with `token`; the session cookie (`name=value`).
async fn sign_in(api: &Api, token: &str) -> Result<String> {
    let response = browser()
        .post(format!("{}/ui/sign-in", api.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={token}"))
        .send()
        .await?;
    ensure!(response.status() == StatusCode::SEE_OTHER);
    let cookie = response
        .headers()
        .get(SET_COOKIE)
        .and_then(|v| v.to_str().ok())
        .context("a session cookie")?;
    Ok(cookie.split(';').next().unwrap_or_default().to_string())
}

async fn page(api: &Api, cookie: &str) -> Result<(StatusCode, String)> {
    let response = browser()
        .get(format!("{}/ui/secrets", api.base))
        .header(COOKIE, cookie)
        .send()
        .await?;
    Ok((response.status(), response.text().await?))
}

async fn post(api: &Api, path: &str, cookie: &str, body: &str) -> Result<(StatusCode, String)> {
    let response = browser()
        .post(format!("{}{path}", api.base))
        .header(COOKIE, cookie)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body.to_string())
        .send()
        .await?;
    Ok((response.status(), response.text().await?))
}

fn csrf_in(html: &str) -> Option<String> {
    let at = html.find("name=\"csrf\" value=\"")? + "name=\"csrf\" value=\"".len();
    Some(html[at..].split('"').next()?.to_string())
}

async fn a_team_sets_lists_and_deletes_its_secrets_on_the_page(db: Db) -> Result<()> {
    let config = ServerConfig {
        runner: RunnerConfig {
            secrets: Some(Arc::new(Sealer::new(
                b"the operator's secrets key: 32 bytes or more",
            )?)),
            ..RunnerConfig::default()
        },
        ..ServerConfig::default()
    };
    let api = Api::start_with(db.clone(), config).await?;
    let a = api.team("acme").await?;
    let b = api.team("globex").await?;
    let mine = sign_in(&api, &a).await?;
    let (status, shown) = page(&api, &mine).await?;
    ensure!(status == StatusCode::OK, "{status}");
    ensure!(
        shown.contains("No secrets yet") && shown.contains("href=\"/ui/secrets\""),
        "{shown}"
    );
    let csrf = csrf_in(&shown).context("a CSRF value")?;

    // Without the session's CSRF value nothing is set.
    let form = format!("name=GITHUB_TOKEN&value={VALUE}");
    let (status, _) = post(&api, "/ui/secrets", &mine, &form).await?;
    ensure!(status == StatusCode::FORBIDDEN, "{status}");
    ensure!(api
        .db
        .secrets()
        .list_secrets(&team_id(&api, "acme").await?)
        .await?
        .is_empty());

    let (status, body) = post(&api, "/ui/secrets", &mine, &format!("csrf={csrf}&{form}")).await?;
    ensure!(status == StatusCode::SEE_OTHER, "{status} {body}");
    let (_, shown) = page(&api, &mine).await?;
    ensure!(shown.contains("GITHUB_TOKEN"), "{shown}");
    ensure!(!shown.contains(VALUE), "the value is shown: {shown}");
    // A bad name is said on the page.
    let (status, body) = post(
        &api,
        "/ui/secrets",
        &mine,
        &format!("csrf={csrf}&name=1-bad&value=x"),
    )
    .await?;
    ensure!(
        status == StatusCode::UNPROCESSABLE_ENTITY && body.contains("is not a secret name"),
        "{status} {body}"
    );

    // Another team's page shows none of it.
    let theirs = sign_in(&api, &b).await?;
    let (_, shown) = page(&api, &theirs).await?;
    ensure!(
        shown.contains("No secrets yet") && !shown.contains("GITHUB_TOKEN"),
        "{shown}"
    );
    // Nor can it delete it (its session's CSRF value, a's secret's name).
    let their_csrf = csrf_in(&shown).context("their CSRF value")?;
    post(
        &api,
        "/ui/secrets/GITHUB_TOKEN/delete",
        &theirs,
        &format!("csrf={their_csrf}"),
    )
    .await?;
    ensure!(
        api.db
            .secrets()
            .list_secrets(&team_id(&api, "acme").await?)
            .await?
            .len()
            == 1
    );

    // The delete button.
    let (status, _) = post(&api, "/ui/secrets/GITHUB_TOKEN/delete", &mine, "").await?;
    ensure!(status == StatusCode::FORBIDDEN, "{status}");
    let (status, _) = post(
        &api,
        "/ui/secrets/GITHUB_TOKEN/delete",
        &mine,
        &format!("csrf={csrf}"),
    )
    .await?;
    ensure!(status == StatusCode::SEE_OTHER, "{status}");
    let (_, shown) = page(&api, &mine).await?;
    ensure!(shown.contains("No secrets yet"), "{shown}");
    api.stop().await
}

async fn team_id(api: &Api, name: &str) -> Result<String> {
    Ok(api
        .db
        .teams()
        .team_by_name(name)
        .await?
        .context("the team")?
        .team_id)
}

async fn without_a_key_the_page_says_how_to_configure_one(db: Db) -> Result<()> {
    let api = Api::start(db).await?;
    let a = api.team("acme").await?;
    let mine = sign_in(&api, &a).await?;
    let (status, shown) = page(&api, &mine).await?;
    ensure!(
        status == StatusCode::OK && shown.contains("DRAGNET_SECRETS_KEY"),
        "{shown}"
    );
    let csrf = csrf_in(&shown).context("a CSRF value")?;
    let (status, body) = post(
        &api,
        "/ui/secrets",
        &mine,
        &format!("csrf={csrf}&name=TOKEN&value=abcdef"),
    )
    .await?;
    ensure!(
        status == StatusCode::UNPROCESSABLE_ENTITY && body.contains("DRAGNET_SECRETS_KEY"),
        "{status} {body}"
    );
    api.stop().await
}
