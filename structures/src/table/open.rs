//! Opening and deleting typed tables from a transaction: [`Tables::open_table`] on
//! every kind of transaction, [`TablesMut::delete_table`] on a write transaction.

use super::Table;
use super::def::{StoredTypes, TableDef};
use super::types::{Key, Value};
use crate::btree::BTree;
use crate::error::{Error, Result};
use crate::handles::OpenMark;
use quiredb_engine::{CatalogEntry, OwnedReadTxn, PageRead, ReadTxn, WriteTxn};

/// Opening typed tables (`use` it to call `txn.open_table(DEF)`).
pub trait Tables: PageRead + Sized {
    /// Opens the table `def` names, checking its stored types against `def`'s
    /// ([`Error::TypeMismatch`] naming both). In a write transaction an absent table
    /// is created, and a second handle to one table is [`Error::AlreadyOpen`]; in a
    /// read transaction an absent table is an error.
    fn open_table<K: Key + 'static, V: Value + 'static>(&self, def: TableDef<K, V>) -> Result<Table<'_, Self, K, V>>;
}

/// Deleting typed tables (`use` it to call `txn.delete_table(DEF)`).
pub trait TablesMut {
    /// Removes the table `def` names and frees its pages; false when it did not
    /// exist. Refused while a handle to it is open, or when its types are not `def`'s.
    fn delete_table<K: Key + 'static, V: Value + 'static>(&self, def: TableDef<K, V>) -> Result<bool>;
}

/// The catalog entry of `def`'s table when it exists with `def`'s types.
fn checked_entry<K: Key + 'static, V: Value + 'static>(
    txn: &impl PageRead,
    def: TableDef<K, V>,
) -> Result<Option<CatalogEntry>> {
    let Some(entry) = txn.catalog_entry(def.name())? else { return Ok(None) };
    crate::btree::check_kind(&entry)?;
    StoredTypes::from_params(def.name(), &entry.params)?.check(def.name(), &TableDef::<K, V>::types())?;
    Ok(Some(entry))
}

/// Opens an existing table in a read transaction.
fn open_existing<T: PageRead, K: Key + 'static, V: Value + 'static>(
    txn: &T,
    def: TableDef<K, V>,
) -> Result<Table<'_, T, K, V>> {
    let entry = checked_entry(txn, def)?
        .ok_or_else(|| Error::Engine(quiredb_engine::Error::NoSuchStructure(def.name().to_owned())))?;
    Ok(Table::new(BTree::open_entry(txn, &entry)?, None))
}

impl Tables for ReadTxn<'_> {
    fn open_table<K: Key + 'static, V: Value + 'static>(&self, def: TableDef<K, V>) -> Result<Table<'_, Self, K, V>> {
        open_existing(self, def)
    }
}

impl Tables for OwnedReadTxn {
    fn open_table<K: Key + 'static, V: Value + 'static>(&self, def: TableDef<K, V>) -> Result<Table<'_, Self, K, V>> {
        open_existing(self, def)
    }
}

impl Tables for WriteTxn<'_> {
    fn open_table<K: Key + 'static, V: Value + 'static>(&self, def: TableDef<K, V>) -> Result<Table<'_, Self, K, V>> {
        let mark = OpenMark::claim(self, def.name())?;
        let tree = match checked_entry(self, def)? {
            Some(entry) => BTree::open_entry(self, &entry)?,
            None => BTree::create_with_params(self, def.name(), &TableDef::<K, V>::types().to_params())?,
        };
        Ok(Table::new(tree, Some(mark)))
    }
}

impl TablesMut for WriteTxn<'_> {
    fn delete_table<K: Key + 'static, V: Value + 'static>(&self, def: TableDef<K, V>) -> Result<bool> {
        if OpenMark::is_open(self, def.name()) {
            return Err(Error::AlreadyOpen { name: def.name().to_owned() });
        }
        if checked_entry(self, def)?.is_none() {
            return Ok(false);
        }
        BTree::drop_tree(self, def.name())?;
        Ok(true)
    }
}
