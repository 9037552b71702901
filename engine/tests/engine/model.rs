//! Random transactions of page writes against an in-memory model: commits, aborts,
//! reopen, integrity check after every step.

use super::common::*;
use quiredb_engine::storage::MemStorage;
use quiredb_engine::{Database, check};
use rand::Rng;
use std::sync::Arc;

#[test]
fn random_transactions_match_the_model_across_aborts_and_reopens() {
    // Proves: every committed transaction is visible exactly, aborted ones not at all,
    // after reopening too, and the page accounting stays exact.
    let seed = seed("model");
    let mut rng = rng(seed);
    let (mut storage, mut db) = memory_db(small_options());
    let mut model = Model::new();
    let rounds = env_usize("QUIRE_MODEL_ROUNDS", 300);
    for round in 0..rounds as u64 {
        let mut next = model.clone();
        let txn = db.begin_write().unwrap();
        random_txn(&txn, &mut rng, &mut next, round).unwrap();
        if rng.random_bool(0.2) {
            drop(txn);
        } else {
            txn.commit(random_durability(&mut rng)).unwrap();
            model = next;
        }
        assert_matches(&db.begin_read().unwrap(), &model);
        if round % 25 == 0 {
            let report = check(&db).unwrap();
            assert!(report.is_clean(), "round {round}: {:?}", report.problems);
            drop(db);
            storage = Arc::new(MemStorage::from_bytes(storage.snapshot()));
            db = Database::open_storage(storage.clone(), small_options(), "reopened").unwrap();
            assert_matches(&db.begin_read().unwrap(), &model);
        }
    }
    let report = check(&db).unwrap();
    assert!(report.is_clean(), "{:?}", report.problems);
}

#[test]
fn compact_returns_the_free_tail_to_the_os() {
    // Proves: after freeing the pages at the end, compact shrinks the file and the data
    // and the accounting survive.
    let (_storage, db) = memory_db(small_options());
    let txn = db.begin_write().unwrap();
    let mut ids = Vec::new();
    for value in 0..2000 {
        let mut page = txn.alloc_page(quiredb_engine::PageKind::BLOB).unwrap();
        fill(&mut page, value);
        ids.push((page.id(), value));
    }
    txn.commit(quiredb_engine::Durability::Full).unwrap();
    let txn = db.begin_write().unwrap();
    for (id, _) in &ids[100..] {
        txn.free_page(*id).unwrap();
    }
    txn.commit(quiredb_engine::Durability::Full).unwrap();
    let (before, after) = db.compact().unwrap();
    assert!(after * 4 < before, "{before} -> {after}");
    let model: Model = ids[..100].iter().map(|(id, value)| (id.0, *value)).collect();
    assert_matches(&db.begin_read().unwrap(), &model);
    let report = check(&db).unwrap();
    assert!(report.is_clean(), "{:?}", report.problems);
}

#[test]
fn catalog_entries_survive_reopen_and_reject_duplicates() {
    // Proves: create / list / set_root / drop of named structures, persisted.
    use quiredb_engine::{PageId, PageRead, StructureKind};
    let (storage, db) = memory_db(small_options());
    let txn = db.begin_write().unwrap();
    txn.create_structure("stations", StructureKind::BTREE, b"u64", PageId(0)).unwrap();
    txn.create_structure("points", StructureKind::RTREE, &[5, 8], PageId(0)).unwrap();
    assert!(txn.create_structure("points", StructureKind::RTREE, &[], PageId(0)).is_err());
    txn.set_structure_root("stations", PageId(42)).unwrap();
    txn.commit(quiredb_engine::Durability::Full).unwrap();
    let txn = db.begin_write().unwrap();
    txn.drop_structure("points").unwrap();
    assert!(txn.drop_structure("missing").is_err());
    txn.commit(quiredb_engine::Durability::Full).unwrap();
    drop(db);
    let db =
        Database::open_storage(Arc::new(MemStorage::from_bytes(storage.snapshot())), small_options(), "r").unwrap();
    let read = db.begin_read().unwrap();
    let list = read.catalog_list().unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].name, "stations");
    assert_eq!(list[0].root, PageId(42));
    assert_eq!(list[0].params, b"u64");
}

#[test]
fn mmap_read_path_returns_the_same_pages_as_pread() {
    // Proves: with `mmap_reads`, pool misses copied from the memory map give the same
    // verified pages, including after the file grew past the first mapping.
    use quiredb_engine::{DatabaseBuilder, Durability, PageKind};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mapped.quire");
    let options = DatabaseBuilder::from(small_options()).mmap_reads(true).into_options();
    let db = Database::create(&path, options.clone()).unwrap();
    let mut model = Model::new();
    for round in 0..4u64 {
        let txn = db.begin_write().unwrap();
        for value in 0..500 {
            let mut page = txn.alloc_page(PageKind::BLOB).unwrap();
            fill(&mut page, round * 1000 + value);
            model.insert(page.id().0, round * 1000 + value);
        }
        txn.commit(Durability::Checksummed).unwrap();
        assert_matches(&db.begin_read().unwrap(), &model);
    }
    drop(db);
    let db = Database::open(&path, options).unwrap();
    assert_matches(&db.begin_read().unwrap(), &model);
    assert!(db.stats().reads >= 2000, "pages came from the file: {:?}", db.stats());
    assert!(check(&db).unwrap().is_clean());
}

#[test]
fn a_transaction_larger_than_the_pool_spills_and_commits_or_aborts_cleanly() {
    // Proves: a writer may dirty ten times the pool; dirty pages are written early
    // (spilled) and may be rewritten or freed after, an abort after spilling leaves
    // nothing behind, and a commit keeps all.
    use quiredb_engine::{Durability, PageKind};
    let (_storage, db) = memory_db(small_options());
    let frames = db.pool_frames() as u64;
    for commit in [false, true] {
        let txn = db.begin_write().unwrap();
        let mut model = Model::new();
        for value in 0..frames * 10 {
            let mut page = txn.alloc_page(PageKind::QUEUE_DATA).unwrap();
            fill(&mut page, value);
            model.insert(page.id().0, value);
        }
        // Rewrite spilled pages, the newest (still in the pool: reclaimed in place) and
        // the oldest (evicted: read back), and free some of each.
        let ids: Vec<u64> = model.keys().copied().collect();
        let picked = ids.iter().step_by(7).chain(ids.iter().rev().take(frames as usize / 4)).copied();
        for (round, id) in picked.collect::<Vec<_>>().into_iter().enumerate() {
            if round % 5 == 4 {
                txn.free_page(quiredb_engine::PageId(id)).unwrap();
                model.remove(&id);
            } else if model.contains_key(&id) {
                fill(&mut txn.page_mut(quiredb_engine::PageId(id)).unwrap(), 1_000_000 + id);
                model.insert(id, 1_000_000 + id);
            }
        }
        assert_matches(&txn, &model);
        if commit {
            txn.commit(Durability::Checksummed).unwrap();
            assert_matches(&db.begin_read().unwrap(), &model);
        } else {
            drop(txn);
            assert_eq!(db.meta().live_pages, 0, "the aborted transaction left nothing");
        }
        assert!(check(&db).unwrap().is_clean());
    }
    assert!(db.stats().spills >= frames * 8, "{:?}", db.stats());
}
