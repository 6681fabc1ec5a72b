//! Showing a workflow run: one live line per running step (indicatif
//! multi-progress) on a terminal, plain lines otherwise; then a summary
//! table and the outputs of the last steps.
//!
//! A local run's plain lines about steps starting and ending are held
//! until the executor waits ([`RunObserver::waiting`]) and then written in
//! one go: a run deciding a thousand branches in a row said two thousand
//! lines in as many writes. Nothing is held while the run waits, and a
//! step's progress is written at once (with anything held before it).

use std::collections::HashMap;
use std::io::{self, IsTerminal, Write};
use std::sync::Mutex;

use dragnet_core::progress::ProgressEvent;
use dragnet_engine::run::{RunObserver, RunRecord, StepRecord, StepStatus, StepType};
use dragnet_engine::workflow::model::Workflow;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::out::{say, say_lines, Out};
use crate::progress_line::describe;

pub struct RunDisplay {
    multi: Option<MultiProgress>,
    bars: Mutex<HashMap<String, ProgressBar>>,
    /// Plain lines held until the executor waits; `None` writes each at
    /// once (a followed server run, whose events have no such moment).
    held: Option<Mutex<String>>,
}

impl RunDisplay {
    /// The display of a run executed here.
    pub fn new(_wf: &Workflow) -> Self {
        RunDisplay {
            held: Some(Mutex::new(String::new())),
            ..RunDisplay::plain()
        }
    }

    /// A display knowing nothing of the workflow beforehand (a followed
    /// server run).
    pub fn plain() -> Self {
        let multi = std::io::stderr()
            .is_terminal()
            .then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()));
        RunDisplay {
            multi,
            bars: Mutex::new(HashMap::new()),
            held: None,
        }
    }

    pub fn finish(&self) {
        self.release();
        if let Ok(mut bars) = self.bars.lock() {
            for (_, bar) in bars.drain() {
                bar.finish_and_clear();
            }
        }
    }

    fn say(&self, line: String) {
        match &self.multi {
            Some(m) => {
                let _ = m.println(line);
            }
            None => self.plain_line(&line),
        }
    }

    /// A plain line: held when this display holds them, else written.
    fn plain_line(&self, line: &str) {
        match &self.held {
            Some(held) => {
                let mut held = held.lock().unwrap_or_else(|p| p.into_inner());
                held.push_str(line);
                held.push('\n');
            }
            None => say(line),
        }
    }

    /// Writes the held lines, in one write. The lock is kept while
    /// writing, so lines released from a step's task and from the
    /// executor come out in the order they were held.
    fn release(&self) {
        let Some(held) = &self.held else { return };
        let mut held = held.lock().unwrap_or_else(|p| p.into_inner());
        if !held.is_empty() {
            say_lines(&held);
            held.clear();
        }
    }
}

impl RunObserver for RunDisplay {
    fn step_started(&self, step: &str) {
        if let Some(m) = &self.multi {
            let bar = m.add(ProgressBar::new_spinner());
            if let Ok(style) = ProgressStyle::with_template("{spinner} {prefix}: {msg}") {
                bar.set_style(style);
            }
            bar.set_prefix(step.to_string());
            bar.set_message("running");
            bar.enable_steady_tick(std::time::Duration::from_millis(120));
            if let Ok(mut bars) = self.bars.lock() {
                bars.insert(step.to_string(), bar);
            }
        } else {
            self.plain_line(&format!("{step}: started"));
        }
    }

    fn step_progress(&self, step: &str, event: &ProgressEvent) {
        let text = describe(event);
        match self.bars.lock().ok().and_then(|b| b.get(step).cloned()) {
            Some(bar) => bar.set_message(text),
            None => {
                // From a running step's task, while the executor waits.
                self.plain_line(&format!("{step}: {text}"));
                self.release();
            }
        }
    }

    fn waiting(&self) {
        self.release();
    }

    fn run_finished(&self, _record: &RunRecord) {
        self.release();
    }

    fn step_finished(&self, record: &StepRecord) {
        if let Some(bar) = self.bars.lock().ok().and_then(|mut b| b.remove(&record.id)) {
            bar.finish_and_clear();
        }
        self.say(format!("{}: {}", record.id, status_text(record)));
    }
}

fn status_text(r: &StepRecord) -> String {
    let base = match r.status {
        StepStatus::Succeeded => match &r.verdict {
            Some(v) if !v.complete => {
                format!(
                    "succeeded, PARTIAL ({})",
                    v.stopped_by.map_or("?", |s| s.as_str())
                )
            }
            _ => "succeeded".to_string(),
        },
        StepStatus::Failed => "FAILED".to_string(),
        StepStatus::Skipped => "skipped".to_string(),
        StepStatus::Cancelled => "cancelled".to_string(),
        StepStatus::Pending => "pending".to_string(),
        StepStatus::Running => "running".to_string(),
        StepStatus::Interrupted => "interrupted".to_string(),
    };
    match &r.reason {
        Some(reason) => format!("{base} — {reason}"),
        None => base,
    }
}

/// The table (step, status, items, complete, requests, time) and outputs.
pub fn print_summary(record: &RunRecord, out: &mut Out) -> io::Result<()> {
    writeln!(
        out,
        "run {} of `{}`: {:?} in {} ms",
        record.run_id, record.workflow, record.status, record.duration_ms
    )?;
    let width = record
        .steps
        .iter()
        .map(|s| s.id.len())
        .max()
        .unwrap_or(4)
        .max(4);
    writeln!(
        out,
        "{:<width$}  {:<10} {:>7} {:>9} {:>9} {:>9}",
        "step", "status", "items", "complete", "requests", "time"
    )?;
    for s in &record.steps {
        let (items, complete, requests) = match &s.verdict {
            // No collection, no walk: no walk counters.
            Some(v) if v.no_collection => ("—".into(), "—".into(), "—".into()),
            Some(v) => (
                v.item_count.to_string(),
                if v.complete { "yes" } else { "NO" }.to_string(),
                v.requests.to_string(),
            ),
            None => ("-".into(), "-".into(), "-".into()),
        };
        writeln!(
            out,
            "{:<width$}  {:<10} {:>7} {:>9} {:>9} {:>7} ms",
            s.id,
            format!("{:?}", s.status).to_lowercase(),
            items,
            complete,
            requests,
            s.duration_ms
        )?;
    }
    for s in &record.steps {
        if let Some(reason) = &s.reason {
            writeln!(out, "  {}: {reason}", s.id)?;
        }
        if let Some(v) = &s.verdict {
            if !v.complete {
                writeln!(out, "  {}: {}", s.id, v.note)?;
            }
            if let Some(inc) = &v.incremental {
                writeln!(out, "  {}: {}", s.id, inc.describe(v.complete))?;
            }
        }
    }
    let leaves: Vec<&StepRecord> = record
        .steps
        .iter()
        .filter(|s| s.status == StepStatus::Succeeded && s.kind == StepType::Tool)
        .collect();
    if let Some(last) = leaves.last() {
        if let Some(output) = &last.output {
            let text = output.get();
            let cut: String = text.chars().take(400).collect();
            writeln!(
                out,
                "output of `{}`: {cut}{}",
                last.id,
                if text.len() > cut.len() { "…" } else { "" }
            )?;
        }
    }
    Ok(())
}
