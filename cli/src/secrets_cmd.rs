//! `dragnet secrets`: a team's secrets on the server's store — the values
//! its workflows' credentials name on a server (`credentials: {env:
//! NAME}`). Managed on the store directly, as `teams` and `tokens` are (an
//! operator's commands), sealed under `DRAGNET_SECRETS_KEY`. A value is read
//! from stdin (its trailing newline trimmed) and never printed; a listing
//! shows names and update times only.

use std::io::{Read, Write};

use anyhow::Result;
use clap::Subcommand;
use dragnet_api::secrets::{self, MAX_VALUE_BYTES};
use dragnet_core::secret::Secret;

use crate::config::{Config, Lifetime};
use crate::failure::CliError;
use crate::out::Out;
use crate::services::Services;
use crate::EXIT_COMPLETE;

#[derive(Subcommand)]
pub enum SecretsCommand {
    /// Set a team's secret; the value is read from stdin (e.g. `printf %s
    /// "$TOKEN" | dragnet secrets set GITHUB_TOKEN --team acme`).
    Set {
        /// `^[A-Za-z_][A-Za-z0-9_]{0,127}$`: what `credentials: {env: NAME}` names.
        name: String,
        #[arg(long)]
        team: String,
    },
    /// List a team's secrets: names and update times, never values.
    List {
        #[arg(long)]
        team: String,
    },
    /// Delete a team's secret.
    Delete {
        name: String,
        #[arg(long)]
        team: String,
    },
}

/// The value on stdin, without one trailing newline (`\n` or `\r\n`).
fn read_value(input: impl Read) -> Result<Secret, CliError> {
    let mut bytes = Vec::new();
    input
        .take(MAX_VALUE_BYTES as u64 + 3)
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::argument_error("stdin", format!("cannot read the value: {e}")))?;
    let mut text = String::from_utf8(bytes)
        .map_err(|_| CliError::argument_error("stdin", "the value is not UTF-8 text"))?;
    if text.ends_with('\n') {
        text.pop();
        if text.ends_with('\r') {
            text.pop();
        }
    }
    Ok(Secret::new(text))
}

fn argument(e: secrets::SecretError) -> anyhow::Error {
    match e {
        secrets::SecretError::Store(e) => e.into(),
        other => CliError::argument_error("secret", other.to_string()).into(),
    }
}

pub async fn secrets(config: &Config, command: SecretsCommand, out: &mut Out) -> Result<u8> {
    // Checked before anything is read or opened.
    let sealer = crate::serve_cmd::secrets_sealer(config);
    let value = match &command {
        SecretsCommand::Set { name, .. } => {
            secrets::check_name(name).map_err(argument)?;
            if sealer.is_none() {
                return Err(argument(secrets::SecretError::NoKey));
            }
            Some(read_value(std::io::stdin().lock())?)
        }
        _ => None,
    };
    let services = Services::open(config, Lifetime::OneShot).await?;
    let result = async {
        match command {
            SecretsCommand::Set { name, team } => {
                let team_id = secrets::team_id_of(&services.db, &team)
                    .await
                    .map_err(argument)?;
                let value = value.unwrap_or_else(|| Secret::new(""));
                secrets::set_secret(
                    &services.db,
                    sealer.as_deref(),
                    &team_id,
                    &name,
                    &value,
                    services.clock.now(),
                )
                .await
                .map_err(argument)?;
                writeln!(out, "set secret {name} of team {team}")?;
            }
            SecretsCommand::List { team } => {
                let team_id = secrets::team_id_of(&services.db, &team)
                    .await
                    .map_err(argument)?;
                for s in services.db.secrets().list_secrets(&team_id).await? {
                    writeln!(
                        out,
                        "{:<40} updated {}",
                        s.name,
                        s.updated_at.format("%Y-%m-%d %H:%M:%S")
                    )?;
                }
            }
            SecretsCommand::Delete { name, team } => {
                secrets::check_name(&name).map_err(argument)?;
                let team_id = secrets::team_id_of(&services.db, &team)
                    .await
                    .map_err(argument)?;
                match services.db.secrets().delete_secret(&team_id, &name).await? {
                    true => writeln!(out, "deleted secret {name} of team {team}")?,
                    false => {
                        return Err(CliError::argument_error(
                            "NAME",
                            format!("team {team} has no secret `{name}`"),
                        )
                        .into())
                    }
                }
            }
        }
        anyhow::Ok(EXIT_COMPLETE)
    }
    .await;
    services.shutdown().await;
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_trailing_newline_is_trimmed() {
        let read = |s: &str| read_value(s.as_bytes()).unwrap().expose().to_string();
        assert_eq!(read("tok\n"), "tok");
        assert_eq!(read("tok\r\n"), "tok");
        assert_eq!(read("tok\n\n"), "tok\n");
        assert_eq!(read(" tok "), " tok ");
        assert!(read_value(&[0xff, 0xfe][..]).is_err());
    }
}
