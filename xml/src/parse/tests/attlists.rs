//! Attribute-list declarations (XML 1.0 §3.3, §5.1): defaults supplied, values of
//! non-`CDATA` attributes collapsed, each case compared with the reference loader
//! (which supplies them by rewriting roxmltree's input) and with the attributes
//! expected.
use super::{rejected, same};
use crate::parse::outline::Line;

/// The attributes of the `nth` element of `lines`.
fn attributes(lines: &[Line], nth: usize) -> Vec<(String, String)> {
    let mut elements = lines.iter().filter_map(|line| match line {
        Line::Element { attributes, .. } => Some(attributes.clone()),
        _ => None,
    });
    elements.nth(nth).expect("an element")
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected.iter().map(|&(name, value)| (name.into(), value.into())).collect()
}

#[test]
fn defaults_follow_the_specified_attributes_in_declaration_order() {
    let doc = "<!DOCTYPE r [<!ATTLIST r a CDATA 'one' b CDATA #IMPLIED c CDATA #FIXED \"th'ree\">\
               <!ATTLIST e x CDATA 'x>y' a CDATA 'second declaration'>]>\
               <r z='0'><e/><e x='given'/><r a='mine'/></r>";
    let lines = same(doc);
    assert_eq!(attributes(&lines, 0), pairs(&[("z", "0"), ("a", "one"), ("c", "th'ree")]));
    assert_eq!(attributes(&lines, 1), pairs(&[("x", "x>y"), ("a", "second declaration")]));
    assert_eq!(attributes(&lines, 2), pairs(&[("x", "given"), ("a", "second declaration")]));
    assert_eq!(attributes(&lines, 3), pairs(&[("a", "mine"), ("c", "th'ree")]));
}

#[test]
fn the_first_declaration_of_an_attribute_wins() {
    let doc = "<!DOCTYPE r [<!ATTLIST r a CDATA 'first'><!ATTLIST r a CDATA 'second' b NMTOKEN ' b '>]><r/>";
    assert_eq!(attributes(&same(doc), 0), pairs(&[("a", "first"), ("b", "b")]));
}

#[test]
fn defaults_are_normalised_as_values_and_expand_entities() {
    let doc = "<!DOCTYPE r [<!ENTITY e 'ent'><!ATTLIST r a CDATA 'x\ty&#10;&e;&amp;' b ID '  &e;  &#9;z '>]><r/>";
    assert_eq!(attributes(&same(doc), 0), pairs(&[("a", "x y\nent&"), ("b", "ent \tz")]));
    rejected("<!DOCTYPE r [<!ATTLIST r a CDATA '&nope;'>]><r/>", false);
    rejected("<!DOCTYPE r [<!ENTITY l '&#60;'><!ATTLIST r a CDATA '&l;'>]><r/>", false);
    // A default no element uses is never read.
    same("<!DOCTYPE r [<!ATTLIST s a CDATA '&nope;'>]><r/>");
}

#[test]
fn values_of_types_other_than_cdata_are_collapsed() {
    let doc = "<!DOCTYPE r [<!ENTITY sp ' a  b '><!ATTLIST r i ID #IMPLIED t NMTOKENS #IMPLIED \
               c CDATA #IMPLIED e (x|y) #IMPLIED>]>\
               <r i='  id\n1 ' t=' &sp;  c&#32;&#32;d ' c='  kept  ' e='\tx\t'/>";
    let expected = pairs(&[("i", "id 1"), ("t", "a b c d"), ("c", "  kept  "), ("e", "x")]);
    assert_eq!(attributes(&same(doc), 0), expected);
}

#[test]
fn names_match_as_written_and_defaults_can_declare_namespaces() {
    let doc = "<!DOCTYPE p:r [<!ATTLIST p:r xmlns:p CDATA #FIXED 'urn:p' p:a CDATA 'pa' a CDATA 'a'>\
               <!ATTLIST q:r b CDATA 'b'>]><p:r><p:r/><q:r xmlns:q='urn:p'/></p:r>";
    let lines = same(doc);
    assert_eq!(attributes(&lines, 0), pairs(&[("a", "pa"), ("a", "a")]));
    assert_eq!(attributes(&lines, 2), pairs(&[("b", "b")]));
    // Without its default the prefix is undeclared.
    rejected(&doc.replace("xmlns:p CDATA #FIXED 'urn:p' ", ""), false);
    // A default and a specified attribute with one expanded name.
    rejected("<!DOCTYPE r [<!ATTLIST r p:a CDATA 'x'>]><r xmlns:p='u' xmlns:q='u' q:a='y'/>", false);
    rejected("<!DOCTYPE r [<!ATTLIST r a:b:c CDATA 'x'>]><r/>", false);
}

#[test]
fn a_declaration_that_does_not_parse_is_skipped_as_roxmltree_skips_it() {
    assert_eq!(attributes(&same("<!DOCTYPE r [<!ATTLIST r a BOGUS 'x'>]><r/>"), 0), pairs(&[]));
    same("<!DOCTYPE r [<!ATTLIST r a CDATA 'x' b>]><r/>");
    rejected("<!DOCTYPE r [<!ATTLIST r a BOGUS 'x>y'>]><r/>", true);
}

#[test]
fn elements_in_entities_get_their_defaults_too() {
    let doc = "<!DOCTYPE r [<!ATTLIST b a CDATA \"it's\" t NMTOKENS ' 1  2 '><!ENTITY e \"<b/><b a='own' t=' 3  4'/>\">\
               <!ENTITY f '<b/>'>]><r>&e;&f;</r>";
    let lines = same(doc);
    assert_eq!(attributes(&lines, 1), pairs(&[("a", "it's"), ("t", "1 2")]));
    assert_eq!(attributes(&lines, 2), pairs(&[("a", "own"), ("t", "3 4")]));
    assert_eq!(attributes(&lines, 3), pairs(&[("a", "it's"), ("t", "1 2")]));
    let marks = "<!DOCTYPE r [<!ATTLIST b a CDATA '&#37;&#38;x%\"'><!ENTITY e \"<b/>\">]><r>&e;<b/></r>";
    assert_eq!(attributes(&same(marks), 1), pairs(&[("a", "%&x%\"")]));
    // `<` from a reference is an error in an entity's tags, default or not (as in roxmltree).
    rejected("<!DOCTYPE r [<!ATTLIST b a CDATA '&#60;'><!ENTITY e '<b/>'>]><r>&e;</r>", false);
    // A character reference in an entity's value is text when the entity is read (as in
    // roxmltree), so it spells no tag.
    let spelled = same("<!DOCTYPE r [<!ATTLIST b a CDATA 'x'><!ENTITY e '&#60;b/>'>]><r>&e;</r>");
    assert_eq!(spelled.len(), 2, "{spelled:?}");
}

#[test]
fn documents_without_declarations_are_unchanged() {
    let doc = "<!DOCTYPE r [<!ELEMENT r ANY><!ENTITY e 'x'>]><r a=' 1  2 '>&e;</r>";
    assert_eq!(attributes(&same(doc), 0), pairs(&[("a", " 1  2 ")]));
}

#[test]
fn attributes_are_those_basex_reads() {
    // BaseX 9.7.2 (Java's SAX parser), `for $a in doc(…)//@* return concat(name($a), '=[', string($a), ']')`:
    // id=[x y] a=[it's] t=[1 2] a=[own] t=[3 4] a=[it's] t=[1 2], and each b declares p.
    let doc = "<!DOCTYPE r [<!ENTITY e \"<b/>\"><!ATTLIST b a CDATA \"it's\" t NMTOKENS ' 1  2 ' \
               xmlns:p CDATA 'urn:p'><!ATTLIST r id ID #IMPLIED>]>\n\
               <r id='  x  y '>&e;<b a='own' t=' 3   4 '/><b/></r>";
    let lines = same(doc);
    let all: Vec<_> = (0..4).flat_map(|nth| attributes(&lines, nth)).collect();
    let basex = [("id", "x y"), ("a", "it's"), ("t", "1 2"), ("a", "own"), ("t", "3 4"), ("a", "it's"), ("t", "1 2")];
    assert_eq!(all, pairs(&basex));
}
