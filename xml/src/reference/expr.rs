//! The reference [`Tree`] for full XPath 1.0: axes walked on `roxmltree` DOMs, the
//! oracle of the store's general evaluator and of the BaseX cross-check.
//!
//! Every axis is spelled out from the recommendation (§2.2) on the DOM's own links —
//! children, parents, siblings, node ids in document order — without any index, so
//! that it is obviously right. Attributes are [`Item::Attribute`]s: their parent is the
//! owner element, they are nobody's child, and the following and preceding axes never
//! hold them. The evaluator runs as written ([`eval::evaluate_as_written`]): nothing
//! computed once for many contexts, reverse axes listed whole, so the store's
//! shortcuts are checked against the plain nested loop.
//!
//! Read next: `../xpath/eval/mod.rs` (the semantics shared with the store).

use roxmltree::{Document, Node, NodeType};

use super::Item;
use crate::error::Result;
use crate::xpath::bindings::Bindings;
use crate::xpath::eval::{self, Tree, Value};
use crate::xpath::expr::{Axis, Expr, Test};
use crate::xpath::names::{NameTest, XML_NAMESPACE, resolve};

/// Evaluates a full XPath 1.0 expression over a collection of documents.
pub fn evaluate_expr<'a, 'input>(expr: &Expr, docs: &'a [Document<'input>]) -> Value<Item<'a, 'input>> {
    let mut tree = DomTree { docs };
    // The DOM tree never fails: every method below returns Ok.
    eval::evaluate_as_written(&mut tree, expr).unwrap_or(Value::Nodes(Vec::new()))
}

/// The string form of a value (a node-set: the first node's string value).
pub fn value_string(value: &Value<Item<'_, '_>>) -> String {
    match value {
        Value::Nodes(nodes) => nodes.first().map(Item::string_value).unwrap_or_default(),
        Value::Number(n) => crate::xpath::functions::number_to_string(*n),
        Value::String(s) => s.clone(),
        Value::Boolean(b) => b.to_string(),
    }
}

struct DomTree<'a, 'input> {
    docs: &'a [Document<'input>],
}

impl<'a, 'input> Tree for DomTree<'a, 'input> {
    type Node = Item<'a, 'input>;
    type Key = (usize, usize, usize);

    fn key(&self, node: Self::Node) -> Self::Key {
        node.key()
    }

    fn roots(&mut self) -> Result<Vec<Self::Node>> {
        Ok(self.docs.iter().enumerate().map(|(doc, d)| Item::Node { doc, node: d.root() }).collect())
    }

    fn root_of(&mut self, node: Self::Node) -> Result<Self::Node> {
        Ok(Item::Node { doc: node.document(), node: node.node().document().root() })
    }

    fn axis(&mut self, axis: Axis, test: &Test, item: Self::Node, out: &mut Vec<Self::Node>) -> Result<()> {
        match item {
            Item::Node { doc, node } => node_axis(axis, test, doc, node, out),
            Item::Attribute { doc, owner, index } => attribute_axis(axis, test, doc, owner, index, out),
        }
        Ok(())
    }

    fn string_value(&mut self, node: Self::Node, out: &mut String) -> Result<()> {
        out.push_str(&node.string_value());
        Ok(())
    }

    fn name(&mut self, item: Self::Node, local: bool) -> Result<String> {
        let (prefix, name) = match item {
            Item::Node { node, .. } => match node.node_type() {
                NodeType::Element => (element_prefix(node), node.tag_name().name()),
                NodeType::PI => (None, node.pi().map(|pi| pi.target).unwrap_or("")),
                _ => (None, ""),
            },
            Item::Attribute { owner, index, .. } => match owner.attributes().nth(index) {
                Some(a) => (attribute_prefix(owner, &a), a.name()),
                None => (None, ""),
            },
        };
        Ok(match prefix {
            Some(p) if !local && !p.is_empty() => format!("{p}:{name}"),
            _ => name.to_string(),
        })
    }

    /// `xml:id` only: the reference loader blanks the internal subset's declarations
    /// before roxmltree reads the text (`collection/defaults.rs`), so attributes it
    /// declares `ID` are the store's alone (checked against lxml there).
    fn elements_with_id(&mut self, root: Self::Node, tokens: &[&str], out: &mut Vec<Self::Node>) -> Result<()> {
        let doc = root.document();
        let xml_id = |a: &roxmltree::Attribute<'_, '_>| a.namespace() == Some(XML_NAMESPACE) && a.name() == "id";
        for node in root.node().descendants().filter(|n| n.is_element()) {
            if node.attributes().any(|a| xml_id(&a) && tokens.binary_search(&a.value()).is_ok()) {
                out.push(Item::Node { doc, node });
            }
        }
        Ok(())
    }

    fn namespace_uri(&mut self, item: Self::Node) -> Result<String> {
        let uri = match item {
            Item::Node { node, .. } if node.is_element() => node.tag_name().namespace(),
            Item::Attribute { owner, index, .. } => owner.attributes().nth(index).and_then(|a| a.namespace()),
            Item::Node { .. } => None,
        };
        Ok(uri.unwrap_or_default().to_owned())
    }
}

/// Rewrites the prefixed name tests of `expr` (parsed from `src`) as expanded names:
/// `bound` first, then the URIs the documents' names use with the prefix, as the
/// store does (`crate::xpath::names::resolve`).
pub fn resolve_namespaces(expr: &mut Expr, src: &str, bound: &Bindings, docs: &[Document<'_>]) -> Result<()> {
    let mut used: Vec<(String, String)> = Vec::new();
    for node in docs.iter().flat_map(|d| d.descendants()).filter(|n| n.is_element()) {
        let element = element_prefix(node).zip(node.tag_name().namespace());
        let attributes = node.attributes().filter_map(|a| attribute_prefix(node, &a).zip(a.namespace()));
        for (prefix, uri) in std::iter::once(element).flatten().chain(attributes) {
            used.push((prefix.to_owned(), uri.to_owned()));
        }
    }
    used.sort();
    used.dedup();
    resolve(expr, src, bound, &mut |prefix| {
        Ok(used.iter().filter(|(p, _)| p == prefix).map(|(_, uri)| uri.clone()).collect())
    })
}

/// The prefix an element's name is written with (none for no or the default namespace),
/// as the store keeps it: a URI bound to two prefixes (or to a prefix and the default)
/// must not give the first one declared.
fn element_prefix<'i>(node: Node<'_, 'i>) -> Option<&'i str> {
    let text = node.document().input_text();
    let tag = text.get(node.range().start + 1..).unwrap_or_default();
    let qname = tag.split(|c: char| c.is_ascii_whitespace() || c == '/' || c == '>').next().unwrap_or_default();
    written_prefix(node, qname, node.tag_name().namespace())
}

/// The prefix an attribute's name is written with (see [`element_prefix`]).
fn attribute_prefix<'i>(owner: Node<'_, 'i>, attribute: &roxmltree::Attribute<'_, 'i>) -> Option<&'i str> {
    let qname = owner.document().input_text().get(attribute.range_qname()).unwrap_or_default();
    written_prefix(owner, qname, attribute.namespace())
}

/// The prefix of `qname` (read from the text at `node`) if it names `namespace` there;
/// else the first prefix bound to `namespace` (a name an entity's text brought in).
fn written_prefix<'i>(node: Node<'_, 'i>, qname: &'i str, namespace: Option<&str>) -> Option<&'i str> {
    let uri = namespace?;
    match qname.split_once(':') {
        Some((prefix, _)) if node.lookup_namespace_uri(Some(prefix)) == Some(uri) => Some(prefix),
        None if node.lookup_namespace_uri(None) == Some(uri) => None,
        _ => node.lookup_prefix(uri).filter(|p| !p.is_empty()),
    }
}

/// Whether a node passes `test` on an axis whose principal node type is element.
fn passes(test: &Test, node: Node<'_, '_>) -> bool {
    match test {
        Test::Name(name) => {
            node.is_element()
                && NameTest::of(name).matches(node.tag_name().name(), node.tag_name().namespace().unwrap_or(""))
        }
        Test::Any => node.is_element(),
        Test::Text => node.is_text(),
        Test::Comment => node.is_comment(),
        Test::Pi(target) => node.is_pi() && target.as_ref().is_none_or(|t| node.pi().is_some_and(|pi| pi.target == t)),
        Test::Node => true,
    }
}

/// Whether attribute `index` of `owner` passes `test` (principal type attribute).
fn attribute_passes(test: &Test, owner: Node<'_, '_>, index: usize) -> bool {
    match test {
        Test::Name(name) => owner
            .attributes()
            .nth(index)
            .is_some_and(|a| NameTest::of(name).matches(a.name(), a.namespace().unwrap_or(""))),
        Test::Any | Test::Node => true,
        Test::Text | Test::Comment | Test::Pi(_) => false,
    }
}

fn node_axis<'a, 'i>(axis: Axis, test: &Test, doc: usize, node: Node<'a, 'i>, out: &mut Vec<Item<'a, 'i>>) {
    let mut push = |nodes: &mut dyn Iterator<Item = Node<'a, 'i>>| {
        out.extend(nodes.filter(|n| passes(test, *n)).map(|n| Item::Node { doc, node: n }))
    };
    match axis {
        Axis::Child => push(&mut node.children()),
        Axis::Descendant => push(&mut node.descendants().skip(1)),
        Axis::DescendantOrSelf => push(&mut node.descendants()),
        Axis::Parent => push(&mut node.parent().into_iter()),
        Axis::Ancestor => push(&mut ancestors(node).into_iter().skip(1).rev()),
        Axis::AncestorOrSelf => push(&mut ancestors(node).into_iter().rev()),
        Axis::FollowingSibling => push(&mut node.next_siblings().skip(1)),
        Axis::PrecedingSibling => push(&mut node.prev_siblings().skip(1).collect::<Vec<_>>().into_iter().rev()),
        Axis::Following => {
            let last = node.descendants().next_back().unwrap_or(node).id();
            push(&mut node.document().descendants().filter(|n| n.id().get_usize() > last.get_usize()))
        }
        Axis::Preceding => push(&mut preceding(node)),
        Axis::SelfAxis => push(&mut std::iter::once(node)),
        Axis::Attribute if node.is_element() => out.extend(
            (0..node.attributes().len())
                .filter(|&index| attribute_passes(test, node, index))
                .map(|index| Item::Attribute { doc, owner: node, index }),
        ),
        Axis::Attribute => {}
    }
}

fn attribute_axis<'a, 'i>(
    axis: Axis,
    test: &Test,
    doc: usize,
    owner: Node<'a, 'i>,
    index: usize,
    out: &mut Vec<Item<'a, 'i>>,
) {
    let this = Item::Attribute { doc, owner, index };
    let mut push = |nodes: &mut dyn Iterator<Item = Node<'a, 'i>>| {
        out.extend(nodes.filter(|n| passes(test, *n)).map(|n| Item::Node { doc, node: n }))
    };
    match axis {
        Axis::Parent => push(&mut std::iter::once(owner)),
        Axis::Ancestor | Axis::AncestorOrSelf => {
            push(&mut ancestors(owner).into_iter().rev());
            if axis == Axis::AncestorOrSelf && *test == Test::Node {
                out.push(this);
            }
        }
        // Everything after the owner's start tag that is not an attribute.
        Axis::Following => {
            push(&mut owner.document().descendants().filter(|n| n.id().get_usize() > owner.id().get_usize()))
        }
        Axis::Preceding => push(&mut preceding(owner)),
        // Their principal node type is element (§2.3): an attribute passes `node()` only.
        Axis::SelfAxis | Axis::DescendantOrSelf if *test == Test::Node => out.push(this),
        _ => {}
    }
}

/// The node and its ancestors, nearest first.
fn ancestors<'a, 'i>(node: Node<'a, 'i>) -> Vec<Node<'a, 'i>> {
    node.ancestors().collect()
}

/// Nodes before `node` in document order that are not its ancestors.
fn preceding<'a, 'i>(node: Node<'a, 'i>) -> impl Iterator<Item = Node<'a, 'i>> {
    let ancestors: Vec<_> = node.ancestors().map(|a| a.id()).collect();
    node.document()
        .descendants()
        .take_while(move |n| n.id().get_usize() < node.id().get_usize())
        .filter(move |n| !ancestors.contains(&n.id()))
}
