//! The bottom-up packer of the Hilbert bulk loads: entries arrive in curve order and
//! leave as full node pages, written at once, so a level of any size is built with
//! `2 · max` entries in memory. The last two nodes of a level share what is left so
//! both hold at least `min` (`max + 1 ≤ 2 · left < 2 · max`). The upper levels are
//! packed the same way from the boxes of the level below (about `1/max` of its
//! entries, kept in memory).

use super::Core;
use super::coord::Coord;
use super::node::{Entry, Form, Layout, Node, bbox};
use crate::error::Result;
use quiredb_engine::{PageId, WriteTxn};

/// Packs one level; its parents' entries are collected in `parents`.
pub(crate) struct LevelPacker<'a, 't, const D: usize, C: Coord> {
    _coord: std::marker::PhantomData<C>,
    txn: &'a WriteTxn<'t>,
    level: u16,
    form: Form,
    pending: Vec<Entry<D>>,
    parents: Vec<Entry<D>>,
    nodes: u64,
}

impl<'a, 't, const D: usize, C: Coord> LevelPacker<'a, 't, D, C> {
    pub fn new(tree: &'a Core<D, C>, txn: &'a WriteTxn<'t>, level: u16) -> Self {
        let form = tree.form(level);
        let pending = Vec::with_capacity(2 * form.max);
        LevelPacker { _coord: std::marker::PhantomData, txn, level, form, pending, parents: Vec::new(), nodes: 0 }
    }

    /// Adds the next entry in curve order.
    #[inline]
    pub fn push(&mut self, entry: Entry<D>) -> Result<()> {
        self.pending.push(entry);
        let max = self.form.max;
        if self.pending.len() == 2 * max {
            self.write(0, max)?;
            self.pending.drain(..max);
        }
        Ok(())
    }

    /// Writes the last node(s); returns the parents' entries and the nodes written.
    pub fn finish(mut self) -> Result<(Vec<Entry<D>>, u64)> {
        let left = self.pending.len();
        if left > self.form.max {
            self.write(0, left / 2)?;
            self.write(left / 2, left)?;
        } else if left > 0 || self.parents.is_empty() {
            self.write(0, left)?;
        }
        Ok((self.parents, self.nodes))
    }

    fn write(&mut self, start: usize, end: usize) -> Result<()> {
        let entries = &self.pending[start..end];
        let mut page = self.txn.alloc_page(super::NODE_PAGE)?;
        Layout::<D, C>::encode_entries(self.level, entries, &mut page, self.form);
        self.parents.push(Entry { rect: bbox(entries), id: page.id().0 });
        self.nodes += 1;
        Ok(())
    }
}

impl<const D: usize, C: Coord> Core<D, C> {
    /// Frees the current contents; the tree is then rebuilt by a packer.
    pub(crate) fn clear_for_bulk(&self, txn: &WriteTxn<'_>) -> Result<()> {
        let head = self.head(txn)?;
        self.free_subtree(txn, PageId(head.root), head.root_level())?;
        Ok(())
    }

    /// Packs the levels above a finished leaf level (`leaves`, in curve order) and
    /// points the head at the root. `nodes` counts the leaf pages.
    pub(crate) fn finish_levels(
        &self,
        txn: &WriteTxn<'_>,
        mut level_entries: Vec<Entry<D>>,
        mut nodes: u64,
        len: u64,
    ) -> Result<u32> {
        let mut level = 0u16;
        while level_entries.len() > 1 {
            level += 1;
            let mut packer = LevelPacker::new(self, txn, level);
            for entry in level_entries.drain(..) {
                packer.push(entry)?;
            }
            let (parents, written) = packer.finish()?;
            (level_entries, nodes) = (parents, nodes + written);
        }
        let root = match level_entries.first() {
            Some(entry) => entry.id,
            None => Layout::<D, C>::create(txn, &Node { level: 0, entries: Vec::new() }, self.form(0))?.0,
        };
        let mut head = self.head(txn)?;
        (head.root, head.height, head.len, head.nodes) = (root, u32::from(level) + 1, len, nodes.max(1));
        self.store_head(txn, &head)?;
        Ok(head.height)
    }
}
