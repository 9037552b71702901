//! [`Typed`]: a B+tree with typed keys and values (any [`Key`] type), so callers
//! never hand-encode. Thin: every call encodes, delegates to [`BTree`], decodes.

use super::{BTree, Key};
use crate::error::{Error, Result};
use quiredb_engine::{PageRead, WriteTxn};
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};

/// A typed view of a B+tree.
pub struct Typed<'t, T: PageRead, K: Key, V: Key> {
    tree: BTree<'t, T>,
    types: PhantomData<(K, V)>,
}

fn undecodable(name: &str, what: &str) -> Error {
    Error::Corrupted {
        structure: name.to_owned(),
        page: 0,
        reason: format!("a stored {what} does not decode as its type"),
    }
}

fn encode_bound<K: Key>(bound: Bound<&K>) -> Bound<Vec<u8>> {
    match bound {
        Bound::Included(key) => Bound::Included(key.encode()),
        Bound::Excluded(key) => Bound::Excluded(key.encode()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

impl<'t, T: PageRead, K: Key, V: Key> Typed<'t, T, K, V> {
    /// Opens the tree `name`.
    pub fn open(txn: &'t T, name: &str) -> Result<Self> {
        Ok(Typed { tree: BTree::open(txn, name)?, types: PhantomData })
    }

    /// The untyped tree.
    pub fn raw(&self) -> &BTree<'t, T> {
        &self.tree
    }

    /// Number of entries.
    pub fn len(&self) -> u64 {
        self.tree.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.tree.is_empty()
    }

    /// The value of `key`.
    pub fn get(&self, key: &K) -> Result<Option<V>> {
        match self.tree.get_vec(&key.encode())? {
            None => Ok(None),
            Some(bytes) => V::decode(&bytes).map(Some).ok_or_else(|| undecodable(self.tree.name(), "value")),
        }
    }

    /// Entries in `range`, ascending (or descending with `reverse`).
    pub fn range(&self, range: impl RangeBounds<K>, reverse: bool) -> Result<Vec<(K, V)>> {
        let (low, high) = (encode_bound(range.start_bound()), encode_bound(range.end_bound()));
        let (low, high) = (as_ref(&low), as_ref(&high));
        let entries = if reverse { self.tree.range_rev(low, high) } else { self.tree.range(low, high) };
        entries.map(|entry| self.decode(entry?)).collect()
    }

    /// The entry with the greatest key ≤ `key`.
    pub fn floor(&self, key: &K) -> Result<Option<(K, V)>> {
        self.tree.floor(&key.encode())?.map(|entry| self.decode(entry)).transpose()
    }

    /// The entry with the least key ≥ `key`.
    pub fn ceiling(&self, key: &K) -> Result<Option<(K, V)>> {
        self.tree.ceiling(&key.encode())?.map(|entry| self.decode(entry)).transpose()
    }

    fn decode(&self, (key, value): (Vec<u8>, Vec<u8>)) -> Result<(K, V)> {
        let key = K::decode(&key).ok_or_else(|| undecodable(self.tree.name(), "key"))?;
        let value = V::decode(&value).ok_or_else(|| undecodable(self.tree.name(), "value"))?;
        Ok((key, value))
    }
}

fn as_ref(bound: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match bound {
        Bound::Included(key) => Bound::Included(key.as_slice()),
        Bound::Excluded(key) => Bound::Excluded(key.as_slice()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

impl<'t, 'db, K: Key, V: Key> Typed<'t, WriteTxn<'db>, K, V> {
    /// Opens `name`, creating it when absent.
    pub fn open_or_create(txn: &'t WriteTxn<'db>, name: &str) -> Result<Self> {
        Ok(Typed { tree: BTree::open_or_create(txn, name)?, types: PhantomData })
    }

    /// Inserts or replaces; true if the key was present.
    pub fn insert(&mut self, key: &K, value: &V) -> Result<bool> {
        self.tree.insert(&key.encode(), &value.encode())
    }

    /// Removes `key`; true if it was present.
    pub fn remove(&mut self, key: &K) -> Result<bool> {
        self.tree.remove(&key.encode())
    }
}
