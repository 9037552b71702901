//! QuireDB's native XML store for T5 (`quiredb`): one database file per collection
//! (`<name>.quire`, 8 KiB pages, pool 256 MiB), the document loaded in one write
//! transaction committed with `Durability::Checksummed`. The load time is the whole
//! `load` + commit, measured here around the call.
//!
//! Queries: each run of a query is `prepare` (parse, compile against the path summary)
//! plus `run` (the labels of every result node, materialised in document order) in
//! one read transaction — what BaseX's `prof:void(query)` times (compile and
//! evaluate, results discarded). Counts come from `count()`. Every query runs once
//! before the timed runs (warm-up).

use super::{OrEngine, create_dir};
use crate::error::{BenchError, Result};
use crate::family::{QueryTiming, XmlEngine};
use quiredb_engine::{Database, Durability, PageRead};
use quiredb_xml::store::{self, LoadOptions, XmlStore};
use std::path::{Path, PathBuf};
use std::time::Instant;

const ID: &str = "quiredb";

/// The XML adapter.
pub struct QuireXml {
    dir: PathBuf,
    /// Threads per query (1: `run`; more: `run_parallel`).
    threads: usize,
}

/// Opener for `quiredb` in T5.
pub fn open(dir: &Path) -> Result<Box<dyn XmlEngine>> {
    create_dir(dir)?;
    Ok(Box::new(QuireXml { dir: dir.into(), threads: 1 }))
}

/// Opener for `quiredb-2t` in T5: queries split across two threads.
pub fn open_parallel(dir: &Path) -> Result<Box<dyn XmlEngine>> {
    create_dir(dir)?;
    Ok(Box::new(QuireXml { dir: dir.into(), threads: 2 }))
}

impl QuireXml {
    fn file(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.quire"))
    }
}

impl XmlEngine for QuireXml {
    fn load(&mut self, name: &str, file: &Path) -> Result<Option<f64>> {
        let db = Database::builder().cache_bytes(256 << 20).create(self.file(name)).or_engine(ID)?;
        let txn = db.begin_write().or_engine(ID)?;
        store::load(&txn, name, &[file.to_path_buf()], LoadOptions::default(), &mut |_| {}).or_engine(ID)?;
        txn.commit(Durability::Checksummed).or_engine(ID)?;
        Ok(None)
    }

    fn run_queries(&mut self, name: &str, queries: &[String], runs: usize) -> Result<Vec<QueryTiming>> {
        let db = Database::builder().cache_bytes(256 << 20).open(self.file(name)).or_engine(ID)?;
        let txn = db.begin_read().or_engine(ID)?;
        let store = XmlStore::open(&txn, name).or_engine(ID)?;
        let mut timings = Vec::with_capacity(queries.len());
        for query in queries {
            let count = store.prepare(query).and_then(|mut p| p.count()).or_engine(ID)?;
            run_once(&db, &store, query, self.threads)?;
            timings.push(QueryTiming { count, runs_s: Vec::with_capacity(runs) });
        }
        for _ in 0..runs {
            for (query, timing) in queries.iter().zip(&mut timings) {
                let start = Instant::now();
                run_once(&db, &store, query, self.threads)?;
                timing.runs_s.push(start.elapsed().as_secs_f64());
            }
        }
        Ok(timings)
    }

    fn size_bytes(&mut self, name: &str) -> Result<u64> {
        let path = self.file(name);
        Ok(std::fs::metadata(&path).map_err(|e| BenchError::io(&path, e))?.len())
    }
}

/// Prepares and runs `query` once on `threads` threads; the number of result nodes.
fn run_once<T: PageRead>(db: &Database, store: &XmlStore<'_, T>, query: &str, threads: usize) -> Result<usize> {
    let mut prepared = store.prepare(query).or_engine(ID)?;
    let labels = if threads > 1 {
        prepared.run_parallel(threads, || Ok(db.begin_read()?)).or_engine(ID)?
    } else {
        prepared.run().or_engine(ID)?
    };
    Ok(labels.len())
}
