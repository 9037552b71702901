//! The parser's state machine: quick-xml's tokens in, [`Event`]s out, with roxmltree's
//! document rules (prolog, one root, epilog) and its text merging.
//!
//! Life cycle of a document ([`Phase`]):
//!
//! ```text
//!   Prolog --root start tag--> Content --root end tag--> Epilog --end--> done
//!     (declaration first, comments, PIs, spaces, one DOCTYPE)   (comments, PIs, spaces)
//! ```
//!
//! Invariants: text is merged across text tokens, CDATA and entity text until the next
//! element, end tag, comment or PI, then emitted as one `Text` ([`Builder::flush_text`]);
//! the open elements are a stack in memory (names, namespace scopes), never the call
//! stack, so nesting depth costs no recursion; an entity's replacement text is read by
//! a nested [`Builder::run`], at most 10 deep (`text.rs`).
//!
//! Read next: `markup.rs` (tags, attributes, namespaces), `text.rs` (text, entities).

use std::collections::HashMap;
use std::io::{self, BufRead, Read};
use std::path::Path;
use std::rc::Rc;

use quick_xml::events::Event as XmlEvent;

use super::attlist::AttributeDecl;
use super::dtd::{self, Entity, check_comment, split_pi};
use super::input::{Input, Position};
use super::syntax::{Cursor, Fault, is_space, normalize_line_ends};
use super::text::LoopDetector;
use super::{Event, Sink};
use crate::error::{Error, Result};

/// Where the document is (see the life cycle above).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    Prolog,
    Content,
    Epilog,
}

/// An open element: where its name starts in `Builder::names`, how many namespace
/// declarations were in scope before it, and where its start tag is.
pub(super) struct OpenElement {
    pub name_start: usize,
    pub namespaces: usize,
    pub at: Position,
}

/// A namespace declaration in scope: prefix (`None` for the default) and URI.
pub(super) struct Namespace {
    pub prefix: Option<Box<str>>,
    pub uri: Box<str>,
}

pub(crate) struct Builder<'s, S> {
    pub sink: &'s mut S,
    file: &'s Path,
    pub phase: Phase,
    /// Nothing has been read yet (the XML declaration may come).
    first: bool,
    doctype_seen: bool,
    pub external_dtd: bool,
    pub entities: Vec<Entity>,
    /// The attributes the internal subset declares, by element name as written.
    pub declared: HashMap<Box<str>, Rc<[AttributeDecl]>>,
    pub names: String,
    pub open: Vec<OpenElement>,
    pub namespaces: Vec<Namespace>,
    /// An element start was read since the current entity expansion began (roxmltree
    /// rejects an end tag in an entity before any start tag in it).
    pub tag_seen: bool,
    text: String,
    text_pending: bool,
    pub loop_detector: LoopDetector,
}

/// What the reader of a token stream offers besides bytes: positions and a peek.
pub(crate) trait Source: BufRead {
    /// The line and column of the next unread byte.
    fn position(&self) -> Position;
    /// The next bytes (zero-padded at the end).
    fn peek10(&mut self) -> io::Result<[u8; 10]>;
    /// The document's encoding if reading stopped at bytes malformed in it.
    fn malformed(&self) -> Option<&'static str>;
}

impl<R: Read> Source for Input<R> {
    fn position(&self) -> Position {
        Input::position(self)
    }
    fn peek10(&mut self) -> io::Result<[u8; 10]> {
        self.peek()
    }
    fn malformed(&self) -> Option<&'static str> {
        Input::malformed(self)
    }
}

/// An entity's replacement text as a token stream; every position in it is the
/// reference's.
pub(crate) struct EntityText<'a> {
    rest: &'a [u8],
    at: Position,
}

impl<'a> EntityText<'a> {
    pub fn reader(value: &'a str, at: Position) -> quick_xml::Reader<EntityText<'a>> {
        let mut reader = quick_xml::Reader::from_reader(EntityText { rest: value.as_bytes(), at });
        super::configure(reader.config_mut());
        reader
    }
}

impl Read for EntityText<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        self.rest.read(out)
    }
}

impl BufRead for EntityText<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        Ok(self.rest)
    }
    fn consume(&mut self, n: usize) {
        self.rest = &self.rest[n..];
    }
}

impl Source for EntityText<'_> {
    fn position(&self) -> Position {
        self.at
    }
    fn peek10(&mut self) -> io::Result<[u8; 10]> {
        let mut head = [0; 10];
        let n = self.rest.len().min(10);
        head[..n].copy_from_slice(&self.rest[..n]);
        Ok(head)
    }
    fn malformed(&self) -> Option<&'static str> {
        None
    }
}

impl<'s, S: Sink> Builder<'s, S> {
    pub fn new(sink: &'s mut S, file: &'s Path) -> Self {
        Builder {
            sink,
            file,
            phase: Phase::Prolog,
            first: true,
            doctype_seen: false,
            external_dtd: false,
            entities: Vec::new(),
            declared: HashMap::new(),
            names: String::new(),
            open: Vec::new(),
            namespaces: Vec::new(),
            tag_seen: false,
            text: String::new(),
            text_pending: false,
            loop_detector: LoopDetector::default(),
        }
    }

    /// The error for a document that is not well-formed at `at`.
    pub fn fail(&self, at: Position, reason: impl Into<String>) -> Error {
        Error::Xml { file: self.file.to_path_buf(), line: at.line, column: at.column, reason: reason.into() }
    }

    /// The error for `fault`, found in `text` which starts at `at`.
    pub fn fault(&self, at: Position, text: &str, fault: Fault) -> Error {
        self.fail(at.within(text, fault.at), fault.reason)
    }

    pub fn append_text(&mut self, text: &str) {
        self.text.push_str(text);
        self.text_pending = true;
    }

    pub fn flush_text(&mut self) -> Result<()> {
        if self.text_pending {
            self.sink.event(Event::Text(&self.text))?;
            self.text.clear();
            self.text_pending = false;
        }
        Ok(())
    }

    /// Reads tokens to the end of `reader`: the document (`in_entity` false) or an
    /// entity's replacement text, which ends early at an end tag closing an element
    /// it did not open (as roxmltree's `parse_content` does).
    pub fn run<B: Source>(&mut self, reader: &mut quick_xml::Reader<B>, in_entity: bool) -> Result<()> {
        let (mut buf, mut raw_text, mut text_at) = (Vec::new(), String::new(), None);
        let saved_tag_seen = self.tag_seen;
        self.tag_seen &= !in_entity;
        let (mut depth, mut end) = (0u32, Position::START);
        loop {
            let at = reader.get_ref().position();
            let head = reader.get_mut().peek10().map_err(|e| self.io_error(e))?;
            buf.clear();
            let event = match reader.read_event_into(&mut buf) {
                Ok(event) => event,
                Err(e) => return Err(self.reader_error(e, at, reader.get_ref())),
            };
            let first = std::mem::replace(&mut self.first, false);
            match &event {
                XmlEvent::Text(text) => {
                    raw_text.push_str(text);
                    text_at.get_or_insert(at);
                    continue;
                }
                XmlEvent::GeneralRef(name) => {
                    raw_text.extend(["&", name, ";"]);
                    text_at.get_or_insert(at);
                    continue;
                }
                _ => {}
            }
            if let Some(text_at) = text_at.take() {
                self.text(&raw_text, text_at)?;
                raw_text.clear();
            }
            match event {
                XmlEvent::Start(tag) => {
                    self.start_tag(&tag, false, at)?;
                    depth += 1;
                }
                XmlEvent::Empty(tag) => self.start_tag(&tag, true, at)?,
                XmlEvent::End(tag) => {
                    if self.phase != Phase::Content && !in_entity {
                        return Err(self.fail(at, "an end tag outside the root element"));
                    }
                    self.end_tag(&tag, at)?;
                    if in_entity && depth == 0 {
                        break;
                    }
                    if !in_entity && depth == 1 {
                        // The end tag of what this stream opened as its root; roxmltree's
                        // content ends here even if an entity left an element open.
                        self.phase = Phase::Epilog;
                    }
                    depth = depth.saturating_sub(1);
                }
                XmlEvent::CData(body) => match self.phase {
                    Phase::Content => self.cdata(&self.latin1(&body), at)?,
                    _ => return Err(self.fail(at, "CDATA outside the root element")),
                },
                XmlEvent::Comment(body) => self.comment(&body, at)?,
                XmlEvent::PI(body) => self.pi(&body, at)?,
                XmlEvent::Decl(body) => self.declaration(&body, at, first)?,
                XmlEvent::DocType(body) => self.doctype(&body, &head, at, in_entity)?,
                XmlEvent::Eof => {
                    end = at;
                    break;
                }
                XmlEvent::Text(_) | XmlEvent::GeneralRef(_) => unreachable!("text tokens are gathered above"),
            }
        }
        if in_entity {
            self.tag_seen = saved_tag_seen;
            return Ok(());
        }
        self.finish(end)
    }

    fn io_error(&self, e: io::Error) -> Error {
        Error::Io { path: self.file.to_path_buf(), source: e }
    }

    fn reader_error<B: Source>(&self, e: quick_xml::Error, at: Position, source: &B) -> Error {
        match e {
            quick_xml::Error::Io(e) => match source.malformed() {
                Some(encoding) => self.fail(source.position(), format!("the document is not valid {encoding}")),
                None => self.io_error(io::Error::new(e.kind(), e.to_string())),
            },
            e => self.fail(at, e.to_string()),
        }
    }

    /// `text` with the Latin-1 entities expanded when the DOCTYPE names an external DTD.
    pub fn latin1<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        if self.external_dtd { dtd::expand_latin1(text) } else { std::borrow::Cow::Borrowed(text) }
    }

    fn text(&mut self, raw: &str, at: Position) -> Result<()> {
        if self.phase == Phase::Content {
            let raw = self.latin1(raw);
            return self.text_token(&raw, at);
        }
        match raw.bytes().position(|b| !is_space(b)) {
            Some(offset) => Err(self.fail(at.within(raw, offset), "text outside the root element")),
            None => Ok(()),
        }
    }

    fn comment(&mut self, body: &str, at: Position) -> Result<()> {
        self.flush_text()?;
        let body = self.latin1(body);
        check_comment(&body).map_err(|f| self.fail(at, f.reason))?;
        self.sink.event(Event::Comment(&normalize_line_ends(&body)))
    }

    fn pi(&mut self, body: &str, at: Position) -> Result<()> {
        self.flush_text()?;
        let body = self.latin1(body);
        let (target, value) = split_pi(&body).map_err(|f| self.fault(at, &body, f))?;
        let value = value.map(normalize_line_ends);
        let value = value.as_deref();
        self.sink.event(Event::Pi { target, value })
    }

    /// `<?xml …?>`: the XML declaration when first and followed by a space (checked as
    /// roxmltree does), an error elsewhere; `<?xml` and another space is a plain PI.
    fn declaration(&mut self, body: &str, at: Position, first: bool) -> Result<()> {
        if !body.starts_with("xml ") {
            return self.pi(body, at);
        }
        if !first {
            return Err(self.fail(at, "an XML declaration is allowed only at the start of the document"));
        }
        let inside = Position { column: at.column + 2, ..at };
        check_declaration(body).map_err(|f| self.fault(inside, body, f))
    }

    /// `<!DOCTYPE …>`: once, before the root element; `head` is its first bytes.
    fn doctype(&mut self, body: &str, head: &[u8], at: Position, in_entity: bool) -> Result<()> {
        if in_entity || self.phase != Phase::Prolog || self.doctype_seen {
            return Err(self.fail(at, "a DOCTYPE is allowed only once, before the root element"));
        }
        if !head.starts_with(b"<!DOCTYPE") || !is_space(head[9]) {
            return Err(self.fail(at, "expected '<!DOCTYPE' and a space"));
        }
        self.doctype_seen = true;
        self.external_dtd = dtd::has_external_id(body);
        let body = self.latin1(body).into_owned();
        let inside = Position { column: at.column + 10, ..at };
        let doctype = dtd::parse_doctype(&body).map_err(|f| self.fault(inside, &body, f))?;
        self.entities = doctype.entities;
        let mut declared: HashMap<Box<str>, Vec<AttributeDecl>> = HashMap::new();
        for decl in doctype.attributes {
            declared.entry(decl.element.clone()).or_default().push(decl);
        }
        self.declared = declared.into_iter().map(|(element, decls)| (element, decls.into())).collect();
        Ok(())
    }

    /// The end of the document, at `end`: the root element must have come and be closed.
    /// An error points at `end` (as expat does) and names the innermost open element.
    fn finish(&mut self, end: Position) -> Result<()> {
        self.flush_text()?;
        let Some(innermost) = self.open.last() else {
            return match self.phase {
                Phase::Prolog => Err(self.fail(end, "the document ends with no root element")),
                Phase::Content => Err(self.fail(end, "the document ends before its root element is closed")),
                Phase::Epilog => Ok(()),
            };
        };
        let name = &self.names[innermost.name_start..];
        let Position { line, column } = innermost.at;
        let still_open = match self.open.len() - 1 {
            0 => " is".to_owned(),
            1 => " and 1 enclosing element are".to_owned(),
            n => format!(" and {n} enclosing elements are"),
        };
        let reason =
            format!("the document ends before `<{name}>` (opened at line {line}, column {column}){still_open} closed");
        Err(self.fail(end, reason))
    }
}

/// The XML declaration's text (`xml version=… encoding=… standalone=…`).
fn check_declaration(body: &str) -> std::result::Result<(), Fault> {
    fn spaces(cursor: &mut Cursor) -> std::result::Result<(), Fault> {
        if cursor.starts_with_space() || cursor.at_end() {
            cursor.skip_spaces();
            return Ok(());
        }
        cursor.unexpected("a whitespace")
    }
    fn attribute(cursor: &mut Cursor) -> std::result::Result<(), Fault> {
        cursor.consume_qname()?;
        cursor.consume_eq()?;
        cursor.consume_attribute_value().map(|_| ())
    }
    let mut cursor = Cursor::new(body);
    cursor.pos = 3;
    spaces(&mut cursor)?;
    if !cursor.starts_with("version") {
        return cursor.unexpected("'version'");
    }
    attribute(&mut cursor)?;
    spaces(&mut cursor)?;
    if cursor.starts_with("encoding") {
        attribute(&mut cursor)?;
        spaces(&mut cursor)?;
    }
    if cursor.starts_with("standalone") {
        attribute(&mut cursor)?;
    }
    cursor.skip_spaces();
    if !cursor.at_end() {
        return cursor.unexpected("'?>'");
    }
    Ok(())
}
