//! Run ids: `run_<UTC time to the millisecond>_<sequence><random>`, both
//! parts 8 hex digits. Ids sort in the order they were made: by their
//! time, and within one millisecond of one process by the sequence, which
//! every id this process makes takes the next of. Queued runs start
//! oldest first by `(started_at, run_id)`, so two runs submitted in the
//! same millisecond start in the order they came. The random part keeps
//! ids from different processes apart.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU32, Ordering};

use chrono::{DateTime, Utc};

/// The sequence of this process's ids.
static SEQUENCE: AtomicU32 = AtomicU32::new(0);

/// A fresh run id made at `now`.
pub fn new_run_id(now: DateTime<Utc>) -> String {
    let sequence = SEQUENCE.fetch_add(1, Ordering::Relaxed);
    format!(
        "run_{}_{sequence:08x}{:08x}",
        now.format("%Y%m%dT%H%M%S%3f"),
        random()
    )
}

/// 32 random bits: std's hasher keys, drawn at random for each thread
/// and changed for every `RandomState`.
fn random() -> u32 {
    RandomState::new().build_hasher().finish() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_made_in_one_millisecond_sort_in_the_order_they_were_made() {
        let now = Utc::now();
        let ids: Vec<String> = (0..1000).map(|_| new_run_id(now)).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(ids, sorted);
        sorted.dedup();
        assert_eq!(sorted.len(), ids.len(), "every id is new");
        let later = new_run_id(now + chrono::Duration::milliseconds(1));
        assert!(ids.iter().all(|id| *id < later), "{later}");
    }
}
