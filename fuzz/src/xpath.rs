//! Fuzz target `xpath`: the XPath parser of `quiredb-xml` (full XPath 1.0, and the
//! structural subset lowered from it) and the reference evaluators.
//!
//! The input is query text (invalid UTF-8 is replaced, so any bytes are a query).
//! Properties checked — a violation panics, which the driver records as a finding:
//! neither entry point panics; a query that parses prints (`Display`) to a text that
//! parses again and prints the same; the reference evaluator gives both parses the
//! same answer on a small fixed document ([`DOCUMENT`]); and a subset query gives the
//! same nodes through the full XPath 1.0 evaluator.
//!
//! Structure-aware mutation works on tokens of the grammar ([`mutate`]) and
//! [`generate`] draws well-formed queries of the subset from the grammar in
//! `xml/src/xpath/parser.rs`. Read next: `meteo_csv.rs`.

use std::borrow::Cow;
use std::path::Path;

use quiredb_datasets::queryset::{GeneratorOptions, generate_sets};
use quiredb_xml::collection::parse_document;
use quiredb_xml::reference;
use quiredb_xml::xpath;
use quiredb_xml::xpath::bindings::Bindings;
use quiredb_xml::xpath::eval::Value;
use roxmltree::Document;

use crate::rng::Rng;

/// The document queries run on: element, attribute, text and number values of the
/// shapes the evaluator distinguishes, under XMark-like names.
pub const DOCUMENT: &str = r#"<site><regions><africa><item id="item0" featured="yes"><name>duck</name><price>7.5</price><quantity>1</quantity></item></africa><europe><item id="item1"><name>bell</name><price> 12 </price><description><text>old <bold>brass</bold> bell</text></description></item><item id="item2"><price>-1.5</price></item></europe></regions><people><person id="person0"><name>Ann</name><age>NaN</age><watches><watch open_auction="open0"/></watches></person></people><open_auctions><open_auction id="open0"><bidder><increase>3.0</increase></bidder><current>10</current></open_auction></open_auctions><!-- c --><?pi v?></site>"#;

/// Tokens of the subset and of what it rejects, for insertion by the mutators.
pub const DICTIONARY: &[&[u8]] = &[
    b"/",
    b"//",
    b"[",
    b"]",
    b"(",
    b")",
    b"@",
    b"*",
    b"|",
    b".",
    b"..",
    b"::",
    b"$",
    b",",
    b"=",
    b"!=",
    b"<",
    b"<=",
    b">",
    b">=",
    b"+",
    b"-",
    b" and ",
    b" or ",
    b"not(",
    b"text()",
    b"node()",
    b"'x'",
    b"\"y\"",
    b"'a\"b'",
    b"1.5",
    b"-3",
    b".5",
    b"007",
    b"99999999999999999999999",
    b"item",
    b"@id",
    b"name",
    b"price",
    b"child::",
    b"p:q",
    b"p:*",
    b" div ",
    b" mod ",
    b"count(",
    b"last()",
    b"position()",
    b"following::",
    b"ancestor::",
    b"preceding-sibling::",
    b"comment()",
    b"substring(",
    b"concat(",
    b"Q{urn:x}",
    b"Q{}",
    b"x:",
    b"xml:lang",
    b"lang(",
    b"namespace-uri(",
    b"id(",
    b"\xC3\xA9",
    b"\xE2\x80\xA8",
    b"\xF0\x9F\xA6\x86",
    b"\t",
    b"\n",
];

/// Runs one input (see the module docs for what is checked).
pub fn run(input: &[u8]) {
    let text = String::from_utf8_lossy(input);
    run_full(&text);
    let Ok(query) = xpath::parse(&text) else { return };
    let printed = query.to_string();
    let again = match xpath::parse(&printed) {
        Ok(again) => again,
        Err(error) => panic!("query {text:?} prints as {printed:?}, which does not parse: {error}"),
    };
    assert_eq!(again.to_string(), printed, "printing is not stable for query {text:?}");
    DOCUMENTS.with(|documents| {
        let items = reference::evaluate(&query, documents);
        for item in &items {
            std::hint::black_box(item.string_value());
        }
        let reparsed = reference::count(&again, documents);
        assert_eq!(items.len(), reparsed, "query {text:?} and its printed form {printed:?} select different nodes");
    });
}

/// The full XPath 1.0 parser and evaluator: printing round-trips, the printed form
/// answers the same, and a subset query selects the subset evaluator's nodes.
fn run_full(text: &str) {
    let Ok(expr) = xpath::parse_expr(text) else { return };
    let printed = expr.to_string();
    let again = match xpath::parse_expr(&printed) {
        Ok(again) => again,
        Err(error) => panic!("expression {text:?} prints as {printed:?}, which does not parse: {error}"),
    };
    assert_eq!(again.to_string(), printed, "printing is not stable for expression {text:?}");
    DOCUMENTS.with(|documents| {
        // Prefixes resolved (an unbound one is an error, not a query); the resolved
        // tree prints its expanded names as `Q{uri}local`, which parse back the same.
        let (mut expr, mut again) = (expr, again);
        let none = Bindings::new();
        if reference::resolve_namespaces(&mut expr, text, &none, documents).is_err() {
            return;
        }
        reference::resolve_namespaces(&mut again, &printed, &none, documents).expect("resolves as its source does");
        let resolved = expr.to_string();
        match xpath::parse_expr(&resolved) {
            Ok(back) => assert_eq!(back.to_string(), resolved, "{text:?}: the resolved print is not stable"),
            Err(error) => panic!("{text:?} resolves to {resolved:?}, which does not parse: {error}"),
        }
        let answer = |value: &Value<reference::Item<'_, '_>>| match value {
            Value::Nodes(items) => {
                format!("{} {:?}", items.len(), items.iter().map(|i| i.string_value()).collect::<Vec<_>>())
            }
            other => reference::value_string(other),
        };
        let first = answer(&reference::evaluate_expr(&expr, documents));
        assert_eq!(first, answer(&reference::evaluate_expr(&again, documents)), "{text:?} and {printed:?} differ");
        if let Some(query) = xpath::subset::lower(&expr) {
            let subset = reference::evaluate(&query, documents);
            let values: Vec<String> = subset.iter().map(|i| i.string_value()).collect();
            assert_eq!(first, format!("{} {values:?}", subset.len()), "{text:?}: the subset evaluator differs");
        }
    });
}

thread_local! {
    /// [`DOCUMENT`], parsed once per thread.
    static DOCUMENTS: [Document<'static>; 1] =
        [parse_document(DOCUMENT, Path::new("fuzz.xml")).expect("the fixed fuzz document is well-formed")];
}

/// Built-in seed inputs: the subset's constructs, rejected constructs, edge cases,
/// and queries of the QuickXDB-style generator (`datasets/src/queryset`) over
/// [`DOCUMENT`].
pub fn seeds() -> Vec<Vec<u8>> {
    let queries = [
        "/",
        "/site/regions//item",
        "//item[@id = \"item0\"]/name",
        "//item[price > 5 and not(@featured)]/name/text()",
        "//*[./name or .//bold]/@*",
        "//person[age != 'x\"y']//watch/@open_auction | //open_auction[current >= 10]",
        "//item[(name or price) and 3 > price]",
        "//a[b[c = -1.5]]/node()",
        "site//.",
        "//item[1]",
        "/a/ancestor::b",
        "//a[count(b) > 1]",
        "//a/..",
        "//a[$x]",
        "//a[b = c]",
        "//p:a",
        "//a[b div 2]",
        "//a[",
        "a b",
        "",
        "//item[last()]/preceding-sibling::*[1]/@id",
        "count(//item[price > 5]) + sum(//price) div 2",
        "(//name | //text())[position() mod 2 = 1]",
        "concat(name(/*), substring('abc', 2), translate('ab', 'a', 'A'))",
        "//bold/ancestor-or-self::node()[2]/following::*",
        "//comment()/preceding::processing-instruction() | //@*[starts-with(., 'op')]/..",
        "-(1) mod 3 = string-length(normalize-space(' a  b '))",
    ];
    let mut seeds: Vec<Vec<u8>> = queries.iter().map(|query| query.as_bytes().to_vec()).collect();
    seeds.extend(generated_queries().into_iter().map(String::into_bytes));
    seeds
}

/// Queries of the query-set generator over [`DOCUMENT`], fixed seed.
fn generated_queries() -> Vec<String> {
    let document = parse_document(DOCUMENT, Path::new("fuzz.xml")).expect("the fixed fuzz document is well-formed");
    let options = GeneratorOptions { seed: 18, per_set: 10, max_attempts: 2000, avoid_basex_bug: false };
    let sets = generate_sets("fuzz", &[document], &options).expect("the generator runs on the fuzz document");
    sets.into_iter().flat_map(|set| set.queries.into_iter().map(|(_, query)| query)).collect()
}

/// Longest query the structure-aware mutator returns (longer ones are cut).
const MAX_QUERY_BYTES: usize = 4096;

/// One structure-aware mutation of `input`: token-level edits, nesting, or a fresh
/// query from the grammar.
pub fn mutate(rng: &mut Rng, input: &mut Vec<u8>) {
    let original = std::mem::take(input);
    let mut pieces = split_tokens(&original);
    match rng.below(8) {
        0 if !pieces.is_empty() => {
            let at = rng.below(pieces.len());
            pieces.remove(at);
        }
        1 if !pieces.is_empty() => {
            let at = rng.below(pieces.len());
            let copy = pieces[at].clone();
            pieces.insert(at, copy);
        }
        2 if pieces.len() > 1 => {
            let (a, b) = (rng.below(pieces.len()), rng.below(pieces.len()));
            pieces.swap(a, b);
        }
        3 => {
            let at = rng.below(pieces.len() + 1);
            pieces.insert(at, Cow::Borrowed(*rng.pick(DICTIONARY)));
        }
        4 => {
            let depth = rng.small_len(80);
            pieces.push(Cow::Owned(b"[a".repeat(depth)));
            pieces.push(Cow::Owned(b"]".repeat(depth)));
        }
        5 => pieces.push(Cow::Owned(format!("[{}]", predicate(rng, 3)).into_bytes())),
        6 => pieces.push(Cow::Owned(generate(rng).into_bytes())),
        _ => pieces = vec![Cow::Owned(generate(rng).into_bytes())],
    }
    *input = pieces.concat();
    input.truncate(MAX_QUERY_BYTES);
}

/// Cuts text into lexer-like pieces: runs of name characters, runs of digits, and
/// single other bytes (a multi-byte character may be cut: the mutations want that).
fn split_tokens(input: &[u8]) -> Vec<Cow<'_, [u8]>> {
    let class = |byte: u8| match byte {
        b'a'..=b'z' | b'A'..=b'Z' | b'_' | b'-' | 0x80..=0xFF => 1,
        b'0'..=b'9' | b'.' => 2,
        _ => 0,
    };
    let mut pieces = Vec::new();
    let mut start = 0;
    for at in 1..=input.len() {
        let joined = at < input.len() && class(input[at]) != 0 && class(input[at]) == class(input[at - 1]);
        if !joined {
            pieces.push(Cow::Borrowed(&input[start..at]));
            start = at;
        }
    }
    pieces
}

const NAMES: [&str; 10] = ["site", "item", "name", "price", "person", "watch", "text", "and", "a", "\u{e9}t\u{e9}"];
const ATTRIBUTES: [&str; 4] = ["id", "featured", "open_auction", "*"];

/// A random query of the subset (mostly well-formed).
pub fn generate(rng: &mut Rng) -> String {
    let mut query = path(rng, true, 3);
    for _ in 0..rng.below(3) {
        query.push_str(" | ");
        query.push_str(&path(rng, true, 3));
    }
    query
}

fn path(rng: &mut Rng, top_level: bool, depth: usize) -> String {
    let mut text = String::new();
    if top_level {
        text.push_str(rng.pick::<&str>(&["/", "//", ""]));
        if text == "/" && rng.ratio(1, 10) {
            return text;
        }
    } else if rng.ratio(1, 3) {
        text.push_str(rng.pick::<&str>(&["./", ".//"]));
    }
    for index in 0..rng.between(1, 4) {
        if index > 0 {
            text.push_str(rng.pick::<&str>(&["/", "//"]));
        }
        text.push_str(&step(rng, depth));
    }
    text
}

fn step(rng: &mut Rng, depth: usize) -> String {
    let mut text = match rng.below(8) {
        0 => "*".to_string(),
        1 => format!("@{}", *rng.pick(&ATTRIBUTES)),
        2 => rng.pick(&["text()", "node()", "."]).to_string(),
        _ => rng.pick(&NAMES).to_string(),
    };
    if depth > 0 && text != "." {
        for _ in 0..rng.below(3) {
            text.push_str(&format!("[{}]", predicate(rng, depth - 1)));
        }
    }
    text
}

fn predicate(rng: &mut Rng, depth: usize) -> String {
    match rng.below(6) {
        0 if depth > 0 => {
            format!("{} {} {}", predicate(rng, depth - 1), *rng.pick(&["and", "or"]), predicate(rng, depth - 1))
        }
        1 if depth > 0 => format!("not({})", predicate(rng, depth - 1)),
        2 if depth > 0 => format!("({})", predicate(rng, depth - 1)),
        3 => {
            let operator = *rng.pick(&["=", "!=", "<", "<=", ">", ">="]);
            let literal = *rng.pick(&["'duck'", "\"x\"", "7.5", "-1.5", "10", ".5", "''"]);
            if rng.ratio(1, 4) {
                format!("{literal} {operator} {}", path(rng, false, depth))
            } else {
                format!("{} {operator} {literal}", path(rng, false, depth))
            }
        }
        _ => path(rng, false, depth),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seeds and a few thousand generated and mutated queries run clean, and the
    /// generator's queries mostly parse (it follows the grammar).
    #[test]
    fn seeds_generated_and_mutated_queries_run_clean() {
        for seed in seeds() {
            run(&seed);
        }
        let mut rng = Rng::new(5);
        let mut parsed = 0;
        for _ in 0..2000 {
            let query = generate(&mut rng);
            parsed += usize::from(xpath::parse(&query).is_ok());
            run(query.as_bytes());
            let mut mutated = query.into_bytes();
            mutate(&mut rng, &mut mutated);
            run(&mutated);
        }
        assert!(parsed > 1500, "only {parsed} of 2000 generated queries parse");
    }
}
