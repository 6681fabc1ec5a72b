//! A tool step's output on its run's page: the first rows as a table (the
//! columns are the first row's fields — the projected ones when the step
//! projects), and the JSON itself behind a toggle, cut to a size a page
//! can hold and saying so. Outputs past the parse limit show only their
//! size: a page never parses a huge output.

use serde_json::Value;

use super::html::esc;

/// Rows shown in the table.
const ROWS: usize = 20;
/// The JSON shown behind the toggle.
const JSON_SHOWN: usize = 64 * 1024;
/// Outputs larger than this are not parsed for the table.
const PARSE_LIMIT: usize = 4 * 1024 * 1024;

/// The section for one step's output text.
pub fn section(step: &str, text: &str) -> String {
    let mut out = format!(
        "<section class=\"output\" aria-label=\"output of {s}\"><h3>{s}</h3>",
        s = esc(step)
    );
    if text.len() > PARSE_LIMIT {
        out.push_str(&format!(
            "<p>The output is {} bytes: read it through the API.</p></section>",
            text.len()
        ));
        return out;
    }
    let value: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    let rows = value
        .get("data")
        .and_then(Value::as_array)
        .or_else(|| value.as_array());
    if let Some(rows) = rows {
        out.push_str(&table(rows));
    }
    let shown: String = text.chars().take(JSON_SHOWN).collect();
    let cut = if shown.len() < text.len() {
        format!(" (the first {} of {} bytes)", shown.len(), text.len())
    } else {
        String::new()
    };
    out.push_str(&format!(
        "<details><summary>JSON{cut}</summary><pre><code>{}</code></pre></details></section>",
        esc(&shown)
    ));
    out
}

fn table(rows: &[Value]) -> String {
    let Some(first) = rows.first().and_then(Value::as_object) else {
        return format!("<p>{} rows.</p>", rows.len());
    };
    let columns: Vec<&String> = first.keys().collect();
    let mut out = format!(
        "<p>{} rows{}.</p><table><thead><tr>",
        rows.len(),
        if rows.len() > ROWS {
            format!(", the first {ROWS} shown")
        } else {
            String::new()
        }
    );
    for c in &columns {
        out.push_str(&format!("<th>{}</th>", esc(c)));
    }
    out.push_str("</tr></thead><tbody>");
    for row in rows.iter().take(ROWS) {
        out.push_str("<tr>");
        for c in &columns {
            let cell = match row.get(c.as_str()) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            out.push_str(&format!("<td>{}</td>", esc(&cell)));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
    out
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
