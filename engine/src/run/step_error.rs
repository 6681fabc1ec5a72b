//! Why a step failed, as a closed set of structured causes: its refs or
//! input, the loop layer refusing the call, the upstream failing (carrying
//! the loop layer's error and whether trying again may help, as the steps
//! crate's `UpstreamError::is_retryable` says), its provider, a timeout, a
//! panic, a cancellation. A step's `retry` asks `StepError::is_retryable`,
//! so a deterministic failure is attempted once.

use std::time::Duration;

use dragnet_core::UpstreamError;
use serde_json::Value;

use crate::refs::RefError;

/// A step's failure. Its `Display` is the reason recorded for the step.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// A ref did not resolve or a resolved value does not fit where it goes.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The loop layer refused the call before any request: an invalid
    /// argument, a bad `loop` setting, a tool that cannot be walked.
    #[error(transparent)]
    Rejected(dragnet_core::Error),
    /// The upstream failed (after the loop layer's own retries).
    #[error("{error}")]
    Upstream {
        error: dragnet_core::Error,
        /// Whether the same call may succeed if made again.
        retryable: bool,
    },
    /// The step's provider cannot be used (a credential is missing).
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// The step did not finish within its `timeout`.
    #[error("timed out after {}", human(*.after))]
    Timeout { after: Duration },
    /// The step's task panicked; the run goes on without it.
    #[error("step `{step}` panicked: {message}")]
    Panicked { step: String, message: String },
    /// The run was cancelled while the step ran.
    #[error("cancelled")]
    Cancelled,
    /// An incremental step's watermark could not be read or its rows do not
    /// carry it.
    #[error(transparent)]
    Incremental(#[from] super::incremental::IncrementalError),
}

/// A step's input or loop values, as resolved against the run.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error(transparent)]
    Ref(#[from] RefError),
    #[error("`input` must be an object, got {got}")]
    NotAnObject { got: Value },
    #[error("`loop.for_each.values` for `{key}` resolved to an empty list")]
    EmptyForEach { key: String },
    #[error("`loop.for_each.values` must be a list, got {got}")]
    ForEachNotAList { got: Value },
}

/// Why a provider's client could not be built for the run.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProviderError {
    #[error("provider `{provider}`: environment variable `{var}` is not set")]
    MissingVariable { provider: String, var: String },
    #[error(
        "provider `{provider}`: the team has no secret `{name}`; set it with \
         `dragnet secrets set {name} --team <team>`, PUT /v1/secrets/{name} or the Secrets page"
    )]
    MissingSecret { provider: String, name: String },
    #[error("provider `{provider}`: {error}")]
    Client {
        provider: String,
        error: UpstreamError,
    },
    #[error("unknown provider `{provider}`")]
    Unknown { provider: String },
    /// A server's run: the workflow names a program to start
    /// (`mcp.command`), which a server never does for a team.
    #[error(
        "provider `{provider}`: this server does not start programs a workflow names \
         (`mcp.command`); use `mcp: {{server: NAME}}` (a server its operator declared) or `mcp: {{url: …}}`"
    )]
    CommandRefused { provider: String },
    /// `mcp: {server: NAME}` names no declared server.
    #[error(
        "provider `{provider}`: no MCP server `{server}` is declared (`[server.mcp_servers.{server}]` \
         in the configuration); declared: {declared}"
    )]
    Undeclared {
        provider: String,
        server: String,
        declared: String,
    },
    /// The upstream MCP server has no tool of the step's name.
    #[error("provider `{provider}` (an upstream MCP server) has no tool `{tool}`; its tools are: {tools}")]
    UnknownTool {
        provider: String,
        tool: String,
        tools: String,
    },
    /// Its upstream MCP server could not be started, reached or listed.
    #[error("provider `{provider}` (an upstream MCP server): {error}")]
    Mcp {
        provider: String,
        error: dragnet_providers::Error,
    },
}

impl ProviderError {
    /// Provider `provider` could not be used for the run.
    pub fn of(provider: &str, e: dragnet_providers::Error) -> Self {
        match e {
            dragnet_providers::Error::MissingVariable { provider, var } => {
                ProviderError::MissingVariable { provider, var }
            }
            dragnet_providers::Error::MissingSecret { provider, name } => {
                ProviderError::MissingSecret { provider, name }
            }
            error => ProviderError::Mcp {
                provider: provider.to_string(),
                error,
            },
        }
    }
}

impl From<RefError> for StepError {
    fn from(e: RefError) -> Self {
        StepError::Input(InputError::Ref(e))
    }
}

impl From<dragnet_core::Error> for StepError {
    fn from(error: dragnet_core::Error) -> Self {
        use dragnet_core::Error as E;
        match error {
            E::Cancelled => StepError::Cancelled,
            E::Upstream(ref u) => StepError::Upstream {
                retryable: u.is_retryable(),
                error,
            },
            // Only the first value's error survives, as text: nothing says
            // whether the others would succeed, so the step is not retried.
            E::AllValuesFailed { .. } => StepError::Upstream {
                retryable: false,
                error,
            },
            other => StepError::Rejected(other),
        }
    }
}

impl StepError {
    /// Whether a step `retry` may try again: transient upstream failures
    /// and timeouts, never a deterministic failure, a panic or a cancel.
    pub fn is_retryable(&self) -> bool {
        match self {
            StepError::Upstream { retryable, .. } => *retryable,
            StepError::Timeout { .. } => true,
            StepError::Incremental(super::incremental::IncrementalError::Read { source }) => {
                source.is_transient()
            }
            StepError::Incremental(_) => false,
            StepError::Input(_)
            | StepError::Rejected(_)
            | StepError::Provider(_)
            | StepError::Panicked { .. }
            | StepError::Cancelled => false,
        }
    }
}

/// `300ms`, `5s`: how a duration reads in a reason.
fn human(d: Duration) -> String {
    if d.as_millis().is_multiple_of(1000) {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(status: u16) -> dragnet_core::Error {
        dragnet_core::Error::Upstream(UpstreamError::Status {
            status,
            excerpt: "{}".into(),
            retry_after_ms: None,
        })
    }

    #[test]
    fn only_transient_failures_are_retryable() {
        assert!(StepError::from(status(503)).is_retryable());
        assert!(StepError::from(status(429)).is_retryable());
        assert!(!StepError::from(status(404)).is_retryable());
        let bad = dragnet_core::Error::InvalidArgument {
            argument: "order_id".into(),
            message: "expected integer".into(),
        };
        let e = StepError::from(bad);
        assert!(matches!(e, StepError::Rejected(_)) && !e.is_retryable());
        assert!(matches!(
            StepError::from(dragnet_core::Error::Cancelled),
            StepError::Cancelled
        ));
        assert!(StepError::Timeout {
            after: Duration::from_millis(300)
        }
        .is_retryable());
        let bad_ref = crate::refs::RefExpr::parse("$.elsewhere").expect_err("not a root");
        let text = bad_ref.to_string();
        let e = StepError::from(bad_ref);
        assert!(!e.is_retryable());
        assert_eq!(e.to_string(), text);
    }

    #[test]
    fn reasons_read_as_before() {
        let t = StepError::Timeout {
            after: Duration::from_millis(300),
        };
        assert_eq!(t.to_string(), "timed out after 300ms");
        let t = StepError::Timeout {
            after: Duration::from_secs(5),
        };
        assert_eq!(t.to_string(), "timed out after 5s");
        assert_eq!(
            StepError::from(status(404)).to_string(),
            status(404).to_string(),
            "the upstream's error, said once"
        );
    }
}
