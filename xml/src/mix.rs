//! A seeded mix of XPath 1.0 queries over a collection, and answers comparable across
//! evaluators — for the tests that hold the store to the reference evaluator (here and
//! in quiredb-datasets, over every generated collection kind) and for fuzzing.
//!
//! [`QueryMix`] draws from the collection's own element names, attribute names and
//! short values: every axis, every node test, positional predicates (`[k]`, `[last()]`,
//! `position()`), filter expressions, arithmetic, comparisons between node-sets, value
//! joins with absolute paths in predicates, and every function of the core library; at
//! most one document-wide axis (following, preceding, descendant) per query, so that a
//! query stays near linear in the document on a DOM walk (quadratic with a value join).
//! [`reference_answer`] and [`store_answer`] give an [`Answer`]: for node-sets the count
//! and a hash of each node's local name and string value in document order, otherwise
//! XPath's string form of the value.
//!
//! Read next: `store/query/full_tests.rs` (where it is used), `xpath/eval/invariant.rs`.

use crate::reference::{self, Item};
use crate::store::{Kind, XmlStore};
use crate::xpath::bindings::Bindings;
use crate::xpath::eval::Value;
use crate::xpath::expr::Axis;
use crate::xpath::parse_expr_with;
use quiredb_engine::PageRead;
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use roxmltree::{Document, NodeType};

/// What a query gave, comparable across the two evaluators.
#[derive(Debug, PartialEq)]
pub enum Answer {
    Nodes { count: usize, hash: u64, first: String },
    Atom(String),
}

fn fnv(hash: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *hash = (*hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
}

pub fn reference_answer(docs: &[Document<'_>], query: &str) -> Answer {
    reference_answer_with(docs, query, &Bindings::new())
}

/// [`reference_answer`] with prefixes and variables bound.
pub fn reference_answer_with(docs: &[Document<'_>], query: &str, bindings: &Bindings) -> Answer {
    let mut expr = parse_expr_with(query, bindings).unwrap_or_else(|e| panic!("{query}: {e}"));
    reference::resolve_namespaces(&mut expr, query, bindings, docs).unwrap_or_else(|e| panic!("{query}: {e}"));
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

pub fn store_answer<T: PageRead>(store: &XmlStore<'_, T>, query: &str) -> Answer {
    store_answer_with(store, query, &Bindings::new())
}

/// [`store_answer`] with prefixes and variables bound.
pub fn store_answer_with<T: PageRead>(store: &XmlStore<'_, T>, query: &str, bindings: &Bindings) -> Answer {
    let mut prepared = store.prepare_with(query, bindings).unwrap_or_else(|e| panic!("{query}: {e}"));
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
                    Kind::Element | Kind::Attribute => crate::store::local_name(&dict.names[info.name as usize]),
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
pub struct QueryMix {
    rng: StdRng,
    /// Axes that reach most of the document (following, preceding, descendant…) left
    /// for the query being drawn: one, so that a query stays near linear in the
    /// document on both evaluators.
    wide_axes: u32,
    /// Value joins left for the query being drawn: one, so that the reference, which
    /// evaluates the joined path for every context node, stays quadratic at most.
    joins: u32,
    elements: Vec<String>,
    attributes: Vec<String>,
    literals: Vec<String>,
    /// The namespace URIs of the names, and the `xml:lang` values (plus `en`).
    uris: Vec<String>,
    languages: Vec<String>,
}

impl QueryMix {
    /// A mix over the names and values of `docs`, seeded.
    pub fn new(docs: &[Document<'_>], seed: u64) -> QueryMix {
        let (mut elements, mut attributes, mut literals) = (Vec::new(), Vec::new(), Vec::new());
        let mut names = Names::default();
        for doc in docs {
            for node in doc.descendants() {
                if node.is_element() {
                    elements.push(node.tag_name().name().to_string());
                    names.add(node, node.tag_name().namespace(), node.tag_name().name(), false);
                    for a in node.attributes() {
                        attributes.push(a.name().to_string());
                        literals.push(a.value().to_string());
                        names.add(node, a.namespace(), a.name(), true);
                        if a.name() == "lang" && a.namespace() == Some(crate::xpath::names::XML_NAMESPACE) {
                            names.languages.push(a.value().to_string());
                        }
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
        let (uris, languages) = names.finish(&mut elements, &mut attributes);
        QueryMix {
            rng: StdRng::seed_from_u64(seed),
            wide_axes: 1,
            joins: 1,
            elements,
            attributes,
            literals,
            uris,
            languages,
        }
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
        match self.rng.random_range(0..29) {
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
            19 => {
                let list = self.languages.clone();
                format!("lang('{}')", self.pick(&list))
            }
            20 => {
                let list = self.uris.clone();
                format!("namespace-uri() = '{}'", self.pick(&list))
            }
            // The reference evaluates the joined path for every context node: neither
            // the contexts nor the path take a document-wide axis, or the query would
            // be cubic there.
            22..=27 if self.joins > 0 && self.wide_axes > 0 => {
                self.joins -= 1;
                self.wide_axes = 0;
                self.invariant_predicate(depth, k)
            }
            _ => format!("local-name() = '{}'", self.element()),
        }
    }

    /// The absolute path of a value join: child steps from the root or from every
    /// element, the last one maybe an attribute or text (the reference walks it once
    /// per context node, so it stays linear in the document).
    fn joined_path(&mut self) -> String {
        let mut path = ["/", "//", "/*/"].choose(&mut self.rng).unwrap_or(&"//").to_string();
        let steps = self.rng.random_range(1..=2);
        for i in 0..steps {
            if i > 0 {
                path.push('/');
            }
            let step = match self.rng.random_range(0..6) {
                0 if i + 1 == steps => format!("@{}", self.attribute()),
                1 if i + 1 == steps => "text()".into(),
                2 => "*".into(),
                _ => self.element(),
            };
            path.push_str(&step);
        }
        if self.rng.random_bool(0.15) {
            path = format!("({path})[{}]", self.rng.random_range(1..=3));
        }
        path
    }

    /// A predicate with a part that is the same for every context node: an absolute
    /// path compared with the context (a value join), tested, counted, or a function
    /// of literals.
    fn invariant_predicate(&mut self, depth: u32, k: i32) -> String {
        let op = *["=", "=", "!=", "<", "<=", ">", ">="].choose(&mut self.rng).unwrap_or(&"=");
        let absolute = self.joined_path();
        match self.rng.random_range(0..7) {
            0 => format!("{} {op} {absolute}", self.relative(depth)),
            1 => format!("{absolute} {op} {}", self.relative(depth)),
            2 => format!(". {op} {absolute}"),
            3 => format!("not({} {op} {absolute})", self.relative(depth)),
            4 => absolute,
            5 => format!("count({absolute}) > {} or string({absolute}) {op} .", k * 2),
            _ => format!("concat({}, {}) {op} .", self.literal(), self.literal()),
        }
    }

    /// The next query.
    pub fn query(&mut self) -> String {
        self.wide_axes = 1;
        self.joins = 1;
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
            20 => format!("namespace-uri({p})"),
            21 => format!("id({lit}) | id({p})"),
            19 => format!("starts-with(string({p}), {lit})"),
            _ => p,
        }
    }
}

/// The namespaced names of a collection, as name tests: `Q{uri}local` and `Q{uri}*`
/// always, `p:local` and `p:*` when the prefix has one URI in the whole collection
/// (otherwise an unbound prefix is an error, not a query).
#[derive(Default)]
struct Names {
    /// (prefix, URI, local name, is an attribute)
    used: Vec<(String, String, String, bool)>,
    languages: Vec<String>,
}

impl Names {
    fn add(&mut self, node: roxmltree::Node<'_, '_>, uri: Option<&str>, local: &str, attribute: bool) {
        let Some(uri) = uri else { return };
        let prefix = node.lookup_prefix(uri).unwrap_or_default();
        self.used.push((prefix.to_owned(), uri.to_owned(), local.to_owned(), attribute));
    }

    /// Adds the tests to the element and attribute lists; the URIs and languages.
    fn finish(mut self, elements: &mut Vec<String>, attributes: &mut Vec<String>) -> (Vec<String>, Vec<String>) {
        self.used.sort();
        self.used.dedup();
        let unique = |prefix: &str| {
            let mut uris = self.used.iter().filter(|u| u.0 == prefix).map(|u| &u.1);
            let first = uris.next();
            first.is_some() && uris.all(|u| Some(u) == first)
        };
        for (prefix, uri, local, attribute) in &self.used {
            let list = if *attribute { &mut *attributes } else { &mut *elements };
            list.extend([format!("Q{{{uri}}}{local}"), format!("Q{{{uri}}}*")]);
            if !prefix.is_empty() && unique(prefix) {
                list.extend([format!("{prefix}:{local}"), format!("{prefix}:*")]);
            }
        }
        for list in [&mut *elements, &mut *attributes] {
            list.sort();
            list.dedup();
        }
        let mut uris: Vec<String> = self.used.into_iter().map(|u| u.1).collect();
        uris.extend(["".to_owned(), "urn:none".to_owned()]);
        uris.sort();
        uris.dedup();
        self.languages.extend(["en".to_owned(), "EN".to_owned()]);
        self.languages.sort();
        self.languages.dedup();
        (uris, self.languages)
    }
}

/// Axes whose node-sets grow with the document rather than with the context.
fn is_wide(axis: Axis) -> bool {
    matches!(axis, Axis::Following | Axis::Preceding | Axis::Descendant | Axis::DescendantOrSelf)
}
