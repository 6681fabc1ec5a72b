//! What started a run, in the UI (issue 21): a line on the run's page
//! (its kind, the tick and schedule of a scheduled run, who asked), and
//! the runs list's trigger filter and column.

use dragnet_engine::run::{RunTrigger, TriggerKind};
use maud::{html, Markup};

/// The run page's line: "Started by schedule sch_… for 04:00 UTC (fired
/// 04:00:01 UTC)", "Started through the API by token:tok_…", …
pub fn line(trigger: Option<&RunTrigger>) -> Markup {
    let Some(t) = trigger else {
        return html! { p.trigger { "Started: not recorded" } };
    };
    let at = |d: Option<chrono::DateTime<chrono::Utc>>| {
        d.map(|d| d.format("%Y-%m-%d %H:%M:%S UTC").to_string())
            .unwrap_or_else(|| "-".into())
    };
    html! {
        p.trigger data-trigger=(t.kind.as_str()) {
            "Started "
            @match t.kind {
                TriggerKind::Manual => { "manually (" code { "dragnet run" } ")" }
                TriggerKind::Api => "through the API",
                TriggerKind::Rerun => "as a rerun",
                TriggerKind::Schedule => {
                    "by schedule " code { (t.schedule_id.as_deref().unwrap_or("-")) }
                    " for the tick of " (at(t.scheduled_for)) " (fired " (at(t.fired_at)) ")"
                }
                TriggerKind::Backfill => {
                    "by a backfill of schedule " code { (t.schedule_id.as_deref().unwrap_or("-")) }
                    " for the tick of " (at(t.scheduled_for)) " (started " (at(t.fired_at)) ")"
                }
            }
            @if let Some(who) = &t.started_by {
                " by " code { (who) }
            }
        }
    }
}

/// The runs list's trigger choices, `chosen` selected.
pub fn options(chosen: Option<TriggerKind>) -> Markup {
    html! {
        option value="" { "any trigger" }
        @for kind in TriggerKind::ALL {
            option value=(kind.as_str()) selected[chosen == Some(kind)] { (kind.as_str()) }
        }
    }
}

/// A listed run's trigger cell.
pub fn cell(kind: Option<TriggerKind>) -> &'static str {
    kind.map_or("-", TriggerKind::as_str)
}
