//! Integration tests of the B+tree: random operations against `BTreeMap` with the
//! checker after every batch, floor/ceiling/range edge cases at page boundaries, bulk
//! load fill, reopen after commits, typed keys, errors, space reuse, and fault
//! injection at every I/O operation. Seeds are printed: `QUIRE_SEED` replays,
//! `QUIREDB_TEST_SCALE` multiplies the operation counts.

use quiredb_engine::storage::{CrashMode, Fault, FaultKind, FaultyStorage, MemStorage};
use quiredb_engine::{Database, Durability, Options, PageRead};
use quiredb_structures::Error;
use quiredb_structures::Structures;
use quiredb_structures::btree::{self, BTree};
use quiredb_structures::table::TableDef;
use quiredb_test_support::Rng;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn seed() -> u64 {
    quiredb_test_support::seed(0xB7EE_5EED)
}

fn scale() -> usize {
    std::env::var("QUIREDB_TEST_SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(1)
}

fn small_options() -> Options {
    Database::builder().page_size(4096).into_options()
}

fn memdb(options: Options) -> (Arc<MemStorage>, Database) {
    let storage = Arc::new(MemStorage::new());
    let db = Database::with_storage(storage.clone(), options, "mem").expect("in-memory database");
    (storage, db)
}

fn assert_clean<T: PageRead>(tree: &BTree<'_, T>, what: &str) {
    let problems = btree::check(tree).expect("checker runs");
    assert!(problems.is_empty(), "{what}: {problems:?}");
}

fn assert_same<T: PageRead>(tree: &BTree<'_, T>, model: &Model, what: &str) {
    assert_eq!(tree.len(), model.len() as u64, "{what}: len");
    let entries: Vec<(Vec<u8>, Vec<u8>)> =
        tree.range(Bound::Unbounded, Bound::Unbounded).collect::<Result<_, _>>().expect("scan");
    let expected: Vec<(Vec<u8>, Vec<u8>)> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert!(entries == expected, "{what}: contents differ from the model");
}

/// A random key: often empty or short (many equal prefixes), sometimes long.
fn random_key(rng: &mut Rng) -> Vec<u8> {
    let (len, alphabet) = match rng.below(10) {
        0 => (0, 1),
        1..=6 => (rng.below(12) as usize, 4),
        7 | 8 => (8 + rng.below(30) as usize, 3),
        _ => (100 + rng.below(300) as usize, 2),
    };
    rng.bytes(len, alphabet)
}

/// A random value: mostly small, sometimes over the blob threshold.
fn random_value(rng: &mut Rng) -> Vec<u8> {
    let len = match rng.below(20) {
        0 => 1000 + rng.below(20_000) as usize,
        1 => 0,
        _ => rng.below(200) as usize,
    };
    rng.bytes(len, 255)
}

/// Random inserts, updates and removals agree with `BTreeMap` after every batch, the
/// checker is clean after every batch, commits survive a reopen, and the tree drains
/// to empty.
#[test]
fn random_operations_match_btreemap() {
    let seed = seed();
    let mut rng = Rng::new(seed | 1);
    let (mut storage, mut db) = memdb(small_options());
    {
        let txn = db.begin_write().expect("writer");
        BTree::create(&txn, "t").expect("create");
        txn.commit(Durability::None).expect("commit");
    }
    let mut model = Model::new();
    let batches = 40 * scale();
    for batch in 0..batches {
        let txn = db.begin_write().expect("writer");
        let mut tree = BTree::open(&txn, "t").expect("open");
        let removing = batch >= batches * 3 / 4;
        for _ in 0..150 {
            let key = random_key(&mut rng);
            let insert = if removing { rng.below(10) < 2 } else { rng.below(10) < 7 };
            if insert {
                let value = random_value(&mut rng);
                let was = tree.insert(&key, &value).expect("insert");
                assert_eq!(was, model.insert(key, value).is_some(), "batch {batch}: insert result");
            } else {
                let victim = if rng.below(2) == 0 {
                    model.keys().nth(rng.below(model.len() as u64 + 1) as usize).cloned()
                } else {
                    None
                };
                let key = victim.unwrap_or(key);
                assert_eq!(tree.remove(&key).expect("remove"), model.remove(&key).is_some(), "batch {batch}: remove");
            }
        }
        let what = format!("seed {seed} batch {batch}");
        assert_clean(&tree, &what);
        assert_same(&tree, &model, &what);
        drop(tree);
        txn.commit(Durability::None).expect("commit");
        if batch % 5 == 4 {
            drop(db);
            storage = Arc::new(MemStorage::from_bytes(storage.snapshot()));
            db = Database::open_storage(storage.clone(), small_options(), "reopened").expect("reopen");
            let txn = db.begin_read().expect("reader");
            let tree = BTree::open(&txn, "t").expect("open after reopen");
            assert_same(&tree, &model, &format!("{what} after reopen"));
        }
    }
    let txn = db.begin_write().expect("writer");
    let mut tree = BTree::open(&txn, "t").expect("open");
    for key in model.keys() {
        assert!(tree.remove(key).expect("remove"));
    }
    assert_eq!(tree.len(), 0);
    assert_eq!(tree.height(), 1, "an empty tree is one leaf");
    assert_clean(&tree, "drained");
    let problems = quiredb_structures::check::check_all(&txn).expect("check_all");
    assert!(problems.is_empty(), "{problems:?}");
}

/// floor, ceiling and ranges in both directions agree with `BTreeMap` for every probe
/// key, including every leaf's first and last key, exclusive and inclusive bounds.
#[test]
fn floor_ceiling_and_ranges_at_page_boundaries() {
    let (_storage, db) = memdb(small_options());
    let txn = db.begin_write().expect("writer");
    let mut tree = BTree::create(&txn, "t").expect("create");
    let mut model = Model::new();
    for i in 0..6000u64 {
        let key = (i * 3).to_be_bytes().to_vec();
        let value = vec![i as u8; 200];
        tree.insert(&key, &value).expect("insert");
        model.insert(key, value);
    }
    assert!(tree.height() >= 3, "deep enough to cross branch boundaries");
    assert_clean(&tree, "loaded");
    let probes: Vec<Vec<u8>> =
        (0..6000 * 3 + 2).map(|k: u64| k.to_be_bytes().to_vec()).chain([Vec::new(), vec![0xFF; 9]]).collect();
    for probe in &probes {
        let floor = model.range::<Vec<u8>, _>((Bound::Unbounded, Bound::Included(probe))).next_back();
        let ceiling = model.range::<Vec<u8>, _>((Bound::Included(probe), Bound::Unbounded)).next();
        assert_eq!(tree.floor(probe).expect("floor").as_ref().map(|e| (&e.0, &e.1)), floor, "floor {probe:?}");
        assert_eq!(tree.ceiling(probe).expect("ceiling").as_ref().map(|e| (&e.0, &e.1)), ceiling, "ceiling {probe:?}");
    }
    let mut rng = Rng::new(99);
    for _ in 0..300 {
        let low = &probes[rng.below(probes.len() as u64) as usize];
        let high = &probes[rng.below(probes.len() as u64) as usize];
        let bound = |key: &Vec<u8>, rng: &mut Rng| match rng.below(3) {
            0 => Bound::Included(key.clone()),
            1 => Bound::Excluded(key.clone()),
            _ => Bound::Unbounded,
        };
        let (low, high) = (bound(low, &mut rng), bound(high, &mut rng));
        if matches!((&low, &high), (Bound::Included(a) | Bound::Excluded(a), Bound::Included(b) | Bound::Excluded(b)) if a > b)
            || matches!((&low, &high), (Bound::Excluded(a), Bound::Excluded(b)) if a == b)
        {
            continue;
        }
        let expected: Vec<Vec<u8>> = model.range((low.clone(), high.clone())).map(|(k, _)| k.clone()).collect();
        let forward: Vec<Vec<u8>> = tree.range(as_ref(&low), as_ref(&high)).map(|e| e.expect("range").0).collect();
        assert_eq!(forward, expected, "range {low:?}..{high:?}");
        let mut backward: Vec<Vec<u8>> =
            tree.range(as_ref(&low), as_ref(&high)).rev().map(|e| e.expect("range").0).collect();
        backward.reverse();
        assert_eq!(backward, expected, "reverse range {low:?}..{high:?}");
    }
    let mut cursor = tree.cursor();
    cursor.seek_last().expect("seek_last");
    assert_eq!(cursor.key(), Some(&(5999u64 * 3).to_be_bytes()[..]));
    assert!(!cursor.move_next().expect("next"));
    cursor.seek_first().expect("seek_first");
    assert_eq!(cursor.key(), Some(&0u64.to_be_bytes()[..]));
    assert!(!cursor.move_prev().expect("prev"));
}

/// Bulk load fills leaves to ≥ 95% and builds a tree that passes the checker (its
/// finished leaves written behind, read back in the same transaction); unsorted input
/// is refused with a typed error.
#[test]
fn bulk_load_fills_pages() {
    let (_storage, db) = memdb(Options::default());
    let before = db.meta().live_pages;
    let txn = db.begin_write().expect("writer");
    let mut tree = BTree::create(&txn, "t").expect("create");
    let n = 100_000u64;
    let entries = (0..n).map(|i| ((i * 7).to_be_bytes(), [i as u8; 50]));
    assert_eq!(tree.bulk_load(entries).expect("bulk load"), n);
    assert_clean(&tree, "bulk loaded");
    assert_eq!(tree.get_vec(&(7u64 * 777).to_be_bytes()).expect("get"), Some(vec![777u64 as u8; 50]));
    let stats = btree::stats(&tree).expect("stats");
    println!("{stats:?}");
    assert!(stats.leaf_fill >= 0.95, "leaf fill {}", stats.leaf_fill);
    drop(tree);
    txn.commit(Durability::None).expect("commit");
    assert!(db.meta().live_pages > before);
    assert!(db.stats().written_behind > 0, "finished leaves were written behind: {:?}", db.stats());
    let txn = db.begin_write().expect("writer");
    let mut tree = BTree::create(&txn, "u").expect("create");
    let error = tree.bulk_load([(b"b", b"1"), (b"a", b"2")]).expect_err("unsorted");
    assert!(matches!(error, Error::BulkLoadUnsorted { index: 1 }), "{error}");
}

/// Keys over the limit are refused with `KeyTooLarge`; the limit itself is accepted.
#[test]
fn key_size_limit_is_a_typed_error() {
    let (_storage, db) = memdb(Options::default());
    let txn = db.begin_write().expect("writer");
    let mut tree = BTree::create(&txn, "t").expect("create");
    let max = btree::max_key_len(txn.payload_size());
    assert_eq!(max, 984, "documented limit for 8 KiB pages");
    tree.insert(&vec![1u8; max], b"ok").expect("limit accepted");
    let error = tree.insert(&vec![1u8; max + 1], b"no").expect_err("over the limit");
    assert!(matches!(error, Error::KeyTooLarge { len, max: m } if len == max + 1 && m == max), "{error}");
}

/// A file-backed tree survives reopening after each of several commits.
#[test]
fn reopen_after_each_commit() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("t.quire");
    let mut model = Model::new();
    for round in 0..4u64 {
        let db =
            if round == 0 { Database::create(&path, small_options()) } else { Database::open(&path, small_options()) }
                .expect("open");
        let txn = db.begin_write().expect("writer");
        let mut tree = BTree::open_or_create(&txn, "t").expect("open");
        for i in 0..500u64 {
            let key = format!("key{:06}", (i * 7919 + round * 13) % 2000).into_bytes();
            let value = format!("{round}-{i}").into_bytes();
            tree.insert(&key, &value).expect("insert");
            model.insert(key, value);
        }
        drop(tree);
        txn.commit(Durability::Full).expect("commit");
        drop(db);
        let db = Database::open(&path, small_options()).expect("reopen");
        let txn = db.begin_read().expect("reader");
        let tree = BTree::open(&txn, "t").expect("open");
        assert_same(&tree, &model, &format!("round {round}"));
        assert_clean(&tree, "reopened");
    }
}

/// An update (a value replaced, the tree's shape and length unchanged) leaves the head
/// page out of its transaction: a later insert of a new key into the same leaf is what
/// adds it (the length changed). Both survive a reopen.
#[test]
fn an_update_writes_its_leaf_and_not_the_head_page() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("t.quire");
    let db = Database::create(&path, small_options()).expect("create");
    let txn = db.begin_write().expect("writer");
    BTree::create(&txn, "t").expect("create").insert_batch((0..50u64).map(|i| (i.to_be_bytes(), [1u8; 20]))).unwrap();
    txn.commit(Durability::Full).expect("commit");
    let txn = db.begin_write().expect("writer");
    let mut tree = BTree::open(&txn, "t").expect("open");
    assert_eq!(tree.height(), 1, "one leaf: the updates and the insert below share it");
    assert!(tree.insert(&7u64.to_be_bytes(), &[2u8; 20]).expect("update"), "the key was present");
    let updated = txn.dirty_pages(); // the leaf and the page-map pages on its way
    assert_eq!(tree.insert_batch([(9u64.to_be_bytes(), [3u8; 20])]).expect("batch update"), 0);
    assert_eq!(txn.dirty_pages(), updated, "a batch of updates in the same leaf adds no page");
    assert!(!tree.insert(&99u64.to_be_bytes(), &[4u8; 20]).expect("insert"), "a new key");
    assert_eq!(txn.dirty_pages(), updated + 1, "a new key changes the length: the head page joins");
    drop(tree);
    txn.commit(Durability::Full).expect("commit");
    drop(db);
    let db = Database::open(&path, small_options()).expect("reopen");
    let txn = db.begin_read().expect("reader");
    let tree = BTree::open(&txn, "t").expect("open");
    assert_eq!(tree.len(), 51);
    assert_eq!(tree.get_vec(&7u64.to_be_bytes()).unwrap().as_deref(), Some(&[2u8; 20][..]));
    assert_eq!(tree.get_vec(&9u64.to_be_bytes()).unwrap().as_deref(), Some(&[3u8; 20][..]));
    assert_clean(&tree, "reopened");
}

/// Removing half the keys and inserting as many again reuses the freed space.
#[test]
fn space_is_reused_after_removals() {
    let (_storage, db) = memdb(small_options());
    let txn = db.begin_write().expect("writer");
    let mut tree = BTree::create(&txn, "t").expect("create");
    for i in 0..20_000u64 {
        tree.insert(&(i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).to_be_bytes(), &[7; 60]).expect("insert");
    }
    drop(tree);
    txn.commit(Durability::None).expect("commit");
    let full = db.meta().live_pages;
    let txn = db.begin_write().expect("writer");
    let mut tree = BTree::open(&txn, "t").expect("open");
    for i in (0..20_000u64).step_by(2) {
        assert!(tree.remove(&(i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).to_be_bytes()).expect("remove"));
    }
    assert_clean(&tree, "half removed");
    drop(tree);
    txn.commit(Durability::None).expect("commit");
    let txn = db.begin_write().expect("writer");
    let mut tree = BTree::open(&txn, "t").expect("open");
    for i in 20_000..30_000u64 {
        tree.insert(&(i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).to_be_bytes(), &[7; 60]).expect("insert");
    }
    drop(tree);
    txn.commit(Durability::None).expect("commit");
    let refilled = db.meta().live_pages;
    let txn = db.begin_write().expect("writer");
    let mut tree = BTree::open(&txn, "t").expect("open");
    for i in (1..30_000u64).step_by(2).chain((20_000..30_000).step_by(2)) {
        tree.remove(&(i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).to_be_bytes()).expect("remove");
    }
    assert_clean(&tree, "mostly removed");
    let left = tree.len();
    drop(tree);
    txn.commit(Durability::None).expect("commit");
    let emptied = db.meta().live_pages;
    println!("live pages: full {full}, half removed + refilled {refilled}, {left} entries left: {emptied}");
    assert!(refilled * 10 <= full * 11, "refilling reuses the space of removed entries ({full} -> {refilled})");
    assert!(emptied * 3 < full, "merges free pages ({full} -> {emptied})");
}

/// A typed table encodes tuple keys so they sort field by field.
#[test]
fn typed_table_orders_tuples() {
    const TYPED: TableDef<(String, i64), f64> = TableDef::new("typed");
    let (_storage, db) = memdb(Options::default());
    let txn = db.begin_write().expect("writer");
    let mut tree = txn.open_table(TYPED).expect("create");
    for (name, t, v) in [("b", -3, 1.5), ("a", 10, 2.5), ("a", -10, -0.5), ("a\0", 0, 0.0), ("ab", 5, 9.0)] {
        tree.insert((name.to_string(), t), v).expect("insert");
    }
    assert_eq!(tree.get(("a".to_string(), 10)).expect("get").map(|v| v.value()), Some(2.5));
    let keys: Vec<(String, i64)> = tree.iter().expect("range").map(|e| e.expect("entry").0.key()).collect();
    let expected = [("a", -10), ("a", 10), ("a\0", 0), ("ab", 5), ("b", -3)].map(|(s, t)| (s.to_string(), t));
    assert_eq!(keys, expected);
    let low = ("a".to_string(), 0);
    let ceiling = tree.range(&low..).expect("ceiling").next().map(|e| e.expect("entry").0.key());
    assert_eq!(ceiling, Some(("a".to_string(), 10)));
    let floor = tree.range(..=&low).expect("floor").next_back().map(|e| e.expect("entry").0.key());
    assert_eq!(floor, Some(("a".to_string(), -10)));
    assert!(tree.remove(("b".to_string(), -3)).expect("remove"));
    assert_eq!(tree.len(), 4);
}

fn as_ref(bound: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    bound.as_ref().map(|key| key.as_slice())
}

/// Builds the base image for the fault test: one committed tree.
fn fault_base() -> (Vec<u8>, Model) {
    let (storage, db) = memdb(small_options());
    let txn = db.begin_write().expect("writer");
    let mut tree = BTree::create(&txn, "t").expect("create");
    let mut model = Model::new();
    for i in 0..300u64 {
        let (key, value) = (format!("k{i:05}").into_bytes(), vec![i as u8; 30]);
        tree.insert(&key, &value).expect("insert");
        model.insert(key, value);
    }
    drop(tree);
    txn.commit(Durability::Full).expect("commit");
    drop(db);
    (storage.snapshot(), model)
}

/// One transaction of the fault workload: inserts (one large value), removals.
fn fault_txn(db: &Database, model: &Model) -> Result<Model, Error> {
    let mut next = model.clone();
    let txn = db.begin_write()?;
    let mut tree = BTree::open(&txn, "t")?;
    for i in 0..200u64 {
        let (key, value) = (format!("n{i:05}").into_bytes(), vec![i as u8; 50]);
        tree.insert(&key, &value)?;
        next.insert(key, value);
    }
    tree.insert(b"large", &vec![3u8; 20_000])?;
    next.insert(b"large".to_vec(), vec![3u8; 20_000]);
    for i in (0..300u64).step_by(3) {
        let key = format!("k{i:05}").into_bytes();
        tree.remove(&key)?;
        next.remove(&key);
    }
    drop(tree);
    txn.commit(Durability::Full)?;
    Ok(next)
}

/// A fault at every I/O operation of a B+tree transaction (torn write, power cut, EIO):
/// after a crash the tree holds either the previous commit or the new one, complete,
/// and passes the checker.
#[test]
fn every_io_fault_leaves_the_old_or_the_new_tree() {
    let (image, base) = fault_base();
    let after = fault_txn_model(&base);
    let mut runs = 0;
    for kind in [FaultKind::TornWrite, FaultKind::PowerCut, FaultKind::Eio] {
        for at_op in 0.. {
            let storage = Arc::new(FaultyStorage::new(image.clone(), Some(Fault { at_op, kind })));
            let attempt = Database::open_storage(storage.clone(), small_options(), "faulty")
                .map_err(Error::from)
                .and_then(|db| fault_txn(&db, &base));
            if !storage.fault_fired() {
                assert!(attempt.is_ok(), "{kind:?}: no fault, the commit succeeds");
                break;
            }
            for mode in [CrashMode::KeepUnsynced, CrashMode::DropUnsynced] {
                let db = Database::open_storage(
                    Arc::new(MemStorage::from_bytes(storage.crash_image(mode))),
                    small_options(),
                    "r",
                )
                .unwrap_or_else(|e| panic!("{kind:?} at {at_op} {mode:?}: reopen failed: {e}"));
                let txn = db.begin_read().expect("reader");
                let tree = BTree::open(&txn, "t").expect("open");
                let what = format!("{kind:?} at op {at_op}, {mode:?}");
                assert_clean(&tree, &what);
                let contents: Model =
                    tree.range(Bound::Unbounded, Bound::Unbounded).map(|e| e.expect("scan")).collect();
                assert!(contents == base || contents == after, "{what}: neither the old nor the new tree");
                if attempt.is_ok() {
                    assert!(contents == after, "{what}: acknowledged commit lost");
                }
            }
            runs += 1;
        }
    }
    println!("{runs} faulted runs");
    assert!(runs > 20);
}

fn fault_txn_model(base: &Model) -> Model {
    let mut next = base.clone();
    for i in 0..200u64 {
        next.insert(format!("n{i:05}").into_bytes(), vec![i as u8; 50]);
    }
    next.insert(b"large".to_vec(), vec![3u8; 20_000]);
    for i in (0..300u64).step_by(3) {
        next.remove(&format!("k{i:05}").into_bytes());
    }
    next
}

/// An open in a read transaction is remembered only within one snapshot: after a
/// commit that moves the root, a new read transaction sees the new tree.
#[test]
fn head_cache_follows_snapshots() {
    let (_storage, db) = memdb(small_options());
    let txn = db.begin_write().expect("writer");
    BTree::create(&txn, "t").expect("create");
    txn.commit(Durability::None).expect("commit");
    for round in 0..5u64 {
        let txn = db.begin_write().expect("writer");
        let mut tree = BTree::open(&txn, "t").expect("open");
        for i in 0..2000u64 {
            tree.insert(&(round * 2000 + i).to_be_bytes(), &[round as u8; 40]).expect("insert");
        }
        drop(tree);
        txn.commit(Durability::None).expect("commit");
        let txn = db.begin_read().expect("reader");
        for _ in 0..2 {
            let tree = BTree::open(&txn, "t").expect("open remembered");
            assert_eq!(tree.len(), (round + 1) * 2000);
            assert_eq!(tree.get_vec(&(round * 2000).to_be_bytes()).expect("get"), Some(vec![round as u8; 40]));
        }
    }
}

/// Remembered opens are keyed by the engine's snapshot token, not the transaction id:
/// a write transaction neither uses nor fills them (its rolled-back id is reused by the
/// next writer, with other contents), and another database with the same ids and
/// head page does not hit it.
#[test]
fn head_cache_ignores_writers_and_other_databases() {
    let fill = |db: &quiredb_engine::Database, n: u64, commit: bool| {
        let txn = db.begin_write().expect("writer");
        let mut tree = BTree::open(&txn, "t").expect("open");
        for i in 0..n {
            tree.insert(&i.to_be_bytes(), b"v").expect("insert");
        }
        drop(tree);
        let head = BTree::open(&txn, "t").expect("open").head_page();
        if commit {
            txn.commit(Durability::None).expect("commit");
        }
        head
    };
    let create = || {
        let (storage, db) = memdb(small_options());
        let txn = db.begin_write().expect("writer");
        BTree::create(&txn, "t").expect("create");
        txn.commit(Durability::None).expect("commit");
        (storage, db)
    };
    let (_a_storage, a) = create();
    {
        let txn = a.begin_write().expect("writer");
        let mut tree = BTree::open(&txn, "t").expect("open");
        tree.insert(b"x", b"v").expect("insert");
        drop(tree);
        assert_eq!(BTree::open(&txn, "t").expect("open").len(), 1);
    } // rolled back: the next writer gets the same transaction id
    let head = fill(&a, 3, true);
    let txn = a.begin_read().expect("reader");
    assert_eq!(BTree::open(&txn, "t").expect("open").len(), 3);
    let (_b_storage, b) = create();
    assert_eq!(fill(&b, 5, true), head, "same head page in both databases");
    let txn = b.begin_read().expect("reader");
    assert_eq!(BTree::open(&txn, "t").expect("open").len(), 5);
}

/// `insert_batch` equals one `insert` per pair, later pairs winning, one head write.
#[test]
fn insert_batch_matches_single_inserts() {
    let (_storage, db) = memdb(small_options());
    let txn = db.begin_write().expect("writer");
    let mut tree = BTree::create(&txn, "t").expect("create");
    let mut rng = Rng::new(7);
    let pairs: Vec<(Vec<u8>, Vec<u8>)> = (0..5000).map(|_| (random_key(&mut rng), random_value(&mut rng))).collect();
    let model: Model = pairs.iter().cloned().collect();
    assert_eq!(tree.insert_batch(pairs.iter().map(|(k, v)| (k, v))).expect("batch"), model.len() as u64);
    assert_clean(&tree, "batch");
    assert_same(&tree, &model, "batch");
    drop(tree);
    txn.commit(Durability::None).expect("commit");
    let txn = db.begin_read().expect("reader");
    assert_eq!(BTree::open(&txn, "t").expect("open").len(), model.len() as u64);
}

/// An owned snapshot moved into a spawned thread reads the B+tree as it was when the
/// snapshot began, while the main thread commits changes to it and deletes it.
#[test]
fn an_owned_snapshot_in_another_thread_keeps_its_version_across_commits() {
    let (_storage, db) = memdb(small_options());
    let db = Arc::new(db);
    let txn = db.begin_write().expect("writer");
    let mut tree = BTree::create(&txn, "t").expect("create");
    for i in 0u32..500 {
        tree.insert(&i.to_be_bytes(), b"old").expect("insert");
    }
    drop(tree);
    txn.commit(Durability::None).expect("commit");

    let snapshot = db.begin_read_owned().expect("owned reader");
    let (read_once, go_on) = (std::sync::mpsc::channel(), std::sync::mpsc::channel::<()>());
    let reader = std::thread::spawn(move || {
        let tree = BTree::open(&snapshot, "t").expect("open in the snapshot");
        let before = tree.get_vec(&7u32.to_be_bytes()).expect("get");
        read_once.0.send(()).expect("main thread waits");
        go_on.1.recv().expect("main thread commits, then says so");
        let values: Vec<Vec<u8>> = tree
            .range(Bound::Unbounded, Bound::Unbounded)
            .map(|entry| entry.map(|(_, value)| value))
            .collect::<Result<_, _>>()
            .expect("scan");
        (before, tree.len(), values)
    });
    read_once.1.recv().expect("reader read once");
    for round in 0..3 {
        let txn = db.begin_write().expect("writer");
        let mut tree = BTree::open(&txn, "t").expect("open");
        for i in 0u32..500 {
            tree.insert(&i.to_be_bytes(), format!("new {round}").as_bytes()).expect("overwrite");
        }
        drop(tree);
        txn.commit(Durability::None).expect("commit");
    }
    let txn = db.begin_write().expect("writer");
    BTree::drop_tree(&txn, "t").expect("drop the tree");
    txn.commit(Durability::None).expect("commit");
    go_on.0.send(()).expect("reader waits");

    let (before, len, values) = reader.join().expect("the reader thread does not panic");
    assert_eq!(before.as_deref(), Some(&b"old"[..]));
    assert_eq!(len, 500);
    assert!(values.iter().all(|value| value == b"old"), "the snapshot saw a later commit");
    let now = db.begin_read().expect("reader");
    assert!(BTree::open(&now, "t").is_err(), "the tree is gone in the newest snapshot");
}

/// In a write transaction a handle's first write claims the tree: opening another
/// handle then, or writing through a second one, is `AlreadyOpen` (not stale roots);
/// read-only handles may be several, and dropping the writer frees the tree.
#[test]
fn a_writing_handle_claims_its_tree() {
    let (_storage, db) = memdb(Options::default());
    let txn = db.begin_write().expect("writer");
    let mut first = BTree::create(&txn, "t").expect("create");
    let reader = BTree::open(&txn, "t");
    assert!(matches!(reader, Err(quiredb_structures::Error::AlreadyOpen { .. })), "the creator has claimed it");
    drop(first);
    let (mut one, mut two) = (BTree::open(&txn, "t").expect("one"), BTree::open(&txn, "t").expect("two"));
    one.insert(b"a", b"1").expect("the first writer claims the tree");
    assert!(matches!(two.insert(b"b", b"2"), Err(quiredb_structures::Error::AlreadyOpen { .. })));
    assert!(matches!(BTree::open(&txn, "t"), Err(quiredb_structures::Error::AlreadyOpen { .. })));
    drop((one, two));
    first = BTree::open(&txn, "t").expect("free again");
    first.insert(b"b", b"2").expect("insert");
    assert_eq!(first.len(), 2);
}

/// Two reader threads look keys up, each in a fresh snapshot, while a writer inserts
/// and rewrites keys in small commits, in a pool of 64 frames far smaller than the
/// tree: the branches the readers read unpinned are evicted and copied all the time
/// (the engine's grace periods, `pool/grace.rs`). Every key committed before a reader's
/// snapshot began is found, with a value naming that key (the reference model: the
/// prefix of the insertion order committed so far).
#[test]
fn readers_in_fresh_snapshots_find_every_committed_key_while_a_writer_churns_a_small_pool() {
    let seed = seed();
    println!("seed {seed:#x} (QUIRE_SEED replays)");
    let options = Database::builder().page_size(4096).cache_bytes(64 * 4096).into_options();
    let (_storage, db) = memdb(options);
    let keys = 6_000 * scale();
    let mut rng = Rng::new(seed);
    let mut order: Vec<u64> = (0..keys as u64).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let key = |k: u64| k.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_be_bytes();
    let value = |k: u64, round: usize| format!("{k:020}/{round}").into_bytes();
    let txn = db.begin_write().expect("writer");
    drop(BTree::create(&txn, "t").expect("create"));
    txn.commit(Durability::None).expect("commit");
    let committed = std::sync::atomic::AtomicUsize::new(0);
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        for reader in 0..2u64 {
            let (db, order, committed, done) = (&db, &order, &committed, &done);
            scope.spawn(move || {
                let mut rng = Rng::new(seed ^ (reader + 1));
                let mut lookups = 0u64;
                while !done.load(std::sync::atomic::Ordering::Acquire) || lookups < 1000 {
                    let known = committed.load(std::sync::atomic::Ordering::Acquire);
                    let txn = db.begin_read().expect("reader");
                    let tree = BTree::open(&txn, "t").expect("open");
                    for _ in 0..8 {
                        if known == 0 {
                            break;
                        }
                        let k = order[rng.below(known as u64) as usize];
                        let found = tree.get_vec(&key(k)).expect("get");
                        let found = found.unwrap_or_else(|| panic!("seed {seed:#x}: key {k} committed, not found"));
                        assert!(found.starts_with(format!("{k:020}/").as_bytes()), "seed {seed:#x}: key {k}");
                        lookups += 1;
                    }
                }
            });
        }
        for (round, chunk) in order.chunks(60).enumerate() {
            let txn = db.begin_write().expect("writer");
            let mut tree = BTree::open(&txn, "t").expect("open");
            for &k in chunk {
                tree.insert(&key(k), &value(k, round)).expect("insert");
            }
            let done_so_far = (round + 1) * 60;
            for _ in 0..20 {
                let k = order[rng.below(done_so_far.min(keys) as u64) as usize];
                tree.insert(&key(k), &value(k, round)).expect("rewrite");
            }
            drop(tree);
            txn.commit(Durability::None).expect("commit");
            committed.store(done_so_far.min(keys), std::sync::atomic::Ordering::Release);
        }
        done.store(true, std::sync::atomic::Ordering::Release);
    });
    // The tree outgrows the 64 frames several times over (3,375–20,685 evictions
    // measured, depending on how far the readers got).
    assert!(db.stats().evictions > 200, "the pool was churned: {:?}", db.stats());
}
