//! The XML store's checker, run by `quire check` for every collection after the
//! B+tree and queue checkers have vouched for the structures underneath.
//!
//! It proves: pres run `0..next_pre` without gaps; every node's parent, level and
//! size nest (a stack walk, as the shredder built them); every path id names the
//! node's real path; counts by kind, name and path are exact; each partition list is
//! exactly the document index's nodes of that kind and name, in document order; the
//! value index holds exactly the eligible values; the document list points at the
//! document nodes in order; namespace declarations belong to elements. Problems come back as sentences.
//!
//! Read next: `values.rs` (what "eligible" means).

use super::XmlStore;
use super::dict::{Declaration, Dictionary};
use super::format::{Kind, f64_from_key, split_part_key};
use super::record::{Label, NodeRecord, Paths, decode_part_block};
use super::values::{indexable, value_key};
use crate::error::Result;
use crate::reference::xpath_number;
use quiredb_engine::PageRead;
use std::collections::HashMap;
use std::hash::Hasher;
use std::ops::Bound;

/// An order-independent digest of (value-index key, node) pairs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct ValueDigest {
    sum: u64,
    mixed: u64,
}

impl ValueDigest {
    fn add(&mut self, key: &[u8], pre: u64) {
        let mut hasher = std::hash::DefaultHasher::new();
        hasher.write(key);
        hasher.write_u64(pre);
        let hash = hasher.finish();
        self.sum = self.sum.wrapping_add(hash);
        self.mixed ^= hash.rotate_left(29).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// An order-dependent digest of a label sequence.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Digest {
    count: u64,
    hash: u64,
}

impl Digest {
    fn add(&mut self, label: &Label) {
        self.count += 1;
        for field in [label.pre, label.size, u64::from(label.level), u64::from(label.path)] {
            self.hash = (self.hash ^ field).wrapping_mul(0x0100_0000_01b3).rotate_left(17);
        }
    }
}

/// Checks collection `name`; returns the problems found.
pub fn check(txn: &impl PageRead, name: &str) -> Result<Vec<String>> {
    let store = XmlStore::open(txn, name)?;
    let dict = store.dictionary();
    let mut problems = Vec::new();
    let walk = walk_documents(&store, dict, &mut problems)?;
    check_partitions(&store, dict.paths(), &walk.partitions, &mut problems)?;
    check_values(&store, dict, &walk, &mut problems)?;
    for Declaration { element: pre, prefix, .. } in store.declarations(0, u64::MAX)? {
        if pre >= store.len() || store.node(pre)?.kind != Kind::Element {
            problems.push(format!("namespace declaration {prefix:?} names node {pre}, which is not an element"));
        }
    }
    let documents = store.documents()?;
    if documents.len() as u64 != store.counters.documents || documents.len() != walk.document_pres.len() {
        problems.push(format!(
            "{} documents listed, {} counted, {} document nodes",
            documents.len(),
            store.counters.documents,
            walk.document_pres.len()
        ));
    }
    for (doc, pre) in documents.iter().zip(&walk.document_pres) {
        if doc.pre != *pre {
            problems.push(format!("document {} is listed at node {}, its document node is {pre}", doc.number, doc.pre));
        }
    }
    Ok(problems)
}

/// What the document-index walk learned.
#[derive(Default)]
struct Walk {
    partitions: HashMap<(Kind, u32), Digest>,
    eligible: HashMap<(Kind, u32), u64>,
    /// The (key, node) pairs the value index must hold.
    values: ValueDigest,
    key: Vec<u8>,
    document_pres: Vec<u64>,
}

/// An element (or document node) open during the walk.
struct Open {
    pre: u64,
    end: u64,
    level: u32,
    path: u32,
    kind: Kind,
    name: u32,
    value: Option<Vec<u8>>,
}

fn walk_documents<T: PageRead>(store: &XmlStore<'_, T>, dict: &Dictionary, problems: &mut Vec<String>) -> Result<Walk> {
    let mut walk = Walk::default();
    let mut counts = Counts { kinds: [0; 6], names: HashMap::new(), paths: vec![0; dict.paths.len()] };
    let mut stack: Vec<Open> = Vec::new();
    let mut cursor = store.nodes(0, u64::MAX)?;
    let mut expected = 0;
    let mut value = Vec::new();
    while let Some(node) = cursor.next_node()? {
        if node.pre != expected {
            problems.push(format!("node {expected} is missing (next is {})", node.pre));
            return Ok(walk);
        }
        expected += 1;
        while stack.last().is_some_and(|o| o.end < node.pre) {
            close(stack.pop().expect("checked"), &mut walk);
        }
        check_place(&node, stack.last(), dict, problems);
        counts.add(&node);
        let label = Label { pre: node.pre, size: node.size, level: node.level, path: node.path };
        walk.partitions.entry((node.kind, node.name)).or_default().add(&label);
        value.clear();
        cursor.value(&node, &mut value)?;
        note_value(&node, &value, &mut stack, &mut walk, problems);
        if node.kind.has_size() {
            if node.kind == Kind::Element
                && let Some(top) = stack.last_mut()
            {
                top.value = None;
            }
            if node.kind == Kind::Document {
                walk.document_pres.push(node.pre);
            }
            let (pre, end, kind, name) = (node.pre, node.pre + node.size, node.kind, node.name);
            stack.push(Open { pre, end, level: node.level, path: node.path, kind, name, value: Some(Vec::new()) });
        }
    }
    while let Some(open) = stack.pop() {
        close(open, &mut walk);
    }
    if expected != store.counters.next_pre {
        problems.push(format!("{expected} nodes in the document index, the head says {}", store.counters.next_pre));
    }
    counts.compare(store, dict, problems);
    Ok(walk)
}

/// Checks that a node sits where its record says: its parent and level are those of
/// the innermost open node (`top`; none for a document node), it ends inside that
/// node, and its path id is the path of its parent's path, kind and name.
fn check_place(node: &NodeRecord, top: Option<&Open>, dict: &Dictionary, problems: &mut Vec<String>) {
    let (parent, level, parent_path) = match top {
        Some(top) => (top.pre, top.level + 1, top.path),
        None => (node.pre, 0, 0),
    };
    let sound = (node.kind == Kind::Document) == top.is_none();
    if !sound || node.parent != parent || node.level != level {
        problems.push(format!(
            "node {} has parent {} level {}, expected {parent} level {level}",
            node.pre, node.parent, node.level
        ));
    }
    if let Some(top) = top
        && node.pre + node.size > top.end
    {
        problems.push(format!("node {} (size {}) overruns its parent {}", node.pre, node.size, top.pre));
    }
    let path_ok = match dict.paths.get(node.path as usize) {
        Some(p) if node.kind == Kind::Document => node.path == 0 && p.kind == Kind::Document,
        Some(p) => p.parent == parent_path && p.kind == node.kind && p.name == node.name,
        None => false,
    };
    if !path_ok {
        problems.push(format!("node {} has path id {}, which is not its path", node.pre, node.path));
    }
}

/// Checks that a node's value is UTF-8, adds an indexable attribute value to the pairs
/// the value index must hold, and a text to its element's string value.
fn note_value(node: &NodeRecord, value: &[u8], stack: &mut [Open], walk: &mut Walk, problems: &mut Vec<String>) {
    if std::str::from_utf8(value).is_err() {
        problems.push(format!("the value of node {} is not UTF-8", node.pre));
    }
    match node.kind {
        Kind::Attribute if indexable(&String::from_utf8_lossy(value)) => {
            *walk.eligible.entry((Kind::Attribute, node.name)).or_insert(0) += 1;
            value_key(&mut walk.key, node.name, Kind::Attribute, &String::from_utf8_lossy(value));
            walk.values.add(&walk.key, node.pre);
        }
        Kind::Text => {
            if let Some(Some(v)) = stack.last_mut().map(|o| &mut o.value) {
                v.extend_from_slice(value);
            }
        }
        _ => {}
    }
}

/// Nodes counted by kind, by (kind, name) and by path during the walk.
struct Counts {
    kinds: [u64; 6],
    names: HashMap<(Kind, u32), u64>,
    paths: Vec<u64>,
}

impl Counts {
    fn add(&mut self, node: &NodeRecord) {
        self.kinds[node.kind as usize] += 1;
        *self.names.entry((node.kind, node.name)).or_insert(0) += 1;
        if let Some(count) = self.paths.get_mut(node.path as usize) {
            *count += 1;
        }
    }

    /// Checks them against the head's counts by kind and the dictionary's by name and path.
    fn compare<T: PageRead>(&self, store: &XmlStore<'_, T>, dict: &Dictionary, problems: &mut Vec<String>) {
        if self.kinds != store.counters.nodes {
            problems.push(format!("node counts by kind {:?}, the head says {:?}", self.kinds, store.counters.nodes));
        }
        if self.names != dict.counts {
            problems.push("per-name counts differ from the document index".to_owned());
        }
        if self.paths.iter().zip(&dict.paths).any(|(n, p)| *n != p.count) {
            problems.push("path-summary counts differ from the document index".to_owned());
        }
    }
}

/// Accounts for a closed element's string value.
fn close(open: Open, walk: &mut Walk) {
    if open.kind == Kind::Element
        && let Some(value) = open.value
        && indexable(&String::from_utf8_lossy(&value))
    {
        *walk.eligible.entry((Kind::Element, open.name)).or_insert(0) += 1;
        value_key(&mut walk.key, open.name, Kind::Element, &String::from_utf8_lossy(&value));
        walk.values.add(&walk.key, open.pre);
    }
}

fn check_partitions<T: PageRead>(
    store: &XmlStore<'_, T>,
    paths: Paths<'_>,
    expected: &HashMap<(Kind, u32), Digest>,
    problems: &mut Vec<String>,
) -> Result<()> {
    let mut found: HashMap<(Kind, u32), Digest> = HashMap::new();
    let mut last: HashMap<(Kind, u32), u64> = HashMap::new();
    let mut labels = Vec::new();
    for entry in store.part.range(Bound::Unbounded, Bound::Unbounded) {
        let (key, block) = entry?;
        let Some((kind, name, first)) = split_part_key(&key) else {
            problems.push(format!("partition key {key:?} is malformed"));
            continue;
        };
        labels.clear();
        if let Err(reason) = decode_part_block(kind, first, &block, paths, &mut labels) {
            problems.push(format!("partition block {first} of {kind:?} {name}: {reason}"));
            continue;
        }
        let digest = found.entry((kind, name)).or_default();
        for label in &labels {
            if last.get(&(kind, name)).is_some_and(|&l| l >= label.pre) {
                problems.push(format!("partition {kind:?} {name} is out of document order at {}", label.pre));
            }
            last.insert((kind, name), label.pre);
            digest.add(label);
        }
    }
    if &found != expected {
        let differing = expected.keys().chain(found.keys()).filter(|k| expected.get(k) != found.get(k)).count();
        problems.push(format!("{differing} partition lists differ from the document index"));
    }
    Ok(())
}

fn check_values<T: PageRead>(
    store: &XmlStore<'_, T>,
    dict: &Dictionary,
    walk: &Walk,
    problems: &mut Vec<String>,
) -> Result<()> {
    let eligible = &walk.eligible;
    let mut strings: HashMap<(Kind, u32), u64> = HashMap::new();
    let mut found = ValueDigest::default();
    let mut previous: Option<(Vec<u8>, u64)> = None;
    let mut node_problems = Vec::new();
    store.scan_values(Bound::Unbounded, Bound::Unbounded, &mut |key, pres| {
        let first = pres.first().copied().unwrap_or(0);
        if previous.as_ref().is_some_and(|(p, last)| p.as_slice() > key || (p == key && *last >= first)) {
            node_problems.push(format!("value-index key {key:?} is out of order"));
        }
        previous = Some((key.to_vec(), pres.last().copied().unwrap_or(0)));
        let Some(parsed) = parse_value_key(key) else {
            node_problems.push(format!("value-index key {key:?} is malformed"));
            return Ok(());
        };
        if parsed.number.is_none() && !xpath_number(&String::from_utf8_lossy(parsed.text)).is_nan() {
            node_problems.push(format!("value-index key {key:?} holds a number as a string"));
        }
        for &pre in pres {
            found.add(key, pre);
        }
        *strings.entry((parsed.kind, parsed.name)).or_insert(0) += pres.len() as u64;
        Ok(())
    })?;
    if found != walk.values {
        node_problems.push("the value index's (value, node) pairs differ from the document index's".to_owned());
    }
    problems.extend(node_problems);
    let nonzero =
        |m: &HashMap<(Kind, u32), u64>| m.iter().filter(|e| *e.1 > 0).map(|(k, v)| (*k, *v)).collect::<HashMap<_, _>>();
    if nonzero(&strings) != nonzero(eligible) {
        problems.push("the value index does not hold exactly the eligible values".to_owned());
    }
    if nonzero(&dict.indexed) != nonzero(eligible) {
        problems.push("the dictionary's indexed counts differ from the eligible values".to_owned());
    }
    Ok(())
}

/// A decoded value-index key.
struct ValueKey<'a> {
    name: u32,
    kind: Kind,
    text: &'a [u8],
    number: Option<f64>,
}

fn parse_value_key(key: &[u8]) -> Option<ValueKey<'_>> {
    let tag = *key.first()?;
    let name = u32::from_be_bytes(key.get(1..5)?.try_into().ok()?);
    let kind = Kind::from_code(*key.get(5)?)?;
    let body = key.get(6..)?;
    match tag {
        b's' => Some(ValueKey { name, kind, text: body.strip_suffix(&[0])?, number: None }),
        b'f' => Some(ValueKey { name, kind, text: &[], number: Some(f64_from_key(body.try_into().ok()?)) }),
        _ => None,
    }
}
