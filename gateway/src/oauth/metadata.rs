//! What a client reads to find the authorization server: the protected
//! resource metadata (RFC 9728 §2) served at
//! `/.well-known/oauth-protected-resource` (and at that path followed by
//! the resource's path, where RFC 9728 §3.1 puts it), and the
//! `WWW-Authenticate` challenge (RFC 6750 §3, RFC 9728 §5.1) of a 401 or
//! 403 that names it.

use serde_json::{json, Value};

use super::ResourceServerConfig;

/// The well-known path of the metadata document.
pub const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The metadata document.
pub fn document(config: &ResourceServerConfig) -> Value {
    let mut scopes: Vec<&str> = config.issuers.iter().map(|i| i.scope.as_str()).collect();
    scopes.dedup();
    json!({
        "resource": config.resource,
        "authorization_servers": config.issuers.iter().map(|i| i.issuer.as_str()).collect::<Vec<_>>(),
        "scopes_supported": scopes,
        "bearer_methods_supported": ["header"],
        "resource_name": "dragnet gateway",
    })
}

/// The path of the metadata document for the resource's own path
/// (`/.well-known/oauth-protected-resource/mcp` for `…/mcp`); `None` when
/// the resource has no path.
pub fn path_for(config: &ResourceServerConfig) -> Option<String> {
    let path = resource_path(&config.resource);
    (!path.is_empty() && path != "/").then(|| format!("{WELL_KNOWN}{path}"))
}

/// The metadata URL a challenge names.
pub fn url(config: &ResourceServerConfig) -> String {
    let origin = origin(&config.resource);
    format!(
        "{origin}{}",
        path_for(config).unwrap_or_else(|| WELL_KNOWN.into())
    )
}

/// The challenge of a refusal: `error` is `None` when no token came
/// (RFC 6750 §3.1: then no error code), `scope` is said with
/// `insufficient_scope`.
pub fn challenge(
    config: &ResourceServerConfig,
    error: Option<&str>,
    scope: Option<&str>,
) -> String {
    let mut parts = vec![format!("resource_metadata=\"{}\"", url(config))];
    if let Some(error) = error {
        parts.push(format!("error=\"{error}\""));
    }
    if let Some(scope) = scope {
        parts.push(format!("scope=\"{scope}\""));
    }
    format!("Bearer {}", parts.join(", "))
}

/// `scheme://authority` of a URL.
fn origin(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    match url[after_scheme..].find('/') {
        Some(i) => &url[..after_scheme + i],
        None => url,
    }
}

/// The path of a URL, without query or fragment.
fn resource_path(url: &str) -> &str {
    let rest = &url[origin(url).len()..];
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    rest[..end].trim_end_matches('/')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::{ClaimNames, IssuerConfig};

    fn config(resource: &str) -> ResourceServerConfig {
        ResourceServerConfig {
            resource: resource.into(),
            issuers: vec![IssuerConfig {
                issuer: "https://id.example.com".into(),
                jwks_uri: None,
                scope: "tools:call".into(),
                claims: ClaimNames::default(),
                organisation: None,
            }],
            leeway: std::time::Duration::from_secs(60),
        }
    }

    #[test]
    fn the_metadata_sits_at_the_resource_path_and_the_challenge_names_it() {
        let c = config("https://mcp.example.com/mcp");
        assert_eq!(
            path_for(&c).as_deref(),
            Some("/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(
            challenge(&c, None, None),
            "Bearer resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource/mcp\""
        );
        assert_eq!(
            challenge(&c, Some("insufficient_scope"), Some("tools:call")),
            "Bearer resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource/mcp\", error=\"insufficient_scope\", scope=\"tools:call\""
        );
        let root = config("https://mcp.example.com");
        assert_eq!(path_for(&root), None);
        assert_eq!(
            url(&root),
            "https://mcp.example.com/.well-known/oauth-protected-resource"
        );
        let doc = document(&c);
        assert_eq!(doc["resource"], "https://mcp.example.com/mcp");
        assert_eq!(
            doc["authorization_servers"],
            json!(["https://id.example.com"])
        );
        assert_eq!(doc["scopes_supported"], json!(["tools:call"]));
        assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
    }
}
