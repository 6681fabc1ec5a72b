//! The web UI's first pages over real HTTP, on both backends: sign-in sets
//! an HTTP-only, SameSite=Strict cookie (a dead token is refused); pages
//! without a session go to sign-in; a team sees its own runs and a run's
//! page with its DAG, statuses and verdict badges, and another team's run
//! reads as not found; workflows are listed and shown with their source,
//! DAG and a Run form typed by their inputs, which starts a run with them;
//! POST forms without the session's CSRF value are refused; sign-out
//! clears the cookie.

mod support;

use anyhow::{ensure, Context, Result};
use dragnet_store::{on_both_backends, Db};
use reqwest::header::{COOKIE, LOCATION, SET_COOKIE};
use reqwest::StatusCode;
use support::Api;

on_both_backends!(a_team_signs_in_and_sees_its_own_runs_only);

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
    ensure!(
        response.status() == StatusCode::SEE_OTHER,
        "{}",
        response.status()
    );
    let cookie = response
        .headers()
        .get(SET_COOKIE)
        .and_then(|v| v.to_str().ok())
        .context("a session cookie")?
        .to_string();
    ensure!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    Ok(cookie.split(';').next().unwrap_or_default().to_string())
}

async fn page(api: &Api, path: &str, cookie: &str) -> Result<(StatusCode, String)> {
    let response = browser()
        .get(format!("{}{path}", api.base))
        .header(COOKIE, cookie)
        .send()
        .await?;
    Ok((response.status(), response.text().await?))
}

async fn post(api: &Api, path: &str, cookie: &str, body: &str) -> Result<StatusCode> {
    Ok(browser()
        .post(format!("{}{path}", api.base))
        .header(COOKIE, cookie)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body.to_string())
        .send()
        .await?
        .status())
}

fn csrf_in(html: &str) -> Option<String> {
    let at = html.find("name=\"csrf\" value=\"")? + "name=\"csrf\" value=\"".len();
    Some(html[at..].split('"').next()?.to_string())
}

async fn a_team_signs_in_and_sees_its_own_runs_only(db: Db) -> Result<()> {
    let api = Api::start(db).await?;
    let a = api.team("acme").await?;
    let b = api.team("globex").await?;
    api.push(&a, "orders", &api.workflow("orders", None))
        .await?;
    let run = api
        .run(&a, "orders", r#"{"inputs": {"min_total": 100}}"#)
        .await?;
    api.finished(&a, &run).await?;

    // No session: every page goes to sign-in; the root goes to the runs.
    let root = browser().get(format!("{}/", api.base)).send().await?;
    ensure!(root.status() == StatusCode::SEE_OTHER);
    let (status, _) = page(&api, "/ui/runs", "dragnet_session=dnt_nothing").await?;
    ensure!(status == StatusCode::SEE_OTHER, "{status}");
    let refused = browser()
        .post(format!("{}/ui/sign-in", api.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("token=dnt_not_a_token")
        .send()
        .await?;
    ensure!(refused.status() == StatusCode::UNAUTHORIZED);
    ensure!(refused.text().await?.contains("not a live team token"));

    let mine = sign_in(&api, &a).await?;
    let (status, list) = page(&api, "/ui/runs", &mine).await?;
    ensure!(status == StatusCode::OK, "{status}");
    ensure!(list.contains(&run), "{list}");
    let (status, shown) = page(&api, &format!("/ui/runs/{run}"), &mine).await?;
    ensure!(status == StatusCode::OK, "{status}");
    ensure!(shown.contains("<svg"), "{shown}");
    for step in ["properties", "open_orders"] {
        ensure!(
            shown.contains(&format!("data-step=\"{step}\"")),
            "{step}: {shown}"
        );
    }
    ensure!(
        shown.contains("status-succeeded") && shown.contains(">complete<"),
        "{shown}"
    );
    ensure!(
        shown.contains("data-from=\"properties\" data-to=\"open_orders\"")
            && shown.contains("marker-end=\"url(#dag-arrow)\""),
        "the edge from properties to open_orders, with its arrowhead"
    );
    // The step's first rows, with the projected fields as columns, and
    // its JSON behind a toggle.
    ensure!(shown.contains("<th>id</th><th>total</th>"), "{shown}");
    ensure!(shown.contains("<details><summary>JSON"), "{shown}");

    // Another team: not found, and not listed.
    let theirs = sign_in(&api, &b).await?;
    let (status, _) = page(&api, &format!("/ui/runs/{run}"), &theirs).await?;
    ensure!(status == StatusCode::NOT_FOUND, "{status}");
    let (_, list) = page(&api, "/ui/runs", &theirs).await?;
    ensure!(!list.contains(&run), "{list}");

    // Workflows: listed, shown with their source and a Run form typed by
    // their inputs; a run started from it; another team's not found.
    let (_, listed) = page(&api, "/ui/workflows", &mine).await?;
    ensure!(listed.contains("href=\"/ui/workflows/orders\""), "{listed}");
    let (status, wf) = page(&api, "/ui/workflows/orders", &mine).await?;
    ensure!(status == StatusCode::OK, "{status}");
    ensure!(
        wf.contains("<span class=\"k\">name</span>"),
        "the source, highlighted"
    );
    ensure!(
        wf.contains("name=\"in.min_total\" type=\"number\" step=\"any\" value=\"500\""),
        "{wf}"
    );
    ensure!(wf.contains("data-step=\"open_orders\""), "its DAG");
    let wf_csrf = csrf_in(&wf).context("the form's CSRF value")?;
    ensure!(
        post(&api, "/ui/workflows/orders/run", &mine, "in.min_total=100").await?
            == StatusCode::FORBIDDEN
    );
    let started = browser()
        .post(format!("{}/ui/workflows/orders/run", api.base))
        .header(COOKIE, &mine)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("csrf={wf_csrf}&in.min_total=250"))
        .send()
        .await?;
    ensure!(
        started.status() == StatusCode::SEE_OTHER,
        "{}",
        started.status()
    );
    let to = started
        .headers()
        .get(LOCATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let new_run = to.trim_start_matches("/ui/runs/").to_string();
    let record = api.finished(&a, &new_run).await?;
    ensure!(record["inputs"]["min_total"] == 250, "{record}");
    let refused = browser()
        .post(format!("{}/ui/workflows/orders/run", api.base))
        .header(COOKIE, &mine)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("csrf={wf_csrf}&in.min_total=lots"))
        .send()
        .await?;
    ensure!(
        refused.status() == StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.status()
    );
    let said = refused.text().await?;
    ensure!(
        said.contains("min_total") && said.contains("Back"),
        "{said}"
    );
    let (status, _) = page(&api, "/ui/workflows/orders", &sign_in(&api, &b).await?).await?;
    ensure!(status == StatusCode::NOT_FOUND, "{status}");
    let (status, schedules) = page(&api, "/ui/schedules", &mine).await?;
    ensure!(
        status == StatusCode::OK && schedules.contains("No schedules"),
        "{schedules}"
    );

    // Run again from a step: the earlier step keeps its output.
    let properties = || {
        api.shop
            .requests()
            .iter()
            .filter(|r| r.path == "/properties")
            .count()
    };
    let properties_before = properties();
    let again = browser()
        .post(format!("{}/ui/runs/{run}/rerun", api.base))
        .header(COOKIE, &mine)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("csrf={wf_csrf}&from=open_orders"))
        .send()
        .await?;
    ensure!(
        again.status() == StatusCode::SEE_OTHER,
        "{}",
        again.status()
    );
    let rerun = again
        .headers()
        .get(LOCATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .trim_start_matches("/ui/runs/")
        .to_string();
    let done = api.finished(&a, &rerun).await?;
    ensure!(done["status"] == "succeeded", "{done}");
    ensure!(
        properties() == properties_before,
        "properties was kept, not fetched again"
    );

    // The list filters by workflow and status and pages with a cursor.
    let (_, partial) = page(&api, "/ui/runs?status=partial", &mine).await?;
    ensure!(partial.contains("No runs."), "{partial}");
    let (_, other) = page(&api, "/ui/runs?workflow=nope", &mine).await?;
    ensure!(other.contains("No runs."), "{other}");
    let (_, later) = page(&api, "/ui/runs?since=2999-01-01", &mine).await?;
    ensure!(later.contains("No runs."), "{later}");
    let (_, since) = page(&api, "/ui/runs?since=2000-01-01", &mine).await?;
    ensure!(since.contains(&run), "{since}");
    let (_, first) = page(&api, "/ui/runs?status=succeeded&limit=1", &mine).await?;
    let older = first
        .split("href=\"")
        .find(|h| h.starts_with("/ui/runs?after="))
        .and_then(|h| h.split('"').next())
        .context("a link to older runs")?
        .replace("&amp;", "&");
    let (_, second) = page(&api, &older, &mine).await?;
    let ids = |html: &str| -> Vec<String> {
        html.split("href=\"/ui/runs/")
            .skip(1)
            .filter_map(|h| h.split('"').next().map(String::from))
            .collect()
    };
    ensure!(ids(&first).len() == 1 && ids(&second).len() == 1, "{first}");
    ensure!(
        ids(&first) != ids(&second),
        "the next page holds the next run"
    );

    // Forms need the session's CSRF value.
    let csrf = csrf_in(&shown).context("a CSRF value in the page")?;
    let cancel = format!("/ui/runs/{run}/cancel");
    ensure!(post(&api, &cancel, &mine, "").await? == StatusCode::FORBIDDEN);
    ensure!(post(&api, &cancel, &mine, "csrf=0123").await? == StatusCode::FORBIDDEN);
    let their_csrf = csrf_in(&list).context("their CSRF value")?;
    ensure!(their_csrf != csrf, "one per session");
    ensure!(
        post(&api, "/ui/sign-out", &mine, &format!("csrf={their_csrf}")).await?
            == StatusCode::FORBIDDEN
    );
    let out = browser()
        .post(format!("{}/ui/sign-out", api.base))
        .header(COOKIE, &mine)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("csrf={csrf}"))
        .send()
        .await?;
    ensure!(out.status() == StatusCode::SEE_OTHER);
    ensure!(out.headers().get(LOCATION).is_some());
    let cleared = out
        .headers()
        .get(SET_COOKIE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    ensure!(cleared.contains("Max-Age=0"), "{cleared}");
    api.stop().await
}

on_both_backends!(the_cache_page_shows_and_purges_the_teams_entries_only);

async fn the_cache_page_shows_and_purges_the_teams_entries_only(db: Db) -> Result<()> {
    let api = Api::start(db.clone()).await?;
    let cached = api.workflow("orders", None).replace(
        // The fan-out walk (plain calls are never cached).
        "    loop:\n      all_pages: true\n",
        "    loop:\n      all_pages: true\n      cache: { ttl_minutes: 60 }\n",
    );
    let a = api.team("acme").await?;
    let b = api.team("globex").await?;
    for token in [&a, &b] {
        let (status, v) = api.push(token, "orders", &cached).await?;
        ensure!(status.is_success(), "{status}: {v}");
        let run = api.run(token, "orders", "{}").await?;
        api.finished(token, &run).await?;
    }
    ensure!(
        db.cache().cache_list().await?.len() == 2,
        "one entry per team"
    );
    let mine = sign_in(&api, &a).await?;
    let (status, shown) = page(&api, "/ui/cache", &mine).await?;
    ensure!(status == StatusCode::OK, "{status}");
    ensure!(
        shown.contains("listPropertyOrders") && shown.matches("<tr><td class=\"id\">").count() == 1,
        "{shown}"
    );
    let csrf = csrf_in(&shown).context("the purge form's CSRF value")?;
    ensure!(post(&api, "/ui/cache/purge", &mine, "").await? == StatusCode::FORBIDDEN);
    ensure!(db.cache().cache_list().await?.len() == 2);
    ensure!(
        post(&api, "/ui/cache/purge", &mine, &format!("csrf={csrf}")).await?
            == StatusCode::SEE_OTHER
    );
    let left = db.cache().cache_list().await?;
    ensure!(left.len() == 1, "only the team's entry went: {left:?}");
    let (_, shown) = page(&api, "/ui/cache", &mine).await?;
    ensure!(shown.contains("No cached walks"), "{shown}");
    api.stop().await
}

on_both_backends!(the_editor_checks_as_it_goes_and_pushes_a_version);

async fn the_editor_checks_as_it_goes_and_pushes_a_version(db: Db) -> Result<()> {
    let api = Api::start(db).await?;
    let a = api.team("acme").await?;
    let yaml = api.workflow("orders", None);
    api.push(&a, "orders", &yaml).await?;
    let mine = sign_in(&api, &a).await?;
    let (status, editor) = page(&api, "/ui/workflows/orders/edit", &mine).await?;
    ensure!(status == StatusCode::OK, "{status}");
    ensure!(editor.contains("<textarea id=\"source\""), "{editor}");
    let csrf = csrf_in(&editor).context("the editor's CSRF value")?;
    let check = |text: String, csrf: Option<String>| {
        let mut request = browser()
            .post(format!("{}/ui/validate?base=orders", api.base))
            .header(COOKIE, &mine)
            .header("content-type", "text/plain")
            .body(text);
        if let Some(c) = csrf {
            request = request.header("x-dragnet-csrf", c);
        }
        request.send()
    };
    ensure!(check(yaml.clone(), None).await?.status() == StatusCode::FORBIDDEN);
    let broken = yaml.replace(
        "tool: shop.listPropertyOrders",
        "tool: shop.listPropertyOrderz",
    );
    let v: serde_json::Value = check(broken.clone(), Some(csrf.clone()))
        .await?
        .json()
        .await?;
    ensure!(v["valid"] == false, "{v}");
    let first = &v["diagnostics"][0];
    ensure!(
        first["line"].as_u64().unwrap_or(0) > 1
            && first["message"]
                .as_str()
                .unwrap_or("")
                .contains("listPropertyOrderz"),
        "a located diagnostic: {v}"
    );
    let v: serde_json::Value = check(yaml.clone(), Some(csrf.clone()))
        .await?
        .json()
        .await?;
    ensure!(v["valid"] == true, "{v}");

    // Pushing: a broken text comes back with its problems; a fixed one is
    // a new version.
    let encode = |text: &str| -> String {
        text.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect()
    };
    let push = |text: &str| {
        browser()
            .post(format!("{}/ui/workflows/orders/edit", api.base))
            .header(COOKIE, &mine)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!("csrf={csrf}&source={}", encode(text)))
            .send()
    };
    let refused = push(&broken).await?;
    ensure!(
        refused.status() == StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.status()
    );
    ensure!(refused.text().await?.contains("listPropertyOrderz"));
    let fixed = yaml.replace("default: 500", "default: 400");
    let pushed = push(&fixed).await?;
    ensure!(
        pushed.status() == StatusCode::SEE_OTHER,
        "{}",
        pushed.status()
    );
    let (_, wf) = page(&api, "/ui/workflows/orders", &mine).await?;
    ensure!(
        wf.contains("version 2") && wf.contains("value=\"400\""),
        "{wf}"
    );
    // The two versions, compared line by line.
    ensure!(wf.contains("Compare version"), "{wf}");
    let (status, diff) = page(&api, "/ui/workflows/orders/diff?from=1&to=2", &mine).await?;
    ensure!(status == StatusCode::OK, "{status}");
    ensure!(
        diff.contains("<span class=\"del\">-     default: 500</span>")
            && diff.contains("<span class=\"add\">+     default: 400</span>"),
        "{diff}"
    );
    ensure!(
        diff.matches("class=\"add\"").count() == 1,
        "one line changed: {diff}"
    );
    api.stop().await
}

on_both_backends!(the_schedules_page_pauses_and_resumes_a_schedule);

async fn the_schedules_page_pauses_and_resumes_a_schedule(db: Db) -> Result<()> {
    let api = Api::start(db).await?;
    let a = api.team("acme").await?;
    let b = api.team("bravo").await?;
    let yaml = api
        .workflow("orders", None)
        .replace("steps:\n", "triggers:\n  - cron: \"0 2 * * *\"\nsteps:\n");
    let (status, v) = api.push(&a, "orders", &yaml).await?;
    ensure!(status.as_u16() == 201, "{status} {v}");
    let (_, listed) = api.get("/v1/schedules", &a).await?;
    let id = listed["schedules"][0]["schedule_id"]
        .as_str()
        .context("a schedule")?
        .to_string();
    let mine = sign_in(&api, &a).await?;
    let (_, shown) = page(&api, "/ui/schedules", &mine).await?;
    ensure!(shown.contains("name=\"reason\""), "a pause form: {shown}");
    let csrf = csrf_in(&shown).context("the form's CSRF value")?;
    let pause = format!("/ui/schedules/{id}/pause");
    // Without the session's CSRF value nothing happens; a reason is needed.
    ensure!(post(&api, &pause, &mine, "reason=x").await? == StatusCode::FORBIDDEN);
    let no_reason = format!("csrf={csrf}&reason=");
    ensure!(post(&api, &pause, &mine, &no_reason).await? == StatusCode::BAD_REQUEST);
    // Another team's session cannot reach it.
    let theirs = sign_in(&api, &b).await?;
    let (_, their_page) = page(&api, "/ui/schedules", &theirs).await?;
    let their_csrf = csrf_in(&their_page).unwrap_or_default();
    let body = format!("csrf={their_csrf}&reason=mine+now");
    ensure!(post(&api, &pause, &theirs, &body).await? == StatusCode::NOT_FOUND);
    let body = format!("csrf={csrf}&reason=the+shop+is+moving");
    ensure!(post(&api, &pause, &mine, &body).await? == StatusCode::SEE_OTHER);
    let (_, shown) = page(&api, "/ui/schedules", &mine).await?;
    ensure!(
        shown.contains("(paused)") && shown.contains("the shop is moving"),
        "{shown}"
    );
    ensure!(shown.contains(">Resume</button>"), "{shown}");
    let resume = format!("/ui/schedules/{id}/resume");
    ensure!(post(&api, &resume, &mine, &format!("csrf={csrf}")).await? == StatusCode::SEE_OTHER);
    let (_, listed) = api.get("/v1/schedules", &a).await?;
    ensure!(listed["schedules"][0]["paused"].is_null(), "{listed}");
    // Resuming what is not paused says why.
    ensure!(post(&api, &resume, &mine, &format!("csrf={csrf}")).await? == StatusCode::CONFLICT);
    api.stop().await
}
