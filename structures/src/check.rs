//! Structure-level integrity checks, run by `quire check` after the engine's page
//! accounting: for every catalog entry, the checker of its kind verifies the
//! structure's invariants and returns the problems it found as sentences.

use crate::error::Result;
use quiredb_engine::{CatalogEntry, PageRead};

/// Checks every structure in the catalog; returns `(name, problem)` pairs.
pub fn check_all(txn: &impl PageRead) -> Result<Vec<(String, String)>> {
    let mut problems = Vec::new();
    for entry in txn.catalog_list()? {
        for problem in check_entry(txn, &entry)? {
            problems.push((entry.name.clone(), problem));
        }
    }
    Ok(problems)
}

/// Checks one structure by its kind. Kinds without a checker report nothing.
fn check_entry(txn: &impl PageRead, entry: &CatalogEntry) -> Result<Vec<String>> {
    Ok(match entry.kind {
        // Each structure registers its checker here: `StructureKind::X => x::check(txn, entry)?,`
        quiredb_engine::StructureKind::BLOB => crate::blob::check_entry(txn, entry)?,
        quiredb_engine::StructureKind::BTREE => crate::btree::check_entry(txn, entry)?,
        quiredb_engine::StructureKind::QUEUE => crate::queue::check(txn, entry)?,
        quiredb_engine::StructureKind::RTREE => crate::rtree::check_entry(txn, entry)?,
        _ => Vec::new(),
    })
}
