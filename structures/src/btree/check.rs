//! The B+tree invariant checker, run by tests after every batch and by `quire check`:
//! keys strictly ascending inside every node and within the bounds set by the parent,
//! keys sharing the node's skip bytes and prefixes equal to the 8 key bytes after them, cells inside the page and not
//! overlapping, garbage accounted exactly, all leaves at the same depth, the fill
//! policy of `mod.rs` (no underfull node that could merge with its chosen sibling),
//! sibling links equal to the in-order leaf sequence, the entry count equal to the
//! head's, blobs valid, and every page reachable once.

use super::node::{self, Value};
use super::{BTree, Head};
use crate::error::Result;
use quiredb_engine::{CatalogEntry, PageId, PageRead};
use std::collections::HashSet;

/// What the walk gathers.
#[derive(Default)]
struct Walk {
    problems: Vec<String>,
    pages: Vec<u64>,
    leaves: Vec<(u64, u64, u64)>,
    entries: u64,
    /// Nodes visited: one reached twice is not entered again (a corrupt tree whose
    /// children repeat would otherwise be walked exponentially often).
    nodes: HashSet<u64>,
}

/// Checks the tree of a catalog entry (for `check.rs`).
pub fn check_entry(txn: &impl PageRead, entry: &CatalogEntry) -> Result<Vec<String>> {
    match BTree::open_to_check(txn, entry) {
        Ok(tree) => check(&tree),
        Err(crate::Error::Corrupted { reason, .. }) => Ok(vec![reason]),
        Err(error) => Err(error),
    }
}

/// Checks every invariant of `tree`; returns the problems as sentences.
pub fn check<T: PageRead>(tree: &BTree<'_, T>) -> Result<Vec<String>> {
    let head: Head = tree.head.get();
    let mut walk = Walk::default();
    walk.pages.push(tree.head_page.0);
    visit(tree, &mut walk, head.root, head.height - 1, None, None, true)?;
    if walk.entries != head.len {
        walk.problems.push(format!("head says {} entries, leaves hold {}", head.len, walk.entries));
    }
    check_links(&mut walk);
    let distinct: HashSet<u64> = walk.pages.iter().copied().collect();
    if distinct.len() != walk.pages.len() {
        walk.problems.push(format!("{} pages are reachable more than once", walk.pages.len() - distinct.len()));
    }
    Ok(walk.problems)
}

fn check_links(walk: &mut Walk) {
    let leaves = &walk.leaves;
    for (i, &(id, prev, next)) in leaves.iter().enumerate() {
        let want_prev = if i == 0 { 0 } else { leaves[i - 1].0 };
        let want_next = leaves.get(i + 1).map_or(0, |leaf| leaf.0);
        if prev != want_prev || next != want_next {
            walk.problems
                .push(format!("leaf {id}: links ({prev}, {next}), in-order neighbours ({want_prev}, {want_next})"));
        }
    }
}

/// Checks node `id` at `level` with keys in `[low, high)`; returns its used bytes.
fn visit<T: PageRead>(
    tree: &BTree<'_, T>,
    walk: &mut Walk,
    id: u64,
    level: u32,
    low: Option<&[u8]>,
    high: Option<&[u8]>,
    is_root: bool,
) -> Result<usize> {
    walk.pages.push(id);
    if !walk.nodes.insert(id) {
        walk.problems.push(format!("node {id} is reachable more than once"));
        return Ok(0);
    }
    let page = tree.txn.page(PageId(id))?;
    let is_leaf = level == 0;
    let kind = if is_leaf { super::LEAF_PAGE } else { super::BRANCH_PAGE };
    let mut fail = |reason: String| walk.problems.push(format!("node {id}: {reason}"));
    if page.kind() != kind || u32::from(node::level(&page)) != level {
        fail(format!("kind {:?} level {} where a {kind:?} of level {level} belongs", page.kind(), node::level(&page)));
        return Ok(0);
    }
    if let Err(reason) = node::validate(&page, is_leaf).and_then(|()| check_cells(&page)) {
        fail(reason);
        return Ok(0);
    }
    let n = node::count(&page);
    if n == 0 && !is_root {
        fail("a non-root node is empty".to_owned());
    }
    let skip = node::skip(&page);
    let key_of = |i| node::key(&page, i).expect("check_cells checked every cell");
    let common = if n > 0 { key_of(0).get(..skip) } else { None };
    for i in 0..n {
        let key = key_of(i);
        if common.is_none() || key.get(..skip) != common {
            fail(format!("key {i} does not share the node's first {skip} bytes"));
        } else if node::key_prefix(node::tail(key, skip)) != node::prefix(&page, i) {
            fail(format!("prefix {i} does not match its key"));
        }
        if i > 0 && key_of(i - 1) >= key {
            fail(format!("keys {} and {i} are not ascending", i - 1));
        }
        if low.is_some_and(|low| key < low) || high.is_some_and(|high| key >= high) {
            fail(format!("key {i} is outside the bounds set by the parent"));
        }
    }
    let used = node::used_bytes(&page);
    if is_leaf {
        walk.leaves.push((id, node::prev(&page), node::next(&page)));
        walk.entries += n as u64;
        for i in 0..n {
            if let Value::Blob(blob) = node::value(&page, i).expect("check_cells checked every cell") {
                let problems = crate::blob::check(tree.txn, blob, &mut walk.pages)?;
                walk.problems.extend(problems.into_iter().map(|p| format!("node {id} entry {i}: {p}")));
            }
        }
        return Ok(used);
    }
    let keys: Vec<Vec<u8>> = (0..n).map(|i| key_of(i).to_vec()).collect();
    let children: Vec<u64> = (0..=n).map(|i| node::child(&page, i)).collect();
    drop(page);
    let mut sizes = Vec::with_capacity(children.len());
    for (i, &child) in children.iter().enumerate() {
        let child_low = if i == 0 { low } else { Some(keys[i - 1].as_slice()) };
        let child_high = if i == n { high } else { Some(keys[i].as_slice()) };
        sizes.push(visit(tree, walk, child, level - 1, child_low, child_high, false)?);
    }
    check_fill(tree, walk, id, &sizes);
    Ok(used)
}

/// No two adjacent children may both be under a quarter full (they would have been
/// merged by the removal that left the second one so).
fn check_fill<T: PageRead>(tree: &BTree<'_, T>, walk: &mut Walk, id: u64, sizes: &[usize]) {
    let quarter = tree.txn.payload_size() / 4;
    for (i, pair) in sizes.windows(2).enumerate() {
        if pair[0] > 0 && pair[1] > 0 && pair[0] < quarter && pair[1] < quarter {
            walk.problems.push(format!("node {id}: children {i} and {} are both under a quarter full", i + 1));
        }
    }
}

/// Cells lie inside the cell area, do not overlap, and garbage is exact.
fn check_cells(page: &[u8]) -> std::result::Result<(), String> {
    let n = node::count(page);
    let start = node::cell_start(page);
    let mut spans = Vec::with_capacity(n);
    for i in 0..n {
        spans.push(node::cell_span(page, i)?);
    }
    spans.sort_unstable();
    let mut live = 0;
    for pair in spans.windows(2) {
        if pair[0].0 + pair[0].1 > pair[1].0 {
            return Err(format!("cells at {} and {} overlap", pair[0].0, pair[1].0));
        }
    }
    for &(_, len) in &spans {
        live += len;
    }
    if live + node::garbage(page) != page.len() - start {
        return Err(format!("{live} live + {} garbage bytes != cell area {}", node::garbage(page), page.len() - start));
    }
    Ok(())
}

/// Shape and fill of a tree.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    /// Levels (1 = the root is a leaf).
    pub height: u32,
    /// Leaf pages.
    pub leaves: u64,
    /// Branch pages.
    pub branches: u64,
    /// Used bytes of all leaves over their capacity (0..=1).
    pub leaf_fill: f64,
}

/// Counts pages and leaf fill by walking the tree level by level.
pub fn stats<T: PageRead>(tree: &BTree<'_, T>) -> Result<Stats> {
    let head = tree.head.get();
    let mut level = vec![head.root];
    let mut branches = 0u64;
    let mut seen = HashSet::new();
    for _ in 1..head.height {
        let mut below = Vec::new();
        for &id in &level {
            let page = tree.node(id, false)?;
            below.extend((0..=node::count(&page)).map(|i| node::child(&page, i)));
        }
        if let Some(&twice) = below.iter().find(|&&id| !seen.insert(id)) {
            return Err(tree.at(twice)("node reachable more than once".to_owned()));
        }
        branches += level.len() as u64;
        level = below;
    }
    let mut used = 0usize;
    for &id in &level {
        used += node::used_bytes(&tree.node(id, true)?);
    }
    let capacity = level.len() * tree.txn.payload_size();
    Ok(Stats { height: head.height, leaves: level.len() as u64, branches, leaf_fill: used as f64 / capacity as f64 })
}
