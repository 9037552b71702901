//! The R*-tree handle remembers its root per committed snapshot (`root_cache.rs`):
//! one handle kept across many transactions, as the benchmark adapters and servers
//! keep it, must still see each snapshot's own tree. Readers of an older snapshot,
//! a writer's uncommitted root, and a second database with the same transaction ids
//! and head page are checked against a brute-force count.

use quiredb_engine::storage::MemStorage;
use quiredb_engine::{Database, Durability, PageRead};
use quiredb_structures::rtree::{RTree, Rect, WindowMode};
use std::sync::Arc;

fn memdb() -> Database {
    let options = Database::builder().page_size(4096).cache_bytes(4 << 20).into_options();
    Database::with_storage(Arc::new(MemStorage::new()), options, "mem").expect("create")
}

/// Points with both coordinates ≥ 0: the committed diagonal, not the writers' other points.
fn count(tree: &RTree<2>, txn: &impl PageRead) -> u64 {
    let mut n = 0;
    tree.visit_window(txn, &Rect::new([0.0, 0.0], [1e9, 1e9]), WindowMode::Intersects, |_, _| n += 1).expect("window");
    n
}

fn add(db: &Database, tree: &RTree<2>, from: u64, to: u64) {
    let txn = db.begin_write().expect("writer");
    for i in from..to {
        tree.insert_point(&txn, [i as f64, i as f64], i).expect("insert");
    }
    txn.commit(Durability::None).expect("commit");
}

#[test]
fn one_handle_sees_every_snapshot_its_own_root() {
    let db = memdb();
    let txn = db.begin_write().expect("writer");
    let tree = RTree::<2>::create_points(&txn, "t").expect("create");
    txn.commit(Durability::None).expect("commit");
    let mut old = Vec::new();
    let mut total = 0;
    for round in 1..=6u64 {
        // Each round grows the tree by more than a node, so the root moves and rises.
        let next = total + 150 * round * round;
        add(&db, &tree, total, next);
        total = next;
        let reader = db.begin_read().expect("reader");
        assert_eq!(count(&tree, &reader), total, "round {round}, first read");
        assert_eq!(count(&tree, &reader), total, "round {round}, cached read");
        old.push((reader, total));
        for (reader, expected) in &old {
            assert_eq!(count(&tree, reader), *expected, "round {round}, older snapshot");
        }
        let writer = db.begin_write().expect("writer");
        for i in 0..400 {
            tree.insert_point(&writer, [i as f64, -1.0 - i as f64], 1 << 40 | i).expect("insert");
        }
        assert_eq!(count(&tree, &writer), total, "round {round}: the writer's own tree");
        drop(writer); // rolled back
        let reader = db.begin_read().expect("reader");
        assert_eq!(count(&tree, &reader), total, "round {round}, after the rollback");
    }
}

#[test]
fn a_handle_used_on_another_database_reads_that_database() {
    let (a, b) = (memdb(), memdb());
    let create = |db: &Database| {
        let txn = db.begin_write().expect("writer");
        let tree = RTree::<2>::create_points(&txn, "t").expect("create");
        txn.commit(Durability::None).expect("commit");
        tree
    };
    let tree = create(&a);
    let _same_layout = create(&b);
    add(&a, &tree, 0, 2000);
    add(&b, &tree, 0, 30);
    assert_eq!(count(&tree, &a.begin_read().expect("reader")), 2000);
    assert_eq!(count(&tree, &b.begin_read().expect("reader")), 30, "same txn ids, same head page");
}
