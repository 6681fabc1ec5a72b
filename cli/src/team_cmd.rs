//! `dragnet teams` and `dragnet tokens`: the server's teams and their API
//! tokens, managed on the store directly (an operator's commands). A token
//! is printed once, when it is made; only its hash is stored.

use std::io::Write;

use anyhow::Result;
use clap::Subcommand;

use crate::config::{Config, Lifetime};
use crate::failure::CliError;
use crate::out::{say, Out};
use crate::services::Services;
use crate::EXIT_COMPLETE;

#[derive(Subcommand)]
pub enum TeamsCommand {
    /// Create a team (lowercase letters, digits, `-` and `_`).
    Create { name: String },
    /// List the teams.
    List,
}

#[derive(Subcommand)]
pub enum TokensCommand {
    /// Make an API token for a team; it is printed once.
    Create {
        #[arg(long)]
        team: String,
    },
    /// Revoke a token by its id (tok_…); requests with it get 401.
    Revoke { token_id: String },
    /// List tokens (never their text).
    List {
        #[arg(long)]
        team: Option<String>,
    },
}

fn check_name(name: &str) -> Result<(), CliError> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric());
    match ok {
        true => Ok(()),
        false => Err(CliError::argument_error(
            "NAME",
            format!(
                "`{name}` is not a team name: use 1 to 63 lowercase letters, digits, `-` or `_`, \
                 starting with a letter or digit"
            ),
        )),
    }
}

pub async fn teams(config: &Config, command: TeamsCommand, out: &mut Out) -> Result<u8> {
    let services = Services::open(config, Lifetime::OneShot).await?;
    let result = async {
        match command {
            TeamsCommand::Create { name } => {
                check_name(&name)?;
                let id = dragnet_api::new_team_id();
                let team = services
                    .db
                    .teams()
                    .create_team(&id, &name, services.clock.now())
                    .await?;
                writeln!(out, "created team {} ({})", team.name, team.team_id)?;
            }
            TeamsCommand::List => {
                for team in services.db.teams().list_teams().await? {
                    writeln!(
                        out,
                        "{:<24} {}  created {}",
                        team.name,
                        team.team_id,
                        team.created_at.format("%Y-%m-%d %H:%M:%S")
                    )?;
                }
            }
        }
        anyhow::Ok(EXIT_COMPLETE)
    }
    .await;
    services.shutdown().await;
    result
}

pub async fn tokens(config: &Config, command: TokensCommand, out: &mut Out) -> Result<u8> {
    let services = Services::open(config, Lifetime::OneShot).await?;
    let result = async {
        match command {
            TokensCommand::Create { team } => {
                let made =
                    dragnet_api::create_token(&services.db, &team, services.clock.now()).await?;
                say(&format!(
                    "token {} for team {} — shown once; only its hash is kept",
                    made.info.token_id, made.info.team
                ));
                writeln!(out, "{}", made.token)?;
            }
            TokensCommand::Revoke { token_id } => {
                services
                    .db
                    .teams()
                    .revoke_token(&token_id, services.clock.now())
                    .await?;
                writeln!(out, "revoked {token_id}")?;
            }
            TokensCommand::List { team } => {
                for t in services.db.teams().list_tokens(team.as_deref()).await? {
                    let state = match t.revoked_at {
                        Some(at) => format!("revoked {}", at.format("%Y-%m-%d %H:%M:%S")),
                        None => "live".to_string(),
                    };
                    writeln!(
                        out,
                        "{}  {:<24} created {}  {state}",
                        t.token_id,
                        t.team,
                        t.created_at.format("%Y-%m-%d %H:%M:%S")
                    )?;
                }
            }
        }
        anyhow::Ok(EXIT_COMPLETE)
    }
    .await;
    services.shutdown().await;
    result
}
