//! Placing an entry in a full leaf by evening it out with a sibling instead of a
//! split (the B*-tree idea, in its two-node form): when the leaf and its right (else
//! left) sibling under the same parent hold, with the new entry, at most
//! [`SHIFT_FILL`] of two pages, their entries are divided evenly by bytes and the
//! parent's separator between them replaced. Random inserts then leave leaves about
//! 80% full instead of the 70% of split-only trees. The two nodes are rebuilt from
//! copies of the pages, without per-cell allocations.

use super::BTree;
use super::node;
use super::node_write;
use super::write::{Path, branch_cell, separator, split_point};
use crate::error::Result;
use quiredb_engine::{PageId, PageRead, WriteTxn};

/// Most a full leaf and its sibling may be filled (numerator, denominator) when a new
/// entry is placed by evening them out instead of a split.
const SHIFT_FILL: (usize, usize) = (7, 8);

impl<'db> BTree<'_, WriteTxn<'db>> {
    /// Inserts `cell` at `i` of the full leaf `leaf_id` at the end of `path` by
    /// evening it out with a sibling; false (nothing changed) when no sibling has room
    /// or the parent cannot take the new separator.
    pub(super) fn shift_to_sibling(&self, path: &Path, leaf_id: u64, i: usize, cell: &[u8]) -> Result<bool> {
        let Some(&(parent, index)) = path.last() else { return Ok(false) };
        let (right, left) = {
            let page = self.node(parent, false)?;
            let right = (index < node::count(&page)).then(|| node::child(&page, index + 1));
            let left = index.checked_sub(1).map(|j| node::child(&page, j));
            (right, left)
        };
        let leaf = self.node(leaf_id, true)?.to_vec();
        if let Some(right) = right
            && self.even_out(parent, index, (leaf_id, &leaf), right, (false, i), cell)?
        {
            return Ok(true);
        }
        if let Some(left) = left {
            return self.even_out(parent, index - 1, (leaf_id, &leaf), left, (true, i), cell);
        }
        Ok(false)
    }

    /// Evens out the leaf (`own`: id and page copy) with `other`, the child on its
    /// right (`own_is_right` false) or left of `parent`; `left_index` is the
    /// separator between them. Inserts `cell` at `i` of the leaf's entries.
    fn even_out(
        &self,
        parent: u64,
        left_index: usize,
        own: (u64, &[u8]),
        other: u64,
        (own_is_right, i): (bool, usize),
        cell: &[u8],
    ) -> Result<bool> {
        if other == own.0 {
            return Err(self.at(parent)(format!("page {other} is the child on both sides of separator {left_index}")));
        }
        let other_copy = self.node(other, true)?.to_vec();
        let (left, right) =
            if own_is_right { ((other, &other_copy[..]), own) } else { (own, (other, &other_copy[..])) };
        let left_n = node::count(left.1);
        let mut cells = Vec::with_capacity(left_n + node::count(right.1) + 1);
        for (id, page) in [left, right] {
            for j in 0..node::count(page) {
                cells.push(node::cell(page, j).map_err(self.at(id))?);
            }
        }
        cells.insert(if own_is_right { left_n + i } else { i }, cell);
        let payload = self.txn.payload_size();
        if node_write::size_of_cells(true, &cells) > 2 * payload * SHIFT_FILL.0 / SHIFT_FILL.1 {
            return Ok(false);
        }
        let at = split_point(&cells, node::LEAF_ENTRY);
        if node_write::size_of_cells(true, &cells[..at]) > payload
            || node_write::size_of_cells(true, &cells[at..]) > payload
        {
            return Ok(false);
        }
        let new_separator =
            branch_cell(&separator(node::cell_key(cells[at - 1], true), node::cell_key(cells[at], true)));
        let mut parent_page = self.node_mut(parent, false)?;
        let old_len = node::cell(&parent_page, left_index).map_err(self.at(parent))?.len();
        if new_separator.len() > node_write::gap(&parent_page) + node::garbage(&parent_page) + old_len {
            return Ok(false);
        }
        let (prev, next) = (node::prev(left.1), node::next(right.1));
        node_write::build(&mut self.txn.page_mut(PageId(left.0))?, 0, (prev, right.0), &cells[..at], &[]);
        node_write::build(&mut self.txn.page_mut(PageId(right.0))?, 0, (left.0, next), &cells[at..], &[]);
        node_write::remove(&mut parent_page, left_index).map_err(self.at(parent))?;
        if !node_write::insert(&mut parent_page, left_index, &new_separator, right.0).map_err(self.at(parent))? {
            return Err(self.at(parent)("no room for a separator where the header promises it".to_owned()));
        }
        Ok(true)
    }
}
