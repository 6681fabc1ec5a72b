//! The live progress line on stderr (indicatif), fed by the loop layer's
//! throttled progress events; hidden when stderr is not a terminal. An
//! answer without a collection is no walk and gets no line
//! (`FirstPageHold`).

use std::io::IsTerminal;
use std::sync::Mutex;

use dragnet_steps::progress::{ProgressEvent, ProgressSink};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct ProgressLine {
    bar: ProgressBar,
    hold: Mutex<FirstPageHold>,
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
        ProgressLine {
            bar,
            hold: Mutex::new(FirstPageHold::default()),
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// A call's page-one event, held until the call shows it walked a
/// collection. An answer without one sends that event and no other, so an
/// event is shown once another follows it, or when the call ends with a
/// collection; otherwise it is dropped, and no walk counters appear.
#[derive(Debug, Default)]
pub struct FirstPageHold {
    held: Option<ProgressEvent>,
}

impl FirstPageHold {
    /// The events to show now that `event` came, in order.
    pub fn offer(&mut self, event: &ProgressEvent) -> Vec<ProgressEvent> {
        let mut show: Vec<ProgressEvent> = self.held.take().into_iter().collect();
        match event.page {
            1 => self.held = Some(event.clone()),
            _ => show.push(event.clone()),
        }
        show
    }

    /// The held event, to show when the call's answer had a collection.
    pub fn finish(&mut self, collection: bool) -> Option<ProgressEvent> {
        self.held.take().filter(|_| collection)
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
        let show = match self.hold.lock() {
            Ok(mut hold) => hold.offer(event),
            Err(_) => vec![event.clone()],
        };
        if let Some(last) = show.last() {
            self.bar.set_message(describe(last));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(page: u32, items: usize) -> ProgressEvent {
        ProgressEvent {
            page,
            pages_max: 20,
            items,
            requests: page,
            requests_max: 60,
            elapsed_ms: 0,
            value: None,
        }
    }

    #[test]
    fn page_one_shows_only_once_the_call_walks() {
        // An answer without a collection: its one event is never shown.
        let mut hold = FirstPageHold::default();
        assert!(hold.offer(&event(1, 0)).is_empty());
        assert_eq!(hold.finish(false), None);
        // A walk: page one shows when page two comes.
        let mut hold = FirstPageHold::default();
        assert!(hold.offer(&event(1, 100)).is_empty());
        assert_eq!(
            hold.offer(&event(2, 200)),
            vec![event(1, 100), event(2, 200)]
        );
        assert_eq!(hold.offer(&event(3, 300)), vec![event(3, 300)]);
        assert_eq!(hold.finish(true), None);
        // One page of a collection shows when the call ends.
        let mut hold = FirstPageHold::default();
        assert!(hold.offer(&event(1, 30)).is_empty());
        assert_eq!(hold.finish(true), Some(event(1, 30)));
        // A fan-out: each value's page one shows when the next value starts.
        let mut hold = FirstPageHold::default();
        assert!(hold.offer(&event(1, 64)).is_empty());
        assert_eq!(hold.offer(&event(1, 130)), vec![event(1, 64)]);
        assert_eq!(hold.finish(true), Some(event(1, 130)));
    }
}
