//! The reference evaluator: XPath subset over `roxmltree` DOMs by a plain walk.
//!
//! It is the oracle for the store's tests and for the T5 benchmark, so it is written to
//! be obviously right, not fast. Semantics are XPath 1.0's:
//! - results are in document order without duplicates (ordered by document index in the
//!   collection, then node id — roxmltree numbers nodes in document order — then
//!   attribute index, attributes coming right after their element);
//! - `a//b` is `a/descendant-or-self::node()/b`;
//! - a path in a predicate is true when non-empty; `path = "s"` is true when *some*
//!   selected node's string value equals `s` (`!=` likewise: some node differs);
//!   `<`, `<=`, `>`, `>=` and every comparison with a number compare `number(string
//!   value)` (XPath 1.0 number syntax, NaN never compares true except with `!=`);
//! - whitespace-only text nodes are part of the data (as with BaseX `CHOP=false`).
//!
//! Two documented liberties: an unprefixed name test matches the element's *local*
//! name in any namespace (the collections we generate have none), and an absolute path
//! over a collection is evaluated in each document and the results concatenated.
//!
//! Read next: `xpath/ast.rs` for the tree evaluated here; `collection.rs` for loading.

mod expr;

pub use expr::{evaluate_expr, resolve_namespaces, value_string};

use roxmltree::{Document, Node, NodeType};

use crate::parse::normalize_line_ends;

use crate::xpath::names::NameTest;
use crate::xpath::{CompareOp, Literal, LocationPath, NodeTest, Predicate, Query, Separator, Step};

/// One selected item: a node, or an attribute of an element.
#[derive(Debug, Clone, Copy)]
pub enum Item<'a, 'input> {
    Node { doc: usize, node: Node<'a, 'input> },
    Attribute { doc: usize, owner: Node<'a, 'input>, index: usize },
}

type OrderKey = (usize, usize, usize);

impl<'a, 'input> Item<'a, 'input> {
    /// Position in collection document order.
    pub(crate) fn key(&self) -> OrderKey {
        match *self {
            Item::Node { doc, node } => (doc, node.id().get_usize(), 0),
            Item::Attribute { doc, owner, index } => (doc, owner.id().get_usize(), index + 1),
        }
    }

    /// The XPath string value (element: all descendant text concatenated).
    pub fn string_value(&self) -> String {
        match *self {
            Item::Node { node, .. } => node_string_value(node),
            Item::Attribute { owner, index, .. } => {
                owner.attributes().nth(index).map(|a| a.value().to_string()).unwrap_or_default()
            }
        }
    }

    /// Index of the document in the collection this item comes from.
    pub fn document(&self) -> usize {
        match *self {
            Item::Node { doc, .. } | Item::Attribute { doc, .. } => doc,
        }
    }

    /// The node (for an attribute: its owner element).
    pub fn node(&self) -> Node<'a, 'input> {
        match *self {
            Item::Node { node, .. } => node,
            Item::Attribute { owner, .. } => owner,
        }
    }
}

fn node_string_value(node: Node<'_, '_>) -> String {
    match node.node_type() {
        NodeType::Text => node.text().unwrap_or("").to_string(),
        // roxmltree keeps CRs in comments and PIs; XML 1.0 §2.11 reads them as LFs.
        NodeType::Comment => normalize_line_ends(node.text().unwrap_or("")).into_owned(),
        NodeType::PI => {
            node.pi().map(|pi| normalize_line_ends(pi.value.unwrap_or("")).into_owned()).unwrap_or_default()
        }
        NodeType::Root | NodeType::Element => {
            node.descendants().filter(|n| n.is_text()).filter_map(|n| n.text()).collect()
        }
    }
}

/// Evaluates `query` over a collection of documents, in collection document order.
pub fn evaluate<'a, 'input>(query: &Query, docs: &'a [Document<'input>]) -> Vec<Item<'a, 'input>> {
    let mut out = Vec::new();
    for (index, doc) in docs.iter().enumerate() {
        let root = vec![Item::Node { doc: index, node: doc.root() }];
        for path in &query.paths {
            out.extend(eval_path(path, &root));
        }
    }
    sort_unique(&mut out);
    out
}

/// Number of items `query` selects in the collection.
pub fn count(query: &Query, docs: &[Document<'_>]) -> usize {
    evaluate(query, docs).len()
}

fn sort_unique(items: &mut Vec<Item<'_, '_>>) {
    items.sort_by_key(Item::key);
    items.dedup_by_key(|item| item.key());
}

/// Evaluates a path from a context set (relative paths start at the context; absolute
/// paths at the context's document root).
fn eval_path<'a, 'i>(path: &LocationPath, context: &[Item<'a, 'i>]) -> Vec<Item<'a, 'i>> {
    let mut current: Vec<Item<'a, 'i>> = if path.absolute {
        let mut roots: Vec<_> = context
            .iter()
            .map(|item| Item::Node { doc: item.document(), node: item.node().document().root() })
            .collect();
        sort_unique(&mut roots);
        roots
    } else {
        context.to_vec()
    };
    for step in &path.steps {
        let mut next = Vec::new();
        let mut candidates = Vec::new();
        let keep = |c: &Item<'a, 'i>| step.predicates.iter().all(|p| holds(p, *c));
        let mut visit = |base: Item<'a, 'i>| {
            candidates.clear();
            select(&step.test, base, &mut candidates);
            next.extend(candidates.iter().filter(|c| keep(c)));
        };
        match step.separator {
            Separator::Child => current.iter().for_each(|base| visit(*base)),
            // descendant-or-self::node()/child::t = the proper descendants that pass t.
            Separator::Descendant if is_child_test(&step.test) => for_each_descendant_or_self(&current, true, |item| {
                if let Item::Node { node, .. } = item
                    && passes_child_test(&step.test, node)
                    && keep(&item)
                {
                    next.push(item);
                }
            }),
            Separator::Descendant => for_each_descendant_or_self(&current, false, visit),
        }
        sort_unique(&mut next);
        current = next;
    }
    current
}

/// Calls `f` on every item of descendant-or-self::node() of a sorted, unique context
/// set, each once: a context inside the subtree of an earlier one adds nothing new.
/// With `proper`, only proper descendants (the contexts themselves are skipped, which
/// is exact: a skipped context is not inside another context's subtree).
fn for_each_descendant_or_self<'a, 'i>(context: &[Item<'a, 'i>], proper: bool, mut f: impl FnMut(Item<'a, 'i>)) {
    let mut covered: Option<Node<'a, 'i>> = None; // last context whose subtree was walked
    for item in context {
        match *item {
            Item::Attribute { .. } if !proper => f(*item),
            Item::Attribute { .. } => {}
            Item::Node { doc, node } => {
                let inside = covered.is_some_and(|c| node.ancestors().any(|a| a == c));
                if !inside {
                    node.descendants().skip(usize::from(proper)).for_each(|n| f(Item::Node { doc, node: n }));
                    covered = Some(node);
                }
            }
        }
    }
}

/// Appends the items a node test selects from one context item (child, attribute or
/// self axis) to `out`, in document order.
fn select<'a, 'i>(test: &NodeTest, base: Item<'a, 'i>, out: &mut Vec<Item<'a, 'i>>) {
    let Item::Node { doc, node } = base else {
        // Attributes have no children and no attributes; only `.` selects them.
        if *test == NodeTest::SelfNode {
            out.push(base);
        }
        return;
    };
    let wrap = |n: Node<'a, 'i>| Item::Node { doc, node: n };
    match test {
        NodeTest::SelfNode => out.push(base),
        NodeTest::Element(_) | NodeTest::AnyElement | NodeTest::Text | NodeTest::Node => {
            out.extend(node.children().filter(|c| passes_child_test(test, *c)).map(wrap))
        }
        NodeTest::Attribute(name) => out.extend(
            node.attributes()
                .enumerate()
                .filter(|(_, a)| NameTest::of(name).matches(a.name(), a.namespace().unwrap_or("")))
                .map(|(index, _)| Item::Attribute { doc, owner: node, index }),
        ),
        NodeTest::AnyAttribute => {
            out.extend((0..node.attributes().len()).map(|index| Item::Attribute { doc, owner: node, index }))
        }
    }
}

/// Whether the test selects along the child axis (not attributes, not self).
fn is_child_test(test: &NodeTest) -> bool {
    matches!(test, NodeTest::Element(_) | NodeTest::AnyElement | NodeTest::Text | NodeTest::Node)
}

/// Whether a child node passes a child-axis test.
fn passes_child_test(test: &NodeTest, node: Node<'_, '_>) -> bool {
    match test {
        NodeTest::Element(name) => {
            node.is_element()
                && NameTest::of(name).matches(node.tag_name().name(), node.tag_name().namespace().unwrap_or(""))
        }
        NodeTest::AnyElement => node.is_element(),
        NodeTest::Text => node.is_text(),
        NodeTest::Node => true,
        _ => false,
    }
}

/// Truth of a predicate with `item` as the context node.
fn holds(predicate: &Predicate, item: Item<'_, '_>) -> bool {
    match predicate {
        Predicate::Or(a, b) => holds(a, item) || holds(b, item),
        Predicate::And(a, b) => holds(a, item) && holds(b, item),
        Predicate::Not(a) => !holds(a, item),
        Predicate::Exists(path) => any_match(&path.steps, start(path, item), &|_| true),
        Predicate::Compare { path, op, literal, .. } => {
            any_match(&path.steps, start(path, item), &|s| compare(&s.string_value(), *op, literal))
        }
    }
}

/// Where a predicate path starts: the context item, or its document root.
fn start<'a, 'i>(path: &LocationPath, item: Item<'a, 'i>) -> Item<'a, 'i> {
    if path.absolute { Item::Node { doc: item.document(), node: item.node().document().root() } } else { item }
}

/// Whether some item that `steps` select from `item` satisfies `accept`: the same
/// answer as building the node-set with [`eval_path`] and scanning it ("some node
/// satisfies" is all XPath 1.0 asks of a node-set in a predicate), found depth-first
/// and stopping at the first hit.
fn any_match<'a, 'i>(steps: &[Step], item: Item<'a, 'i>, accept: &dyn Fn(Item<'a, 'i>) -> bool) -> bool {
    let Some((step, rest)) = steps.split_first() else { return accept(item) };
    let bases: Box<dyn Iterator<Item = Item<'a, 'i>>> = match (step.separator, item) {
        (Separator::Descendant, Item::Node { doc, node }) => {
            Box::new(node.descendants().map(move |n| Item::Node { doc, node: n }))
        }
        _ => Box::new(std::iter::once(item)),
    };
    let mut candidates = Vec::new();
    for base in bases {
        candidates.clear();
        select(&step.test, base, &mut candidates);
        for &candidate in &candidates {
            if step.predicates.iter().all(|p| holds(p, candidate)) && any_match(rest, candidate, accept) {
                return true;
            }
        }
    }
    false
}

/// XPath 1.0 comparison of one node's string value with a literal.
pub fn compare(value: &str, op: CompareOp, literal: &Literal) -> bool {
    match (op, literal) {
        (CompareOp::Eq, Literal::String(s)) => value == s,
        (CompareOp::Ne, Literal::String(s)) => value != s,
        (_, Literal::String(s)) => compare_numbers(xpath_number(value), op, xpath_number(s)),
        (_, Literal::Number(n, _)) => compare_numbers(xpath_number(value), op, *n),
    }
}

fn compare_numbers(a: f64, op: CompareOp, b: f64) -> bool {
    crate::xpath::eval::compare_numbers(op, a, b)
}

/// XPath 1.0 `number()` of a string: optional whitespace, optional `-`, digits with an
/// optional fraction (no exponent, no `+`); anything else is NaN.
pub fn xpath_number(s: &str) -> f64 {
    let t = s.trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n'));
    let digits = t.strip_prefix('-').unwrap_or(t);
    let mut parts = digits.splitn(2, '.');
    let whole = parts.next().unwrap_or("");
    let fraction = parts.next();
    let all_digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    let valid = all_digits(whole)
        && fraction.is_none_or(all_digits)
        && (!whole.is_empty() || fraction.is_some_and(|f| !f.is_empty()));
    if valid { t.parse().unwrap_or(f64::NAN) } else { f64::NAN }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xpath::parse;

    const DOC: &str =
        r#"<r><a id="1" k="x"><b>7</b><b> 8 </b><c>hi<d>there</d></c></a><a id="2"><c>no</c></a><b>-1.5</b></r>"#;

    fn run(q: &str) -> Vec<String> {
        let doc = Document::parse(DOC).expect("test document is well-formed");
        let docs = [doc];
        let query = parse(q).expect("test query parses");
        evaluate(&query, &docs).iter().map(Item::string_value).collect()
    }

    #[test]
    fn selects_children_descendants_attributes_and_text() {
        assert_eq!(run("/r/a/@id"), ["1", "2"]);
        assert_eq!(run("//b"), ["7", " 8 ", "-1.5"]);
        assert_eq!(run("//a/c"), ["hithere", "no"]);
        assert_eq!(run("//c/text()"), ["hi", "no"]);
        assert_eq!(run("//@*"), ["1", "x", "2"]);
        assert_eq!(run("/r/*/node()").len(), 5);
        assert_eq!(run("r/a/c"), ["hithere", "no"]);
        assert_eq!(run("/"), ["7 8 hithereno-1.5"]);
    }

    #[test]
    fn follows_xpath_comparison_rules() {
        assert_eq!(run("//a[b = 8]/@id"), ["1"]); // " 8 " is the number 8
        assert_eq!(run("//a[b = '8']/@id"), Vec::<String>::new()); // but not the string
        assert_eq!(run("//a[b > 7.5]/@id"), ["1"]);
        assert_eq!(run("//a[b != 7]/@id"), ["1"]); // some b differs
        assert_eq!(run("//a[not(b)]/@id"), ["2"]);
        assert_eq!(run("//a[@k or c = 'no']/@id"), ["1", "2"]);
        assert_eq!(run("//b[. < -1]"), ["-1.5"]);
        assert_eq!(run("//a[c < 'x']"), Vec::<String>::new()); // NaN compares false
    }

    #[test]
    fn unions_are_in_document_order_without_duplicates() {
        assert_eq!(run("//d | //c | //d"), ["hithere", "there", "no"]);
        assert_eq!(run("//a//d | /r//d"), ["there"]);
    }

    #[test]
    fn xpath_numbers_follow_the_1_0_grammar() {
        assert_eq!(xpath_number(" 12 "), 12.0);
        assert_eq!(xpath_number("-.5"), -0.5);
        assert_eq!(xpath_number("3."), 3.0);
        for bad in ["", "-", ".", "1e3", "+1", "1 2", "0x10", "inf", "NaN"] {
            assert!(xpath_number(bad).is_nan(), "{bad}");
        }
    }
}

#[cfg(test)]
mod expr_tests;
