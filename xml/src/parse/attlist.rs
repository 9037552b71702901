//! Attribute-list declarations of the internal subset (`<!ATTLIST …>`, XML 1.0 §3.3),
//! which a non-validating processor MUST use (§5.1): an element that does not specify
//! a declared attribute with a default value gets it (§3.3.2), and the value of an
//! attribute declared with a type other than `CDATA` is collapsed: leading and trailing
//! spaces dropped, runs of spaces made one (§3.3.3). Java's SAX parser, which BaseX
//! reads documents with, does both; roxmltree reads no `ATTLIST`, so the reference
//! loader supplies them itself (`collection/defaults.rs`), from the declarations read
//! here, so that the two cannot read them apart.
//!
//! Invariants: the first declaration of an attribute of an element wins (§3.3);
//! elements and attributes are matched by their names as written (a DTD knows no
//! namespaces); defaults follow the attributes the tag specifies, in declaration order;
//! a defaulted `xmlns`/`xmlns:p` declares a namespace; namespace declarations are never
//! collapsed (a documented simplification); a declaration that does not parse is
//! skipped up to its first `>`, as roxmltree skips every one (`dtd.rs`).
//!
//! Read next: `markup.rs`, which applies them to each start tag.

use std::borrow::Cow;
use std::ops::Range;

use quick_xml::events::Event as XmlEvent;

use super::syntax::{Checked, Cursor, fault, is_name_char, is_space};

/// One attribute an `<!ATTLIST …>` declares for an element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttributeDecl {
    /// The element's name as written.
    pub element: Box<str>,
    /// The attribute's name as written.
    pub name: Box<str>,
    /// Declared `CDATA`: its values are not collapsed.
    pub cdata: bool,
    /// Declared `ID`: its value names the element for XPath's `id()`.
    pub id: bool,
    /// The default value's literal as written, between its quotes (`None` for
    /// `#REQUIRED` and `#IMPLIED`).
    pub default: Option<Box<str>>,
    /// The quote around the literal.
    pub quote: u8,
}

/// The keyword types; a longer keyword comes before the keyword it starts with.
const TYPES: [&str; 8] = ["CDATA", "IDREFS", "IDREF", "ID", "ENTITIES", "ENTITY", "NMTOKENS", "NMTOKEN"];

/// Reads one `<!ATTLIST …>` at the cursor; on success the cursor is past its `>` and
/// each attribute not declared for its element before is added to `into`. On a fault
/// nothing is added.
pub(crate) fn declaration(cursor: &mut Cursor, into: &mut Vec<AttributeDecl>) -> Checked<()> {
    cursor.pos += "<!ATTLIST".len();
    cursor.consume_spaces()?;
    let element = cursor.consume_name()?;
    let mut declared = Vec::new();
    loop {
        let spaced = cursor.starts_with_space();
        cursor.skip_spaces();
        if cursor.peek() == Some(b'>') {
            cursor.pos += 1;
            break;
        }
        if !spaced {
            return cursor.unexpected("a whitespace");
        }
        let name = cursor.consume_name()?;
        cursor.consume_spaces()?;
        let kind = attribute_type(cursor)?;
        let (cdata, id) = (kind == "CDATA", kind == "ID");
        cursor.consume_spaces()?;
        let (default, quote) = default_declaration(cursor)?;
        declared.push(AttributeDecl { element: element.into(), name: name.into(), cdata, id, default, quote });
    }
    for decl in declared {
        if !into.iter().any(|known| known.element == decl.element && known.name == decl.name) {
            into.push(decl);
        }
    }
    Ok(())
}

/// `CDATA`, a tokenized type, `NOTATION (…)` or an enumeration `(…)`: the keyword
/// (`""` for the last two).
fn attribute_type(cursor: &mut Cursor) -> Checked<&'static str> {
    if let Some(keyword) = TYPES.iter().find(|t| cursor.starts_with(t)) {
        cursor.pos += keyword.len();
        return Ok(keyword);
    }
    if cursor.starts_with("NOTATION") {
        cursor.pos += "NOTATION".len();
        cursor.consume_spaces()?;
    }
    cursor.consume_byte(b'(')?;
    let Some(length) = cursor.rest().find(')') else {
        return fault(cursor.pos, "an enumeration is not closed");
    };
    let inside = &cursor.rest()[..length];
    if let Some(bad) = inside.char_indices().find(|&(_, c)| !(is_name_char(c) || c == '|' || is_space_char(c))) {
        return fault(cursor.pos + bad.0, "an enumeration holds a character that is not a name's");
    }
    cursor.pos += length + 1;
    Ok("")
}

fn is_space_char(c: char) -> bool {
    c.is_ascii() && is_space(c as u8)
}

/// `#REQUIRED`, `#IMPLIED` or `#FIXED`? and a quoted value: the value's literal and quote.
fn default_declaration(cursor: &mut Cursor) -> Checked<(Option<Box<str>>, u8)> {
    for none in ["#REQUIRED", "#IMPLIED"] {
        if cursor.starts_with(none) {
            cursor.pos += none.len();
            return Ok((None, b'"'));
        }
    }
    if cursor.starts_with("#FIXED") {
        cursor.pos += "#FIXED".len();
        cursor.consume_spaces()?;
    }
    let quote = cursor.peek().unwrap_or(b'"');
    let (literal, _) = cursor.consume_attribute_value()?;
    Ok((Some(literal.into()), quote))
}

/// Whether `text` starts with an `<!ATTLIST …>` declaration that parses (the fuzz
/// harness tells malformed ones, which roxmltree skips, from the rest).
pub fn starts_with_attribute_list(text: &str) -> bool {
    text.starts_with("<!ATTLIST") && declaration(&mut Cursor::new(text), &mut Vec::new()).is_ok()
}

/// A value of an attribute declared with a type other than `CDATA`: without leading and
/// trailing spaces, each run of spaces one space (only U+0020: a tab a character
/// reference brought stays).
pub fn collapse(value: &str) -> Cow<'_, str> {
    let trimmed = value.trim_matches(' ');
    if !trimmed.contains("  ") {
        return Cow::Borrowed(trimmed);
    }
    let mut out = String::with_capacity(trimmed.len());
    for (i, word) in trimmed.split(' ').filter(|word| !word.is_empty()).enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(word);
    }
    Cow::Owned(out)
}

/// What a document's internal subset declares about attributes, for a reader that
/// supplies them itself (the reference loader).
#[derive(Debug, Default)]
pub struct DeclaredAttributes {
    pub attributes: Vec<AttributeDecl>,
    /// Byte ranges in the document of the `<!ATTLIST …>` declarations read.
    pub declarations: Vec<Range<usize>>,
    /// Byte ranges in the document of the general entities' values (between quotes).
    pub entity_values: Vec<Range<usize>>,
    /// Where the DOCTYPE ends (past its `>`): the elements come after it.
    pub doctype_end: usize,
}

/// The attribute-list declarations of `text`'s DOCTYPE; `None` when it has none or
/// its DOCTYPE does not parse.
pub fn declared_attributes(text: &str) -> Option<DeclaredAttributes> {
    let (doctype, body_start, doctype_end) = read_doctype(text)?;
    let shift = |r: &Range<usize>| body_start + r.start..body_start + r.end;
    let declarations = doctype.attribute_lists.iter().map(shift).collect();
    let entity_values = doctype.entity_values.iter().map(shift).collect();
    let attributes = doctype.attributes;
    let declared = DeclaredAttributes { attributes, declarations, entity_values, doctype_end };
    (!declared.attributes.is_empty()).then_some(declared)
}

/// Byte ranges in `text` of the comments and PIs of its internal subset, which are no
/// nodes of the document (`dtd.rs`); empty when its DOCTYPE has none or does not parse.
pub fn internal_subset_markup(text: &str) -> Vec<Range<usize>> {
    let Some((doctype, body_start, _)) = read_doctype(text) else { return Vec::new() };
    doctype.markup.iter().map(|r| body_start + r.start..body_start + r.end).collect()
}

/// `text`'s DOCTYPE read, with where its text (after `<!DOCTYPE` and the spaces) starts
/// and where it ends (past its `>`); `None` when it has none or it does not parse.
fn read_doctype(text: &str) -> Option<(super::dtd::Doctype, usize, usize)> {
    let mut reader = quick_xml::Reader::from_str(text);
    // quick-xml's positions do not count a leading byte order mark.
    let mark = if text.starts_with('\u{FEFF}') { '\u{FEFF}'.len_utf8() } else { 0 };
    loop {
        let start = mark + reader.buffer_position() as usize;
        match reader.read_event() {
            Ok(XmlEvent::DocType(body)) => {
                let doctype_end = mark + reader.buffer_position() as usize;
                let raw = text.get(start..doctype_end)?;
                let after = raw.strip_prefix("<!DOCTYPE")?;
                let body_start = start + 9 + (after.len() - after.trim_start_matches(is_space_char).len());
                if !text.get(body_start..)?.starts_with(&*body) {
                    return None;
                }
                return Some((super::dtd::parse_doctype(&body).ok()?, body_start, doctype_end));
            }
            Ok(XmlEvent::Start(_) | XmlEvent::Empty(_) | XmlEvent::Eof) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Checked<Vec<AttributeDecl>> {
        let mut into = Vec::new();
        declaration(&mut Cursor::new(text), &mut into).map(|()| into)
    }

    fn decl(element: &str, name: &str, cdata: bool, default: Option<&str>, quote: u8) -> AttributeDecl {
        let id = false;
        AttributeDecl { element: element.into(), name: name.into(), cdata, id, default: default.map(Into::into), quote }
    }

    #[test]
    fn every_type_and_default_is_read() {
        let text = "<!ATTLIST p:e a CDATA 'x>y'\n b ID #IMPLIED c IDREFS #REQUIRED d NMTOKENS \" 1  2 \" \
                    e (one|two | three) #FIXED 'two' f NOTATION (n) 'n' g ENTITY #IMPLIED xmlns:q CDATA 'u'>";
        let declared = read(text).unwrap();
        assert_eq!(declared[0], decl("p:e", "a", true, Some("x>y"), b'\''));
        assert_eq!(declared[1], AttributeDecl { id: true, ..decl("p:e", "b", false, None, b'"') });
        assert!(declared.iter().filter(|d| d.id).count() == 1, "only `ID` is an ID, not `IDREFS`");
        assert_eq!(declared[3], decl("p:e", "d", false, Some(" 1  2 "), b'"'));
        assert_eq!(declared[4], decl("p:e", "e", false, Some("two"), b'\''));
        assert_eq!(
            declared.iter().map(|d| &*d.name).collect::<Vec<_>>(),
            ["a", "b", "c", "d", "e", "f", "g", "xmlns:q"]
        );
    }

    #[test]
    fn the_first_declaration_of_an_attribute_wins_and_a_bad_one_adds_nothing() {
        let mut into = Vec::new();
        declaration(&mut Cursor::new("<!ATTLIST e a CDATA 'first'>"), &mut into).unwrap();
        declaration(&mut Cursor::new("<!ATTLIST e a CDATA 'second' b CDATA 'b'>"), &mut into).unwrap();
        assert_eq!(into, [decl("e", "a", true, Some("first"), b'\''), decl("e", "b", true, Some("b"), b'\'')]);
        for bad in [
            "<!ATTLIST e a BOGUS 'x' c CDATA 'c'>",
            "<!ATTLIST e a CDATA>",
            "<!ATTLIST e a CDATA 'x<y'>",
            "<!ATTLIST e a CDATA 'x'b CDATA 'y'>",
            "<!ATTLIST e a (x|'y') 'x'>",
            "<!ATTLIST e a CDATA 'x'",
        ] {
            assert!(read(bad).is_err(), "{bad}");
        }
        assert!(read("<!ATTLIST e>").unwrap().is_empty());
    }

    #[test]
    fn collapsing_drops_outer_spaces_and_joins_runs_of_them() {
        assert_eq!(collapse("  a   b c  "), "a b c");
        assert_eq!(collapse("a\t b"), "a\t b");
        assert_eq!(collapse("   "), "");
        assert!(matches!(collapse(" ab "), Cow::Borrowed("ab")));
    }

    #[test]
    fn declarations_are_found_in_the_document() {
        let text = "<?xml version='1.0'?><!DOCTYPE  r [<!ENTITY e 'x'>\n<!ATTLIST r a CDATA 'v'>]><r/>";
        let declared = declared_attributes(text).unwrap();
        assert_eq!(&text[declared.declarations[0].clone()], "<!ATTLIST r a CDATA 'v'>");
        assert_eq!(&text[declared.doctype_end..], "<r/>");
        assert!(declared_attributes("<!DOCTYPE r [<!ENTITY e 'x'>]><r/>").is_none());
        assert!(declared_attributes("<r/>").is_none());
        let marked = format!("\u{FEFF}{text}");
        assert_eq!(&marked[declared_attributes(&marked).unwrap().declarations[0].clone()], "<!ATTLIST r a CDATA 'v'>");
    }
}
