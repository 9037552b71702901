//! Character data as roxmltree 0.21 builds it: text tokens with their character and
//! entity references, CDATA sections, and attribute values normalised
//! (`parse.rs` `process_text`, `process_cdata`, `normalize_attribute` there).
//!
//! Invariants (roxmltree's, kept bug for bug so the store equals the oracle):
//! CR and CRLF become LF in text, but a character reference outside an entity is
//! copied as is, and so is the byte right after it; in attribute values tab, CR and
//! LF become spaces (CRLF one space) except from character references outside an
//! entity; an entity's replacement text is parsed as content (so it may hold elements);
//! entities nest at most 10 deep and one top reference may expand at most 255 others
//! ([`LoopDetector`]), which stops loops and billion-laughs documents.
//!
//! Read next: `tree.rs`, which calls these on each token.

use std::borrow::Cow;
use std::rc::Rc;

use super::Sink;
use super::input::Position;
use super::syntax::{Cursor, check_chars, is_xml_char};
use super::tree::{Builder, EntityText};
use crate::error::Result;

/// roxmltree's limits on entity expansion.
#[derive(Default)]
pub(super) struct LoopDetector {
    pub depth: u8,
    references: u8,
}

impl LoopDetector {
    /// Enters one entity reference; `false` when a limit is passed.
    fn enter(&mut self) -> bool {
        if self.depth > 0 {
            if self.references == u8::MAX {
                return false;
            }
            self.references += 1;
        }
        if self.depth >= 10 {
            return false;
        }
        self.depth += 1;
        true
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
        if self.depth == 0 {
            self.references = 0;
        }
    }
}

enum Reference<'a> {
    Char(char),
    Entity(&'a str),
}

/// The reference at the start of `text` (which starts with `&`) and its length.
fn reference(text: &str) -> Option<(Reference<'_>, usize)> {
    let mut cursor = Cursor::new(text);
    cursor.pos = 1;
    let reference = if cursor.peek() == Some(b'#') {
        cursor.pos += 1;
        let hex = cursor.peek() == Some(b'x');
        cursor.pos += usize::from(hex);
        let digits = cursor.rest().bytes().take_while(|b| if hex { b.is_ascii_hexdigit() } else { b.is_ascii_digit() });
        let length = digits.count();
        let value = u32::from_str_radix(&cursor.rest()[..length], if hex { 16 } else { 10 }).ok()?;
        cursor.pos += length;
        let c = char::from_u32(value).unwrap_or('\u{FFFD}');
        if !is_xml_char(c) {
            return None;
        }
        Reference::Char(c)
    } else {
        match cursor.consume_name().ok()? {
            "quot" => Reference::Char('"'),
            "amp" => Reference::Char('&'),
            "apos" => Reference::Char('\''),
            "lt" => Reference::Char('<'),
            "gt" => Reference::Char('>'),
            name => Reference::Entity(name),
        }
    };
    cursor.consume_byte(b';').ok()?;
    Some((reference, cursor.pos))
}

/// Appends a text byte, turning CR and CRLF into LF.
fn push_from_text(buf: &mut Vec<u8>, c: u8, at_end: bool) {
    if let Some(last) = buf.last_mut().filter(|last| **last == b'\r') {
        *last = b'\n';
        if at_end && c == b'\r' {
            buf.push(b'\n');
        } else if c != b'\n' {
            buf.push(c);
        }
    } else if at_end && c == b'\r' {
        buf.push(b'\n');
    } else {
        buf.push(c);
    }
}

/// Appends an attribute-value byte, turning tab, CR, LF and CRLF into one space.
fn push_from_attribute(buf: &mut Vec<u8>, c: u8, next: Option<u8>) {
    if c == b'\r' && next == Some(b'\n') {
        return;
    }
    buf.push(if matches!(c, b'\n' | b'\r' | b'\t') { b' ' } else { c });
}

fn into_string(buf: Vec<u8>) -> String {
    String::from_utf8(buf).expect("text built from whole UTF-8 characters")
}

impl<S: Sink> Builder<'_, S> {
    fn entity_value(&self, name: &str, at: Position) -> Result<Rc<str>> {
        match self.entities.iter().find(|e| *e.name == *name) {
            Some(entity) => Ok(entity.value.clone()),
            None => Err(self.fail(at, format!("unknown entity reference '&{name};'"))),
        }
    }

    fn enter_entity(&mut self, at: Position) -> Result<()> {
        if !self.loop_detector.enter() {
            return Err(self.fail(at, "entity references nest too deep or expand too much (an entity loop?)"));
        }
        Ok(())
    }

    /// One text token (everything between two pieces of markup) starting at `at`.
    pub(super) fn text_token(&mut self, raw: &str, at: Position) -> Result<()> {
        check_chars(raw).map_err(|f| self.fail(at.within(raw, f.at), f.reason))?;
        if raw.contains("]]>") {
            return Err(self.fail(at.within(raw, raw.len()), "']]>' is not allowed in text"));
        }
        if !raw.bytes().any(|b| b == b'&' || b == b'\r') {
            self.append_text(raw);
            return Ok(());
        }
        let bytes = raw.as_bytes();
        let (mut buf, mut as_is, mut i) = (Vec::with_capacity(raw.len()), false, 0);
        while i < bytes.len() {
            if bytes[i] != b'&' {
                i += 1;
                if as_is {
                    buf.push(bytes[i - 1]);
                    as_is = false;
                } else {
                    push_from_text(&mut buf, bytes[i - 1], i == bytes.len());
                }
                continue;
            }
            let start = i;
            let Some((reference, length)) = reference(&raw[i..]) else {
                return Err(self.fail(at.within(raw, i), "malformed entity reference"));
            };
            i += length;
            match reference {
                Reference::Char(c) => {
                    for &b in c.encode_utf8(&mut [0; 4]).as_bytes() {
                        if self.loop_detector.depth > 0 {
                            push_from_text(&mut buf, b, i == bytes.len());
                        } else {
                            buf.push(b);
                            as_is = true;
                        }
                    }
                }
                Reference::Entity(name) => {
                    let ref_at = at.within(raw, start);
                    let value = self.entity_value(name, ref_at)?;
                    as_is = false;
                    if !buf.is_empty() {
                        self.append_text(&into_string(std::mem::take(&mut buf)));
                    }
                    self.enter_entity(ref_at)?;
                    // quick-xml would drop a byte order mark starting the text (again at
                    // each new start); every one of them is text.
                    let body = value.trim_start_matches('\u{FEFF}');
                    let marks = &value[..value.len() - body.len()];
                    if !marks.is_empty() {
                        self.text_token(marks, ref_at)?;
                    }
                    self.run(&mut EntityText::reader(body, ref_at), true)?;
                    self.loop_detector.leave();
                }
            }
        }
        if !buf.is_empty() {
            self.append_text(&into_string(buf));
        }
        Ok(())
    }

    /// A CDATA section's text: CR and CRLF become LF, nothing else changes.
    pub(super) fn cdata(&mut self, body: &str, at: Position) -> Result<()> {
        check_chars(body).map_err(|f| self.fail(at.within(body, f.at), f.reason))?;
        if !body.contains('\r') {
            self.append_text(body);
            return Ok(());
        }
        let text = body.replace("\r\n", "\n").replace('\r', "\n");
        self.append_text(&text);
        Ok(())
    }

    /// An attribute value (`raw` as written, starting at `at`) normalised.
    pub(super) fn attribute_value<'v>(&mut self, raw: &'v str, at: Position) -> Result<Cow<'v, str>> {
        if !raw.bytes().any(|b| matches!(b, b'&' | b'\t' | b'\n' | b'\r')) {
            return Ok(Cow::Borrowed(raw));
        }
        let mut buf = Vec::with_capacity(raw.len());
        self.normalize_into(raw, at, &mut buf)?;
        let value = into_string(buf);
        // An entity's text can bring characters XML forbids (U+0001); roxmltree keeps
        // them, but no serialisation could write them back, so they are an error here
        // (a documented disagreement, fuzz/src/xml.rs `allowed`).
        if let Some(c) = value.chars().find(|&c| !is_xml_char(c)) {
            return Err(
                self.fail(at, format!("an attribute value holds U+{:04X}, a character XML does not allow", c as u32))
            );
        }
        Ok(Cow::Owned(value))
    }

    fn normalize_into(&mut self, text: &str, at: Position, buf: &mut Vec<u8>) -> Result<()> {
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] != b'&' {
                i += 1;
                push_from_attribute(buf, bytes[i - 1], bytes.get(i).copied());
                continue;
            }
            let ref_at = at.within(text, i);
            let Some((reference, length)) = reference(&text[i..]) else {
                return Err(self.fail(ref_at, "malformed entity reference"));
            };
            i += length;
            match reference {
                Reference::Char(c) => {
                    for &b in c.encode_utf8(&mut [0; 4]).as_bytes() {
                        if self.loop_detector.depth == 0 {
                            buf.push(b);
                        } else if b == b'<' {
                            return Err(self.fail(ref_at, "'<' (from a reference in an entity) in an attribute value"));
                        } else {
                            push_from_attribute(buf, b, None);
                        }
                    }
                }
                Reference::Entity(name) => {
                    let value = self.entity_value(name, ref_at)?;
                    self.enter_entity(ref_at)?;
                    self.normalize_into(&value, ref_at, buf)?;
                    self.loop_detector.leave();
                }
            }
        }
        Ok(())
    }
}
