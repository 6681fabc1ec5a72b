//! The gateway's side of connected apps (SPEC §7): which of an agent's
//! providers are apps, the answers of `list_connections` and
//! `connect_toolkit` (their definitions are [`crate::apps`]'s), and the
//! caller's stored credentials for an app's call.

use std::collections::BTreeMap;

use dragnet_core::secret::Secret;
use serde_json::{json, Map, Value};

use super::{Answer, Gateway};
use crate::apps::{CONNECT_TOOLKIT, LIST_CONNECTIONS};
use crate::caller::Caller;
use crate::config::ProviderKind;
use crate::connections::owner_of;
use crate::error::Error;

impl Gateway {
    /// Whether `agent` binds tools of an `app` provider.
    pub(crate) fn binds_apps(&self, agent: &str) -> bool {
        !self.app_toolkits(agent).is_empty()
    }

    /// `agent`'s connected-app toolkits and how many of their tools it binds.
    fn app_toolkits(&self, agent: &str) -> BTreeMap<String, usize> {
        let mut kits = BTreeMap::new();
        for b in self
            .config
            .agents
            .get(agent)
            .map_or(&[][..], |a| &a.bindings)
        {
            if self.is_app(&b.provider) {
                *kits.entry(b.provider.clone()).or_default() += 1;
            }
        }
        kits
    }

    fn is_app(&self, provider: &str) -> bool {
        matches!(
            self.config.providers.get(provider).map(|p| &p.kind),
            Some(ProviderKind::OpenApi { app: true, .. })
        )
    }

    /// Answers `list_connections` and `connect_toolkit`; `None` for any
    /// other tool.
    pub(crate) async fn connection_call(
        &self,
        caller: &Caller,
        name: &str,
        args: &Map<String, Value>,
    ) -> Option<Answer> {
        if name != LIST_CONNECTIONS && name != CONNECT_TOOLKIT {
            return None;
        }
        let agent = &caller.claims.agent;
        let kits = self.app_toolkits(agent);
        if kits.is_empty() {
            return None;
        }
        let owner = owner_of(&caller.claims);
        let Some((store, sealer)) = &self.connections else {
            return Some(Answer::error(
                "this gateway keeps no connections: it has no connections key (connections_key_env)",
            ));
        };
        if name == LIST_CONNECTIONS {
            let mut listed = Vec::new();
            for (kit, tools) in &kits {
                let connected = match store.get_sealed(&owner, kit).await {
                    Ok(sealed) => sealed.is_some_and(|s| sealer.open(&owner, kit, &s).is_some()),
                    Err(e) => return Some(Answer::error(Error::from(e).to_string())),
                };
                listed.push(json!({"toolkit": kit, "connected": connected, "tools": tools}));
            }
            return Some(Answer::said(json!({"toolkits": listed}).to_string()));
        }
        let Some(kit) = args.get("toolkit").and_then(Value::as_str) else {
            return Some(Answer::error("give `toolkit`: one list_connections names"));
        };
        if !kits.contains_key(kit) {
            let known: Vec<&str> = kits.keys().map(String::as_str).collect();
            return Some(Answer::error(format!(
                "no toolkit `{kit}` for agent `{agent}`; its toolkits: {}",
                known.join(", ")
            )));
        }
        let secret = match args
            .get("credentials")
            .and_then(Value::as_str)
            .map(str::trim)
        {
            Some(token) if !token.is_empty() => Secret::new(token),
            _ => {
                return Some(Answer::error(
                    "give `credentials`: an access token for the toolkit",
                ))
            }
        };
        let sealed = match sealer.seal(&owner, kit, &secret) {
            Ok(s) => s,
            Err(e) => return Some(Answer::error(e.to_string())),
        };
        Some(match store.put_sealed(&owner, kit, &sealed).await {
            Ok(()) => Answer::said(
                json!({"toolkit": kit, "connected": true,
                    "note": format!("`{kit}` is connected for you: its tools act with your credentials.")})
                .to_string(),
            ),
            Err(e) => Answer::error(Error::from(e).to_string()),
        })
    }

    /// The caller's stored credentials for `provider` when it is a
    /// connected app they connected (else the call goes as configured:
    /// with the organisation's credentials, or none).
    pub(crate) async fn stored_credentials(
        &self,
        caller: &Caller,
        provider: &str,
    ) -> Result<Option<Secret>, Error> {
        if !self.is_app(provider) || caller.runtime.get(provider).is_some() {
            return Ok(None);
        }
        let Some((store, sealer)) = &self.connections else {
            return Ok(None);
        };
        let owner = owner_of(&caller.claims);
        Ok(store
            .get_sealed(&owner, provider)
            .await?
            .and_then(|sealed| sealer.open(&owner, provider, &sealed)))
    }
}
