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
//! Screenshots are saved beside the test's binary (`ui-*.png`).

mod support;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{bail, ensure, Context, Result};
use base64::Engine as _;
use dragnet_server::ServerConfig;
use dragnet_steps::Limits;
use serde_json::{json, Value};
use support::Api;

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// chromedriver, stopped when dropped.
struct Driver {
    child: Child,
    base: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn driver() -> Result<Driver> {
    let path =
        std::env::var("DRAGNET_CHROMEDRIVER").unwrap_or_else(|_| "/usr/bin/chromedriver".into());
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let child = Command::new(&path)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("starting {path} (bash .ci/run installs chromium-driver)"))?;
    let d = Driver {
        child,
        base: format!("http://127.0.0.1:{port}"),
    };
    for _ in 0..100 {
        if let Ok(r) = reqwest::get(format!("{}/status", d.base)).await {
            let v: Value = r.json().await.unwrap_or_default();
            if v["value"]["ready"] == true {
                return Ok(d);
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!("chromedriver did not become ready")
}

/// One browser session.
struct Browser {
    http: reqwest::Client,
    session: String,
    shots: std::path::PathBuf,
}

impl Browser {
    async fn open(d: &Driver) -> Result<Browser> {
        let chromium =
            std::env::var("DRAGNET_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
        let http = reqwest::Client::new();
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": chromium, "args": [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,900"]}
        }}});
        let v: Value = http
            .post(format!("{}/session", d.base))
            .json(&caps)
            .send()
            .await?
            .json()
            .await?;
        let session = v["value"]["sessionId"]
            .as_str()
            .with_context(|| format!("no session: {v}"))?
            .to_string();
        let shots = std::env::current_exe()?
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default();
        Ok(Browser {
            http,
            session: format!("{}/session/{session}", d.base),
            shots,
        })
    }

    async fn call(&self, method: reqwest::Method, path: &str, body: Value) -> Result<Value> {
        let mut request = self.http.request(method, format!("{}{path}", self.session));
        if !body.is_null() {
            request = request.json(&body);
        }
        let r = request.send().await?;
        let v: Value = r.json().await?;
        if v["value"]["error"].is_string() {
            bail!("webdriver {path}: {}", v["value"]);
        }
        Ok(v["value"].clone())
    }

    async fn go(&self, url: &str) -> Result<()> {
        self.call(reqwest::Method::POST, "/url", json!({"url": url}))
            .await
            .map(|_| ())
    }

    async fn find(&self, css: &str) -> Result<String> {
        let v = self
            .call(
                reqwest::Method::POST,
                "/element",
                json!({"using": "css selector", "value": css}),
            )
            .await?;
        match v[ELEMENT].as_str() {
            Some(e) => Ok(e.to_string()),
            None => bail!("no element {css} ({v}) in {}", self.source().await?),
        }
    }

    async fn type_into(&self, css: &str, text: &str) -> Result<()> {
        let e = self.find(css).await?;
        self.call(
            reqwest::Method::POST,
            &format!("/element/{e}/value"),
            json!({"text": text}),
        )
        .await
        .map(|_| ())
    }

    async fn click(&self, css: &str) -> Result<()> {
        let e = self.find(css).await?;
        self.call(
            reqwest::Method::POST,
            &format!("/element/{e}/click"),
            json!({}),
        )
        .await
        .map(|_| ())
    }

    async fn source(&self) -> Result<String> {
        Ok(self
            .call(reqwest::Method::GET, "/source", Value::Null)
            .await?
            .as_str()
            .unwrap_or_default()
            .to_string())
    }

    /// The page once it contains `text` (pages load after a click).
    async fn when_shows(&self, text: &str) -> Result<String> {
        let mut last = String::new();
        for _ in 0..100 {
            last = self.source().await?;
            if last.contains(text) {
                return Ok(last);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let body = last.split("<main>").nth(1).unwrap_or(&last).to_string();
        bail!("the page never showed {text:?}: {body}")
    }

    async fn url(&self) -> Result<String> {
        Ok(self
            .call(reqwest::Method::GET, "/url", Value::Null)
            .await?
            .as_str()
            .unwrap_or_default()
            .to_string())
    }

    async fn script(&self, script: &str) -> Result<Value> {
        self.call(
            reqwest::Method::POST,
            "/execute/sync",
            json!({"script": script, "args": []}),
        )
        .await
    }

    async fn size(&self, width: u32, height: u32) -> Result<()> {
        self.call(
            reqwest::Method::POST,
            "/window/rect",
            json!({"width": width, "height": height}),
        )
        .await
        .map(|_| ())
    }

    async fn shot(&self, name: &str) -> Result<()> {
        let png = self
            .call(reqwest::Method::GET, "/screenshot", Value::Null)
            .await?;
        let bytes =
            base64::engine::general_purpose::STANDARD.decode(png.as_str().unwrap_or_default())?;
        std::fs::write(self.shots.join(format!("ui-{name}.png")), bytes)?;
        Ok(())
    }

    async fn close(self) {
        let _ = self.http.delete(&self.session).send().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_browser_a_team_signs_in_reads_a_partial_run_and_cancels_a_slow_one() {
    dragnet_store::testing::on_sqlite(|db| async move {
        // Ten requests per call: the fan-out over thirty properties ends partial.
        let config = ServerConfig {
            limits: Limits {
                max_requests: 10,
                ..Limits::default()
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
        web.type_into("#token", &a).await?;
        web.click("button[type=submit]").await?;
        ensure!(
            web.url().await?.ends_with("/ui/runs"),
            "{}",
            web.url().await?
        );
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
