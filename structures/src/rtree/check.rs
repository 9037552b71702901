//! The invariant checker of the R*-tree, run by tests after every batch and by
//! `quire check` through [`check_entry`]: every branch entry's box equals the union of
//! its child's entries, every non-root node holds `min..=max` entries (a branch root
//! at least 2), levels fall by one per step down and all leaves are at level 0, no
//! page is reached twice, and the head's entry and node counts are right.

use super::Core;
use super::coord::Coord;
use super::node::{Head, Layout, Node};
use crate::error::Result;
use quiredb_engine::{CatalogEntry, PageId, PageRead};
use std::collections::HashSet;

/// Problems reported at most (the rest are counted).
const MAX_PROBLEMS: usize = 64;

struct Walk<'a, T: PageRead, const D: usize, C: Coord> {
    txn: &'a T,
    tree: &'a Core<D, C>,
    seen: HashSet<u64>,
    leaf_entries: u64,
    problems: Vec<String>,
}

/// Checks `tree` (its node bounds as the catalog gives them).
pub(crate) fn check_tree<const D: usize, C: Coord>(txn: &impl PageRead, tree: &Core<D, C>) -> Result<Vec<String>> {
    if let Some(problem) = tree.bounds_problem(txn.payload_size()) {
        return Ok(vec![problem]);
    }
    let head = Head::load(txn, tree.head)?;
    let mut walk = Walk { txn, tree, seen: HashSet::new(), leaf_entries: 0, problems: Vec::new() };
    if head.points != tree.points {
        walk.problem(format!("head page says points = {}, the catalog {}", head.points, tree.points));
    }
    walk.node(PageId(head.root), head.root_level(), true)?;
    if walk.leaf_entries != head.len {
        walk.problem(format!("head counts {} entries, the leaves hold {}", head.len, walk.leaf_entries));
    }
    if walk.seen.len() as u64 != head.nodes {
        walk.problem(format!("head counts {} node pages, the walk found {}", head.nodes, walk.seen.len()));
    }
    Ok(walk.problems)
}

impl<T: PageRead, const D: usize, C: Coord> Walk<'_, T, D, C> {
    fn problem(&mut self, text: String) {
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(text);
        }
    }

    /// Checks node `id` (expected at `level`) and its subtree.
    fn node(&mut self, id: PageId, level: u16, is_root: bool) -> Result<Option<Node<D>>> {
        if !self.seen.insert(id.0) {
            self.problem(format!("node {id} is reached twice"));
            return Ok(None);
        }
        let form = self.tree.form(level);
        let node = match Layout::<D, C>::load_checked(self.txn, id, form) {
            Ok(node) => node,
            Err(error) => {
                self.problem(format!("node {id}: {error}"));
                return Ok(None);
            }
        };
        if node.level != level {
            self.problem(format!("node {id} has level {}, expected {level}", node.level));
            return Ok(None);
        }
        let count = node.entries.len();
        let low = if is_root { if level > 0 { 2 } else { 0 } } else { self.tree.fill(level) };
        if count < low || count > form.max {
            self.problem(format!("node {id} at level {level} holds {count} entries, outside {low}..={}", form.max));
        }
        if level == 0 {
            self.leaf_entries += count as u64;
            return Ok(Some(node));
        }
        for entry in &node.entries {
            let Some(child) = self.node(PageId(entry.id), level - 1, false)? else { continue };
            if child.bbox() != entry.rect {
                self.problem(format!("box of child {} in node {id} is not the union of the child's entries", entry.id));
            }
        }
        Ok(Some(node))
    }
}

/// Checks the R-tree of a catalog entry (dispatch on its stored dimensions and
/// coordinate type); trees of other dimensions than 1..=8 are reported, not checked.
pub fn check_entry(txn: &impl PageRead, entry: &CatalogEntry) -> Result<Vec<String>> {
    let p = super::parse_params(entry)?;
    macro_rules! dispatch {
        ($($d:literal),*) => {
            match (p.dims, p.coord) {
                $(($d, 8) => check_tree(txn, &Core::<$d, f64>::from_entry(entry, &p)),
                  ($d, 4) => check_tree(txn, &Core::<$d, f32>::from_entry(entry, &p)),)*
                (dims, coord) => Ok(vec![format!("R-tree with {dims} dimensions and coordinate code {coord} is not checked")]),
            }
        };
    }
    dispatch!(1, 2, 3, 4, 5, 6, 7, 8)
}

impl<const D: usize, C: Coord> Core<D, C> {
    /// Leaf entries of the whole tree as `(box, payload)` (for tests and tools).
    pub fn entries(&self, txn: &impl PageRead) -> Result<Vec<(super::Rect<D>, u64)>> {
        let mut out = Vec::new();
        self.visit_window(
            txn,
            &super::Rect::new([f64::NEG_INFINITY; D], [f64::INFINITY; D]),
            super::WindowMode::Intersects,
            |id, rect| out.push((*rect, id)),
        )?;
        Ok(out)
    }
}
