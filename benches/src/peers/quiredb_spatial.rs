//! QuireDB R*-tree (`quiredb_structures::rtree`) as a spatial engine (T4): the tree
//! lives on 8 KiB pages of one database file and is read through the buffer pool.
//!
//! One-by-one inserts: `insert` queues the point and `commit` runs the queued R*
//! insertions one by one in one write transaction, then commits it durably (the
//! harness times the insert loop and the commit together; a `WriteTxn` borrows its
//! `Database`, so the adapter cannot keep one open between calls without unsafe
//! code). Bulk load: the parallel packing loader, one durable transaction. Queries:
//! a read snapshot per query, answers straight from the pages (kNN through the
//! visitor `visit_nearest_k`, as the other engines hand their ids to the caller).
//!
//! Page traffic (issue 6: pages read per query with a buffer pool holding 25 % of the
//! tree): the adapter reopens the database with a pool of that share of the file and
//! reports the pool's counters.
//!
//! The T4 data are points, so the trees are point trees (`RTree::create_points`:
//! leaves store the point once, about twice the leaf fan-out); `quiredb-boxes`
//! keeps the box layout (a point as a degenerate box) for comparison.

use super::{OrEngine, create_dir};
use crate::error::{BenchError, Result};
use crate::family::{PageTraffic, SpatialEngine, WindowAnswer};
use quiredb_engine::{Database, Durability};
use quiredb_structures::rtree::{Coord, RTree, RTreeOptions, Rect, WindowMode};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

const ID: &str = "quiredb";
/// The tree's catalog name; opened in each transaction (a read open is remembered per
/// snapshot, so a query's open reads no page).
const NAME: &str = "points";
/// Buffer pool: holds the 1 M-point trees (≈ 90 MiB in 5-D) entirely.
const CACHE_BYTES: usize = 256 << 20;
/// The smallest pool a page-traffic reopen asks for (the engine needs 64 pages).
const MIN_CACHE_BYTES: usize = 1 << 20;

/// A QuireDB database holding one R-tree of N-dimensional points.
pub struct QuireSpatial<const N: usize, C: Coord> {
    path: PathBuf,
    /// `None` only between closing and reopening the database (it holds the file's lock).
    db: Option<Database>,
    pending: Vec<(u64, [f64; N])>,
    hilbert: bool,
    coord: PhantomData<C>,
}

/// How an engine id builds its tree.
#[derive(Clone, Copy)]
struct Build {
    /// Bulk load in Hilbert order instead of STR/OMT.
    hilbert: bool,
    /// Point leaves (`RTreeOptions::points`).
    points: bool,
}

const POINTS: Build = Build { hilbert: false, points: true };

fn point<const N: usize>(p: &[f64]) -> [f64; N] {
    p.try_into().expect("the workload passes points of the engine's dimension")
}

impl<const N: usize, C: Coord> QuireSpatial<N, C> {
    fn open(dir: &Path, build: Build) -> Result<Self> {
        create_dir(dir)?;
        let options = Database::builder().page_size(8192).cache_bytes(CACHE_BYTES).into_options();
        let path = dir.join("quire.db");
        let db = Database::create(&path, options).or_engine(ID)?;
        let txn = db.begin_write().or_engine(ID)?;
        let max_entries = std::env::var("QUIRE_RTREE_MAX").ok().and_then(|v| v.parse().ok());
        let options = RTreeOptions { max_entries, points: build.points };
        RTree::<_, N, C>::create_with(&txn, NAME, options).or_engine(ID)?;
        txn.commit(Durability::Full).or_engine(ID)?;
        Ok(QuireSpatial { path, db: Some(db), pending: Vec::new(), hilbert: build.hilbert, coord: PhantomData })
    }
}

/// The open database (`None` only after a failed reopen).
fn open_db(db: &Option<Database>) -> Result<&Database> {
    db.as_ref().ok_or_else(|| BenchError::engine(ID, "the database failed to reopen"))
}

impl<const N: usize, C: Coord> SpatialEngine for QuireSpatial<N, C> {
    fn insert(&mut self, id: u64, p: &[f64]) -> Result<()> {
        self.pending.push((id, point::<N>(p)));
        Ok(())
    }

    fn commit(&mut self) -> Result<()> {
        let txn = open_db(&self.db)?.begin_write().or_engine(ID)?;
        let mut tree = RTree::<_, N, C>::open(&txn, NAME).or_engine(ID)?;
        for (id, p) in self.pending.drain(..) {
            tree.insert_point(p, id).or_engine(ID)?;
        }
        drop(tree);
        txn.commit(Durability::Full).or_engine(ID)
    }

    fn bulk_load(&mut self, ids: &[u64], coords: &[f64]) -> Result<()> {
        let txn = open_db(&self.db)?.begin_write().or_engine(ID)?;
        let mut tree = RTree::<_, N, C>::open(&txn, NAME).or_engine(ID)?;
        if self.hilbert {
            tree.bulk_load_points_hilbert(ids, coords).or_engine(ID)?;
        } else {
            tree.bulk_load_points(ids, coords).or_engine(ID)?;
        }
        drop(tree);
        txn.commit(Durability::Full).or_engine(ID)
    }

    fn window(&mut self, lo: &[f64], hi: &[f64]) -> Result<WindowAnswer> {
        let txn = open_db(&self.db)?.begin_read().or_engine(ID)?;
        let mut answer = WindowAnswer::default();
        let rect = Rect::new(point::<N>(lo), point::<N>(hi));
        let tree = RTree::<_, N, C>::open(&txn, NAME).or_engine(ID)?;
        tree.visit_window(&rect, WindowMode::Intersects, |id, _| answer.add(id)).or_engine(ID)?;
        Ok(answer)
    }

    fn knn(&mut self, p: &[f64], k: usize, out: &mut Vec<u64>) -> Result<()> {
        let txn = open_db(&self.db)?.begin_read().or_engine(ID)?;
        out.clear();
        RTree::<_, N, C>::open(&txn, NAME)
            .or_engine(ID)?
            .visit_nearest_k(point::<N>(p), k, None, |_, id| out.push(id))
            .or_engine(ID)
    }

    fn reopen_with_cache_fraction(&mut self, fraction: f64) -> Result<bool> {
        let bytes = std::fs::metadata(&self.path).map_err(|e| BenchError::engine(ID, e.to_string()))?.len();
        let cache_bytes = ((bytes as f64 * fraction) as usize).max(MIN_CACHE_BYTES);
        drop(self.db.take());
        let options = Database::builder().page_size(8192).cache_bytes(cache_bytes).into_options();
        let db = Database::open(&self.path, options).or_engine(ID)?;
        RTree::<_, N, C>::open(&db.begin_read().or_engine(ID)?, NAME).or_engine(ID)?;
        self.db = Some(db);
        Ok(true)
    }

    fn page_traffic(&self) -> PageTraffic {
        let stats = self.db.as_ref().map(Database::stats).unwrap_or_default();
        // A miss reads the file: with `pread`, or in place from its memory map (which
        // counts a page as read only the first time, when it checksums it).
        PageTraffic { requested: stats.hits + stats.misses, read: stats.misses }
    }
}

/// Opener for `quiredb` (2-D and 5-D builds, point leaves).
pub fn open(dir: &Path, dims: usize) -> Result<Box<dyn SpatialEngine>> {
    match dims {
        2 => Ok(Box::new(QuireSpatial::<2, f64>::open(dir, POINTS)?)),
        5 => Ok(Box::new(QuireSpatial::<5, f64>::open(dir, POINTS)?)),
        _ => Err(BenchError::engine(ID, format!("{dims} dimensions not built"))),
    }
}

/// Opener for `quiredb-boxes` (leaves in the box layout: a point as a degenerate box).
pub fn open_boxes(dir: &Path, dims: usize) -> Result<Box<dyn SpatialEngine>> {
    let boxes = Build { hilbert: false, points: false };
    match dims {
        2 => Ok(Box::new(QuireSpatial::<2, f64>::open(dir, boxes)?)),
        5 => Ok(Box::new(QuireSpatial::<5, f64>::open(dir, boxes)?)),
        _ => Err(BenchError::engine(ID, format!("{dims} dimensions not built"))),
    }
}

/// Opener for `quiredb-hilbert` (f64, bulk load packed in Hilbert order).
pub fn open_hilbert(dir: &Path, dims: usize) -> Result<Box<dyn SpatialEngine>> {
    match dims {
        2 => Ok(Box::new(QuireSpatial::<2, f64>::open(dir, Build { hilbert: true, points: true })?)),
        5 => Ok(Box::new(QuireSpatial::<5, f64>::open(dir, Build { hilbert: true, points: true })?)),
        _ => Err(BenchError::engine(ID, format!("{dims} dimensions not built"))),
    }
}

/// Opener for `quiredb-f32` (coordinates stored as f32: exact for the T4 points).
pub fn open_f32(dir: &Path, dims: usize) -> Result<Box<dyn SpatialEngine>> {
    match dims {
        2 => Ok(Box::new(QuireSpatial::<2, f32>::open(dir, POINTS)?)),
        5 => Ok(Box::new(QuireSpatial::<5, f32>::open(dir, POINTS)?)),
        _ => Err(BenchError::engine(ID, format!("{dims} dimensions not built"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_traffic_counts_a_cold_quarter_pool() {
        let dir = tempfile::tempdir().unwrap();
        let mut engine = open(dir.path(), 2).unwrap();
        let n = 200_000u64;
        let ids: Vec<u64> = (1..=n).collect();
        let coords: Vec<f64> = (0..n).flat_map(|i| [(i % 500) as f64, (i / 500) as f64]).collect();
        engine.bulk_load(&ids, &coords).unwrap();
        let (lo, hi) = ([0.0, 0.0], [499.0, 399.0]);
        let whole = engine.window(&lo, &hi).unwrap();
        let warm = engine.page_traffic();
        engine.window(&lo, &hi).unwrap();
        let all_cached = engine.page_traffic();
        assert_eq!(all_cached.read, warm.read, "the default pool holds the whole tree");
        let pages = all_cached.requested - warm.requested;

        assert!(engine.reopen_with_cache_fraction(0.25).unwrap());
        let cold = engine.page_traffic();
        assert!(cold.requested < 10, "a reopened database counts afresh: {cold:?}");
        assert_eq!(engine.window(&lo, &hi).unwrap(), whole);
        engine.window(&lo, &hi).unwrap();
        let after = engine.page_traffic();
        // A pool of a quarter of the file cannot keep the tree: most pages come from the file.
        let read = after.read - cold.read;
        assert!(read > pages && read <= after.requested - cold.requested, "{pages} pages; {cold:?} -> {after:?}");
    }
}
