use super::*;
use crate::collection::split_text;
use proptest::prelude::*;

type Read = Result<Option<Vec<String>>, ()>;

/// `text` in pieces of `piece` bytes, read as a caller reads a streamed
/// page; the hollow page keeps the collection's last item only.
fn streamed(text: &str, path: &[String], piece: usize) -> (Read, InPieces) {
    let got = in_pieces(text, path, piece);
    let read = got.read.clone().map_err(|_| ());
    if let Ok(Some(items)) = &read {
        assert_eq!(got.hollow_items.last(), items.last(), "{text}");
        assert!(got.hollow_items.len() <= 1, "{text}");
    }
    (read, got)
}

fn whole(text: &str, path: &[String]) -> Read {
    match split_text(text, path) {
        Err(_) => Err(()),
        Ok(None) => Ok(None),
        Ok(Some(page)) => Ok(Some(
            page.items.iter().map(|i| i.get().to_string()).collect(),
        )),
    }
}

fn path(p: &str) -> Vec<String> {
    p.split('.')
        .filter(|k| !k.is_empty())
        .map(str::to_string)
        .collect()
}

/// Every piece size gives what the whole page gives.
fn same_in_every_piece_size(text: &str, p: &str) -> Read {
    let path = path(p);
    let want = whole(text, &path);
    for piece in 1..=text.len().max(1) {
        let (got, pieces) = streamed(text, &path, piece);
        assert_eq!(
            got,
            want,
            "{text} along `{p}` in pieces of {piece}; hollow {}",
            String::from_utf8_lossy(&pieces.hollow)
        );
    }
    want
}

#[test]
fn items_leave_and_the_rest_stays_in_every_piece_size() {
    let text =
        r#"{"data":[{"id":1,"s":"a,]}\"x"},{"id":2, "t":[1,{"u":"]"}]}], "meta":{"total":2}}"#;
    let got = same_in_every_piece_size(text, "data").unwrap().unwrap();
    assert_eq!(got.len(), 2);
    let (_, pieces) = streamed(text, &path("data"), 7);
    assert_eq!(
        String::from_utf8(pieces.hollow).unwrap(),
        r#"{"data":[{"id":2, "t":[1,{"u":"]"}]}], "meta":{"total":2}}"#
    );
}

#[test]
fn a_bare_array_a_nested_path_and_an_escaped_key() {
    assert_eq!(
        same_in_every_piece_size(r#" [1, "two" ,{"3":[3]}] "#, ""),
        Ok(Some(vec![
            "1".into(),
            r#""two""#.into(),
            r#"{"3":[3]}"#.into()
        ]))
    );
    assert_eq!(
        same_in_every_piece_size(r#"{"a":{"x":[9],"b":[1,2]},"b":[7]}"#, "a.b"),
        Ok(Some(vec!["1".into(), "2".into()]))
    );
    assert_eq!(
        same_in_every_piece_size(r#"{"d\u0061ta":[1]}"#, "data"),
        Ok(Some(vec!["1".into()]))
    );
    assert_eq!(same_in_every_piece_size("[]", ""), Ok(Some(vec![])));
    assert_eq!(
        same_in_every_piece_size(r#"{"data":[ ]}"#, "data"),
        Ok(Some(vec![]))
    );
}

#[test]
fn a_repeated_collection_key_takes_its_last_value() {
    let text = r#"{"data":[1,2],"x":0,"data":[3]}"#;
    assert_eq!(
        same_in_every_piece_size(text, "data"),
        Ok(Some(vec!["3".into()]))
    );
    let (_, pieces) = streamed(text, &path("data"), 4);
    assert_eq!(pieces.restarts, 1);
    // The last value no array: no collection, as for the whole page.
    assert_eq!(
        same_in_every_piece_size(r#"{"data":[1,2],"data":null}"#, "data"),
        Ok(None)
    );
}

#[test]
fn no_array_at_the_path_keeps_the_page_whole() {
    for (text, p) in [
        (r#"{"other":[1],"data":{"x":[1]}}"#, "data"),
        (r#"[1,2]"#, "data"),
        (r#"{"data":[1]}"#, ""),
        (r#""data""#, "data"),
    ] {
        let (got, pieces) = streamed(text, &path(p), 3);
        assert_eq!(got, whole(text, &path(p)), "{text}");
        assert_eq!(pieces.hollow, text.as_bytes(), "{text}");
        assert_eq!(pieces.batches, 0);
    }
}

#[test]
fn malformed_pages_are_refused_as_the_whole_page_is() {
    for text in [
        r#"{"data":[1,]}"#,
        r#"{"data":[1 2]}"#,
        r#"{"data":[,1]}"#,
        r#"{"data":[1],}"#,
        r#"{"data":[1]]}"#,
        r#"{"data":[1]} {"data":[2]}"#,
        r#"{"data":["a\"]}"#,
        r#"{"data":[1,2"#,
        r#"{"data" [1,2]}"#,
        r#"{"da\qa":[1]}"#,
        r#"{"data":[{"a":1]}]}"#,
    ] {
        assert_eq!(same_in_every_piece_size(text, "data"), Err(()), "{text}");
    }
}

/// A collection of `n` items of about 100 bytes, with a trailing comma
/// when `trailing`.
fn large(n: usize, trailing: bool) -> String {
    let items: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"id":{i},"note":"{}","x":[1,2]}}"#, "n".repeat(70)))
        .collect();
    let comma = if trailing { "," } else { "" };
    format!(
        r#"{{"data":[{}{comma}],"meta":{{"total":{n}}}}}"#,
        items.join(",")
    )
}

#[test]
fn a_large_collection_leaves_in_several_batches() {
    let text = large(6000, false);
    let want = whole(&text, &path("data"));
    for piece in [1, 1000, 65_536, text.len()] {
        let (got, pieces) = streamed(&text, &path("data"), piece);
        assert_eq!(got, want);
        assert!(pieces.batches > 2, "{} batches", pieces.batches);
        assert!(
            pieces.hollow.len() < 200,
            "{}",
            String::from_utf8_lossy(&pieces.hollow)
        );
    }
    assert_eq!(want.unwrap().unwrap().len(), 6000);
}

#[test]
fn a_trailing_comma_is_refused_where_a_batch_was_cut() {
    let mut at_a_cut = 0;
    for n in 2550..2700 {
        let text = large(n, true);
        assert!(whole(&text, &path("data")).is_err());
        let got = in_pieces(&text, &path("data"), 4096).read;
        assert!(got.is_err(), "{n} items");
        if got == Err("a comma before the end of the collection".to_string()) {
            at_a_cut += 1;
        }
    }
    assert!(at_a_cut > 0, "no trailing comma fell on a cut");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Any text, in any piece size, reads as the whole page reads.
    #[test]
    fn any_text_reads_as_the_whole_page(
        text in r#"[\[\]{}",:\\ 0-9a-z]{0,60}"#,
        piece in 1usize..8,
        p in prop::sample::select(vec!["", "data", "a.b"]),
    ) {
        let path = path(p);
        prop_assert_eq!(streamed(&text, &path, piece).0, whole(&text, &path));
    }

    /// Valid pages, mutated by a byte or two, read as the whole page reads.
    #[test]
    fn near_valid_pages_read_as_the_whole_page(
        at in 0usize..200,
        with in prop::sample::select(vec!["", ",", "]", "[", "}", "{", "\"", "\\", ":", " "]),
        at2 in 0usize..200,
        piece in 1usize..16,
    ) {
        let base = r#"{"meta":{"n":[1]},"a":{"b":[{"k":"v,]"},[2,{"x":"\"}"}],3],"c":1},"data":[{"id":1},{"id":"2","t":[[]]}],"z":"e"}"#;
        let mut text = base.to_string();
        let at = at.min(text.len());
        text.insert_str(at, with);
        let at2 = at2.min(text.len());
        if text.is_char_boundary(at2) && at2 < text.len() {
            text.remove(at2);
        }
        for p in ["data", "a.b", ""] {
            let path = path(p);
            prop_assert_eq!(streamed(&text, &path, piece).0, whole(&text, &path), "{} along {}", text, p);
        }
    }
}
