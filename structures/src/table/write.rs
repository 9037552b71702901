//! Writing a typed table: insert, remove, `pop_first`/`pop_last`, `retain`. Each
//! encodes into the handle's scratch buffers and delegates to the B+tree.

use super::guard::{KeyGuard, ValueGuard};
use super::types::{Key, Value};
use super::{Table, types};
use crate::btree::Pinned;
use crate::error::Result;
use quiredb_engine::WriteTxn;
use std::borrow::Borrow;

/// An entry taken out of a table: owned copies of its key and value (they outlive
/// the transaction).
pub type Removed<K, V> = (KeyGuard<'static, K>, ValueGuard<'static, V>);

impl<K: Key + 'static, V: Value + 'static> Table<'_, WriteTxn<'_>, K, V> {
    /// Stores `value` under `key`; true when it replaced a value.
    pub fn insert<'k, 'v>(
        &mut self,
        key: impl Borrow<K::SelfType<'k>>,
        value: impl Borrow<V::SelfType<'v>>,
    ) -> Result<bool> {
        let mut encoded = Vec::new();
        V::encode_value(value.borrow(), &mut encoded);
        let mut scratch = std::mem::take(self.key.get_mut());
        let result = types::encode_whole_key::<K>(key.borrow(), &mut scratch)
            .map_err(|reason| self.key_error(reason))
            .and_then(|()| self.tree.insert(&scratch, &encoded));
        *self.key.get_mut() = scratch;
        result
    }

    /// Removes `key`; true when it was present.
    pub fn remove<'k>(&mut self, key: impl Borrow<K::SelfType<'k>>) -> Result<bool> {
        let mut scratch = std::mem::take(self.key.get_mut());
        let result = types::encode_whole_key::<K>(key.borrow(), &mut scratch)
            .map_err(|reason| self.key_error(reason))
            .and_then(|()| self.tree.remove(&scratch));
        *self.key.get_mut() = scratch;
        result
    }

    /// Removes and returns the entry with the least key.
    pub fn pop_first(&mut self) -> Result<Option<Removed<K, V>>> {
        let first = self.tree.first()?;
        self.take(first)
    }

    /// Removes and returns the entry with the greatest key.
    pub fn pop_last(&mut self) -> Result<Option<Removed<K, V>>> {
        let last = self.tree.last()?;
        self.take(last)
    }

    fn take(&mut self, entry: Option<(Vec<u8>, Vec<u8>)>) -> Result<Option<Removed<K, V>>> {
        let Some((key, value)) = entry else { return Ok(None) };
        self.tree.remove(&key)?;
        let name = self.tree.name();
        Ok(Some((KeyGuard::new(Pinned::owned(key), name)?, ValueGuard::new(Pinned::owned(value), name)?)))
    }

    /// Keeps only the entries for which `keep(key, value)` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(K::SelfType<'_>, V::SelfType<'_>) -> bool) -> Result<()> {
        let mut doomed = Vec::new();
        for entry in self.iter()? {
            let (key, value) = entry?;
            if !keep(key.key(), value.value()) {
                doomed.push(key.bytes().to_vec());
            }
        }
        for key in doomed {
            self.tree.remove(&key)?;
        }
        Ok(())
    }
}

impl<K: Key + 'static, V: Value + 'static> Table<'_, WriteTxn<'_>, K, V> {
    /// Loads `entries`, in strictly ascending key order, into the empty table (see
    /// [`BTree::bulk_load`](crate::btree::BTree::bulk_load)); returns how many.
    pub fn bulk_load<'k, 'v, KB, VB>(&mut self, entries: impl IntoIterator<Item = (KB, VB)>) -> Result<u64>
    where
        KB: Borrow<K::SelfType<'k>>,
        VB: Borrow<V::SelfType<'v>>,
    {
        let mut refused = None;
        let mut entries = entries.into_iter();
        let encoded = std::iter::from_fn(|| {
            let (key, value) = entries.next()?;
            let mut key_bytes = Vec::new();
            if let Err(reason) = types::encode_whole_key::<K>(key.borrow(), &mut key_bytes) {
                refused = Some(reason);
                return None;
            }
            let mut value_bytes = Vec::new();
            V::encode_value(value.borrow(), &mut value_bytes);
            Some((key_bytes, value_bytes))
        });
        let loaded = self.tree.bulk_load(encoded)?;
        match refused {
            Some(reason) => Err(self.key_error(reason)),
            None => Ok(loaded),
        }
    }
}
