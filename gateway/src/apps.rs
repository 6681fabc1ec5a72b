//! The connected-app tools of an agent that binds `app` providers' tools
//! (SPEC §7), always listed and never counted: `list_connections` (each
//! toolkit, whether the caller has connected it, its tool count) and
//! `connect_toolkit {toolkit, credentials}` (the caller's own credentials
//! for it, sealed and stored for the user or tenant). A connected app's
//! calls carry those credentials, so their cache entries are scoped as
//! runtime credentials are; an app the caller has not connected is called
//! as configured (its organisation credentials, or none).
//!
//! The tools' names and definitions; the gateway answers them in
//! `runtime` (its `apps` module).

use serde_json::json;

use crate::definition::ToolDefinition;

pub const LIST_CONNECTIONS: &str = "list_connections";
pub const CONNECT_TOOLKIT: &str = "connect_toolkit";

/// The two connected-app tools.
pub fn connection_tools() -> Vec<ToolDefinition> {
    vec![
        ToolDefinition {
            name: LIST_CONNECTIONS.into(),
            description: "The connected-app toolkits this agent can use: whether you have \
                          connected each (with connect_toolkit) and how many tools it has."
                .into(),
            input_schema: json!({"type": "object", "properties": {}}),
        },
        ToolDefinition {
            name: CONNECT_TOOLKIT.into(),
            description: "Connect a toolkit with your own credentials (an access token): its \
                          tools then act as you. Kept encrypted, for you only."
                .into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "toolkit": {"type": "string"},
                    "credentials": {"type": "string", "description": "An access token for the toolkit."}
                },
                "required": ["toolkit", "credentials"]
            }),
        },
    ]
}
