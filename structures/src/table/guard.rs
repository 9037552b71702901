//! [`ValueGuard`] and [`KeyGuard`]: a stored value or key read in place. The guard
//! keeps the leaf pinned (no copy of the bytes); `value()`/`key()` decode on each call,
//! borrowing the bytes for borrowed types (`&str`, `&[u8]`). The bytes are checked to
//! decode when the guard is made, so decoding later cannot fail.

use super::types::{Key, Value, decode_whole_key};
use crate::btree::Pinned;
use crate::error::{Error, Result};
use std::fmt;
use std::marker::PhantomData;

/// A stored value of type `V`, read in place.
pub struct ValueGuard<'t, V: Value + 'static> {
    bytes: Pinned<'t>,
    types: PhantomData<fn() -> V>,
}

/// A stored key of type `K`, read in place.
pub struct KeyGuard<'t, K: Key + 'static> {
    bytes: Pinned<'t>,
    types: PhantomData<fn() -> K>,
}

fn undecodable(table: &str, what: &str, type_name: String) -> Error {
    Error::Corrupted {
        structure: table.to_owned(),
        page: 0,
        reason: format!("a stored {what} does not decode as {type_name}"),
    }
}

impl<'t, V: Value + 'static> ValueGuard<'t, V> {
    /// Checks that `bytes` decode as `V` (`Corrupted` naming `table` if not).
    pub(crate) fn new(bytes: Pinned<'t>, table: &str) -> Result<Self> {
        if V::decode_value(&bytes).is_none() {
            return Err(undecodable(table, "value", V::type_name()));
        }
        Ok(ValueGuard { bytes, types: PhantomData })
    }

    /// The value.
    pub fn value(&self) -> V::SelfType<'_> {
        V::decode_value(&self.bytes).expect("the bytes decoded when the guard was made")
    }

    /// The value's stored bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

impl<'t, K: Key + 'static> KeyGuard<'t, K> {
    /// Checks that `bytes` decode as `K` (`Corrupted` naming `table` if not).
    pub(crate) fn new(bytes: Pinned<'t>, table: &str) -> Result<Self> {
        if decode_whole_key::<K>(&bytes).is_none() {
            return Err(undecodable(table, "key", K::type_name()));
        }
        Ok(KeyGuard { bytes, types: PhantomData })
    }

    /// The key.
    pub fn key(&self) -> K::SelfType<'_> {
        decode_whole_key::<K>(&self.bytes).expect("the bytes decoded when the guard was made")
    }

    /// The key's stored (order-preserving) bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

impl<V: Value + 'static> fmt::Debug for ValueGuard<'_, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ValueGuard<{}>({} bytes)", V::type_name(), self.bytes.len())
    }
}

impl<K: Key + 'static> fmt::Debug for KeyGuard<'_, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyGuard<{}>({} bytes)", K::type_name(), self.bytes.len())
    }
}
