//! Loading a collection: one XML file, or a folder whose `.xml` files, in name order,
//! form one collection.
//!
//! Invariants: sources are returned in the order their documents take in collection
//! document order; bytes are decoded as XML 1.0 §4.3.3 says (UTF-8 or UTF-16, or the
//! encoding the declaration names, see `parse/encoding.rs`; an unknown encoding or
//! bytes malformed in the document's are an [`Error::Xml`]); a document whose
//! DOCTYPE names an external DTD (which we never fetch) gets the ISO Latin-1 character
//! entities that such DTDs declare (`&eacute;` …, as in DBLP's `dblp.dtd`) expanded
//! before parsing, anywhere in the text; a document that is not well-formed
//! is an [`Error::Xml`] naming the file, line and column. Both rules live in
//! [`crate::parse`], so the streaming parser and this loader cannot drift apart. The
//! internal subset's attribute defaults, which roxmltree does not read, are written
//! into the text it parses, and the subset's comments and PIs, which roxmltree makes
//! nodes, are blanked (`collection/defaults.rs`).
//!
//! Read next: `reference.rs`, which evaluates queries over the parsed documents.

mod defaults;

use std::path::{Path, PathBuf};

use roxmltree::{Document, ParsingOptions};

use crate::error::{Error, Result};
use crate::parse;

/// The text of one document of a collection.
#[derive(Debug, Clone)]
pub struct Source {
    pub path: PathBuf,
    pub text: String,
}

/// Reads a file, or every `.xml` file of a folder in name order.
pub fn load(path: &Path) -> Result<Vec<Source>> {
    let io = |source| Error::Io { path: path.to_path_buf(), source };
    let files = if path.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(io)?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "xml"))
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(Error::EmptyCollection(path.to_path_buf()));
        }
        files
    } else {
        vec![path.to_path_buf()]
    };
    files.into_iter().map(|file| read_source(&file)).collect()
}

fn read_source(path: &Path) -> Result<Source> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io { path: path.into(), source })?;
    let text = parse::decode(bytes, path)?;
    Ok(Source::new(path.to_path_buf(), text))
}

impl Source {
    /// A document's text as loaded (entities of an external DTD expanded, see above;
    /// the internal subset's attribute defaults supplied and its comments and PIs
    /// blanked, `collection/defaults.rs`).
    pub fn new(path: PathBuf, text: String) -> Self {
        Source { path, text: defaults::supply(defaults::blank_subset_markup(expand_external_entities(text))) }
    }
}

/// Expands Latin-1 entity references when the document relies on an external DTD.
fn expand_external_entities(text: String) -> String {
    if !text.contains('&') || !parse::external_dtd(&text) {
        return text;
    }
    parse::expand_latin1(&text).into_owned()
}

/// Parses one document (DTDs allowed, no node limit beyond roxmltree's own).
pub fn parse_document<'input>(text: &'input str, label: &Path) -> Result<Document<'input>> {
    let options = ParsingOptions { allow_dtd: true, ..ParsingOptions::default() };
    Document::parse_with_options(text, options).map_err(|e| {
        let (line, column) = match e {
            // roxmltree says line 1, column 1 for these; the streaming parser (and
            // expat) point at the end of the input.
            roxmltree::Error::NoRootNode
            | roxmltree::Error::UnclosedRootNode
            | roxmltree::Error::UnexpectedEndOfStream => end_of(text),
            _ => (e.pos().row, e.pos().col),
        };
        Error::Xml { file: label.to_path_buf(), line, column, reason: e.to_string() }
    })
}

/// The 1-based line and column (in characters) just past the end of `text`.
fn end_of(text: &str) -> (u32, u32) {
    let lines = text.bytes().filter(|&b| b == b'\n').count();
    let last = text.rsplit('\n').next().unwrap_or_default();
    let to_u32 = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    (to_u32(lines + 1), to_u32(last.chars().count() + 1))
}

/// Parses every source of a collection.
pub fn parse_all(sources: &[Source]) -> Result<Vec<Document<'_>>> {
    sources.iter().map(|s| parse_document(&s.text, &s.path)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_xml_names_file_line_and_column() {
        let err = parse_document("<a>\n<b></a>", Path::new("x.xml")).unwrap_err();
        assert!(matches!(err, Error::Xml { line: 2, .. }), "{err}");
        assert!(err.to_string().contains("x.xml"), "{err}");
    }

    #[test]
    fn a_truncated_document_is_reported_at_its_end() {
        for (text, line, column) in [("<a>\n <b>tä", 2, 7), ("", 1, 1), ("<!--c-->\n", 2, 1), ("<a>", 1, 4)] {
            let err = parse_document(text, Path::new("x.xml")).unwrap_err();
            assert!(
                matches!(err, Error::Xml { line: l, column: c, .. } if (l, c) == (line, column)),
                "{text:?}: {err}"
            );
        }
    }

    #[test]
    fn latin1_entities_expand_only_for_external_dtds() {
        let external = "<!DOCTYPE a SYSTEM \"a.dtd\"><a>&eacute;&amp;&uuml;&bogus;</a>";
        assert_eq!(expand_external_entities(external.into()), external.replace("&eacute;", "é").replace("&uuml;", "ü"));
        let internal = "<a>&eacute;</a>".to_string();
        assert_eq!(expand_external_entities(internal.clone()), internal);
    }

    #[test]
    fn a_multibyte_character_across_byte_4096_does_not_panic() {
        // Regression: the external-DTD check sliced the text at byte 4096, inside 'タ'.
        let mut text = String::from("<!DOCTYPE a SYSTEM \"a.dtd\"><a>");
        text.push_str(&"x".repeat(4095 - text.len()));
        text.push_str("タ&eacute;</a>");
        assert!(!text.is_char_boundary(4096));
        let source = Source::new("x.xml".into(), text);
        assert!(source.text.ends_with("タé</a>"), "{}", source.text);
    }

    #[test]
    fn bytes_are_decoded_by_the_declared_encoding() {
        let text = parse::decode(b"<?xml version='1.0' encoding='latin1'?><a>\xE9</a>".to_vec(), Path::new("l.xml"));
        assert!(text.expect("Latin-1").contains("<a>é</a>"));
        let cp1252 =
            parse::decode(b"<?xml version='1.0' encoding='windows-1252'?><a>\x80</a>".to_vec(), Path::new("w.xml"));
        assert!(cp1252.expect("windows-1252").contains("<a>€</a>"));
        let utf16 = parse::decode(b"<?xml version='1.0' encoding='UTF-16'?><a/>".to_vec(), Path::new("u.xml"));
        assert!(matches!(&utf16, Err(Error::Xml { reason, .. }) if reason.contains("not UTF-16")), "{utf16:?}");
        let invalid = parse::decode(b"<a>\n \xE9</a>".to_vec(), Path::new("i.xml"));
        assert!(matches!(invalid, Err(Error::Xml { line: 2, column: 2, .. })), "{invalid:?}");
    }

    #[test]
    fn a_folder_is_its_xml_files_in_name_order() {
        let dir = tempfile::tempdir().expect("temp dir");
        for (name, body) in [("b.xml", "<b/>"), ("a.xml", "<a/>"), ("c.txt", "junk")] {
            std::fs::write(dir.path().join(name), body).expect("write");
        }
        let sources = load(dir.path()).expect("load");
        let texts: Vec<_> = sources.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(texts, ["<a/>", "<b/>"]);
        let empty = tempfile::tempdir().expect("temp dir");
        assert!(matches!(load(empty.path()), Err(Error::EmptyCollection(_))));
    }
}
