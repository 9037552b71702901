//! Bulk load of sorted input into an empty tree: leaves are filled until the next
//! entry does not fit (≥ 95% for small entries), then branch levels are built from the
//! leaves' separators the same way. The last node of each level is evened out with its
//! left neighbour when it would be under a quarter full, so the result meets the fill
//! policy the checker enforces. A non-empty tree falls back to one insert per entry.
//!
//! On [`crate::Error::BulkLoadUnsorted`] the tree is left half-built: abort the
//! transaction (drop it) as after any failed write.

use super::BTree;
use super::node::{self, BLOB_FLAG, LEAF_CELL_HEADER, LEAF_ENTRY};
use super::node_write::{self, Cells};
use super::write::{branch_cell, leaf_cell_into, separator, split_point};
use crate::error::{Error, Result};
use quiredb_engine::{PageId, PageRead, WriteTxn};

/// A bulk load in progress: ascending entries streamed into an empty tree over any
/// number of calls ([`BTree::bulk_appender`], [`BTree::bulk_append`],
/// [`BTree::bulk_finish`]), for loaders that receive their sorted input in chunks.
/// Leaves are written as they fill; the branch levels and the head at the finish.
/// Until then the tree reads as empty and must not be changed otherwise. Dropping it
/// unfinished leaves pages behind: abort the transaction, as after a failed write.
#[derive(Debug)]
pub struct BulkAppender {
    /// The tree's head page (the appender belongs to one tree).
    head_page: PageId,
    /// The leaf being filled, and the one before it (kept to even out the last two).
    id: u64,
    prev_id: u64,
    cells: Cells,
    bytes: usize,
    prev: Cells,
    /// `(separator before the leaf, leaf id)` for every finished leaf.
    level: Vec<(Vec<u8>, u64)>,
    last_key: Vec<u8>,
    count: u64,
    /// The encoded cell of the entry being added (reused).
    cell: Vec<u8>,
}

impl BulkAppender {
    /// Entries appended so far.
    pub fn len(&self) -> u64 {
        self.count
    }

    /// True before the first entry.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

impl<'db> BTree<'_, WriteTxn<'db>> {
    /// Loads `entries` (strictly ascending keys). Returns the number of entries added.
    pub fn bulk_load<K, V>(&mut self, entries: impl IntoIterator<Item = (K, V)>) -> Result<u64>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        self.claim_write()?;
        if !self.is_empty() {
            let mut added = 0;
            for (key, value) in entries {
                added += u64::from(!self.insert(key.as_ref(), value.as_ref())?);
            }
            return Ok(added);
        }
        let mut appender = self.bulk_appender()?;
        for (key, value) in entries {
            self.bulk_append(&mut appender, key.as_ref(), value.as_ref())?;
        }
        self.bulk_finish(appender)
    }

    /// Starts a streamed bulk load; the tree must be empty
    /// ([`Error::BulkLoadNotEmpty`] otherwise).
    pub fn bulk_appender(&self) -> Result<BulkAppender> {
        if !self.is_empty() {
            return Err(Error::BulkLoadNotEmpty { tree: self.name().to_owned(), len: self.len() });
        }
        Ok(BulkAppender {
            head_page: self.head_page(),
            id: self.head.get().root,
            prev_id: 0,
            cells: Cells::default(),
            bytes: node::NODE_HEADER,
            prev: Cells::default(),
            level: Vec::new(),
            last_key: Vec::new(),
            count: 0,
            cell: Vec::new(),
        })
    }

    /// Appends one entry; its key must be greater than the one before
    /// ([`Error::BulkLoadUnsorted`] otherwise, the appender unchanged).
    pub fn bulk_append(&self, run: &mut BulkAppender, key: &[u8], value: &[u8]) -> Result<()> {
        self.claim_write()?;
        assert_eq!(run.head_page, self.head_page(), "a bulk appender serves the tree that made it");
        if run.count > 0 && key <= run.last_key.as_slice() {
            return Err(Error::BulkLoadUnsorted { index: run.count });
        }
        let mut cell = std::mem::take(&mut run.cell);
        self.bulk_cell_into(key, value, &mut cell)?;
        let payload = self.txn.payload_size();
        if run.bytes + cell.len() + LEAF_ENTRY > payload {
            self.finish_leaf(run, true)?;
        }
        run.bytes += cell.len() + LEAF_ENTRY;
        run.cells.push(&cell);
        run.cell = cell;
        run.last_key.clear();
        run.last_key.extend_from_slice(key);
        run.count += 1;
        Ok(())
    }

    /// Writes the last leaf, the branch levels and the head; returns the entries
    /// loaded.
    pub fn bulk_finish(&mut self, mut run: BulkAppender) -> Result<u64> {
        self.claim_write()?;
        assert_eq!(run.head_page, self.head_page(), "a bulk appender serves the tree that made it");
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
            head.len = run.count;
        });
        self.store_head()?;
        Ok(run.count)
    }

    fn bulk_cell_into(&self, key: &[u8], value: &[u8], cell: &mut Vec<u8>) -> Result<()> {
        let payload = self.txn.payload_size();
        let max = super::max_key_len(payload);
        if key.len() > max {
            return Err(Error::KeyTooLarge { len: key.len(), max });
        }
        if LEAF_CELL_HEADER + key.len() + value.len() <= super::max_inline_cell(payload) {
            leaf_cell_into(cell, key, value.len() as u32, value);
        } else {
            let blob = crate::blob::write_bytes(self.txn, value)?;
            leaf_cell_into(cell, key, BLOB_FLAG, &blob.to_bytes());
        }
        Ok(())
    }

    /// Writes the current leaf; with `more`, opens the next one.
    fn finish_leaf(&self, run: &mut BulkAppender, more: bool) -> Result<()> {
        let payload = self.txn.payload_size();
        let next = if more { self.txn.alloc_page(super::LEAF_PAGE)?.id().0 } else { 0 };
        if !more && run.prev_id != 0 && run.bytes < payload / 4 {
            return self.even_last_leaves(run);
        }
        node_write::build(&mut self.txn.page_mut(PageId(run.id))?, 0, (run.prev_id, next), &run.cells.refs(), &[]);
        if run.prev_id != 0 {
            // Only the last two leaves may still change (`even_last_leaves`): the one
            // before this is final, and the engine may write it before the commit.
            self.txn.write_behind(PageId(run.prev_id))?;
        }
        let sep = match run.prev.len() {
            0 => Vec::new(),
            n => separator(node::cell_key(run.prev.get(n - 1), true), node::cell_key(run.cells.get(0), true)),
        };
        run.level.push((sep, run.id));
        std::mem::swap(&mut run.prev, &mut run.cells);
        run.cells.clear();
        run.prev_id = run.id;
        run.id = next;
        run.bytes = node::NODE_HEADER;
        Ok(())
    }

    /// Splits the last two leaves' entries evenly and rewrites both.
    fn even_last_leaves(&self, run: &mut BulkAppender) -> Result<()> {
        let left = run.prev_id;
        let mut refs = run.prev.refs();
        refs.extend(run.cells.refs());
        let at = split_point(&refs, LEAF_ENTRY);
        let left_prev = node::prev(&self.txn.page(PageId(left))?);
        node_write::build(&mut self.txn.page_mut(PageId(left))?, 0, (left_prev, run.id), &refs[..at], &[]);
        node_write::build(&mut self.txn.page_mut(PageId(run.id))?, 0, (left, 0), &refs[at..], &[]);
        let sep = separator(node::cell_key(refs[at - 1], true), node::cell_key(refs[at], true));
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
            let mut page = self.txn.alloc_page(super::BRANCH_PAGE)?;
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
