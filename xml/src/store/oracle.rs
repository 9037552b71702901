//! Comparing a collection with roxmltree DOMs of the same documents, node for node:
//! the proof that the store's data model is the reference evaluator's.
//!
//! Both sides are walked in document order (the DOM with attributes right after their
//! element, as the store numbers them); for each node the kind, the name (the store
//! keeps names as written, roxmltree their local part), the string value and the
//! parent must agree. Used by the tests and the fuzzer; differences come back as
//! sentences, at most [`MAX_DIFFERENCES`].
//!
//! Read next: `reference.rs` (the oracle's string values).

use super::XmlStore;
use super::format::Kind;
use crate::error::Result;
use crate::xpath::names::local_part as local;
use quiredb_engine::PageRead;
use roxmltree::{Document, NodeType};

/// Differences reported before giving up.
pub const MAX_DIFFERENCES: usize = 20;

/// One node of the DOM side, flattened.
struct Expected {
    kind: Kind,
    name: String,
    value: String,
    parent: Option<usize>,
}

/// Flattens documents in the store's order: document node, then each node with its
/// attributes right after it. Parents are indexes into the result.
fn flatten(docs: &[Document<'_>]) -> Vec<Expected> {
    let mut out = Vec::new();
    for doc in docs {
        let base = out.len();
        let mut index_of = std::collections::HashMap::new();
        for node in doc.root().descendants() {
            let parent = node.parent().map(|p| index_of[&p.id()]);
            let (kind, name) = match node.node_type() {
                NodeType::Root => (Kind::Document, String::new()),
                NodeType::Element => (Kind::Element, node.tag_name().name().to_owned()),
                NodeType::Text => (Kind::Text, String::new()),
                NodeType::Comment => (Kind::Comment, String::new()),
                NodeType::PI => (Kind::Pi, node.pi().map(|p| p.target.to_owned()).unwrap_or_default()),
            };
            index_of.insert(node.id(), out.len());
            let value = crate::reference::Item::Node { doc: 0, node }.string_value();
            out.push(Expected { kind, name, value, parent: parent.or(Some(base)).filter(|_| kind != Kind::Document) });
            let owner = out.len() - 1;
            for attribute in node.attributes() {
                out.push(Expected {
                    kind: Kind::Attribute,
                    name: attribute.name().to_owned(),
                    value: attribute.value().to_owned(),
                    parent: Some(owner),
                });
            }
        }
    }
    out
}

/// Compares collection `store` with `docs`; returns the differences found.
pub fn compare_with_dom<T: PageRead>(store: &XmlStore<'_, T>, docs: &[Document<'_>]) -> Result<Vec<String>> {
    let expected = flatten(docs);
    let dict = store.dictionary();
    let mut problems = Vec::new();
    if store.len() != expected.len() as u64 {
        problems.push(format!("the store has {} nodes, the DOM {}", store.len(), expected.len()));
    }
    let mut cursor = store.nodes(0, u64::MAX)?;
    let mut value = Vec::new();
    let mut pre = 0usize;
    while let Some(node) = cursor.next_node()? {
        let Some(want) = expected.get(pre) else { break };
        value.clear();
        if node.kind.has_value() {
            cursor.value(&node, &mut value)?;
        } else {
            store.string_value(node.pre, &mut value)?;
        }
        let name = dict.names.get(node.name as usize).map(String::as_str).unwrap_or("?");
        let parent = (node.kind != Kind::Document).then_some(node.parent as usize);
        let name = if node.kind == Kind::Pi { name } else { local(name) };
        if node.kind != want.kind || name != want.name || value != want.value.as_bytes() || parent != want.parent {
            problems.push(format!(
                "node {pre}: store has {} {name:?} = {:?} under {parent:?}, the DOM {} {:?} = {:?} under {:?}",
                node.kind.name(),
                String::from_utf8_lossy(&value),
                want.kind.name(),
                want.name,
                want.value,
                want.parent
            ));
            if problems.len() >= MAX_DIFFERENCES {
                break;
            }
        }
        pre += 1;
    }
    Ok(problems)
}
