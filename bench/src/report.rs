//! Result lines: fixed-width, one fact per line, so a run can be read by a
//! person and grepped by a script (`RESULT`, `TARGET` and `INFO` prefixes).

use crate::measure::{Series, Spread};

/// Bytes in MB (10^6), one decimal.
pub fn mb(bytes: f64) -> String {
    format!("{:.1} MB", bytes / 1e6)
}

/// A timing spread in ms: `median (min–max)`.
pub fn millis(s: &Spread) -> String {
    format!("{:.2} ms (min {:.2}, max {:.2})", s.median, s.min, s.max)
}

/// A ratio spread: `median× (min–max)`.
pub fn ratio(s: &Spread) -> String {
    format!(
        "{:.2}x (per-run min {:.2}, max {:.2})",
        s.median, s.min, s.max
    )
}

/// Every run's time in ms, in run order, for judging stability by eye.
pub fn runs(series: &Series) -> String {
    let ms: Vec<String> = series
        .samples
        .iter()
        .map(|s| format!("{:.1}", s.time.as_secs_f64() * 1e3))
        .collect();
    ms.join(" ")
}

/// Prints a section header.
pub fn header(title: &str) {
    println!();
    println!("== {title}");
}

/// Prints a measured fact.
pub fn result(label: &str, value: &str) {
    println!("RESULT {label:<44} {value}");
}

/// Prints context that is not a target.
pub fn info(label: &str, value: &str) {
    println!("INFO   {label:<44} {value}");
}

/// Prints a target line and whether it was met.
pub fn target(label: &str, measured: &str, goal: &str, met: bool) {
    let verdict = if met { "MET" } else { "MISSED" };
    println!("TARGET {label:<44} {measured} (goal {goal}): {verdict}");
}

/// Says that a smoke run (no `--bench`) checked the code paths only.
pub fn smoke() {
    println!("SMOKE  ok: code paths ran; no --bench flag, so no targets are judged");
}
