//! `quire demo`, R-tree part: bulk-loads 500,000 random 2-D points into an R*-tree on
//! the database's pages, inserts 50,000 5-D points one by one into a second tree,
//! runs window, point and k-nearest queries, removes and moves entries, and checks
//! the invariants; prints sizes, timings and a few answers.

use anyhow::{Result, ensure};
use quiredb_engine::{Database, Durability, PageRead};
use quiredb_structures::rtree::{RTree, Rect, WindowMode};
use std::time::Instant;

const BULK_POINTS: u64 = 500_000;
const INSERT_POINTS: u64 = 50_000;

/// A small deterministic generator (splitmix64) of coordinates in [0, 1).
struct Points(u64);

impl Points {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Runs the R-tree tour on `db`.
pub fn tour(db: &Database) -> Result<()> {
    bulk_2d(db)?;
    insert_5d(db)?;
    Ok(())
}

fn bulk_2d(db: &Database) -> Result<()> {
    let mut points = Points(2);
    let coords: Vec<f64> = (0..BULK_POINTS * 2).map(|_| points.next()).collect();
    let ids: Vec<u64> = (0..BULK_POINTS).collect();
    let start = Instant::now();
    let txn = db.begin_write()?;
    let mut tree = RTree::<_, 2>::create(&txn, "demo_rtree_2d")?;
    tree.bulk_load_points(&ids, &coords)?;
    drop(tree);
    txn.commit(Durability::Full)?;
    let loaded = start.elapsed();
    let txn = db.begin_read()?;
    let tree = RTree::<_, 2>::open(&txn, "demo_rtree_2d")?;
    outln!(
        "rtree: bulk-loaded {BULK_POINTS} 2-D points in {:.0} ms: {} node pages of {} entries max, height {}",
        loaded.as_secs_f64() * 1e3,
        tree.node_pages()?,
        tree.max_entries(),
        tree.height()?
    )?;
    let mut rows = txn.result_set();
    let window = Rect::new([0.25, 0.25], [0.26, 0.26]);
    let start = Instant::now();
    tree.window_into(&window, WindowMode::Intersects, &mut rows)?;
    outln!("rtree: window {window:?} holds {} points ({:.0} µs)", rows.len(), start.elapsed().as_secs_f64() * 1e6)?;
    rows.clear();
    let start = Instant::now();
    tree.nearest_k([0.5, 0.5], 5, None, &mut rows)?;
    let elapsed = start.elapsed().as_secs_f64() * 1e6;
    let answer: Vec<String> =
        (0..rows.len()).map(|i| format!("#{} at {:.5}", rows.ids()[i], rows.scores()[i])).collect();
    outln!("rtree: 5 nearest to (0.5, 0.5): {} ({elapsed:.0} µs)", answer.join(", "))?;
    let problems = tree.check()?;
    ensure!(problems.is_empty(), "2-D tree invariants: {problems:?}");
    Ok(())
}

fn insert_5d(db: &Database) -> Result<()> {
    let mut points = Points(5);
    let all: Vec<[f64; 5]> = (0..INSERT_POINTS).map(|_| std::array::from_fn(|_| points.next())).collect();
    let txn = db.begin_write()?;
    let mut tree = RTree::<_, 5>::create(&txn, "demo_rtree_5d")?;
    let start = Instant::now();
    for (id, p) in all.iter().enumerate() {
        tree.insert_point(*p, id as u64)?;
    }
    let inserted = start.elapsed();
    let refused = tree.insert_point([0.0, f64::NAN, 0.0, 0.0, 0.0], 1).is_err();
    let start = Instant::now();
    for (id, p) in all.iter().enumerate().take(10_000) {
        ensure!(tree.remove(&Rect::point(*p), id as u64)?, "point {id} is removed");
    }
    let removed = start.elapsed();
    for (id, p) in all.iter().enumerate().skip(10_000).take(1_000) {
        ensure!(tree.update(&Rect::point(*p), &Rect::point([0.5; 5]), id as u64)?, "point {id} moves");
    }
    drop(tree);
    txn.commit(Durability::Full)?;
    let txn = db.begin_read()?;
    let tree = RTree::<_, 5>::open(&txn, "demo_rtree_5d")?;
    let mut rows = txn.result_set();
    tree.point_query([0.5; 5], &mut rows)?;
    let problems = tree.check()?;
    ensure!(problems.is_empty() && rows.len() == 1_000, "5-D tree after removes: {problems:?}, {} moved", rows.len());
    outln!(
        "rtree: inserted {INSERT_POINTS} 5-D points one by one at {:.0}/s (NaN refused: {refused}), removed 10000 at {:.0}/s, moved 1000; {} left in {} pages, height {}, invariants hold",
        INSERT_POINTS as f64 / inserted.as_secs_f64(),
        10_000.0 / removed.as_secs_f64(),
        tree.len()?,
        tree.node_pages()?,
        tree.height()?
    )?;
    Ok(())
}
