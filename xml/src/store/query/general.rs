//! The store as a [`Tree`] for the full XPath 1.0 evaluator (`xpath/eval.rs`): every
//! axis as label arithmetic over the partition index and the document index, and the
//! structural engine behind the shortcuts.
//!
//! A node is its [`Label`] (pre, size, level, path). From a node `n`:
//! - **child / descendant / attribute**: the labels of the test's partitions in
//!   `n.pre+1 ..= n.pre+n.size` (one more level for child and attribute), read with a
//!   seek; a test without a name (`*`, `node()`, `comment()`) reads the document index
//!   instead, stepping over the children's subtrees on the child axis. The path
//!   summary refuses a child step no child path of `n` passes before anything is read;
//!   a partition mostly made of other paths' labels is read through the document index
//!   the same way.
//! - **parent / ancestor**: the parent pre of the document index's record, up the chain.
//! - **siblings**: the parent's child range before or after `n`'s subtree, at `n`'s level.
//! - **following / preceding**: the partitions or the document index over the rest of
//!   `n`'s document before or after `n`, ancestors and attributes left out.
//! - `//x`, `//@x`: the descendants of the context in the test's partitions, in one read
//!   ([`Tree::fused_descendants`]).
//!
//! Absolute paths hand their longest structural prefix to the join engine
//! (`subset::lower_prefix`), and `count()` of a structural path reads the summary when
//! the plan allows: the structural part of a query is still answered by joins.
//!
//! Read next: `../../xpath/eval.rs`, `../../xpath/subset.rs`.

use std::collections::HashMap;

use super::exec::Exec;
use super::paths::local_name;
use super::plan::Plan;
use super::value::ValueReader;
use crate::error::Result;
use crate::store::format::Kind;
use crate::store::record::{Label, NodeRecord};
use crate::store::{PartitionCursor, XmlStore};
use crate::xpath::ast::{LocationPath, Query, Span};
use crate::xpath::eval::Tree;
use crate::xpath::expr::{Axis, Path, Test};
use crate::xpath::subset;
use quiredb_engine::PageRead;

/// A partition holding this many times more labels than the child paths wanted is
/// read through the document index instead.
const PARTITION_DILUTION: u64 = 16;

/// The pre range a reverse axis reads from a node ([`StoreTree::axis_span`]).
enum AxisRange {
    /// `first..=last`, at `level` when the axis fixes it (siblings).
    Range {
        first: u64,
        last: u64,
        level: Option<u32>,
    },
    Empty,
    /// An axis read otherwise (parent, ancestors).
    NoRange,
}

/// The store seen by the evaluator, with what it caches across the evaluation.
pub struct StoreTree<'s, 't, T: PageRead> {
    store: &'s XmlStore<'t, T>,
    documents: Vec<Label>,
    /// Name ids by local name.
    names: HashMap<String, Vec<u32>>,
    /// Structural plans by query text, with their buffers.
    plans: HashMap<String, Plan>,
    exec: Exec,
    /// Node records and string values, one document block cached.
    values: ValueReader,
    /// One cursor per partition read so far, moved by seeks.
    cursors: HashMap<(Kind, u32), PartitionCursor<'s, 't, T>>,
    /// Most nodes a read of one range needs (see [`Tree::axis_first`]).
    limit: usize,
    bytes: Vec<u8>,
    /// Partition blocks decoded by [`Tree::axis_last`].
    scratch: Vec<Label>,
}

impl<'s, 't, T: PageRead> StoreTree<'s, 't, T> {
    pub fn new(store: &'s XmlStore<'t, T>) -> Self {
        StoreTree {
            store,
            documents: Vec::new(),
            names: HashMap::new(),
            plans: HashMap::new(),
            exec: Exec::default(),
            values: ValueReader::default(),
            cursors: HashMap::new(),
            limit: usize::MAX,
            bytes: Vec::new(),
            scratch: Vec::new(),
        }
    }

    fn kind(&self, label: &Label) -> Kind {
        self.store.dictionary().paths.get(label.path as usize).map_or(Kind::Document, |p| p.kind)
    }

    fn label(&mut self, pre: u64) -> Result<Label> {
        if pre >= self.store.len() {
            return self.store.node(pre).map(|r| to_label(&r));
        }
        Ok(to_label(&self.values.record(self.store, pre)?))
    }

    fn parent(&mut self, label: &Label) -> Result<Option<Label>> {
        if label.level == 0 {
            return Ok(None);
        }
        let record = self.values.record(self.store, label.pre)?;
        Ok(Some(self.label(record.parent)?))
    }

    /// Pres of the attributes named `attribute` under `root` whose value is one of
    /// `tokens` (sorted): from the value index when it holds every value of the name,
    /// else from the name's partition over `root`'s subtree.
    fn attributes_valued(&mut self, attribute: u32, tokens: &[&str], root: &Label, found: &mut Vec<u64>) -> Result<()> {
        let last = root.pre + root.size;
        if self.store.value_index_complete(Kind::Attribute, attribute) {
            for token in tokens {
                found.extend(self.store.lookup_string(attribute, Kind::Attribute, token)?);
            }
            found.retain(|&pre| root.pre < pre && pre <= last);
            return Ok(());
        }
        let mut cursor = self.store.partition(Kind::Attribute, attribute, root.pre)?;
        let mut value = Vec::new();
        while let Some(label) = cursor.next_label()?.filter(|l| l.pre <= last) {
            value.clear();
            self.values.string_value(self.store, label.pre, &mut value)?;
            if tokens.binary_search(&std::str::from_utf8(&value).unwrap_or_default()).is_ok() {
                found.push(label.pre);
            }
        }
        Ok(())
    }

    /// The labels of the nodes on `paths` up to pre `last`, in document order, when
    /// reading their partitions costs less than `budget` labels.
    fn path_labels(&mut self, paths: &[u32], last: u64, budget: u64) -> Result<Option<Vec<Label>>> {
        let dict = self.store.dictionary();
        let mut parts: Vec<(Kind, u32)> = paths
            .iter()
            .filter(|&&p| p != 0)
            .map(|&p| (dict.paths[p as usize].kind, dict.paths[p as usize].name))
            .collect();
        parts.sort_unstable_by_key(|&(kind, name)| (kind as u8, name));
        parts.dedup();
        let cost: u64 = parts.iter().map(|key| dict.counts.get(key).copied().unwrap_or(0)).sum();
        if cost > budget {
            return Ok(None);
        }
        let mut out = Vec::new();
        if paths.contains(&0) {
            self.load_documents()?;
            out.extend(self.documents.iter().filter(|d| d.pre <= last));
        }
        for (kind, name) in parts {
            let mut cursor = self.store.partition(kind, name, 0)?;
            while let Some(label) = cursor.next_label()? {
                if label.pre > last {
                    break;
                }
                if paths.binary_search(&label.path).is_ok() {
                    out.push(label);
                }
            }
        }
        out.sort_unstable_by_key(|l| l.pre);
        Ok(Some(out))
    }

    fn ids(&mut self, name: &str) -> &[u32] {
        if !self.names.contains_key(name) {
            let dict = self.store.dictionary();
            let ids = (1..dict.names.len() as u32).filter(|&id| dict.name_passes(id, name)).collect();
            self.names.insert(name.to_string(), ids);
        }
        &self.names[name]
    }

    /// Whether a node passes `test`, `attribute` saying the axis's principal kind.
    fn passes(&self, test: &Test, label: &Label, attribute: bool) -> bool {
        let kind = self.kind(label);
        let dict = self.store.dictionary();
        let id = dict.paths.get(label.path as usize).map(|p| p.name);
        let name = || id.and_then(|id| dict.names.get(id as usize));
        let principal = if attribute { Kind::Attribute } else { Kind::Element };
        match test {
            Test::Name(want) => kind == principal && id.is_some_and(|id| dict.name_passes(id, want)),
            Test::Any => kind == principal,
            Test::Node => attribute == (kind == Kind::Attribute),
            Test::Text => kind == Kind::Text,
            Test::Comment => kind == Kind::Comment,
            Test::Pi(target) => kind == Kind::Pi && target.as_ref().is_none_or(|t| name().is_some_and(|n| n == t)),
        }
    }

    /// Whether a node passes `test` on the self, descendant-or-self or ancestor-or-self
    /// axis, whose principal node type is element (XPath 1.0 §2.3): an attribute passes
    /// `node()` only, never a name or `*` (`@id/self::id` is empty, as in lxml).
    fn self_passes(&self, test: &Test, label: &Label) -> bool {
        if self.kind(label) == Kind::Attribute {
            return *test == Test::Node;
        }
        self.passes(test, label, false)
    }

    /// The partitions holding every node that passes `test`, or `None` when the test
    /// has no name and the document index must be read.
    fn partitions(&mut self, test: &Test, attribute: bool) -> Option<Vec<(Kind, u32)>> {
        let principal = if attribute { Kind::Attribute } else { Kind::Element };
        match test {
            Test::Name(name) => Some(self.ids(name).iter().map(|&id| (principal, id)).collect()),
            Test::Text if !attribute => Some(vec![(Kind::Text, 0)]),
            Test::Comment if !attribute => Some(vec![(Kind::Comment, 0)]),
            Test::Pi(Some(target)) if !attribute => {
                Some(self.store.dictionary().ids.get(target.as_str()).map(|&id| (Kind::Pi, id)).into_iter().collect())
            }
            Test::Any | Test::Node => None,
            // Every target's partition: a document without PIs reads none (the
            // document index, read instead, made `//following::processing-instruction()`
            // quadratic in the document's size).
            Test::Pi(None) if !attribute => {
                let mut parts: Vec<_> =
                    self.store.dictionary().counts.keys().filter(|(kind, _)| *kind == Kind::Pi).copied().collect();
                parts.sort_unstable();
                Some(parts)
            }
            Test::Text | Test::Comment | Test::Pi(_) => Some(Vec::new()),
        }
    }

    /// Appends the nodes in `first..=last` that pass `test` (at `level` when given),
    /// in document order.
    /// `parent` is the node whose children are wanted when `level` is given.
    fn range(
        &mut self,
        test: &Test,
        attribute: bool,
        span: (u64, u64),
        level: Option<(u32, &Label)>,
        out: &mut Vec<Label>,
    ) -> Result<()> {
        let (first, last) = span;
        if first > last {
            return Ok(());
        }
        let start = out.len();
        let parent = level.map(|(_, p)| p);
        let level = level.map(|(l, _)| l);
        match self.partitions(test, attribute) {
            Some(parts) if parent.is_none_or(|p| !self.diluted(&parts, p)) => {
                for &(kind, name) in &parts {
                    let mut cursor = match self.cursors.remove(&(kind, name)) {
                        Some(mut cursor) => {
                            cursor.seek(first)?;
                            cursor
                        }
                        None => self.store.partition(kind, name, first)?,
                    };
                    let limit = if parts.len() == 1 { self.limit } else { usize::MAX };
                    while let Some(label) = cursor.next_label()? {
                        if label.pre > last || out.len() - start >= limit {
                            break;
                        }
                        if level.is_none_or(|l| l == label.level) && self.passes(test, &label, attribute) {
                            out.push(label);
                        }
                    }
                    self.cursors.insert((kind, name), cursor);
                }
                if parts.len() > 1 {
                    out[start..].sort_unstable_by_key(|l| l.pre);
                }
            }
            _ => self.scan(test, attribute, (first, last), level, out)?,
        }
        Ok(())
    }

    /// Whether the partitions are expected to hold many more labels inside `node`'s
    /// subtree than `node` has children: the child step then reads the document index.
    fn diluted(&self, parts: &[(Kind, u32)], node: &Label) -> bool {
        let dict = self.store.dictionary();
        let count = |path: u32| dict.paths.get(path as usize).map_or(0, |p| p.count);
        let total: u64 = parts.iter().map(|key| dict.counts.get(key).copied().unwrap_or(0)).sum();
        let in_subtree = total as f64 * (node.size + 1) as f64 / self.store.len().max(1) as f64;
        let children: u64 = dict.children(node.path).map(count).sum();
        let per_node = children as f64 / count(node.path).max(1) as f64;
        in_subtree > PARTITION_DILUTION as f64 * (per_node + 1.0)
    }

    /// The document index read over `first..=last`, node by node through the cached
    /// block, skipping the subtrees below `level` when one level is wanted.
    fn scan(
        &mut self,
        test: &Test,
        attribute: bool,
        span: (u64, u64),
        level: Option<u32>,
        out: &mut Vec<Label>,
    ) -> Result<()> {
        let (mut pre, last) = span;
        let start = out.len();
        while pre <= last && out.len() - start < self.limit {
            let label = to_label(&self.values.record(self.store, pre)?);
            if level.is_none_or(|l| l == label.level) && self.passes(test, &label, attribute) {
                out.push(label);
            }
            pre += if level.is_some_and(|l| l == label.level) { label.size + 1 } else { 1 };
        }
        Ok(())
    }

    /// The document node whose document holds `label`.
    fn document_of(&mut self, label: &Label) -> Result<Label> {
        self.load_documents()?;
        let at = self.documents.partition_point(|d| d.pre <= label.pre);
        Ok(self.documents[at.saturating_sub(1)])
    }

    fn load_documents(&mut self) -> Result<()> {
        if self.documents.is_empty() {
            for document in self.store.documents()? {
                let label = self.label(document.pre)?;
                self.documents.push(label);
            }
        }
        Ok(())
    }

    fn siblings(&mut self, test: &Test, node: &Label, following: bool, out: &mut Vec<Label>) -> Result<()> {
        if self.kind(node) == Kind::Attribute {
            return Ok(());
        }
        let Some(parent) = self.parent(node)? else { return Ok(()) };
        let (first, last) = if following {
            (node.pre + node.size + 1, parent.pre + parent.size)
        } else {
            (parent.pre + 1, node.pre.saturating_sub(1))
        };
        self.range(test, false, (first, last), Some((node.level, &parent)), out)?;
        Ok(())
    }

    /// The pre range of the elements, texts, comments or PIs on a reverse axis that
    /// reads a range (preceding, preceding-sibling) from `node`.
    fn axis_span(&mut self, axis: Axis, node: &Label) -> Result<AxisRange> {
        Ok(match axis {
            Axis::PrecedingSibling if self.kind(node) == Kind::Attribute => AxisRange::Empty,
            Axis::PrecedingSibling => match self.parent(node)? {
                None => AxisRange::Empty,
                Some(parent) => AxisRange::Range {
                    first: parent.pre + 1,
                    last: node.pre.saturating_sub(1),
                    level: Some(node.level),
                },
            },
            Axis::Preceding => {
                let document = self.document_of(node)?;
                AxisRange::Range { first: document.pre + 1, last: node.pre.saturating_sub(1), level: None }
            }
            _ => AxisRange::NoRange,
        })
    }

    fn ancestors(&mut self, test: &Test, node: &Label, with_self: bool, out: &mut Vec<Label>) -> Result<()> {
        let start = out.len();
        if with_self && self.self_passes(test, node) {
            out.push(*node);
        }
        let mut at = *node;
        while let Some(parent) = self.parent(&at)? {
            if self.passes(test, &parent, false) {
                out.push(parent);
            }
            at = parent;
        }
        out[start..].reverse();
        Ok(())
    }

    /// The expression and the join plans of its structural parts, with their rows and
    /// times so far.
    pub fn explain(&self, expr: &crate::xpath::expr::Expr) -> String {
        let mut out = format!("general evaluator (XPath 1.0): {expr}\n");
        for (text, plan) in &self.plans {
            out.push_str(&format!("structural part {text}:\n"));
            for line in plan.explain(&self.store.dictionary().names).lines() {
                out.push_str(&format!("  {line}\n"));
            }
        }
        out
    }

    /// The join plan of a structural path (compiled once per text) and the buffers to
    /// run it with.
    fn plan(&mut self, prefix: LocationPath) -> (&Plan, &mut Exec) {
        let query = Query { paths: vec![prefix], span: Span::default() };
        let store = self.store;
        let plan = self.plans.entry(query.to_string()).or_insert_with(|| Plan::compile(store, &query));
        (plan, &mut self.exec)
    }
}

/// Keeps `out[..start]` and the later labels `keep` accepts, in order.
fn retain_from(out: &mut Vec<Label>, start: usize, keep: impl Fn(&Label) -> bool) {
    let mut kept = start;
    for i in start..out.len() {
        if keep(&out[i]) {
            out[kept] = out[i];
            kept += 1;
        }
    }
    out.truncate(kept);
}

fn to_label(record: &NodeRecord) -> Label {
    Label { pre: record.pre, size: record.size, level: record.level, path: record.path }
}

impl<T: PageRead> Tree for StoreTree<'_, '_, T> {
    type Node = Label;
    type Key = u64;

    fn key(&self, node: Label) -> u64 {
        node.pre
    }

    fn roots(&mut self) -> Result<Vec<Label>> {
        self.load_documents()?;
        Ok(self.documents.clone())
    }

    fn root_of(&mut self, node: Label) -> Result<Label> {
        self.document_of(&node)
    }

    fn axis(&mut self, axis: Axis, test: &Test, node: Label, out: &mut Vec<Label>) -> Result<()> {
        let is_attribute = self.kind(&node) == Kind::Attribute;
        let (first, last) = (node.pre + 1, node.pre + node.size);
        match axis {
            Axis::SelfAxis => {
                if self.self_passes(test, &node) {
                    out.push(node);
                }
            }
            Axis::Child | Axis::Descendant | Axis::DescendantOrSelf if is_attribute => {
                if axis == Axis::DescendantOrSelf && self.self_passes(test, &node) {
                    out.push(node);
                }
            }
            Axis::Child => {
                if self.child_paths_pass(test, &node) {
                    self.range(test, false, (first, last), Some((node.level + 1, &node)), out)?;
                }
            }
            Axis::Descendant | Axis::DescendantOrSelf => {
                if axis == Axis::DescendantOrSelf && self.passes(test, &node, false) {
                    out.push(node);
                }
                self.range(test, false, (first, last), None, out)?;
            }
            Axis::Attribute if !is_attribute => self.attributes(test, &node, out)?,
            Axis::Attribute => {}
            Axis::Parent => {
                if let Some(parent) = self.parent(&node)?
                    && self.passes(test, &parent, false)
                {
                    out.push(parent);
                }
            }
            Axis::Ancestor | Axis::AncestorOrSelf => self.ancestors(test, &node, axis == Axis::AncestorOrSelf, out)?,
            Axis::FollowingSibling | Axis::PrecedingSibling => {
                self.siblings(test, &node, axis == Axis::FollowingSibling, out)?
            }
            Axis::Following => {
                let document = self.document_of(&node)?;
                self.range(test, false, (node.pre + node.size + 1, document.pre + document.size), None, out)?;
            }
            Axis::Preceding => {
                let document = self.document_of(&node)?;
                let start = out.len();
                self.range(test, false, (document.pre + 1, node.pre.saturating_sub(1)), None, out)?;
                // Ancestors end at or after the node; attributes are on no such axis.
                retain_from(out, start, |l| l.pre + l.size < node.pre);
            }
        }
        Ok(())
    }

    fn axis_first(&mut self, axis: Axis, test: &Test, node: Label, n: usize, out: &mut Vec<Label>) -> Result<()> {
        let start = out.len();
        // Ranges stop after `n` candidates: every candidate they keep is a result, but
        // on the preceding axis, whose range holds the ancestors too (one per level).
        self.limit = match axis {
            Axis::Following | Axis::FollowingSibling | Axis::PrecedingSibling | Axis::Child | Axis::Descendant => n,
            Axis::Preceding => n.saturating_add(node.level as usize),
            _ => usize::MAX,
        };
        let result = self.axis(axis, test, node, out);
        self.limit = usize::MAX;
        result?;
        out.truncate(start.saturating_add(n));
        Ok(())
    }

    fn axis_last(&mut self, axis: Axis, test: &Test, node: Label, n: usize, out: &mut Vec<Label>) -> Result<()> {
        let part = match self.partitions(test, false) {
            Some(parts) if parts.len() == 1 => Some(parts[0]),
            _ => None,
        };
        let span = if part.is_some() { self.axis_span(axis, &node)? } else { AxisRange::NoRange };
        let (part, first, last, level) = match (part, span) {
            (Some(part), AxisRange::Range { first, last, level }) if n > 0 && first <= last => {
                (part, first, last, level)
            }
            (Some(_), AxisRange::Range { .. } | AxisRange::Empty) => return Ok(()),
            _ => {
                let start = out.len();
                self.axis(axis, test, node, out)?;
                crate::xpath::eval::keep_last(out, start, n);
                return Ok(());
            }
        };
        // Backwards through the partition from the node: the nearest `n` at its level
        // (siblings) or that end before it (on the preceding axis: not its ancestors).
        let start = out.len();
        let mut labels = std::mem::take(&mut self.scratch);
        let store = self.store;
        store.partition_backward(part, last, &mut labels, &mut |label| {
            if label.pre < first {
                return false;
            }
            let wanted = match axis {
                Axis::Preceding => label.pre + label.size < node.pre,
                _ => level.is_none_or(|l| l == label.level),
            };
            if wanted && self.passes(test, &label, false) {
                out.push(label);
            }
            out.len() - start < n
        })?;
        self.scratch = labels;
        out[start..].reverse();
        Ok(())
    }

    fn axis_union(&mut self, axis: Axis, test: &Test, contexts: &[Label], out: &mut Vec<Label>) -> Result<bool> {
        if !matches!(axis, Axis::Following | Axis::Preceding) {
            return Ok(false);
        }
        // Per document: the following axis of the context whose subtree ends first holds
        // every other context's (each is the range after the context's subtree); the
        // preceding axis of the last context holds every earlier one's.
        let mut reach: std::collections::BTreeMap<u64, Label> = std::collections::BTreeMap::new();
        for context in contexts {
            let document = self.document_of(context)?;
            let best = reach.entry(document.pre).or_insert(*context);
            let better = match axis {
                Axis::Following => context.pre + context.size < best.pre + best.size,
                _ => context.pre > best.pre,
            };
            if better {
                *best = *context;
            }
        }
        for node in reach.into_values() {
            self.axis(axis, test, node, out)?;
        }
        Ok(true)
    }

    fn axis_nonempty(&mut self, axis: Axis, test: &Test, node: Label) -> Result<Option<bool>> {
        // Every node of a path has the ancestors of the path: the summary decides.
        let dict = self.store.dictionary();
        let on_path = |path: u32| Label { pre: 0, size: 0, level: 0, path };
        let parent = |path: u32| dict.paths.get(path as usize).map_or(0, |p| p.parent);
        Ok(match axis {
            Axis::Parent => Some(node.level > 0 && self.passes(test, &on_path(parent(node.path)), false)),
            Axis::Ancestor | Axis::AncestorOrSelf => {
                let mut found = axis == Axis::AncestorOrSelf && self.self_passes(test, &node);
                let mut path = node.path;
                while !found && path != 0 {
                    path = parent(path);
                    found = self.passes(test, &on_path(path), false);
                }
                Some(found)
            }
            Axis::Child if !self.child_paths_pass(test, &node) => Some(false),
            _ => None,
        })
    }

    fn fused_descendants(&mut self, axis: Axis, test: &Test, node: Label, out: &mut Vec<Label>) -> Result<()> {
        if self.kind(&node) == Kind::Attribute {
            return Ok(());
        }
        let attribute = axis == Axis::Attribute;
        self.range(test, attribute, (node.pre + 1, node.pre + node.size), None, out)?;
        Ok(())
    }

    fn parents(&mut self, nodes: &[Label], out: &mut Vec<Option<u64>>) -> Result<()> {
        let dict = self.store.dictionary();
        let mut paths: Vec<u32> = nodes
            .iter()
            .filter(|l| l.level > 0)
            .map(|l| dict.paths.get(l.path as usize).map_or(0, |p| p.parent))
            .collect();
        paths.sort_unstable();
        paths.dedup();
        let last = nodes.last().map_or(0, |l| l.pre);
        let budget = 4 * nodes.len() as u64 + 1024;
        let Some(candidates) = self.path_labels(&paths, last, budget)? else {
            for node in nodes {
                out.push(self.parent(node)?.map(|p| p.pre));
            }
            return Ok(());
        };
        // A stack of the candidate parents that contain the current node.
        let (mut stack, mut next) = (Vec::<Label>::new(), 0);
        for node in nodes {
            while let Some(parent) = candidates.get(next).filter(|p| p.pre < node.pre) {
                while stack.last().is_some_and(|top| !top.contains(parent)) {
                    stack.pop();
                }
                stack.push(*parent);
                next += 1;
            }
            while stack.last().is_some_and(|top| !top.contains(node)) {
                stack.pop();
            }
            out.push(stack.iter().rev().find(|p| p.level + 1 == node.level).map(|p| p.pre));
        }
        Ok(())
    }

    fn string_value(&mut self, node: Label, out: &mut String) -> Result<()> {
        self.bytes.clear();
        self.values.string_value(self.store, node.pre, &mut self.bytes)?;
        match std::str::from_utf8(&self.bytes) {
            Ok(text) => out.push_str(text),
            Err(_) => out.push_str(&String::from_utf8_lossy(&self.bytes)),
        }
        Ok(())
    }

    fn name(&mut self, node: Label, local: bool) -> Result<String> {
        let dict = self.store.dictionary();
        let info = dict.paths.get(node.path as usize);
        let name = match info {
            Some(p) if matches!(p.kind, Kind::Element | Kind::Attribute | Kind::Pi) => {
                dict.names.get(p.name as usize).map_or("", String::as_str)
            }
            _ => "",
        };
        Ok(if local { local_name(name) } else { name }.to_string())
    }

    /// The ID attributes come from the dictionary's (element, attribute) pairs.
    fn elements_with_id(&mut self, root: Label, tokens: &[&str], out: &mut Vec<Label>) -> Result<()> {
        let pairs: Vec<(u32, u32)> = self.store.dictionary().id_attributes.iter().copied().collect();
        let mut attributes: Vec<u32> = pairs.iter().map(|&(_, attribute)| attribute).collect();
        attributes.sort_unstable();
        attributes.dedup();
        let mut found = Vec::new();
        for attribute in attributes {
            found.clear();
            self.attributes_valued(attribute, tokens, &root, &mut found)?;
            for &pre in &found {
                let label = self.label(pre)?;
                let Some(owner) = self.parent(&label)? else { continue };
                let name = self.store.dictionary().paths.get(owner.path as usize).map(|p| p.name);
                if name.is_some_and(|name| pairs.binary_search(&(name, attribute)).is_ok()) {
                    out.push(owner);
                }
            }
        }
        Ok(())
    }

    fn namespace_uri(&mut self, node: Label) -> Result<String> {
        let dict = self.store.dictionary();
        let Some(info) =
            dict.paths.get(node.path as usize).filter(|p| matches!(p.kind, Kind::Element | Kind::Attribute))
        else {
            return Ok(String::new());
        };
        if !dict.uris_known {
            return Err(self.store.without_uris(0));
        }
        Ok(dict.uris.get(info.name as usize).cloned().unwrap_or_default())
    }

    fn structural(&mut self, path: &Path) -> Result<Option<(Vec<Label>, usize)>> {
        let Some((prefix, steps)) = subset::lower_prefix(path) else { return Ok(None) };
        let store = self.store;
        let (plan, exec) = self.plan(prefix);
        let mut out = Vec::new();
        exec.run(store, plan, &mut out)?;
        Ok(Some((out, steps)))
    }

    fn count(&mut self, path: &Path) -> Result<Option<u64>> {
        let Some((prefix, steps)) = subset::lower_prefix(path) else { return Ok(None) };
        if steps != path.steps.len() {
            return Ok(None);
        }
        let store = self.store;
        let (plan, exec) = self.plan(prefix);
        Ok(Some(exec.count(store, plan)?))
    }
}

impl<T: PageRead> StoreTree<'_, '_, T> {
    /// Whether some child path of `node`'s path passes `test` (the summary says no
    /// child can otherwise).
    fn child_paths_pass(&self, test: &Test, node: &Label) -> bool {
        let dict = self.store.dictionary();
        dict.children(node.path).any(|path| {
            let label = Label { pre: 0, size: 0, level: 0, path };
            dict.paths.get(path as usize).is_some_and(|p| p.kind != Kind::Attribute) && self.passes(test, &label, false)
        })
    }

    /// The attributes of element `node` that pass `test`: they follow it directly.
    fn attributes(&mut self, test: &Test, node: &Label, out: &mut Vec<Label>) -> Result<()> {
        for pre in node.pre + 1..=node.pre + node.size {
            let record = self.values.record(self.store, pre)?;
            if record.kind != Kind::Attribute || record.parent != node.pre {
                break;
            }
            let label = to_label(&record);
            if self.passes(test, &label, true) {
                out.push(label);
            }
        }
        Ok(())
    }
}
