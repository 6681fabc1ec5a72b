//! The web UI in a real headless Chromium (Debian's `chromium` and
//! `chromium-driver`, which `.ci/run` installs), driven over W3C WebDriver
//! by a few plain HTTP calls: sign in by typing the token, push a new
//! version through the editor after it showed a mistake at its line and
//! then the fix, run it from its page and see it end partial with its
//! rows, see the team's
//! runs, open a run whose walk hit its request bound and see its DAG with a
//! `partial: requests` badge, watch a slow run's progress bar move with
//! the event stream and cancel it from its page, be refused
//! another team's run, and keep the layout inside a 390 px wide window.
//! A second test reads a branching run whose workflow is named `a&b#c`:
//! every number, status, id and time cell and every header one line tall
//! at 1280 and 390 px (measured with the DOM's client rects), no DAG edge
//! through a step's box (sampled along each SVG path against the boxes)
//! and an arrowhead on each, the skipped step drawn skipped, the editor's
//! gutter, highlighting and completion, and the workflow reached through
//! every link that names it (list, page, edit, runs filter, "Older runs",
//! the run's page, schedules).
//! Screenshots are saved beside the test's binary (`ui-*.png`); those in
//! `docs/ui/` are copies.

mod browser;
mod support;

use std::time::Duration;

use anyhow::ensure;
use browser::{driver, Browser};
use dragnet_api::ServerConfig;
use dragnet_core::Limits;
use dragnet_runner::RunnerConfig;
use serde_json::json;
use support::Api;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_browser_a_team_signs_in_reads_a_partial_run_and_cancels_a_slow_one() {
    dragnet_store::testing::on_sqlite(|db| async move {
        // Ten requests per call: the fan-out over thirty properties ends partial.
        let config = ServerConfig {
            runner: RunnerConfig {
                limits: Limits {
                    max_requests: 10,
                    ..Limits::default()
                },
                ..RunnerConfig::default()
            },
            ..ServerConfig::default()
        };
        let api = Api::start_with(db, config).await?;
        let a = api.team("acme").await?;
        let b = api.team("globex").await?;
        api.push(&a, "orders", &api.workflow("orders", None))
            .await?;
        let bounded = api
            .run(&a, "orders", r#"{"inputs": {"min_total": 0}}"#)
            .await?;
        api.finished(&a, &bounded).await?;
        api.push(&b, "orders", &api.workflow("orders", None))
            .await?;
        let theirs = api.run(&b, "orders", "{}").await?;
        api.finished(&b, &theirs).await?;

        let d = driver().await?;
        let web = Browser::open(&d).await?;
        web.go(&format!("{}/ui/runs", api.base)).await?;
        ensure!(
            web.url().await?.ends_with("/ui/sign-in"),
            "{}",
            web.url().await?
        );
        web.type_into("#token", "dnt_wrong").await?;
        web.click("button[type=submit]").await?;
        web.when_shows("not a live team token").await?;
        web.clear("#token").await?;
        web.type_into("#token", &a).await?;
        web.click("button[type=submit]").await?;
        web.when_at("/ui/runs").await?;
        let list = web.source().await?;
        ensure!(list.contains(&bounded) && !list.contains(&theirs), "{list}");
        web.shot("runs").await?;

        web.click(&format!("a[href='/ui/runs/{bounded}']")).await?;
        let shown = web.when_shows("partial: requests").await?;
        ensure!(shown.contains("data-step=\"open_orders\""));
        web.shot("run-partial").await?;

        // Narrow: nothing wider than the window, on every page.
        web.size(390, 844).await?;
        let pages = [
            format!("/ui/runs/{bounded}"),
            "/ui/runs".to_string(),
            "/ui/workflows".to_string(),
            "/ui/workflows/orders".to_string(),
            "/ui/workflows/orders/edit".to_string(),
            "/ui/schedules".to_string(),
            "/ui/cache".to_string(),
        ];
        for path in &pages {
            web.go(&format!("{}{path}", api.base)).await?;
            let wide = web
                .script(
                    "return [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)\
                     .slice(0, 3).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)).join(', ');",
                )
                .await?;
            let scroll = web
                .script("return document.documentElement.scrollWidth <= window.innerWidth + 1;")
                .await?;
            ensure!(wide == "" && scroll == true, "{path} is wider than 390 px: {wide}");
            if path.starts_with("/ui/runs/") {
                web.shot("run-narrow").await?;
            }
        }
        web.size(1280, 900).await?;

        // The editor: a mistake is shown at its line as it is typed, the
        // fix clears it, and Push makes a new version.
        web.go(&format!("{}/ui/workflows/orders/edit", api.base)).await?;
        let yaml = api.workflow("orders", None);
        let set = |text: &str| {
            format!(
                "const t=document.getElementById('source');t.value={};t.dispatchEvent(new Event('input'));return true;",
                serde_json::to_string(text).unwrap_or_default()
            )
        };
        let broken = yaml.replace("tool: shop.listPropertyOrders", "tool: shop.listPropertyOrderz");
        web.script(&set(&broken)).await?;
        let problems = "return [...document.querySelectorAll('#diagnostics li')].map(l => l.textContent).join('\\n');";
        let mut shown = String::new();
        for _ in 0..100 {
            shown = web.script(problems).await?.as_str().unwrap_or_default().to_string();
            if !shown.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ensure!(shown.contains("listPropertyOrderz") && shown.contains(':'), "a located problem: {shown:?}");
        web.shot("editor-problem").await?;
        web.script(&set(&yaml.replace("default: 500", "default: 450"))).await?;
        let valid = "return document.getElementById('state').textContent;";
        for _ in 0..100 {
            if web.script(valid).await? == "valid" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ensure!(web.script(valid).await? == "valid");
        ensure!(web.script(problems).await? == "", "the fix cleared it");
        web.click("form[action$='/edit'] button").await?;
        web.when_shows("version 2").await?;

        // Run it from its page: the run's page follows it to its end, its
        // DAG with the partial badge and the step's first rows.
        web.go(&format!("{}/ui/workflows/orders", api.base)).await?;
        web.click("form[action$='/run'] button").await?;
        let ended = web.when_shows("partial: requests").await?;
        ensure!(ended.contains("<th>id</th><th>total</th>"), "the step's rows");
        ensure!(web.url().await?.contains("/ui/runs/run_"));

        // Another team's run is not found.
        web.go(&format!("{}/ui/runs/{theirs}", api.base)).await?;
        web.when_shows("No such run").await?;

        // A slow run, cancelled from its page.
        // A slow run: its progress bar moves with the stream, then it is
        // cancelled from its page.
        api.push(&a, "slow", &api.slow_workflow("slow", 600, ""))
            .await?;
        let slow = api.run(&a, "slow", "{}").await?;
        tokio::time::sleep(Duration::from_millis(200)).await;
        web.go(&format!("{}/ui/runs/{slow}", api.base)).await?;
        let bar = "return Number(document.getElementById('progress-orders')?.value || 0);";
        let mut seen = Vec::new();
        for _ in 0..100 {
            let v = web.script(bar).await?.as_f64().unwrap_or(0.0);
            if seen.last() != Some(&v) {
                seen.push(v);
            }
            if seen.iter().filter(|v| **v > 0.0).count() >= 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ensure!(
            seen.iter().filter(|v| **v > 0.0).count() >= 2,
            "the progress bar moved: {seen:?}"
        );
        let class = web
            .script("return document.querySelector('g[data-step=\"orders\"]').getAttribute('class');")
            .await?;
        ensure!(class == "step status-running", "the DAG shows the step running: {class}");
        web.shot("run-live").await?;
        web.click("form[action$='/cancel'] button").await?;
        let done = api.finished(&a, &slow).await?;
        ensure!(done["status"] == "cancelled", "{done}");
        web.go(&format!("{}/ui/runs/{slow}", api.base)).await?;
        web.when_shows("status-cancelled").await?;
        web.shot("run-cancelled").await?;
        web.close().await;
        api.stop().await
    })
    .await;
}

/// Every number, status, id and time cell and every header that spans
/// more than one line (hidden cells aside), by the client rects of its
/// contents.
const ONE_LINE: &str = r#"
const re = /^(\d[\d.,]*( ms| KB)?|queued|running|succeeded|partial|failed|cancelled|interrupted|skipped|pending|complete|fired|missed|run_\w+|—|\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)? UTC)$/;
const bad = []; let seen = 0;
for (const c of document.querySelectorAll('main td, main th')) {
  if (!c.getClientRects().length) continue;
  const text = c.textContent.trim();
  if (!(c.tagName === 'TH' || re.test(text) || c.matches('.num,.st,.id,.at'))) continue;
  const r = document.createRange(); r.selectNodeContents(c);
  const rects = [...r.getClientRects()].filter(x => x.width > 0);
  if (!rects.length) continue;
  seen++;
  const tall = Math.max(...rects.map(x => x.bottom)) - Math.min(...rects.map(x => x.top));
  if (tall > parseFloat(getComputedStyle(c).lineHeight) * 1.5) bad.push(JSON.stringify(text) + ' ' + Math.round(tall) + 'px');
}
return {seen, bad: bad.slice(0, 8).join(', ')};
"#;

/// Each DAG's edges, arrowheads, labels, skipped steps, and every point
/// sampled along each edge's path that lies inside a step's box.
const DAG_GEOMETRY: &str = r#"
const out = {edges: 0, arrows: 0, marker: true, labels: [], skipped: 0, crossings: []};
for (const svg of document.querySelectorAll('svg.dag')) {
  const boxes = [...svg.querySelectorAll('g.step rect')].map(r => ({b: r.getBBox(), id: r.parentNode.dataset.step}));
  out.marker = out.marker && !!svg.querySelector('marker#dag-arrow path');
  out.skipped += svg.querySelectorAll('g.status-skipped').length;
  out.labels.push(...[...svg.querySelectorAll('text.gate')].map(t => t.textContent));
  for (const p of svg.querySelectorAll('path.edge')) {
    out.edges++;
    if (getComputedStyle(p).markerEnd.includes('#dag-arrow')) out.arrows++;
    const n = p.getTotalLength();
    for (let i = 0; i <= 200; i++) {
      const pt = p.getPointAtLength(n * i / 200);
      for (const {b, id} of boxes) {
        if (pt.x > b.x + 0.5 && pt.x < b.x + b.width - 0.5 && pt.y > b.y + 0.5 && pt.y < b.y + b.height - 0.5) {
          out.crossings.push(p.dataset.from + '→' + p.dataset.to + ' through ' + id);
        }
      }
    }
  }
}
out.crossings = [...new Set(out.crossings)];
out.labels.sort();
return out;
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_browser_tables_dags_and_links_read_cleanly() {
    dragnet_store::testing::on_sqlite(|db| async move {
        // Ten requests a call: the fan-out ends partial, so the branch
        // takes `else` (alert) and the report is skipped.
        let config = ServerConfig {
            runner: RunnerConfig {
                limits: Limits {
                    max_requests: 10,
                    ..Limits::default()
                },
                ..RunnerConfig::default()
            },
            ..ServerConfig::default()
        };
        let api = Api::start_with(db, config).await?;
        let a = api.team("acme").await?;
        let demo = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../shop/nightly-open-orders.workflow.yaml"),
        )?;
        let name = "a&b#c";
        let encoded = "a%26b%23c";
        let yaml = demo
            .replace("name: nightly-open-orders", &format!("name: \"{name}\""))
            .replace("http://127.0.0.1:8080", api.shop.base_url());
        let (status, v) = api.push(&a, encoded, &yaml).await?;
        ensure!(status.is_success(), "{status}: {v}");
        let older = api.run(&a, encoded, "{}").await?;
        api.finished(&a, &older).await?;
        let newer = api.run(&a, encoded, "{}").await?;
        let done = api.finished(&a, &newer).await?;
        ensure!(done["status"] == "partial", "{done}");

        let d = driver().await?;
        let web = Browser::open(&d).await?;
        web.go(&format!("{}/ui/sign-in", api.base)).await?;
        web.type_into("#token", &a).await?;
        web.click("button[type=submit]").await?;
        web.when_shows("<h1>Runs</h1>").await?;
        let h1 = "return document.querySelector('h1 code')?.textContent;";
        let filter = "return document.getElementById('workflow').value;";

        // The run's DAG: six edges, each with its arrowhead, none through
        // a box; the gate's edges labelled; the report drawn skipped.
        let run = format!("{}/ui/runs/{newer}", api.base);
        web.go(&run).await?;
        let dag = web.script(DAG_GEOMETRY).await?;
        ensure!(dag["crossings"] == json!([]), "edges through boxes: {dag}");
        ensure!(
            dag["edges"] == 6 && dag["arrows"] == 6 && dag["marker"] == true,
            "{dag}"
        );
        ensure!(dag["labels"] == json!(["else", "then"]), "{dag}");
        ensure!(dag["skipped"] == 1, "the report is skipped: {dag}");
        web.shot("run-branch").await?;
        web.go(&format!("{}/ui/workflows/{encoded}", api.base)).await?;
        let dag = web.script(DAG_GEOMETRY).await?;
        ensure!(dag["crossings"] == json!([]) && dag["edges"] == 6, "{dag}");
        web.shot("workflow").await?;

        // Numbers, statuses, ids and times on one line, wide and narrow.
        let pages = [
            format!("/ui/runs/{newer}"),
            "/ui/runs".to_string(),
            "/ui/workflows".to_string(),
            format!("/ui/workflows/{encoded}"),
            "/ui/schedules".to_string(),
        ];
        for (w, h) in [(1280, 900), (390, 844)] {
            web.size(w, h).await?;
            for path in &pages {
                web.go(&format!("{}{path}", api.base)).await?;
                let wide = web
                    .script(
                        "return [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)\
                         .slice(0, 3).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)).join(', ');",
                    )
                    .await?;
                ensure!(wide == "", "{path} is wider than {w} px: {wide}");
                let v = web.script(ONE_LINE).await?;
                ensure!(v["bad"] == "", "{path} at {w} px: cells over more than one line: {}", v["bad"]);
                ensure!(v["seen"].as_u64().unwrap_or(0) >= 3, "{path} at {w} px measured no cells: {v}");
            }
        }
        web.go(&run).await?;
        web.shot("run-branch-narrow").await?;
        web.size(1280, 900).await?;
        web.scheme("dark").await?;
        web.go(&run).await?;
        let bg = web
            .script("return getComputedStyle(document.body).backgroundColor;")
            .await?;
        ensure!(bg == "rgb(13, 17, 23)", "dark: {bg}");
        web.shot("run-branch-dark").await?;
        web.scheme("light").await?;

        // The editor: highlighting, a problem marked at its line in the
        // gutter with its message, completion of a tool name.
        web.go(&format!("{}/ui/workflows/{encoded}/edit", api.base)).await?;
        web.until("return document.getElementById('state').textContent;", json!("valid"))
            .await?;
        let marks = web
            .script(
                "const h=document.getElementById('highlight');return ['k','s','r','c'].map(c=>h.querySelectorAll('.'+c).length);",
            )
            .await?;
        ensure!(
            marks.as_array().is_some_and(|m| m.iter().all(|n| n.as_u64().unwrap_or(0) > 0)),
            "keys, strings, refs and comments highlighted: {marks}"
        );
        let broken = yaml.replace("tool: shop.createAlert", "tool: shop.createAlertz");
        let line = broken
            .lines()
            .position(|l| l.contains("createAlertz"))
            .map(|i| i + 1)
            .unwrap_or(0);
        web.script(&format!(
            "const t=document.getElementById('source');t.value={};t.dispatchEvent(new Event('input'));return true;",
            serde_json::to_string(&broken)?
        ))
        .await?;
        web.until(
            "const b=document.querySelector('#gutter .bad');return b?b.textContent:null;",
            json!(line.to_string()),
        )
        .await?;
        let title = web
            .script("return document.querySelector('#gutter .bad').title;")
            .await?;
        ensure!(title.as_str().unwrap_or("").contains("createAlertz"), "{title}");
        // Typed at the end: the tool's name is offered, Enter takes it.
        web.type_into("#source", "  - id: extra\n    tool: shop.listPropertyO").await?;
        web.until(
            "return [...document.querySelectorAll('#complete li')].map(l=>l.textContent).join(',');",
            json!("shop.listPropertyOrders"),
        )
        .await?;
        web.shot("editor").await?;
        web.type_into("#source", "\u{E007}").await?;
        web.until(
            "return document.getElementById('source').value.endsWith('tool: shop.listPropertyOrders');",
            json!(true),
        )
        .await?;
        web.until("return document.getElementById('complete').hidden;", json!(true))
            .await?;
        // Step ids complete after `needs:`.
        web.type_into("#source", "\n    needs: [pro").await?;
        web.until(
            "return [...document.querySelectorAll('#complete li')].map(l=>l.textContent).join(',');",
            json!("properties"),
        )
        .await?;

        // Every link that names the workflow reaches it.
        web.go(&format!("{}/ui/workflows", api.base)).await?;
        web.click(&format!("a[href='/ui/workflows/{encoded}']")).await?;
        web.until(h1, json!(name)).await?;
        ensure!(web.url().await?.ends_with(&format!("/ui/workflows/{encoded}")));
        web.click(&format!("a[href='/ui/workflows/{encoded}/edit']")).await?;
        web.until(h1, json!(name)).await?;
        web.go(&format!("{}/ui/workflows/{encoded}", api.base)).await?;
        web.click(&format!("a[href='/ui/runs?workflow={encoded}']")).await?;
        web.until(filter, json!(name)).await?;
        let list = web.source().await?;
        ensure!(list.contains(&older) && list.contains(&newer), "both runs listed");
        web.go(&format!("{}/ui/runs?workflow={encoded}&limit=1", api.base)).await?;
        let first = web.source().await?;
        ensure!(first.contains(&newer) && !first.contains(&older), "one run a page");
        web.click("a[rel=next]").await?;
        web.until(filter, json!(name)).await?;
        web.when_shows(&older).await?;
        web.click(&format!("a[href='/ui/runs/{older}']")).await?;
        web.when_shows("data-step=\"alert\"").await?;
        web.click(&format!("main a[href='/ui/workflows/{encoded}']")).await?;
        web.until(h1, json!(name)).await?;
        web.go(&format!("{}/ui/schedules", api.base)).await?;
        web.click(&format!("a[href='/ui/workflows/{encoded}']")).await?;
        web.until(h1, json!(name)).await?;

        web.close().await;
        api.stop().await
    })
    .await;
}
