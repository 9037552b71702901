//! The DOCTYPE: its internal subset read as roxmltree reads it (entity declarations
//! kept, comments and PIs checked, `<!ELEMENT`/`<!NOTATION` skipped), with one
//! addition: attribute-list declarations are read (`attlist.rs`; one that does not
//! parse is skipped as roxmltree skips them all). The subset's comments and PIs are no
//! nodes of the document (XPath 1.0 and the Infoset have none for the DTD; lxml and
//! BaseX agree): roxmltree makes them children of the root, so the reference loader
//! blanks them first ([`Doctype::markup`]); and
//! the one rule for documents that name an external DTD, which we never fetch: they get
//! the ISO Latin-1 character entities (`&eacute;` …) such DTDs declare, expanded before
//! parsing anywhere in the text ([`expand_latin1`]), as the reference loader does.
//!
//! Invariants: the first declaration of an entity name wins; parameter entities are
//! kept under their name too (roxmltree does); an entity declared with an external ID
//! has no value and so is unknown when referenced.
//!
//! Read next: `text.rs`, which expands the entities.

use std::borrow::Cow;
use std::ops::Range;
use std::rc::Rc;

use quick_xml::events::Event as XmlEvent;

use super::attlist::{self, AttributeDecl};
use super::syntax::{Checked, Cursor, check_chars, fault};

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

/// `text` with every `&name;` of a Latin-1 entity replaced by its character.
pub fn expand_latin1(text: &str) -> Cow<'_, str> {
    if !text.contains('&') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at + 1..];
        let name = rest.find(';').filter(|&end| end < 8).map(|end| &rest[..end]);
        match name.and_then(|name| LATIN1_ENTITIES.iter().position(|e| *e == name)) {
            Some(index) => {
                out.push(char::from(160 + index as u8));
                rest = &rest[LATIN1_ENTITIES[index].len() + 1..];
            }
            None => out.push('&'),
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// Whether a DOCTYPE (its text after `<!DOCTYPE` and the spaces) names an external DTD.
pub fn has_external_id(doctype: &str) -> bool {
    let mut cursor = Cursor::new(doctype);
    if cursor.consume_name().is_err() {
        return false;
    }
    cursor.skip_spaces();
    cursor.starts_with("SYSTEM") || cursor.starts_with("PUBLIC")
}

/// Whether the document's DOCTYPE (before its root element) names an external DTD.
pub fn external_dtd(text: &str) -> bool {
    let mut reader = quick_xml::Reader::from_str(text);
    loop {
        match reader.read_event() {
            Ok(XmlEvent::DocType(doctype)) => return has_external_id(&doctype),
            Ok(XmlEvent::Start(_) | XmlEvent::Empty(_) | XmlEvent::Eof) | Err(_) => return false,
            Ok(_) => {}
        }
    }
}

/// An internal-subset entity.
pub(crate) struct Entity {
    pub name: Box<str>,
    pub value: Rc<str>,
}

/// What a DOCTYPE declares.
#[derive(Default)]
pub(crate) struct Doctype {
    pub entities: Vec<Entity>,
    /// Byte ranges of the comments and PIs of the internal subset, in the DOCTYPE's
    /// text (no nodes; see the module docs).
    pub markup: Vec<Range<usize>>,
    /// The attributes its `<!ATTLIST …>` declare (the first declaration of each).
    pub attributes: Vec<AttributeDecl>,
    /// Byte ranges of the `<!ATTLIST …>` declarations read, in the DOCTYPE's text.
    pub attribute_lists: Vec<Range<usize>>,
    /// Byte ranges of the general entities' values (between their quotes), likewise.
    pub entity_values: Vec<Range<usize>>,
}

/// Reads a DOCTYPE's text (after `<!DOCTYPE` and the spaces, before the final `>`).
pub(crate) fn parse_doctype(text: &str) -> Checked<Doctype> {
    let mut cursor = Cursor::new(text);
    let mut doctype = Doctype::default();
    cursor.consume_name()?;
    cursor.skip_spaces();
    skip_external_id(&mut cursor)?;
    cursor.skip_spaces();
    if cursor.at_end() {
        return Ok(doctype);
    }
    cursor.consume_byte(b'[')?;
    loop {
        cursor.skip_spaces();
        if cursor.starts_with("<!ENTITY") {
            entity_declaration(&mut cursor, &mut doctype)?;
        } else if cursor.starts_with("<!--") {
            let start = cursor.pos;
            let body = delimited(&mut cursor, "<!--", "-->")?;
            check_comment(body).map_err(|f| super::syntax::Fault { at: cursor.pos, ..f })?;
            doctype.markup.push(start..cursor.pos);
        } else if cursor.starts_with("<?") {
            let start = cursor.pos;
            let body = delimited(&mut cursor, "<?", "?>")?;
            split_pi(body).map_err(|f| super::syntax::Fault { at: start + 2 + f.at, ..f })?;
            doctype.markup.push(start..cursor.pos);
        } else if cursor.starts_with("]") {
            cursor.pos += 1;
            cursor.skip_spaces();
            return if cursor.at_end() { Ok(doctype) } else { cursor.unexpected("'>'") };
        } else if cursor.starts_with("<!ATTLIST") {
            let start = cursor.pos;
            if attlist::declaration(&mut cursor, &mut doctype.attributes).is_ok() {
                doctype.attribute_lists.push(start..cursor.pos);
            } else {
                cursor.pos = start;
                skip_declaration(&mut cursor)?;
            }
        } else if ["<!ELEMENT", "<!NOTATION"].iter().any(|d| cursor.starts_with(d)) {
            skip_declaration(&mut cursor)?;
        } else {
            return fault(cursor.pos, "unknown token in the DTD");
        }
    }
}

/// Skips a declaration up to its first `>`, as roxmltree does.
fn skip_declaration(cursor: &mut Cursor) -> Checked<()> {
    match cursor.rest().find('>') {
        Some(end) => {
            cursor.pos += end + 1;
            Ok(())
        }
        None => fault(cursor.pos, "a declaration is not closed"),
    }
}

/// The text between `open` and the first `close` after it.
fn delimited<'a>(cursor: &mut Cursor<'a>, open: &str, close: &str) -> Checked<&'a str> {
    cursor.pos += open.len();
    let Some(length) = cursor.rest().find(close) else {
        return fault(cursor.pos, format!("'{close}' is missing"));
    };
    let body = &cursor.rest()[..length];
    cursor.pos += length + close.len();
    Ok(body)
}

fn skip_external_id(cursor: &mut Cursor) -> Checked<bool> {
    let public = cursor.starts_with("PUBLIC");
    if !public && !cursor.starts_with("SYSTEM") {
        return Ok(false);
    }
    cursor.pos += 6;
    for _ in 0..1 + usize::from(public) {
        cursor.consume_spaces()?;
        let quote = cursor.consume_quote()?;
        match cursor.rest().bytes().position(|b| b == quote) {
            Some(length) => cursor.pos += length + 1,
            None => return fault(cursor.text.len(), "a literal is not closed"),
        }
    }
    Ok(true)
}

fn entity_declaration(cursor: &mut Cursor, doctype: &mut Doctype) -> Checked<()> {
    cursor.pos += "<!ENTITY".len();
    cursor.consume_spaces()?;
    let general = cursor.peek() != Some(b'%');
    if !general {
        cursor.pos += 1;
        cursor.consume_spaces()?;
    }
    let name = cursor.consume_name()?;
    cursor.consume_spaces()?;
    match cursor.peek() {
        Some(b'"' | b'\'') => {
            let quote = cursor.consume_quote()?;
            let Some(length) = cursor.rest().bytes().position(|b| b == quote) else {
                return fault(cursor.text.len(), "an entity value is not closed");
            };
            let value = &cursor.rest()[..length];
            if general {
                doctype.entity_values.push(cursor.pos..cursor.pos + length);
            }
            cursor.pos += length + 1;
            if !doctype.entities.iter().any(|e| *e.name == *name) {
                doctype.entities.push(Entity { name: name.into(), value: value.into() });
            }
        }
        Some(b'S' | b'P') => {
            if !skip_external_id(cursor)? {
                return fault(cursor.pos, "invalid ExternalID");
            }
            cursor.skip_spaces();
            if general && cursor.starts_with("NDATA") {
                cursor.pos += 5;
                cursor.consume_spaces()?;
                cursor.consume_name()?;
            }
        }
        _ => return cursor.unexpected("a quote, SYSTEM or PUBLIC"),
    }
    cursor.skip_spaces();
    cursor.consume_byte(b'>')
}

/// A comment's text is XML characters, without `--` and not ending in `-`.
pub(crate) fn check_comment(body: &str) -> Checked<()> {
    check_chars(body)?;
    if body.contains("--") || body.ends_with('-') {
        return fault(0, "a comment contains '--' or ends with '-'");
    }
    Ok(())
}

/// A PI's target and value (`None` when empty) from the text between `<?` and `?>`.
pub(crate) fn split_pi(body: &str) -> Checked<(&str, Option<&str>)> {
    if body.starts_with("xml ") {
        return fault(0, "an XML declaration is allowed only at the start of the document");
    }
    let mut cursor = Cursor::new(body);
    let target = cursor.consume_name()?;
    cursor.skip_spaces();
    let value = cursor.rest();
    check_chars(value).map_err(|f| super::syntax::Fault { at: cursor.pos + f.at, ..f })?;
    Ok((target, Some(value).filter(|v| !v.is_empty())))
}
