//! The `providers:` section: each OpenAPI document is imported once
//! (read through the workflow's `DocumentSource`), the base
//! URL and credentials are checked, and a failed import is reported at the
//! provider's `openapi` key with the importer's own message.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use dragnet_core::Toolkit;
use dragnet_walk::overrides::{toolkit_with_roles, PagingRoles};

use super::context::Ctx;
use super::cursor::{describe, Cursor};
use super::documents::DocumentSource;
use super::file::{CredentialsFile, ProviderFile};
use super::model::{CredentialsSpec, Provider};
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
        let base_url = file.base_url.trim();
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            cx.value_error(
                &c,
                "base_url",
                format!("base_url of provider `{name}` must start with http:// or https://, got `{base_url}`"),
            );
        }
        let credentials = credentials(cx, &c, file.credentials);
        let toolkit = if file.openapi.trim().is_empty() {
            cx.value_error(
                &c,
                "openapi",
                "`openapi` is empty; give the path of the provider's OpenAPI document",
            );
            None
        } else {
            let path = file.openapi.trim().to_string();
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
                        &c,
                        "openapi",
                        format!(
                            "cannot import the OpenAPI document of provider `{name}`: {message}"
                        ),
                    );
                    None
                }
            }
        };
        let headers = c
            .key("headers")
            .map(|h| {
                h.entries()
                    .filter_map(|(k, _, v)| v.as_str().map(|v| (k.to_string(), v.to_string())))
                    .collect()
            })
            .unwrap_or_default();
        let toolkit = toolkit.and_then(|kit| paged_as_named(cx, &c, kit, &file.paging));
        if let (Some(toolkit), true) = (toolkit, cx.count() == before) {
            out.ok.insert(
                name.to_string(),
                Provider {
                    name: name.to_string(),
                    toolkit,
                    base_url: base_url.to_string(),
                    credentials,
                    headers,
                },
            );
        }
    }
    out
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

/// Checks that every variable name is set; the values are read at run time.
fn credentials(
    cx: &mut Ctx,
    provider: &Cursor<'_>,
    file: Option<CredentialsFile>,
) -> CredentialsSpec {
    let Some(file) = file else {
        return CredentialsSpec::None;
    };
    let at = provider.key("credentials");
    let mut require = |key: &str, value: &str| {
        if value.trim().is_empty() {
            if let Some(at) = &at {
                cx.value_error(
                    at,
                    key,
                    format!("credentials `{key}` is empty; name an environment variable"),
                );
            }
        }
    };
    match file {
        CredentialsFile::Bearer { env } => {
            require("env", &env);
            CredentialsSpec::Bearer { env }
        }
        CredentialsFile::Header { name, env } => {
            require("name", &name);
            require("env", &env);
            CredentialsSpec::Header { name, env }
        }
        CredentialsFile::Basic {
            username_env,
            password_env,
        } => {
            require("username_env", &username_env);
            require("password_env", &password_env);
            CredentialsSpec::Basic {
                username_env,
                password_env,
            }
        }
    }
}
