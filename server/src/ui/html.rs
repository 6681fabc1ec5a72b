//! The UI's HTML: escaping, the page frame (navigation, the team signed
//! in, a sign-out form carrying the CSRF value) and the stylesheet — light
//! and dark from the system setting, one column below 700 px. Written as
//! plain Rust strings: a handful of pages need no template engine, and
//! every value that reaches a page goes through `esc`.

/// `text` safe inside HTML text and attribute values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Who is signed in, for the frame.
pub struct Signed<'a> {
    pub team: &'a str,
    pub csrf: &'a str,
}

/// A whole page.
pub fn page(title: &str, signed: Option<&Signed<'_>>, body: &str) -> String {
    let nav = match signed {
        Some(s) => format!(
            "<nav aria-label=\"main\"><a href=\"/ui/runs\">Runs</a>\
             <a href=\"/ui/workflows\">Workflows</a><a href=\"/ui/schedules\">Schedules</a><a href=\"/ui/cache\">Cache</a>\
             <span class=\"team\">team {team}</span>\
             <form method=\"post\" action=\"/ui/sign-out\"><input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
             <button type=\"submit\">Sign out</button></form></nav>",
            team = esc(s.team),
            csrf = esc(s.csrf)
        ),
        None => String::new(),
    };
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} · dragnet</title><style>{STYLE}</style></head>\
         <body><header><strong>dragnet</strong>{nav}</header><main>{body}</main></body></html>",
        title = esc(title)
    )
}

/// A status as a badge.
pub fn badge(status: &str) -> String {
    format!(
        "<span class=\"badge status-{s}\">{s}</span>",
        s = esc(status)
    )
}

const STYLE: &str = "\
:root{color-scheme:light dark;--bg:#fff;--fg:#1b1f24;--muted:#59636e;--line:#d0d7de;\
--ok:#1a7f37;--bad:#cf222e;--warn:#9a6700;--run:#0969da}\
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--line:#30363d;\
--ok:#3fb950;--bad:#f85149;--warn:#d29922;--run:#58a6ff}}\
body{margin:0;font:15px/1.45 system-ui,sans-serif;background:var(--bg);color:var(--fg)}\
header{display:flex;flex-wrap:wrap;gap:1rem;align-items:center;padding:.6rem 1rem;border-bottom:1px solid var(--line)}\
nav{display:flex;flex-wrap:wrap;gap:1rem;align-items:center}nav form{margin:0}\
main{padding:1rem;max-width:1200px;overflow-x:auto}\
a{color:var(--run)}a:focus,button:focus,input:focus{outline:2px solid var(--run);outline-offset:2px}\
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid var(--line);overflow-wrap:anywhere}\
.badge{display:inline-block;padding:0 .45rem;border-radius:1rem;border:1px solid currentColor;font-size:.85em}\
.status-succeeded,.status-complete{color:var(--ok)}.status-failed,.status-cancelled{color:var(--bad)}\
.status-partial,.status-skipped,.status-interrupted{color:var(--warn)}.status-running,.status-queued{color:var(--run)}\
.dag{max-width:100%;height:auto}.dag rect{fill:var(--bg);stroke:currentColor;stroke-width:2}\
.dag text{fill:var(--fg);font-size:13px}.dag .what{fill:currentColor}.dag .edge{stroke:var(--muted);stroke-width:1.5}\
.dag .gate{fill:var(--muted);font-size:11px}.error{color:var(--bad)}h1 code{word-break:break-all}\
pre{max-width:100%;overflow-x:auto;white-space:pre-wrap;overflow-wrap:anywhere}pre.yaml{padding:.6rem;border:1px solid var(--line)}\
textarea{width:100%;box-sizing:border-box;font:13px/1.4 ui-monospace,monospace}#diagnostics li{color:var(--bad)}.diff .add{color:var(--ok)}.diff .del{color:var(--bad)}.k{color:var(--run)}.c{color:var(--muted)}\
@media (max-width:700px){th:nth-child(n+4),td:nth-child(n+4){display:none}}";
