//! Typed tables: a B+tree whose keys and values have Rust types, declared once as a
//! constant [`TableDef`] and opened from a transaction (`txn.open_table(DEF)?`, trait
//! [`crate::Structures`]). The types are stored in the catalog and checked on every open
//! ([`crate::Error::TypeMismatch`]); reads return guards over the pinned leaf
//! ([`ValueGuard`], [`KeyGuard`]), so a read copies nothing; ranges take any
//! `RangeBounds` of the key type and run in both directions.
//!
//! A handle borrows its transaction, so it cannot outlive it, and a write transaction
//! holds at most one handle per table ([`crate::Error::AlreadyOpen`]):
//!
//! ```compile_fail,E0505
//! # use quiredb_engine::{Database, Durability, storage::MemStorage};
//! # use quiredb_structures::{Structures, table::TableDef};
//! # let db = Database::builder().with_storage(std::sync::Arc::new(MemStorage::new()), "m").unwrap();
//! const T: TableDef<u64, u64> = TableDef::new("t");
//! let txn = db.begin_write().unwrap();
//! let mut table = txn.open_table(T).unwrap();
//! txn.commit(Durability::Checksummed).unwrap(); // error: `txn` is borrowed by `table`
//! table.insert(1, 2).unwrap();
//! ```
//!
//! A guard pins its leaf and borrows the table, so the table cannot change while one
//! lives:
//!
//! ```compile_fail,E0502
//! # use quiredb_engine::{Database, storage::MemStorage};
//! # use quiredb_structures::{Structures, table::TableDef};
//! # let db = Database::builder().with_storage(std::sync::Arc::new(MemStorage::new()), "m").unwrap();
//! const T: TableDef<u64, u64> = TableDef::new("t");
//! let txn = db.begin_write().unwrap();
//! let mut table = txn.open_table(T).unwrap();
//! let value = table.get(1).unwrap();
//! table.insert(2, 3).unwrap(); // error: `table` is borrowed by `value`
//! drop(value);
//! ```
//!
//! An untyped B+tree ([`crate::btree::BTree`]) stays available for byte keys and
//! values; it opens as a `TableDef<&[u8], &[u8]>` too.
//!
//! Files: `types.rs` (the [`Key`] and [`Value`] encodings) · `def.rs` (definitions and
//! the stored types) · `guard.rs` · `iter.rs` (ranges) · `open.rs` (opening, deleting)
//! · `write.rs` (insert, remove, pop, retain).

mod def;
mod guard;
mod iter;
pub(crate) mod open;
mod types;
mod write;

pub(crate) use def::StoredTypes;
pub use def::{KEY_ENCODING, TableDef, VALUE_ENCODING};
pub use guard::{KeyGuard, ValueGuard};
pub use iter::Range;
pub use types::{Key, Value};
pub use write::Removed;

use crate::btree::BTree;
use crate::error::{Error, Result};
use quiredb_engine::PageRead;
use std::borrow::Borrow;
use std::cell::RefCell;
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};

/// A typed table opened in a transaction: keys `K`, values `V`. Reads work in any
/// transaction; writes need a write transaction.
///
/// # Examples
///
/// ```
/// use quiredb_engine::{Database, Durability, storage::MemStorage};
/// use quiredb_structures::{Structures, table::TableDef};
/// use std::sync::Arc;
///
/// const TEMPERATURES: TableDef<(&str, i64), f64> = TableDef::new("temperatures");
///
/// let db = Database::builder().with_storage(Arc::new(MemStorage::new()), "example")?;
/// let txn = db.begin_write()?;
/// {
///     let mut table = txn.open_table(TEMPERATURES)?;
///     table.insert(("oslo", 1_700_000_000), 3.5)?;
///     table.insert(("oslo", 1_700_003_600), 2.0)?;
///     table.insert(("beijing", 1_700_000_000), 11.0)?;
/// }
/// txn.commit(Durability::Checksummed)?;
///
/// let snapshot = db.begin_read()?;
/// let table = snapshot.open_table(TEMPERATURES)?;
/// assert_eq!(table.get(("oslo", 1_700_003_600))?.map(|v| v.value()), Some(2.0));
/// let oslo: Vec<f64> = table
///     .range(("oslo", i64::MIN)..=("oslo", i64::MAX))?
///     .rev()
///     .map(|entry| entry.map(|(_, value)| value.value()))
///     .collect::<Result<_, _>>()?;
/// assert_eq!(oslo, [2.0, 3.5]);
/// # Ok::<(), quiredb_structures::Error>(())
/// ```
pub struct Table<'t, T: PageRead, K: Key + 'static, V: Value + 'static> {
    tree: BTree<'t, T>,
    /// Scratch for encoding a key (reused: no allocation per call).
    key: RefCell<Vec<u8>>,
    types: PhantomData<fn() -> (K, V)>,
}

impl<'t, T: PageRead, K: Key + 'static, V: Value + 'static> Table<'t, T, K, V> {
    /// A typed view of `tree` (which, in a write transaction, holds the one handle).
    pub(crate) fn new(tree: BTree<'t, T>) -> Self {
        Table { tree, key: RefCell::new(Vec::new()), types: PhantomData }
    }

    /// Catalog name.
    pub fn name(&self) -> &str {
        self.tree.name()
    }

    /// Number of entries (O(1)).
    pub fn len(&self) -> u64 {
        self.tree.len()
    }

    /// True when the table has no entry.
    pub fn is_empty(&self) -> bool {
        self.tree.is_empty()
    }

    /// The B+tree underneath, with byte keys and values.
    pub fn untyped(&self) -> &BTree<'t, T> {
        &self.tree
    }

    /// Encodes `key` into the scratch buffer and runs `read` on the encoding.
    fn with_key<'k, R>(&self, key: &K::SelfType<'k>, read: impl FnOnce(&[u8]) -> Result<R>) -> Result<R> {
        let mut scratch = self.key.borrow_mut();
        types::encode_whole_key::<K>(key, &mut scratch).map_err(|reason| self.key_error(reason))?;
        read(&scratch)
    }

    fn key_error(&self, reason: &str) -> Error {
        Error::KeyEncoding { table: self.name().to_owned(), reason: reason.to_owned() }
    }

    /// The value stored under `key`, read in place. The guard borrows the table, so
    /// the table cannot change while it pins the leaf.
    pub fn get<'k>(&self, key: impl Borrow<K::SelfType<'k>>) -> Result<Option<ValueGuard<'_, V>>> {
        let bytes = self.with_key(key.borrow(), |key| self.tree.get_pinned(key))?;
        bytes.map(|bytes| ValueGuard::new(bytes, self.name())).transpose()
    }

    /// True when `key` is present.
    pub fn contains_key<'k>(&self, key: impl Borrow<K::SelfType<'k>>) -> Result<bool> {
        self.with_key(key.borrow(), |key| self.tree.contains(key))
    }

    /// The entries whose keys lie in `range`, read in place: ascending, or descending
    /// with `.rev()`.
    pub fn range<'k, R: RangeBounds<K::SelfType<'k>>>(&self, range: R) -> Result<Range<'_, 't, T, K, V>> {
        let (low, high) = (self.encode_bound(range.start_bound())?, self.encode_bound(range.end_bound())?);
        Ok(Range::new(
            self.tree.entries(low.as_ref().map(Vec::as_slice), high.as_ref().map(Vec::as_slice)),
            self.name(),
        ))
    }

    /// All entries, ascending (or descending with `.rev()`).
    pub fn iter(&self) -> Result<Range<'_, 't, T, K, V>> {
        Ok(Range::new(self.tree.entries(Bound::Unbounded, Bound::Unbounded), self.name()))
    }

    fn encode_bound(&self, bound: Bound<&K::SelfType<'_>>) -> Result<Bound<Vec<u8>>> {
        let encode = |key| {
            let mut out = Vec::new();
            types::encode_whole_key::<K>(key, &mut out).map(|()| out).map_err(|reason| self.key_error(reason))
        };
        Ok(match bound {
            Bound::Included(key) => Bound::Included(encode(key)?),
            Bound::Excluded(key) => Bound::Excluded(encode(key)?),
            Bound::Unbounded => Bound::Unbounded,
        })
    }

    /// The entry with the least key (`None` when empty).
    pub fn first_key_value(&self) -> Result<Option<(KeyGuard<'_, K>, ValueGuard<'_, V>)>> {
        self.iter()?.next().transpose()
    }

    /// The entry with the greatest key.
    pub fn last_key_value(&self) -> Result<Option<(KeyGuard<'_, K>, ValueGuard<'_, V>)>> {
        self.iter()?.next_back().transpose()
    }
}

impl<T: PageRead, K: Key + 'static, V: Value + 'static> std::fmt::Debug for Table<'_, T, K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Table({:?}: {} to {}, {} entries)", self.name(), K::type_name(), V::type_name(), self.len())
    }
}
