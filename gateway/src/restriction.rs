//! The retrieval-only rule (SPEC §4): after a call whose answer was cut,
//! and until the agent has queried or fetched that result, the next call
//! in the same thread may only be a retrieval tool. A call of anything
//! else is refused with a tool error naming the result and what to call.
//! Reading the result as an MCP resource (`resources/read` of
//! `dragnet://results/<id>`) counts as reading it. A pending cut lapses
//! with its result (15 minutes).

use std::collections::HashMap;
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use dragnet_core::{ResultId, ResultScope};

use crate::error::Error;
use crate::results::RESULT_TTL;

/// The retrieval tools' names.
pub const QUERY_TOOL: &str = "queryToolResult";
pub const FETCH_TOOL: &str = "fetchToolResult";

/// By (organisation, thread): the unread cut result and when it was cut.
type Pending = HashMap<(String, String), (ResultId, DateTime<Utc>)>;

/// Each thread's unread cut result, if any.
#[derive(Default)]
pub struct PendingCuts(Mutex<Pending>);

impl PendingCuts {
    fn map(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn key(scope: &ResultScope) -> (String, String) {
        (scope.org.clone(), scope.thread.clone())
    }

    /// A call in `scope` answered with cut result `id` at `now`.
    pub fn cut(&self, scope: &ResultScope, id: &ResultId, now: DateTime<Utc>) {
        self.map().insert(Self::key(scope), (id.clone(), now));
    }

    /// Result `id` was read in `scope` (as a resource): if it is the
    /// pending cut, the thread may call other tools again.
    pub fn read(&self, scope: &ResultScope, id: &ResultId) {
        let mut map = self.map();
        let key = Self::key(scope);
        if map.get(&key).is_some_and(|(pending, _)| pending == id) {
            map.remove(&key);
        }
    }

    /// May `tool` be called in `scope` now? A retrieval of the pending
    /// result clears it.
    pub fn admit(
        &self,
        scope: &ResultScope,
        tool: &str,
        result_id: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<(), Error> {
        let mut map = self.map();
        let key = Self::key(scope);
        let Some((pending, at)) = map.get(&key).cloned() else {
            return Ok(());
        };
        if now - at >= RESULT_TTL {
            map.remove(&key);
            return Ok(());
        }
        if tool == QUERY_TOOL || tool == FETCH_TOOL {
            if result_id == Some(pending.as_str()) {
                map.remove(&key);
            }
            return Ok(());
        }
        Err(Error::RetrievalOnly {
            tool: tool.to_string(),
            id: pending.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn after_a_cut_only_retrieval_of_it_is_let_through_first() {
        let cuts = PendingCuts::default();
        let me = ResultScope {
            org: "acme".into(),
            thread: "t1".into(),
        };
        let other = ResultScope {
            org: "acme".into(),
            thread: "t2".into(),
        };
        let now = DateTime::from_timestamp(1_790_000_000, 0).unwrap_or_default();
        let id = ResultId::new();
        cuts.cut(&me, &id, now);
        let refused = cuts.admit(&me, "listOrders", None, now).unwrap_err();
        assert_eq!(refused.kind(), "retrieval_only");
        assert!(refused.to_string().contains(id.as_str()));
        assert!(
            cuts.admit(&other, "listOrders", None, now).is_ok(),
            "threads are apart"
        );
        // Retrieving another result does not lift it; retrieving this one does.
        assert!(cuts.admit(&me, QUERY_TOOL, Some("res_other"), now).is_ok());
        assert!(cuts.admit(&me, "listOrders", None, now).is_err());
        assert!(cuts.admit(&me, FETCH_TOOL, Some(id.as_str()), now).is_ok());
        assert!(cuts.admit(&me, "listOrders", None, now).is_ok());
        // Reading it as a resource lifts it too; reading another does not,
        // nor does another thread's read.
        cuts.cut(&me, &id, now);
        cuts.read(&me, &ResultId::new());
        cuts.read(&other, &id);
        assert!(cuts.admit(&me, "listOrders", None, now).is_err());
        cuts.read(&me, &id);
        assert!(cuts.admit(&me, "listOrders", None, now).is_ok());
        // A cut lapses with its result.
        cuts.cut(&me, &id, now);
        let later = now + RESULT_TTL;
        assert!(cuts.admit(&me, "listOrders", None, later).is_ok());
    }
}
