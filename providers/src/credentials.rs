//! Credentials resolved in one place. A provider names its secrets
//! (`credentials`, `mcp.headers_env`, `mcp.env: {NAME: {env: VAR}}`); a
//! [`Resolver`] reads them: from the process environment for a local run
//! and for the gateway, from the team's secrets map (and nothing else) for
//! a server's run. Every value read is a secret; what it reads for an MCP
//! server is added to the redactor its answers are scrubbed with.

use std::collections::HashMap;
use std::sync::Arc;

use dragnet_core::secret::Secret;
use dragnet_http::{Credentials, Redactor};

use crate::file::CredentialsFile;
use crate::mcp_client::ChildVars;
use crate::server::{ChildEnv, McpServer};
use crate::Error;

/// Reads an environment variable (injected so tests and servers decide).
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Where the secrets a provider names are read.
#[derive(Clone)]
pub enum Resolver {
    /// The process environment (a local run, the gateway).
    Environment(EnvLookup),
    /// A server's run: the secrets of its team, by name.
    Team(Arc<HashMap<String, Secret>>),
}

impl Resolver {
    /// The value `name` stands for, for `provider`; an unset or empty one
    /// is an error naming it.
    pub fn value(&self, provider: &str, name: &str) -> Result<String, Error> {
        match self {
            Resolver::Environment(env) => {
                env(name)
                    .filter(|v| !v.is_empty())
                    .ok_or_else(|| Error::MissingVariable {
                        provider: provider.to_string(),
                        var: name.to_string(),
                    })
            }
            Resolver::Team(secrets) => secrets
                .get(name)
                .map(|s| s.expose().to_string())
                .filter(|v| !v.is_empty())
                .ok_or_else(|| Error::MissingSecret {
                    provider: provider.to_string(),
                    name: name.to_string(),
                }),
        }
    }

    /// An OpenAPI provider's credentials.
    pub fn credentials(
        &self,
        provider: &str,
        file: Option<&CredentialsFile>,
    ) -> Result<Credentials, Error> {
        let need = |var: &str| self.value(provider, var);
        Ok(match file {
            None => Credentials::None,
            Some(CredentialsFile::Bearer { env }) => Credentials::Bearer(Secret::new(need(env)?)),
            Some(CredentialsFile::Header { name, env }) => Credentials::ApiKeyHeader {
                header: name.clone(),
                key: Secret::new(need(env)?),
            },
            Some(CredentialsFile::Basic {
                username_env,
                password_env,
            }) => Credentials::Basic {
                user: need(username_env)?,
                password: Secret::new(need(password_env)?),
            },
        })
    }

    /// An upstream MCP server's connection as started: its `headers_env`
    /// values read into its headers, and its child's named variables
    /// resolved (`{env: VAR}` read, a missing one an error). Every value
    /// read is a secret, added to `secrets`.
    pub fn mcp(
        &self,
        provider: &str,
        server: &McpServer,
        secrets: &mut Redactor,
    ) -> Result<(McpServer, ChildVars), Error> {
        match server {
            McpServer::Command { env: named, .. } => {
                let mut vars = ChildVars::new();
                for (name, value) in named {
                    let value = match value {
                        ChildEnv::Literal(v) => v.clone(),
                        ChildEnv::Var(var) => {
                            let value = self.value(provider, var)?;
                            secrets.add(&value);
                            value
                        }
                    };
                    vars.push((name.clone(), Secret::new(value)));
                }
                Ok((server.clone(), vars))
            }
            McpServer::Url {
                url,
                headers,
                headers_env,
            } => {
                let mut headers = headers.clone();
                for (name, var) in headers_env {
                    let value = self.value(provider, var)?;
                    secrets.add(&value);
                    headers.insert(name.clone(), value);
                }
                let server = McpServer::Url {
                    url: url.clone(),
                    headers,
                    headers_env: Default::default(),
                };
                Ok((server, ChildVars::new()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> McpServer {
        McpServer::Url {
            url: "http://127.0.0.1:1/mcp".into(),
            headers: [("X-Team".to_string(), "support".to_string())].into(),
            headers_env: [("Authorization".to_string(), "WIKI_TOKEN".to_string())].into(),
        }
    }

    fn env(f: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Resolver {
        Resolver::Environment(Arc::new(f))
    }

    #[test]
    fn secret_headers_come_from_the_environment_or_the_start_fails_naming_the_variable() {
        let set = env(|var| (var == "WIKI_TOKEN").then(|| "Bearer s3cret".to_string()));
        let mut secrets = Redactor::default();
        let (McpServer::Url { headers, .. }, _) = set.mcp("wiki", &server(), &mut secrets).unwrap()
        else {
            panic!("a URL server")
        };
        assert_eq!(headers["Authorization"], "Bearer s3cret");
        assert_eq!(headers["X-Team"], "support");
        assert_eq!(secrets.text("got Bearer s3cret".into()), "got [redacted]");
        let error = env(|_| None)
            .mcp("wiki", &server(), &mut secrets)
            .unwrap_err();
        assert!(error.to_string().contains("WIKI_TOKEN"), "{error}");
    }

    #[test]
    fn a_childs_named_variables_are_read_at_start_and_known_as_secrets() {
        let server = McpServer::Command {
            argv: vec!["server".into()],
            env: [
                ("API_KEY".to_string(), ChildEnv::Var("FILES_KEY".into())),
                ("MODE".to_string(), ChildEnv::Literal("read-only".into())),
            ]
            .into(),
        };
        let set = env(|var| (var == "FILES_KEY").then(|| "fk-991".to_string()));
        let mut secrets = Redactor::default();
        let (_, vars) = set.mcp("files", &server, &mut secrets).unwrap();
        let vars: Vec<(&str, &str)> = vars.iter().map(|(n, v)| (n.as_str(), v.expose())).collect();
        assert_eq!(vars, [("API_KEY", "fk-991"), ("MODE", "read-only")]);
        // The value read is a secret; the literal is not.
        assert_eq!(
            secrets.text("fk-991 read-only".into()),
            "[redacted] read-only"
        );
        let error = env(|_| None)
            .mcp("files", &server, &mut secrets)
            .unwrap_err();
        assert!(
            error.to_string().contains("`FILES_KEY`") && error.to_string().contains("`files`"),
            "{error}"
        );
    }

    #[test]
    fn a_teams_secrets_are_read_and_never_the_environment() {
        let team = Resolver::Team(Arc::new([("TOKEN".to_string(), Secret::new("t-1"))].into()));
        let bearer = CredentialsFile::Bearer {
            env: "TOKEN".into(),
        };
        assert_eq!(
            team.credentials("shop", Some(&bearer)).unwrap(),
            Credentials::Bearer(Secret::new("t-1"))
        );
        let path = CredentialsFile::Bearer { env: "PATH".into() };
        assert!(matches!(
            team.credentials("shop", Some(&path)),
            Err(Error::MissingSecret { name, .. }) if name == "PATH"
        ));
        let basic = CredentialsFile::Basic {
            username_env: "U".into(),
            password_env: "P".into(),
        };
        let local = env(|var| Some(format!("{var}-value")));
        assert_eq!(
            local.credentials("shop", Some(&basic)).unwrap(),
            Credentials::Basic {
                user: "U-value".into(),
                password: Secret::new("P-value")
            }
        );
        assert_eq!(local.credentials("shop", None).unwrap(), Credentials::None);
    }
}
