//! Next-page links (SPEC §3.1; issue 14): the `rel="next"` target of a
//! `Link` header (RFC 8288, as GitHub and many others send it), and the
//! origin rule every next URL is held to before it is followed — the
//! provider's own scheme, host and port, else it is not followed at all,
//! so credentials never go to a host the provider did not name.

use reqwest::Url;

/// The target of the first link whose `rel` includes `next`, as written
/// (possibly relative). `None` when there is none or the header is garbled.
pub fn next_of_link_header(header: &str) -> Option<String> {
    let mut rest = header;
    loop {
        let open = rest.find('<')?;
        let close = open + rest[open..].find('>')?;
        let target = &rest[open + 1..close];
        let after = &rest[close + 1..];
        // A link's parameters run to the next link (a `<` after a comma).
        let end = after.find('<').unwrap_or(after.len());
        if params_say_next(&after[..end]) {
            let target = target.trim();
            return (!target.is_empty()).then(|| target.to_string());
        }
        rest = &after[end..];
    }
}

/// Whether `params` (`; rel="next"; title=…`) has a `rel` naming `next`.
fn params_say_next(params: &str) -> bool {
    params.split(';').any(|param| {
        let Some((name, value)) = param.split_once('=') else {
            return false;
        };
        name.trim().eq_ignore_ascii_case("rel")
            && value
                .trim()
                .trim_end_matches(',')
                .trim()
                .trim_matches('"')
                .split_ascii_whitespace()
                .any(|rel| rel.eq_ignore_ascii_case("next"))
    })
}

/// Why a next URL is not followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkRefused {
    /// Not a URL, even relative to the base.
    Unusable,
    /// A scheme other than HTTP(S).
    Scheme(String),
    /// Another origin than the provider's (`scheme://host:port`).
    OffOrigin(String),
}

impl LinkRefused {
    /// In words, for the verdict's note. Never the link's query (which may
    /// carry a token the upstream put there).
    pub fn describe(&self) -> String {
        match self {
            LinkRefused::Unusable => "the next-page link is not a usable URL".into(),
            LinkRefused::Scheme(s) => {
                format!("the next-page link is a `{s}:` URL (only HTTP and HTTPS are followed)")
            }
            LinkRefused::OffOrigin(origin) => {
                format!("the next-page link points to another origin, {origin}")
            }
        }
    }
}

/// `link` resolved against `base` (so `/2010-04-01/…?Page=1` or `?page=2`
/// work), accepted only on `base`'s origin.
pub fn resolve_on_origin(base: &str, link: &str) -> Result<Url, LinkRefused> {
    let base = Url::parse(base).map_err(|_| LinkRefused::Unusable)?;
    let url = base.join(link).map_err(|_| LinkRefused::Unusable)?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(LinkRefused::Scheme(url.scheme().to_string()));
    }
    if url.origin() != base.origin() {
        return Err(LinkRefused::OffOrigin(url.origin().ascii_serialization()));
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_link_is_found_among_others() {
        let github = r#"<https://api.github.com/repos/o/r/issues?page=2>; rel="next", <https://api.github.com/repos/o/r/issues?page=5>; rel="last""#;
        assert_eq!(
            next_of_link_header(github).as_deref(),
            Some("https://api.github.com/repos/o/r/issues?page=2")
        );
        let first_is_prev = r#"<https://h/x?p=1>; rel="prev", <https://h/x?p=3>; rel="next""#;
        assert_eq!(
            next_of_link_header(first_is_prev).as_deref(),
            Some("https://h/x?p=3")
        );
        // Unquoted, several rels, other params, odd case.
        assert_eq!(
            next_of_link_header("</items?after=a,b>; title=\"x\"; REL=\"Next last\"").as_deref(),
            Some("/items?after=a,b")
        );
        assert_eq!(
            next_of_link_header("</i?c=2>;rel=next").as_deref(),
            Some("/i?c=2")
        );
        assert_eq!(
            next_of_link_header(r#"<https://h/x?p=1>; rel="prev""#),
            None
        );
        assert_eq!(next_of_link_header("garbage"), None);
        assert_eq!(next_of_link_header("<>; rel=next"), None);
        assert_eq!(next_of_link_header("<https://h/x; rel=next"), None);
    }

    #[test]
    fn next_urls_stay_on_the_providers_origin() {
        let base = "http://127.0.0.1:8080/api";
        assert_eq!(
            resolve_on_origin(base, "/api/items?page_token=x")
                .unwrap()
                .as_str(),
            "http://127.0.0.1:8080/api/items?page_token=x"
        );
        assert!(resolve_on_origin(base, "http://127.0.0.1:8080/other?x=1").is_ok());
        assert_eq!(
            resolve_on_origin(base, "http://127.0.0.1:9090/api/items"),
            Err(LinkRefused::OffOrigin("http://127.0.0.1:9090".into()))
        );
        assert_eq!(
            resolve_on_origin(base, "http://localhost:8080/api/items"),
            Err(LinkRefused::OffOrigin("http://localhost:8080".into()))
        );
        assert_eq!(
            resolve_on_origin(base, "https://127.0.0.1:8080/api/items"),
            Err(LinkRefused::OffOrigin("https://127.0.0.1:8080".into()))
        );
        assert_eq!(
            resolve_on_origin(base, "file:///etc/passwd"),
            Err(LinkRefused::Scheme("file".into()))
        );
        // The note never carries the link's query.
        let refused = resolve_on_origin(base, "http://evil.example/x?token=s3cret").unwrap_err();
        assert!(
            !refused.describe().contains("s3cret"),
            "{}",
            refused.describe()
        );
    }

    proptest::proptest! {
        #[test]
        fn any_text_is_read_without_a_panic_and_never_leaves_the_origin(
            text in "[<>;,= \"a-zA-Z0-9:/?&.%@-]{0,80}"
        ) {
            if let Some(target) = next_of_link_header(&text) {
                proptest::prop_assert!(!target.is_empty());
                proptest::prop_assert!(text.contains(&target));
            }
            if let Ok(url) = resolve_on_origin("http://127.0.0.1:8080/api", &text) {
                proptest::prop_assert_eq!(url.origin().ascii_serialization(), "http://127.0.0.1:8080");
            }
        }
    }
}
