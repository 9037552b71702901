//! Full XPath 1.0 over the store against the reference evaluator: a seeded mix that uses
//! every axis, every node test, positional predicates (`[k]`, `[last()]`,
//! `position()`), filter expressions, arithmetic, comparisons between node-sets and
//! every function of the core library, over the hand-made edge-case documents, random
//! documents and the XMark sample. The answers compared: for node-sets the count and a
//! hash of every node's local name and string value in document order; for numbers,
//! strings and booleans their XPath string form.
//!
//! `QUIRE_SEED` replays a run (each test prints its seed); a failure names the query.
//!
//! Read next: `random_tests.rs` (the structural subset's walk), `general.rs`.

use super::paths::local_name;
use super::random_tests::{COMMENTS, MIXED, NAMESPACES, NUMBERS, RECURSIVE, TEXTS, random_document, seed};
use super::tests::load_docs;
use crate::reference::{self, Item};
use crate::store::{Kind, XmlStore};
use crate::xpath::eval::Value;
use crate::xpath::expr::Axis;
use crate::xpath::parse_expr;
use quiredb_engine::PageRead;
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use roxmltree::{Document, NodeType};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// What a query gave, comparable across the two evaluators.
#[derive(Debug, PartialEq)]
enum Answer {
    Nodes { count: usize, hash: u64, first: String },
    Atom(String),
}

fn fnv(hash: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *hash = (*hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
}

fn reference_answer(docs: &[Document<'_>], query: &str) -> Answer {
    let expr = parse_expr(query).unwrap_or_else(|e| panic!("{query}: {e}"));
    match reference::evaluate_expr(&expr, docs) {
        Value::Nodes(items) => {
            let mut hash = 0xcbf2_9ce4_8422_2325u64;
            for item in &items {
                fnv(&mut hash, item_name(item).as_bytes());
                fnv(&mut hash, b"\x01");
                fnv(&mut hash, item.string_value().as_bytes());
                fnv(&mut hash, b"\x02");
            }
            let first = items.first().map(Item::string_value).unwrap_or_default();
            Answer::Nodes { count: items.len(), hash, first }
        }
        other => Answer::Atom(reference::value_string(&other)),
    }
}

fn item_name(item: &Item<'_, '_>) -> String {
    match *item {
        Item::Node { node, .. } if node.node_type() == NodeType::Element => node.tag_name().name().to_string(),
        Item::Attribute { owner, index, .. } => {
            owner.attributes().nth(index).map(|a| a.name().to_string()).unwrap_or_default()
        }
        Item::Node { .. } => String::new(),
    }
}

fn store_answer<T: PageRead>(store: &XmlStore<'_, T>, query: &str) -> Answer {
    let mut prepared = store.prepare(query).unwrap_or_else(|e| panic!("{query}: {e}"));
    match prepared.value().unwrap_or_else(|e| panic!("{query}: {e}")) {
        Value::Nodes(labels) => {
            assert_eq!(prepared.count().expect("count"), labels.len() as u64, "{query}: count() and value() differ");
            assert!(labels.windows(2).all(|w| w[0].pre < w[1].pre), "{query}: not in document order");
            let dict = store.dictionary();
            let mut hash = 0xcbf2_9ce4_8422_2325u64;
            let mut first = String::new();
            for (i, label) in labels.iter().enumerate() {
                let info = dict.paths[label.path as usize];
                let name = match info.kind {
                    Kind::Element | Kind::Attribute => local_name(&dict.names[info.name as usize]),
                    _ => "",
                };
                let mut value = Vec::new();
                prepared.string_value(label.pre, &mut value).expect("string value");
                fnv(&mut hash, name.as_bytes());
                fnv(&mut hash, b"\x01");
                fnv(&mut hash, &value);
                fnv(&mut hash, b"\x02");
                if i == 0 {
                    first = String::from_utf8_lossy(&value).into_owned();
                }
            }
            Answer::Nodes { count: labels.len(), hash, first }
        }
        other => Answer::Atom(prepared.value_string(&other).expect("string")),
    }
}

/// Draws queries from the names and values of one collection.
struct Generator {
    rng: StdRng,
    /// Axes that reach most of the document (following, preceding, descendant…) left
    /// for the query being drawn: one, so that a query stays near linear in the
    /// document on both evaluators.
    wide_axes: u32,
    elements: Vec<String>,
    attributes: Vec<String>,
    literals: Vec<String>,
}

impl Generator {
    fn new(docs: &[Document<'_>], seed: u64) -> Generator {
        let (mut elements, mut attributes, mut literals) = (Vec::new(), Vec::new(), Vec::new());
        for doc in docs {
            for node in doc.descendants() {
                if node.is_element() {
                    elements.push(node.tag_name().name().to_string());
                    for a in node.attributes() {
                        attributes.push(a.name().to_string());
                        literals.push(a.value().to_string());
                    }
                }
                if let Some(t) = node.text().filter(|t| node.is_text() && t.len() < 20) {
                    literals.push(t.to_string());
                }
            }
        }
        for list in [&mut elements, &mut attributes, &mut literals] {
            list.sort();
            list.dedup();
        }
        literals.retain(|l| !l.contains(['"', '\'']));
        literals.extend(["x", "1", "2", ""].map(String::from));
        attributes.push("id".into());
        Generator { rng: StdRng::seed_from_u64(seed), wide_axes: 1, elements, attributes, literals }
    }

    fn pick<'a>(&mut self, list: &'a [String]) -> &'a str {
        list.choose(&mut self.rng).map_or("a", String::as_str)
    }

    fn element(&mut self) -> String {
        let list = self.elements.clone();
        self.pick(&list).to_string()
    }

    fn attribute(&mut self) -> String {
        let list = self.attributes.clone();
        self.pick(&list).to_string()
    }

    fn literal(&mut self) -> String {
        let list = self.literals.clone();
        format!("'{}'", self.pick(&list))
    }

    fn test(&mut self, axis: Axis) -> String {
        if axis == Axis::Attribute {
            return match self.rng.random_range(0..3) {
                0 => "*".into(),
                1 => "node()".into(),
                _ => self.attribute(),
            };
        }
        match self.rng.random_range(0..10) {
            0 => "*".into(),
            1 => "node()".into(),
            2 => "text()".into(),
            3 => "comment()".into(),
            4 => "processing-instruction()".into(),
            _ => self.element(),
        }
    }

    fn step(&mut self, depth: u32) -> String {
        let mut step = match self.rng.random_range(0..8) {
            0 => return "..".into(),
            1 => return ".".into(),
            2 => format!("@{}", self.test(Axis::Attribute)),
            3 | 4 => self.test(Axis::Child),
            _ => {
                let mut axis = *Axis::ALL.choose(&mut self.rng).unwrap_or(&Axis::Child);
                if is_wide(axis) {
                    if self.wide_axes == 0 {
                        axis = Axis::Child;
                    } else {
                        self.wide_axes -= 1;
                    }
                }
                format!("{}::{}", axis.name(), self.test(axis))
            }
        };
        if depth > 0 {
            for _ in 0..self.rng.random_range(0..=2) {
                step.push_str(&format!("[{}]", self.predicate(depth - 1)));
            }
        }
        step
    }

    fn relative(&mut self, depth: u32) -> String {
        let steps: Vec<String> = (0..self.rng.random_range(1..=2)).map(|_| self.step(depth)).collect();
        let separator = if self.rng.random_bool(0.3) { "//" } else { "/" };
        steps.join(separator)
    }

    fn path(&mut self, depth: u32) -> String {
        let start = *["/", "//", "//", "//", "/*/"].choose(&mut self.rng).unwrap_or(&"//");
        let mut path = format!("{start}{}", self.relative(depth));
        if self.rng.random_bool(0.15) {
            let k = self.rng.random_range(1..=3);
            path = format!("({path})[{k}]");
        }
        path
    }

    fn predicate(&mut self, depth: u32) -> String {
        let k = self.rng.random_range(1..=3);
        match self.rng.random_range(0..20) {
            0 | 1 => k.to_string(),
            2 => "last()".into(),
            3 => format!("position() < {k}"),
            4 => "position() = last() - 1".into(),
            5 => format!("position() mod 2 = {}", k % 2),
            6 | 7 => self.relative(depth),
            8 => format!("not({})", self.relative(depth)),
            9 => format!("{} = {}", self.relative(depth), self.literal()),
            10 => format!("count({}) > {}", self.relative(depth), k - 1),
            11 => format!("contains(., {})", self.literal()),
            12 => format!("starts-with(name(), '{}')", self.element().chars().next().unwrap_or('a')),
            13 => format!("string-length(normalize-space()) > {k}"),
            14 => format!("number(.) > {}", self.rng.random_range(-2..20)),
            15 => format!("@{}", self.attribute()),
            16 => format!(". = {}", self.literal()),
            17 => {
                format!("{} and {}", self.predicate(depth.saturating_sub(1)), self.predicate(depth.saturating_sub(1)))
            }
            18 => format!("{} or {}", self.predicate(depth.saturating_sub(1)), self.predicate(depth.saturating_sub(1))),
            _ => format!("local-name() = '{}'", self.element()),
        }
    }

    fn query(&mut self) -> String {
        self.wide_axes = 1;
        let p = self.path(2);
        let q = self.path(1);
        let lit = self.literal();
        match self.rng.random_range(0..30) {
            0 => format!("count({p})"),
            1 => format!("sum({p})"),
            2 => format!("string({p})"),
            3 => format!("name({p})"),
            4 => format!("local-name({p})"),
            5 => format!("boolean({p})"),
            6 => format!("concat(string({p}), '|', count({q}))"),
            7 => format!("{p} = {q}"),
            8 => format!("{p} != {lit}"),
            9 => format!("count({p}) * 2 + 1 - count({q}) div 4"),
            10 => format!("round(sum({p}) div 3) + floor(-1.5) + ceiling(count({q}) div 2)"),
            11 => format!("substring(string({p}), 2, 3)"),
            12 => format!("substring-before(string({p}), ' ')"),
            13 => format!("translate(normalize-space({p}), 'abc ', 'AB_')"),
            14 => format!("string-length(substring-after(string({p}), {lit}))"),
            15 => format!("not({p}) or {p} < {q}"),
            16 => format!("{p} | {q}"),
            17 => format!("number({p}) mod 3"),
            18 => format!("{p}/.."),
            19 => format!("starts-with(string({p}), {lit})"),
            _ => p,
        }
    }
}

/// Axes whose node-sets grow with the document rather than with the context.
fn is_wide(axis: Axis) -> bool {
    matches!(axis, Axis::Following | Axis::Preceding | Axis::Descendant | Axis::DescendantOrSelf)
}

fn check(label: &str, docs: &[Vec<u8>], queries: usize, seed: u64) {
    let loaded = load_docs(docs);
    let doms = loaded.doms();
    let txn = loaded.db.begin_read().expect("read");
    let store = XmlStore::open(&txn, "c").expect("open");
    let mut generator = Generator::new(&doms, seed);
    let (mut failures, mut non_empty) = (Vec::new(), 0);
    for _ in 0..queries {
        let query = generator.query();
        let outcome =
            catch_unwind(AssertUnwindSafe(|| (reference_answer(&doms, &query), store_answer(&store, &query))));
        match outcome {
            Ok((expected, got)) if expected == got => {
                non_empty += usize::from(!matches!(expected, Answer::Nodes { count: 0, .. }));
            }
            Ok((expected, got)) => {
                failures.push(format!("  {query}\n    reference {expected:?}\n    store     {got:?}"))
            }
            Err(_) => failures.push(format!("  {query}\n    panicked")),
        }
    }
    assert!(
        failures.is_empty(),
        "{label}: QUIRE_SEED={seed}: {} of {queries} queries differ from the reference:\n{}",
        failures.len(),
        failures.iter().take(8).cloned().collect::<Vec<_>>().join("\n")
    );
    assert!(non_empty * 4 >= queries, "{label}: only {non_empty} of {queries} queries gave something");
    println!("{label}: {queries} full XPath 1.0 queries as the reference, {non_empty} non-empty");
}

#[test]
fn full_xpath_on_hand_made_documents_answers_as_the_reference_does() {
    let seed = seed("full XPath, hand-made documents");
    let documents = [RECURSIVE, MIXED, NAMESPACES, COMMENTS, NUMBERS];
    for (i, text) in documents.iter().enumerate() {
        check(&format!("hand-made document {i}"), &[text.as_bytes().to_vec()], 400, seed);
    }
    let all: Vec<Vec<u8>> = documents.iter().map(|t| t.as_bytes().to_vec()).collect();
    check("the hand-made documents as one collection", &all, 400, seed);
}

#[test]
fn full_xpath_on_random_documents_answers_as_the_reference_does() {
    let seed = seed("full XPath, random documents");
    let mut rng = StdRng::seed_from_u64(seed);
    for elements in [30, 150, 400] {
        let document = random_document(&mut rng, elements, &TEXTS);
        check(&format!("a random document of {elements} elements"), &[document], 300, seed);
    }
    let collection: Vec<Vec<u8>> = (0..8).map(|_| random_document(&mut rng, 20, &TEXTS)).collect();
    check("eight random documents as one collection", &collection, 300, seed);
}

#[test]
fn positional_and_function_queries_on_the_xmark_sample_answer_as_the_reference_does() {
    let Some(documents) = crate::parse::tests::samples::documents("xmark_f0.1.xml.zst") else { return };
    let bytes: Vec<Vec<u8>> = documents.into_iter().map(|(_, b)| b).collect();
    let loaded = load_docs(&bytes);
    let doms = loaded.doms();
    let txn = loaded.db.begin_read().expect("read");
    let store = XmlStore::open(&txn, "c").expect("open");
    for query in XMARK_QUERIES {
        assert_eq!(store_answer(&store, query), reference_answer(&doms, query), "{query}");
    }
}

/// Positional predicates, functions and the other axes over XMark (also the T5 query
/// set `benches/queries/xmark-xpath1.qset` draws from these shapes).
pub(super) const XMARK_QUERIES: [&str; 24] = [
    "//item[1]/name",
    "//open_auction/bidder[last()]/increase",
    "/site/people/person[position() <= 3]/name",
    "(//person)[last()]/@id",
    "count(//open_auction)",
    "count(//item[not(@featured)])",
    "sum(//open_auction/initial)",
    "//person[not(profile/@income)]/name",
    "//person[profile/@income > 50000][2]/name",
    "//text()[contains(., 'gold')]/..",
    "//keyword[starts-with(., 'a')]",
    "//item/description//keyword/ancestor::item/name",
    "//bidder[1]/following-sibling::bidder[1]/increase",
    "//closed_auction/price/preceding-sibling::*[1]",
    "//category/name[string-length(.) > 20]",
    "name(/site/*[3])",
    "//person[count(watches/watch) > 3]/@id",
    "//open_auction[bidder[2]/increase > bidder[1]/increase]/@id",
    "//item[@id = 'item42']/following::item[1]/name",
    "//item[@id = 'item42']/preceding::item[1]/name",
    "round(sum(//closed_auction/price) div count(//closed_auction))",
    "//annotation/author/parent::annotation/happiness",
    "concat(//person[1]/name, ' / ', local-name(//person[1]/@id))",
    "//mail[position() = last()]/from",
];

#[test]
fn the_committed_cross_check_set_answers_as_the_reference_does() {
    // The queries and document the reference is checked on against lxml and BaseX.
    let doc = include_str!("../../../tests/xpath1/doc.xml");
    let queries = include_str!("../../../tests/xpath1/queries.txt");
    let loaded = load_docs(&[doc.as_bytes().to_vec()]);
    let doms = loaded.doms();
    let txn = loaded.db.begin_read().expect("read");
    let store = XmlStore::open(&txn, "c").expect("open");
    for query in queries.lines().filter(|q| !q.trim().is_empty()) {
        assert_eq!(store_answer(&store, query), reference_answer(&doms, query), "{query}");
    }
}
