//! Loading a collection: one XML file, or a folder whose `.xml` files, in name order,
//! form one collection.
//!
//! Invariants: sources are returned in the order their documents take in collection
//! document order; text is UTF-8 (files declaring ISO-8859-1 that are not valid UTF-8 are
//! decoded as Latin-1, every byte one character); a document whose DOCTYPE names an
//! external DTD (which we never fetch) gets the ISO Latin-1 character entities that
//! such DTDs declare (`&eacute;` …, as in DBLP's `dblp.dtd`) expanded before parsing,
//! anywhere in the text; a document that is not well-formed
//! is an [`Error::Xml`] naming the file, line and column.
//!
//! Read next: `reference.rs`, which evaluates queries over the parsed documents.

use std::path::{Path, PathBuf};

use roxmltree::{Document, ParsingOptions};

use crate::error::{Error, Result};

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
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => e.into_bytes().iter().map(|&b| char::from(b)).collect(),
    };
    Ok(Source::new(path.to_path_buf(), text))
}

impl Source {
    /// A document's text as loaded (entities of an external DTD expanded, see above).
    pub fn new(path: PathBuf, text: String) -> Self {
        Source { path, text: expand_external_entities(text) }
    }
}

/// Names of the ISO Latin-1 entities, code points 160 to 255 in order.
const LATIN1_ENTITIES: [&str; 96] = [
    "nbsp", "iexcl", "cent", "pound", "curren", "yen", "brvbar", "sect", "uml", "copy", "ordf", "laquo", "not", "shy",
    "reg", "macr", "deg", "plusmn", "sup2", "sup3", "acute", "micro", "para", "middot", "cedil", "sup1", "ordm",
    "raquo", "frac14", "frac12", "frac34", "iquest", "Agrave", "Aacute", "Acirc", "Atilde", "Auml", "Aring", "AElig",
    "Ccedil", "Egrave", "Eacute", "Ecirc", "Euml", "Igrave", "Iacute", "Icirc", "Iuml", "ETH", "Ntilde", "Ograve",
    "Oacute", "Ocirc", "Otilde", "Ouml", "times", "Oslash", "Ugrave", "Uacute", "Ucirc", "Uuml", "Yacute", "THORN",
    "szlig", "agrave", "aacute", "acirc", "atilde", "auml", "aring", "aelig", "ccedil", "egrave", "eacute", "ecirc",
    "euml", "igrave", "iacute", "icirc", "iuml", "eth", "ntilde", "ograve", "oacute", "ocirc", "otilde", "ouml",
    "divide", "oslash", "ugrave", "uacute", "ucirc", "uuml", "yacute", "thorn", "yuml",
];

/// Expands Latin-1 entity references when the document relies on an external DTD.
fn expand_external_entities(text: String) -> String {
    let head = &text[..text.len().min(4096)];
    let external = head.find("<!DOCTYPE").is_some_and(|at| {
        let decl = &head[at..];
        let decl = &decl[..decl.find('>').unwrap_or(decl.len())];
        decl.contains("SYSTEM") || decl.contains("PUBLIC")
    });
    if !external || !text.contains('&') {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let name = rest[1..].split(';').next().filter(|n| n.len() < 8).unwrap_or("");
        match LATIN1_ENTITIES.iter().position(|e| *e == name) {
            Some(index) => {
                out.push(char::from_u32(160 + index as u32).unwrap_or('\u{fffd}'));
                rest = &rest[name.len() + 2..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Parses one document (DTDs allowed, no node limit beyond roxmltree's own).
pub fn parse_document<'input>(text: &'input str, label: &Path) -> Result<Document<'input>> {
    let options = ParsingOptions { allow_dtd: true, ..ParsingOptions::default() };
    Document::parse_with_options(text, options).map_err(|e| {
        let pos = e.pos();
        Error::Xml { file: label.to_path_buf(), line: pos.row, column: pos.col, reason: e.to_string() }
    })
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
    fn latin1_entities_expand_only_for_external_dtds() {
        let external = "<!DOCTYPE a SYSTEM \"a.dtd\"><a>&eacute;&amp;&uuml;&bogus;</a>";
        assert_eq!(expand_external_entities(external.into()), external.replace("&eacute;", "é").replace("&uuml;", "ü"));
        let internal = "<a>&eacute;</a>".to_string();
        assert_eq!(expand_external_entities(internal.clone()), internal);
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
