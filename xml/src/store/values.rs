//! The value index (`xml:C:value`): attribute values and the string values of elements
//! without element children, by name, as strings and — where the text is an XPath
//! number — as numbers. It answers `[@id = "person0"]`, `[. = "x"]` and `[price > 40]`
//! without reading the document index.
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
//! Loading buffers entries and writes them sorted, [`FLUSH_BYTES`] at a time; a list
//! that already exists (an earlier flush or load) is extended, since later pres are
//! larger. One entry per distinct value rather than per node: on XMark f=0.1 the
//! index went from 6.5 MB to a third of that.
//!
//! Read next: `check.rs`, which proves the index equals the document index.

use super::format::{Kind, Reader, f64_key, put_varint};
use super::{XmlStore, corrupted};
use crate::error::Result;
use crate::reference::xpath_number;
use quiredb_engine::{PageRead, WriteTxn};
use quiredb_structures::btree::BTree;
use std::collections::HashMap;
use std::ops::Bound;

/// Longest value indexed, in bytes.
pub const VALUE_MAX: usize = 96;
/// Buffered bytes before a sorted write.
const FLUSH_BYTES: usize = 32 << 20;

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

/// True when `value` goes into the index.
pub fn indexable(value: &str) -> bool {
    value.len() <= VALUE_MAX && !value.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
}

/// Decodes a posting list, appending its pres to `out`.
pub fn decode_postings(bytes: &[u8], out: &mut Vec<u64>) -> std::result::Result<(), String> {
    let mut r = Reader::new(bytes);
    let mut pre = 0u64;
    let mut first = true;
    while !r.is_empty() {
        let delta = r.varint()?;
        if !first && delta == 0 {
            return Err("a posting list repeats a node".into());
        }
        first = false;
        pre = pre.checked_add(delta).ok_or("posting list overflows")?;
        out.push(pre);
    }
    if first {
        return Err("empty posting list".into());
    }
    Ok(())
}

/// Buffers value-index entries of a load.
#[derive(Default)]
pub struct ValueWriter {
    entries: Vec<(Vec<u8>, u64)>,
    bytes: usize,
    /// Entries indexed per (kind, name) during this load.
    pub indexed: HashMap<(Kind, u32), u64>,
}

impl ValueWriter {
    /// Indexes `value` of node `pre` (kind, name) when it qualifies.
    pub fn add(&mut self, name: u32, kind: Kind, value: &str, pre: u64) {
        if !indexable(value) {
            return;
        }
        let mut key = Vec::with_capacity(value.len() + 7);
        let number = xpath_number(value);
        if number.is_nan() {
            string_key(&mut key, name, kind, value);
        } else {
            number_key(&mut key, name, kind, Some(number));
        }
        self.bytes += key.len() + 48;
        self.entries.push((key, pre));
        *self.indexed.entry((kind, name)).or_insert(0) += 1;
    }

    /// True when the buffer should be written.
    pub fn is_full(&self) -> bool {
        self.bytes >= FLUSH_BYTES
    }

    /// Writes the buffered entries, one posting list per key, in key order.
    pub fn flush(&mut self, tree: &mut BTree<'_, WriteTxn<'_>>) -> Result<()> {
        self.entries.sort_unstable();
        let mut list = Vec::new();
        let mut existing = Vec::new();
        let mut i = 0;
        while i < self.entries.len() {
            let key = &self.entries[i].0;
            let end = i + self.entries[i..].iter().take_while(|(k, _)| k == key).count();
            list.clear();
            let mut last = 0;
            if let Some(stored) = tree.get_vec(key)? {
                existing.clear();
                decode_postings(&stored, &mut existing)
                    .map_err(|reason| corrupted(tree.name(), 0, format!("value index: {reason}")))?;
                last = *existing.last().expect("lists are never empty");
                list.extend_from_slice(&stored);
            }
            for &(_, pre) in &self.entries[i..end] {
                put_varint(&mut list, pre - last);
                last = pre;
            }
            tree.insert(key, &list)?;
            i = end;
        }
        self.entries.clear();
        self.bytes = 0;
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
        if let Some(list) = self.value.get_vec(&key)? {
            decode_postings(&list, &mut pres)
                .map_err(|reason| corrupted(&self.name, 0, format!("value index: {reason}")))?;
        }
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
        for entry in self.value.range(low.as_ref().map(Vec::as_slice), high.as_ref().map(Vec::as_slice)) {
            let (_, list) = entry?;
            decode_postings(&list, &mut pres)
                .map_err(|reason| corrupted(&self.name, 0, format!("value index: {reason}")))?;
        }
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

    /// Every entry of the value index (key, posting list), for the checker.
    pub(super) fn value_entries(&self) -> impl Iterator<Item = Result<(Vec<u8>, Vec<u8>)>> + '_ {
        self.value.range(Bound::Unbounded, Bound::Unbounded).map(|e| e.map_err(Into::into))
    }
}
