//! QuireDB R*-tree (`quiredb_structures::rtree`) as a spatial engine (T4): the tree
//! lives on 8 KiB pages of one database file and is read through the buffer pool.
//!
//! One-by-one inserts: `insert` queues the point and `commit` runs the queued R*
//! insertions one by one in one write transaction, then commits it durably (the
//! harness times the insert loop and the commit together; a `WriteTxn` borrows its
//! `Database`, so the adapter cannot keep one open between calls without unsafe
//! code). Bulk load: the parallel packing loader, one durable transaction. Queries:
//! a read snapshot per query, answers straight from the pages.
//!
//! The T4 data are points, so the trees are point trees (`RTree::create_points`:
//! leaves store the point once, about twice the leaf fan-out); `quiredb-boxes`
//! keeps the box layout (a point as a degenerate box) for comparison.

use super::{OrEngine, create_dir};
use crate::error::{BenchError, Result};
use crate::family::{SpatialEngine, WindowAnswer};
use quiredb_engine::{Database, Durability, Options, PageRead};
use quiredb_structures::rtree::{Coord, RTree, RTreeOptions, Rect, WindowMode};
use std::path::Path;

const ID: &str = "quiredb";
/// Buffer pool: holds the 1 M-point trees (≈ 90 MiB in 5-D) entirely.
const CACHE_BYTES: usize = 256 << 20;

/// A QuireDB database holding one R-tree of N-dimensional points.
pub struct QuireSpatial<const N: usize, C: Coord> {
    db: Database,
    tree: RTree<N, C>,
    pending: Vec<(u64, [f64; N])>,
    hilbert: bool,
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
        let options = Options { page_size: Some(8192), cache_bytes: CACHE_BYTES, ..Options::default() };
        let db = Database::create(dir.join("quire.db"), options).or_engine(ID)?;
        let txn = db.begin_write().or_engine(ID)?;
        let max_entries = std::env::var("QUIRE_RTREE_MAX").ok().and_then(|v| v.parse().ok());
        let options = RTreeOptions { max_entries, points: build.points };
        let tree = RTree::create_with(&txn, "points", options).or_engine(ID)?;
        txn.commit(Durability::Full).or_engine(ID)?;
        Ok(QuireSpatial { db, tree, pending: Vec::new(), hilbert: build.hilbert })
    }
}

impl<const N: usize, C: Coord> SpatialEngine for QuireSpatial<N, C> {
    fn insert(&mut self, id: u64, p: &[f64]) -> Result<()> {
        self.pending.push((id, point::<N>(p)));
        Ok(())
    }

    fn commit(&mut self) -> Result<()> {
        let txn = self.db.begin_write().or_engine(ID)?;
        for (id, p) in self.pending.drain(..) {
            self.tree.insert_point(&txn, p, id).or_engine(ID)?;
        }
        txn.commit(Durability::Full).or_engine(ID)
    }

    fn bulk_load(&mut self, ids: &[u64], coords: &[f64]) -> Result<()> {
        let txn = self.db.begin_write().or_engine(ID)?;
        if self.hilbert {
            self.tree.bulk_load_points_hilbert(&txn, ids, coords).or_engine(ID)?;
        } else {
            self.tree.bulk_load_points(&txn, ids, coords).or_engine(ID)?;
        }
        txn.commit(Durability::Full).or_engine(ID)
    }

    fn window(&mut self, lo: &[f64], hi: &[f64]) -> Result<WindowAnswer> {
        let txn = self.db.begin_read().or_engine(ID)?;
        let mut answer = WindowAnswer::default();
        let rect = Rect::new(point::<N>(lo), point::<N>(hi));
        self.tree.visit_window(&txn, &rect, WindowMode::Intersects, |id, _| answer.add(id)).or_engine(ID)?;
        Ok(answer)
    }

    fn knn(&mut self, p: &[f64], k: usize, out: &mut Vec<u64>) -> Result<()> {
        let txn = self.db.begin_read().or_engine(ID)?;
        let mut rows = txn.result_set();
        self.tree.nearest_k(&txn, point::<N>(p), k, None, &mut rows).or_engine(ID)?;
        out.clear();
        out.extend_from_slice(rows.ids());
        Ok(())
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
