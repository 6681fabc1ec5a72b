//! Cron triggers in time: when a trigger's ticks fall, and what becomes of
//! the ticks due since the last one a scheduler handled. Pure functions of
//! the times they are given, so a scheduler passes the database's clock
//! and tests pass any time at all.
//!
//! The rules, in local time of the trigger's zone:
//! - A wall time that does not exist (the hour skipped when clocks go
//!   forward) fires once, at the first instant after the gap: `30 2 * * *`
//!   in Europe/Berlin fires at 03:00 CEST on the last Sunday of March, and
//!   every tick inside the gap is that one tick.
//! - A wall time that happens twice (the hour repeated when clocks go back)
//!   fires once, the first time: `30 2 * * *` fires at 02:30 CEST, not again
//!   at 02:30 CET.
//! - A tick handled more than `late_after` after its time was missed while
//!   nothing was running the schedule. `catch_up` decides: `none` records
//!   them all as missed; `last` fires the latest one, unless a tick on time
//!   came with them, and records the rest as missed; `all` fires them, the
//!   most recent `MAX_CATCH_UP` at most. Ticks older than that are not
//!   looked at.
//! - A schedule resumed after a pause treats the ticks that fell while it
//!   was paused by the same rule ([`paused_ticks`]): `none` records them
//!   all as paused; `last` records all but the latest, which the next pass
//!   fires; `all` leaves them to fire, the most recent `MAX_CATCH_UP` at
//!   most (older ones are recorded as paused).

use std::str::FromStr;
use std::time::Duration;

use chrono::{DateTime, NaiveDateTime, TimeZone, Timelike, Utc};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

/// The most ticks one pass considers (and `catch_up: all` fires).
pub const MAX_CATCH_UP: usize = 100;

/// What happens to ticks missed while the schedule was not running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CatchUp {
    None,
    #[default]
    Last,
    All,
}

/// What a tick does while the schedule's previous run is still running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Overlap {
    /// The tick is recorded as skipped, with the run it would overlap.
    #[default]
    Skip,
    /// It starts anyway.
    Allow,
    /// It waits, and starts when the previous run ends.
    Queue,
}

impl CatchUp {
    pub fn as_str(self) -> &'static str {
        match self {
            CatchUp::None => "none",
            CatchUp::Last => "last",
            CatchUp::All => "all",
        }
    }

    pub fn parse(s: &str) -> Option<CatchUp> {
        [CatchUp::None, CatchUp::Last, CatchUp::All]
            .into_iter()
            .find(|c| c.as_str() == s)
    }
}

impl Overlap {
    pub fn as_str(self) -> &'static str {
        match self {
            Overlap::Skip => "skip",
            Overlap::Allow => "allow",
            Overlap::Queue => "queue",
        }
    }

    pub fn parse(s: &str) -> Option<Overlap> {
        [Overlap::Skip, Overlap::Allow, Overlap::Queue]
            .into_iter()
            .find(|o| o.as_str() == s)
    }
}

/// A compiled cron trigger.
#[derive(Debug, Clone)]
pub struct CronTrigger {
    /// As written (5 or 6 fields).
    pub expression: String,
    pub schedule: cron::Schedule,
    pub timezone: Tz,
    pub catch_up: CatchUp,
    pub overlap: Overlap,
    pub pause_after: PauseAfter,
}

/// The most consecutive failed or partial runs `pause_after` may name.
pub const PAUSE_AFTER_MAX: u32 = 100;

/// How many consecutive failed (or partial) runs pause a schedule; `None`
/// for no limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PauseAfter {
    pub failed: Option<u32>,
    pub partial: Option<u32>,
}

impl PauseAfter {
    /// Why a schedule whose latest ended runs (newest first) have
    /// `statuses` pauses, if it does: a streak of `failed` (or `partial`)
    /// runs as long as the limit.
    pub fn reason<'a>(&self, statuses: impl IntoIterator<Item = &'a str>) -> Option<String> {
        let mut statuses = statuses.into_iter().peekable();
        let first = *statuses.peek()?;
        let limit = match first {
            "failed" => self.failed?,
            "partial" => self.partial?,
            _ => return None,
        };
        let streak = statuses.take_while(|s| *s == first).count();
        (streak >= limit as usize).then(|| {
            format!(
                "paused after {streak} consecutive {first} runs (pause_after.{first}: {limit}); \
                 resume it once the cause is fixed"
            )
        })
    }

    /// The most runs [`PauseAfter::reason`] needs to see.
    pub fn window(&self) -> Option<u32> {
        self.failed.max(self.partial)
    }
}

/// Parses 5 fields (a `0` seconds field is put first) or 6.
pub fn parse_cron(expression: &str) -> Result<cron::Schedule, String> {
    let fields = expression.split_whitespace().count();
    let full = match fields {
        5 => format!("0 {}", expression.trim()),
        6 => expression.trim().to_string(),
        n => {
            return Err(format!(
                "invalid cron expression `{expression}`: it has {n} fields; write 5 \
                 (minute hour day-of-month month day-of-week) or 6 (seconds first)"
            ))
        }
    };
    cron::Schedule::from_str(&full).map_err(|e| {
        format!(
            "invalid cron expression `{expression}`: {}; write 5 fields \
             (minute hour day-of-month month day-of-week) or 6 (seconds first)",
            dragnet_located::context::last_line(&e.to_string())
        )
    })
}

impl CronTrigger {
    /// A trigger from its stored parts (a schedule row).
    pub fn from_parts(
        expression: &str,
        timezone: &str,
        catch_up: &str,
        overlap: &str,
    ) -> Result<CronTrigger, String> {
        Ok(CronTrigger {
            expression: expression.to_string(),
            schedule: parse_cron(expression)?,
            timezone: Tz::from_str(timezone)
                .map_err(|_| format!("unknown time zone `{timezone}`"))?,
            catch_up: CatchUp::parse(catch_up)
                .ok_or_else(|| format!("unknown catch_up `{catch_up}`"))?,
            overlap: Overlap::parse(overlap)
                .ok_or_else(|| format!("unknown overlap `{overlap}`"))?,
            // Kept beside the trigger's times by whoever stored it.
            pause_after: PauseAfter::default(),
        })
    }
}

/// The wall time of `at` in `tz`, labelled UTC so the cron iterator walks
/// wall times without any daylight saving of its own.
fn wall(at: DateTime<Utc>, tz: Tz) -> DateTime<Utc> {
    at.with_timezone(&tz).naive_local().and_utc()
}

/// The instant a wall time fires at, by the rules above.
fn instant(wall: NaiveDateTime, tz: Tz) -> Option<DateTime<Utc>> {
    if let Some(first) = tz.from_local_datetime(&wall).earliest() {
        return Some(first.with_timezone(&Utc));
    }
    // In a gap: the first wall minute after it that exists.
    (1..=24 * 60).find_map(|m| {
        let later = wall + chrono::Duration::minutes(m);
        let later = later.with_second(0)?;
        tz.from_local_datetime(&later)
            .earliest()
            .map(|t| t.with_timezone(&Utc))
    })
}

impl CronTrigger {
    /// The next `n` ticks after `after`.
    pub fn next_ticks(&self, after: DateTime<Utc>, n: usize) -> Vec<DateTime<Utc>> {
        let mut out: Vec<DateTime<Utc>> = Vec::with_capacity(n);
        for w in self.schedule.after(&wall(after, self.timezone)) {
            if out.len() >= n {
                break;
            }
            let Some(t) = instant(w.naive_utc(), self.timezone) else {
                continue;
            };
            if t > after && out.last().is_none_or(|last| t > *last) {
                out.push(t);
            }
            // A wall time far past `after` ends nothing: keep going.
        }
        out
    }

    /// The ticks in `[from, to]`, oldest first, by the rules above (a
    /// backfill's window); `Err(limit)` when there are more than `limit`.
    pub fn ticks_in(
        &self,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<DateTime<Utc>>, usize> {
        let mut out: Vec<DateTime<Utc>> = Vec::new();
        let before = from - chrono::Duration::seconds(1);
        // A wall time a day before `from` may fall after it (a repeated
        // hour); one past `to` by a day ends the walk.
        let start = wall(before, self.timezone) - chrono::Duration::days(1);
        let end = wall(to, self.timezone) + chrono::Duration::days(1);
        for w in self.schedule.after(&start) {
            if w > end {
                break;
            }
            let Some(t) = instant(w.naive_utc(), self.timezone) else {
                continue;
            };
            if t < from || t > to || out.last().is_some_and(|last| t <= *last) {
                continue;
            }
            if out.len() == limit {
                return Err(limit);
            }
            out.push(t);
        }
        Ok(out)
    }

    /// The ticks in `(after, until]`, oldest first: the most recent
    /// `MAX_CATCH_UP + 1` at most (one more than can fire, so a pass knows
    /// some were left out).
    pub fn ticks_between(&self, after: DateTime<Utc>, until: DateTime<Utc>) -> Vec<DateTime<Utc>> {
        let mut out: Vec<DateTime<Utc>> = Vec::new();
        let start = wall(until, self.timezone) + chrono::Duration::seconds(1);
        // Walking back, a wall time an hour or two before `after` (a
        // repeated hour) may still be after it: stop a day past it.
        let floor = wall(after, self.timezone) - chrono::Duration::days(1);
        for w in self.schedule.after(&start).rev() {
            if w < floor || out.len() > MAX_CATCH_UP {
                break;
            }
            let Some(t) = instant(w.naive_utc(), self.timezone) else {
                continue;
            };
            if t > after && t <= until && !out.contains(&t) {
                out.push(t);
            }
        }
        out.sort();
        out
    }
}

/// What a pass does with one due tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    /// Start a run (unless the overlap policy says otherwise).
    Fire,
    /// Record it as missed.
    Missed,
}

/// One due tick and what to do with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Due {
    pub scheduled_for: DateTime<Utc>,
    pub disposition: Disposition,
    /// It was handled more than `late_after` after its time.
    pub late: bool,
}

/// The ticks due in `(after, now]` and what becomes of each, oldest first.
pub fn plan(
    trigger: &CronTrigger,
    after: DateTime<Utc>,
    now: DateTime<Utc>,
    late_after: Duration,
) -> Vec<Due> {
    let ticks = trigger.ticks_between(after, now);
    let late_after = chrono::Duration::from_std(late_after).unwrap_or(chrono::Duration::MAX);
    let is_late = |t: &DateTime<Utc>| now - *t > late_after;
    let any_on_time = ticks.iter().any(|t| !is_late(t));
    let latest_late = ticks.iter().rev().find(|t| is_late(t)).copied();
    let fire_from = ticks.len().saturating_sub(MAX_CATCH_UP);
    ticks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let late = is_late(t);
            let fire = !late
                || match trigger.catch_up {
                    CatchUp::None => false,
                    CatchUp::Last => !any_on_time && Some(*t) == latest_late,
                    CatchUp::All => i >= fire_from,
                };
            Due {
                scheduled_for: *t,
                disposition: if fire {
                    Disposition::Fire
                } else {
                    Disposition::Missed
                },
                late,
            }
        })
        .collect()
}

/// The ticks in `(after, now]` a schedule resumed at `now` records as
/// paused, oldest first: by `catch_up`, all of them (`none`), all but the
/// latest (`last`), or those older than the most recent `MAX_CATCH_UP`
/// (`all`). The rest are left due, for the next pass to fire.
pub fn paused_ticks(
    trigger: &CronTrigger,
    after: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Vec<DateTime<Utc>> {
    let mut ticks = trigger.ticks_between(after, now);
    let keep = match trigger.catch_up {
        CatchUp::None => 0,
        CatchUp::Last => 1,
        CatchUp::All => MAX_CATCH_UP,
    };
    ticks.truncate(ticks.len().saturating_sub(keep));
    ticks
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn trigger(expr: &str, tz: &str, catch_up: CatchUp) -> CronTrigger {
        CronTrigger {
            expression: expr.into(),
            schedule: cron::Schedule::from_str(&format!("0 {expr}")).expect("a schedule"),
            timezone: Tz::from_str(tz).expect("a zone"),
            catch_up,
            overlap: Overlap::Skip,
            pause_after: PauseAfter::default(),
        }
    }

    #[test]
    fn a_window_s_ticks_cross_both_daylight_saving_changes_once_each() {
        let t = trigger("30 2 * * *", "Europe/Berlin", CatchUp::Last);
        let spring = t
            .ticks_in(utc("2026-03-28T00:00:00Z"), utc("2026-03-30T23:59:59Z"), 10)
            .unwrap();
        let spring: Vec<String> = spring.iter().map(|t| t.to_rfc3339()).collect();
        // 02:30 CET; the gap: 03:00 CEST; 02:30 CEST.
        assert_eq!(
            spring,
            [
                "2026-03-28T01:30:00+00:00",
                "2026-03-29T01:00:00+00:00",
                "2026-03-30T00:30:00+00:00"
            ]
        );
        let autumn = t
            .ticks_in(utc("2026-10-24T00:00:00Z"), utc("2026-10-26T23:59:59Z"), 10)
            .unwrap();
        let autumn: Vec<String> = autumn.iter().map(|t| t.to_rfc3339()).collect();
        // 02:30 CEST; the repeated hour once, the first time; 02:30 CET.
        assert_eq!(
            autumn,
            [
                "2026-10-24T00:30:00+00:00",
                "2026-10-25T00:30:00+00:00",
                "2026-10-26T01:30:00+00:00"
            ]
        );
        // Both ends are inside; more than the limit is refused.
        let hourly = trigger("0 * * * *", "UTC", CatchUp::Last);
        let from = utc("2026-01-01T00:00:00Z");
        assert_eq!(hourly.ticks_in(from, from, 5).unwrap(), vec![from]);
        let day = hourly
            .ticks_in(from, utc("2026-01-01T23:00:00Z"), 24)
            .unwrap();
        assert_eq!(day.len(), 24);
        assert_eq!(
            hourly.ticks_in(from, utc("2026-01-02T00:00:00Z"), 24),
            Err(24)
        );
    }

    #[test]
    fn a_streak_as_long_as_its_limit_pauses() {
        let limits = PauseAfter {
            failed: Some(3),
            partial: Some(2),
        };
        let said = |s: &[&str]| limits.reason(s.iter().copied());
        assert!(said(&["failed", "failed", "failed", "succeeded"])
            .is_some_and(|r| r.contains("3 consecutive failed")));
        assert_eq!(said(&["failed", "failed", "succeeded", "failed"]), None);
        assert_eq!(said(&["failed", "partial", "failed", "failed"]), None);
        assert!(said(&["partial", "partial"]).is_some());
        assert_eq!(said(&["succeeded", "failed", "failed", "failed"]), None);
        assert_eq!(said(&[]), None);
        let only_failed = PauseAfter {
            failed: Some(1),
            partial: None,
        };
        assert_eq!(only_failed.reason(["partial"; 9]), None);
        assert_eq!(limits.window(), Some(3));
    }

    fn utc(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s)
            .expect("a time")
            .with_timezone(&Utc)
    }

    #[test]
    fn a_resume_records_the_pauses_ticks_catch_up_does_not_fire() {
        let (from, to) = (utc("2026-06-01T10:00:30Z"), utc("2026-06-01T11:05:00Z"));
        let recorded = |catch_up| paused_ticks(&trigger("*/10 * * * *", "UTC", catch_up), from, to);
        let all_six: Vec<_> = (1..=6)
            .map(|i| utc("2026-06-01T10:00:00Z") + chrono::Duration::minutes(10 * i))
            .collect();
        assert_eq!(recorded(CatchUp::None), all_six);
        assert_eq!(recorded(CatchUp::Last), all_six[..5]);
        assert!(recorded(CatchUp::All).is_empty());
    }

    #[test]
    fn berlin_spring_forward_fires_the_skipped_time_once_after_the_gap() {
        // 2026-03-29: 02:00 CET becomes 03:00 CEST (01:00 UTC).
        let t = trigger("30 2 * * *", "Europe/Berlin", CatchUp::Last);
        let ticks = t.next_ticks(utc("2026-03-27T12:00:00Z"), 3);
        assert_eq!(
            ticks,
            vec![
                utc("2026-03-28T01:30:00Z"), // 02:30 CET
                utc("2026-03-29T01:00:00Z"), // no 02:30: 03:00 CEST
                utc("2026-03-30T00:30:00Z"), // 02:30 CEST
            ]
        );
        let every = trigger("*/15 * * * *", "Europe/Berlin", CatchUp::Last);
        let ticks = every.ticks_between(utc("2026-03-29T00:40:00Z"), utc("2026-03-29T01:20:00Z"));
        // 01:45 CET, then the gap's four wall times as one tick at 03:00 CEST, then 03:15.
        assert_eq!(
            ticks,
            vec![
                utc("2026-03-29T00:45:00Z"),
                utc("2026-03-29T01:00:00Z"),
                utc("2026-03-29T01:15:00Z"),
            ]
        );
    }

    #[test]
    fn berlin_fall_back_fires_the_repeated_time_once() {
        // 2026-10-25: 03:00 CEST becomes 02:00 CET (01:00 UTC).
        let t = trigger("30 2 * * *", "Europe/Berlin", CatchUp::Last);
        let ticks = t.ticks_between(utc("2026-10-24T12:00:00Z"), utc("2026-10-26T12:00:00Z"));
        assert_eq!(
            ticks,
            vec![utc("2026-10-25T00:30:00Z"), utc("2026-10-26T01:30:00Z")]
        );
        assert_eq!(t.next_ticks(utc("2026-10-24T12:00:00Z"), 2), ticks);
        // Asked from inside the repeated hour, the first pass is not fired again.
        assert_eq!(
            t.next_ticks(utc("2026-10-25T01:40:00Z"), 1),
            vec![utc("2026-10-26T01:30:00Z")]
        );
    }

    #[test]
    fn new_york_changes_both_ways() {
        // 2026-03-08 02:00 EST → 03:00 EDT; 2026-11-01 02:00 EDT → 01:00 EST.
        let t = trigger("30 2 * * *", "America/New_York", CatchUp::Last);
        assert_eq!(
            t.next_ticks(utc("2026-03-07T12:00:00Z"), 2),
            vec![utc("2026-03-08T07:00:00Z"), utc("2026-03-09T06:30:00Z")]
        );
        let t = trigger("30 1 * * *", "America/New_York", CatchUp::Last);
        assert_eq!(
            t.next_ticks(utc("2026-10-31T12:00:00Z"), 2),
            vec![utc("2026-11-01T05:30:00Z"), utc("2026-11-02T06:30:00Z")]
        );
    }

    #[test]
    fn catch_up_decides_what_downtime_fires() {
        let after = utc("2026-06-01T00:00:00Z");
        let now = utc("2026-06-01T05:00:30Z");
        let late = Duration::from_secs(60);
        let fired = |c: CatchUp| -> Vec<DateTime<Utc>> {
            plan(&trigger("0 * * * *", "UTC", c), after, now, late)
                .into_iter()
                .filter(|d| d.disposition == Disposition::Fire)
                .map(|d| d.scheduled_for)
                .collect()
        };
        // 01:00 … 04:00 were missed; 05:00 is on time.
        assert_eq!(fired(CatchUp::None), vec![utc("2026-06-01T05:00:00Z")]);
        assert_eq!(fired(CatchUp::Last), vec![utc("2026-06-01T05:00:00Z")]);
        assert_eq!(fired(CatchUp::All).len(), 5);
        let all = plan(
            &trigger("0 * * * *", "UTC", CatchUp::None),
            after,
            now,
            late,
        );
        assert_eq!(all.len(), 5);
        assert_eq!(all.iter().filter(|d| d.late).count(), 4);
        // Nothing on time: `last` fires the latest missed tick.
        let now = utc("2026-06-01T05:30:00Z");
        let p = plan(
            &trigger("0 * * * *", "UTC", CatchUp::Last),
            after,
            now,
            late,
        );
        let fired: Vec<_> = p
            .iter()
            .filter(|d| d.disposition == Disposition::Fire)
            .collect();
        assert_eq!(fired.len(), 1);
        assert_eq!(fired[0].scheduled_for, utc("2026-06-01T05:00:00Z"));
        // A long downtime: at most MAX_CATCH_UP fire.
        let p = plan(
            &trigger("* * * * *", "UTC", CatchUp::All),
            after,
            utc("2026-06-02T00:00:00Z"),
            late,
        );
        assert_eq!(p.len(), MAX_CATCH_UP + 1);
        let n = p
            .iter()
            .filter(|d| d.disposition == Disposition::Fire)
            .count();
        assert_eq!(n, MAX_CATCH_UP);
    }
}
