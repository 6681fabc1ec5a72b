//! Stored results read as MCP resources (issue 24): `resources/read` of
//! `dragnet://results/<id>` answers the result the id names, scoped exactly
//! as `queryToolResult` and `fetchToolResult` are (another organisation's
//! or thread's id reads as unknown), and a read of the thread's pending cut
//! result counts as reading it (SPEC §4's restriction).

use dragnet_core::ResultId;

use super::Gateway;
use crate::caller::Caller;
use crate::error::Error;
use crate::results::{find, id_in_uri, StoredResult};

impl Gateway {
    /// The stored result `uri` names, as `caller` may read it.
    pub async fn read_result(&self, caller: &Caller, uri: &str) -> Result<StoredResult, Error> {
        let unknown = || Error::UnknownResult {
            id: uri.chars().take(96).collect(),
        };
        let text = id_in_uri(uri).ok_or_else(unknown)?;
        let found = find(self.results.as_ref(), &caller.scope, text, self.clock.now()).await?;
        if let Some(id) = ResultId::parse(text) {
            self.cuts.read(&caller.scope, &id);
        }
        Ok(found)
    }
}
