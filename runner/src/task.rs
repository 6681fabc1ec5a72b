//! Tracked tasks that keep their identity (vector's `TaskOutput`): each is
//! spawned on its tracker with a name, and its end — returned, or a panic
//! with the panic's message — is logged with that name, so a scheduler or
//! claimer that dies says which it was instead of vanishing.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures::FutureExt as _;
use tokio::task::JoinHandle;
use tokio_util::task::TaskTracker;

/// What a tracked task is: its kind (`scheduler`, `claimer`, `run`) and,
/// for a run, which one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskName {
    pub kind: &'static str,
    pub id: Option<String>,
}

impl TaskName {
    /// A task of which there is one per process.
    pub fn of(kind: &'static str) -> TaskName {
        TaskName { kind, id: None }
    }

    /// One of many (`run` `run_…`).
    pub fn with_id(kind: &'static str, id: impl Into<String>) -> TaskName {
        TaskName {
            kind,
            id: Some(id.into()),
        }
    }
}

impl std::fmt::Display for TaskName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.id {
            Some(id) => write!(f, "{} {id}", self.kind),
            None => f.write_str(self.kind),
        }
    }
}

/// How a tracked task ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskOutcome {
    /// Its future returned.
    Ended(TaskName),
    /// It panicked, with the panic's message.
    Panicked { name: TaskName, message: String },
}

/// Spawns `task` on `tracker` as `name`; its end is logged with the name
/// (a panic as an error) and is what the handle yields.
pub fn spawn<F>(tracker: &TaskTracker, name: TaskName, task: F) -> JoinHandle<TaskOutcome>
where
    F: Future<Output = ()> + Send + 'static,
{
    tracker.spawn(async move {
        match AssertUnwindSafe(task).catch_unwind().await {
            Ok(()) => {
                tracing::debug!(task = %name, "task ended");
                TaskOutcome::Ended(name)
            }
            Err(panic) => {
                let message = panic_message(panic.as_ref());
                tracing::error!(task = %name, panic = %message, "task panicked");
                TaskOutcome::Panicked { name, message }
            }
        }
    })
}

/// A panic's message, when it is text.
fn panic_message(panic: &(dyn Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    /// Log lines written where the test can read them.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Captured {
        fn text(&self) -> String {
            String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
        }
    }

    /// A subscriber writing to `captured`, for this thread.
    fn capture(captured: &Captured) -> tracing::subscriber::DefaultGuard {
        let writer = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .with_max_level(tracing::Level::DEBUG)
            .finish();
        tracing::subscriber::set_default(subscriber)
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_panicking_task_is_logged_with_its_name() {
        let captured = Captured::default();
        let _guard = capture(&captured);
        let tracker = TaskTracker::new();
        let handle = spawn(&tracker, TaskName::of("scheduler"), async {
            panic!("the schedules table is gone");
        });
        let outcome = handle.await.expect("the wrapper itself never panics");
        assert_eq!(
            outcome,
            TaskOutcome::Panicked {
                name: TaskName::of("scheduler"),
                message: "the schedules table is gone".into()
            }
        );
        let log = captured.text();
        let line = log
            .lines()
            .find(|l| l.contains("task panicked"))
            .unwrap_or_else(|| panic!("no panic logged in {log:?}"));
        assert!(line.contains("ERROR"), "{line}");
        assert!(line.contains("task=scheduler"), "{line}");
        assert!(line.contains("the schedules table is gone"), "{line}");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_task_that_returns_is_logged_ending_with_its_name() {
        let captured = Captured::default();
        let _guard = capture(&captured);
        let tracker = TaskTracker::new();
        let name = TaskName::with_id("run", "run_1");
        let outcome = spawn(&tracker, name.clone(), async {}).await.unwrap();
        assert_eq!(outcome, TaskOutcome::Ended(name));
        tracker.close();
        tracker.wait().await;
        let log = captured.text();
        assert!(
            log.lines()
                .any(|l| l.contains("task ended") && l.contains("task=run run_1")),
            "{log}"
        );
    }
}
