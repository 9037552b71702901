//! The value index (`xml:C:value`): attribute values and the string values of elements
//! without element children, by name, as strings and — where the text is an XPath
//! number — as numbers. It answers `[@id = "person0"]`, `[. = "x"]` and `[price > 40]`
//! without reading the document index.
//!
//! Entry keys (entries are kept in front-coded blocks, see `vblock.rs`):
//!
//! | key | value |
//! |-----|-------|
//! | `s`, name id (u32 BE), kind (u8), value bytes, `0x00` | posting list |
//! | `f`, name id (u32 BE), kind (u8), [`f64_key`] of the number | posting list |
//!
//! A value that is an XPath number (`" 40.50"`) has only its `f` entry, any other
//! value only its `s` entry: a string literal equals such a value only if it is a
//! number-looking string too, so [`XmlStore::lookup_string`] looks number-looking
//! literals up by number and keeps the candidates whose text is equal.
//!
//! A posting list is the pres of the nodes with that value in document order, as
//! varint deltas (the first from 0). XML text cannot hold U+0000, so the `0x00`
//! terminator keeps `"ab"` before `"abc"`. Only values up to [`VALUE_MAX`] bytes are
//! indexed, and no whitespace-only value; the dict counts what was indexed per name
//! (`v` keys of `dict.rs`), so a name's index is complete when that count equals its
//! node count (see [`XmlStore::value_index_complete`]).
//!
//! Loading buffers entries and merges them sorted into the blocks, [`FLUSH_BYTES`] at a
//! time; a list that already exists (an earlier flush or load) is extended, since later
//! pres are larger. One entry per distinct value rather than per node, and blocks
//! rather than a cell per value: on XMark f=1 the index went from 24.3 MB (one cell
//! per value) to 9.5 MB.
//!
//! Read next: `check.rs`, which proves the index equals the document index.

use super::format::{Kind, f64_key};
use super::vblock::{self, Run};
use super::{XmlStore, corrupted};
use crate::error::Result;
use crate::reference::xpath_number;
use quiredb_engine::{PageRead, WriteTxn};
use quiredb_structures::btree::BTree;
use rayon::slice::ParallelSliceMut;
use std::collections::HashMap;
use std::ops::Bound;

/// A visitor of value-index entries: (key, posting list).
pub(super) type ValueVisitor<'v> = dyn FnMut(&[u8], &[u64]) -> Result<()> + 'v;

/// Buffers of a value-index scan (see [`XmlStore::scan_values_with`]).
#[derive(Debug, Default)]
pub struct ScanBuffers {
    tree_key: Vec<u8>,
    block: Vec<u8>,
    key: Vec<u8>,
    pres: Vec<u64>,
}

/// Longest value indexed, in bytes.
pub const VALUE_MAX: usize = 96;
/// Buffered bytes before a sorted write (keys and their 32-byte slots).
const FLUSH_BYTES: usize = 128 << 20;

/// The key of string value `value` of nodes of `kind` named `name`.
pub fn string_key(out: &mut Vec<u8>, name: u32, kind: Kind, value: &str) {
    out.clear();
    out.push(b's');
    out.extend_from_slice(&name.to_be_bytes());
    out.push(kind as u8);
    out.extend_from_slice(value.as_bytes());
    out.push(0);
}

/// The key of number `number` (or, without it, the prefix of a name's numbers).
pub fn number_key(out: &mut Vec<u8>, name: u32, kind: Kind, number: Option<f64>) {
    out.clear();
    out.push(b'f');
    out.extend_from_slice(&name.to_be_bytes());
    out.push(kind as u8);
    if let Some(number) = number {
        out.extend_from_slice(&f64_key(if number == 0.0 { 0.0 } else { number }));
    }
}

/// The index key of `value` (an indexable value): its number's key when it is an
/// XPath number, else its string's.
pub fn value_key(out: &mut Vec<u8>, name: u32, kind: Kind, value: &str) {
    let number = xpath_number(value);
    if number.is_nan() {
        string_key(out, name, kind, value);
    } else {
        number_key(out, name, kind, Some(number));
    }
}

/// True when `value` goes into the index.
pub fn indexable(value: &str) -> bool {
    value.len() <= VALUE_MAX && !value.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
}

/// Buffers value-index entries of a load: keys back to back in one buffer, so an
/// entry costs no allocation.
#[derive(Default)]
pub struct ValueWriter {
    keys: Vec<u8>,
    /// Each entry: its key's first 16 bytes (big-endian, zero-padded, for sorting
    /// without touching `keys`), the key's start and length, the pre.
    entries: Vec<(u128, u32, u32, u64)>,
    /// Entries indexed per (kind, name) during this load.
    pub indexed: HashMap<(Kind, u32), u64>,
    scratch: Vec<u8>,
}

impl ValueWriter {
    /// Indexes `value` of node `pre` (kind, name) when it qualifies.
    pub fn add(&mut self, name: u32, kind: Kind, value: &str, pre: u64) {
        if !indexable(value) {
            return;
        }
        let key = &mut self.scratch;
        value_key(key, name, kind, value);
        let mut head = [0u8; 16];
        let n = key.len().min(16);
        head[..n].copy_from_slice(&key[..n]);
        self.entries.push((u128::from_be_bytes(head), self.keys.len() as u32, key.len() as u32, pre));
        self.keys.extend_from_slice(key);
        *self.indexed.entry((kind, name)).or_insert(0) += 1;
    }

    /// True when the buffer should be written (or its offsets would overflow).
    pub fn is_full(&self) -> bool {
        self.keys.len() + 32 * self.entries.len() >= FLUSH_BYTES || self.keys.len() >= u32::MAX as usize / 2
    }

    /// Merges the buffered entries into the index, one posting list per key.
    pub fn flush(&mut self, tree: &mut BTree<'_, WriteTxn<'_>>, block_limit: usize) -> Result<()> {
        let keys = &self.keys;
        let key = |&(_, at, len, _): &(u128, u32, u32, u64)| &keys[at as usize..(at + len) as usize];
        // Keys of at most 16 bytes are wholly in the head: a string key ends in its only
        // zero byte and a number key has a fixed length, so equal heads mean equal keys.
        let whole = |e: &(u128, u32, u32, u64)| e.2 <= 16;
        self.entries.par_sort_unstable_by(|a, b| {
            let tail = || if whole(a) && whole(b) { std::cmp::Ordering::Equal } else { key(a).cmp(key(b)) };
            a.0.cmp(&b.0).then_with(tail).then(a.3.cmp(&b.3))
        });
        let pres: Vec<u64> = self.entries.iter().map(|e| e.3).collect();
        let mut runs: Vec<Run<'_>> = Vec::new();
        let mut start = 0;
        for i in 1..=self.entries.len() {
            if i == self.entries.len() || key(&self.entries[i]) != key(&self.entries[start]) {
                runs.push((key(&self.entries[start]), &pres[start..i]));
                start = i;
            }
        }
        vblock::merge(tree, &runs, block_limit)?;
        self.entries.clear();
        self.keys.clear();
        Ok(())
    }
}

impl<T: PageRead> XmlStore<'_, T> {
    /// Pres of the nodes of `kind` and name `name` whose value equals `value` (string
    /// comparison), in document order. Only indexed values are found (see
    /// [`XmlStore::value_index_complete`]).
    pub fn lookup_string(&self, name: u32, kind: Kind, value: &str) -> Result<Vec<u64>> {
        let number = xpath_number(value);
        if !number.is_nan() {
            let mut pres = self.lookup_number(name, kind, Bound::Included(number), Bound::Included(number))?;
            let mut text = Vec::new();
            let mut equal = Vec::with_capacity(pres.len());
            for pre in pres.drain(..) {
                text.clear();
                self.string_value(pre, &mut text)?;
                if text == value.as_bytes() {
                    equal.push(pre);
                }
            }
            return Ok(equal);
        }
        let mut key = Vec::new();
        string_key(&mut key, name, kind, value);
        let mut pres = Vec::new();
        self.scan_values(Bound::Included(&key), Bound::Included(&key), &mut |_, found| {
            pres.extend_from_slice(found);
            Ok(())
        })?;
        Ok(pres)
    }

    /// Pres of the nodes of `kind` and name `name` whose value is a number within the
    /// bounds, in document order.
    pub fn lookup_number(&self, name: u32, kind: Kind, low: Bound<f64>, high: Bound<f64>) -> Result<Vec<u64>> {
        let mut prefix = Vec::new();
        number_key(&mut prefix, name, kind, None);
        let key_of = |n: f64| {
            let mut key = Vec::new();
            number_key(&mut key, name, kind, Some(n));
            key
        };
        let mut end = prefix.clone();
        end.extend_from_slice(&[0xff; 9]);
        let low = match low {
            Bound::Included(n) => Bound::Included(key_of(n)),
            Bound::Excluded(n) => Bound::Excluded(key_of(n)),
            Bound::Unbounded => Bound::Included(prefix),
        };
        let high = match high {
            Bound::Included(n) => Bound::Included(key_of(n)),
            Bound::Excluded(n) => Bound::Excluded(key_of(n)),
            Bound::Unbounded => Bound::Excluded(end),
        };
        let mut pres = Vec::new();
        let (low, high) = (low.as_ref().map(Vec::as_slice), high.as_ref().map(Vec::as_slice));
        self.scan_values(low, high, &mut |_, found| {
            pres.extend_from_slice(found);
            Ok(())
        })?;
        pres.sort_unstable();
        Ok(pres)
    }

    /// True when every node of `kind` and `name` has its value in the index (no value
    /// over [`VALUE_MAX`], none whitespace-only, no element with element children), so
    /// a lookup is an exact answer.
    pub fn value_index_complete(&self, kind: Kind, name: u32) -> bool {
        let dict = &self.dictionary;
        let total = dict.counts.get(&(kind, name)).copied().unwrap_or(0);
        dict.indexed.get(&(kind, name)).copied().unwrap_or(0) == total
    }

    /// Calls `visit` with each entry whose key lies within the bounds, in key order.
    pub(super) fn scan_values(
        &self,
        low: Bound<&[u8]>,
        high: Bound<&[u8]>,
        visit: &mut ValueVisitor<'_>,
    ) -> Result<()> {
        self.scan_values_with(low, high, &mut ScanBuffers::default(), visit)
    }

    /// [`XmlStore::scan_values`] with reused buffers: allocates nothing once they have
    /// grown.
    pub(super) fn scan_values_with(
        &self,
        low: Bound<&[u8]>,
        high: Bound<&[u8]>,
        buffers: &mut ScanBuffers,
        visit: &mut ValueVisitor<'_>,
    ) -> Result<()> {
        let mut cursor = self.value.cursor();
        match low {
            Bound::Included(k) | Bound::Excluded(k) => {
                cursor.seek_floor(k)?;
                if !cursor.valid() {
                    cursor.seek_first()?;
                }
            }
            Bound::Unbounded => cursor.seek_first()?,
        }
        let above = |key: &[u8]| match high {
            Bound::Included(h) => key > h,
            Bound::Excluded(h) => key >= h,
            Bound::Unbounded => false,
        };
        let below = |key: &[u8]| match low {
            Bound::Included(l) => key < l,
            Bound::Excluded(l) => key <= l,
            Bound::Unbounded => false,
        };
        let ScanBuffers { tree_key, block, key, pres } = buffers;
        while let Some(k) = cursor.key() {
            tree_key.clear();
            tree_key.extend_from_slice(k);
            if vblock::split_tree_key(tree_key).is_some_and(|(first_entry, _)| above(first_entry)) {
                break;
            }
            cursor.value(block)?;
            let mut done = false;
            vblock::decode_with(tree_key, block, key, pres, |key, pres| {
                if above(key) {
                    done = true;
                } else if !done && !below(key) {
                    visit(key, pres)?;
                }
                Ok(())
            })?
            .map_err(|reason| corrupted(&self.name, 0, format!("value block: {reason}")))?;
            if done {
                break;
            }
            cursor.move_next()?;
        }
        Ok(())
    }
}
