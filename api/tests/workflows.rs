//! Workflows over HTTP against a real server and store: versions by
//! content, located diagnostics (validate and push, multipart too),
//! documents confined, names checked, inputs typed, a body over the limit.

mod support;

use anyhow::{ensure, Result};
use dragnet_api::ServerConfig;
use dragnet_store::Db;
use reqwest::{Method, StatusCode};
use support::Api;

dragnet_store::on_both_backends!(
    pushing_unchanged_content_makes_no_new_version,
    invalid_files_are_refused_with_located_diagnostics,
);

async fn pushing_unchanged_content_makes_no_new_version(db: Db) -> Result<()> {
    let api = Api::start(db).await?;
    let t = api.team("acme").await?;
    let yaml = api.workflow("orders", None);
    let (status, v) = api.push(&t, "orders", &yaml).await?;
    ensure!(
        status == StatusCode::CREATED && v["version"] == 1,
        "{status} {v}"
    );
    let (status, v) = api.push(&t, "orders", &yaml).await?;
    ensure!(
        status == StatusCode::OK && v["version"] == 1 && v["created"] == false,
        "{v}"
    );
    let changed = yaml.replace("default: 500", "default: 900");
    let (status, v) = api.push(&t, "orders", &changed).await?;
    ensure!(
        status == StatusCode::CREATED && v["version"] == 2,
        "{status} {v}"
    );
    let (_, got) = api.get("/v1/workflows/orders", &t).await?;
    ensure!(got["current_version"] == 2, "{got}");
    let versions: Vec<i64> = got["versions"]
        .as_array()
        .map(|a| a.iter().filter_map(|v| v["version"].as_i64()).collect())
        .unwrap_or_default();
    ensure!(versions == [2, 1], "{versions:?}");
    ensure!(got["source"].as_str() == Some(changed.as_str()));
    ensure!(
        got["documents"] == serde_json::json!(["openapi.yaml"]),
        "{got}"
    );
    // A run names the version it ran.
    let run = api.run(&t, "orders", "{}").await?;
    let record = api.finished(&t, &run).await?;
    ensure!(record["workflow_version"] == 2, "{record}");

    let (status, _) = api
        .send(Method::DELETE, "/v1/workflows/orders", Some(&t), None, &[])
        .await?;
    ensure!(status == StatusCode::NO_CONTENT);
    let (status, _) = api.get("/v1/workflows/orders", &t).await?;
    ensure!(status == StatusCode::NOT_FOUND);
    // Its runs are kept; pushing again continues the numbering.
    let (status, _) = api.get(&format!("/v1/runs/{run}"), &t).await?;
    ensure!(status == StatusCode::OK);
    let (status, v) = api.push(&t, "orders", &changed).await?;
    ensure!(
        status == StatusCode::CREATED && v["version"] == 3,
        "{status} {v}"
    );
    api.stop().await
}

async fn invalid_files_are_refused_with_located_diagnostics(db: Db) -> Result<()> {
    let api = Api::start(db).await?;
    let t = api.team("acme").await?;
    let broken = api
        .workflow("orders", None)
        .replace("tool: shop.listProperties", "tool: shop.listPropertiez");
    let (status, v) = api
        .send(
            Method::PUT,
            "/v1/workflows/orders?file=orders.yaml",
            Some(&t),
            Some(("application/json", &api.bundle(&broken)?)),
            &[],
        )
        .await?;
    ensure!(status == StatusCode::UNPROCESSABLE_ENTITY, "{status} {v}");
    ensure!(v["error"]["kind"] == "invalid_workflow", "{v}");
    let d = &v["error"]["diagnostics"][0];
    ensure!(
        d["file"] == "orders.yaml" && d["line"] == 12 && d["column"] == 11,
        "{d}"
    );
    ensure!(d["path"] == "steps[0].tool", "{d}");
    ensure!(
        d["message"]
            .as_str()
            .is_some_and(|m| m.contains("listProperties")),
        "{d}"
    );
    // Nothing was stored.
    let (status, _) = api.get("/v1/workflows/orders", &t).await?;
    ensure!(status == StatusCode::NOT_FOUND);

    // /v1/validate answers the same diagnostics, and `valid` for a good file.
    let (status, v) = api
        .send(
            Method::POST,
            "/v1/validate?file=orders.yaml",
            Some(&t),
            Some(("application/json", &api.bundle(&broken)?)),
            &[],
        )
        .await?;
    ensure!(status == StatusCode::OK && v["valid"] == false, "{v}");
    ensure!(v["diagnostics"][0]["line"] == 12, "{v}");
    let good = api.bundle(&api.workflow("orders", None))?;
    let (_, v) = api
        .send(
            Method::POST,
            "/v1/validate",
            Some(&t),
            Some(("application/json", &good)),
            &[],
        )
        .await?;
    ensure!(v["valid"] == true && v["steps"] == 2, "{v}");

    // YAML that does not parse is located too.
    let (status, v) = api
        .send(
            Method::PUT,
            "/v1/workflows/orders",
            Some(&t),
            Some(("application/yaml", "name: [unclosed\n")),
            &[("x-dragnet-file", "bad.yaml")],
        )
        .await?;
    ensure!(status == StatusCode::UNPROCESSABLE_ENTITY, "{status}");
    ensure!(v["error"]["diagnostics"][0]["file"] == "bad.yaml", "{v}");

    // A document path leaving the documents folder is refused, not read.
    let escaping = api
        .workflow("orders", None)
        .replace("openapi: openapi.yaml", "openapi: ../../etc/passwd");
    let (status, v) = api
        .send(
            Method::PUT,
            "/v1/workflows/orders",
            Some(&t),
            Some(("application/yaml", &escaping)),
            &[],
        )
        .await?;
    ensure!(status == StatusCode::UNPROCESSABLE_ENTITY, "{status}");
    let message = v["error"]["diagnostics"][0]["message"]
        .as_str()
        .unwrap_or("");
    ensure!(message.contains("climbs out"), "{message}");

    // multipart/form-data: the file as `workflow`, each document by its path.
    let doc = std::fs::read_to_string(dragnet_shop::openapi_path())?;
    let yaml = api.workflow("orders", None);
    let form = format!(
        "--XyZ\r\nContent-Disposition: form-data; name=\"workflow\"; filename=\"orders.yaml\"\r\n\r\n{yaml}\r\n\
         --XyZ\r\nContent-Disposition: form-data; name=\"openapi.yaml\"\r\n\r\n{doc}\r\n--XyZ--\r\n"
    );
    let (status, v) = api
        .send(
            Method::PUT,
            "/v1/workflows/orders",
            Some(&t),
            Some(("multipart/form-data; boundary=XyZ", &form)),
            &[],
        )
        .await?;
    ensure!(status == StatusCode::CREATED, "{status} {v}");
    let (_, got) = api.get("/v1/workflows/orders", &t).await?;
    ensure!(
        got["file_name"] == "orders.yaml" && got["documents"][0] == "openapi.yaml",
        "{got}"
    );
    let no_file =
        "--XyZ\r\nContent-Disposition: form-data; name=\"openapi.yaml\"\r\n\r\nx\r\n--XyZ--\r\n";
    let (status, v) = api
        .send(
            Method::PUT,
            "/v1/workflows/orders",
            Some(&t),
            Some(("multipart/form-data; boundary=XyZ", no_file)),
            &[],
        )
        .await?;
    ensure!(status == StatusCode::BAD_REQUEST, "{status} {v}");
    let (_, v) = api
        .send(Method::DELETE, "/v1/workflows/orders", Some(&t), None, &[])
        .await?;
    ensure!(v.is_null());

    // The file's name must be the one it is submitted as.
    let (status, v) = api.push(&t, "other", &api.workflow("orders", None)).await?;
    ensure!(status == StatusCode::UNPROCESSABLE_ENTITY, "{status}");
    ensure!(v["error"]["kind"] == "name_mismatch", "{v}");

    // Inputs are typed when a run is asked for.
    api.push(&t, "orders", &api.workflow("orders", None))
        .await?;
    let (status, v) = api
        .send(
            Method::POST,
            "/v1/workflows/orders/runs",
            Some(&t),
            Some(("application/json", r#"{"inputs": {"min_total": "lots"}}"#)),
            &[],
        )
        .await?;
    ensure!(status == StatusCode::UNPROCESSABLE_ENTITY, "{status} {v}");
    ensure!(v["error"]["kind"] == "invalid_input", "{v}");
    let (status, v) = api
        .send(
            Method::POST,
            "/v1/workflows/orders/runs",
            Some(&t),
            Some(("application/json", r#"{"inputz": {}}"#)),
            &[],
        )
        .await?;
    ensure!(
        status == StatusCode::BAD_REQUEST && v["error"]["kind"] == "bad_request",
        "{v}"
    );
    api.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_over_the_limit_is_a_json_413() {
    dragnet_store::testing::on_sqlite(|db| async move {
        let config = ServerConfig {
            body_limit: 4096,
            ..ServerConfig::default()
        };
        let api = Api::start_with(db, config).await?;
        let t = api.team("acme").await?;
        let big = api.bundle(&api.workflow("orders", None))?;
        for (method, path) in [
            (Method::PUT, "/v1/workflows/orders"),
            (Method::POST, "/v1/validate"),
        ] {
            let (status, v) = api
                .send(
                    method,
                    path,
                    Some(&t),
                    Some(("application/json", &big)),
                    &[],
                )
                .await?;
            ensure!(
                status == StatusCode::PAYLOAD_TOO_LARGE,
                "{path}: {status} {v}"
            );
            ensure!(v["error"]["kind"] == "too_large", "{v}");
        }
        let (status, _) = api.get("/v1/workflows/orders", &t).await?;
        ensure!(status == StatusCode::NOT_FOUND, "nothing was stored");
        api.stop().await
    })
    .await
}
