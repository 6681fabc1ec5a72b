//! Next-page links on arbitrary text: the `Link` header's `rel="next"`
//! target, when found, is text the header held between `<` and `>`; and
//! resolving any link against a base URL never leaves the base's origin.
#![no_main]
#![forbid(unsafe_code)]

use dragnet_http::link::{next_of_link_header, resolve_on_origin};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Some(target) = next_of_link_header(&text) {
        assert!(!target.is_empty());
        assert!(text.contains(&format!("<{target}")) || text.contains(&target));
    }
    let base = "http://127.0.0.1:8080/api";
    if let Ok(url) = resolve_on_origin(base, &text) {
        assert_eq!(url.origin().ascii_serialization(), "http://127.0.0.1:8080");
    }
});
