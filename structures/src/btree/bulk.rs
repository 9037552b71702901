//! Bulk load of sorted input into an empty tree: leaves are filled until the next
//! entry does not fit (≥ 95% for small entries), then branch levels are built from the
//! leaves' separators the same way. The last node of each level is evened out with its
//! left neighbour when it would be under a quarter full, so the result meets the fill
//! policy the checker enforces. A non-empty tree falls back to one insert per entry.
//!
//! On [`crate::Error::BulkLoadUnsorted`] the tree is left half-built: abort the
//! transaction (drop it) as after any failed write.

use super::node::{self, BLOB_FLAG, LEAF_CELL_HEADER, LEAF_ENTRY};
use super::write::{branch_cell, leaf_cell, separator, split_point};
use super::{BTree, node_write};
use crate::error::{Error, Result};
use quiredb_engine::{PageId, PageKind, PageRead, WriteTxn};

/// The leaf being filled and the one before it (kept to even out the last two).
struct LeafRun {
    id: u64,
    prev_id: u64,
    cells: Vec<Vec<u8>>,
    bytes: usize,
    prev_cells: Vec<Vec<u8>>,
    /// `(separator before the leaf, leaf id)` for every finished leaf.
    level: Vec<(Vec<u8>, u64)>,
}

impl<'db> BTree<'_, WriteTxn<'db>> {
    /// Loads `entries` (strictly ascending keys). Returns the number of entries added.
    pub fn bulk_load<K, V>(&mut self, entries: impl IntoIterator<Item = (K, V)>) -> Result<u64>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        if !self.is_empty() {
            let mut added = 0;
            for (key, value) in entries {
                added += u64::from(!self.insert(key.as_ref(), value.as_ref())?);
            }
            return Ok(added);
        }
        let payload = self.txn.payload_size();
        let root = self.head.get().root;
        let mut run = LeafRun {
            id: root,
            prev_id: 0,
            cells: Vec::new(),
            bytes: node::NODE_HEADER,
            prev_cells: Vec::new(),
            level: Vec::new(),
        };
        let mut last_key: Option<Vec<u8>> = None;
        let mut count = 0u64;
        for (key, value) in entries {
            let (key, value) = (key.as_ref(), value.as_ref());
            if last_key.as_deref().is_some_and(|last| key <= last) {
                return Err(Error::BulkLoadUnsorted { index: count });
            }
            let cell = self.bulk_cell(key, value)?;
            if run.bytes + cell.len() + LEAF_ENTRY > payload {
                self.finish_leaf(&mut run, true)?;
            }
            run.bytes += cell.len() + LEAF_ENTRY;
            run.cells.push(cell);
            last_key = Some(key.to_vec());
            count += 1;
        }
        self.finish_leaf(&mut run, false)?;
        let mut level = std::mem::take(&mut run.level);
        let mut height = 1;
        while level.len() > 1 {
            level = self.build_branch_level(&level, height as u8)?;
            height += 1;
        }
        let new_root = level[0].1;
        self.set_head(|head| {
            head.root = new_root;
            head.height = height;
            head.len = count;
        });
        self.store_head()?;
        Ok(count)
    }

    fn bulk_cell(&self, key: &[u8], value: &[u8]) -> Result<Vec<u8>> {
        let payload = self.txn.payload_size();
        let max = super::max_key_len(payload);
        if key.len() > max {
            return Err(Error::KeyTooLarge { len: key.len(), max });
        }
        if LEAF_CELL_HEADER + key.len() + value.len() <= super::max_inline_cell(payload) {
            return Ok(leaf_cell(key, value.len() as u32, value));
        }
        let blob = crate::blob::write_bytes(self.txn, value)?;
        Ok(leaf_cell(key, BLOB_FLAG, &blob.to_bytes()))
    }

    /// Writes the current leaf; with `more`, opens the next one.
    fn finish_leaf(&self, run: &mut LeafRun, more: bool) -> Result<()> {
        let payload = self.txn.payload_size();
        let next = if more { self.txn.alloc_page(PageKind::BTREE_LEAF)?.id().0 } else { 0 };
        if !more && run.prev_id != 0 && run.bytes < payload / 4 {
            return self.even_last_leaves(run);
        }
        let refs: Vec<&[u8]> = run.cells.iter().map(Vec::as_slice).collect();
        node_write::build(&mut self.txn.page_mut(PageId(run.id))?, 0, (run.prev_id, next), &refs, &[]);
        let sep = match run.prev_cells.last() {
            Some(last) => separator(node::cell_key(last, true), node::cell_key(&run.cells[0], true)),
            None => Vec::new(),
        };
        run.level.push((sep, run.id));
        run.prev_cells = std::mem::take(&mut run.cells);
        run.prev_id = run.id;
        run.id = next;
        run.bytes = node::NODE_HEADER;
        Ok(())
    }

    /// Splits the last two leaves' entries evenly and rewrites both.
    fn even_last_leaves(&self, run: &mut LeafRun) -> Result<()> {
        let left = run.prev_id;
        let mut cells = std::mem::take(&mut run.prev_cells);
        cells.append(&mut run.cells);
        let at = split_point(&cells, LEAF_ENTRY);
        let refs: Vec<&[u8]> = cells.iter().map(Vec::as_slice).collect();
        let left_prev = node::prev(&self.txn.page(PageId(left))?);
        node_write::build(&mut self.txn.page_mut(PageId(left))?, 0, (left_prev, run.id), &refs[..at], &[]);
        node_write::build(&mut self.txn.page_mut(PageId(run.id))?, 0, (left, 0), &refs[at..], &[]);
        let sep = separator(node::cell_key(&cells[at - 1], true), node::cell_key(&cells[at], true));
        run.level.push((sep, run.id));
        Ok(())
    }

    /// Packs `(separator, child)` items into branches of `level`; returns the items of
    /// the level above.
    fn build_branch_level(&self, items: &[(Vec<u8>, u64)], level: u8) -> Result<Vec<(Vec<u8>, u64)>> {
        let payload = self.txn.payload_size();
        let mut groups: Vec<std::ops::Range<usize>> = Vec::new();
        let mut start = 0;
        let mut bytes = node::arrays_end(false, 0);
        for (i, (sep, _)) in items.iter().enumerate().skip(1) {
            let need = 2 + sep.len() + node::BRANCH_ENTRY;
            if bytes + need > payload {
                groups.push(start..i);
                start = i;
                bytes = node::arrays_end(false, 0);
            } else {
                bytes += need;
            }
        }
        groups.push(start..items.len());
        self.even_last_groups(items, &mut groups);
        let mut above = Vec::with_capacity(groups.len());
        for group in groups {
            let cells: Vec<Vec<u8>> =
                items[group.start + 1..group.end].iter().map(|(sep, _)| branch_cell(sep)).collect();
            let refs: Vec<&[u8]> = cells.iter().map(Vec::as_slice).collect();
            let children: Vec<u64> = items[group.clone()].iter().map(|&(_, id)| id).collect();
            let mut page = self.txn.alloc_page(PageKind::BTREE_BRANCH)?;
            node_write::build(&mut page, level, (0, 0), &refs, &children);
            above.push((items[group.start].0.clone(), page.id().0));
        }
        Ok(above)
    }

    /// Moves the boundary between the last two groups to the middle when the last
    /// group would be under a quarter full (or hold no key).
    fn even_last_groups(&self, items: &[(Vec<u8>, u64)], groups: &mut [std::ops::Range<usize>]) {
        let payload = self.txn.payload_size();
        let n = groups.len();
        if n < 2 {
            return;
        }
        let size = |range: &std::ops::Range<usize>| -> usize {
            node::arrays_end(false, 0)
                + items[range.start + 1..range.end].iter().map(|(s, _)| 2 + s.len() + node::BRANCH_ENTRY).sum::<usize>()
        };
        if size(&groups[n - 1]) >= payload / 4 && groups[n - 1].len() >= 2 {
            return;
        }
        let (start, end) = (groups[n - 2].start, groups[n - 1].end);
        let total: usize = items[start + 1..end].iter().map(|(s, _)| 2 + s.len() + node::BRANCH_ENTRY).sum();
        let mut acc = 0;
        let mut middle = start + 2;
        for (i, (sep, _)) in items.iter().enumerate().take(end).skip(start + 1) {
            acc += 2 + sep.len() + node::BRANCH_ENTRY;
            if acc * 2 >= total {
                middle = (i + 1).clamp(start + 2, end - 2);
                break;
            }
        }
        groups[n - 2] = start..middle;
        groups[n - 1] = middle..end;
    }
}
