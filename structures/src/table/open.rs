//! Opening and deleting typed tables (called by `crate::open`'s traits): opening
//! checks the stored types, and in a write transaction creates an absent table and
//! claims the one handle.

use super::Table;
use super::def::{StoredTypes, TableDef};
use super::types::{Key, Value};
use crate::btree::BTree;
use crate::error::{Error, Result};
use crate::handles::{OpenMark, deletable};
use quiredb_engine::{CatalogEntry, PageRead, WriteTxn};

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
pub(crate) fn open_read<T: PageRead, K: Key + 'static, V: Value + 'static>(
    txn: &T,
    def: TableDef<K, V>,
) -> Result<Table<'_, T, K, V>> {
    let entry = checked_entry(txn, def)?
        .ok_or_else(|| Error::Engine(quiredb_engine::Error::NoSuchStructure(def.name().to_owned())))?;
    Ok(Table::new(BTree::open_entry(txn, &entry)?))
}

/// Opens (creating when absent) a table in a write transaction.
pub(crate) fn open_write<'t, 'db, K: Key + 'static, V: Value + 'static>(
    txn: &'t WriteTxn<'db>,
    def: TableDef<K, V>,
) -> Result<Table<'t, WriteTxn<'db>, K, V>> {
    if OpenMark::is_open(txn, def.name()) {
        return Err(Error::AlreadyOpen { name: def.name().to_owned() });
    }
    let tree = match checked_entry(txn, def)? {
        Some(entry) => BTree::open_entry(txn, &entry)?,
        None => BTree::create_with_params(txn, def.name(), &TableDef::<K, V>::types().to_params())?,
    };
    tree.claim_write()?; // a table handle claims its table when opened, not when first written
    Ok(Table::new(tree))
}

/// Deletes `def`'s table; false when absent.
pub(crate) fn delete<K: Key + 'static, V: Value + 'static>(txn: &WriteTxn<'_>, def: TableDef<K, V>) -> Result<bool> {
    if !deletable(txn, def.name())? {
        return Ok(false);
    }
    checked_entry(txn, def)?;
    BTree::drop_tree(txn, def.name())?;
    Ok(true)
}
