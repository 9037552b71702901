//! Random transactions of page writes against an in-memory model: commits, aborts,
//! reopen, integrity check after every step.

use super::common::*;
use quiredb_engine::storage::MemStorage;
use quiredb_engine::{Database, PageRead, check};
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
        model_round(&db, &mut rng, &mut model, round);
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
        let mut page = txn.alloc_page(quiredb_engine::PageKind::structure(19)).unwrap();
        fill(&mut page, value);
        ids.push((page.id(), value));
    }
    txn.commit(quiredb_engine::Durability::Full).unwrap();
    let txn = db.begin_write().unwrap();
    for (id, _) in &ids[100..] {
        txn.free_page(*id).unwrap();
    }
    txn.commit(quiredb_engine::Durability::Full).unwrap();
    let quiredb_engine::Compacted { bytes_before: before, bytes_after: after } = db.compact().unwrap();
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
fn the_catalog_a_writer_starts_from_is_the_newest_across_commits_and_aborts() {
    // Proves: each write transaction sees the catalog the last commit left (the writer
    // keeps it parsed between transactions), never an aborted transaction's changes,
    // also while its chain of pages grows and shrinks (entries of up to 3 KiB on 4 KiB
    // pages); a reader and a reopened file see the same. Fails if the kept catalog is
    // the first one a commit left (mutant `catalog_kept_first`) or forgets its pages.
    use quiredb_engine::{Durability, PageId, StructureKind};
    use rand::Rng;
    use std::collections::BTreeMap;
    let seed = seed("catalog");
    let mut rng = rng(seed);
    let (storage, db) = memory_db(small_options());
    let mut model: BTreeMap<String, (Vec<u8>, u64)> = BTreeMap::new();
    let listed = |list: Vec<quiredb_engine::CatalogEntry>| -> BTreeMap<String, (Vec<u8>, u64)> {
        list.into_iter().map(|entry| (entry.name, (entry.params, entry.root.0))).collect()
    };
    for round in 0..120u64 {
        let txn = db.begin_write().unwrap();
        let mut next = model.clone();
        assert_eq!(listed(txn.catalog_list().unwrap()), model, "QUIRE_SEED={seed} round {round}: writer's view");
        for _ in 0..rng.random_range(1..4) {
            let name = format!("s{}", rng.random_range(0..12));
            match (next.contains_key(&name), rng.random_range(0..3)) {
                (false, _) => {
                    let params = vec![round as u8; rng.random_range(0..3000)];
                    txn.create_structure(&name, StructureKind::BTREE, &params, PageId(round)).unwrap();
                    next.insert(name, (params, round));
                }
                (true, 0) => {
                    txn.drop_structure(&name).unwrap();
                    next.remove(&name);
                }
                (true, _) => {
                    txn.set_structure_root(&name, PageId(round + 1000)).unwrap();
                    next.get_mut(&name).expect("present").1 = round + 1000;
                }
            }
        }
        if rng.random_range(0..4) == 0 {
            txn.abort();
        } else {
            txn.commit(Durability::Checksummed).unwrap();
            model = next;
        }
        assert_eq!(listed(db.begin_read().unwrap().catalog_list().unwrap()), model, "QUIRE_SEED={seed} round {round}");
    }
    let report = check(&db).unwrap();
    assert!(report.is_clean(), "QUIRE_SEED={seed}: {:?}", report.problems);
    drop(db);
    let db =
        Database::open_storage(Arc::new(MemStorage::from_bytes(storage.snapshot())), small_options(), "r").unwrap();
    assert_eq!(listed(db.begin_read().unwrap().catalog_list().unwrap()), model, "QUIRE_SEED={seed}: after reopening");
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
            let mut page = txn.alloc_page(PageKind::structure(19)).unwrap();
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
            let mut page = txn.alloc_page(PageKind::structure(22)).unwrap();
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

#[test]
fn pages_read_in_place_from_the_map_match_the_model_and_their_snapshots() {
    // Proves the mmap read path (Options::mmap_reads with a full pool: leaves served in
    // place from the file's map, checksummed once): every committed transaction is
    // read exactly, and a reader keeps its snapshot while pages are freed and reused
    // under it — with commits written in place and through the commit log.
    for log_pages in [0, 128] {
        mapped_model(log_pages);
    }
}

fn mapped_model(log_pages: u64) {
    let seed = seed("mapped model");
    let mut rng = rng(seed);
    let dir = tempfile::tempdir().unwrap();
    let options = Database::builder()
        .page_size(4096)
        .cache_bytes(64 * 4096)
        .mmap_reads(true)
        .commit_log_pages(log_pages)
        .into_options();
    let db = Database::create(dir.path().join("mapped.quire"), options).unwrap();
    let mut model = Model::new();
    let mut held: Option<(quiredb_engine::ReadTxn<'_>, Model)> = None;
    let before = db.stats();
    for round in 0..env_usize("QUIRE_MODEL_ROUNDS", 300) as u64 {
        model_round(&db, &mut rng, &mut model, round);
        assert_matches(&db.begin_read().unwrap(), &model);
        if let Some((reader, seen)) = &held {
            assert_matches(reader, seen);
        }
        if round % 40 == 0 {
            held = Some((db.begin_read().unwrap(), model.clone()));
        }
    }
    drop(held);
    let report = check(&db).unwrap();
    assert!(report.is_clean(), "{:?}", report.problems);
    let stats = db.stats();
    assert!(stats.misses - before.misses > 1000, "pages were read from the map: {stats:?}");
}

#[test]
fn a_corrupt_page_read_in_place_from_the_map_is_an_error() {
    // Proves: the map path checksums a page before trusting it.
    use std::os::unix::fs::FileExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corrupt.quire");
    let options = || Database::builder().page_size(4096).cache_bytes(64 * 4096).mmap_reads(true).into_options();
    let db = Database::create(&path, options()).unwrap();
    let ids = committed_pages(&db, 500);
    drop(db);
    // Flip a byte in the payload of every data page past the first 100 in the file.
    let file = std::fs::OpenOptions::new().read(true).write(true).open(&path).unwrap();
    let len = file.metadata().unwrap().len();
    let mut page = vec![0u8; 4096];
    let mut flipped = 0;
    for phys in 2..len / 4096 {
        file.read_exact_at(&mut page, phys * 4096).unwrap();
        if page[0..4] != [0; 4] && phys > 100 && u64::from_le_bytes(page[32..40].try_into().unwrap()) < 500 {
            page[100] ^= 0xFF;
            file.write_all_at(&page, phys * 4096).unwrap();
            flipped += 1;
        }
    }
    assert!(flipped > 0);
    let db = Database::open(&path, options()).unwrap();
    let txn = db.begin_read().unwrap();
    let errors = ids.iter().filter(|&&id| txn.page(id).is_err()).count();
    assert!(errors > 0, "a corrupt page was read without an error");
    let good = ids.iter().filter_map(|&id| txn.page(id).ok()).filter(|page| value_of(page).is_some()).count();
    assert_eq!(good + errors, ids.len(), "every page read is either intact or an error");
}
