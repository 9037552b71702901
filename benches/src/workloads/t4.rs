//! T4 — QuickDB Table 5, R-tree on 5-D and 2-D points: insert one by one (one
//! transaction for all, committed at the end), bulk load, window queries at
//! selectivity 0.001 %, 0.01 %, 0.1 %, 1 % and kNN (k = 10) on the bulk-loaded index.
//! Points are uniform in the unit cube (f32-exact); windows are cubes of the volume
//! fraction. Answers are cross-checked between engines and, when small enough,
//! against a brute-force scan; the one-by-one index is checked with the 0.01 % set.

use super::{Config, Outcome, remove_dir};
use crate::check::{Checks, id_set_hash};
use crate::data::{Window, points, windows};
use crate::error::{BenchError, Result};
use crate::family::{SpatialEngine, WindowAnswer};
use crate::measure::time;
use crate::registry;
use crate::results::{Collector, Unit};

/// Selectivities as fractions, with their labels.
const SELECTIVITIES: [(f64, &str); 4] = [(1e-5, "0.001%"), (1e-4, "0.01%"), (1e-3, "0.1%"), (1e-2, "1%")];
const K: usize = 10;
/// Brute-force checking runs when points × queries stays under this.
const BRUTE_FORCE_LIMIT: usize = 200_000_000;

struct Data {
    dims: usize,
    ids: Vec<u64>,
    coords: Vec<f64>,
    windows: Vec<Vec<Window>>,
    knn: Vec<Vec<f64>>,
}

/// Runs T4 in 5-D and 2-D for every selected spatial engine.
pub fn run(cfg: &Config) -> Result<Outcome> {
    let n = cfg.count(5_000, 1_000_000, 57_852_305);
    let queries = cfg.sized(50, 500, 1000);
    let engines = cfg.select("T4", registry::spatial())?;
    let mut collector = Collector::default();
    let mut checks = Checks::new("T4");
    for dims in [5, 2] {
        let data = make_data(n, dims, queries, cfg.seed);
        if n * queries <= BRUTE_FORCE_LIMIT {
            brute_force(&data, &mut checks)?;
        }
        for _ in 0..cfg.repeats {
            for entry in &engines {
                collector.set_settings(entry.id, entry.settings);
                let dir = cfg.scratch("T4", entry.id)?;
                one_engine(entry.open, &dir, entry.id, &data, &mut collector, &mut checks)?;
                remove_dir(&dir)?;
            }
        }
    }
    Ok(Outcome {
        collector,
        checks,
        dataset: format!(
            "{n} uniform f32 points in 5-D and 2-D, {queries} windows per selectivity, {queries} kNN(k={K})"
        ),
    })
}

fn make_data(n: usize, dims: usize, queries: usize, seed: u64) -> Data {
    let windows = SELECTIVITIES.iter().map(|(s, _)| windows(queries, dims, *s, seed)).collect();
    let knn_points = points(queries, dims, seed ^ 0x4b4e4e);
    Data {
        dims,
        ids: (1..=n as u64).collect(),
        coords: points(n, dims, seed),
        windows,
        knn: knn_points.chunks(dims).map(<[f64]>::to_vec).collect(),
    }
}

fn one_engine(
    open: crate::family::SpatialOpen,
    dir: &std::path::Path,
    id: &str,
    d: &Data,
    c: &mut Collector,
    checks: &mut Checks,
) -> Result<()> {
    let dims = d.dims;
    let mut engine = open(dir, dims)?;
    let (_, s) = time(d.ids.len() as u64, || {
        for (&pid, p) in d.ids.iter().zip(d.coords.chunks_exact(dims)) {
            engine.insert(pid, p)?;
        }
        engine.commit()
    })?;
    c.add(id, &format!("{dims}-D insert one by one"), Unit::OpsPerSec, s);
    let after_insert = run_windows(engine.as_mut(), &d.windows[1])?;
    checks.record(id, &format!("{dims}-D after-insert windows 0.01% count"), after_insert.count)?;
    checks.record(id, &format!("{dims}-D after-insert windows 0.01% id sum"), after_insert.id_sum)?;
    drop(engine);
    remove_dir(dir)?;

    let mut engine = open(dir, dims)?;
    let (_, s) = time(d.ids.len() as u64, || engine.bulk_load(&d.ids, &d.coords))?;
    c.add(id, &format!("{dims}-D bulk load"), Unit::OpsPerSec, s);
    for ((_, label), set) in SELECTIVITIES.iter().zip(&d.windows) {
        let (answer, s) = time(set.len() as u64, || run_windows(engine.as_mut(), set))?;
        c.add(id, &format!("{dims}-D window {label}"), Unit::OpsPerSec, s);
        checks.record(id, &format!("{dims}-D windows {label} count"), answer.count)?;
        checks.record(id, &format!("{dims}-D windows {label} id sum"), answer.id_sum)?;
    }
    let mut out = Vec::with_capacity(K);
    let (hash, s) = time(d.knn.len() as u64, || {
        let mut hash = 0u64;
        for p in &d.knn {
            engine.knn(p, K, &mut out)?;
            hash = hash.wrapping_mul(31).wrapping_add(id_set_hash(&out) ^ out.len() as u64);
        }
        Ok::<_, BenchError>(hash)
    })?;
    c.add(id, &format!("{dims}-D kNN k={K}"), Unit::OpsPerSec, s);
    checks.record(id, &format!("{dims}-D kNN id sets"), hash)?;
    Ok(())
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
    let dims = d.dims;
    let inside = |p: &[f64], w: &Window| p.iter().zip(w.lo.iter().zip(&w.hi)).all(|(x, (l, h))| l <= x && x <= h);
    for ((_, label), set) in SELECTIVITIES.iter().zip(&d.windows) {
        let mut total = WindowAnswer::default();
        for w in set {
            for (&id, p) in d.ids.iter().zip(d.coords.chunks_exact(dims)) {
                if inside(p, w) {
                    total.add(id);
                }
            }
        }
        checks.expect(&format!("{dims}-D windows {label} count"), total.count)?;
        checks.expect(&format!("{dims}-D windows {label} id sum"), total.id_sum)?;
    }
    let mut hash = 0u64;
    let mut dist: Vec<(f64, u64)> = Vec::with_capacity(d.ids.len());
    for q in &d.knn {
        dist.clear();
        for (&id, p) in d.ids.iter().zip(d.coords.chunks_exact(dims)) {
            dist.push((p.iter().zip(q).map(|(a, b)| (a - b) * (a - b)).sum(), id));
        }
        let k = K.min(dist.len());
        dist.select_nth_unstable_by(k - 1, |a, b| a.0.total_cmp(&b.0));
        let ids: Vec<u64> = dist[..k].iter().map(|x| x.1).collect();
        hash = hash.wrapping_mul(31).wrapping_add(id_set_hash(&ids) ^ ids.len() as u64);
    }
    checks.expect(&format!("{dims}-D kNN id sets"), hash)
}
