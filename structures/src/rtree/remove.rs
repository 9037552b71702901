//! Removal with condense-and-reinsert (Guttman's CondenseTree, as the R* paper keeps
//! it): find the leaf holding the exact (box, payload) entry, delete it, then walk up;
//! a non-root node left with fewer than `min` entries is dissolved — its pages freed,
//! the leaf entries below it collected — and those entries are reinserted once the
//! path is fixed. A branch root with one child is replaced by the child. Also
//! `update` (move an entry) and `clear`.

use super::Core;
use super::coord::Coord;
use super::geom::Rect;
use super::node::{Entry, Head, Node};
use crate::error::Result;
use quiredb_engine::{PageId, WriteTxn};

type Path<const D: usize> = Vec<(PageId, Node<D>, usize)>;

impl<const D: usize, C: Coord> Core<D, C> {
    /// Removes the entry with exactly this box and payload (as stored: an f32 tree
    /// rounds the box the same way as on insert). Returns false when absent.
    pub fn remove(&self, txn: &WriteTxn<'_>, name: &str, rect: &Rect<D>, payload: u64) -> Result<bool> {
        let rect = self.stored(name, rect)?;
        let mut head = self.head(txn)?;
        let mut path = Vec::with_capacity(head.height as usize);
        if !self.find_leaf(txn, PageId(head.root), head.root_level(), &rect, payload, &mut path)? {
            return Ok(false);
        }
        let orphans = self.condense(txn, &mut head, path)?;
        self.fix_root(txn, &mut head, true)?;
        self.insert_pending(txn, &mut head, orphans.into_iter().map(|e| (e, 0)).collect())?;
        self.fix_root(txn, &mut head, false)?;
        head.len -= 1;
        self.store_head(txn, &head)?;
        Ok(true)
    }

    /// Moves the entry `(old, payload)` to box `new`. Returns false (and changes
    /// nothing) when the entry is absent; both boxes are validated first.
    pub fn update(&self, txn: &WriteTxn<'_>, name: &str, old: &Rect<D>, new: &Rect<D>, payload: u64) -> Result<bool> {
        self.stored(name, new)?;
        if !self.remove(txn, name, old, payload)? {
            return Ok(false);
        }
        self.insert(txn, name, new, payload)?;
        Ok(true)
    }

    /// Removes every entry (frees all node pages but one empty leaf root).
    pub fn clear(&self, txn: &WriteTxn<'_>) -> Result<()> {
        let mut head = self.head(txn)?;
        self.free_subtree(txn, PageId(head.root), head.root_level())?;
        head.root = self.create_node(txn, &Node { level: 0, entries: Vec::new() })?.0;
        (head.height, head.len, head.nodes) = (1, 0, 1);
        self.store_head(txn, &head)
    }

    /// Depth-first search for the leaf entry; fills `path` with the nodes from the root
    /// down, each with the index taken (the entry's index in the leaf).
    fn find_leaf(
        &self,
        txn: &WriteTxn<'_>,
        id: PageId,
        level: u16,
        rect: &Rect<D>,
        payload: u64,
        path: &mut Path<D>,
    ) -> Result<bool> {
        let node = self.load(txn, id, level)?;
        if node.level == 0 {
            let found = node.entries.iter().position(|e| e.id == payload && e.rect == *rect);
            if let Some(index) = found {
                path.push((id, node, index));
            }
            return Ok(found.is_some());
        }
        let children: Vec<(usize, u64)> =
            node.entries.iter().enumerate().filter(|(_, e)| e.rect.contains(rect)).map(|(i, e)| (i, e.id)).collect();
        path.push((id, node, 0));
        for (index, child) in children {
            path.last_mut().expect("pushed above").2 = index;
            if self.find_leaf(txn, PageId(child), level - 1, rect, payload, path)? {
                return Ok(true);
            }
        }
        path.pop();
        Ok(false)
    }

    /// Deletes the found entry and repairs the path; returns the orphaned leaf entries.
    fn condense(&self, txn: &WriteTxn<'_>, head: &mut Head, mut path: Path<D>) -> Result<Vec<Entry<D>>> {
        let mut orphans = Vec::new();
        let (mut id, mut node, index) = path.pop().expect("the path ends at the leaf");
        node.entries.swap_remove(index);
        while let Some((parent_id, mut parent, index)) = path.pop() {
            if node.entries.len() < self.fill(node.level) {
                head.nodes -= self.dissolve(txn, &node, &mut orphans)?;
                txn.free_page(id)?;
                head.nodes -= 1;
                parent.entries.swap_remove(index);
            } else {
                self.store_node(txn, id, &node)?;
                let rect = node.bbox();
                if parent.entries[index].rect == rect {
                    return Ok(orphans);
                }
                parent.entries[index].rect = rect;
            }
            (id, node) = (parent_id, parent);
        }
        self.store_node(txn, id, &node)?;
        Ok(orphans)
    }

    /// Collects the leaf entries under `node` and frees the pages below it; returns
    /// how many pages were freed.
    fn dissolve(&self, txn: &WriteTxn<'_>, node: &Node<D>, orphans: &mut Vec<Entry<D>>) -> Result<u64> {
        if node.level == 0 {
            orphans.extend_from_slice(&node.entries);
            return Ok(0);
        }
        let mut freed = 0;
        for e in &node.entries {
            let child = self.load(txn, PageId(e.id), node.level - 1)?;
            freed += self.dissolve(txn, &child, orphans)? + 1;
            txn.free_page(PageId(e.id))?;
        }
        Ok(freed)
    }

    /// An emptied branch root becomes an empty leaf (`only_empty`); otherwise a
    /// branch root with one child is replaced by that child, repeatedly.
    fn fix_root(&self, txn: &WriteTxn<'_>, head: &mut Head, only_empty: bool) -> Result<()> {
        loop {
            let root = self.load(txn, PageId(head.root), head.root_level())?;
            if root.level == 0 {
                return Ok(());
            }
            if root.entries.is_empty() {
                self.store_node(txn, PageId(head.root), &Node { level: 0, entries: Vec::new() })?;
                head.height = 1;
                return Ok(());
            }
            if only_empty || root.entries.len() > 1 {
                return Ok(());
            }
            txn.free_page(PageId(head.root))?;
            head.root = root.entries[0].id;
            head.height -= 1;
            head.nodes -= 1;
        }
    }
}
