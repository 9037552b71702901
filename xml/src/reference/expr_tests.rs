//! Hand-checked answers of the full XPath 1.0 reference evaluator: every axis, positions
//! on forward and reverse axes, filter expressions, operators and the function library.
//! (The committed BaseX answers in `tests/xpath_basex.rs` check it at scale.)

use roxmltree::Document;

use super::{evaluate_expr, value_string};
use crate::xpath::eval::Value;
use crate::xpath::parse_expr;

const DOC: &str = r#"<r><!--c1--><a id="1" k="x"><b>7</b><b> 8 </b><c>hi<d>there</d></c></a><?pi one?><a id="2"><c>no</c></a><b>-1.5</b></r>"#;

/// The string values of a node-set result, or the printed atomic value.
fn run(q: &str) -> Vec<String> {
    let doc = Document::parse(DOC).expect("well-formed");
    let docs = [doc];
    let expr = parse_expr(q).unwrap_or_else(|e| panic!("{q}: {e}"));
    match evaluate_expr(&expr, &docs) {
        Value::Nodes(nodes) => nodes.iter().map(|n| n.string_value()).collect(),
        other => vec![value_string(&other)],
    }
}

fn one(q: &str) -> String {
    let mut out = run(q);
    assert_eq!(out.len(), 1, "{q}: {out:?}");
    out.remove(0)
}

#[test]
fn positions_count_along_the_axis() {
    assert_eq!(run("//b[1]"), ["7", "-1.5"]);
    assert_eq!(run("//b[last()]"), [" 8 ", "-1.5"]);
    assert_eq!(run("(//b)[1]"), ["7"]);
    assert_eq!(run("(//b)[last()]"), ["-1.5"]);
    assert_eq!(run("//b[position() > 1]"), [" 8 "]);
    assert_eq!(run("//d/ancestor::*[1]"), ["hithere"]);
    assert_eq!(run("//d/ancestor::*[last()]"), ["7 8 hithereno-1.5"]);
    assert_eq!(run("(//d/ancestor::*)[1]"), ["7 8 hithereno-1.5"]);
    assert_eq!(run("//a[2]/preceding-sibling::node()[1]"), ["one"]);
    assert_eq!(run("//a[1]/b[2]/preceding-sibling::b"), ["7"]);
    assert_eq!(run("/r/a[@id = 2]/preceding::b[1]"), [" 8 "]);
}

#[test]
fn every_axis_walks_the_right_nodes() {
    assert_eq!(run("//c/.."), ["7 8 hithere", "no"]);
    assert_eq!(run("//d/ancestor-or-self::*").len(), 4);
    assert_eq!(run("//b[1]/following-sibling::*"), [" 8 ", "hithere", "no"].map(String::from)[..2].to_vec());
    assert_eq!(run("//d/following::*"), ["no", "no", "-1.5"]);
    assert_eq!(run("//d/preceding::*"), ["7", " 8 "]);
    assert_eq!(run("//@id/parent::a/@k"), ["x"]);
    assert_eq!(run("//@k/following::text()[1]"), ["7"]);
    assert_eq!(run("//@k/preceding::node()"), ["c1"]);
    assert_eq!(run("//@k/ancestor::*").len(), 2);
    assert_eq!(run("//a/attribute::*"), ["1", "x", "2"]);
    assert_eq!(run("//a/self::a/@id"), ["1", "2"]);
    assert_eq!(run("//comment()"), ["c1"]);
    assert_eq!(run("//processing-instruction('pi')"), ["one"]);
    assert_eq!(run("//processing-instruction('no')").len(), 0);
    assert_eq!(run("/descendant::d"), ["there"]);
    assert_eq!(run("//c/descendant-or-self::node()").len(), 6);
}

#[test]
fn functions_and_operators_give_xpath_values() {
    assert_eq!(one("count(//b)"), "3");
    assert_eq!(one("sum(//b)"), "13.5");
    assert_eq!(one("name(//a)"), "a");
    assert_eq!(one("local-name(//@k)"), "k");
    assert_eq!(one("string(//c)"), "hithere");
    assert_eq!(one("concat('a', 1, true())"), "a1true");
    assert_eq!(one("1 div 0"), "Infinity");
    assert_eq!(one("7 mod -3"), "1");
    assert_eq!(one("-7 mod 3"), "-1");
    assert_eq!(one("0 div 0 = 0 div 0"), "false");
    assert_eq!(one("//b = 8"), "true");
    assert_eq!(one("//b = '8'"), "false");
    assert_eq!(one("//b > //a/@id"), "true");
    assert_eq!(one("//nothing = false()"), "true");
    assert_eq!(one("'2' < '10'"), "true");
    assert_eq!(one("normalize-space(//b[2])"), "8");
    assert_eq!(one("string-length(translate(//d, 'e', ''))"), "3");
    assert_eq!(one("substring-before(//c, 'th')"), "hi");
    assert_eq!(one("round(-1.5) + floor(1.7) + ceiling(1.2)"), "2");
    assert_eq!(one("number('x')"), "NaN");
    assert_eq!(one("boolean(//a[3])"), "false");
    assert_eq!(run("//a[not(@k)]/@id"), ["2"]);
    assert_eq!(run("//text()[contains(., 'er')]"), ["there"]);
    assert_eq!(run("//*[starts-with(name(), 'd')]"), ["there"]);
    assert_eq!(run("//b[. * 2 > 15]"), [" 8 "]);
    assert_eq!(run("//a[count(b) = 2]/@id"), ["1"]);
}
