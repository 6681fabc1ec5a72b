//! Credentials: how requests to a provider authenticate, each value held
//! in core's redacting [`Secret`].

use dragnet_core::secret::Secret;

/// How requests to a provider authenticate.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Credentials {
    #[default]
    None,
    /// `Authorization: Bearer <token>`.
    Bearer(Secret),
    /// A key in a named header, e.g. `X-Api-Key`.
    ApiKeyHeader { header: String, key: Secret },
    /// `Authorization: Basic …`.
    Basic { user: String, password: Secret },
}

/// Why a credential spec (`dragnet call --credentials`) gave no
/// credentials. Names the variable, never a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CredentialSpecError {
    #[error("environment variable `{var}` is not set")]
    Unset { var: String },
    #[error(
        "`{spec}` is not a credential spec; use bearer:VAR, header:NAME:VAR or basic:USER_VAR:PASSWORD_VAR"
    )]
    Malformed { spec: String },
}

impl Credentials {
    /// Reads credentials from environment variables named in config:
    /// `bearer:VAR`, `header:NAME:VAR`, `basic:USER_VAR:PASSWORD_VAR`.
    /// `lookup` is the environment (injected so callers decide where it
    /// comes from). Errors name the variable, never its value.
    pub fn from_spec(
        spec: &str,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, CredentialSpecError> {
        let need = |var: &str| {
            lookup(var)
                .filter(|v| !v.is_empty())
                .ok_or_else(|| CredentialSpecError::Unset {
                    var: var.to_string(),
                })
        };
        let parts: Vec<&str> = spec.split(':').collect();
        match parts.as_slice() {
            ["bearer", var] => Ok(Credentials::Bearer(Secret::new(need(var)?))),
            ["header", header, var] => Ok(Credentials::ApiKeyHeader {
                header: (*header).to_string(),
                key: Secret::new(need(var)?),
            }),
            ["basic", user_var, pass_var] => Ok(Credentials::Basic {
                user: need(user_var)?,
                password: Secret::new(need(pass_var)?),
            }),
            _ => Err(CredentialSpecError::Malformed {
                spec: spec.to_string(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_print() {
        let c = Credentials::Bearer(Secret::new("s3cr3t"));
        assert!(!format!("{c:?}").contains("s3cr3t"));
        assert_eq!(Secret::new("x").to_string(), "[redacted]");
    }

    #[test]
    fn specs_read_named_variables() {
        let env = |k: &str| (k == "TOKEN").then(|| "abc".to_string());
        assert_eq!(
            Credentials::from_spec("bearer:TOKEN", &env).unwrap(),
            Credentials::Bearer(Secret::new("abc"))
        );
        let err = Credentials::from_spec("bearer:MISSING", &env).unwrap_err();
        assert_eq!(
            err,
            CredentialSpecError::Unset {
                var: "MISSING".into()
            }
        );
        assert_eq!(err.to_string(), "environment variable `MISSING` is not set");
        assert!(matches!(
            Credentials::from_spec("token", &env),
            Err(CredentialSpecError::Malformed { .. })
        ));
    }
}
