//! The collection finder and the page splitter on arbitrary bytes: page one
//! found under each kind of declaration, then the same text split along the
//! path page one found (as later pages are), and along a fixed path; the
//! items kept as ranges into the body read back exactly as split; the
//! split on threads (used on large pages) agrees with the one-pass split;
//! and the page split while it arrives (`collection::stream`, in pieces
//! of 1 to 64 bytes) gives the same items, or the same refusal, as the
//! whole page.
#![no_main]
#![forbid(unsafe_code)]

use dragnet_core::items::{ranges_of, Items};
use dragnet_walk::collection::stream::in_pieces;
use dragnet_walk::collection::{first_page, split_keeping_fields_on, split_text, Declared};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let data_path = vec!["data".to_string()];
    let explicit = (mode & 1 == 1).then_some(data_path.as_slice());
    let declared = match (mode >> 1) % 4 {
        0 => Declared::Unknown { list_like: true },
        1 => Declared::Unknown { list_like: false },
        2 => Declared::Resource,
        _ => Declared::At(&data_path),
    };
    if let Ok(Some((path, _envelope, page))) = first_page(&text, explicit, declared) {
        let again = split_text(&text, &path)
            .expect("a page one that was found splits again")
            .expect("the collection page one found is there on a re-split");
        assert_eq!(again.items.len(), page.items.len());
        let ranges = ranges_of(&text, &page.items);
        assert_eq!(ranges.len(), page.items.len(), "every item lies in the body");
        let texts: Vec<&str> = page.items.iter().map(|i| i.get()).collect();
        let mut kept = Items::new();
        kept.keep_ranges(text.to_string(), &ranges);
        assert!(kept.iter().eq(texts.iter().copied()), "ranges read back as split");
    }
    let _ = split_text(&text, &data_path);
    let _ = split_text(&text, &[]);
    for path in [&data_path[..], &[]] {
        let one = split_keeping_fields_on(&text, path, 1, usize::MAX);
        let threads = 2 + usize::from(mode >> 3) % 3;
        let many = split_keeping_fields_on(&text, path, threads, 0);
        match (one, many) {
            (Ok(None), Ok(None)) => {}
            (Ok(Some((p1, top1, pos1))), Ok(Some((p2, top2, pos2)))) => {
                assert!(p1.items.iter().map(|i| i.get()).eq(p2.items.iter().map(|i| i.get())));
                assert_eq!((p1.total, p1.next_hint, pos1), (p2.total, p2.next_hint, pos2));
                let fields = |t: &dragnet_core::json::RawObject| -> Vec<(String, String)> {
                    t.fields.iter().map(|(k, v)| (k.0.to_string(), v.get().to_string())).collect()
                };
                assert_eq!(fields(&top1), fields(&top2));
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (a, b) => panic!("one pass and threads disagree: {:?} vs {:?}", a.map(|x| x.is_some()), b.map(|x| x.is_some())),
        }
    }
    let piece = 1 + usize::from(mode >> 2) % 64;
    for path in [&data_path[..], &[]] {
        let whole = split_text(&text, path)
            .map(|page| page.map(|p| p.items.iter().map(|i| i.get().to_string()).collect::<Vec<_>>()))
            .map_err(|_| ());
        let streamed = in_pieces(&text, path, piece);
        assert_eq!(streamed.read.clone().map_err(|_| ()), whole, "streamed in pieces of {piece}");
        if let Ok(Some(items)) = &streamed.read {
            assert_eq!(streamed.hollow_items.last(), items.last(), "the hollow page keeps the last item");
        }
    }
});
