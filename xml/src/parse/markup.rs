//! Start and end tags read as roxmltree 0.21 reads them: names and attributes checked
//! with its grammar, namespace declarations checked (and kept out of the attributes,
//! as roxmltree keeps them out of `attributes()`), prefixes resolved only to reject
//! undeclared ones and to find duplicate attributes by expanded name.
//!
//! Invariants: names are emitted as written (`dc:title`); `Open` is followed by its
//! attributes in document order; an empty-element tag emits `Open … Close`; each open
//! element's namespace declarations are dropped when it closes.
//!
//! Read next: `text.rs` (attribute value normalisation).

use std::borrow::Cow;
use std::ops::Range;

use super::Sink;
use super::attlist::{AttributeDecl, collapse};
use super::input::Position;
use super::syntax::Cursor;
use super::tree::{Builder, Namespace, OpenElement, Phase};
use super::{Event, Fault};
use crate::error::Result;

const XML_URI: &str = "http://www.w3.org/XML/1998/namespace";
const XMLNS_URI: &str = "http://www.w3.org/2000/xmlns/";

/// One attribute of the tag being read: its name and normalised value as ranges of
/// the tag's text, where its local name starts in the name, and its position.
struct Attribute {
    name: Range<usize>,
    local_start: usize,
    value: Range<usize>,
    at: Position,
}

/// A start tag's attributes as read: their names and values in `text`, and the
/// names written in the tag (namespace declarations too), kept only when the element
/// has declared attributes.
#[derive(Default)]
struct Tag {
    text: String,
    attributes: Vec<Attribute>,
    written: Vec<Box<str>>,
}

/// The URI `prefix` is bound to: the element's own declarations (`namespaces[own..]`)
/// first, then the ancestors', innermost first.
fn lookup<'n>(namespaces: &'n [Namespace], prefix: Option<&str>, own: usize) -> Option<&'n str> {
    let declared = namespaces[own..].iter().chain(namespaces[..own].iter().rev());
    declared.filter(|ns| ns.prefix.as_deref() == prefix).map(|ns| &*ns.uri).next()
}

impl<S: Sink> Builder<'_, S> {
    /// The URI a prefix is bound to: this element's declarations (from `own`) first,
    /// then the ancestors', innermost first.
    fn lookup(&self, prefix: Option<&str>, own: usize) -> Option<&str> {
        lookup(&self.namespaces, prefix, own)
    }

    /// `<…>` or `<…/>`; `raw` is the text between `<` and `>` (or `/>`), at `at`.
    pub(super) fn start_tag(&mut self, raw: &str, empty: bool, at: Position) -> Result<()> {
        self.flush_text()?;
        if self.phase == Phase::Epilog {
            return Err(self.fail(at, "a second root element"));
        }
        let raw = self.latin1(raw);
        let inside = Position { column: at.column + 1, ..at };
        let mut cursor = Cursor::new(&raw);
        let (prefix, _) = cursor.consume_qname().map_err(|f| self.fault(inside, &raw, f))?;
        if prefix == "xmlns" {
            return Err(self.fail(inside, "an element name has the prefix 'xmlns'"));
        }
        let name = &raw[..cursor.pos];
        self.tag_seen = true;
        let own = self.namespaces.len();
        let declared = if self.declared.is_empty() { None } else { self.declared.get(name).cloned() };
        let declared = declared.as_deref().unwrap_or_default();
        let mut tag = Tag::default();
        self.read_attributes(&mut cursor, inside, own, declared, &mut tag)?;
        self.supply_defaults(declared, inside, own, &mut tag)?;
        let Tag { text, attributes, .. } = tag;
        self.resolve_attributes(&text, &attributes, own)?;
        let uri = match prefix {
            "" => lookup(&self.namespaces, None, own).unwrap_or_default(),
            prefix => match lookup(&self.namespaces, Some(prefix), own) {
                Some(uri) => uri,
                None => return Err(self.fail(inside, format!("unknown namespace prefix '{prefix}'"))),
            },
        };
        self.sink.event(Event::Open { name, uri })?;
        for ns in &self.namespaces[own..] {
            self.sink.event(Event::Namespace { prefix: ns.prefix.as_deref(), uri: &ns.uri })?;
        }
        for attribute in &attributes {
            let (name, value) = (&text[attribute.name.clone()], &text[attribute.value.clone()]);
            let uri = match split_qname(name, attribute.local_start).0 {
                "" => "",
                "xml" => XML_URI,
                // Checked by `resolve_attributes`.
                prefix => lookup(&self.namespaces, Some(prefix), own).unwrap_or_default(),
            };
            let id = name == "xml:id" || declared.iter().any(|decl| decl.id && *decl.name == *name);
            self.sink.event(Event::Attribute { name, uri, value, id })?;
        }
        self.phase = Phase::Content;
        if empty {
            self.namespaces.truncate(own);
            self.close_phase();
            return self.sink.event(Event::Close);
        }
        self.open.push(OpenElement { name_start: self.names.len(), namespaces: own, at });
        self.names.push_str(name);
        Ok(())
    }

    /// The attributes after the name, into `tag`; namespace declarations go to
    /// `namespaces`. Values of attributes `declared` with a type other than `CDATA` are
    /// collapsed.
    fn read_attributes(
        &mut self,
        cursor: &mut Cursor,
        inside: Position,
        own: usize,
        declared: &[AttributeDecl],
        tag: &mut Tag,
    ) -> Result<()> {
        let (raw, element) = (cursor.text, &cursor.text[..cursor.pos]);
        let fault = |builder: &Self, f: Fault| builder.fault(inside, raw, f);
        loop {
            let has_space = cursor.starts_with_space();
            cursor.skip_spaces();
            if cursor.at_end() {
                return Ok(());
            }
            if cursor.peek() == Some(b'<') {
                let reason = format!("`<` inside the start tag of `<{element}>`: is its `>` missing?");
                return Err(self.fail(inside.within(raw, cursor.pos), reason));
            }
            if !has_space {
                return Err(fault(self, cursor.unexpected::<()>("a whitespace").unwrap_err()));
            }
            let start = cursor.pos;
            let (prefix, local) = cursor.consume_qname().map_err(|f| fault(self, f))?;
            let name = &raw[start..cursor.pos];
            let value = cursor.consume_eq().and_then(|()| cursor.consume_attribute_value());
            let (value, value_at) = value.map_err(|f| fault(self, f))?;
            let at = inside.within(raw, start);
            let value = self.attribute_value(value, inside.within(raw, value_at))?;
            let value = match declared.iter().find(|decl| *decl.name == *name) {
                Some(decl) if collapses(decl, prefix, local) => Cow::Owned(collapse(&value).into_owned()),
                _ => value,
            };
            if !declared.is_empty() {
                tag.written.push(name.into());
            }
            self.add_attribute((name, prefix, local), &value, at, own, tag)?;
        }
    }

    /// One attribute of a tag: a namespace declaration (`xmlns:p`, `xmlns`) or an
    /// attribute `name` = `(qualified, prefix, local)`.
    fn add_attribute(
        &mut self,
        (name, prefix, local): (&str, &str, &str),
        value: &str,
        at: Position,
        own: usize,
        tag: &mut Tag,
    ) -> Result<()> {
        if prefix == "xmlns" {
            return self.declare(Some(local), value, at, own);
        }
        if local == "xmlns" {
            return self.declare(None, value, at, own);
        }
        let text = &mut tag.text;
        let name_range = text.len()..text.len() + name.len();
        text.push_str(name);
        let value_range = text.len()..text.len() + value.len();
        text.push_str(value);
        let local_start = name.len() - local.len();
        tag.attributes.push(Attribute { name: name_range, local_start, value: value_range, at });
        Ok(())
    }

    /// The attributes `declared` with a default that the tag does not specify, after the
    /// ones it does, in declaration order (normalised as a tag's values are, collapsed
    /// unless `CDATA`); a fault in one is reported at the tag.
    fn supply_defaults(&mut self, declared: &[AttributeDecl], at: Position, own: usize, tag: &mut Tag) -> Result<()> {
        for decl in declared {
            let Some(literal) = &decl.default else { continue };
            let name = &*decl.name;
            if tag.written.iter().any(|written| **written == *name) {
                continue;
            }
            let mut cursor = Cursor::new(name);
            let (prefix, local) = match cursor.consume_qname() {
                Ok(split) if cursor.at_end() => split,
                _ => return Err(self.fail(at, format!("the declared attribute '{name}' is not a qualified name"))),
            };
            let value = self.attribute_value(literal, at)?;
            let value = if collapses(decl, prefix, local) { collapse(&value).into_owned().into() } else { value };
            self.add_attribute((name, prefix, local), &value, at, own, tag)?;
        }
        Ok(())
    }

    /// `xmlns:prefix="uri"` or `xmlns="uri"` (`prefix` `None`), checked as roxmltree does.
    fn declare(&mut self, prefix: Option<&str>, uri: &str, at: Position, own: usize) -> Result<()> {
        if uri == XMLNS_URI {
            return Err(self.fail(at, "the xmlns namespace URI must not be declared"));
        }
        let is_xml_uri = uri == XML_URI;
        match prefix {
            Some("xml") if !is_xml_uri => return Err(self.fail(at, "the prefix 'xml' must be bound to its own URI")),
            Some(_) | None if is_xml_uri && prefix != Some("xml") => {
                return Err(self.fail(at, "the XML namespace URI must not be bound to another prefix"));
            }
            Some(p) if self.namespaces[own..].iter().any(|ns| ns.prefix.as_deref() == Some(p)) => {
                return Err(self.fail(at, format!("namespace prefix '{p}' declared twice")));
            }
            _ => {}
        }
        if !is_xml_uri {
            self.namespaces.push(Namespace { prefix: prefix.map(Into::into), uri: uri.into() });
        }
        Ok(())
    }

    /// Rejects prefixes not in scope and two attributes with one expanded name.
    fn resolve_attributes(&self, text: &str, attributes: &[Attribute], own: usize) -> Result<()> {
        let mut expanded: Vec<(Option<&str>, &str)> = Vec::with_capacity(attributes.len());
        for attribute in attributes {
            let name = &text[attribute.name.clone()];
            let (prefix, local) = split_qname(name, attribute.local_start);
            let uri = match prefix {
                "xml" => Some(XML_URI),
                "" => None,
                prefix => match self.lookup(Some(prefix), own) {
                    Some(uri) => Some(uri),
                    None => return Err(self.fail(attribute.at, format!("unknown namespace prefix '{prefix}'"))),
                },
            };
            if expanded.contains(&(uri, local)) {
                return Err(self.fail(attribute.at, format!("attribute '{local}' appears twice")));
            }
            expanded.push((uri, local));
        }
        Ok(())
    }

    /// `</…>`; `raw` is the text between `</` and `>`, at `at`.
    pub(super) fn end_tag(&mut self, raw: &str, at: Position) -> Result<()> {
        self.flush_text()?;
        let raw = self.latin1(raw);
        let inside = Position { column: at.column + 2, ..at };
        let mut cursor = Cursor::new(&raw);
        cursor.consume_qname().map_err(|f| self.fault(inside, &raw, f))?;
        let name = &raw[..cursor.pos];
        cursor.skip_spaces();
        if !cursor.at_end() {
            let f = cursor.unexpected::<()>("'>'").unwrap_err();
            return Err(self.fault(inside, &raw, f));
        }
        if !self.tag_seen {
            return Err(self.fail(at, "an end tag in an entity closes an element the entity did not open"));
        }
        let Some(open) = self.open.last() else {
            return Err(self.fail(at, format!("end tag '</{name}>' with no open element")));
        };
        let expected = &self.names[open.name_start..];
        // roxmltree compares prefix and local name: `<:a>` ends with `</a>`.
        if split_written(expected) != split_written(name) {
            return Err(self.fail(at, format!("expected '</{expected}>', found '</{name}>'")));
        }
        let open = self.open.pop().expect("an open element was just read");
        self.names.truncate(open.name_start);
        self.namespaces.truncate(open.namespaces);
        self.close_phase();
        self.sink.event(Event::Close)
    }

    /// After an element closes: the epilog once no element is open.
    fn close_phase(&mut self) {
        if self.open.is_empty() {
            self.phase = Phase::Epilog;
        }
    }
}

/// Whether values of `decl` (an attribute `prefix:local`) are collapsed: declared with
/// a type other than `CDATA`, and not a namespace declaration.
fn collapses(decl: &AttributeDecl, prefix: &str, local: &str) -> bool {
    !decl.cdata && prefix != "xmlns" && local != "xmlns"
}

/// `(prefix, local)` of a qualified name whose local part starts at `local_start`.
fn split_qname(name: &str, local_start: usize) -> (&str, &str) {
    (&name[..local_start.saturating_sub(1)], &name[local_start..])
}

/// `(prefix, local)` of a qualified name as written.
fn split_written(name: &str) -> (&str, &str) {
    split_qname(name, name.find(':').map_or(0, |colon| colon + 1))
}
