//! The live progress line on stderr (indicatif), fed by the loop layer's
//! throttled progress events; hidden when stderr is not a terminal. An
//! answer without a collection is no walk: the loop layer sends no event
//! for it, so it gets no line.

use std::io::IsTerminal;

use dragnet_core::progress::{ProgressEvent, ProgressSink};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct ProgressLine {
    bar: ProgressBar,
}

impl ProgressLine {
    pub fn start(label: &str) -> Self {
        let target = if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(None, target);
        if let Ok(style) = ProgressStyle::with_template("{spinner} {prefix}: {msg}") {
            bar.set_style(style);
        }
        bar.set_prefix(label.to_string());
        bar.set_message("starting");
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        ProgressLine { bar }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// One line of text for an event; shared with the demo.
pub fn describe(e: &ProgressEvent) -> String {
    let mut text = format!(
        "page {}/{} · {} items · {}/{} requests · {:.1}s",
        e.page,
        e.pages_max,
        e.items,
        e.requests,
        e.requests_max,
        e.elapsed_ms as f64 / 1000.0
    );
    if let Some(v) = &e.value {
        text.push_str(&format!(" · value {v}"));
    }
    text
}

impl ProgressSink for ProgressLine {
    fn emit(&self, event: &ProgressEvent) {
        self.bar.set_message(describe(event));
    }
}
