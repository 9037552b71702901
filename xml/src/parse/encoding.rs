//! The one place that decides how a document's bytes become text (XML 1.0 §4.3.3 and
//! appendix F):
//!
//! - a UTF-16 byte order mark, or a document whose first characters `<?` are UTF-16
//!   without one, is UTF-16 (little- or big-endian), whatever encoding its declaration
//!   names as long as it is a UTF-16 one;
//! - otherwise the XML declaration's `encoding` decides: absent, UTF-8 or ASCII is UTF-8
//!   (a UTF-8 byte order mark skipped); ISO-8859-1 is read as such (every byte one
//!   character; the WHATWG tables that [`encoding_rs`] follows would read it as
//!   windows-1252); any other name [`encoding_rs`] knows (windows-1252, ISO-8859-2…16,
//!   KOI8-R, Shift_JIS, EUC-JP, EUC-KR, GBK, GB18030, Big5, …) is decoded by it to UTF-8.
//!
//! A name no table knows, a UTF-16 name on bytes that are not UTF-16, a UTF-8 byte
//! order mark before another encoding's name, and bytes malformed in the document's
//! encoding are each an [`Error::Xml`] naming them, at the line and column of the first
//! bad byte.
//!
//! Both readers use it: the streaming parser ([`super::input`]) and the reference
//! loader (`collection.rs`, through [`decode`]).
//!
//! Read next: `input.rs`, which applies the choice to a stream.

use std::path::Path;

use encoding_rs::{Decoder, DecoderResult, UTF_16BE, UTF_16LE};

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
    /// Any other encoding, decoded to UTF-8 by `encoding_rs` (UTF-16 among them).
    Other(&'static encoding_rs::Encoding),
}

impl Encoding {
    /// The encoding's name, for errors.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Utf8 => "UTF-8",
            Encoding::Latin1 => "ISO-8859-1",
            Encoding::Other(encoding) => encoding.name(),
        }
    }

    /// A decoder to UTF-8 for [`Encoding::Other`] (removing a byte order mark).
    pub(crate) fn decoder(self) -> Option<Decoder> {
        match self {
            Encoding::Other(encoding) => Some(encoding.new_decoder_with_bom_removal()),
            Encoding::Utf8 | Encoding::Latin1 => None,
        }
    }
}

/// The encoding of a document whose first bytes are `head` (the XML declaration must
/// lie inside it); `Err` holds the reason it cannot be read.
pub fn detect(head: &[u8]) -> std::result::Result<Encoding, String> {
    if let Some(utf16) = utf16(head) {
        return detect_utf16(head, utf16);
    }
    let bom = head.starts_with(UTF8_BOM);
    let Some(name) = declared_encoding(head.strip_prefix(UTF8_BOM).unwrap_or(head)) else {
        return Ok(Encoding::Utf8);
    };
    let encoding = match name.to_ascii_lowercase().as_str() {
        "utf-8" | "utf8" | "us-ascii" | "ascii" => return Ok(Encoding::Utf8),
        "iso-8859-1" | "iso8859-1" | "iso_8859-1" | "latin1" | "latin-1" | "l1" => Encoding::Latin1,
        _ => match encoding_rs::Encoding::for_label(name.as_bytes()) {
            Some(found) if found == encoding_rs::UTF_8 => return Ok(Encoding::Utf8),
            Some(found) if found == UTF_16LE || found == UTF_16BE => {
                return Err(format!("the XML declaration names encoding {name:?} but the document is not UTF-16"));
            }
            Some(found) if found != encoding_rs::REPLACEMENT => Encoding::Other(found),
            _ => return Err(format!("the XML declaration names encoding {name:?}, which is not a known encoding")),
        },
    };
    if bom {
        return Err(format!("the document starts with a UTF-8 byte order mark but declares encoding {name:?}"));
    }
    Ok(encoding)
}

/// UTF-16 of either byte order if `head` starts with its byte order mark or with `<?`
/// in it (XML 1.0 appendix F).
fn utf16(head: &[u8]) -> Option<&'static encoding_rs::Encoding> {
    match head {
        [0xFF, 0xFE, ..] | [b'<', 0, b'?', 0, ..] => Some(UTF_16LE),
        [0xFE, 0xFF, ..] | [0, b'<', 0, b'?', ..] => Some(UTF_16BE),
        _ => None,
    }
}

/// A UTF-16 document's encoding, refused when its declaration names another.
fn detect_utf16(head: &[u8], utf16: &'static encoding_rs::Encoding) -> std::result::Result<Encoding, String> {
    // Cut at an even length: a character split at the end would only be replaced.
    let (text, _) = utf16.decode_with_bom_removal(&head[..head.len() & !1]);
    match declared_encoding(text.as_bytes()) {
        Some(name) if !name.to_ascii_lowercase().starts_with("utf-16") && !name.eq_ignore_ascii_case("ucs-2") => {
            Err(format!("the document is UTF-16 but its XML declaration names encoding {name:?}"))
        }
        _ => Ok(Encoding::Other(utf16)),
    }
}

/// The value of `encoding="…"` in the XML declaration that starts `text`, if any.
fn declared_encoding(text: &[u8]) -> Option<String> {
    if !(text.starts_with(b"<?xml") && text.get(5).copied().is_some_and(is_space)) {
        return None;
    }
    let declaration = &text[..text.windows(2).position(|w| w == b"?>").unwrap_or(text.len())];
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

/// `bytes` decoded by `decoder` as UTF-8 text appended to `out` (`last`: the end of the
/// document); false when they are malformed, with `out` holding all before the first
/// bad byte.
pub(crate) fn transcode(decoder: &mut Decoder, bytes: &[u8], last: bool, out: &mut Vec<u8>) -> bool {
    let at = out.len();
    // Every encoding_rs decoder bounds its output; the fallback is never reached.
    let room = decoder.max_utf8_buffer_length_without_replacement(bytes.len()).unwrap_or(bytes.len() * 3 + 16);
    out.resize(at + room, 0);
    let (result, _, written) = decoder.decode_to_utf8_without_replacement(bytes, &mut out[at..], last);
    out.truncate(at + written);
    !matches!(result, DecoderResult::Malformed(..))
}

/// A whole document's text (a UTF-8 byte order mark kept, as roxmltree skips it).
pub fn decode(bytes: Vec<u8>, file: &Path) -> Result<String> {
    let xml = |position: Position, reason: String| Error::Xml {
        file: file.to_path_buf(),
        line: position.line,
        column: position.column,
        reason,
    };
    let encoding = detect(&bytes[..bytes.len().min(1024)]).map_err(|reason| xml(Position::START, reason))?;
    let not_valid = |valid: &[u8]| {
        let mut at = Position::START;
        at.advance(valid);
        xml(at, format!("the document is not valid {}", encoding.name()))
    };
    match encoding {
        Encoding::Latin1 => {
            let mut out = Vec::new();
            latin1_to_utf8(&bytes, &mut out);
            Ok(String::from_utf8(out).expect("Latin-1 transcodes to valid UTF-8"))
        }
        Encoding::Utf8 => {
            String::from_utf8(bytes).map_err(|e| not_valid(&e.as_bytes()[..e.utf8_error().valid_up_to()]))
        }
        Encoding::Other(_) => {
            let mut out = Vec::new();
            let mut decoder = encoding.decoder().expect("a decoder for an encoding_rs encoding");
            if !transcode(&mut decoder, &bytes, true, &mut out) {
                return Err(not_valid(&out));
            }
            Ok(String::from_utf8(out).expect("encoding_rs writes valid UTF-8"))
        }
    }
}
