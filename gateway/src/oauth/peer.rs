//! A real authorization server for tests (feature `test-util`):
//! `oidc-provider` from npm, pinned in `.ci/node.sh` (whose output
//! `DRAGNET_NODE_MODULES` names), run by `tests/oauth/issuer.mjs` with keys
//! a test made (`tests/oauth/keys.mjs`), issuing JWT access tokens through
//! the client-credentials grant with a resource indicator. Tokens it would
//! never issue are signed by `tests/oauth/sign.mjs`.
//!
//! Its clients are `rs`, `es` and `ed` (signing with RS256, ES256 and
//! EdDSA), each with the claims `org: acme`, `user: user-of-<client>` and
//! `agent: support`, and the secret [`Issuer::secret`] names.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde_json::{json, Map, Value};

/// The scope every resource of the test issuer grants.
pub const SCOPE: &str = "tools:call";

/// The pinned Node.js packages' folder.
pub fn node_modules() -> String {
    std::env::var("DRAGNET_NODE_MODULES").expect(
        "DRAGNET_NODE_MODULES names the pinned Node.js peers; `bash .ci/test` sets it \
         (or run `export DRAGNET_NODE_MODULES=$(bash .ci/node.sh)`)",
    )
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/oauth")
        .join(name)
}

fn scratch(name: &str) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!("dragnet-oauth-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    dir.join(format!("{}-{name}", NEXT.fetch_add(1, Ordering::Relaxed)))
}

fn node(args: &[&std::ffi::OsStr]) -> String {
    let out = Command::new("node").args(args).output().expect("node runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .trim()
        .to_string()
}

/// A file of private JWKs, one per `kid:type` (type `rsa`, `ec` or `ed`).
pub fn keys(name: &str, specs: &[&str]) -> PathBuf {
    let mut args = vec![script("keys.mjs").into_os_string()];
    args.extend(specs.iter().map(Into::into));
    let set = node(&args.iter().map(|a| a.as_os_str()).collect::<Vec<_>>());
    let path = scratch(name);
    std::fs::write(&path, set).expect("the key file is written");
    path
}

/// A JWT with `header` and `payload`, signed with key `kid` of `keys` as
/// the header's `alg` says (`HS256` uses the public key as the secret,
/// `none` signs nothing).
pub fn signed(keys: &Path, kid: &str, header: Value, payload: Value) -> String {
    node(&[
        script("sign.mjs").as_os_str(),
        keys.as_os_str(),
        kid.as_ref(),
        header.to_string().as_ref(),
        payload.to_string().as_ref(),
    ])
}

/// The decoded header of a JWT.
pub fn token_header(token: &str) -> Value {
    let head = token.split('.').next().unwrap_or_default();
    let bytes = URL_SAFE_NO_PAD.decode(head).unwrap_or_default();
    serde_json::from_slice(&bytes).unwrap_or_default()
}

/// A running authorization server, stopped when dropped.
pub struct Issuer {
    child: Child,
    /// Its issuer identifier (`http://127.0.0.1:PORT`).
    pub url: String,
    pub port: u16,
}

impl Issuer {
    /// Starts one with `keys` on `port` (0: any free one) that issues
    /// tokens for `resources`.
    pub fn start(keys: &Path, port: u16, resources: &[&str]) -> Issuer {
        let client = |id: &str, alg: &str| {
            json!({"client_id": id, "client_secret": Issuer::secret(id), "alg": alg,
                   "claims": {"org": "acme", "user": format!("user-of-{id}"), "agent": "support"}})
        };
        let resources: Map<String, Value> = resources
            .iter()
            .map(|r| (r.to_string(), json!({"scope": SCOPE})))
            .collect();
        let keys: Value =
            serde_json::from_slice(&std::fs::read(keys).expect("the key file")).expect("JSON");
        let config = json!({
            "port": port,
            "keys": keys,
            "resources": resources,
            "clients": [client("rs", "RS256"), client("es", "ES256"), client("ed", "EdDSA")],
        });
        let file = scratch("issuer.json");
        std::fs::write(&file, config.to_string()).expect("the issuer's configuration");
        let mut child = Command::new("node")
            .arg(script("issuer.mjs"))
            .arg(&file)
            .env("DRAGNET_NODE_MODULES", node_modules())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("node runs");
        let mut line = String::new();
        if let Some(out) = child.stdout.take() {
            let _ = BufReader::new(out).read_line(&mut line);
        }
        let url = match line.strip_prefix("issuer ") {
            Some(url) => url.trim().to_string(),
            None => panic!("the issuer did not start: {line:?}"),
        };
        let port = url
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_default();
        Issuer { child, url, port }
    }

    /// The secret of client `id`.
    pub fn secret(id: &str) -> String {
        format!("{id}-secret-0123456789")
    }

    /// A token of `client` for `resource`, with the scope when `scoped`.
    pub async fn token(&self, client: &str, resource: &str, scoped: bool) -> String {
        let secret = Issuer::secret(client);
        let mut form = vec![
            ("grant_type", "client_credentials"),
            ("client_id", client),
            ("client_secret", secret.as_str()),
            ("resource", resource),
        ];
        if scoped {
            form.push(("scope", SCOPE));
        }
        let answer: Value = reqwest::Client::new()
            .post(format!("{}/token", self.url))
            .form(&form)
            .send()
            .await
            .expect("the issuer answers")
            .json()
            .await
            .expect("a JSON answer");
        match answer["access_token"].as_str() {
            Some(token) => token.to_string(),
            None => panic!("no token: {answer}"),
        }
    }
}

impl Drop for Issuer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
