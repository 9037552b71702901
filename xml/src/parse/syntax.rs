//! The character classes and the little cursor that check tokens against the XML
//! grammar exactly as roxmltree 0.21 does (its `tokenizer.rs`), so that what it
//! rejects we reject.
//!
//! quick-xml finds where each token starts and ends; [`Cursor`] then reads the token's
//! text (a start tag, an end tag, a PI, the XML declaration, the DOCTYPE) with
//! roxmltree's rules. A failure is a [`Fault`]: a byte offset into that text and a
//! reason, turned into a line and column by the caller.
//!
//! Read next: `markup.rs`, which reads start and end tags with this cursor.

use std::borrow::Cow;

/// `text` with its line ends as XML 1.0 §2.11 has every parsed entity read: CR LF and
/// a lone CR become LF. roxmltree does this in text and attribute values but keeps
/// CRs in comments and PIs, so both the streaming parser and the reference's readers
/// of those nodes pass their text through here.
pub fn normalize_line_ends(text: &str) -> Cow<'_, str> {
    if !text.contains('\r') {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
}

/// A grammar violation at byte `at` of the text being read.
#[derive(Debug)]
pub(crate) struct Fault {
    pub at: usize,
    pub reason: String,
}

pub(crate) type Checked<T> = std::result::Result<T, Fault>;

pub(crate) fn fault<T>(at: usize, reason: impl Into<String>) -> Checked<T> {
    Err(Fault { at, reason: reason.into() })
}

pub(crate) fn is_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

fn is_ascii_name_start(byte: u8) -> bool {
    matches!(byte, b'A'..=b'Z' | b'a'..=b'z' | b':' | b'_')
}

fn is_ascii_name(byte: u8) -> bool {
    matches!(byte, b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b':' | b'_' | b'-' | b'.')
}

pub(crate) fn is_name_start(c: char) -> bool {
    if c as u32 <= 128 {
        return is_ascii_name_start(c as u8);
    }
    matches!(c as u32,
        0xC0..=0xD6 | 0xD8..=0xF6 | 0xF8..=0x2FF | 0x370..=0x37D | 0x37F..=0x1FFF
        | 0x200C..=0x200D | 0x2070..=0x218F | 0x2C00..=0x2FEF | 0x3001..=0xD7FF
        | 0xF900..=0xFDCF | 0xFDF0..=0xFFFD | 0x10000..=0xEFFFF)
}

pub(crate) fn is_name_char(c: char) -> bool {
    if c as u32 <= 128 {
        return is_ascii_name(c as u8);
    }
    c as u32 == 0xB7
        || (0x300..=0x36F).contains(&(c as u32))
        || (0x203F..=0x2040).contains(&(c as u32))
        || is_name_start(c)
}

pub(crate) fn is_xml_char(c: char) -> bool {
    if (c as u32) < 0x20 {
        return is_space(c as u8);
    }
    !matches!(c as u32, 0xFFFE | 0xFFFF)
}

/// The byte offset of the first character that XML forbids (controls, U+FFFE, U+FFFF).
pub(crate) fn find_non_xml_char(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    // Fast path, branch-free so it vectorises: no control byte but tab, LF, CR and no
    // 0xEF (the lead byte of U+FFFE and U+FFFF).
    let plain = |b: u8| (b >= 0x20 || b == b'\t' || b == b'\n' || b == b'\r') & (b != 0xEF);
    if bytes.iter().fold(true, |all, &b| all & plain(b)) {
        return None;
    }
    let suspect = |&b: &u8| (b < 0x20 && !is_space(b)) || b == 0xEF;
    let mut from = 0;
    while let Some(i) = bytes[from..].iter().position(suspect) {
        let at = from + i;
        if bytes[at] != 0xEF || (bytes[at + 1] == 0xBF && matches!(bytes[at + 2], 0xBE | 0xBF)) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// Checks that `text` holds only XML characters.
pub(crate) fn check_chars(text: &str) -> Checked<()> {
    match find_non_xml_char(text) {
        Some(at) => {
            let c = text[at..].chars().next().expect("an offset found on a character");
            fault(at, format!("a non-XML character {c:?} was found"))
        }
        None => Ok(()),
    }
}

/// A position in a token's text, read with roxmltree's grammar.
pub(crate) struct Cursor<'a> {
    pub text: &'a str,
    pub pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(text: &'a str) -> Self {
        Cursor { text, pos: 0 }
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.text.len()
    }

    pub fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    pub fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    pub fn starts_with(&self, prefix: &str) -> bool {
        self.rest().starts_with(prefix)
    }

    pub fn starts_with_space(&self) -> bool {
        self.peek().is_some_and(is_space)
    }

    pub fn skip_spaces(&mut self) {
        while self.starts_with_space() {
            self.pos += 1;
        }
    }

    /// At least one space, then any more.
    pub fn consume_spaces(&mut self) -> Checked<()> {
        if !self.starts_with_space() {
            return self.unexpected("a whitespace");
        }
        self.skip_spaces();
        Ok(())
    }

    pub fn unexpected<T>(&self, expected: &str) -> Checked<T> {
        match self.rest().chars().next() {
            Some(c) => fault(self.pos, format!("expected {expected} not {c:?}")),
            None => fault(self.pos, format!("expected {expected}, the markup ended")),
        }
    }

    pub fn consume_byte(&mut self, byte: u8) -> Checked<()> {
        if self.peek() != Some(byte) {
            return self.unexpected(&format!("'{}'", byte as char));
        }
        self.pos += 1;
        Ok(())
    }

    /// A `Name`; empty or not starting with a name-start character is an error.
    pub fn consume_name(&mut self) -> Checked<&'a str> {
        let start = self.pos;
        let mut chars = self.rest().chars();
        match chars.next() {
            Some(c) if is_name_start(c) => self.pos += c.len_utf8(),
            _ => return fault(start, "invalid name"),
        }
        for c in chars.take_while(|&c| is_name_char(c)) {
            self.pos += c.len_utf8();
        }
        Ok(&self.text[start..self.pos])
    }

    /// A qualified name, split at its one optional colon: `(prefix, local)`.
    pub fn consume_qname(&mut self) -> Checked<(&'a str, &'a str)> {
        let start = self.pos;
        let mut colon = None;
        for c in self.rest().chars() {
            if c == ':' {
                if colon.is_some() {
                    return fault(start, "invalid name (two colons)");
                }
                colon = Some(self.pos);
            } else if !is_name_char(c) {
                break;
            }
            self.pos += c.len_utf8();
        }
        let (prefix, local) = match colon {
            Some(at) => (&self.text[start..at], &self.text[at + 1..self.pos]),
            None => ("", &self.text[start..self.pos]),
        };
        let starts_well = |name: &str| name.chars().next().is_some_and(is_name_start);
        if (!prefix.is_empty() && !starts_well(prefix)) || !starts_well(local) {
            return fault(start, "invalid name");
        }
        Ok((prefix, local))
    }

    pub fn consume_eq(&mut self) -> Checked<()> {
        self.skip_spaces();
        self.consume_byte(b'=')?;
        self.skip_spaces();
        Ok(())
    }

    pub fn consume_quote(&mut self) -> Checked<u8> {
        match self.peek() {
            Some(quote @ (b'"' | b'\'')) => {
                self.pos += 1;
                Ok(quote)
            }
            _ => self.unexpected("a quote"),
        }
    }

    /// A quoted attribute value (no `<` in it, only XML characters): its text and
    /// its offset.
    pub fn consume_attribute_value(&mut self) -> Checked<(&'a str, usize)> {
        let quote = self.consume_quote()?;
        let start = self.pos;
        let bytes = self.text.as_bytes();
        let end = match bytes[start..].iter().position(|&b| b == quote || b == b'<') {
            Some(length) if bytes[start + length] == quote => start + length,
            Some(length) => return fault(start + length, "'<' in an attribute value"),
            None => return fault(self.text.len(), "an attribute value is not closed"),
        };
        let value = &self.text[start..end];
        check_chars(value).map_err(|f| Fault { at: start + f.at, ..f })?;
        self.pos = end + 1;
        Ok((value, start))
    }
}
