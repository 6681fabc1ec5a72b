//! A tool step's output on its run's page: the first rows as a table (the
//! columns are the first row's fields — the projected ones when the step
//! projects), and the JSON itself behind a toggle, cut to a size a page
//! can hold and saying so. Outputs past the parse limit show only their
//! size: a page never parses a huge output. A maud template: every
//! value escaped by construction.

use maud::{html, Markup};
use serde_json::Value;

/// Rows shown in the table.
const ROWS: usize = 20;
/// The JSON shown behind the toggle.
const JSON_SHOWN: usize = 64 * 1024;
/// Outputs larger than this are not parsed for the table.
const PARSE_LIMIT: usize = 4 * 1024 * 1024;

/// The section for one step's output text.
pub fn section(step: &str, text: &str) -> String {
    markup(step, text).into_string()
}

/// The section for one step's output text, as markup.
pub fn markup(step: &str, text: &str) -> Markup {
    if text.len() > PARSE_LIMIT {
        return html! {
            section.output aria-label={ "output of " (step) } {
                h3 { (step) }
                p { "The output is " (text.len()) " bytes: read it through the API." }
            }
        };
    }
    let value: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    let rows = value
        .get("data")
        .and_then(Value::as_array)
        .or_else(|| value.as_array());
    let shown: String = text.chars().take(JSON_SHOWN).collect();
    html! {
        section.output aria-label={ "output of " (step) } {
            h3 { (step) }
            @if let Some(rows) = rows { (table(rows)) }
            details {
                summary {
                    "JSON"
                    @if shown.len() < text.len() {
                        " (the first " (shown.len()) " of " (text.len()) " bytes)"
                    }
                }
                pre { code { (shown) } }
            }
        }
    }
}

fn table(rows: &[Value]) -> Markup {
    let Some(first) = rows.first().and_then(Value::as_object) else {
        return html! { p { (rows.len()) " rows." } };
    };
    let columns: Vec<&String> = first.keys().collect();
    let cell = |row: &Value, c: &str| match row.get(c) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    html! {
        p {
            (rows.len()) " rows"
            @if rows.len() > ROWS { ", the first " (ROWS) " shown" }
            "."
        }
        table {
            thead { tr { @for c in &columns { th { (c) } } } }
            tbody {
                @for row in rows.iter().take(ROWS) {
                    tr { @for c in &columns { td { (cell(row, c)) } } }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_rows_show_as_a_table_with_the_json_behind_a_toggle() {
        let rows: Vec<String> = (0..25)
            .map(|i| format!("{{\"id\":{i},\"total\":\"<{i}>\"}}"))
            .collect();
        let text = format!(
            "{{\"data\":[{}],\"_loop\":{{\"complete\":true}}}}",
            rows.join(",")
        );
        let html = section("orders", &text);
        assert!(html.contains("25 rows, the first 20 shown"));
        assert!(html.contains("<th>id</th><th>total</th>"));
        assert!(html.contains("<td>19</td><td>&lt;19&gt;</td>"));
        assert!(!html.contains("<td>20</td>"));
        assert!(html.contains("<details><summary>JSON</summary>"));
        let huge = "x".repeat(PARSE_LIMIT + 1);
        assert!(section("big", &huge).contains("read it through the API"));
    }
}
