//! Insert and update, with leaf and branch splits.
//!
//! A leaf split divides the entries by bytes, except when the new key goes to the end
//! of the rightmost leaf: then the new leaf starts with just that key (SQLite's "quick
//! balance"), so ascending inserts fill leaves — completely when the keys came in
//! order (a time series: later keys go to the end too), to [`SORTED_FILL_PERCENT`] when
//! [`BTree::insert_batch`] sorted them (random keys: later ones land between, and fit
//! without a split; PostgreSQL splits its rightmost leaf at the same fill factor).
//! Branch splits start a new node on the rightmost path too. Before splitting any other full leaf, the insert tries to
//! even it out with a sibling that has room (`shift.rs`).
//!
//! Sorted batches: [`BTree::insert_batch`] remembers the leaf of the previous insert,
//! its branch path and the exclusive upper bound of its key range (the nearest
//! separator right of the path). A key greater than the previous one and below that
//! bound belongs to the same leaf, so it is inserted without a root-to-leaf descent,
//! and a key above the leaf's last key is placed at the end without a binary search
//! (without any comparison when the previous key went to the end).
//! A split or a rebalance forgets the leaf (the next key descends again). A key at or
//! past that bound leaves the leaf behind for the rest of the run, so the batch
//! declares it final (`WriteTxn::write_behind`): in a transaction too large for the
//! commit log the engine writes such leaves while they are still in the CPU's caches
//! and starts their write-out, instead of checksumming and writing them all at the
//! commit (T2's random insert at 20 M records: 1.12× → 1.55× LMDB). Unsorted
//! batches are sorted in large runs first, so they take the same path (and a batch
//! larger than the pool writes each leaf about once, not once per key).
//! Read next: `remove.rs`.

use super::node::{self, BLOB_FLAG, LEAF_CELL_HEADER};
use super::{BTree, Head, node_write};
use crate::error::{Error, Result};
use quiredb_engine::{PageId, PageMut, PageRead, WriteTxn};

/// How full (in percent of the page) inserts in key order leave a leaf before starting
/// the next one.
pub(super) const DENSE_FILL_PERCENT: usize = 100;
/// The same for keys [`BTree::insert_batch`] had to sort (random keys). Filled
/// completely, a tree loaded from random keys and then written at random keys (KV's
/// individual writes after its bulk load) split a leaf on nearly every insert, and each
/// such commit logged two leaves and a branch: 0.160 ms a commit, 0.132 with room left.
/// Keys that came in order keep leaves full: T2's sorted insert wrote 10 % more pages
/// and ran 3–8 % slower with room left in them.
pub(super) const SORTED_FILL_PERCENT: usize = 90;

/// The most pairs [`BTree::insert_batch`] (keys: `remove_batch`) gathers and sorts at
/// once (8 M: a borrowed pair is 32 bytes, held twice while the run is put in order,
/// beside 16 bytes of its sort key, so 640 MiB at most; batches that large are rare,
/// and a larger run only saves leaf visits).
const SORT_RUN: usize = 1 << 23;

/// Hands `run` and then the rest of `items` to `each` in key order, sorted (stably:
/// equal keys keep their order) in runs of up to [`SORT_RUN`] items. `prefetch` is
/// given the item [`PREFETCH_AHEAD`] places after the one `each` gets: the items
/// come in key order, not in the order the caller keeps their bytes, so each one's
/// bytes are a cache miss unless asked for early.
pub(super) fn in_sorted_runs<T>(
    mut run: Vec<T>,
    mut items: impl Iterator<Item = T>,
    key: impl Fn(&T) -> &[u8],
    prefetch: impl Fn(&T),
    mut each: impl FnMut(T) -> Result<()>,
) -> Result<()> {
    loop {
        run.extend(items.by_ref().take(SORT_RUN.saturating_sub(run.len())));
        if run.is_empty() {
            return Ok(());
        }
        let mut sorted = sorted_stably(std::mem::take(&mut run), &key).into_iter();
        while let Some(item) = sorted.next() {
            if let Some(ahead) = sorted.as_slice().get(PREFETCH_AHEAD - 1) {
                prefetch(ahead);
            }
            each(item)?;
        }
    }
}

/// How many items ahead [`in_sorted_runs`] asks for an item's bytes (an insert takes
/// a few hundred nanoseconds, a miss about one hundred).
const PREFETCH_AHEAD: usize = 4;

/// `run` sorted stably by `key`.
fn sorted_stably<T>(run: Vec<T>, key: impl Fn(&T) -> &[u8]) -> Vec<T> {
    let order = key_order(&run, &key);
    // Options of references and of vectors take no more room than the items, so this
    // reuses the run's buffer.
    let mut slots: Vec<Option<T>> = run.into_iter().map(Some).collect();
    order.into_iter().map(|index| slots[index as usize].take().expect("each index once")).collect()
}

/// The indexes of `run` in ascending order of `key`, equal keys in index order.
///
/// Sorted as (first 8 key bytes as a big-endian word, zero-padded; index) packed in one
/// integer each, in one array, so that nearly every comparison is of two integers side
/// by side; only items whose words are equal are compared by their keys, which lie
/// wherever the caller keeps them. Sorting the items by their keys directly followed
/// two references into the caller's data on every comparison: for 1 M random keys
/// that was a quarter of the bulk load's time (`memcmp`, mostly cache misses).
fn key_order<T>(run: &[T], key: impl Fn(&T) -> &[u8]) -> Vec<u32> {
    let word = |bytes: &[u8]| {
        let mut head = [0u8; 8];
        let len = bytes.len().min(8);
        head[..len].copy_from_slice(&bytes[..len]);
        u64::from_be_bytes(head)
    };
    // Word and index in one integer: one comparison orders by word, then by index.
    let mut order: Vec<u128> =
        run.iter().zip(0u32..).map(|(item, index)| u128::from(word(key(item))) << 32 | u128::from(index)).collect();
    // A word's order agrees with its keys' (zero padding sorts a shorter key first),
    // so only runs of equal words need their keys compared; within one, the indexes
    // ascend, and the stable sort keeps them so for equal keys.
    order.sort_unstable();
    let index = |packed: &u128| *packed as u32 as usize;
    let mut start = 0;
    while start < order.len() {
        let same = order[start..].iter().take_while(|packed| **packed >> 32 == order[start] >> 32).count();
        if same > 1 {
            order[start..start + same].sort_by(|a, b| key(&run[index(a)]).cmp(key(&run[index(b)])));
        }
        start += same;
    }
    order.into_iter().map(|packed| packed as u32).collect()
}

/// Branch nodes visited on the way down: node id and the child index taken.
pub(super) type Path = Vec<(u64, usize)>;

/// Where an insert went.
pub(super) enum Placed {
    /// Into the leaf, in place.
    InPlace,
    /// The leaf was evened out with a sibling (the parent's separator changed).
    Shifted,
    /// The leaf split: the separator and the new right leaf.
    Split(Vec<u8>, u64),
}

/// The leaf of the previous insert of a batch (see the module docs).
#[derive(Default)]
struct LeafHint {
    /// Branch path to the leaf.
    path: Path,
    /// The leaf's id.
    leaf: u64,
    /// Whether the path is the rightmost one.
    rightmost: bool,
    /// Exclusive upper bound of the leaf's key range; `None` = unbounded.
    high: Option<Vec<u8>>,
    /// The key inserted last; the next key must be greater to reuse the leaf.
    last: Vec<u8>,
    /// Whether `last` is the leaf's last key (a greater key then goes to the end).
    at_end: bool,
}

impl LeafHint {
    fn covers(&self, key: &[u8]) -> bool {
        self.last.as_slice() < key && self.high.as_deref().is_none_or(|high| key < high)
    }
}

/// Encodes a leaf cell.
#[cfg(test)]
pub(super) fn leaf_cell(key: &[u8], word: u32, stored: &[u8]) -> Vec<u8> {
    let mut cell = Vec::with_capacity(LEAF_CELL_HEADER + key.len() + stored.len());
    leaf_cell_into(&mut cell, key, word, stored);
    cell
}

/// A leaf cell (key, value word, stored value) encoded into a reused buffer.
pub(super) fn leaf_cell_into(cell: &mut Vec<u8>, key: &[u8], word: u32, stored: &[u8]) {
    cell.clear();
    cell.extend_from_slice(&(key.len() as u16).to_le_bytes());
    cell.extend_from_slice(&word.to_le_bytes());
    cell.extend_from_slice(key);
    cell.extend_from_slice(stored);
}

/// Encodes a branch cell.
pub(super) fn branch_cell(key: &[u8]) -> Vec<u8> {
    let mut cell = Vec::with_capacity(2 + key.len());
    cell.extend_from_slice(&(key.len() as u16).to_le_bytes());
    cell.extend_from_slice(key);
    cell
}

/// The shortest key `s` with `left < s <= right` (a prefix of `right`).
pub(super) fn separator(left: &[u8], right: &[u8]) -> Vec<u8> {
    let common = left.iter().zip(right).take_while(|(a, b)| a == b).count();
    right[..(common + 1).min(right.len())].to_vec()
}

/// Byte-balanced split point of `cells` (1..len).
pub(super) fn split_point<C: AsRef<[u8]>>(cells: &[C], per_entry: usize) -> usize {
    let total: usize = cells.iter().map(|c| c.as_ref().len() + per_entry).sum();
    let mut acc = 0;
    for (i, cell) in cells.iter().enumerate() {
        acc += cell.as_ref().len() + per_entry;
        if acc * 2 >= total {
            return (i + 1).clamp(1, cells.len() - 1);
        }
    }
    cells.len() - 1
}

impl<'db> BTree<'_, WriteTxn<'db>> {
    /// Inserts or replaces the value of `key`; returns true if the key was present.
    pub fn insert(&mut self, key: &[u8], value: &[u8]) -> Result<bool> {
        self.claim_write()?;
        let before = self.head.get();
        let replaced = self.insert_entry(key, value, &mut None)?;
        self.store_head_if_changed(before)?;
        Ok(replaced)
    }

    /// Inserts or replaces every pair (a later pair wins over an earlier one with the
    /// same key), writing the head page once at the end; returns how many keys were
    /// new. After an error, abort the transaction.
    ///
    /// An ascending prefix is inserted as it streams in (no descent while the keys stay
    /// in one leaf, see the module docs). From the first key out of order on, the rest
    /// is gathered in runs of up to 8 M pairs, each sorted (stably, so the
    /// later of two equal keys still wins) and inserted in key order: every leaf is
    /// then visited once per run instead of once per key, which keeps a batch larger
    /// than the pool from writing and re-reading the same leaves over and over (the
    /// pool spills dirty pages it cannot hold; a leaf left behind is written once).
    pub fn insert_batch<K, V>(&mut self, pairs: impl IntoIterator<Item = (K, V)>) -> Result<u64>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        self.claim_write()?;
        let before = self.head.get();
        let mut added = 0;
        let result = self.insert_runs(pairs.into_iter(), &mut added);
        self.store_head_if_changed(before)?;
        result.map(|()| added)
    }

    /// The body of [`BTree::insert_batch`]: the ascending prefix, then sorted runs.
    fn insert_runs<K, V>(&mut self, mut pairs: impl Iterator<Item = (K, V)>, added: &mut u64) -> Result<()>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        let mut hint = None;
        let mut previous: Option<K> = None;
        let mut run: Vec<(K, V)> = Vec::new();
        for (key, value) in pairs.by_ref() {
            if previous.as_ref().is_some_and(|p| p.as_ref() > key.as_ref()) {
                run.push((key, value));
                break;
            }
            *added += u64::from(!self.insert_entry(key.as_ref(), value.as_ref(), &mut hint)?);
            previous = Some(key);
        }
        drop(previous);
        if !run.is_empty() {
            self.append_fill.set(SORTED_FILL_PERCENT);
        }
        let result = in_sorted_runs(
            run,
            pairs,
            |(key, _)| key.as_ref(),
            |(key, value)| {
                quiredb_engine::prefetch_bytes(&key.as_ref()[..key.as_ref().len().min(1)]);
                quiredb_engine::prefetch_bytes(value.as_ref());
            },
            |(key, value)| {
                *added += u64::from(!self.insert_entry(key.as_ref(), value.as_ref(), &mut hint)?);
                Ok(())
            },
        );
        self.append_fill.set(DENSE_FILL_PERCENT);
        result
    }

    /// [`BTree::insert`] without writing the head page; `hint` is the leaf of the
    /// previous insert of a batch, used when it covers `key` and updated after.
    fn insert_entry(&mut self, key: &[u8], value: &[u8], hint: &mut Option<LeafHint>) -> Result<bool> {
        let payload = self.txn.payload_size();
        let max = super::max_key_len(payload);
        if key.len() > max {
            return Err(Error::KeyTooLarge { len: key.len(), max });
        }
        let mut cell = std::mem::take(&mut self.cell);
        if LEAF_CELL_HEADER + key.len() + value.len() <= super::max_inline_cell(payload) {
            leaf_cell_into(&mut cell, key, value.len() as u32, value);
        } else {
            let blob = crate::blob::write_bytes(self.txn, value)?;
            leaf_cell_into(&mut cell, key, BLOB_FLAG, &blob.to_bytes());
        }
        let (mut path, leaf_id, rightmost, high, mut last, hinted, after_end) = match hint.take() {
            Some(h) if h.covers(key) => (h.path, h.leaf, h.rightmost, h.high, h.last, true, h.at_end),
            old => {
                if let Some(h) = old.as_ref().filter(|h| h.high.as_deref().is_some_and(|high| key >= high)) {
                    // The run's keys rise past the hinted leaf: it is final in this run.
                    self.txn.write_behind(PageId(h.leaf))?;
                }
                // The previous hint's buffers are reused: no allocation per descent.
                let (mut path, mut bound, last) =
                    old.map_or_else(Default::default, |h| (h.path, h.high.unwrap_or_default(), h.last));
                let (leaf, rightmost, bounded) = self.path_with_bound(key, &mut path, &mut bound)?;
                (path, leaf, rightmost, bounded.then_some(bound), last, false, false)
            }
        };
        let (replaced, placed, shrunk, at_end) = {
            let mut leaf = self.node_mut(leaf_id, true)?;
            let n = node::count(&leaf);
            let bad = self.at(leaf_id);
            let position = if after_end || (hinted && n > 0 && node::key(&leaf, n - 1).map_err(&bad)? < key) {
                Err(n)
            } else {
                node::search(&leaf, key).map_err(&bad)?
            };
            let at_end = position.map_or_else(|i| i == n, |i| i + 1 == n);
            let (replaced, placed, shrunk) = match position {
                Ok(i) => {
                    // What the replaced cell leaves behind: its length and its blob, if any.
                    let (old_len, old_blob) = {
                        let old = node::cell(&leaf, i).map_err(&bad)?;
                        let blob = match node::cell_value(old) {
                            node::Value::Blob(blob) => Some(blob),
                            node::Value::Inline(_) => None,
                        };
                        (old.len(), blob)
                    };
                    if let Some(blob) = old_blob {
                        // Unpinned while the blob goes: a corrupt blob may name the leaf.
                        drop(leaf);
                        crate::blob::free(self.txn, blob)?;
                        leaf = self.node_mut(leaf_id, true)?;
                    }
                    if old_len == cell.len() {
                        let at = node::slot(&leaf, i);
                        leaf[at..at + cell.len()].copy_from_slice(&cell);
                        (true, Placed::InPlace, false)
                    } else {
                        node_write::remove(&mut leaf, i).map_err(&bad)?;
                        let placed = self.place(leaf, leaf_id, &path, i, &cell)?;
                        (true, placed, cell.len() < old_len)
                    }
                }
                Err(i) => (false, self.place(leaf, leaf_id, &path, i, &cell)?, false),
            };
            (replaced, placed, shrunk, at_end)
        };
        if let Placed::Split(separator, right) = &placed {
            self.insert_into_parents(&mut path, separator.clone(), *right, rightmost)?;
        }
        if !replaced {
            self.set_head(|head| head.len = head.len.saturating_add(1));
        }
        if shrunk {
            self.rebalance(path, leaf_id)?;
        } else if matches!(placed, Placed::InPlace) {
            last.clear();
            last.extend_from_slice(key);
            *hint = Some(LeafHint { path, leaf: leaf_id, rightmost, high, last, at_end });
        }
        self.cell = cell;
        Ok(replaced)
    }

    /// Replaces the value of an existing key; returns false (changing nothing) if absent.
    pub fn update(&mut self, key: &[u8], value: &[u8]) -> Result<bool> {
        if !self.contains(key)? {
            return Ok(false);
        }
        self.insert(key, value)
    }

    pub(super) fn set_head(&self, edit: impl FnOnce(&mut Head)) {
        let mut head = self.head.get();
        edit(&mut head);
        self.head.set(head);
    }

    /// Descends to the leaf for `key`, recording the branch path; the flag tells
    /// whether every step took the last child (the rightmost path).
    pub(super) fn path_to(&self, key: &[u8]) -> Result<(Path, u64, bool)> {
        let mut path = Vec::new();
        let (id, rightmost, _) = self.path_with_bound(key, &mut path, &mut Vec::new())?;
        Ok((path, id, rightmost))
    }

    /// [`Self::path_to`] into `path`, also setting `high` to the exclusive upper bound
    /// of the leaf's key range: the separator right of the deepest branch step that
    /// was not the last child. Returns the leaf, the rightmost flag and whether there
    /// is such a bound (not on the rightmost path).
    fn path_with_bound(&self, key: &[u8], path: &mut Path, high: &mut Vec<u8>) -> Result<(u64, bool, bool)> {
        let head = self.head.get();
        path.clear();
        let mut id = head.root;
        let mut rightmost = true;
        for _ in 1..head.height {
            let page = self.node(id, false)?;
            let index = node::child_index(&page, key).map_err(self.at(id))?;
            if index < node::count(&page) {
                rightmost = false;
                high.clear();
                high.extend_from_slice(node::key(&page, index).map_err(self.at(id))?);
            }
            path.push((id, index));
            id = node::child(&page, index);
        }
        Ok((id, rightmost, !rightmost))
    }

    /// Inserts `cell` at `i` in a leaf (released here). A full leaf gives entries to a
    /// sibling with room (see `shift.rs`), else splits; the result says
    /// which, with the new right sibling and its separator after a split.
    fn place(&self, mut leaf: PageMut<'_>, leaf_id: u64, path: &Path, i: usize, cell: &[u8]) -> Result<Placed> {
        let n = node::count(&leaf);
        let appends = node::next(&leaf) == 0 && i == n && n > 0;
        let filled =
            node::used_bytes(&leaf) + cell.len() + node::LEAF_ENTRY > leaf.len() * self.append_fill.get() / 100;
        if appends && filled {
            let (separator, right) = self.append_leaf(&mut leaf, leaf_id, cell)?;
            return Ok(Placed::Split(separator, right));
        }
        if node_write::insert(&mut leaf, i, cell, 0).map_err(self.at(leaf_id))? {
            return Ok(Placed::InPlace);
        }
        if appends {
            let (separator, right) = self.append_leaf(&mut leaf, leaf_id, cell)?;
            return Ok(Placed::Split(separator, right));
        }
        drop(leaf);
        if self.shift_to_sibling(path, leaf_id, i, cell)? {
            return Ok(Placed::Shifted);
        }
        let (separator, right) = self.split_leaf(&mut self.node_mut(leaf_id, true)?, leaf_id, i, cell)?;
        Ok(Placed::Split(separator, right))
    }

    /// Splits a full leaf by bytes while inserting `cell` at `i`; returns the
    /// separator and the new right sibling.
    fn split_leaf(&self, leaf: &mut [u8], leaf_id: u64, i: usize, cell: &[u8]) -> Result<(Vec<u8>, u64)> {
        node::validate_cells(leaf, true).map_err(self.at(leaf_id))?;
        let copy = leaf.to_vec();
        let n = node::count(&copy);
        let (prev, next) = (node::prev(&copy), node::next(&copy));
        if next == leaf_id {
            return Err(self.at(leaf_id)("the leaf links to itself".to_owned()));
        }
        let mut cells =
            (0..n).map(|j| node::cell(&copy, j)).collect::<Result<Vec<&[u8]>, _>>().map_err(self.at(leaf_id))?;
        cells.insert(i, cell);
        let at = split_point(&cells, node::LEAF_ENTRY);
        let mut right = self.txn.alloc_page(super::LEAF_PAGE)?;
        let right_id = right.id().0;
        node_write::build(&mut right, 0, (leaf_id, next), &cells[at..], &[]);
        node_write::build(leaf, 0, (prev, right_id), &cells[..at], &[]);
        drop(right);
        if next != 0 {
            node_write::set_prev(&mut self.node_mut(next, true)?, right_id);
        }
        let separator = separator(node::cell_key(cells[at - 1], true), node::cell_key(cells[at], true));
        Ok((separator, right_id))
    }

    /// The split of a filled last leaf by a key past its end: a new last leaf holds just
    /// `cell` and the filled one stays as it is.
    fn append_leaf(&self, leaf: &mut [u8], leaf_id: u64, cell: &[u8]) -> Result<(Vec<u8>, u64)> {
        let mut right = self.txn.alloc_page(super::LEAF_PAGE)?;
        let right_id = right.id().0;
        node_write::build(&mut right, 0, (leaf_id, 0), &[cell], &[]);
        node_write::set_next(leaf, right_id);
        let last = node::key(leaf, node::count(leaf) - 1).map_err(self.at(leaf_id))?;
        Ok((separator(last, node::cell_key(cell, true)), right_id))
    }

    /// Inserts `(separator, right)` into the parents along `path`, splitting upwards
    /// and growing a new root when the old root splits.
    fn insert_into_parents(
        &self,
        path: &mut Path,
        mut separator: Vec<u8>,
        mut right: u64,
        rightmost: bool,
    ) -> Result<()> {
        while let Some((parent_id, index)) = path.pop() {
            let mut parent = self.node_mut(parent_id, false)?;
            let cell = branch_cell(&separator);
            if node_write::insert(&mut parent, index, &cell, right).map_err(self.at(parent_id))? {
                return Ok(());
            }
            (separator, right) = self.split_branch(&mut parent, parent_id, index, cell, right, rightmost)?;
        }
        let head = self.head.get();
        let mut root = self.txn.alloc_page(super::BRANCH_PAGE)?;
        let cell = branch_cell(&separator);
        node_write::build(&mut root, head.height as u8, (0, 0), &[&cell], &[head.root, right]);
        let root_id = root.id().0;
        self.set_head(|head| {
            head.root = root_id;
            head.height += 1;
        });
        Ok(())
    }

    /// Splits a full branch while inserting `cell` at `index` with child `right` at
    /// `index + 1`; returns the key pushed up and the new right branch.
    fn split_branch(
        &self,
        page: &mut [u8],
        page_id: u64,
        index: usize,
        cell: Vec<u8>,
        right: u64,
        rightmost: bool,
    ) -> Result<(Vec<u8>, u64)> {
        node::validate_cells(page, false).map_err(self.at(page_id))?;
        let n = node::count(page);
        let mut cells = (0..n)
            .map(|j| node::cell(page, j).map(<[u8]>::to_vec))
            .collect::<Result<Vec<Vec<u8>>, _>>()
            .map_err(self.at(page_id))?;
        let mut children: Vec<u64> = (0..=n).map(|j| node::child(page, j)).collect();
        cells.insert(index, cell);
        children.insert(index + 1, right);
        let at = if rightmost && index == n { n - 1 } else { split_point(&cells, node::BRANCH_ENTRY) };
        let level = node::level(page);
        let refs: Vec<&[u8]> = cells.iter().map(Vec::as_slice).collect();
        let mut new = self.txn.alloc_page(super::BRANCH_PAGE)?;
        node_write::build(&mut new, level, (0, 0), &refs[at + 1..], &children[at + 1..]);
        node_write::build(page, level, (0, 0), &refs[..at], &children[..=at]);
        Ok((node::cell_key(&cells[at], false).to_vec(), new.id().0))
    }
}

#[cfg(test)]
mod tests {
    use super::sorted_stably;
    use quiredb_test_support::Rng;

    /// Keys over a tiny alphabet (zero included) of 0..=12 bytes, so that many share
    /// their first 8 bytes, are prefixes of each other, end in zeros or repeat.
    fn random_key(rng: &mut Rng) -> Vec<u8> {
        let len = rng.below(13) as usize;
        let common = rng.below(len as u64 + 1) as usize;
        (0..len).map(|at| if at < common { 7 } else { rng.below(3) as u8 }).collect()
    }

    #[test]
    fn a_run_is_sorted_stably_by_its_keys_bytes() {
        // Proves: the word-and-index sort agrees with a stable sort of the keys for keys
        // shorter than, as long as and longer than the word, equal words, zero bytes
        // and repeated keys (which keep their order: the last of them wins an insert).
        let seed = quiredb_test_support::seed(0x5027_0F0A);
        let mut rng = Rng::new(seed | 1);
        for round in 0..200 {
            let n = rng.below(300) as usize;
            let run: Vec<(Vec<u8>, usize)> = (0..n).map(|place| (random_key(&mut rng), place)).collect();
            let mut expected = run.clone();
            expected.sort_by(|a, b| a.0.cmp(&b.0));
            let sorted = sorted_stably(run, |(key, _)| key.as_slice());
            assert_eq!(sorted, expected, "round {round}, seed {seed:#x} (QUIRE_SEED replays it)");
        }
    }
}
