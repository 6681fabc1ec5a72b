//! The `providers:` section, in the format `agent.yaml` shares
//! ([`dragnet_providers::compile::source`] decides the kind): each OpenAPI
//! document is imported once (read through the workflow's
//! `DocumentSource`), the base URL and credentials are checked, and a
//! failed import is reported at the provider's `openapi` key with the
//! importer's own message. An MCP provider's tools are read when a run
//! connects to it.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use dragnet_core::Toolkit;
use dragnet_walk::overrides::{toolkit_with_roles, PagingRoles};

use super::context::Ctx;
use super::cursor::{describe, Cursor};
use super::documents::DocumentSource;
use dragnet_providers::compile::{source, Place, Source};

use super::file::{CredentialsFile, ProviderFile};
use super::model::{OpenApiProvider, Provider, ProviderKind};
use super::values::{bad_name, is_name};

/// The declared providers. `declared` also names providers that were
/// refused, so steps using them are not reported a second time.
#[derive(Debug, Default)]
pub struct Providers {
    pub ok: BTreeMap<String, Provider>,
    pub declared: Vec<String>,
}

pub fn providers(
    cx: &mut Ctx,
    section: Option<Cursor<'_>>,
    documents: &DocumentSource,
) -> Providers {
    let mut out = Providers::default();
    let Some(section) = section.filter(|s| !s.is_null()) else {
        return out;
    };
    if !section.is_map() {
        cx.error(
            &section,
            format!(
                "`providers` is a mapping of name to {{openapi, base_url}}, got {}",
                describe(section.node)
            ),
        );
        return out;
    }
    let mut imported: HashMap<String, Result<Arc<Toolkit>, String>> = HashMap::new();
    for (name, key_pos, c) in section.entries() {
        out.declared.push(name.to_string());
        let before = cx.count();
        if !is_name(name) {
            cx.at(key_pos, &c.path, bad_name("provider name", name));
        }
        if old_credential_keys(cx, &c) {
            continue;
        }
        let Some(file) = cx.deserialize::<ProviderFile>(&c) else {
            continue;
        };
        let kind = match source(cx, &c, name, &file, Place::Workflow) {
            Some(Source::OpenApi { document, .. }) => {
                openapi(cx, &c, name, document, &file, documents, &mut imported)
                    .map(ProviderKind::OpenApi)
            }
            Some(Source::Mcp(mcp)) => Some(ProviderKind::Mcp(mcp)),
            None => None,
        };
        if let (Some(kind), true) = (kind, cx.count() == before) {
            out.ok.insert(
                name.to_string(),
                Provider {
                    name: name.to_string(),
                    kind,
                },
            );
        }
    }
    out
}

/// Documents already imported, by path: each is read once.
type Imported = HashMap<String, Result<Arc<Toolkit>, String>>;

/// An OpenAPI provider: its document imported (once per path), its base
/// URL and credentials checked.
fn openapi(
    cx: &mut Ctx,
    c: &Cursor<'_>,
    name: &str,
    document: &str,
    file: &ProviderFile,
    documents: &DocumentSource,
    imported: &mut Imported,
) -> Option<OpenApiProvider> {
    let base_url = match file.base_url.as_deref().map(str::trim) {
        Some(url) if url.starts_with("http://") || url.starts_with("https://") => Some(url),
        Some(other) => {
            cx.value_error(
                c,
                "base_url",
                format!("base_url of provider `{name}` must start with http:// or https://, got `{other}`"),
            );
            None
        }
        None => {
            cx.error(
                c,
                format!("provider `{name}` needs a `base_url`: where its requests go (http:// or https://)"),
            );
            None
        }
    };
    credentials(cx, c, file.credentials.as_ref());
    let toolkit = if document.trim().is_empty() {
        cx.value_error(
            c,
            "openapi",
            "`openapi` is empty; give the path of the provider's OpenAPI document",
        );
        None
    } else {
        let path = document.trim().to_string();
        let result = imported
            .entry(path.clone())
            .or_insert_with(|| {
                let doc = documents.read(&path)?;
                dragnet_openapi::import_str(&doc.name, &doc.text)
                    .map(Arc::new)
                    .map_err(|e| e.to_string())
            })
            .clone();
        match result {
            Ok(kit) => Some(kit),
            Err(message) => {
                cx.value_error(
                    c,
                    "openapi",
                    format!("cannot import the OpenAPI document of provider `{name}`: {message}"),
                );
                None
            }
        }
    };
    let toolkit = toolkit.and_then(|kit| paged_as_named(cx, c, kit, &file.paging))?;
    Some(OpenApiProvider {
        document: document.trim().to_string(),
        toolkit,
        base_url: base_url?.to_string(),
        credentials: file.credentials.clone(),
        headers: file
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    })
}

/// The toolkit with the provider's `paging:` roles applied, each problem
/// reported where it was written.
fn paged_as_named(
    cx: &mut Ctx,
    provider: &Cursor<'_>,
    kit: Arc<Toolkit>,
    roles: &BTreeMap<String, PagingRoles>,
) -> Option<Arc<Toolkit>> {
    if roles.is_empty() {
        return Some(kit);
    }
    match toolkit_with_roles(&kit, roles) {
        Ok(kit) => Some(Arc::new(kit)),
        Err(problems) => {
            let section = provider.key("paging")?;
            for p in problems {
                cx.entry_error(&section, &p.tool, p.key, p.message);
            }
            None
        }
    }
}

/// The credentials keys of an older workflow format, refused at their
/// place with the key that replaced them: one spelling for workflows and
/// `agent.yaml` (`{type: header, name, env}`, `{type: basic,
/// username_env, password_env}`). True when one was found, so the
/// provider is not also reported as an unknown field.
fn old_credential_keys(cx: &mut Ctx, provider: &Cursor<'_>) -> bool {
    let Some(credentials) = provider.key("credentials") else {
        return false;
    };
    let mut found = false;
    for (old, new) in [("header", "name"), ("user_env", "username_env")] {
        if credentials.key(old).is_some() {
            found = true;
            cx.value_error(
                &credentials,
                old,
                format!(
                    "credentials `{old}` is now `{new}` (one spelling for workflows and agent.yaml); rename the key"
                ),
            );
        }
    }
    found
}

/// Checks that every variable name is given; the values are read at run
/// time.
fn credentials(cx: &mut Ctx, provider: &Cursor<'_>, file: Option<&CredentialsFile>) {
    let (Some(file), Some(at)) = (file, provider.key("credentials")) else {
        return;
    };
    let named: Vec<(&str, &str)> = match file {
        CredentialsFile::Bearer { env } => vec![("env", env)],
        CredentialsFile::Header { name, env } => vec![("name", name), ("env", env)],
        CredentialsFile::Basic {
            username_env,
            password_env,
        } => vec![
            ("username_env", username_env),
            ("password_env", password_env),
        ],
    };
    for (key, value) in named {
        if value.trim().is_empty() {
            cx.value_error(
                &at,
                key,
                format!("credentials `{key}` is empty; name an environment variable"),
            );
        }
    }
}
