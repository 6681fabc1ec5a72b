//! A headless Chromium driven over W3C WebDriver by plain HTTP calls:
//! chromedriver started on a free port and stopped when dropped, and one
//! browser session with the few commands the UI tests use.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use base64::Engine as _;
use serde_json::{json, Value};

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// chromedriver, stopped when dropped.
pub struct Driver {
    child: Child,
    base: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub async fn driver() -> Result<Driver> {
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
pub struct Browser {
    http: reqwest::Client,
    session: String,
    shots: std::path::PathBuf,
}

impl Browser {
    pub async fn open(d: &Driver) -> Result<Browser> {
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

    pub async fn go(&self, url: &str) -> Result<()> {
        self.call(reqwest::Method::POST, "/url", json!({"url": url}))
            .await
            .map(|_| ())
    }

    pub async fn find(&self, css: &str) -> Result<String> {
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

    pub async fn clear(&self, css: &str) -> Result<()> {
        let e = self.find(css).await?;
        self.call(
            reqwest::Method::POST,
            &format!("/element/{e}/clear"),
            json!({}),
        )
        .await
        .map(|_| ())
    }

    pub async fn type_into(&self, css: &str, text: &str) -> Result<()> {
        let e = self.find(css).await?;
        self.call(
            reqwest::Method::POST,
            &format!("/element/{e}/value"),
            json!({"text": text}),
        )
        .await
        .map(|_| ())
    }

    pub async fn click(&self, css: &str) -> Result<()> {
        let e = self.find(css).await?;
        self.call(
            reqwest::Method::POST,
            &format!("/element/{e}/click"),
            json!({}),
        )
        .await
        .map(|_| ())
    }

    pub async fn source(&self) -> Result<String> {
        Ok(self
            .call(reqwest::Method::GET, "/source", Value::Null)
            .await?
            .as_str()
            .unwrap_or_default()
            .to_string())
    }

    /// The page once it contains `text` (pages load after a click).
    pub async fn when_shows(&self, text: &str) -> Result<String> {
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

    /// Waits until the page's URL ends with `suffix` (a click's
    /// navigation may still be under way when the click returns).
    pub async fn when_at(&self, suffix: &str) -> Result<()> {
        let mut last = String::new();
        for _ in 0..100 {
            last = self.url().await?;
            if last.ends_with(suffix) {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        bail!("the page never reached …{suffix}: it is at {last}")
    }

    pub async fn url(&self) -> Result<String> {
        Ok(self
            .call(reqwest::Method::GET, "/url", Value::Null)
            .await?
            .as_str()
            .unwrap_or_default()
            .to_string())
    }

    pub async fn script(&self, script: &str) -> Result<Value> {
        self.call(
            reqwest::Method::POST,
            "/execute/sync",
            json!({"script": script, "args": []}),
        )
        .await
    }

    pub async fn size(&self, width: u32, height: u32) -> Result<()> {
        self.call(
            reqwest::Method::POST,
            "/window/rect",
            json!({"width": width, "height": height}),
        )
        .await
        .map(|_| ())
    }

    pub async fn shot(&self, name: &str) -> Result<()> {
        let png = self
            .call(reqwest::Method::GET, "/screenshot", Value::Null)
            .await?;
        let bytes =
            base64::engine::general_purpose::STANDARD.decode(png.as_str().unwrap_or_default())?;
        std::fs::write(self.shots.join(format!("ui-{name}.png")), bytes)?;
        Ok(())
    }

    /// Emulates the system's colour scheme (`light` or `dark`).
    pub async fn scheme(&self, scheme: &str) -> Result<()> {
        self.call(
            reqwest::Method::POST,
            "/goog/cdp/execute",
            json!({"cmd": "Emulation.setEmulatedMedia",
                   "params": {"features": [{"name": "prefers-color-scheme", "value": scheme}]}}),
        )
        .await
        .map(|_| ())
    }

    /// Polls `script` until it returns `want` (pages load after a click).
    pub async fn until(&self, script: &str, want: Value) -> Result<()> {
        let mut last = Value::Null;
        for _ in 0..100 {
            last = self.script(script).await.unwrap_or(Value::Null);
            if last == want {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        bail!("{script} gave {last}, not {want}, at {}", self.url().await?)
    }

    pub async fn close(self) {
        let _ = self.http.delete(&self.session).send().await;
    }
}
