//! Cursors. A [`Cursor`] pins one leaf at a time and walks the leaf chain
//! (`prev`/`next` links) in either direction (`range.rs` builds ranges on two of
//! them). `floor`/`ceiling` are one seek each.
//!
//! On a corrupt file a cursor errs instead of panicking or looping: it checks the cell
//! of every entry it moves onto once (and keeps where its key and value are, so
//! [`Cursor::key`] and [`Cursor::value_ref`] cannot fail), and at every step to another leaf that the leaf is not empty, that its first
//! key is not above its last, and that its keys lie beyond the ones just left. Along a
//! chain the first keys then strictly increase (or decrease), so a cycle is caught at
//! the first leaf seen twice, for the cost of two key reads per leaf.

use super::BTree;
use super::node::{self, Value};
use super::pinned::{Pinned, value_range};
use crate::error::Result;
use quiredb_engine::{PageRead, PageRef};
use std::ops::Bound;
use std::rc::Rc;

/// Entries whose cells a forward cursor asks for ahead of reaching them.
const CELLS_AHEAD: usize = 4;
/// Entries after the one a seek lands on whose cells its search asks for at once, in
/// the same memory round trip as that entry's (a 10-pair range read at 1 M keys,
/// `lookup_probe … cursor`: 1,032 → 906 ns, medians of eight); the steps after keep
/// [`CELLS_AHEAD`] in flight.
const SEEK_AHEAD: usize = 2 * CELLS_AHEAD;
/// Bytes of the next leaf asked for as a forward cursor nears a leaf's end (its header,
/// prefixes and slots, where a step and the first cells read first).
const NEXT_LEAF_PREFETCH: usize = 448;

/// A position in a tree: on an entry, or past either end ("invalid").
pub struct Cursor<'b, 't, T: PageRead> {
    tree: &'b BTree<'t, T>,
    leaf: Option<PageRef<'t>>,
    /// A second pin of a leaf, shared by the [`Pinned`] entries handed out from it
    /// (made once per leaf, and only for them: plain cursor steps stay as cheap).
    shared: Option<Rc<PageRef<'t>>>,
    index: usize,
    /// Entries of the current leaf below this index have had their cells prefetched
    /// (see [`Cursor::prefetch_ahead`]); past the leaf's count, so has the next leaf.
    ahead: usize,
    /// The current leaf's entry count and slot array offset, read once per leaf (a
    /// step within a leaf reads one slot and one cell header).
    count: usize,
    slots: usize,
    /// The current entry's cell and key as checked by `check_entry`; the value (or
    /// the blob reference, when `blob`) fills the cell after the key.
    cell: std::ops::Range<usize>,
    key: std::ops::Range<usize>,
    blob: bool,
}

impl<'b, 't, T: PageRead> Cursor<'b, 't, T> {
    /// True when the cursor is on an entry.
    pub fn valid(&self) -> bool {
        self.leaf.is_some()
    }

    /// Key of the current entry (`None` when invalid).
    pub fn key(&self) -> Option<&[u8]> {
        self.leaf.as_ref().map(|leaf| &leaf[self.key.clone()])
    }

    /// Value of the current entry as stored (inline bytes or a blob reference).
    pub fn value_ref(&self) -> Option<Value<'_>> {
        self.leaf.as_ref().map(|leaf| node::cell_value(&leaf[self.cell.clone()]))
    }

    /// The current key and value read in place (the leaf stays pinned while either
    /// lives; a blob value is read into an owned copy); `None` when invalid.
    pub fn pinned(&mut self) -> Result<Option<(Pinned<'t>, Pinned<'t>)>> {
        let Some(leaf) = self.shared_leaf()? else { return Ok(None) };
        let key = Pinned::shared(&leaf, self.key.clone());
        let value = match value_range(self.cell.start, &leaf[self.cell.clone()]) {
            Ok(range) => Pinned::shared(&leaf, range),
            Err(blob) => self.tree.blob_value(blob)?,
        };
        Ok(Some((key, value)))
    }

    /// A shared pin of the current leaf (one page access and allocation per leaf);
    /// `None` when invalid.
    fn shared_leaf(&mut self) -> Result<Option<Rc<PageRef<'t>>>> {
        let Some(id) = self.leaf.as_ref().map(PageRef::id) else { return Ok(None) };
        if let Some(shared) = self.shared.as_ref().filter(|shared| shared.id() == id) {
            return Ok(Some(Rc::clone(shared)));
        }
        let shared = Rc::new(self.tree.txn.page(id)?);
        self.shared = Some(Rc::clone(&shared));
        Ok(Some(shared))
    }

    /// Reads the current value into `out`; false when invalid.
    pub fn value(&self, out: &mut Vec<u8>) -> Result<bool> {
        let Some(leaf) = &self.leaf else { return Ok(false) };
        if !self.blob {
            out.clear();
            out.extend_from_slice(&leaf[self.key.end..self.cell.end]);
            return Ok(true);
        }
        if let Some(Value::Blob(blob)) = self.value_ref() {
            crate::blob::read_to_vec(self.tree.txn, blob, out)?;
        }
        Ok(true)
    }

    /// The current value borrowed in place when the leaf holds it, else (a blob) read
    /// into `scratch` and borrowed from there; `None` when invalid. A range read that
    /// only looks at its values copies nothing.
    pub fn value_in<'a>(&'a self, scratch: &'a mut Vec<u8>) -> Result<Option<&'a [u8]>> {
        let Some(leaf) = &self.leaf else { return Ok(None) };
        if !self.blob {
            return Ok(Some(&leaf[self.key.end..self.cell.end]));
        }
        self.value(scratch)?;
        Ok(Some(scratch))
    }

    /// Makes `leaf` (a leaf that passed `node::validate`) the current one.
    fn enter(&mut self, leaf: PageRef<'t>) {
        self.count = node::count(&leaf);
        self.slots = node::slots_offset(&leaf, self.count);
        self.leaf = Some(leaf);
    }

    /// The current entry as owned vectors.
    pub fn entry(&self) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        let Some(key) = self.key() else { return Ok(None) };
        let key = key.to_vec();
        let mut value = Vec::new();
        self.value(&mut value)?;
        Ok(Some((key, value)))
    }

    /// Moves to the first entry with key ≥ `key`. The leaf's search already asks for
    /// the cells of the next few entries after it (a range read's next ones).
    pub fn seek(&mut self, key: &[u8]) -> Result<()> {
        let leaf = self.tree.descend(key)?;
        self.index = match node::search_ahead(&leaf, key, SEEK_AHEAD).map_err(self.tree.at(leaf.id().0))? {
            Ok(i) | Err(i) => i,
        };
        self.enter(leaf);
        self.ahead = self.index;
        self.settle_forward()?;
        self.check_entry()?;
        self.prefetch_ahead();
        Ok(())
    }

    /// Moves to the first entry inside the lower bound `low` of a range.
    pub fn seek_from(&mut self, low: Bound<&[u8]>) -> Result<()> {
        match low {
            Bound::Unbounded => return self.seek_first(),
            Bound::Included(key) | Bound::Excluded(key) => self.seek(key)?,
        }
        if let (Bound::Excluded(key), Some(at)) = (low, self.key())
            && at == key
        {
            self.move_next()?;
        }
        Ok(())
    }

    /// Asks the CPU for the cells of the next [`CELLS_AHEAD`] entries of the leaf, and
    /// near its end for the next leaf's first lines, so that a forward scan meets them
    /// cached (cells lie in insertion order, so each entry is a miss of its own).
    #[inline]
    fn prefetch_ahead(&mut self) {
        let Some(leaf) = &self.leaf else { return };
        let (page, n): (&[u8], usize) = (leaf, self.count);
        let until = (self.index + CELLS_AHEAD).min(n);
        while self.ahead < until {
            node::prefetch_leaf_cell(page, self.slots, self.ahead);
            self.ahead += 1;
        }
        if self.index + CELLS_AHEAD >= n && self.ahead == n {
            self.ahead = n + 1;
            let next = node::next(page);
            if next != 0 {
                self.tree.txn.prefetch(quiredb_engine::PageId(next), std::slice::from_ref(&(0..NEXT_LEAF_PREFETCH)));
            }
        }
    }

    /// Moves to the last entry with key ≤ `key`.
    pub fn seek_floor(&mut self, key: &[u8]) -> Result<()> {
        let leaf = self.tree.descend(key)?;
        let found = node::search(&leaf, key).map_err(self.tree.at(leaf.id().0))?;
        self.enter(leaf);
        match found {
            Ok(i) => self.index = i,
            Err(i) => {
                self.index = i;
                self.move_prev()?;
            }
        }
        self.check_entry()
    }

    /// Moves to the first entry.
    pub fn seek_first(&mut self) -> Result<()> {
        self.seek(&[])
    }

    /// Moves to the last entry.
    pub fn seek_last(&mut self) -> Result<()> {
        let head = self.tree.head.get();
        let mut id = head.root;
        for _ in 1..head.height {
            let page = self.tree.node(id, false)?;
            id = node::child(&page, node::count(&page));
        }
        let leaf = self.tree.node(id, true)?;
        self.index = node::count(&leaf);
        self.enter(leaf);
        self.move_prev()?;
        self.check_entry()
    }

    /// Steps forward; false when it ran off the end.
    #[inline]
    pub fn move_next(&mut self) -> Result<bool> {
        if self.leaf.is_none() {
            return Ok(false);
        }
        self.index += 1;
        if self.index >= self.count {
            self.settle_forward()?;
        }
        self.check_entry()?;
        self.prefetch_ahead();
        Ok(self.valid())
    }

    /// Steps backward; false when it ran off the start.
    pub fn move_prev(&mut self) -> Result<bool> {
        let Some(leaf) = self.leaf.take() else { return Ok(false) };
        if self.index > 0 {
            self.index -= 1;
        } else {
            let prev = node::prev(&leaf);
            if prev == 0 {
                return Ok(false);
            }
            let before = self.tree.node(prev, true)?;
            self.check_step(&leaf, &before, false)?;
            self.index = node::count(&before) - 1;
            self.enter(before);
            return self.check_entry().map(|()| true);
        }
        self.leaf = Some(leaf);
        self.check_entry().map(|()| true)
    }

    /// Moves past the end of a leaf onto the next leaf's first entry, or invalidates.
    fn settle_forward(&mut self) -> Result<()> {
        if self.index < self.count {
            return Ok(());
        }
        let Some(leaf) = self.leaf.take() else { return Ok(()) };
        let next = node::next(&leaf);
        self.index = 0;
        self.ahead = 0;
        if next != 0 {
            let page = self.tree.node(next, true)?;
            self.check_step(&leaf, &page, true)?;
            drop(leaf);
            self.enter(page);
        }
        Ok(())
    }

    /// Checks the cell of the entry the cursor is on (see the module docs) and
    /// remembers where it and its key are.
    #[inline]
    fn check_entry(&mut self) -> Result<()> {
        if let Some(leaf) = &self.leaf {
            let span = match node::leaf_span(leaf, self.slots, self.index) {
                Ok(span) => span,
                Err(reason) => return Err(self.lose_leaf(reason)),
            };
            let key = span.at + node::LEAF_CELL_HEADER;
            self.cell = span.at..span.at + span.len;
            self.key = key..key + span.key_len;
            self.blob = span.blob;
        }
        Ok(())
    }

    /// Invalidates the cursor after its leaf turned out corrupt at entry `index`.
    #[cold]
    #[inline(never)]
    fn lose_leaf(&mut self, reason: String) -> crate::Error {
        let id = self.leaf.take().map_or(0, |leaf| leaf.id().0);
        self.tree.at(id)(reason)
    }

    /// Checks a step from leaf `from` to its neighbour `to` (module docs): `to` holds
    /// entries, its first key is not above its last, and its keys lie beyond `from`'s.
    fn check_step(&self, from: &PageRef<'_>, to: &PageRef<'_>, forward: bool) -> Result<()> {
        let bad = self.tree.at(to.id().0);
        let n = node::count(to);
        if n == 0 {
            return Err(bad(format!("empty leaf in the chain after leaf {}", from.id().0)));
        }
        let (first, last) = (node::key(to, 0).map_err(&bad)?, node::key(to, n - 1).map_err(&bad)?);
        let beyond = match node::count(from) {
            0 => true,
            m if forward => first > node::key(from, m - 1).map_err(self.tree.at(from.id().0))?,
            _ => last < node::key(from, 0).map_err(self.tree.at(from.id().0))?,
        };
        if first > last || !beyond {
            return Err(bad(format!("keys out of order with leaf {} (a cycle in the leaf chain?)", from.id().0)));
        }
        Ok(())
    }
}

impl<'t, T: PageRead> BTree<'t, T> {
    /// An unpositioned cursor (call a `seek` first).
    pub fn cursor(&self) -> Cursor<'_, 't, T> {
        Cursor {
            tree: self,
            leaf: None,
            shared: None,
            index: 0,
            ahead: 0,
            count: 0,
            slots: 0,
            cell: 0..0,
            key: 0..0,
            blob: false,
        }
    }

    /// The entry with the greatest key ≤ `key`.
    pub fn floor(&self, key: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        let mut cursor = self.cursor();
        cursor.seek_floor(key)?;
        cursor.entry()
    }

    /// The entry with the least key ≥ `key`.
    pub fn ceiling(&self, key: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        let mut cursor = self.cursor();
        cursor.seek(key)?;
        cursor.entry()
    }

    /// The first entry.
    pub fn first(&self) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        let mut cursor = self.cursor();
        cursor.seek_first()?;
        cursor.entry()
    }

    /// The last entry.
    pub fn last(&self) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        let mut cursor = self.cursor();
        cursor.seek_last()?;
        cursor.entry()
    }
}

#[cfg(test)]
mod tests {
    use super::super::BTree;
    use quiredb_engine::{Database, Durability, storage::MemStorage};
    use quiredb_test_support::Rng;
    use std::collections::BTreeMap;
    use std::sync::Arc;

    #[test]
    fn cursor_steps_and_borrowed_values_match_a_model() {
        // Proves: a cursor walking forward across many leaves (entry counts and slot
        // arrays read once per leaf) and seeking to random keys yields the model's
        // keys and values, inline values borrowed in place and blob values through the
        // scratch buffer (`value_in`), and `value` copies the same bytes.
        let seed = quiredb_test_support::seed(0x00C0_25E5);
        let mut rng = Rng::new(seed);
        let db = Database::builder().cache_bytes(8 << 20).with_storage(Arc::new(MemStorage::new()), "cursor").unwrap();
        let mut model = BTreeMap::new();
        let txn = db.begin_write().unwrap();
        let mut tree = BTree::create(&txn, "t").unwrap();
        for i in 0..3_000u64 {
            let key = (rng.below(1 << 40) * 7 + i).to_be_bytes().to_vec();
            let len = if rng.below(50) == 0 { 3_000 + rng.below(5_000) } else { rng.below(200) } as usize;
            let value: Vec<u8> = (0..len).map(|_| rng.below(256) as u8).collect();
            tree.insert(&key, &value).unwrap();
            model.insert(key, value);
        }
        drop(tree);
        txn.commit(Durability::Checksummed).unwrap();
        let snapshot = db.begin_read().unwrap();
        let tree = BTree::open(&snapshot, "t").unwrap();
        let (mut cursor, mut scratch, mut copy) = (tree.cursor(), Vec::new(), Vec::new());
        cursor.seek_first().unwrap();
        for (key, value) in &model {
            assert_eq!(cursor.key(), Some(&key[..]), "seed {seed:#x}");
            assert_eq!(cursor.value_in(&mut scratch).unwrap(), Some(&value[..]), "seed {seed:#x}");
            assert!(cursor.value(&mut copy).unwrap());
            assert_eq!(&copy, value, "seed {seed:#x}");
            cursor.move_next().unwrap();
        }
        assert!(!cursor.valid() && cursor.value_in(&mut scratch).unwrap().is_none());
        for _ in 0..200 {
            let target = rng.below(1 << 43).to_be_bytes();
            cursor.seek(&target).unwrap();
            for (key, value) in model.range(target.to_vec()..).take(12) {
                assert_eq!(cursor.key(), Some(&key[..]), "seed {seed:#x}");
                assert_eq!(cursor.value_in(&mut scratch).unwrap(), Some(&value[..]), "seed {seed:#x}");
                cursor.move_next().unwrap();
            }
        }
    }
}
