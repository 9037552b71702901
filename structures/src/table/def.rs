//! [`TableDef`]: a table's name and its key and value types, as a constant, and the
//! record of those types in the table's catalog entry (its `params`), checked on every
//! open so that a table is never read as another type.
//!
//! Catalog parameters of a typed table, little-endian:
//!
//! | offset | size | field          | meaning                                    |
//! |-------:|-----:|----------------|--------------------------------------------|
//! | 0      | 4    | magic          | `"QTD1"`                                   |
//! | 4      | 1    | key encoding   | [`KEY_ENCODING`]: the order-preserving key encoding of `types.rs` |
//! | 5      | 1    | value encoding | [`VALUE_ENCODING`]: the value encoding of `types.rs` |
//! | 6      | 2    | `k`            | bytes of the key type name                 |
//! | 8      | k    | key type       | UTF-8, [`Value::type_name`] of the key     |
//! | 8+k    | 2    | `v`            | bytes of the value type name               |
//! | 10+k   | v    | value type     | UTF-8                                      |
//!
//! A tree made untyped (empty parameters, [`crate::btree::BTree::create`]) reads as a
//! table of `&[u8]` to `&[u8]`, whose encodings are the bytes themselves.

use super::types::{Key, Value};
use crate::error::{Error, Result};
use std::fmt;
use std::marker::PhantomData;

/// Encoding id of the key encoding in `types.rs` (stored; bumped if it ever changes).
pub const KEY_ENCODING: u8 = 1;
/// Encoding id of the value encoding in `types.rs`.
pub const VALUE_ENCODING: u8 = 1;
const MAGIC: &[u8; 4] = b"QTD1";

/// A table: its catalog name and the types of its keys and values, usable as a
/// constant and opened from a transaction (see [`Structures::open_table`](crate::Structures)).
///
/// ```
/// use quiredb_structures::table::TableDef;
/// const OBSERVATIONS: TableDef<(&str, i64), f64> = TableDef::new("observations");
/// assert_eq!(OBSERVATIONS.name(), "observations");
/// ```
pub struct TableDef<K: Key + 'static, V: Value + 'static> {
    name: &'static str,
    types: PhantomData<fn() -> (K, V)>,
}

impl<K: Key + 'static, V: Value + 'static> TableDef<K, V> {
    /// The table named `name`.
    pub const fn new(name: &'static str) -> Self {
        TableDef { name, types: PhantomData }
    }

    /// Catalog name.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The types as stored in the catalog.
    pub(crate) fn types() -> StoredTypes {
        StoredTypes::new(K::type_name(), V::type_name())
    }
}

impl<K: Key + 'static, V: Value + 'static> Clone for TableDef<K, V> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K: Key + 'static, V: Value + 'static> Copy for TableDef<K, V> {}

impl<K: Key + 'static, V: Value + 'static> fmt::Debug for TableDef<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TableDef({:?}: {})", self.name, Self::types())
    }
}

/// Key and value types with their encodings, as a catalog entry records them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StoredTypes {
    key_encoding: u8,
    value_encoding: u8,
    key: String,
    value: String,
}

impl fmt::Display for StoredTypes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let encodings = (self.key_encoding, self.value_encoding);
        write!(f, "keys {} to values {} (encodings {}/{})", self.key, self.value, encodings.0, encodings.1)
    }
}

impl StoredTypes {
    /// Key and value type names, in this build's encodings.
    pub(crate) fn new(key: String, value: String) -> StoredTypes {
        StoredTypes { key_encoding: KEY_ENCODING, value_encoding: VALUE_ENCODING, key, value }
    }

    /// What an untyped tree (empty parameters) holds.
    fn untyped() -> StoredTypes {
        TableDef::<&'static [u8], &'static [u8]>::types()
    }

    /// The catalog parameters recording these types.
    pub(crate) fn to_params(&self) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&[self.key_encoding, self.value_encoding]);
        for name in [&self.key, &self.value] {
            let len = u16::try_from(name.len()).expect("a type name is under 64 KiB");
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(name.as_bytes());
        }
        out
    }

    /// Reads catalog parameters; `Corrupted` when they are not a record of types.
    pub(crate) fn from_params(table: &str, params: &[u8]) -> Result<StoredTypes> {
        if params.is_empty() {
            return Ok(StoredTypes::untyped());
        }
        Self::parse(params).ok_or_else(|| Error::Corrupted {
            structure: table.to_owned(),
            page: 0,
            reason: "the catalog entry's type record is malformed".to_owned(),
        })
    }

    fn parse(params: &[u8]) -> Option<StoredTypes> {
        let rest = params.strip_prefix(MAGIC)?;
        let (&[key_encoding, value_encoding], mut rest) = rest.split_first_chunk::<2>()?;
        let mut name = || -> Option<String> {
            let (len, tail) = rest.split_first_chunk::<2>()?;
            let (name, tail) = tail.split_at_checked(usize::from(u16::from_le_bytes(*len)))?;
            rest = tail;
            String::from_utf8(name.to_vec()).ok()
        };
        let (key, value) = (name()?, name()?);
        rest.is_empty().then_some(StoredTypes { key_encoding, value_encoding, key, value })
    }

    /// `TypeMismatch` naming both when `requested` differs from these stored types.
    pub(crate) fn check(&self, table: &str, requested: &StoredTypes) -> Result<()> {
        if self == requested {
            return Ok(());
        }
        Err(Error::TypeMismatch { name: table.to_owned(), stored: self.to_string(), requested: requested.to_string() })
    }
}
