//! Remove, and the rebalancing of underfull nodes (policy in `mod.rs`): merge with a
//! sibling when both fit in one page (when the node is only under half full: in 7/8
//! of one), else redistribute a node under a quarter when the parent has room
//! for the new separator, else leave the node as it is. The root collapses when a branch
//! root is left with a single child.

use super::BTree;
use super::node::{self, BRANCH_ENTRY, LEAF_ENTRY};
use super::node_write::{self, Cells};
use super::write::{Path, branch_cell, separator, split_point};
use crate::error::Result;
use quiredb_engine::{PageId, PageRead, WriteTxn};

/// Bytes a node holding all of the pair's entries needs.
pub(super) fn pair_size(pair: &Pair) -> usize {
    node::arrays_end(pair.level == 0, pair.cells.len()) + pair.cells.bytes()
}

/// The entries of a node pair, gathered for a merge or a redistribution.
pub(super) struct Pair {
    left: u64,
    right: u64,
    left_index: usize,
    level: u8,
    /// The cells of both nodes in key order (a branch pair: with the separator), back
    /// to back in one buffer (a delete that rebalanced made 27 allocations, one a cell).
    pub(super) cells: Cells,
    children: Vec<u64>,
    links: (u64, u64),
}

impl<'db> BTree<'_, WriteTxn<'db>> {
    /// Removes `key`; returns true if it was present.
    pub fn remove(&mut self, key: &[u8]) -> Result<bool> {
        self.claim_write()?;
        let (path, leaf_id, _) = self.path_to(key)?;
        {
            let mut leaf = self.node_mut(leaf_id, true)?;
            let Ok(i) = node::search(&leaf, key).map_err(self.at(leaf_id))? else { return Ok(false) };
            if let node::Value::Blob(blob) = node::value(&leaf, i).map_err(self.at(leaf_id))? {
                // Unpinned while the blob goes: a corrupt blob may name the leaf.
                drop(leaf);
                crate::blob::free(self.txn, blob)?;
                leaf = self.node_mut(leaf_id, true)?;
            }
            node_write::remove(&mut leaf, i).map_err(self.at(leaf_id))?;
        }
        self.set_head(|head| head.len = head.len.saturating_sub(1));
        self.rebalance(path, leaf_id)?;
        self.store_head()?;
        Ok(true)
    }

    /// Removes every key given; returns how many were present. The keys are sorted
    /// first (in runs of up to 8 M), so the leaves are visited in key order: each once
    /// per run rather than once per key, which matters when the tree is larger than the
    /// pool. After an error, abort the transaction.
    pub fn remove_batch<K: AsRef<[u8]>>(&mut self, keys: impl IntoIterator<Item = K>) -> Result<u64> {
        let mut removed = 0;
        super::write::in_sorted_runs(
            Vec::new(),
            keys.into_iter(),
            K::as_ref,
            |key| quiredb_engine::prefetch_bytes(key.as_ref()),
            |key| {
                removed += u64::from(self.remove(key.as_ref())?);
                Ok(())
            },
        )?;
        Ok(removed)
    }

    /// Restores the fill policy from node `id` upwards along `path`.
    pub(super) fn rebalance(&self, mut path: Path, mut id: u64) -> Result<()> {
        let payload = self.txn.payload_size();
        loop {
            let (used, level, count) = {
                let page = self.txn.page(PageId(id))?;
                (node::used_bytes(&page), node::level(&page), node::count(&page))
            };
            let Some(&(parent, index)) = path.last() else {
                return self.collapse_root(id, level, count);
            };
            if used >= payload / 2 {
                return Ok(());
            }
            // Under a quarter: merge whenever the pair fits, else redistribute. Between
            // a quarter and a half: merge only into a node at most 7/8 full (room left
            // for inserts, as the insert policy leaves it; a leaf just split in halves
            // does not merge back), else stay.
            let underfull = used < payload / 4;
            let limit = if underfull { payload } else { payload * 7 / 8 };
            let siblings = node::count(&self.txn.page(PageId(parent))?);
            let mut candidates = Vec::with_capacity(2);
            if index > 0 {
                candidates.push(index - 1);
            }
            if index < siblings {
                candidates.push(index);
            }
            let mut fitting = None;
            let mut first = None;
            for left_index in candidates {
                let pair = self.gather(parent, left_index, level)?;
                if pair_size(&pair) <= limit {
                    fitting = Some(pair);
                    break;
                }
                first.get_or_insert(pair);
            }
            let Some(pair) = fitting else {
                if !underfull {
                    return Ok(());
                }
                let per_entry = if level == 0 { LEAF_ENTRY } else { BRANCH_ENTRY };
                return match first {
                    Some(pair) => self.redistribute(parent, pair, per_entry).map(drop),
                    None => Ok(()),
                };
            };
            self.merge(parent, pair)?;
            path.pop();
            id = parent;
        }
    }

    /// A branch root with one child gives way to that child.
    fn collapse_root(&self, id: u64, level: u8, count: usize) -> Result<()> {
        if level == 0 || count > 0 {
            return Ok(());
        }
        let child = node::child(&self.txn.page(PageId(id))?, 0);
        self.txn.free_page(PageId(id))?;
        self.set_head(|head| {
            head.root = child;
            head.height -= 1;
        });
        Ok(())
    }

    /// Reads children `left_index` and `left_index + 1` of `parent` as one list.
    pub(super) fn gather(&self, parent: u64, left_index: usize, level: u8) -> Result<Pair> {
        let (left, right, separator) = {
            let page = self.node(parent, false)?;
            if usize::from(node::level(&page)) != usize::from(level) + 1 {
                return Err(self.at(parent)(format!("level {} above a node of level {level}", node::level(&page))));
            }
            let separator = node::key(&page, left_index).map_err(self.at(parent))?.to_vec();
            (node::child(&page, left_index), node::child(&page, left_index + 1), separator)
        };
        if left == right {
            return Err(self.at(parent)(format!("children {left_index} and {} are both page {left}", left_index + 1)));
        }
        let mut cells = Cells::default();
        let mut children = Vec::new();
        let mut links = (0, 0);
        for (side, id) in [left, right].into_iter().enumerate() {
            let page = self.node(id, level == 0)?;
            if node::level(&page) != level {
                return Err(self.at(id)(format!("level {} where level {level} belongs", node::level(&page))));
            }
            let n = node::count(&page);
            if side == 1 && level > 0 {
                cells.push(&branch_cell(&separator));
            }
            for i in 0..n {
                cells.push(node::cell(&page, i).map_err(self.at(id))?);
            }
            if level > 0 {
                children.extend((0..=n).map(|i| node::child(&page, i)));
            }
            if side == 0 {
                links.0 = node::prev(&page);
            } else {
                links.1 = node::next(&page);
            }
        }
        Ok(Pair { left, right, left_index, level, cells, children, links })
    }

    /// Moves everything into the left node, frees the right one, drops the separator.
    fn merge(&self, parent: u64, pair: Pair) -> Result<()> {
        let refs = pair.cells.refs();
        node_write::build(&mut self.txn.page_mut(PageId(pair.left))?, pair.level, pair.links, &refs, &pair.children);
        if pair.level == 0 && pair.links.1 != 0 {
            node_write::set_prev(&mut self.node_mut(pair.links.1, true)?, pair.left);
        }
        self.txn.free_page(PageId(pair.right))?;
        node_write::remove(&mut self.node_mut(parent, false)?, pair.left_index).map_err(self.at(parent))?;
        Ok(())
    }

    /// Splits the pair's entries evenly between the two nodes, if the parent can take
    /// the new separator and both halves fit; else leaves everything as it is and
    /// returns false.
    pub(super) fn redistribute(&self, parent: u64, pair: Pair, per_entry: usize) -> Result<bool> {
        let refs = pair.cells.refs();
        let at = split_point(&refs, per_entry);
        let is_leaf = pair.level == 0;
        let payload = self.txn.payload_size();
        let (left_size, right_size) = halves(is_leaf, &refs, at);
        if left_size > payload || right_size > payload {
            return Ok(false);
        }
        let new_separator = if is_leaf {
            separator(node::cell_key(refs[at - 1], true), node::cell_key(refs[at], true))
        } else {
            node::cell_key(refs[at], false).to_vec()
        };
        let mut parent_page = self.node_mut(parent, false)?;
        let old_len = node::cell(&parent_page, pair.left_index).map_err(self.at(parent))?.len();
        let room = node_write::gap(&parent_page) + node::garbage(&parent_page) + old_len;
        if 2 + new_separator.len() > room {
            return Ok(false);
        }
        let (left_cells, right_cells) =
            if is_leaf { (&refs[..at], &refs[at..]) } else { (&refs[..at], &refs[at + 1..]) };
        let (left_children, right_children) =
            if is_leaf { (&[][..], &[][..]) } else { (&pair.children[..=at], &pair.children[at + 1..]) };
        let (left_links, right_links) =
            if is_leaf { ((pair.links.0, pair.right), (pair.left, pair.links.1)) } else { ((0, 0), (0, 0)) };
        node_write::build(
            &mut self.txn.page_mut(PageId(pair.left))?,
            pair.level,
            left_links,
            left_cells,
            left_children,
        );
        node_write::build(
            &mut self.txn.page_mut(PageId(pair.right))?,
            pair.level,
            right_links,
            right_cells,
            right_children,
        );
        node_write::remove(&mut parent_page, pair.left_index).map_err(self.at(parent))?;
        let separator = branch_cell(&new_separator);
        if !node_write::insert(&mut parent_page, pair.left_index, &separator, pair.right).map_err(self.at(parent))? {
            return Err(self.at(parent)("no room for a separator where the header promises it".to_owned()));
        }
        Ok(true)
    }
}

/// Bytes the two nodes of a redistribution of `cells` at `at` need (a branch pair
/// pushes cell `at` up to the parent).
fn halves(is_leaf: bool, cells: &[&[u8]], at: usize) -> (usize, usize) {
    let bytes = |cells: &[&[u8]]| node::arrays_end(is_leaf, cells.len()) + cells.iter().map(|c| c.len()).sum::<usize>();
    let right = if is_leaf { &cells[at..] } else { &cells[at + 1..] };
    (bytes(&cells[..at]), bytes(right))
}
