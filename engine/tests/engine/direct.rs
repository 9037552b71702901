//! Reads past the pool (`PageRead::read_payloads` of a snapshot, `txn/direct.rs`): the
//! bytes equal those pinned through the pool whatever is cached and whatever was read
//! ahead, nothing is evicted, a damaged page (or one of another kind) read this way is
//! `Corrupted` naming its physical page while a damaged page merely read ahead is not
//! an error, and a failed read is `Error::Io`.

use super::common::*;
use super::crafted::{PAGE, committed_model, map_entry};
use quiredb_engine::storage::{Fault, FaultKind, FaultyStorage, MemStorage};
use quiredb_engine::{Database, Error, PageId, PageKind, PageRead, PhysId};
use rand::Rng;
use std::sync::Arc;

/// The bytes `skip..skip + len` of the payloads of `ids`, pinned through the pool.
fn through_pool(txn: &impl PageRead, ids: &[PageId], skip: usize, len: usize) -> Vec<u8> {
    let mut all = Vec::new();
    for &id in ids {
        all.extend_from_slice(&txn.page(id).unwrap_or_else(|error| panic!("page {}: {error}", id.0)));
    }
    all[skip..skip + len].to_vec()
}

/// `read_payloads` of `ids` as a vector.
fn past_pool(txn: &impl PageRead, ids: &[PageId], skip: usize, ahead: usize, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    txn.read_payloads(ids, PageKind::structure(16), skip, ahead, &mut out)
        .unwrap_or_else(|error| panic!("read_payloads: {error}"));
    out
}

/// A run of `count` ids from `model` starting at a random one, or a random pick.
fn random_ids(rng: &mut TestRng, model: &Model) -> Vec<PageId> {
    let keys: Vec<u64> = model.keys().copied().collect();
    let count = rng.random_range(1..=8usize).min(keys.len());
    if rng.random_bool(0.5) {
        let start = rng.random_range(0..=keys.len() - count);
        keys[start..start + count].iter().map(|&id| PageId(id)).collect()
    } else {
        (0..count).map(|_| PageId(keys[rng.random_range(0..keys.len())])).collect()
    }
}

#[test]
fn reads_past_the_pool_equal_reads_through_it() {
    // In memory: runs read with one copy each.
    let (_, db) = memory_db(small_options());
    compare_past_pool(&db, "reads_past_the_pool_equal_reads_through_it");
}

#[test]
fn reads_past_the_pool_in_place_from_the_map_equal_reads_through_it() {
    // A real file, mapped (`mmap_reads`, the default): pages visited in place in the map.
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path().join("mapped.quire"), small_options()).unwrap();
    compare_past_pool(&db, "reads_past_the_pool_in_place_from_the_map_equal_reads_through_it");
}

/// Random transactions and random reads past the pool of `db`, each compared with the
/// same bytes pinned through the pool.
fn compare_past_pool(db: &Database, name: &str) {
    let seed = seed(name);
    let mut rng = rng(seed);
    let mut model = committed_model(db, 300);
    for round in 0..400 {
        if rng.random_bool(0.2) {
            // One kind: a run read past the pool is of one kind.
            model_round_of(db, &mut rng, &mut model, round, |_| PageKind::structure(16));
        }
        if model.is_empty() {
            continue;
        }
        let txn = db.begin_read().unwrap();
        let ids = random_ids(&mut rng, &model);
        let payload = txn.payload_size();
        let skip = rng.random_range(0..payload);
        let len = rng.random_range(0..=ids.len() * payload - skip);
        let ahead = rng.random_range(0..40);
        let got = past_pool(&txn, &ids, skip, ahead, len);
        assert!(got == through_pool(&txn, &ids, skip, len), "seed {seed:#x}, round {round}: bytes differ");
    }
}

#[test]
fn pages_read_past_the_pool_take_no_frame() {
    let (storage, db) = memory_db(small_options());
    let model = committed_model(&db, 300);
    drop(db);
    let db =
        Database::open_storage(Arc::new(MemStorage::from_bytes(storage.snapshot())), small_options(), "m").unwrap();
    let before = db.stats();
    let txn = db.begin_read().unwrap();
    let ids: Vec<PageId> = model.keys().map(|&id| PageId(id)).collect();
    let payload = txn.payload_size();
    let bytes = past_pool(&txn, &ids, 0, 0, ids.len() * payload);
    for (chunk, &value) in bytes.chunks(payload).zip(model.values()) {
        assert_eq!(value_of(chunk), Some(value));
    }
    let after = db.stats();
    assert_eq!(after.evictions, before.evictions, "no frame was evicted");
    assert!(after.misses - before.misses >= 300, "every page was read from the file");
}

/// An image with pages `0..300` committed, and the physical ids of two of them that
/// lie next to each other (`first`, then `first + 1`).
fn image_with_neighbours() -> (Vec<u8>, PageId, PageId, u64) {
    let (storage, db) = memory_db(small_options());
    let ids = committed_pages(&db, 300);
    drop(db);
    let image = storage.snapshot();
    let (first, second) = (ids[10], ids[11]);
    let phys = map_entry(&image, first.0);
    assert_eq!(map_entry(&image, second.0), phys + 1, "pages committed together lie together");
    (image, first, second, phys)
}

#[test]
fn a_damaged_page_read_past_the_pool_is_corrupted_and_its_neighbour_is_not() {
    let (mut image, first, second, phys) = image_with_neighbours();
    image[(phys as usize + 1) * PAGE + 100] ^= 0x40;
    let db = Database::open_storage(Arc::new(MemStorage::from_bytes(image)), small_options(), "m").unwrap();
    let txn = db.begin_read().unwrap();
    let payload = txn.payload_size();
    let good = past_pool(&txn, &[first], 0, 4, payload);
    assert_eq!(value_of(&good), Some(10), "the page before the damaged one, read with it");
    let mut out = vec![0u8; payload];
    let wrong_kind = txn.read_payloads(&[first], PageKind::structure(19), 0, 0, &mut out);
    assert!(matches!(wrong_kind, Err(Error::Corrupted { .. })), "a page of another kind gave {wrong_kind:?}");
    match txn.read_payloads(&[second], PageKind::structure(16), 0, 0, &mut out) {
        Err(Error::Corrupted { page, .. }) => assert_eq!(page, PhysId(phys + 1)),
        other => panic!("a damaged page gave {other:?}"),
    }
}

#[test]
fn a_failed_read_past_the_pool_is_an_io_error() {
    let storage = Arc::new(FaultyStorage::new(Vec::new(), None));
    let db = Database::with_storage(storage.clone(), small_options(), "faulty").unwrap();
    let ids = committed_pages(&db, 300);
    drop(db);
    let db = Database::open_storage(storage.clone(), small_options(), "faulty").unwrap();
    let txn = db.begin_read().unwrap();
    let payload = txn.payload_size();
    assert_eq!(value_of(&past_pool(&txn, &ids[..1], 0, 0, payload)), Some(0), "the map is now cached");
    storage.arm(Some(Fault { at_op: storage.ops(), kind: FaultKind::Eio }));
    let mut out = vec![0u8; payload];
    let result = txn.read_payloads(&ids[200..201], PageKind::structure(16), 0, 0, &mut out);
    assert!(storage.fault_fired(), "the read reached the file");
    assert!(matches!(result, Err(Error::Io { .. })), "a failed read gave {result:?}");
}
