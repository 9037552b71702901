//! The engine traits, one per workload family. A workload drives any engine through
//! its family trait; an engine joins a workload by one entry in `registry.rs`.
//! QuireDB's adapters implement these traits in one file each
//! (`peers/quiredb_<family>.rs`) and register under the engine id `quiredb`.
//!
//! | family | trait | workloads |
//! |---|---|---|
//! | ordered key-value | [`KvEngine`] | T1, T2, T7 |
//! | heap table / queue | [`QueueEngine`] | T3 |
//! | spatial | [`SpatialEngine`] | T4 |
//! | XML | [`XmlEngine`] | T5 |
//! | blobs | [`BlobEngine`] | T6 |
//!
//! Every write method is one durable transaction in the engine's documented durable
//! mode unless the engine's settings string says otherwise.

use crate::error::Result;
use std::path::Path;

/// Ordered key-value store (B+tree family).
pub trait KvEngine {
    /// Inserts or replaces every pair in one durable transaction.
    fn put_batch(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<()>;
    /// Deletes every key in one durable transaction; returns how many existed.
    fn delete_batch(&mut self, keys: &[&[u8]]) -> Result<u64>;
    /// Reads `key` into `out` (replacing its contents); false when absent.
    fn get(&mut self, key: &[u8], out: &mut Vec<u8>) -> Result<bool>;
    /// Visits every pair in key order inside one read snapshot (the "long query").
    fn scan(&mut self, visit: &mut dyn FnMut(&[u8], &[u8])) -> Result<()>;
    /// Bytes the database occupies on disk now.
    fn size_bytes(&mut self) -> Result<u64>;
    /// Range read (KV): visits up to `count` pairs in key order from the first key
    /// ≥ `start`, in one read snapshot; returns how many, or `None` when the adapter
    /// has no range read.
    fn range(&mut self, start: &[u8], count: usize, visit: &mut dyn FnMut(&[u8], &[u8])) -> Result<Option<usize>> {
        let _ = (start, count, visit);
        Ok(None)
    }
    /// Another handle on the same database for a concurrent thread (T7).
    fn reader(&self) -> Result<Box<dyn KvEngine + Send>>;
    /// Whether the engine compacts its file online ([`KvEngine::compact_step`]).
    fn compacts_online(&self) -> bool {
        false
    }
    /// One bounded step of online compaction (KV, after removal); true when done.
    fn compact_step(&mut self) -> Result<bool> {
        Ok(true)
    }
}

/// Options a key-value engine is opened with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvOptions {
    /// Cache budget in bytes for engines with a cache knob; `None` = engine default.
    pub cache_bytes: Option<u64>,
}

/// Heap table / paged queue of records (T3).
pub trait QueueEngine {
    /// Appends records in one durable transaction.
    fn append_batch(&mut self, records: &[&[u8]]) -> Result<()>;
    /// Visits every record in append order.
    fn scan(&mut self, visit: &mut dyn FnMut(&[u8])) -> Result<()>;
    /// Bytes on disk.
    fn size_bytes(&mut self) -> Result<u64>;
}

/// Spatial index over points of a fixed dimension (T4). Point ids are u64.
pub trait SpatialEngine {
    /// Inserts one point (`point.len()` = dimension). Inserts may be grouped into a
    /// transaction the engine keeps open until [`SpatialEngine::commit`].
    fn insert(&mut self, id: u64, point: &[f64]) -> Result<()>;
    /// Ends the pending insert transaction (no-op for in-memory engines).
    fn commit(&mut self) -> Result<()>;
    /// Builds the index from all points at once (flat coordinates), replacing it.
    fn bulk_load(&mut self, ids: &[u64], coords: &[f64]) -> Result<()>;
    /// Points inside the closed box `[lo, hi]`: count and wrapping sum of ids.
    fn window(&mut self, lo: &[f64], hi: &[f64]) -> Result<WindowAnswer>;
    /// The `k` nearest points to `point` (Euclidean), ids into `out`.
    fn knn(&mut self, point: &[f64], k: usize, out: &mut Vec<u64>) -> Result<()>;
    /// Closes the index and opens it again with a cold cache of `fraction` of its size
    /// on disk; false (and nothing done) for engines that do not count page traffic.
    fn reopen_with_cache_fraction(&mut self, _fraction: f64) -> Result<bool> {
        Ok(false)
    }
    /// The page traffic so far, for engines that count it (see above).
    fn page_traffic(&self) -> PageTraffic {
        PageTraffic::default()
    }
}

/// Pages an engine requested from its cache and read from its file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PageTraffic {
    pub requested: u64,
    pub read: u64,
}

/// The answer of a window query, enough to cross-check engines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WindowAnswer {
    pub count: u64,
    pub id_sum: u64,
}

impl WindowAnswer {
    /// Adds one matching id.
    pub fn add(&mut self, id: u64) {
        self.count += 1;
        self.id_sum = self.id_sum.wrapping_add(id);
    }
}

/// Native XML store answering XPath (T5).
pub trait XmlEngine {
    /// Creates a database `name` from one XML file; returns the load time in seconds
    /// when the engine reports its own (e.g. without a JVM start), else `None`.
    fn load(&mut self, name: &str, file: &Path) -> Result<Option<f64>>;
    /// False for an engine that loads but answers no query yet: T5 then reports its
    /// load time and size only, and says so.
    fn answers_queries(&self) -> bool {
        true
    }
    /// Runs each query `runs` times on database `name`; per query, its result count
    /// and the seconds of each run (in order).
    fn run_queries(&mut self, name: &str, queries: &[String], runs: usize) -> Result<Vec<QueryTiming>>;
    /// Bytes the database `name` occupies on disk.
    fn size_bytes(&mut self, name: &str) -> Result<u64>;
}

/// Count and run times of one XPath query.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryTiming {
    pub count: u64,
    pub runs_s: Vec<f64>,
}

/// Blob store (T6).
pub trait BlobEngine {
    /// Writes the blobs in one durable transaction (ids are new).
    fn put_batch(&mut self, blobs: &[(u64, &[u8])]) -> Result<()>;
    /// Reads blob `id` into `out`; false when absent.
    fn read(&mut self, id: u64, out: &mut Vec<u8>) -> Result<bool>;
    /// Bytes on disk.
    fn size_bytes(&mut self) -> Result<u64>;
}

/// Opens (creating) a key-value engine in directory `dir`.
pub type KvOpen = fn(dir: &Path, options: &KvOptions) -> Result<Box<dyn KvEngine>>;
/// Opens (creating) a queue engine in `dir` for records of `record_len` bytes.
pub type QueueOpen = fn(dir: &Path, record_len: usize) -> Result<Box<dyn QueueEngine>>;
/// Opens an empty spatial engine of `dims` dimensions with files (if any) in `dir`.
pub type SpatialOpen = fn(dir: &Path, dims: usize) -> Result<Box<dyn SpatialEngine>>;
/// Opens an XML engine keeping its databases under `dir`.
pub type XmlOpen = fn(dir: &Path) -> Result<Box<dyn XmlEngine>>;
/// Opens (creating) a blob engine in `dir`.
pub type BlobOpen = fn(dir: &Path) -> Result<Box<dyn BlobEngine>>;

/// A registered engine of one family: its id, its settings as printed, its opener.
#[derive(Debug, Clone, Copy)]
pub struct Entry<O> {
    pub id: &'static str,
    pub settings: &'static str,
    pub open: O,
}

/// Total size of the regular files under `dir` (recursively).
pub fn dir_size(dir: &Path) -> Result<u64> {
    let mut total = 0;
    let entries = std::fs::read_dir(dir).map_err(|e| crate::error::BenchError::io(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| crate::error::BenchError::io(dir, e))?;
        let meta = entry.metadata().map_err(|e| crate::error::BenchError::io(entry.path(), e))?;
        total += if meta.is_dir() { dir_size(&entry.path())? } else { meta.len() };
    }
    Ok(total)
}
