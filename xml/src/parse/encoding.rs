//! The one place that decides how a document's bytes become text: UTF-8 (a byte
//! order mark skipped), or ISO-8859-1 when the XML declaration says so (every byte
//! one character). Any other declared encoding, or a UTF-16 byte order mark, is an
//! [`Error::Xml`] naming it; so is invalid UTF-8, with its line and column.
//!
//! Both readers use it: the streaming parser ([`super::input`]) and the reference
//! loader (`collection.rs`, through [`decode`]).
//!
//! Read next: `input.rs`, which applies the choice to a stream.

use std::path::Path;

use super::input::Position;
use super::syntax::is_space;
use crate::error::{Error, Result};

/// The UTF-8 byte order mark.
pub(crate) const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// How the bytes of a document are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    /// ISO-8859-1: byte `b` is the character U+00`b`.
    Latin1,
}

/// The encoding of a document whose first bytes are `head` (the XML declaration must
/// lie inside it); `Err` holds the reason it cannot be read.
pub fn detect(head: &[u8]) -> std::result::Result<Encoding, String> {
    if head.starts_with(b"\xFE\xFF") || head.starts_with(b"\xFF\xFE") {
        return Err("the document is UTF-16 (it starts with a UTF-16 byte order mark); \
                    only UTF-8 and ISO-8859-1 are read"
            .into());
    }
    let bom = head.starts_with(UTF8_BOM);
    let head = head.strip_prefix(UTF8_BOM).unwrap_or(head);
    let declared = head.starts_with(b"<?xml") && head.get(5).copied().is_some_and(is_space);
    if !declared {
        return Ok(Encoding::Utf8);
    }
    let end = head.windows(2).position(|w| w == b"?>").unwrap_or(head.len());
    let Some(name) = declared_encoding(&head[..end]) else {
        return Ok(Encoding::Utf8);
    };
    match name.to_ascii_lowercase().as_str() {
        "utf-8" | "utf8" | "us-ascii" | "ascii" => Ok(Encoding::Utf8),
        "iso-8859-1" | "iso8859-1" | "iso_8859-1" | "latin1" | "latin-1" | "l1" if bom => {
            Err(format!("the document starts with a UTF-8 byte order mark but declares encoding {name:?}"))
        }
        "iso-8859-1" | "iso8859-1" | "iso_8859-1" | "latin1" | "latin-1" | "l1" => Ok(Encoding::Latin1),
        _ => Err(format!("the XML declaration names encoding {name:?}; only UTF-8 and ISO-8859-1 are read")),
    }
}

/// The value of `encoding="…"` in an XML declaration.
fn declared_encoding(declaration: &[u8]) -> Option<String> {
    let at = declaration.windows(8).position(|w| w == b"encoding")?;
    let rest = &declaration[at + 8..];
    let rest = rest.trim_ascii_start().strip_prefix(b"=")?.trim_ascii_start();
    let (&quote, rest) = rest.split_first()?;
    if quote != b'"' && quote != b'\'' {
        return None;
    }
    let value = &rest[..rest.iter().position(|&b| b == quote)?];
    Some(String::from_utf8_lossy(value).into_owned())
}

/// Latin-1 bytes as UTF-8 text, appended to `out`.
pub(crate) fn latin1_to_utf8(bytes: &[u8], out: &mut Vec<u8>) {
    out.reserve(bytes.len() * 2);
    for &b in bytes {
        if b < 0x80 {
            out.push(b);
        } else {
            out.extend_from_slice(char::from(b).encode_utf8(&mut [0; 2]).as_bytes());
        }
    }
}

/// A whole document's text (a UTF-8 byte order mark kept, as roxmltree skips it).
pub fn decode(bytes: Vec<u8>, file: &Path) -> Result<String> {
    let xml = |position: Position, reason: String| Error::Xml {
        file: file.to_path_buf(),
        line: position.line,
        column: position.column,
        reason,
    };
    match detect(&bytes[..bytes.len().min(1024)]).map_err(|reason| xml(Position::START, reason))? {
        Encoding::Latin1 => {
            let mut out = Vec::new();
            latin1_to_utf8(&bytes, &mut out);
            Ok(String::from_utf8(out).expect("Latin-1 transcodes to valid UTF-8"))
        }
        Encoding::Utf8 => String::from_utf8(bytes).map_err(|e| {
            let valid = e.utf8_error().valid_up_to();
            let mut at = Position::START;
            at.advance(&e.as_bytes()[..valid]);
            xml(at, "the document is not valid UTF-8".into())
        }),
    }
}
