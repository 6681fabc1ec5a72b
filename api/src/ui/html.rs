//! The UI's HTML: the page frame (navigation, the team signed in, a
//! sign-out form carrying the CSRF value) and the stylesheet — light and
//! dark from the system setting, narrow columns dropped below 700 px.
//! Pages are maud templates: every value is escaped by construction, and
//! every value put into a URL goes through `url_part` (percent-encoded).

use maud::{html, Markup, PreEscaped, DOCTYPE};

/// `text` as one percent-encoded URL path segment or query value: every
/// byte but the unreserved ones (`A-Z a-z 0-9 - . _ ~`) as `%XX`.
pub fn url_part(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Who is signed in, for the frame.
pub struct Signed<'a> {
    pub team: &'a str,
    pub csrf: &'a str,
}

/// A whole page around a template's body.
pub fn frame(title: &str, signed: Option<&Signed<'_>>, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · dragnet" }
                style { (PreEscaped(STYLE)) }
            }
            body {
                header {
                    strong { "dragnet" }
                    @if let Some(s) = signed {
                        nav aria-label="main" {
                            a href="/ui/runs" { "Runs" }
                            a href="/ui/workflows" { "Workflows" }
                            a href="/ui/schedules" { "Schedules" }
                            a href="/ui/backfills" { "Backfills" }
                            a href="/ui/cache" { "Cache" }
                            a href="/ui/secrets" { "Secrets" }
                            span.team { "team " (s.team) }
                            form method="post" action="/ui/sign-out" {
                                input type="hidden" name="csrf" value=(s.csrf);
                                button type="submit" { "Sign out" }
                            }
                        }
                    }
                }
                main { (body) }
            }
        }
    }
    .into_string()
}

/// A status as a badge, as markup.
pub fn status_badge(status: &str) -> Markup {
    html! { span class={ "badge status-" (status) } { (status) } }
}

/// The stylesheet. Tables: numbers, statuses, ids and times never break
/// (`.num`, `.st`, `.id`, `.at`); a note (`.note`) takes the width left
/// and wraps at words (the whole width left only above 700 px: a 100 %
/// cell would push a narrow table past the screen; below it a word longer
/// than the column, such as a JSONPath, may break); headers never break;
/// below 700 px the cells marked `.opt` are dropped, and below 480 px
/// those marked `.opt2`.
const STYLE: &str = "\
:root{color-scheme:light dark;--bg:#fff;--fg:#1b1f24;--muted:#59636e;--line:#d0d7de;--soft:#f6f8fa;\
--ok:#1a7f37;--bad:#cf222e;--warn:#9a6700;--run:#0969da;--str:#0a3069;--ref:#8250df}\
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--line:#30363d;--soft:#161b22;\
--ok:#3fb950;--bad:#f85149;--warn:#d29922;--run:#58a6ff;--str:#a5d6ff;--ref:#d2a8ff}}\
body{margin:0;font:15px/1.45 system-ui,sans-serif;background:var(--bg);color:var(--fg)}\
header{display:flex;flex-wrap:wrap;gap:1rem;align-items:center;padding:.6rem 1rem;border-bottom:1px solid var(--line)}\
nav{display:flex;flex-wrap:wrap;gap:1rem;align-items:center}nav form{margin:0}\
main{padding:1rem;max-width:1200px}\
a{color:var(--run)}a:focus,button:focus,input:focus,select:focus,textarea:focus{outline:2px solid var(--run);outline-offset:2px}\
table{border-collapse:collapse;width:100%;margin:.5rem 0}\
th,td{text-align:left;vertical-align:top;padding:.35rem .5rem;border-bottom:1px solid var(--line);overflow-wrap:normal;word-break:normal}\
th{white-space:nowrap;font-weight:600}\
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}\
.num,.st,.id,.at{white-space:nowrap}.id{font:.85em ui-monospace,monospace}\
td.note{overflow-wrap:break-word}@media (min-width:701px){td.note{width:100%}}@media (max-width:700px){td.note{overflow-wrap:anywhere}}\
.output td{overflow-wrap:anywhere}\
.badge{display:inline-block;white-space:nowrap;padding:0 .45rem;border-radius:1rem;border:1px solid currentColor;font-size:.85em}\
.status-succeeded,.status-complete{color:var(--ok)}.status-failed,.status-cancelled{color:var(--bad)}\
.status-partial,.status-skipped,.status-interrupted{color:var(--warn)}.status-running,.status-queued{color:var(--run)}\
.status-pending{color:var(--muted)}\
.dag{display:block;max-width:100%;height:auto;margin:.5rem 0}.dag rect{fill:var(--bg);stroke:currentColor;stroke-width:2}\
.dag text{fill:var(--fg);font-size:13px}.dag .name{font-weight:600}.dag .what{fill:currentColor;font-size:12px}\
.dag .edge{fill:none;stroke:var(--muted);stroke-width:1.5}.dag .arrow{fill:var(--muted)}\
.dag .edge.skipped{stroke-dasharray:4 4;opacity:.6}\
.dag .status-skipped rect{stroke-dasharray:6 4;fill:var(--soft)}.dag .status-skipped{opacity:.7}\
.dag .status-skipped .name{fill:var(--muted)}\
.dag .gate{fill:var(--muted);font-size:11px;font-style:italic;paint-order:stroke;stroke:var(--bg);stroke-width:4px}\
.error{color:var(--bad)}h1 code{overflow-wrap:anywhere}\
pre{max-width:100%;overflow-x:auto;white-space:pre-wrap;overflow-wrap:anywhere}pre.yaml{padding:.6rem;border:1px solid var(--line)}\
textarea{width:100%;box-sizing:border-box;font:13px/1.4 ui-monospace,monospace}\
#diagnostics li{color:var(--bad)}.diff .add{color:var(--ok)}.diff .del{color:var(--bad)}\
.k{color:var(--run)}.c{color:var(--muted);font-style:italic}.s{color:var(--str)}.r{color:var(--ref);font-weight:600}\
.editor{display:flex;align-items:flex-start;border:1px solid var(--line);border-radius:4px;max-height:70vh;overflow:auto;background:var(--bg)}\
.editor .gutter{flex:none;margin:0;padding:.5rem .4rem;min-width:2.5em;text-align:right;color:var(--muted);background:var(--soft);\
border-right:1px solid var(--line);font:13px/1.4 ui-monospace,monospace;white-space:pre;overflow:visible;user-select:none}\
.editor .gutter span{display:block}.editor .gutter .bad{color:#fff;background:var(--bad);border-radius:2px;cursor:help}\
.editor .code{position:relative;flex:1;min-width:0}\
.editor .code pre,.editor .code textarea{margin:0;padding:.5rem;border:0;font:13px/1.4 ui-monospace,monospace;white-space:pre-wrap;\
overflow-wrap:anywhere;tab-size:2;box-sizing:border-box;width:100%}\
.editor .code pre{position:absolute;inset:0;pointer-events:none;overflow:hidden}\
.editor .code pre .l{display:block;min-height:1.4em}\
.editor.live .code textarea{position:relative;color:transparent;background:transparent;caret-color:var(--fg);resize:none;overflow:hidden;outline:none}\
.editor:focus-within{outline:2px solid var(--run);outline-offset:2px}\
.editor:not(.live) .gutter,.editor:not(.live) .code pre{display:none}\
#complete{list-style:none;margin:.25rem 0;padding:0;display:flex;flex-wrap:wrap;gap:.3rem}\
#complete[hidden]{display:none}#complete li{font:12px ui-monospace,monospace;padding:.1rem .4rem;border:1px solid var(--line);border-radius:3px;cursor:pointer}\
#complete li[aria-selected=true]{background:var(--run);color:var(--bg)}\
@media (max-width:700px){.opt{display:none}table:not(.fit) th:nth-child(n+4),table:not(.fit) td:nth-child(n+4){display:none}}\
@media (max-width:480px){.opt2{display:none}th,td{padding:.3rem .3rem}.id{font-size:.78em}.note .badge{white-space:normal}}";

#[cfg(test)]
mod tests {
    use super::url_part;

    #[test]
    fn url_parts_keep_only_unreserved_bytes() {
        assert_eq!(url_part("a&b#c"), "a%26b%23c");
        assert_eq!(url_part("x y/z?=%é"), "x%20y%2Fz%3F%3D%25%C3%A9");
        assert_eq!(url_part("run_1-2.3~"), "run_1-2.3~");
    }
}
