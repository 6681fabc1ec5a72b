//! The command line's own errors: settings that cannot be used (a
//! configuration file, a flag, an environment variable) and arguments of
//! the wrong form. Each names the setting, and a file's with its position.

use std::path::PathBuf;

use dragnet_core::budget::LimitError;

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The configuration file could not be read.
    #[error("{}: cannot read the configuration file: {source}", .file.display())]
    ConfigUnreadable {
        file: PathBuf,
        source: std::io::Error,
    },
    /// The configuration file is not valid TOML, or not of the expected shape.
    #[error("{}:{line}:{column}: invalid configuration: {message}", .file.display())]
    ConfigSyntax {
        file: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    /// A value in the configuration file is out of range.
    #[error("{}:{line}:{column}: `{key}`: {message}", .file.display())]
    ConfigValue {
        file: PathBuf,
        line: usize,
        column: usize,
        key: String,
        message: String,
    },
    /// A bound set by a flag is out of range.
    #[error("{argument}{value}: {source}")]
    Limit {
        /// The flag, e.g. `--max-seconds`.
        argument: &'static str,
        /// What was given, after a space (empty when no flag set it).
        value: String,
        source: LimitError,
    },
    /// A flag's or environment variable's value cannot be used.
    #[error("{argument}: {message}")]
    Argument { argument: String, message: String },
    /// A dragnet server answered with an error.
    #[error("{server} answered {status} ({kind}): {message}")]
    Server {
        server: String,
        status: u16,
        kind: String,
        message: String,
    },
}

impl CliError {
    /// The name `{"error": {"kind"}}` gives this error.
    pub fn kind(&self) -> &'static str {
        match self {
            CliError::ConfigUnreadable { .. }
            | CliError::ConfigSyntax { .. }
            | CliError::ConfigValue { .. } => "invalid_config",
            CliError::Limit { .. } => "invalid_limit",
            CliError::Argument { .. } => "invalid_argument",
            CliError::Server { .. } => "server_error",
        }
    }

    /// The setting at fault: a flag, a variable, or `file:line:col`.
    pub fn argument(&self) -> String {
        match self {
            CliError::ConfigUnreadable { file, .. } => file.display().to_string(),
            CliError::ConfigSyntax {
                file, line, column, ..
            } => format!("{}:{line}:{column}", file.display()),
            CliError::ConfigValue {
                file,
                line,
                column,
                key,
                ..
            } => format!("{}:{line}:{column}: {key}", file.display()),
            CliError::Limit { argument, .. } => argument.to_string(),
            CliError::Argument { argument, .. } => argument.clone(),
            CliError::Server { server, .. } => server.clone(),
        }
    }

    pub fn argument_error(argument: impl Into<String>, message: impl Into<String>) -> CliError {
        CliError::Argument {
            argument: argument.into(),
            message: message.into(),
        }
    }
}
