//! T8, XPath part: a prepared query over the native XML store run again and again in
//! one read transaction, with recycling on (`quiredb`: one `Prepared` and one
//! `ResultSet` reused, so a run after the first must allocate nothing) and off
//! (`quiredb-detached`: `prepare` and a detached `ResultSet` per run).
//!
//! The collection is T5's synthetic one (`t5::synthetic_xml`): `items` items, each
//! with a name, `i % 3` keywords, a location on even items and an `id` attribute. Two queries: a structural
//! one (a join and two semi-joins) and one comparing values.

use super::Config;
use crate::allocs;
use crate::check::Checks;
use crate::error::{BenchError, Result};
use crate::measure::{Sample, time};
use crate::peers::OrEngine;
use crate::results::{Collector, Unit};
use quiredb_engine::{Database, Durability, PageRead, ResultSet};
use quiredb_xml::store::{self, LoadOptions, XmlStore};
use std::path::Path;

const ID: &str = "quiredb";
const COLLECTION: &str = "t8-xml";

/// The queries: their names in the report and their text.
const QUERIES: [(&str, &str); 2] = [
    ("XPath //item[keyword and @id]/name", "//item[keyword and @id]/name"),
    ("XPath //item[location = 'here']/@id", "//item[location = 'here']/@id"),
];

/// Loads the generated collection into `db`.
pub fn build(db: &Database, dir: &Path, items: usize) -> Result<()> {
    let xml = super::t5::synthetic_xml(items);
    let path = dir.join("t8.xml");
    std::fs::write(&path, xml).map_err(|e| BenchError::io(&path, e))?;
    let txn = db.begin_write().or_engine(ID)?;
    store::load(&txn, COLLECTION, &[path], LoadOptions::default(), &mut |_| {}).or_engine(ID)?;
    txn.commit(Durability::Checksummed).or_engine(ID)
}

/// Expected rows of each query over `items` items.
fn expected(items: usize) -> [u64; 2] {
    let with_keywords = (0..items).filter(|i| i % 3 != 0).count();
    [with_keywords as u64, items.div_ceil(2) as u64]
}

/// Measures both queries in both modes, `runs` runs each per repeat.
pub fn run(cfg: &Config, db: &Database, items: usize, c: &mut Collector, checks: &mut Checks) -> Result<()> {
    let runs = cfg.sized(50, 500, 2_000);
    for ((name, query), rows) in QUERIES.iter().zip(expected(items)) {
        checks.expect(&format!("{name} rows"), rows * runs as u64)?;
        let txn = db.begin_read().or_engine(ID)?;
        let store = XmlStore::open(&txn, COLLECTION).or_engine(ID)?;
        for _ in 0..cfg.repeats {
            pooled(&store, &txn, name, query, runs, c, checks)?;
            detached(&store, name, query, runs, c, checks)?;
        }
    }
    Ok(())
}

/// One prepared query and one result set, reused: the first run (outside the count)
/// grows the buffers.
fn pooled<T: PageRead>(
    store: &XmlStore<'_, T>,
    txn: &T,
    name: &str,
    query: &str,
    runs: usize,
    c: &mut Collector,
    checks: &mut Checks,
) -> Result<()> {
    let mut prepared = store.prepare(query).or_engine(ID)?;
    let mut rows = txn.result_set();
    prepared.run_into(&mut rows).or_engine(ID)?;
    let mut total = 0u64;
    let (calls, bytes) = (allocs::calls(), allocs::bytes());
    let (_, sample) = time(runs as u64, || {
        for _ in 0..runs {
            prepared.run_into(&mut rows).or_engine(ID)?;
            total += rows.len() as u64;
        }
        Ok(())
    })?;
    record(c, "quiredb", name, runs, sample, (allocs::calls() - calls, allocs::bytes() - bytes));
    checks.record("quiredb", &format!("{name} rows"), total)
}

/// `prepare` and a fresh result set per run.
fn detached<T: PageRead>(
    store: &XmlStore<'_, T>,
    name: &str,
    query: &str,
    runs: usize,
    c: &mut Collector,
    checks: &mut Checks,
) -> Result<()> {
    let mut total = 0u64;
    let (calls, bytes) = (allocs::calls(), allocs::bytes());
    let (_, sample) = time(runs as u64, || {
        for _ in 0..runs {
            let mut rows = ResultSet::detached();
            store.prepare(query).and_then(|mut p| p.run_into(&mut rows)).or_engine(ID)?;
            total += rows.len() as u64;
        }
        Ok(())
    })?;
    record(c, "quiredb-detached", name, runs, sample, (allocs::calls() - calls, allocs::bytes() - bytes));
    checks.record("quiredb-detached", &format!("{name} rows"), total)
}

fn record(c: &mut Collector, engine: &str, name: &str, runs: usize, sample: Sample, (calls, bytes): (u64, u64)) {
    let n = runs as u64;
    let (calls, bytes) = (calls as f64, bytes as f64);
    c.add(engine, &format!("{name}: queries/s"), Unit::OpsPerSec, sample);
    c.add(engine, &format!("{name}: allocs/query"), Unit::AllocsPerOp, Sample { wall_s: calls, cpu_s: calls, n });
    c.add(
        engine,
        &format!("{name}: bytes allocated/query"),
        Unit::BytesPerOp,
        Sample { wall_s: bytes, cpu_s: bytes, n },
    );
}
