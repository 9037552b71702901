//! Documents in encodings other than UTF-8 and ISO-8859-1: UTF-16 of both byte orders
//! (with a byte order mark, or recognised by its first characters), and the encodings
//! an XML declaration names (windows-1252, Shift_JIS, …). Each must give the tree its
//! UTF-8 twin gives, through the streaming parser (also fed in pieces of 1–7 bytes) and
//! through the reference loader; malformed bytes, unknown names and declarations that
//! contradict the bytes are errors naming them, at the same place in both.
use super::{many_characters, oracle, ours, ours_error, parsed_in_pieces, position};
use crate::error::Error;

/// `text` in UTF-16, little- or big-endian, after a byte order mark if `bom`.
fn utf16(text: &str, little: bool, bom: bool) -> Vec<u8> {
    let units = bom.then_some(0xFEFF).into_iter().chain(text.encode_utf16());
    units.flat_map(|unit| if little { unit.to_le_bytes() } else { unit.to_be_bytes() }).collect()
}

/// Asserts that `bytes` parse, by us and by the reference loader, to the tree of `twin`
/// read as UTF-8 (its XML declaration, if any, left out).
fn same_as_utf8(bytes: &[u8], twin: &str) {
    let body = if twin.starts_with("<?xml ") { &twin[twin.find("?>").expect("declaration's end") + 2..] } else { twin };
    let expected = ours(body.as_bytes()).expect("the UTF-8 twin parses");
    assert_eq!(ours(bytes).expect("ours"), expected, "{twin:?}");
    assert_eq!(oracle(bytes).expect("roxmltree"), expected, "{twin:?}");
}

#[test]
fn utf16_of_either_byte_order_reads_as_its_utf8_twin() {
    let declared = "<?xml version='1.0' encoding='UTF-16'?>\n<a x='é'>日本 😀<b/>\r\n</a>";
    let bare = "<a x='é'>日本 😀<b/>\r\n</a>";
    for little in [true, false] {
        same_as_utf8(&utf16(declared, little, true), declared);
        same_as_utf8(&utf16(bare, little, true), bare);
        // Without a mark, the declaration's `<?` in UTF-16 tells (XML 1.0 appendix F).
        same_as_utf8(&utf16(declared, little, false), declared);
    }
    let le = "<?xml version='1.0' encoding='utf-16le'?><a/>";
    same_as_utf8(&utf16(le, true, true), le);
}

#[test]
fn declared_encodings_are_decoded() {
    let cp1252 = b"<?xml version='1.0' encoding='windows-1252'?><a t='\x80'>\x93q\x94</a>";
    same_as_utf8(cp1252, "<?xml version='1.0' encoding='windows-1252'?><a t='€'>“q”</a>");
    let sjis = b"<?xml version=\"1.0\" encoding=\"Shift_JIS\"?><a>\x93\xfa\x96\x7b</a>";
    same_as_utf8(sjis, "<?xml version=\"1.0\" encoding=\"Shift_JIS\"?><a>日本</a>");
    let koi8 = b"<?xml version='1.0' encoding='KOI8-R'?><a>\xd2\xcf\xd3</a>";
    same_as_utf8(koi8, "<?xml version='1.0' encoding='KOI8-R'?><a>рос</a>");
    // ISO-8859-1 stays Latin-1: 0x80 is U+0080, not windows-1252's euro sign.
    let latin1 = b"<?xml version='1.0' encoding='ISO-8859-1'?><a>\x80</a>";
    same_as_utf8(latin1, "<?xml version='1.0' encoding='ISO-8859-1'?><a>\u{80}</a>");
}

#[test]
fn a_large_utf16_document_read_in_pieces_splits_no_character() {
    let seed = 0x5EED_0016;
    println!("seed {seed:#x}");
    let doc = many_characters(20_000);
    let expected = ours(doc.as_bytes()).expect("the UTF-8 twin parses");
    for little in [true, false] {
        let bytes = utf16(&doc, little, true);
        assert_eq!(parsed_in_pieces(&bytes, seed), expected);
        assert_eq!(ours(&bytes).expect("parses"), expected);
    }
}

#[test]
fn malformed_bytes_are_an_error_at_their_place() {
    // An unpaired low surrogate at line 2, column 4; then a lone trailing byte.
    let mut bad = utf16("<a>\n  b", true, true);
    bad.extend_from_slice(&0xDC00u16.to_le_bytes());
    bad.extend_from_slice(&utf16("c</a>", true, false));
    let (ours_bad, oracle_bad) = (ours(&bad), oracle(&bad));
    assert!(matches!(&ours_bad, Err(Error::Xml { line: 2, column: 4, reason, .. }) if reason.contains("UTF-16LE")));
    assert_eq!(position(&ours_bad), position(&oracle_bad));
    let mut odd = utf16("<a/>", false, true);
    odd.push(b' ');
    assert!(ours_error(&odd).contains("UTF-16BE"));
    let sjis = b"<?xml version='1.0' encoding='Shift_JIS'?>\n<a>\x93\xfa\x81</a>";
    let (ours_sjis, oracle_sjis) = (ours(sjis), oracle(sjis));
    assert!(matches!(&ours_sjis, Err(Error::Xml { line: 2, column: 5, reason, .. }) if reason.contains("Shift_JIS")));
    assert_eq!(position(&ours_sjis), position(&oracle_sjis));
}

#[test]
fn names_that_contradict_the_bytes_or_name_nothing_are_refused() {
    let unknown = ours_error(b"<?xml version='1.0' encoding='x-bogus-8'?><a/>");
    assert!(unknown.contains("x-bogus-8") && unknown.contains("not a known encoding"), "{unknown}");
    let utf16_claimed = ours_error(b"<?xml version='1.0' encoding='UTF-16'?><a/>");
    assert!(utf16_claimed.contains("not UTF-16"), "{utf16_claimed}");
    let other_claimed = ours_error(&utf16("<?xml version='1.0' encoding='ISO-8859-1'?><a/>", true, true));
    assert!(other_claimed.contains("is UTF-16") && other_claimed.contains("ISO-8859-1"), "{other_claimed}");
    let bom_cp1252 = b"\xEF\xBB\xBF<?xml version='1.0' encoding='windows-1252'?><a/>";
    assert!(ours_error(bom_cp1252).contains("byte order mark"));
    assert!(oracle(bom_cp1252).is_err());
}
