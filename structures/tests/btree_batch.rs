//! `insert_batch` on sorted and unsorted batches (the leaf-reuse fast path of
//! `btree/write.rs`) against a `BTreeMap` model, with the checker after every batch.
//! Batches are ascending runs (fresh keys past the end, keys interleaved with existing
//! ones, replacements of other sizes, blob values), random and descending; and the leaf
//! fill random inserts leave. The seed is
//! printed: `QUIRE_SEED` replays.

use quiredb_engine::storage::MemStorage;
use quiredb_engine::{Database, Durability, PageRead};
use quiredb_structures::btree::{self, BTree};
use quiredb_test_support::Rng;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;
type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

fn seed() -> u64 {
    quiredb_test_support::seed(0x5047_BA7C)
}

fn memdb() -> Database {
    let options = Database::builder().page_size(4096).into_options();
    Database::with_storage(Arc::new(MemStorage::new()), options, "mem").expect("in-memory database")
}

fn assert_matches<T: PageRead>(tree: &BTree<'_, T>, model: &Model, what: &str) {
    let problems = btree::check(tree).expect("checker runs");
    assert!(problems.is_empty(), "{what}: {problems:?}");
    assert_eq!(tree.len(), model.len() as u64, "{what}: len");
    let entries: Vec<(Vec<u8>, Vec<u8>)> =
        tree.range(Bound::Unbounded, Bound::Unbounded).collect::<Result<_, _>>().expect("scan");
    let expected: Vec<(Vec<u8>, Vec<u8>)> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert!(entries == expected, "{what}: contents differ from the model");
}

/// A key like the meteo layout's: a station-like prefix and a big-endian number.
fn key(station: u64, n: u64) -> Vec<u8> {
    let mut key = format!("S{station:03}").into_bytes();
    key.extend_from_slice(&n.to_be_bytes());
    key
}

/// A value: usually 16 bytes, sometimes other sizes (so replacements grow or shrink
/// cells) or a blob.
fn value(rng: &mut Rng) -> Vec<u8> {
    let len = match rng.below(20) {
        0 => 1500 + rng.below(3000) as usize,
        1..=3 => rng.below(200) as usize,
        _ => 16,
    };
    vec![rng.below(256) as u8; len]
}

/// One batch of a random kind, in insertion order.
fn batch(rng: &mut Rng, next: &mut u64) -> (Pairs, &'static str) {
    let len = 1 + rng.below(3000);
    let station = rng.below(4);
    let (keys, kind): (Vec<Vec<u8>>, _) = match rng.below(5) {
        0 => {
            let start = *next;
            *next += len;
            ((start..start + len).map(|n| key(station, n)).collect(), "append")
        }
        1 => {
            let mut n = rng.below(*next + 1);
            let keys = (0..len)
                .map(|_| {
                    n += rng.below(3);
                    key(station, n)
                })
                .collect();
            (keys, "ascending with repeats and existing keys")
        }
        2 => ((0..len).map(|_| key(rng.below(4), rng.below(*next + 100))).collect(), "random"),
        3 => {
            let start = rng.below(*next + 1);
            ((0..len).rev().map(|i| key(station, start + i * 2)).collect(), "descending")
        }
        _ => {
            let mut keys: Vec<Vec<u8>> = (0..len).map(|_| key(rng.below(4), rng.below(*next + 100))).collect();
            keys.sort();
            (keys, "sorted over all stations")
        }
    };
    (keys.into_iter().map(|k| (k, value(rng))).collect(), kind)
}

/// Random batches of every kind equal the model after each batch, across commits.
#[test]
fn sorted_and_unsorted_batches_match_the_model() {
    let mut rng = Rng::new(seed() | 1);
    let db = memdb();
    let mut model = Model::new();
    let mut next = 0u64;
    for round in 0..6 {
        let txn = db.begin_write().expect("writer");
        let mut tree = BTree::open_or_create(&txn, "t").expect("tree");
        for number in 0..8 {
            let (pairs, kind) = batch(&mut rng, &mut next);
            let before = model.len() as u64;
            for (k, v) in &pairs {
                model.insert(k.clone(), v.clone());
            }
            let added = tree.insert_batch(pairs.iter().map(|(k, v)| (k, v))).expect("batch");
            assert_eq!(added, model.len() as u64 - before, "round {round} batch {number} ({kind}): added");
            assert_matches(&tree, &model, &format!("round {round} batch {number} ({kind})"));
        }
        drop(tree);
        txn.commit(Durability::None).expect("commit");
    }
    let txn = db.begin_read().expect("reader");
    assert_matches(&BTree::open(&txn, "t").expect("open"), &model, "after the commits");
}

/// An ascending batch fills leaves (the rightmost leaf splits with only the new key on
/// the right) and a later batch inside the key range still lands right.
#[test]
fn ascending_batches_fill_leaves() {
    let db = memdb();
    let txn = db.begin_write().expect("writer");
    let mut tree = BTree::create(&txn, "t").expect("tree");
    let mut model = Model::new();
    let pairs: Vec<(Vec<u8>, Vec<u8>)> = (0..20_000).map(|n| (key(1, n * 2), vec![7; 16])).collect();
    model.extend(pairs.iter().cloned());
    assert_eq!(tree.insert_batch(pairs.iter().map(|(k, v)| (k, v))).expect("batch"), 20_000);
    let stats = btree::stats(&tree).expect("stats");
    assert!(stats.leaf_fill > 0.95, "leaf fill {}", stats.leaf_fill);
    let odd: Vec<(Vec<u8>, Vec<u8>)> = (0..20_000).step_by(7).map(|n| (key(1, n * 2 + 1), vec![9; 16])).collect();
    model.extend(odd.iter().cloned());
    tree.insert_batch(odd.iter().map(|(k, v)| (k, v))).expect("batch");
    assert_matches(&tree, &model, "interleaved");
}

/// A batch of random keys (sorted by `insert_batch`) fills leaves to nine tenths, so a
/// key inserted later into each leaf splits none; keys that came in order afterwards
/// fill leaves completely again.
#[test]
fn a_random_batch_leaves_room_in_its_leaves_for_later_keys() {
    let seed = seed();
    println!("seed {seed} (replay: QUIRE_SEED={seed})");
    let mut rng = Rng::new(seed);
    let db = memdb();
    let txn = db.begin_write().expect("writer");
    let mut tree = BTree::create(&txn, "t").expect("tree");
    let mut numbers: Vec<u64> = (0..20_000).map(|n| n * 2).collect();
    for at in (1..numbers.len()).rev() {
        numbers.swap(at, rng.index(at + 1));
    }
    let pairs: Vec<(Vec<u8>, Vec<u8>)> = numbers.iter().map(|&n| (key(1, n), vec![7; 16])).collect();
    let mut model: Model = pairs.iter().cloned().collect();
    assert_eq!(tree.insert_batch(pairs.iter().map(|(k, v)| (k, v))).expect("batch"), 20_000);
    let loaded = btree::stats(&tree).expect("stats");
    // Keys below the batch's first (inserted as it streamed) land inside the tree and
    // split leaves in halves; the rest append, to nine tenths of a page.
    assert!((0.6..=0.91).contains(&loaded.leaf_fill), "seed {seed}: leaf fill {}", loaded.leaf_fill);
    let per_leaf = (20_000 / loaded.leaves) as usize;
    for n in (0..20_000u64).step_by(per_leaf) {
        tree.insert(&key(1, n * 2 + 1), &[8; 16]).expect("insert");
        model.insert(key(1, n * 2 + 1), vec![8; 16]);
    }
    assert_eq!(btree::stats(&tree).expect("stats").leaves, loaded.leaves, "seed {seed}: a later key split a leaf");
    let after: Vec<(Vec<u8>, Vec<u8>)> = (0..5_000).map(|n| (key(2, n), vec![9; 16])).collect();
    model.extend(after.iter().cloned());
    tree.insert_batch(after.iter().map(|(k, v)| (k, v))).expect("batch");
    assert_matches(&tree, &model, "after the random batch");
}

/// Random inserts of station/time-like keys leave leaves at least 75% full (full
/// leaves are evened out with a sibling before splitting; split-only trees sit near
/// 70%), the tree matches the model and the checker is clean.
#[test]
fn random_inserts_fill_leaves() {
    let seed = seed();
    let mut rng = Rng::new(seed | 1);
    let db = memdb();
    let txn = db.begin_write().expect("writer");
    let mut tree = BTree::create(&txn, "t").expect("create");
    let mut model = Model::new();
    for _ in 0..20_000 {
        let mut key = (rng.below(50) as u32).to_be_bytes().to_vec();
        key.extend_from_slice(&(1_600_000_000 + rng.below(1 << 20)).to_be_bytes());
        let value = vec![7u8; 20];
        tree.insert(&key, &value).expect("insert");
        model.insert(key, value);
    }
    assert!(btree::check(&tree).expect("check").is_empty(), "seed {seed}: checker");
    let entries: Pairs = tree.range(Bound::Unbounded, Bound::Unbounded).collect::<Result<_, _>>().expect("scan");
    assert!(entries.into_iter().eq(model), "seed {seed}: contents differ from the model");
    let stats = btree::stats(&tree).expect("stats");
    assert!(stats.leaf_fill >= 0.75, "seed {seed}: leaf fill {:.3} under 0.75", stats.leaf_fill);
}

/// A streamed bulk load over chunks, each through a freshly opened handle (as a
/// loader receiving its input in chunks does), equals the model: chunks of any size,
/// none empty or some empty, blob values; the checker passes and the contents survive
/// the commit. Unsorted input (also across chunks) and a non-empty tree are typed
/// errors.
#[test]
fn streamed_bulk_load_over_chunks_matches_the_model() {
    let mut rng = Rng::new(seed() ^ 0xB01C);
    for round in 0..6u64 {
        let db = memdb();
        let txn = db.begin_write().expect("writer");
        BTree::create(&txn, "t").expect("create");
        let mut appender = BTree::open(&txn, "t").expect("open").bulk_appender().expect("appender");
        let mut model = Model::new();
        let total = [0, 1, 2, 500, 20_000, 60_000][round as usize];
        let mut n = 0u64;
        while n < total {
            let chunk = (rng.below(5000) as usize).min((total - n) as usize);
            let tree = BTree::open(&txn, "t").expect("open");
            assert!(tree.is_empty(), "the tree reads empty until the finish");
            for _ in 0..chunk {
                n += 1;
                let (k, v) = (key(n / 7000, n), value(&mut rng));
                tree.bulk_append(&mut appender, &k, &v).expect("append");
                model.insert(k, v);
            }
        }
        assert_eq!(appender.len(), total);
        let mut tree = BTree::open(&txn, "t").expect("open");
        assert_eq!(tree.bulk_finish(appender).expect("finish"), total);
        assert_matches(&tree, &model, &format!("round {round}: {total} entries"));
        drop(tree);
        txn.commit(Durability::None).expect("commit");
        let reader = db.begin_read().expect("reader");
        assert_matches(&BTree::open(&reader, "t").expect("open"), &model, "after commit");
        let txn = db.begin_write().expect("writer");
        let tree = BTree::open(&txn, "t").expect("open");
        if total > 0 {
            let error = tree.bulk_appender().expect_err("tree not empty");
            assert!(matches!(error, quiredb_structures::Error::BulkLoadNotEmpty { .. }), "{error}");
        }
    }
    let db = memdb();
    let txn = db.begin_write().expect("writer");
    let tree = BTree::create(&txn, "t").expect("create");
    let mut appender = tree.bulk_appender().expect("appender");
    tree.bulk_append(&mut appender, b"b", b"1").expect("first");
    drop(tree); // one handle per tree in a write transaction: the run goes on in another
    let tree = BTree::open(&txn, "t").expect("open");
    let error = tree.bulk_append(&mut appender, b"a", b"2").expect_err("unsorted across handles");
    assert!(matches!(error, quiredb_structures::Error::BulkLoadUnsorted { index: 1 }), "{error}");
    assert_eq!(appender.len(), 1, "the refused entry is not counted");
}

/// A random batch four times larger than the pool, in one transaction, writes each
/// page about once (it is sorted before it reaches the leaves, so a leaf the pool
/// spilled is not dirtied again), not once per key; the tree matches the model.
#[test]
fn a_random_batch_larger_than_the_pool_writes_each_page_about_once() {
    let mut rng = Rng::new(seed());
    let options = Database::builder().page_size(4096).cache_bytes(256 * 4096).into_options();
    let db = Database::with_storage(Arc::new(MemStorage::new()), options, "mem").expect("in-memory database");
    let pairs: Pairs = (0..40_000).map(|_| (key(rng.below(8), rng.below(1 << 40)), value(&mut rng))).collect();
    let model: Model = pairs.iter().cloned().collect();
    let before = db.stats().writes;
    let txn = db.begin_write().expect("writer");
    let mut tree = BTree::create(&txn, "t").expect("tree");
    assert_eq!(tree.insert_batch(pairs.iter().map(|(k, v)| (k, v))).expect("batch"), model.len() as u64);
    drop(tree);
    txn.commit(Durability::Checksummed).expect("commit");
    let written = db.stats().writes - before;
    let pages = db.meta().page_count;
    assert!(pages > 4 * 256, "the tree ({pages} pages) is larger than the pool");
    assert!(written * 10 <= pages * 12, "{written} page writes for a file of {pages} pages");
    let txn = db.begin_read().expect("reader");
    assert_matches(&BTree::open(&txn, "t").expect("open"), &model, "after the commit");
}

/// A random batch into a tree of many leaves declares each leaf final once its sorted
/// run has passed it, so a transaction that large writes its leaves behind (before the
/// commit); a second batch of the same transaction that changes leaves written behind
/// changes them again; the tree matches the model after the commit and after a reopen.
#[test]
fn a_large_random_batch_writes_the_leaves_it_passed_behind_and_matches_the_model() {
    let mut rng = Rng::new(seed());
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("behind.quire");
    let options = || Database::builder().page_size(4096).into_options();
    let db = Database::create(&path, options()).expect("create");
    let mut model = Model::new();
    let txn = db.begin_write().expect("writer");
    let mut tree = BTree::create(&txn, "t").expect("tree");
    let first: Pairs = (0..150_000).map(|n| (key(n % 4, n), vec![n as u8; 16])).collect();
    tree.insert_batch(first.iter().map(|(k, v)| (k, v))).expect("load");
    model.extend(first);
    drop(tree);
    txn.commit(Durability::Full).expect("load commit");
    let before = db.stats().written_behind;
    let txn = db.begin_write().expect("writer");
    let mut tree = BTree::open(&txn, "t").expect("open");
    for round in 0..2 {
        // New keys between the existing ones and replacements (inline values: a blob
        // value's pages are written behind anyway), in random order.
        let pairs: Pairs = (0..30_000)
            .map(|_| {
                let n = rng.below(150_000);
                let k = if rng.below(2) == 0 { key(n % 4, n) } else { [key(n % 4, n), vec![round]].concat() };
                (k, vec![rng.below(256) as u8; 8 + rng.below(40) as usize])
            })
            .collect();
        tree.insert_batch(pairs.iter().map(|(k, v)| (k, v))).expect("batch");
        model.extend(pairs);
    }
    drop(tree);
    txn.commit(Durability::Checksummed).expect("commit");
    let behind = db.stats().written_behind - before;
    assert!(behind > 100, "QUIRE_SEED={}: leaves were written behind ({behind} pages)", seed());
    let reader = db.begin_read().expect("reader");
    assert_matches(&BTree::open(&reader, "t").expect("open"), &model, "after the commit");
    drop(reader);
    drop(db);
    let db = Database::open(&path, options()).expect("reopen");
    let reader = db.begin_read().expect("reader");
    assert_matches(&BTree::open(&reader, "t").expect("open"), &model, "after a reopen");
}

/// Removing half the keys at random merges the leaves it leaves under half full (into
/// at most 7/8 of a page): at most 70 % of the leaves stay (95 % did when only nodes
/// under a quarter merged), the tree matches the model and the checker is clean.
#[test]
fn removing_half_the_keys_at_random_merges_the_leaves_left_under_half_full() {
    let mut rng = Rng::new(seed());
    let db = memdb();
    let txn = db.begin_write().expect("writer");
    let mut tree = BTree::create(&txn, "t").expect("tree");
    let mut model = Model::new();
    for _ in 0..20_000 {
        let (k, v) = (key(rng.below(8), rng.below(1 << 40)), vec![5u8; 40]);
        tree.insert(&k, &v).expect("insert");
        model.insert(k, v);
    }
    let before = btree::stats(&tree).expect("stats").leaves;
    let doomed: Vec<Vec<u8>> = model.keys().filter(|_| rng.below(2) == 0).cloned().collect();
    for k in &doomed {
        assert!(tree.remove(k).expect("remove"));
        model.remove(k);
    }
    let after = btree::stats(&tree).expect("stats").leaves;
    assert!(after * 10 <= before * 7, "{before} leaves before, {after} after removing half the keys");
    assert_matches(&tree, &model, "after removing half");
}

/// `remove_batch` of keys in random order, present and absent, repeated: the count of
/// keys that were present, and the tree equals the model after.
#[test]
fn remove_batch_matches_single_removes() {
    let mut rng = Rng::new(seed());
    let db = memdb();
    let txn = db.begin_write().expect("writer");
    let mut tree = BTree::create(&txn, "t").expect("tree");
    let mut model = Model::new();
    let pairs: Pairs = (0..5000).map(|n| (key(rng.below(3), n * 3), value(&mut rng))).collect();
    tree.insert_batch(pairs.iter().map(|(k, v)| (k, v))).expect("batch");
    model.extend(pairs);
    let doomed: Vec<Vec<u8>> = (0..4000).map(|_| key(rng.below(3), rng.below(16_000))).collect();
    let present = doomed.iter().filter(|k| model.remove(*k).is_some()).count() as u64;
    assert_eq!(tree.remove_batch(&doomed).expect("remove batch"), present);
    assert_matches(&tree, &model, "after the batch removal");
}
