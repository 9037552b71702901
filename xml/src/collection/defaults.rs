//! The reference loader's attribute defaults (XML 1.0 §5.1; the rules are in
//! `parse/attlist.rs`). roxmltree reads no `<!ATTLIST …>`, so the text it parses is
//! rewritten first by a plain scan of the tags, which shares only the declarations with
//! the streaming parser:
//! - the declarations are blanked (spaces; line ends kept, so later positions stay);
//! - each start tag of a declared element, in the document and in the general
//!   entities' values, gets the defaults it does not specify, before its `>` or `/>`
//!   (in an entity's value with the other quote, and both quotes written as character
//!   references);
//! - values to collapse (declared with a type other than `CDATA`) are collapsed in the
//!   text of an entity's tags, and in the document's tags after roxmltree has parsed the
//!   text once and expanded their references.
//!
//! Not supplied (a documented disagreement, `fuzz/src/xml.rs` `allowed`): values with
//! references, in an entity's tags, of attributes declared with a type other than
//! `CDATA` are not collapsed.
//!
//! Read next: `parse/attlist.rs`.

use std::ops::Range;

use roxmltree::{Document, ParsingOptions};

use crate::parse::{self, AttributeDecl};

/// A start tag found by [`tags`]: where it starts (`<`), its name, its attributes' names
/// and raw values, and where its `>` or `/>` is (`end`) and what follows it (`after`).
struct Tag<'a> {
    start: usize,
    name: &'a str,
    attributes: Vec<(&'a str, Range<usize>)>,
    end: usize,
    after: usize,
}

/// One change of the text: `range` replaced.
type Edit = (Range<usize>, String);

/// `text` with the attribute defaults of its internal subset supplied (see above).
pub(super) fn supply(text: String) -> String {
    if !text.contains("<!ATTLIST") {
        return text;
    }
    let Some(declared) = parse::declared_attributes(&text) else { return text };
    let attributes = &declared.attributes;
    let mut edits: Vec<Edit> = declared.declarations.iter().map(|r| (r.clone(), blank(&text[r.clone()]))).collect();
    for value in &declared.entity_values {
        let quote = text.as_bytes()[value.start - 1];
        for tag in tags(&text, value.clone()) {
            edits.extend(collapsed_in_text(&text, &tag, attributes));
            edits.extend(defaults(&tag, attributes, Some(quote)).map(|inserted| (tag.end..tag.end, inserted)));
        }
    }
    let body = tags(&text, declared.doctype_end..text.len());
    let mut starts: Vec<usize> = body.iter().map(|tag| tag.start).collect();
    let names: Vec<Box<str>> = body.iter().map(|tag| tag.name.into()).collect();
    edits.extend(body.iter().filter_map(|tag| defaults(tag, attributes, None).map(|d| (tag.end..tag.end, d))));
    let text = apply(&text, edits, &mut starts);
    if attributes.iter().all(|decl| decl.cdata) {
        return text;
    }
    let edits = collapsed_by_roxmltree(&text, &starts, &names, attributes);
    apply(&text, edits, &mut [])
}

/// `text` with the comments and PIs of its internal subset blanked (spaces; line ends
/// kept): they are no nodes of the document, but roxmltree makes them children of
/// the root (`parse/dtd.rs`).
pub(super) fn blank_subset_markup(text: String) -> String {
    if !text.contains("<!DOCTYPE") {
        return text;
    }
    let markup = parse::internal_subset_markup(&text);
    if markup.is_empty() {
        return text;
    }
    let edits = markup.into_iter().map(|r| (r.clone(), blank(&text[r]))).collect();
    apply(&text, edits, &mut [])
}

/// `declaration` as spaces, its line ends kept.
fn blank(declaration: &str) -> String {
    declaration.bytes().map(|b| if matches!(b, b'\n' | b'\r') { b as char } else { ' ' }).collect()
}

fn is_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

/// The start tags in `text[range]`, past comments, CDATA sections, PIs, end tags and
/// declarations; the scan stops at the first it cannot read (a malformed document,
/// which roxmltree rejects anyway).
fn tags(text: &str, range: Range<usize>) -> Vec<Tag<'_>> {
    let region = &text[..range.end];
    let (mut out, mut at) = (Vec::new(), range.start);
    while let Some(offset) = region[at..].find('<') {
        let start = at + offset;
        let rest = &region[start..];
        let past = |close: &str| rest.find(close).map(|end| start + end + close.len());
        let after = if rest.starts_with("<!--") {
            past("-->")
        } else if rest.starts_with("<![CDATA[") {
            past("]]>")
        } else if rest.starts_with("<?") {
            past("?>")
        } else if rest.starts_with("</") || rest.starts_with("<!") {
            past(">")
        } else {
            start_tag(region, start).map(|tag| {
                let after = tag.after;
                out.push(tag);
                after
            })
        };
        match after {
            Some(after) => at = after,
            None => break,
        }
    }
    out
}

/// The start tag at `start` (a `<` not starting other markup).
fn start_tag(text: &str, start: usize) -> Option<Tag<'_>> {
    let bytes = text.as_bytes();
    let name_end = |from: usize| text[from..].find(|c: char| c.is_ascii() && (is_space(c as u8) || "/>=".contains(c)));
    let skip_spaces = |mut at: usize| {
        while bytes.get(at).is_some_and(|&b| is_space(b)) {
            at += 1;
        }
        at
    };
    let mut at = start + 1 + name_end(start + 1).filter(|&length| length > 0)?;
    let (name, mut attributes) = (&text[start + 1..at], Vec::new());
    loop {
        at = skip_spaces(at);
        match (bytes.get(at)?, bytes.get(at + 1)) {
            (b'>', _) => return Some(Tag { start, name, attributes, end: at, after: at + 1 }),
            (b'/', Some(b'>')) => return Some(Tag { start, name, attributes, end: at, after: at + 2 }),
            _ => {}
        }
        let length = name_end(at).filter(|&length| length > 0)?;
        let attribute = &text[at..at + length];
        at = skip_spaces(at + length);
        (bytes.get(at) == Some(&b'=')).then_some(())?;
        at = skip_spaces(at + 1);
        let quote = *bytes.get(at).filter(|&&b| b == b'"' || b == b'\'')?;
        let value_length = text[at + 1..].find(quote as char)?;
        attributes.push((attribute, at + 1..at + 1 + value_length));
        at += value_length + 2;
    }
}

/// The declared attributes of `tag`'s element.
fn declared_for<'d>(attributes: &'d [AttributeDecl], element: &str) -> impl Iterator<Item = &'d AttributeDecl> {
    attributes.iter().filter(move |decl| *decl.element == *element)
}

/// Whether values of `decl` are collapsed (`parse/attlist.rs`: not `CDATA`, not a
/// namespace declaration).
fn collapses(decl: &AttributeDecl) -> bool {
    let local = decl.name.rsplit(':').next().unwrap_or_default();
    !decl.cdata && !decl.name.starts_with("xmlns:") && local != "xmlns"
}

/// A value with no reference normalised and collapsed as the parser does; `None` if it
/// has references (their expansion is roxmltree's).
fn collapsed_raw(raw: &str) -> Option<String> {
    if raw.contains('&') {
        return None;
    }
    let spaced: String = raw.chars().map(|c| if c.is_ascii() && is_space(c as u8) { ' ' } else { c }).collect();
    Some(parse::collapse(&spaced).into_owned())
}

/// The text of the defaults `tag` does not specify, or `None`. In an entity's value
/// quoted by `entity_quote`, each literal is quoted by the other quote.
fn defaults(tag: &Tag, attributes: &[AttributeDecl], entity_quote: Option<u8>) -> Option<String> {
    let mut out = String::new();
    for decl in declared_for(attributes, tag.name) {
        let Some(literal) = &decl.default else { continue };
        if tag.attributes.iter().any(|(name, _)| **name == *decl.name) {
            continue;
        }
        let (quote, literal) = match entity_quote {
            None => (decl.quote as char, literal.to_string()),
            Some(outer) => {
                let quote = if outer == b'"' { '\'' } else { '"' };
                let literal = match collapses(decl).then(|| collapsed_raw(literal)).flatten() {
                    Some(collapsed) => collapsed,
                    None => literal.to_string(),
                };
                // roxmltree reads an entity's value as written when it is referenced, so
                // a character reference stands for the quote that would end either.
                let (outer_ref, quote_ref) = if quote == '"' { ("&#39;", "&#34;") } else { ("&#34;", "&#39;") };
                (quote, literal.replace(outer as char, outer_ref).replace(quote, quote_ref))
            }
        };
        out.extend([" ", &decl.name, "=", &quote.to_string(), &literal, &quote.to_string()]);
    }
    (!out.is_empty()).then_some(out)
}

/// Edits collapsing the values `tag` (in an entity's value) specifies for attributes
/// declared with a type other than `CDATA`, where they hold no reference.
fn collapsed_in_text(text: &str, tag: &Tag, attributes: &[AttributeDecl]) -> Vec<Edit> {
    let mut edits = Vec::new();
    for (name, value) in &tag.attributes {
        let declared = declared_for(attributes, tag.name).find(|decl| *decl.name == **name);
        if let Some(collapsed) =
            declared.filter(|decl| collapses(decl)).and_then(|_| collapsed_raw(&text[value.clone()]))
        {
            edits.push((value.clone(), collapsed));
        }
    }
    edits
}

/// Edits collapsing, in the document's own tags (those starting at `starts`, of
/// elements `names`), the values roxmltree read for attributes declared with a type
/// other than `CDATA`.
fn collapsed_by_roxmltree(text: &str, starts: &[usize], names: &[Box<str>], attributes: &[AttributeDecl]) -> Vec<Edit> {
    let options = ParsingOptions { allow_dtd: true, ..ParsingOptions::default() };
    let Ok(document) = Document::parse_with_options(text, options) else { return Vec::new() };
    let mut edits = Vec::new();
    for node in document.descendants().filter(|node| node.is_element()) {
        let Ok(index) = starts.binary_search(&node.range().start) else { continue };
        for attribute in node.attributes() {
            let name = &text[attribute.range_qname()];
            let declared = declared_for(attributes, &names[index]).find(|decl| *decl.name == *name);
            let collapsed = parse::collapse(attribute.value());
            if declared.is_some_and(collapses) && collapsed != attribute.value() {
                edits.push((attribute.range_value(), escape(&collapsed)));
            }
        }
    }
    edits
}

/// `value` written as an attribute value's text.
fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            c => out.push(c),
        }
    }
    out
}

/// `text` with `edits` (which do not overlap) made; `positions` (ascending, none inside
/// an edit) moved to where their bytes are then.
fn apply(text: &str, mut edits: Vec<Edit>, positions: &mut [usize]) -> String {
    edits.sort_by_key(|(range, _)| (range.start, range.end));
    let mut out = String::with_capacity(text.len() + edits.iter().map(|(_, with)| with.len()).sum::<usize>());
    let (mut copied, mut next) = (0, 0);
    let mut move_before = |limit: usize, out_len: usize, copied: usize, next: &mut usize| {
        while *next < positions.len() && positions[*next] < limit {
            positions[*next] = positions[*next] + out_len - copied;
            *next += 1;
        }
    };
    for (range, with) in edits {
        move_before(range.start, out.len(), copied, &mut next);
        out.push_str(&text[copied..range.start]);
        out.push_str(&with);
        copied = range.end;
    }
    move_before(usize::MAX, out.len(), copied, &mut next);
    out.push_str(&text[copied..]);
    out
}
