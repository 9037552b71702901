//! Opening an R*-tree in a read transaction is remembered per thread with its root,
//! per committed snapshot (`opened.rs`, `root_cache.rs`): reopening the tree in many
//! transactions, as the benchmark adapters and servers do, must still see each
//! snapshot's own tree. Readers of an older snapshot, a writer's uncommitted root, and
//! a second database with the same transaction ids and head page are checked against a
//! brute-force count.

use quiredb_engine::storage::MemStorage;
use quiredb_engine::{Database, Durability, PageRead};
use quiredb_structures::rtree::{RTree, Rect, WindowMode};
use std::sync::Arc;

fn memdb() -> Database {
    let options = Database::builder().page_size(4096).cache_bytes(4 << 20).into_options();
    Database::with_storage(Arc::new(MemStorage::new()), options, "mem").expect("create")
}

/// Points with both coordinates ≥ 0: the committed diagonal, not the writers' other points.
fn count(txn: &impl PageRead) -> u64 {
    let tree = RTree::<_, 2>::open(txn, "t").expect("open");
    let mut n = 0;
    tree.visit_window(&Rect::new([0.0, 0.0], [1e9, 1e9]), WindowMode::Intersects, |_, _| n += 1).expect("window");
    n
}

fn add(db: &Database, from: u64, to: u64) {
    let txn = db.begin_write().expect("writer");
    let mut tree = RTree::<_, 2>::open(&txn, "t").expect("open");
    for i in from..to {
        tree.insert_point([i as f64, i as f64], i).expect("insert");
    }
    txn.commit(Durability::None).expect("commit");
}

#[test]
fn every_open_sees_its_snapshots_own_root() {
    let db = memdb();
    let txn = db.begin_write().expect("writer");
    RTree::<_, 2>::create_points(&txn, "t").expect("create");
    txn.commit(Durability::None).expect("commit");
    let mut old = Vec::new();
    let mut total = 0;
    for round in 1..=6u64 {
        // Each round grows the tree by more than a node, so the root moves and rises.
        let next = total + 150 * round * round;
        add(&db, total, next);
        total = next;
        let reader = db.begin_read().expect("reader");
        assert_eq!(count(&reader), total, "round {round}, first read");
        assert_eq!(count(&reader), total, "round {round}, cached read");
        old.push((reader, total));
        for (reader, expected) in &old {
            assert_eq!(count(reader), *expected, "round {round}, older snapshot");
        }
        let writer = db.begin_write().expect("writer");
        let mut tree = RTree::<_, 2>::open(&writer, "t").expect("open");
        for i in 0..400 {
            tree.insert_point([i as f64, -1.0 - i as f64], 1 << 40 | i).expect("insert");
        }
        drop(tree);
        assert_eq!(count(&writer), total, "round {round}: the writer's own tree");
        drop(writer); // rolled back
        let reader = db.begin_read().expect("reader");
        assert_eq!(count(&reader), total, "round {round}, after the rollback");
    }
}

#[test]
fn an_open_on_another_database_reads_that_database() {
    let (a, b) = (memdb(), memdb());
    let create = |db: &Database| {
        let txn = db.begin_write().expect("writer");
        RTree::<_, 2>::create_points(&txn, "t").expect("create");
        txn.commit(Durability::None).expect("commit");
    };
    create(&a);
    create(&b);
    add(&a, 0, 2000);
    add(&b, 0, 30);
    assert_eq!(count(&a.begin_read().expect("reader")), 2000);
    assert_eq!(count(&b.begin_read().expect("reader")), 30, "same txn ids, same head page");
}

#[test]
fn trees_whose_names_differ_only_past_the_inline_bytes_stay_apart() {
    // Proves the remembered open keys on the whole name, whatever its length: trees
    // named alike up to and past the last open's 24 inline bytes (and a multibyte name
    // longer than both), opened in turn in one snapshot and then in the next, each give
    // their own entry count, and a commit to one is seen by the next snapshot only there.
    let db = memdb();
    let names: Vec<String> = ["p".into(), "x".repeat(23) + "1", "x".repeat(23) + "2", "x".repeat(30) + "1"]
        .into_iter()
        .chain(["x".repeat(30) + "2", "é".repeat(100)])
        .collect();
    let txn = db.begin_write().expect("writer");
    for (index, name) in names.iter().enumerate() {
        let mut tree = RTree::<_, 2>::create_points(&txn, name.as_str()).expect("create");
        for i in 0..=index as u64 {
            tree.insert_point([i as f64, 1.0], i).expect("insert");
        }
    }
    txn.commit(Durability::None).expect("commit");
    let sizes = |txn: &_| -> Vec<u64> {
        (0..3)
            .flat_map(|_| names.iter())
            .map(|name| RTree::<_, 2>::open(txn, name.as_str()).expect("open").len().expect("len"))
            .collect()
    };
    let first = db.begin_read().expect("reader");
    let expected: Vec<u64> = (0..3).flat_map(|_| 1..=names.len() as u64).collect();
    assert_eq!(sizes(&first), expected);
    let txn = db.begin_write().expect("writer");
    RTree::<_, 2>::open(&txn, names[4].as_str()).expect("open").insert_point([9.0, 9.0], 99).expect("insert");
    txn.commit(Durability::None).expect("commit");
    let second = db.begin_read().expect("reader");
    let grown: Vec<u64> = expected.iter().enumerate().map(|(i, &n)| n + u64::from(i % names.len() == 4)).collect();
    assert_eq!(sizes(&second), grown);
    assert_eq!(sizes(&first), expected, "the older snapshot keeps its trees");
}
