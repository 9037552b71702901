//! Repeated queries allocate nothing: with a counting global allocator (the
//! `stats_alloc` crate), B+tree gets and range scans and R-tree window and kNN
//! queries — the whole path: `begin_read`, open, recycled `ResultSet`, query, drops —
//! make zero allocator calls once warmed up. One test in this binary, so no other
//! test thread allocates while it counts.

use quiredb_engine::storage::MemStorage;
use quiredb_engine::{Database, Durability, Options, PageRead, ResultSet};
use quiredb_structures::btree::BTree;
use quiredb_structures::rtree::{RTree, Rect, WindowMode};
use quiredb_test_support::Rng as TestRng;
use rand::Rng;
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};
use std::alloc::System;
use std::sync::Arc;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const N: u64 = 20_000;

fn calls() -> usize {
    let stats = GLOBAL.stats();
    stats.allocations + stats.reallocations
}

/// One pass of every query kind over `keys` / `points`; returns rows seen.
/// `value` is the caller's scratch for B+tree values (allocated outside the count).
fn pass(db: &Database, points: &[[f64; 5]], value: &mut Vec<u8>) -> u64 {
    let mut rows_seen = 0;
    for (i, p) in points.iter().enumerate() {
        let txn = db.begin_read().expect("snapshot");
        let tree = BTree::open(&txn, "kv").expect("open btree");
        let rtree = RTree::<_, 5, f64>::open(&txn, "points").expect("open rtree");
        let mut rows: ResultSet = txn.result_set();
        let key = (i as u64 * 7 % N).to_be_bytes();
        assert!(tree.get(&key, value).expect("get"));
        rows.push_with_bytes(i as u64, 0.0, value);
        let mut cursor = tree.cursor();
        cursor.seek(&key).expect("seek");
        for _ in 0..10 {
            if cursor.key().is_none() {
                break;
            }
            cursor.value(value).expect("value");
            rows.push_with_bytes(0, 0.0, value);
            cursor.move_next().expect("next");
        }
        let lo = p.map(|c| c - 0.05);
        let hi = p.map(|c| c + 0.05);
        rtree.window_into(&Rect::new(lo, hi), WindowMode::Intersects, &mut rows).expect("window");
        rtree.nearest_k(*p, 10, None, &mut rows).expect("knn");
        rows_seen += rows.len() as u64;
        drop(rows);
        drop(cursor);
        drop(tree);
        drop(rtree);
        drop(txn);
    }
    rows_seen
}

#[test]
fn repeated_queries_make_no_allocator_calls() {
    let seed = quiredb_test_support::seed(0x5eed);
    let mut rng = TestRng::new(seed);
    let db = Database::with_storage(Arc::new(MemStorage::new()), Options::default(), "alloc-free").expect("db");
    let points: Vec<[f64; 5]> = (0..N).map(|_| std::array::from_fn(|_| rng.random::<f64>())).collect();
    let txn = db.begin_write().expect("writer");
    let mut tree = BTree::open_or_create(&txn, "kv").expect("btree");
    tree.bulk_load((0..N).map(|k| (k.to_be_bytes(), (k * 3).to_le_bytes()))).expect("bulk load");
    drop(tree);
    let mut rtree = RTree::<_, 5, f64>::create(&txn, "points").expect("rtree");
    for (id, p) in points.iter().enumerate() {
        rtree.insert(&Rect::point(*p), id as u64).expect("insert");
    }
    drop(rtree);
    txn.commit(Durability::None).expect("commit");
    let queries = &points[..500];
    let mut value = Vec::with_capacity(64);
    let warm = pass(&db, queries, &mut value);
    let before = calls();
    let again = pass(&db, queries, &mut value);
    let made = calls() - before;
    assert_eq!(warm, again, "same queries, same answers");
    assert!(again > 500 * 20, "the queries found rows: {again}");
    assert_eq!(made, 0, "allocator calls in {} steady-state query rounds", queries.len());
}
