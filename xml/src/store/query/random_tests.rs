//! Random queries against the reference evaluator. A seeded walk over each collection's
//! path summary draws queries beyond the query-set generator's shapes: child and `//`
//! steps with every node test (`name`, `*`, `@name`, `@*`, `text()`, `node()`, `.`),
//! predicates with `and`, `or`, `not(…)`, nested relative paths and comparisons (all
//! six operators) with string and number literals sampled from the data, and unions.
//! For each query the store must give the reference's count and string values.
//!
//! Collections: small hand-made documents, one edge case each (recursion, mixed
//! content, namespaces, comments and PIs, numbers with whitespace), all of them as one
//! collection, random documents alone and as a collection, and the XMark sample.
//!
//! `QUIRE_SEED` replays a run (each test prints its seed). A failing query is shrunk —
//! union branches, steps and predicates dropped while it still fails — and reported
//! with the seed and both answers.
//!
//! Read next: `tests.rs` (the helpers and the hand-written queries), `plan.rs`.

use super::paths::local_name;
use super::tests::{load_docs, reference_answer, store_answer};
use crate::reference::{self, Item};
use crate::store::{Dictionary, Kind, PathInfo, XmlStore};
use crate::xpath::{self, CompareOp, Literal, LocationPath, NodeTest, Predicate, Query, Separator, Span, Step};
use quiredb_engine::PageRead;
use quiredb_test_support::Rng as TestRng;
use rand::Rng;
use rand::seq::IndexedRandom;
use roxmltree::{Document, Node, NodeType};
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Nesting budget of a top-level step's predicates: a boolean operator and a predicate
/// path's own predicates each spend one level.
const PREDICATE_DEPTH: u32 = 3;
/// Longest data value offered as a literal, in bytes (beyond the value index's 96).
const MAX_VALUE_BYTES: usize = 100;
/// Failing queries shrunk and listed in the panic message (the rest are counted).
const FAILURES_SHRUNK: usize = 5;
/// Distinct values kept per kind and name.
const VALUES_PER_NAME: usize = 64;
/// Most elements of the name a path starts at on a large collection (see [`Start`]).
const MAX_START_NODES: u64 = 1500;
/// Literals when the data offers none.
const FALLBACK_LITERALS: [&str; 6] = ["", "x", "1", " 2 ", "-1.5", "zzz"];
const OPERATORS: [CompareOp; 6] =
    [CompareOp::Eq, CompareOp::Ne, CompareOp::Lt, CompareOp::Le, CompareOp::Gt, CompareOp::Ge];

/// An element nested in itself at several depths, with text at every level.
pub(super) const RECURSIVE: &str = r#"<r><a id="1"><a id="2"><b>1</b><a id="3" k="x"><b> 2 </b><a/></a></a><b>3</b></a><c><a><b>4</b><a k="y">5</a></a><c><c>6</c></c></c></r>"#;

/// Text between elements, whitespace-only text, an entity and a CDATA section.
pub(super) const MIXED: &str = "<doc>\n  intro <p>one <em>two</em> three<em>4<em>5</em></em></p> tail &amp; more\n  <p/>\n  <p><![CDATA[<raw>]]> 6 </p>\n</doc>";

/// Prefixed and default namespaces on elements and attributes.
pub(super) const NAMESPACES: &str = r#"<root xmlns="urn:d" xmlns:x="urn:x" xmlns:y="urn:y"><x:item x:id="1" id="2" price=" 10.5 "><x:name>A</x:name><name>B</name></x:item><item id="3" y:price="-3"><y:name>C</y:name></item><y:item><x:item id="4"/></y:item></root>"#;

/// XHTML with SVG inside (a default namespace changed and undeclared), an attribute
/// in the XLink namespace, `xml:lang` inherited, overridden, emptied and in odd case,
/// and `xml:id`s.
pub(super) const XHTML: &str = r##"<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en-GB"><head><title>T</title></head><body xml:id="b"><p xml:lang="fr">Bonjour <em>monde</em></p><svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10"><circle r="1" xml:id="c1"/><a xlink:href="#c" href="h" xml:id="link"><text xml:lang="DE-ch">Hallo</text></a></svg><p>plain <span xml:lang="">none</span><a href="#top">top</a></p><x:p xmlns:x="urn:x" x:lang="zz" lang="en">x</x:p><q xmlns="">no namespace</q></body></html>"##;

/// The prefix `x` bound to another URI than in [`XHTML`] and [`NAMESPACES`], and an
/// element in no namespace named as XHTML's.
pub(super) const REBOUND: &str = r#"<r xmlns:x="urn:other" xml:lang="nl"><x:p x:lang="nl-BE">anders</x:p><p>geen</p><x:q><p xmlns="urn:x">x again</p></x:q></r>"#;

/// Comments and processing instructions inside and outside the root element.
pub(super) const COMMENTS: &str = "<?xml version=\"1.0\"?>\n<!--before--><?top first?>\n<r><!--c1--><a><?p1 v1?>x<!--c2-->y<?p2?></a><a>z</a><!-- 3 --></r>\n<!--after--><?end 7?>";

/// Numbers with whitespace and strings that are almost numbers.
pub(super) const NUMBERS: &str = "<n><v> 12 </v><v>12.0</v><v>-.5</v><v>3.</v><v>1e3</v><v>+1</v><v/><v>NaN</v><v>\n\t7\r\n</v><v>007</v><v>-0</v><v>1 2</v><v a=' 4 ' b='4.50'>4.5</v><w><v>100</v>99</w></n>";

/// Element names, attribute names and texts of the random documents.
const NAMES: [&str; 5] = ["a", "b", "c", "d", "x:a"];
const ATTRIBUTES: [&str; 3] = ["id", "k", "x:k"];
/// Texts run together when adjacent, so values cross the value index's 96-byte limit;
/// the first [`INDEXED_TEXTS`] are short and not blank, so the value index holds every
/// value of a document made of them alone.
const INDEXED_TEXTS: usize = 7;
pub(super) const TEXTS: [&str; 12] = [
    "1",
    " 2 ",
    "-1.5",
    "x",
    "a b",
    "3.",
    "007",
    "\n",
    "&lt;",
    "10",
    "123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890",
    "a long text of ninety bytes, a long text of ninety bytes, a long text of ninety bytes, ...",
];
/// Elements of the random documents and whether they hold only indexed texts: large
/// ones give a name enough nodes for comparisons through the value index.
const RANDOM_DOCUMENTS: [(usize, bool); 4] = [(40, false), (120, true), (500, false), (1500, true)];

#[test]
fn hand_made_documents_answer_as_the_reference_does() {
    let seed = seed("hand-made documents");
    let documents = [
        ("RECURSIVE", RECURSIVE),
        ("MIXED", MIXED),
        ("NAMESPACES", NAMESPACES),
        ("COMMENTS", COMMENTS),
        ("NUMBERS", NUMBERS),
    ];
    for (name, text) in documents {
        check_collection(name, &[text.as_bytes().to_vec()], 500, seed);
    }
    let all: Vec<Vec<u8>> = documents.iter().map(|(_, t)| t.as_bytes().to_vec()).collect();
    check_collection("the hand-made documents as one collection", &all, 500, seed);
}

#[test]
fn random_documents_answer_as_the_reference_does() {
    let seed = seed("random documents");
    let mut rng = TestRng::new(seed);
    for (elements, indexed) in RANDOM_DOCUMENTS {
        let texts = if indexed { &TEXTS[..INDEXED_TEXTS] } else { &TEXTS[..] };
        let document = random_document(&mut rng, elements, texts);
        let label = format!("a random document of {elements} elements (indexed texts only: {indexed})");
        check_collection(&label, &[document], 300, seed);
    }
    let collection: Vec<Vec<u8>> = (0..12).map(|_| random_document(&mut rng, 15, &TEXTS)).collect();
    check_collection("twelve random documents as one collection", &collection, 600, seed);
}

#[test]
fn the_xmark_sample_answers_as_the_reference_does() {
    let seed = seed("xmark sample");
    let Some(documents) = crate::parse::tests::samples::documents("xmark_f0.1.xml.zst") else { return };
    let bytes: Vec<Vec<u8>> = documents.into_iter().map(|(_, b)| b).collect();
    check_collection_from("xmark_f0.1", &bytes, 50, seed, 3);
}

/// The seed to run with (`quiredb_test_support::random_seed`), printed after the
/// test's name for replay.
pub(super) fn seed(test: &str) -> u64 {
    println!("{test}:");
    quiredb_test_support::random_seed()
}

/// Loads `docs` and asserts that `queries` random queries answer as the reference
/// does, and that enough of them select something for the check to mean much.
fn check_collection(label: &str, docs: &[Vec<u8>], queries: usize, seed: u64) {
    check_collection_from(label, docs, queries, seed, 0);
}

/// [`check_collection`] with top-level paths starting at `//name` for elements at
/// `start_depth` or deeper (0: at the document nodes).
fn check_collection_from(label: &str, docs: &[Vec<u8>], queries: usize, seed: u64, start_depth: u32) {
    let loaded = load_docs(docs);
    let doms = loaded.doms();
    let txn = loaded.db.begin_read().expect("read");
    let store = XmlStore::open(&txn, "c").expect("open");
    let values = Values::collect(&doms);
    let dict = store.dictionary();
    let start = Start::below(dict, start_depth);
    let mut generator = Generator { dict, values: &values, start, rng: TestRng::new(seed) };
    let (mut failures, mut failed, mut non_empty) = (Vec::new(), 0, 0);
    for _ in 0..queries {
        let query = generator.query();
        let text = query.to_string();
        if let Err(e) = xpath::parse(&text) {
            panic!("{label}: QUIRE_SEED={seed}: the generated query {text} does not parse: {e}");
        }
        match disagreement(&store, &doms, &text) {
            Ok(count) => non_empty += usize::from(count > 0),
            Err(_) if failed < FAILURES_SHRUNK => {
                failed += 1;
                failures.push(report(&store, &doms, &shrink(&store, &doms, query)));
            }
            Err(_) => failed += 1,
        }
    }
    assert!(
        failed == 0,
        "{label}: QUIRE_SEED={seed}: {failed} of {queries} random queries differ from the reference; the first, shrunk:\n{}",
        failures.join("\n")
    );
    assert!(non_empty * 5 >= queries, "{label}: only {non_empty} of {queries} queries select something");
    println!("{label}: {queries} random queries as the reference, {non_empty} of them non-empty");
}

/// The reference's count when the store answers `text` as it does, else what differs
/// (answers, or the panic of a failed assertion inside the store's run).
fn disagreement<T: PageRead>(store: &XmlStore<'_, T>, doms: &[Document<'_>], text: &str) -> Result<usize, String> {
    match catch_unwind(AssertUnwindSafe(|| (reference_answer(doms, text), store_answer(store, text)))) {
        Ok((expected, got)) if expected == got => Ok(expected.0),
        Ok((expected, got)) => Err(format!("(count, value hash): reference {expected:?}, store {got:?}")),
        Err(panic) => Err(panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic".into())),
    }
}

/// A failing query with what differs and the first values of both answers.
fn report<T: PageRead>(store: &XmlStore<'_, T>, doms: &[Document<'_>], query: &Query) -> String {
    let text = query.to_string();
    let reason = disagreement(store, doms, &text).err().unwrap_or_else(|| "passes after shrinking".into());
    let expected: Vec<String> = reference::evaluate(query, doms).iter().map(Item::string_value).collect();
    let got = store_values(store, &text);
    format!("  {text}\n    {reason}\n    reference: {}\n    store:     {}", shown(&expected), shown(&got))
}

/// The string values of the store's answer (or its error).
fn store_values<T: PageRead>(store: &XmlStore<'_, T>, text: &str) -> Vec<String> {
    let mut prepared = match store.prepare(text) {
        Ok(prepared) => prepared,
        Err(e) => return vec![format!("error: {e}")],
    };
    let pres: Vec<u64> = match prepared.run() {
        Ok(labels) => labels.iter().map(|l| l.pre).collect(),
        Err(e) => return vec![format!("error: {e}")],
    };
    let mut values = Vec::with_capacity(pres.len());
    for pre in pres {
        let mut value = Vec::new();
        match prepared.string_value(pre, &mut value) {
            Ok(()) => values.push(String::from_utf8_lossy(&value).into_owned()),
            Err(e) => values.push(format!("error: {e}")),
        }
    }
    values
}

/// Up to eight values, each cut to 40 characters, and the count.
fn shown(values: &[String]) -> String {
    let cut: Vec<String> = values.iter().take(8).map(|v| v.chars().take(40).collect()).collect();
    format!("{} values {cut:?}", values.len())
}

/// The smallest query reached by dropping parts of `query` while it still fails.
fn shrink<T: PageRead>(store: &XmlStore<'_, T>, doms: &[Document<'_>], mut query: Query) -> Query {
    'smaller: loop {
        for candidate in smaller_queries(&query) {
            let text = candidate.to_string();
            if xpath::parse(&text).is_ok() && disagreement(store, doms, &text).is_err() {
                query = candidate;
                continue 'smaller;
            }
        }
        return query;
    }
}

/// Every query with one union branch, step or predicate fewer (or one of them smaller).
fn smaller_queries(query: &Query) -> Vec<Query> {
    let mut out = Vec::new();
    for i in 0..query.paths.len() {
        if query.paths.len() > 1 {
            let mut q = query.clone();
            q.paths.remove(i);
            out.push(q);
        }
        for path in smaller_paths(&query.paths[i]) {
            let mut q = query.clone();
            q.paths[i] = path;
            out.push(q);
        }
    }
    out
}

fn smaller_paths(path: &LocationPath) -> Vec<LocationPath> {
    let mut out = Vec::new();
    for i in 0..path.steps.len() {
        let mut p = path.clone();
        p.steps.remove(i);
        if !p.absolute {
            match p.steps.first_mut() {
                None => continue, // a relative path has steps
                Some(first) => first.separator = Separator::Child,
            }
        }
        out.push(p);
    }
    for (i, step) in path.steps.iter().enumerate() {
        for (j, predicate) in step.predicates.iter().enumerate() {
            let mut p = path.clone();
            p.steps[i].predicates.remove(j);
            out.push(p);
            for smaller in smaller_predicates(predicate) {
                let mut p = path.clone();
                p.steps[i].predicates[j] = smaller;
                out.push(p);
            }
        }
    }
    out
}

fn smaller_predicates(predicate: &Predicate) -> Vec<Predicate> {
    match predicate {
        Predicate::And(a, b) | Predicate::Or(a, b) => {
            let both = |a: Predicate, b: Predicate| match predicate {
                Predicate::And(..) => Predicate::And(Box::new(a), Box::new(b)),
                _ => Predicate::Or(Box::new(a), Box::new(b)),
            };
            let mut out = vec![(**a).clone(), (**b).clone()];
            out.extend(smaller_predicates(a).into_iter().map(|s| both(s, (**b).clone())));
            out.extend(smaller_predicates(b).into_iter().map(|s| both((**a).clone(), s)));
            out
        }
        Predicate::Not(a) => {
            let mut out = vec![(**a).clone()];
            out.extend(smaller_predicates(a).into_iter().map(|s| Predicate::Not(Box::new(s))));
            out
        }
        Predicate::Exists(path) => smaller_paths(path).into_iter().map(Predicate::Exists).collect(),
        Predicate::Compare { path, op, literal, span } => {
            let mut out = vec![Predicate::Exists(path.clone())];
            out.extend(smaller_paths(path).into_iter().map(|path| Predicate::Compare {
                path,
                op: *op,
                literal: literal.clone(),
                span: *span,
            }));
            out
        }
    }
}

/// Draws queries by walking the path summary: each step goes to a child or a
/// descendant of the path reached so far and takes a node test that matches it; a few
/// steps leave the summary (a missing name, a test on a leaf) and go on from nowhere.
struct Generator<'a> {
    dict: &'a Dictionary,
    values: &'a Values,
    start: Start,
    rng: TestRng,
}

/// Where top-level paths start.
enum Start {
    /// At the document nodes: `/…`, `//…`, relative paths and `/`.
    Documents,
    /// At `//name` for the elements of one of these summary paths: deep, of names
    /// with few nodes, which keeps the answers on a large collection small enough to
    /// check many queries.
    Below(Vec<u32>),
}

impl Start {
    /// The element paths at `depth` or deeper whose name has at most
    /// [`MAX_START_NODES`] elements (the document nodes when `depth` is 0).
    fn below(dict: &Dictionary, depth: u32) -> Start {
        if depth == 0 {
            return Start::Documents;
        }
        let deep = |&(id, info): &(usize, &PathInfo)| {
            let nodes = dict.counts.get(&(Kind::Element, info.name)).copied().unwrap_or(0);
            info.kind == Kind::Element && dict.depths[id] >= depth && nodes <= MAX_START_NODES
        };
        let starts: Vec<u32> = dict.paths.iter().enumerate().filter(deep).map(|(id, _)| id as u32).collect();
        assert!(!starts.is_empty(), "the collection has elements at depth {depth}");
        Start::Below(starts)
    }
}

impl Generator<'_> {
    fn query(&mut self) -> Query {
        let branches = match self.rng.random_range(0..20) {
            0 => 3,
            1..=4 => 2,
            _ => 1,
        };
        Query { paths: (0..branches).map(|_| self.top_path()).collect(), span: Span::default() }
    }

    /// `/`, an absolute path or a relative one (from the document nodes), or a path
    /// from `//name` (see [`Start`]).
    fn top_path(&mut self) -> LocationPath {
        if let Start::Below(starts) = &self.start {
            let start = *starts.choose(&mut self.rng).expect("starts");
            let name = local_name(&self.dict.names[self.dict.paths[start as usize].name as usize]);
            let test = if usable(name) { NodeTest::Element(name.into()) } else { NodeTest::AnyElement };
            let mut steps = vec![self.step_to(Separator::Descendant, test, Some(start), PREDICATE_DEPTH)];
            let length = self.rng.random_range(0..=3);
            steps.extend(self.steps(Some(start), length, true, PREDICATE_DEPTH).0);
            return LocationPath { absolute: true, steps, span: Span::default() };
        }
        if self.rng.random_ratio(1, 40) {
            return LocationPath { absolute: true, steps: Vec::new(), span: Span::default() };
        }
        let absolute = !self.rng.random_ratio(1, 8);
        let length = self.rng.random_range(1..=4);
        let (steps, _) = self.steps(Some(0), length, absolute, PREDICATE_DEPTH);
        LocationPath { absolute, steps, span: Span::default() }
    }

    /// A relative path from `at` for a predicate, sometimes starting with `.`; the
    /// path and the summary path it reaches.
    fn relative(&mut self, at: Option<u32>, depth: u32) -> (LocationPath, Option<u32>) {
        let dot = self.rng.random_ratio(1, 4);
        let mut steps = Vec::new();
        if dot {
            steps.push(bare_step(Separator::Child, NodeTest::SelfNode));
        }
        let length = self.rng.random_range(usize::from(!dot)..=2 + usize::from(!dot));
        let (more, end) = self.steps(at, length, dot, depth);
        steps.extend(more);
        (LocationPath { absolute: false, steps, span: Span::default() }, end)
    }

    /// `length` steps from summary path `at` (`None`: off the summary), the first one
    /// `//` only when `first_descends` allows; the steps and the path reached.
    fn steps(
        &mut self,
        mut at: Option<u32>,
        length: usize,
        first_descends: bool,
        depth: u32,
    ) -> (Vec<Step>, Option<u32>) {
        let mut steps = Vec::with_capacity(length);
        for i in 0..length {
            let (step, next) = self.step(at, i > 0 || first_descends, i + 1 == length, depth);
            steps.push(step);
            at = next;
        }
        (steps, at)
    }

    /// One step from `at`; unless it is the `last` of its path it prefers elements, so
    /// that the next step has somewhere to go.
    fn step(&mut self, at: Option<u32>, may_descend: bool, last: bool, depth: u32) -> (Step, Option<u32>) {
        let descend = may_descend && self.rng.random_ratio(1, 3);
        let separator = if descend { Separator::Descendant } else { Separator::Child };
        if self.rng.random_ratio(1, 12) {
            return (bare_step(separator, NodeTest::SelfNode), at);
        }
        let elements = !last && self.rng.random_ratio(4, 5);
        let target = match at {
            Some(p) if descend => self.descendant(p, elements),
            Some(p) => self.child(p, elements),
            None => None,
        };
        let target = target.filter(|_| !self.rng.random_ratio(1, 30));
        let test = match target {
            Some(t) => self.test_for(t),
            None => self.stray_test(),
        };
        (self.step_to(separator, test, target, depth), target)
    }

    /// A step with `test` and predicates drawn from summary path `target`.
    fn step_to(&mut self, separator: Separator, test: NodeTest, target: Option<u32>, depth: u32) -> Step {
        let predicates = match (depth, self.rng.random_range(0..20)) {
            (0, _) | (_, 0..=12) => 0,
            (_, 13..=18) => 1,
            _ => 2,
        };
        let predicates = (0..predicates).map(|_| self.predicate(target, depth - 1)).collect();
        Step { separator, test, predicates, span: Span::default() }
    }

    fn predicate(&mut self, at: Option<u32>, depth: u32) -> Predicate {
        let nested = |g: &mut Self| Box::new(g.predicate(at, depth - 1));
        match self.rng.random_range(0..if depth > 0 { 10 } else { 7 }) {
            0..=2 => Predicate::Exists(self.relative(at, depth).0),
            3..=6 => self.comparison(at, depth),
            7 => Predicate::And(nested(self), nested(self)),
            8 => Predicate::Or(nested(self), nested(self)),
            _ => Predicate::Not(nested(self)),
        }
    }

    fn comparison(&mut self, at: Option<u32>, depth: u32) -> Predicate {
        // Half the time one named child or attribute: the shape the value index answers.
        if let Some(context) = at
            && self.rng.random_ratio(1, 2)
            && let Some(child) = self.child(context, false)
        {
            let info = self.dict.paths[child as usize];
            let name = local_name(&self.dict.names[info.name as usize]).to_string();
            let test = match info.kind {
                Kind::Element if usable(&name) => Some(NodeTest::Element(name)),
                Kind::Attribute if usable(&name) => Some(NodeTest::Attribute(name)),
                _ => None,
            };
            if let Some(test) = test {
                let path = LocationPath {
                    absolute: false,
                    steps: vec![bare_step(Separator::Child, test)],
                    span: Span::default(),
                };
                let op = *OPERATORS.choose(&mut self.rng).expect("six operators");
                let literal = self.literal(Some(child));
                return Predicate::Compare { path, op, literal, span: Span::default() };
            }
        }
        let (path, end) = self.relative(at, depth);
        let op = *OPERATORS.choose(&mut self.rng).expect("six operators");
        let literal = self.literal(end);
        Predicate::Compare { path, op, literal, span: Span::default() }
    }

    /// A value of the nodes of summary path `end` (or a fallback), as a string, or as
    /// a number near its value when it is one.
    fn literal(&mut self, end: Option<u32>) -> Literal {
        let sampled = end.and_then(|p| self.values.sample(self.dict, p, &mut self.rng));
        let value = sampled.unwrap_or_else(|| FALLBACK_LITERALS.choose(&mut self.rng).expect("fallbacks").to_string());
        let number = reference::xpath_number(&value);
        if number.is_finite() && self.rng.random_ratio(1, 2) {
            let near = match self.rng.random_range(0..4) {
                0 => number + 0.5,
                1 => number - 1.0,
                _ => number,
            };
            return Literal::Number(near, format!("{near}"));
        }
        // A literal holds one kind of quote.
        Literal::String(if value.contains('"') { value.replace('\'', "") } else { value })
    }

    /// A node test that matches the nodes of summary path `path`.
    fn test_for(&mut self, path: u32) -> NodeTest {
        let info = self.dict.paths[path as usize];
        let name = local_name(&self.dict.names[info.name as usize]);
        let named = usable(name);
        match info.kind {
            Kind::Element if named && self.rng.random_ratio(7, 10) => NodeTest::Element(name.into()),
            Kind::Element if self.rng.random_ratio(2, 3) => NodeTest::AnyElement,
            Kind::Attribute if named && self.rng.random_ratio(3, 4) => NodeTest::Attribute(name.into()),
            Kind::Attribute => NodeTest::AnyAttribute,
            Kind::Text if self.rng.random_ratio(2, 3) => NodeTest::Text,
            _ => NodeTest::Node,
        }
    }

    /// Any node test, with a name of the collection or a missing one.
    fn stray_test(&mut self) -> NodeTest {
        let known = self.dict.names.choose(&mut self.rng).map(|n| local_name(n)).filter(|n| usable(n));
        let name = known.unwrap_or("zzz").to_string();
        match self.rng.random_range(0..13) {
            0..=3 => NodeTest::Element(name),
            4..=5 => NodeTest::Attribute(name),
            6..=7 => NodeTest::AnyElement,
            8 => NodeTest::AnyAttribute,
            9 => NodeTest::Text,
            10..=11 => NodeTest::Node,
            _ => NodeTest::Element("zzz".into()),
        }
    }

    /// A child path of `path`, an element one when there is one and `elements` asks.
    fn child(&mut self, path: u32, elements: bool) -> Option<u32> {
        let mut children: Vec<u32> = self.dict.children(path).collect();
        let is_element = |c: &u32| self.dict.paths[*c as usize].kind == Kind::Element;
        if elements && children.iter().any(is_element) {
            children.retain(is_element);
        }
        children.choose(&mut self.rng).copied()
    }

    /// A path one to five levels below `path`: each further level (through an
    /// element) with probability ½.
    fn descendant(&mut self, path: u32, elements: bool) -> Option<u32> {
        let mut at = path;
        for _ in 0..4 {
            if !self.rng.random_ratio(1, 2) {
                break;
            }
            match self.child(at, true) {
                Some(next) if self.dict.paths[next as usize].kind == Kind::Element => at = next,
                _ => break,
            }
        }
        self.child(at, elements)
    }
}

fn bare_step(separator: Separator, test: NodeTest) -> Step {
    Step { separator, test, predicates: Vec::new(), span: Span::default() }
}

/// Whether a name test can be written as `name`: the operator names would parse as
/// operators inside predicates.
fn usable(name: &str) -> bool {
    !name.is_empty() && !matches!(name, "and" | "or" | "not" | "div" | "mod")
}

/// Short values seen in the data, by node kind and local name (a text node: its
/// parent's name), so that literals make some comparisons true.
#[derive(Default)]
struct Values(HashMap<Kind, HashMap<String, Vec<String>>>);

impl Values {
    fn collect(docs: &[Document<'_>]) -> Values {
        let mut values = Values::default();
        for node in docs.iter().flat_map(|d| d.descendants()) {
            let parent = node.parent_element().map_or("", |p| p.tag_name().name());
            match node.node_type() {
                NodeType::Element => {
                    if let Some(value) = short_string_value(node) {
                        values.add(Kind::Element, node.tag_name().name(), &value);
                    }
                    for attribute in node.attributes() {
                        values.add(Kind::Attribute, attribute.name(), attribute.value());
                    }
                }
                NodeType::Text => values.add(Kind::Text, parent, node.text().unwrap_or("")),
                NodeType::Comment => values.add(Kind::Comment, "", node.text().unwrap_or("")),
                NodeType::PI => {
                    let pi = node.pi().expect("a PI node has a PI");
                    values.add(Kind::Pi, pi.target, pi.value.unwrap_or(""));
                }
                NodeType::Root => {}
            }
        }
        values
    }

    fn add(&mut self, kind: Kind, name: &str, value: &str) {
        if value.len() > MAX_VALUE_BYTES {
            return;
        }
        let by_name = self.0.entry(kind).or_default();
        let list = match by_name.get_mut(name) {
            Some(list) => list,
            None => by_name.entry(name.to_string()).or_default(),
        };
        if list.len() < VALUES_PER_NAME && !list.iter().any(|v| v == value) {
            list.push(value.to_string());
        }
    }

    /// A value of the nodes with the kind and name of summary path `path`.
    fn sample(&self, dict: &Dictionary, path: u32, rng: &mut TestRng) -> Option<String> {
        let info = dict.paths[path as usize];
        let named = if info.kind == Kind::Text { dict.paths[info.parent as usize].name } else { info.name };
        let name = local_name(&dict.names[named as usize]);
        self.0.get(&info.kind)?.get(name)?.choose(rng).cloned()
    }
}

/// The string value of an element when it is at most [`MAX_VALUE_BYTES`] long.
fn short_string_value(node: Node<'_, '_>) -> Option<String> {
    let mut value = String::new();
    for text in node.descendants().filter(Node::is_text).filter_map(|n| n.text()) {
        value.push_str(text);
        if value.len() > MAX_VALUE_BYTES {
            return None;
        }
    }
    Some(value)
}

/// A random document of `elements` elements under `<r>`: names that nest in
/// themselves, a prefixed name with the same local name, attributes (two with local
/// name `k`), `texts` as text and attribute values, comments and PIs.
pub(super) fn random_document(rng: &mut TestRng, elements: usize, texts: &[&str]) -> Vec<u8> {
    let mut out = String::from("<r xmlns:x=\"urn:x\">");
    let mut left = elements;
    while left > 0 {
        random_children(rng, &mut out, &mut left, texts, 0);
    }
    out.push_str("</r>");
    out.into_bytes()
}

fn random_children(rng: &mut TestRng, out: &mut String, left: &mut usize, texts: &[&str], depth: usize) {
    while *left > 0 && rng.random_ratio(4, 5) {
        match rng.random_range(0..10) {
            0..=5 => {
                *left -= 1;
                let name = NAMES.choose(rng).expect("names");
                out.push('<');
                out.push_str(name);
                for attribute in ATTRIBUTES {
                    if rng.random_ratio(1, 3) {
                        let value = texts.choose(rng).expect("texts");
                        out.push_str(&format!(" {attribute}=\"{value}\""));
                    }
                }
                out.push('>');
                if depth < 6 {
                    random_children(rng, out, left, texts, depth + 1);
                }
                out.push_str(&format!("</{name}>"));
            }
            6..=8 => out.push_str(texts.choose(rng).expect("texts")),
            _ if rng.random_ratio(1, 2) => out.push_str(&format!("<!--{}-->", rng.random_range(0..3))),
            _ => out.push_str(&format!("<?p{} {}?>", rng.random_range(0..2), rng.random_range(0..3))),
        }
    }
}
