//! Reading a submitted workflow from a request body: YAML or JSON text as
//! it is, or a JSON bundle `{workflow, documents?, file_name?}` carrying
//! the providers' OpenAPI documents by the paths the file names them by.
//! A `multipart/form-data` body works too: the part named `workflow` is the
//! file (its filename names it), every other part is a document, named by
//! the path the file gives it. The file name diagnostics show comes from
//! `?file=`, the `X-Dragnet-File` header, the bundle or the part, or else
//! `<name>.yaml`.

use std::collections::BTreeMap;

use axum::http::HeaderMap;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::error::{ApiError, ApiResult};

/// The header naming the file.
pub const FILE_HEADER: &str = "x-dragnet-file";

/// A workflow as submitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upload {
    pub file_name: String,
    pub source: String,
    pub documents: BTreeMap<String, String>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Bundle {
    workflow: String,
    #[serde(default)]
    documents: BTreeMap<String, String>,
    #[serde(default)]
    file_name: Option<String>,
}

/// Whether the request carries `multipart/form-data`.
pub fn is_multipart(headers: &HeaderMap) -> bool {
    headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("multipart/form-data"))
}

/// Reads a multipart upload; the rest is as `read`.
pub async fn read_multipart(
    headers: &HeaderMap,
    file_param: Option<String>,
    mut form: axum::extract::Multipart,
    fallback: &str,
    limit: usize,
) -> ApiResult<Upload> {
    let bad = |e: axum::extract::multipart::MultipartError| match e.status() {
        axum::http::StatusCode::PAYLOAD_TOO_LARGE => ApiError::TooLarge { limit },
        _ => ApiError::bad_request("multipart body", e.body_text()),
    };
    let mut workflow: Option<(Option<String>, String)> = None;
    let mut documents = BTreeMap::new();
    while let Some(part) = form.next_field().await.map_err(bad)? {
        let name = part.name().unwrap_or_default().to_string();
        let file_name = part.file_name().map(str::to_string);
        let text = part.text().await.map_err(bad)?;
        if name == "workflow" {
            workflow = Some((file_name, text));
        } else if name.is_empty() {
            return Err(ApiError::bad_request(
                "multipart body",
                "every part needs a name: `workflow`, or a document's path",
            ));
        } else {
            documents.insert(name, text);
        }
    }
    let Some((part_name, source)) = workflow else {
        return Err(ApiError::bad_request(
            "multipart body",
            "no part named `workflow` holds the workflow file",
        ));
    };
    let bundle = Bundle {
        workflow: source,
        documents,
        file_name: part_name,
    };
    finish(headers, file_param, Some(bundle), String::new(), fallback)
}

/// Reads the upload in `body`; `fallback` names the file when nothing else
/// does.
pub fn read(
    headers: &HeaderMap,
    file_param: Option<String>,
    body: &[u8],
    fallback: &str,
) -> ApiResult<Upload> {
    let text = std::str::from_utf8(body)
        .map_err(|e| ApiError::bad_request("request body", format!("not UTF-8 text: {e}")))?;
    let is_json = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    let bundle = match is_json {
        true => bundle(text)?,
        false => None,
    };
    finish(headers, file_param, bundle, text.to_string(), fallback)
}

/// The upload from a bundle (or, without one, the plain `text`), named.
fn finish(
    headers: &HeaderMap,
    file_param: Option<String>,
    bundle: Option<Bundle>,
    text: String,
    fallback: &str,
) -> ApiResult<Upload> {
    let header_name = headers
        .get(FILE_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let (source, documents, bundle_name) = match bundle {
        Some(b) => (b.workflow, b.documents, b.file_name),
        None => (text, BTreeMap::new(), None),
    };
    let file_name = file_param
        .or(header_name)
        .or(bundle_name)
        .unwrap_or_else(|| fallback.to_string());
    let nul = source.contains('\0')
        || documents
            .iter()
            .any(|(k, v)| k.contains('\0') || v.contains('\0'));
    if nul {
        return Err(ApiError::bad_request(
            "request body",
            "a workflow or document holds a NUL character",
        ));
    }
    if file_name.is_empty() || file_name.len() > 255 || file_name.chars().any(char::is_control) {
        return Err(ApiError::bad_request(
            "file name",
            "give a file name of 1 to 255 printable characters",
        ));
    }
    Ok(Upload {
        file_name,
        source,
        documents,
    })
}

/// A JSON body is a bundle when it is an object with a string `workflow`
/// (a workflow file has no such key); otherwise it is the workflow itself.
fn bundle(text: &str) -> ApiResult<Option<Bundle>> {
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        // Not JSON: compiling it reports where.
        Err(_) => return Ok(None),
    };
    if !value.get("workflow").is_some_and(Value::is_string) {
        return Ok(None);
    }
    serde_json::from_value(value)
        .map(Some)
        .map_err(|e| ApiError::bad_request("workflow bundle", e))
}

impl Upload {
    /// The content's SHA-256 (the text and every document, with lengths,
    /// so no two different contents meet); the file name is not content.
    pub fn content_hash(&self) -> String {
        let mut h = Sha256::new();
        let mut part = |bytes: &[u8]| {
            h.update((bytes.len() as u64).to_be_bytes());
            h.update(bytes);
        };
        part(self.source.as_bytes());
        for (path, text) in &self.documents {
            part(path.as_bytes());
            part(text.as_bytes());
        }
        dragnet_core::hex::lower(&h.finalize())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json_headers() -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            axum::http::header::CONTENT_TYPE,
            axum::http::HeaderValue::from_static("application/json"),
        );
        h
    }

    #[test]
    fn a_bundle_carries_documents_and_plain_json_is_the_workflow() {
        let body = br#"{"workflow": "name: a", "documents": {"shop.yaml": "openapi: 3.0.0"}}"#;
        let up = read(&json_headers(), None, body, "a.yaml").expect("a bundle");
        assert_eq!(up.source, "name: a");
        assert_eq!(up.documents.len(), 1);
        let plain = br#"{"name": "a", "steps": []}"#;
        let up = read(&json_headers(), None, plain, "a.yaml").expect("a workflow");
        assert_eq!(up.source.as_bytes(), plain);
        assert!(read(
            &json_headers(),
            None,
            br#"{"workflow": "x", "extra": 1}"#,
            "a"
        )
        .is_err());
    }

    #[test]
    fn the_hash_names_content_not_the_file_name() {
        let a = read(
            &HeaderMap::new(),
            Some("x.yaml".into()),
            b"name: a",
            "a.yaml",
        );
        let b = read(
            &HeaderMap::new(),
            Some("y.yaml".into()),
            b"name: a",
            "a.yaml",
        );
        let c = read(&HeaderMap::new(), None, b"name: b", "a.yaml");
        let (a, b, c) = (a.expect("a"), b.expect("b"), c.expect("c"));
        assert_eq!(a.content_hash(), b.content_hash());
        assert_ne!(a.content_hash(), c.content_hash());
        assert!(read(&HeaderMap::new(), None, &[0xff, 0xfe], "a").is_err());
    }
}
