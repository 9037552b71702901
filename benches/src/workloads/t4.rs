//! T4 — QuickDB Table 5, R-tree on 5-D and 2-D points: insert one by one (one
//! transaction for all, committed at the end), bulk load, window queries at
//! selectivity 0.001 %, 0.01 %, 0.1 %, 1 % and kNN (k = 10), timed on the tree built
//! one by one ("insert-built") and on the bulk-loaded tree. Each query set is timed
//! over repeated passes of at least a quarter of a second (every pass must answer as
//! the first), so sets of tiny queries are timed over enough of them. Every engine
//! builds its tree before any is queried; then each query set runs on every engine in
//! turn, in five rounds, and each engine's figure is its median round: the engines'
//! timings of one set lie fractions of a second apart, not minutes (the memory speed
//! of this machine kind drifts by 2–3× over minutes). One tree per engine is alive at
//! a time. Engines that
//! count their page traffic (QuireDB) then run every set once more, each after
//! reopening the index with a cold buffer pool of 25 % of its file: pages requested
//! and pages read from the file per query of the set's second half, the first half
//! warming the pool (issue 6).
//!
//! Data sets: uniform points in the unit cube (f32-exact; windows are cubes of the
//! volume fraction) in 5-D and 2-D, and the real Beijing observations
//! (`beijing-5-D`: TEMP, PRES, DEWP, RAIN, WSPM from `../shared/data/weather`, rows with
//! a missing measure skipped and counted, coordinates rounded to f32 so SQLite's
//! float32 R*Tree sees the same points; windows of the same volume fraction of the
//! data's extent, centred on data points; skipped with a message when the file is
//! absent). Answers are cross-checked between engines and, when small enough, against
//! a brute-force scan. The real data holds duplicate points, so its kNN answers are
//! checked by the multiset of the k distances (engines break ties differently).

use super::{Config, Outcome, Size, remove_dir};
use crate::check::{Checks, id_set_hash};
use crate::data::{Window, beijing_points, points, windows, windows_around};
use crate::error::{BenchError, Result};
use crate::family::{Entry, PageTraffic, SpatialEngine, SpatialOpen, WindowAnswer};
use crate::measure::{Sample, time, time_passes};
use crate::registry;
use crate::results::Unit::PagesPerOp;
use crate::results::{Collector, Unit};
use std::path::{Path, PathBuf};

/// Selectivities as fractions, with their labels.
const SELECTIVITIES: [(f64, &str); 4] = [(1e-5, "0.001%"), (1e-4, "0.01%"), (1e-3, "0.1%"), (1e-2, "1%")];
const K: usize = 10;
/// A query set is timed over repeated passes of at least this long (a pass of 500 small
/// windows takes about a millisecond: too little for the clock and CPU accounting).
const MIN_TIMED_S: f64 = 0.25;
/// The same in smoke runs, which only check that everything works.
const MIN_TIMED_SMOKE_S: f64 = 0.0;
/// Rounds of a query set's interleaved timing (each round times a fifth of the
/// minimum time per engine); an engine's figure is its median round. Smoke runs: one.
const ROUNDS: usize = 5;
/// The buffer pool's share of the index file when page traffic is counted.
const POOL_FRACTION: f64 = 0.25;
/// Brute-force checking runs when points × queries stays under this (or for real data).
const BRUTE_FORCE_LIMIT: usize = 200_000_000;
/// The Beijing observations, relative to the repository root.
const BEIJING: &str = "../shared/data/weather/beijing_multisite_all_stations.csv.zst";

struct Data {
    label: String,
    dims: usize,
    ids: Vec<u64>,
    coords: Vec<f64>,
    windows: Vec<Vec<Window>>,
    knn: Vec<Vec<f64>>,
    /// kNN checked by distances (real data: duplicate points make id sets ambiguous).
    real: bool,
    /// Each query set is timed over passes of at least this many seconds.
    min_timed_s: f64,
}

/// Runs T4 on every data set for every selected spatial engine.
pub fn run(cfg: &Config) -> Result<Outcome> {
    let n = cfg.count(5_000, 1_000_000, 57_852_305);
    let queries = cfg.sized(50, 500, 1000);
    let engines = cfg.select("T4", registry::spatial())?;
    let mut collector = Collector::default();
    let mut checks = Checks::new("T4");
    let mut real_note = String::from("; Beijing data absent");
    for set in 0..3 {
        let mut data = match set {
            0 | 1 => uniform(n, [5, 2][set], queries, cfg.seed),
            _ => match beijing(n, queries, cfg.seed)? {
                Some((data, skipped)) => {
                    real_note = format!(
                        "; beijing-5-D: {} real points (TEMP, PRES, DEWP, RAIN, WSPM; {skipped} rows with a missing measure skipped)",
                        data.ids.len()
                    );
                    data
                }
                None => continue,
            },
        };
        data.min_timed_s = if cfg.size == Size::Smoke { MIN_TIMED_SMOKE_S } else { MIN_TIMED_S };
        if data.ids.len() * queries <= BRUTE_FORCE_LIMIT || data.real {
            brute_force(&data, &mut checks)?;
        }
        for _ in 0..cfg.repeats {
            one_repeat(cfg, &engines, &data, &mut collector, &mut checks)?;
        }
    }
    Ok(Outcome {
        collector,
        checks,
        dataset: format!(
            "{n} uniform f32 points in 5-D and 2-D{real_note}; {queries} windows per selectivity, {queries} kNN(k={K}), each set timed over repeated passes of ≥ {MIN_TIMED_S} s"
        ),
    })
}

impl Data {
    /// Rounds of each query set's interleaved timing: one in smoke runs, which only
    /// check that everything works.
    fn rounds(&self) -> usize {
        if self.min_timed_s > 0.0 { ROUNDS } else { 1 }
    }
}

fn uniform(n: usize, dims: usize, queries: usize, seed: u64) -> Data {
    let windows = SELECTIVITIES.iter().map(|(s, _)| windows(queries, dims, *s, seed)).collect();
    let knn_points = points(queries, dims, seed ^ 0x4b4e4e);
    Data {
        label: format!("{dims}-D"),
        dims,
        ids: (1..=n as u64).collect(),
        coords: points(n, dims, seed),
        windows,
        knn: knn_points.chunks(dims).map(<[f64]>::to_vec).collect(),
        real: false,
        min_timed_s: MIN_TIMED_S,
    }
}

/// The Beijing set (at most `n` points) and the rows skipped, or `None` when absent.
fn beijing(n: usize, queries: usize, seed: u64) -> Result<Option<(Data, usize)>> {
    let path = Path::new(BEIJING);
    if !path.exists() {
        eprintln!("T4: {BEIJING} not found (run from the repository root); the beijing-5-D set is skipped");
        return Ok(None);
    }
    let real = beijing_points(path, n)?;
    let dims = 5;
    let count = real.coords.len() / dims;
    let windows = SELECTIVITIES.iter().map(|(s, _)| windows_around(&real.coords, dims, queries, *s, seed)).collect();
    // kNN query points: data points (duplicates included), chosen by the seed.
    let knn = windows_around(&real.coords, dims, queries, 0.0, seed ^ 0x4b4e4e).into_iter().map(|w| w.lo).collect();
    let data = Data {
        label: "beijing-5-D".into(),
        dims,
        ids: (1..=count as u64).collect(),
        coords: real.coords,
        windows,
        knn,
        real: true,
        min_timed_s: MIN_TIMED_S,
    };
    Ok(Some((data, real.skipped)))
}

/// An engine holding a tree of the data set, and where it keeps it.
struct Built {
    id: &'static str,
    dir: PathBuf,
    engine: Box<dyn SpatialEngine>,
}

/// One repeat on one data set: every engine builds its tree one by one (timed), then
/// the engines' query sets are timed interleaved, and the same again with trees
/// built by bulk load. Interleaving puts each engine's timing of a query set within
/// seconds of the others': the speed of this kind of machine's memory drifts by 2–3×
/// over minutes, which made ratios between engines timed minutes apart meaningless.
/// Only one tree per engine is alive at a time.
fn one_repeat(
    cfg: &Config,
    engines: &[Entry<SpatialOpen>],
    d: &Data,
    c: &mut Collector,
    checks: &mut Checks,
) -> Result<()> {
    let label = &d.label;
    for bulk in [false, true] {
        let mut built = Vec::with_capacity(engines.len());
        for entry in engines {
            c.set_settings(entry.id, entry.settings);
            let dir = cfg.scratch("T4", entry.id)?;
            let mut engine = (entry.open)(&dir, d.dims)?;
            let s = if bulk { bulk_load(engine.as_mut(), d)? } else { insert_one_by_one(engine.as_mut(), d)? };
            let op = if bulk { "bulk load" } else { "insert one by one" };
            c.add(entry.id, &format!("{label} {op}"), Unit::OpsPerSec, s);
            built.push(Built { id: entry.id, dir, engine });
        }
        let prefix = if bulk { label.clone() } else { format!("{label} insert-built") };
        interleaved_queries(&mut built, d, &prefix, c, checks)?;
        let mut out = Vec::with_capacity(K);
        for mut b in built {
            page_traffic(b.engine.as_mut(), b.id, d, &prefix, c, &mut out)?;
            drop(b.engine);
            remove_dir(&b.dir)?;
        }
    }
    Ok(())
}

fn insert_one_by_one(engine: &mut dyn SpatialEngine, d: &Data) -> Result<Sample> {
    let (_, s) = time(d.ids.len() as u64, || {
        for (&pid, p) in d.ids.iter().zip(d.coords.chunks_exact(d.dims)) {
            engine.insert(pid, p)?;
        }
        engine.commit()
    })?;
    Ok(s)
}

fn bulk_load(engine: &mut dyn SpatialEngine, d: &Data) -> Result<Sample> {
    Ok(time(d.ids.len() as u64, || engine.bulk_load(&d.ids, &d.coords))?.1)
}

/// Times every query set (the windows at each selectivity, then kNN) on every built
/// engine, interleaved in [`ROUNDS`] rounds (see [`time_rounds`]); records the answers.
fn interleaved_queries(
    built: &mut [Built],
    d: &Data,
    prefix: &str,
    c: &mut Collector,
    checks: &mut Checks,
) -> Result<()> {
    let rounds = d.rounds();
    let (label, min_s) = (&d.label, d.min_timed_s / rounds as f64);
    for (set_no, ((_, sel), set)) in SELECTIVITIES.iter().zip(&d.windows).enumerate() {
        let what = format!("{label} windows {sel}");
        time_rounds(built, (set_no, rounds), &format!("{prefix} window {sel}"), c, |b| {
            let (answer, s) = passes(b.id, &what, set.len(), min_s, || run_windows(b.engine.as_mut(), set))?;
            checks.record(b.id, &format!("{what} count"), answer.count)?;
            checks.record(b.id, &format!("{what} id sum"), answer.id_sum)?;
            Ok(s)
        })?;
    }
    let what = format!("{label} kNN {}", if d.real { "distances" } else { "id sets" });
    let mut out = Vec::with_capacity(K);
    time_rounds(built, (SELECTIVITIES.len(), rounds), &format!("{prefix} kNN k={K}"), c, |b| {
        let (hash, s) = passes(b.id, &what, d.knn.len(), min_s, || {
            let mut hash = 0u64;
            for p in &d.knn {
                b.engine.knn(p, K, &mut out)?;
                hash = hash.wrapping_mul(31).wrapping_add(knn_hash(d, p, &out));
            }
            Ok(hash)
        })?;
        checks.record(b.id, &what, hash)?;
        Ok(s)
    })
}

/// Times one query set on every engine in `rounds` rounds, each round every engine in
/// turn (starting one engine later each round, and at `first` in the first), and
/// records each engine's median round. The rounds put an engine's timings within
/// fractions of a second of the others', so that neither the drift of this machine
/// kind's memory speed over minutes nor a burst of noise lasting a second or two
/// decides a ratio.
fn time_rounds(
    built: &mut [Built],
    (first, rounds): (usize, usize),
    op: &str,
    c: &mut Collector,
    mut time_one: impl FnMut(&mut Built) -> Result<Sample>,
) -> Result<()> {
    let engines = built.len();
    let mut samples: Vec<Vec<Sample>> = vec![Vec::with_capacity(rounds); engines];
    for round in 0..rounds {
        for turn in 0..engines {
            let i = (first + round + turn) % engines;
            samples[i].push(time_one(&mut built[i])?);
        }
    }
    let rate = |s: &Sample| s.n as f64 / s.wall_s.max(1e-12);
    for (b, mut rounds) in built.iter().zip(samples) {
        rounds.sort_by(|x, y| rate(x).total_cmp(&rate(y)));
        c.add(b.id, op, Unit::OpsPerSec, rounds[rounds.len() / 2]);
    }
    Ok(())
}

/// Runs every query set once after reopening the index with a cold pool of
/// [`POOL_FRACTION`] of its file, recording pages requested and read per query of the
/// set's second half (the first half warms the pool: the inner nodes and the engine's
/// page map come in then, as in a long-running reader).
fn page_traffic(
    engine: &mut dyn SpatialEngine,
    id: &str,
    d: &Data,
    prefix: &str,
    c: &mut Collector,
    out: &mut Vec<u64>,
) -> Result<()> {
    let pool = format!("pool {:.0} % of the file", POOL_FRACTION * 100.0);
    for ((_, sel), set) in SELECTIVITIES.iter().zip(&d.windows) {
        if !engine.reopen_with_cache_fraction(POOL_FRACTION)? {
            return Ok(());
        }
        let (warm_up, measured) = set.split_at(set.len() / 2);
        run_windows(engine, warm_up)?;
        let before = engine.page_traffic();
        run_windows(engine, measured)?;
        add_traffic(c, id, &format!("{prefix} window {sel}"), &pool, before, engine.page_traffic(), measured.len());
    }
    engine.reopen_with_cache_fraction(POOL_FRACTION)?;
    let (warm_up, measured) = d.knn.split_at(d.knn.len() / 2);
    warm_up.iter().try_for_each(|p| engine.knn(p, K, out))?;
    let before = engine.page_traffic();
    measured.iter().try_for_each(|p| engine.knn(p, K, out))?;
    add_traffic(c, id, &format!("{prefix} kNN k={K}"), &pool, before, engine.page_traffic(), measured.len());
    Ok(())
}

fn add_traffic(c: &mut Collector, id: &str, op: &str, pool: &str, before: PageTraffic, after: PageTraffic, n: usize) {
    let mut add = |what: String, count: u64| {
        let count = count as f64;
        c.add(id, &what, PagesPerOp, Sample { wall_s: count, cpu_s: count, n: n as u64 });
    };
    add(format!("{op}: pages requested"), after.requested - before.requested);
    add(format!("{op}: pages read, {pool}"), after.read - before.read);
}

/// Times passes over a query set of `len` queries (at least `min_s` seconds in all),
/// failing the run if a pass answers differently from the first.
fn passes<T: PartialEq + std::fmt::Debug>(
    id: &str,
    what: &str,
    len: usize,
    min_s: f64,
    pass: impl FnMut() -> Result<T>,
) -> Result<(T, Sample)> {
    let same = |first: &T, again: &T, n: u64| {
        if first == again {
            return Ok(());
        }
        let detail = format!("{id} answered pass {n} with {again:?}, pass 1 with {first:?}");
        Err(BenchError::CrossCheck { workload: "T4".into(), check: what.to_string(), detail })
    };
    time_passes(len as u64, min_s, pass, same)
}

/// Squared distance from `q` to point `id`.
fn dist2(d: &Data, q: &[f64], id: u64) -> f64 {
    let p = &d.coords[(id as usize - 1) * d.dims..][..d.dims];
    p.iter().zip(q).map(|(a, b)| (a - b) * (a - b)).sum()
}

/// The id set of a kNN answer or, for real data, the multiset of its distances.
fn knn_hash(d: &Data, q: &[f64], ids: &[u64]) -> u64 {
    if !d.real {
        return id_set_hash(ids) ^ ids.len() as u64;
    }
    let valid = ids.iter().all(|&id| id >= 1 && id as usize <= d.ids.len());
    if !valid {
        return u64::MAX;
    }
    let mut dist: Vec<u64> = ids.iter().map(|&id| dist2(d, q, id).to_bits()).collect();
    dist.sort_unstable();
    id_set_hash(&dist) ^ ids.len() as u64
}

fn run_windows(engine: &mut dyn SpatialEngine, set: &[Window]) -> Result<WindowAnswer> {
    let mut total = WindowAnswer::default();
    for w in set {
        let a = engine.window(&w.lo, &w.hi)?;
        total.count += a.count;
        total.id_sum = total.id_sum.wrapping_add(a.id_sum);
    }
    Ok(total)
}

/// The expected answers by scanning every point (the reference model).
fn brute_force(d: &Data, checks: &mut Checks) -> Result<()> {
    let (dims, label) = (d.dims, &d.label);
    let inside = |p: &[f64], w: &Window| p.iter().zip(w.lo.iter().zip(&w.hi)).all(|(x, (l, h))| l <= x && x <= h);
    for ((_, sel), set) in SELECTIVITIES.iter().zip(&d.windows) {
        let mut total = WindowAnswer::default();
        for w in set {
            for (&id, p) in d.ids.iter().zip(d.coords.chunks_exact(dims)) {
                if inside(p, w) {
                    total.add(id);
                }
            }
        }
        checks.expect(&format!("{label} windows {sel} count"), total.count)?;
        checks.expect(&format!("{label} windows {sel} id sum"), total.id_sum)?;
    }
    let mut hash = 0u64;
    let mut dist: Vec<(f64, u64)> = Vec::with_capacity(d.ids.len());
    for q in &d.knn {
        dist.clear();
        dist.extend(d.ids.iter().map(|&id| (dist2(d, q, id), id)));
        let k = K.min(dist.len());
        if k > 0 {
            dist.select_nth_unstable_by(k - 1, |a, b| a.0.total_cmp(&b.0));
        }
        let ids: Vec<u64> = dist[..k].iter().map(|x| x.1).collect();
        hash = hash.wrapping_mul(31).wrapping_add(knn_hash(d, q, &ids));
    }
    checks.expect(&format!("{label} kNN {}", if d.real { "distances" } else { "id sets" }), hash)
}
