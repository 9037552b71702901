//! T8 — QuickDB ResultSet: allocator calls per query in steady state and queries/s,
//! with result-set recycling on (`quiredb`: `txn.result_set()` from the database's
//! pool) and off (`quiredb-detached`: `ResultSet::detached()`, fresh buffers each
//! query), for QuireDB's query kinds: B+tree point get and range scan of 10 pairs,
//! R*-tree window (0.01 %) and kNN (k = 10) in 5-D, and a prepared XPath query over
//! the XML store run again (`t8_xpath.rs`). The queue has no ResultSet path
//! (its scans hand records to a visitor), so it is not a T8 kind.
//!
//! Steady state: every query is run once in each mode first (pages in the pool,
//! result-set pool filled), then each repeat times one pass and counts the allocator
//! calls of the whole query path — `begin_read`, opening the structure, taking the
//! result set, the query, dropping the result set, dropping the transaction — with
//! the counting global allocator (`allocs.rs`). A separate probe pass counts the
//! calls between those steps, so a path that allocates says where.

use super::{Config, Outcome, remove_dir};
use crate::allocs;
use crate::check::{Checks, word_hash};
use crate::data::{meteo, permutation, points, windows};
use crate::error::Result;
use crate::measure::{Sample, time};
use crate::peers::OrEngine;
use crate::results::{Collector, Unit};
use quiredb_engine::{Database, Durability, PageRead, ResultSet};
use quiredb_structures::btree::BTree;
use quiredb_structures::rtree::{RTree, Rect, WindowMode};
use std::path::Path;

const ID: &str = "quiredb";
const TREE: &str = "t8-kv";
const RTREE: &str = "t8-points";
const DIMS: usize = 5;
const K: usize = 10;
const RANGE: usize = 10;
/// Buffer pool: holds both structures at the default size entirely.
const CACHE_BYTES: usize = 512 << 20;
/// Queries of the per-step probe pass (at most).
const PROBE_QUERIES: usize = 10_000;

/// The steps of one query, in order (the probe's buckets).
const STEPS: [&str; 6] = ["begin_read", "open structure", "take result set", "query", "drop result set", "drop txn"];

/// Where a query's result set comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Pooled,
    Detached,
}

const MODES: [Mode; 2] = [Mode::Pooled, Mode::Detached];

impl Mode {
    fn engine(self) -> &'static str {
        match self {
            Mode::Pooled => "quiredb",
            Mode::Detached => "quiredb-detached",
        }
    }

    fn settings(self) -> &'static str {
        match self {
            Mode::Pooled => "recycling on: txn.result_set() from the database's pool; 8 KiB pages, 512 MiB pool",
            Mode::Detached => "recycling off: ResultSet::detached() per query; 8 KiB pages, 512 MiB pool",
        }
    }

    fn take(self, txn: &impl PageRead) -> ResultSet {
        match self {
            Mode::Pooled => txn.result_set(),
            Mode::Detached => ResultSet::detached(),
        }
    }
}

/// The query kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Get,
    Range,
    Window,
    Knn,
}

const KINDS: [Kind; 4] = [Kind::Get, Kind::Range, Kind::Window, Kind::Knn];

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Get => "B+tree point get",
            Kind::Range => "B+tree range scan (10 pairs)",
            Kind::Window => "R-tree window 0.01% (5-D)",
            Kind::Knn => "R-tree kNN k=10 (5-D)",
        }
    }
}

/// Allocator calls between the steps of a query (only when switched on).
struct Probe {
    on: bool,
    last: u64,
    per_step: [u64; STEPS.len()],
}

impl Probe {
    fn new(on: bool) -> Probe {
        Probe { on, last: 0, per_step: [0; STEPS.len()] }
    }

    fn start(&mut self) {
        if self.on {
            self.last = allocs::calls();
        }
    }

    fn mark(&mut self, step: usize) {
        if self.on {
            let now = allocs::calls();
            self.per_step[step] += now - self.last;
            self.last = now;
        }
    }
}

/// What the queries returned, to cross-check the two modes.
#[derive(Debug, Default)]
struct Answer {
    rows: u64,
    ids: u64,
    hash: u64,
}

impl Answer {
    fn add(&mut self, rows: &ResultSet) {
        self.rows += rows.len() as u64;
        for (row, id) in rows.ids().iter().enumerate() {
            self.ids = self.ids.wrapping_add(*id);
            self.hash = self.hash.wrapping_add(word_hash(rows.bytes(row)));
        }
    }
}

/// One database with a B+tree of meteo records and a 5-D R*-tree, and the queries.
struct Fixture {
    db: Database,
    keys: Vec<[u8; 12]>,
    windows: Vec<Rect<DIMS>>,
    knn: Vec<[f64; DIMS]>,
}

fn array(c: &[f64]) -> [f64; DIMS] {
    c.try_into().expect("the generators give DIMS coordinates")
}

fn build(dir: &Path, n: usize, queries: usize, seed: u64) -> Result<Fixture> {
    let records = meteo(n, seed)?;
    let options = Database::builder().cache_bytes(CACHE_BYTES).into_options();
    let db = Database::create(dir.join("t8.quire"), options).or_engine(ID)?;
    let txn = db.begin_write().or_engine(ID)?;
    let mut tree = BTree::open_or_create(&txn, TREE).or_engine(ID)?;
    tree.bulk_load(records.iter().map(|r| (r.key(), r.value()))).or_engine(ID)?;
    drop(tree);
    let mut rtree = RTree::<_, DIMS, f64>::create(&txn, RTREE).or_engine(ID)?;
    let ids: Vec<u64> = (1..=n as u64).collect();
    rtree.bulk_load_points(&ids, &points(n, DIMS, seed)).or_engine(ID)?;
    drop(rtree);
    txn.commit(Durability::Full).or_engine(ID)?;
    let order = permutation(n, seed ^ 0x78);
    Ok(Fixture {
        db,
        keys: order.iter().cycle().take(queries).map(|&i| records[i].key()).collect(),
        windows: windows(queries, DIMS, 1e-4, seed).iter().map(|w| Rect::new(array(&w.lo), array(&w.hi))).collect(),
        knn: points(queries, DIMS, seed ^ 0x4b4e4e).chunks_exact(DIMS).map(array).collect(),
    })
}

/// Up to `RANGE` values from the first key ≥ `start`, into `rows`.
fn range_into<T: PageRead>(
    tree: &BTree<'_, T>,
    start: &[u8],
    scratch: &mut Vec<u8>,
    rows: &mut ResultSet,
) -> Result<()> {
    let mut cursor = tree.cursor();
    cursor.seek(start).or_engine(ID)?;
    for seen in 0..RANGE as u64 {
        if cursor.key().is_none() {
            break;
        }
        cursor.value(scratch).or_engine(ID)?;
        rows.push_with_bytes(seen, 0.0, scratch);
        cursor.move_next().or_engine(ID)?;
    }
    Ok(())
}

/// Query `i` of `kind`, the whole path, marking the probe between steps.
fn query(
    f: &Fixture,
    kind: Kind,
    i: usize,
    mode: Mode,
    p: &mut Probe,
    scratch: &mut Vec<u8>,
    a: &mut Answer,
) -> Result<()> {
    p.start();
    let txn = f.db.begin_read().or_engine(ID)?;
    p.mark(0);
    if matches!(kind, Kind::Get | Kind::Range) {
        let tree = BTree::open(&txn, TREE).or_engine(ID)?;
        p.mark(1);
        let mut rows = mode.take(&txn);
        p.mark(2);
        if kind == Kind::Get {
            if tree.get(&f.keys[i], scratch).or_engine(ID)? {
                rows.push_with_bytes(i as u64, 0.0, scratch);
            }
        } else {
            range_into(&tree, &f.keys[i], scratch, &mut rows)?;
        }
        p.mark(3);
        a.add(&rows);
        drop(rows);
        p.mark(4);
    } else {
        let rtree = RTree::<_, DIMS, f64>::open(&txn, RTREE).or_engine(ID)?;
        p.mark(1);
        let mut rows = mode.take(&txn);
        p.mark(2);
        if kind == Kind::Window {
            rtree.window_into(&f.windows[i], WindowMode::Intersects, &mut rows).or_engine(ID)?;
        } else {
            rtree.nearest_k(f.knn[i], K, None, &mut rows).or_engine(ID)?;
        }
        p.mark(3);
        a.add(&rows);
        drop(rows);
        p.mark(4);
    }
    drop(txn);
    p.mark(5);
    Ok(())
}

/// Queries `0..count` of `kind`; `scratch` is made by the caller, outside any count.
struct Pass<'a> {
    probe: &'a mut Probe,
    scratch: &'a mut Vec<u8>,
    answer: &'a mut Answer,
}

fn pass(f: &Fixture, kind: Kind, mode: Mode, count: usize, p: Pass<'_>) -> Result<()> {
    (0..count).try_for_each(|i| query(f, kind, i, mode, p.probe, p.scratch, p.answer))
}

/// A pass with the probe off, answers discarded.
fn warm(f: &Fixture, kind: Kind, mode: Mode, count: usize) -> Result<()> {
    let (mut probe, mut scratch, mut answer) = (Probe::new(false), Vec::new(), Answer::default());
    pass(f, kind, mode, count, Pass { probe: &mut probe, scratch: &mut scratch, answer: &mut answer })
}

/// Runs T8 on QuireDB with recycling on and off.
pub fn run(cfg: &Config) -> Result<Outcome> {
    let n = cfg.count(20_000, 1_000_000, 5_000_000);
    let queries = cfg.sized(2_000, 50_000, 200_000);
    let dir = cfg.scratch("T8", ID)?;
    let fixture = build(&dir, n, queries, cfg.seed)?;
    let mut collector = Collector::default();
    let mut checks = Checks::new("T8");
    checks.expect(&format!("{} rows", Kind::Get.name()), queries as u64)?;
    checks.expect(&format!("{} rows", Kind::Knn.name()), (queries * K) as u64)?;
    for mode in MODES {
        collector.set_settings(mode.engine(), mode.settings());
    }
    for kind in KINDS {
        for mode in MODES {
            warm(&fixture, kind, mode, queries)?;
        }
        steps(&fixture, kind, queries.min(PROBE_QUERIES), &mut collector)?;
        for _ in 0..cfg.repeats {
            for mode in MODES {
                measure(&fixture, kind, mode, queries, &mut collector, &mut checks)?;
            }
        }
    }
    let items = cfg.sized(2_000, 20_000, 100_000);
    super::t8_xpath::build(&fixture.db, &dir, items)?;
    super::t8_xpath::run(cfg, &fixture.db, items, &mut collector, &mut checks)?;
    drop(fixture);
    remove_dir(&dir)?;
    Ok(Outcome {
        collector,
        checks,
        dataset: format!(
            "{n} meteo records in a B+tree (12 B keys, 20 B values) and {n} uniform 5-D points in an R*-tree, \
             one database; {queries} queries per kind after a warm-up pass; allocs = allocator calls \
             (allocations + reallocations) of the whole query path; XPath: a generated collection of {items} \
             items, a prepared query run again in one read transaction (detached: prepared per run)"
        ),
    })
}

/// One timed, counted pass of `kind` in `mode`.
fn measure(f: &Fixture, kind: Kind, mode: Mode, queries: usize, c: &mut Collector, checks: &mut Checks) -> Result<()> {
    let (mut probe, mut scratch, mut answer) = (Probe::new(false), Vec::with_capacity(256), Answer::default());
    let (calls, bytes) = (allocs::calls(), allocs::bytes());
    let (_, sample) = time(queries as u64, || {
        pass(f, kind, mode, queries, Pass { probe: &mut probe, scratch: &mut scratch, answer: &mut answer })
    })?;
    let (calls, bytes) = ((allocs::calls() - calls) as f64, (allocs::bytes() - bytes) as f64);
    let (id, name, n) = (mode.engine(), kind.name(), queries as u64);
    c.add(id, &format!("{name}: queries/s"), Unit::OpsPerSec, sample);
    c.add(id, &format!("{name}: allocs/query"), Unit::AllocsPerOp, Sample { wall_s: calls, cpu_s: calls, n });
    c.add(id, &format!("{name}: bytes allocated/query"), Unit::BytesPerOp, Sample { wall_s: bytes, cpu_s: bytes, n });
    checks.record(id, &format!("{name} rows"), answer.rows)?;
    checks.record(id, &format!("{name} id sum"), answer.ids)?;
    checks.record(id, &format!("{name} bytes hash"), answer.hash)
}

/// The probe pass of both modes: allocator calls per query in each step, recorded for
/// the steps that allocate in either mode, and printed.
fn steps(f: &Fixture, kind: Kind, count: usize, c: &mut Collector) -> Result<()> {
    let mut per_mode = Vec::new();
    for mode in MODES {
        let (mut probe, mut scratch, mut answer) = (Probe::new(true), Vec::with_capacity(256), Answer::default());
        pass(f, kind, mode, count, Pass { probe: &mut probe, scratch: &mut scratch, answer: &mut answer })?;
        per_mode.push((mode, probe.per_step));
    }
    for (s, step) in STEPS.iter().enumerate() {
        if per_mode.iter().all(|(_, per_step)| per_step[s] == 0) {
            continue;
        }
        for (mode, per_step) in &per_mode {
            let calls = per_step[s] as f64;
            let sample = Sample { wall_s: calls, cpu_s: calls, n: count as u64 };
            c.add(mode.engine(), &format!("{}: allocs/query in {step}", kind.name()), Unit::AllocsPerOp, sample);
            println!(
                "T8 {}, {}: {:.3} allocator calls/query in {step}",
                kind.name(),
                mode.engine(),
                calls / count as f64
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_agree_between_modes() {
        // Proves both modes return the same rows for every kind on a small fixture,
        // and that the pooled path takes its buffers back after the warm-up.
        let dir = tempfile::tempdir().unwrap();
        let f = build(dir.path(), 2_000, 50, 7).unwrap();
        for kind in KINDS {
            let (mut pooled, mut detached) = (Answer::default(), Answer::default());
            for (mode, answer) in [(Mode::Pooled, &mut pooled), (Mode::Detached, &mut detached)] {
                let (mut probe, mut scratch) = (Probe::new(false), Vec::new());
                pass(&f, kind, mode, 50, Pass { probe: &mut probe, scratch: &mut scratch, answer }).unwrap();
            }
            assert_eq!(
                (pooled.rows, pooled.ids, pooled.hash),
                (detached.rows, detached.ids, detached.hash),
                "{kind:?}"
            );
            assert!(pooled.rows > 0, "{kind:?} found nothing");
        }
        assert!(f.db.result_set().is_empty());
    }

    #[test]
    fn probe_buckets_sum_to_the_total() {
        // Proves the per-step counts add up to the calls of the whole pass.
        let dir = tempfile::tempdir().unwrap();
        let f = build(dir.path(), 1_000, 20, 3).unwrap();
        let (mut probe, mut scratch, mut answer) = (Probe::new(true), Vec::with_capacity(256), Answer::default());
        let before = allocs::calls();
        let p = Pass { probe: &mut probe, scratch: &mut scratch, answer: &mut answer };
        pass(&f, Kind::Window, Mode::Detached, 20, p).unwrap();
        let total = allocs::calls() - before;
        // Other test threads may allocate meanwhile: the steps never exceed the total.
        assert!(probe.per_step.iter().sum::<u64>() <= total);
        assert!(probe.per_step[3] > 0, "a detached result set grows its buffers during the query");
    }
}
