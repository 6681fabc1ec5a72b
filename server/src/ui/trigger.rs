//! What started a run, in the UI (issue 21): a line on the run's page
//! (its kind, the tick and schedule of a scheduled run, who asked), and
//! the runs list's trigger filter and column.

use dragnet_engine::run::{RunTrigger, TriggerKind};

use super::html::esc;

/// The run page's line: "Started by schedule sch_… for 04:00 UTC (fired
/// 04:00:01 UTC)", "Started through the API by token:tok_…", …
pub fn line(trigger: Option<&RunTrigger>) -> String {
    let Some(t) = trigger else {
        return "<p class=\"trigger\">Started: not recorded</p>".into();
    };
    let at = |d: Option<chrono::DateTime<chrono::Utc>>| {
        d.map(|d| d.format("%Y-%m-%d %H:%M:%S UTC").to_string())
            .unwrap_or_else(|| "-".into())
    };
    let how = match t.kind {
        TriggerKind::Manual => "manually (<code>dragnet run</code>)".to_string(),
        TriggerKind::Api => "through the API".to_string(),
        TriggerKind::Rerun => "as a rerun".to_string(),
        TriggerKind::Schedule => format!(
            "by schedule <code>{}</code> for the tick of {} (fired {})",
            esc(t.schedule_id.as_deref().unwrap_or("-")),
            esc(&at(t.scheduled_for)),
            esc(&at(t.fired_at)),
        ),
    };
    let by = t
        .started_by
        .as_deref()
        .map(|who| format!(" by <code>{}</code>", esc(who)))
        .unwrap_or_default();
    format!(
        "<p class=\"trigger\" data-trigger=\"{kind}\">Started {how}{by}</p>",
        kind = t.kind.as_str()
    )
}

/// The runs list's trigger choices, `chosen` selected.
pub fn options(chosen: Option<TriggerKind>) -> String {
    let mut options = String::from("<option value=\"\">any trigger</option>");
    for kind in TriggerKind::ALL {
        let selected = match chosen == Some(kind) {
            true => " selected",
            false => "",
        };
        options.push_str(&format!(
            "<option value=\"{k}\"{selected}>{k}</option>",
            k = kind.as_str()
        ));
    }
    options
}

/// A listed run's trigger cell.
pub fn cell(kind: Option<TriggerKind>) -> &'static str {
    kind.map_or("-", TriggerKind::as_str)
}
