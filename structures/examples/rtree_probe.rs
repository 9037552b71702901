//! Probe of the R*-tree for profiling (callgrind) the T4 paths: inserts `n` points
//! one by one into a point tree in one write transaction (as the T4 adapter does),
//! or bulk loads them, then runs `queries` windows of a volume fraction and as
//! many kNN queries (k = 10, `visit_nearest_k`) at the windows' corners (read snapshot per query). The
//! phases are separate non-inlined functions, so `callgrind_annotate --inclusive=yes
//! --threshold=100` shows `insert_all`, `bulk_all`, `commit_all`, `windows_all` and
//! `knn_all` apart (it also prints the build's and the commit's wall times).
//!
//! `cargo run --release -p quiredb-structures --example rtree_probe -- <uniform2|uniform5|FILE> [n] [insert|bulk] [queries] [selectivity]`
//! (`QUIRE_REPEAT=N` runs the queries N times over)
//!
//! A FILE holds little-endian 5-D f64 points (e.g. the Beijing measures TEMP, PRES,
//! DEWP, RAIN, WSPM rounded to f32, in file order); uniform points are f32 values in
//! the unit cube. Windows are cubes of the selectivity's volume fraction of the
//! data's extent, centred on data points for a FILE.

use quiredb_engine::{Database, Durability};
use quiredb_structures::rtree::{RTree, Rect, WindowMode};
use rand::{Rng, SeedableRng};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let data = args.get(1).cloned().unwrap_or_else(|| "uniform5".into());
    let n: usize = args.get(2).map_or(Ok(200_000), |s| s.parse())?;
    let bulk = args.get(3).is_some_and(|s| s == "bulk");
    let queries: usize = args.get(4).map_or(Ok(0), |s| s.parse())?;
    let selectivity: f64 = args.get(5).map_or(Ok(1e-5), |s| s.parse())?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    let (dims, coords) = match data.as_str() {
        "uniform2" => (2, (0..n * 2).map(|_| f64::from(rng.random::<f32>())).collect()),
        "uniform5" => (5, (0..n * 5).map(|_| f64::from(rng.random::<f32>())).collect()),
        path => (5, read_points(path, n)?),
    };
    let real = !data.starts_with("uniform");
    match dims {
        2 => run::<2>(&coords, bulk, queries, selectivity, real, &mut rng),
        _ => run::<5>(&coords, bulk, queries, selectivity, real, &mut rng),
    }
}

fn read_points(path: &str, n: usize) -> Result<Vec<f64>, Box<dyn std::error::Error>> {
    let bytes = std::fs::read(path)?;
    let coords: Vec<f64> = bytes.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))).collect();
    Ok(coords[..(n * 5).min(coords.len())].to_vec())
}

fn run<const D: usize>(
    coords: &[f64],
    bulk: bool,
    queries: usize,
    selectivity: f64,
    real: bool,
    rng: &mut rand::rngs::StdRng,
) -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let options = Database::builder().page_size(8192).cache_bytes(256 << 20).into_options();
    let db = Database::create(dir.path().join("probe.quire"), options)?;
    let txn = db.begin_write()?;
    let mut tree = RTree::<_, D>::create_points(&txn, "points")?;
    let ids: Vec<u64> = (0..(coords.len() / D) as u64).collect();
    let start = Instant::now();
    if bulk {
        bulk_all(&mut tree, &ids, coords)?;
    } else {
        insert_all(&mut tree, coords)?;
    }
    drop(tree);
    let built = start.elapsed().as_secs_f64();
    commit_all(txn)?;
    println!("build {built:.3} s, commit {:.3} s", start.elapsed().as_secs_f64() - built);
    let n = coords.len() / D;
    let secs = start.elapsed().as_secs_f64();
    let read = db.begin_read()?;
    let tree = RTree::<_, D>::open(&read, "points")?;
    println!(
        "{n} points {}: {:.0}/s, height {}, {} nodes, {} problems",
        if bulk { "bulk" } else { "inserted" },
        n as f64 / secs,
        tree.height()?,
        tree.node_pages()?,
        tree.check()?.len()
    );
    drop(tree);
    drop(read);
    if queries > 0 {
        // `QUIRE_REPEAT=N`: the same `queries` windows N times over, as T4 times a set of
        // 500 (the caches then hold what the queries touch: each query's fixed costs show).
        let repeat: usize = std::env::var("QUIRE_REPEAT").map_or(Ok(1), |v| v.parse())?;
        let windows = make_windows::<D>(coords, queries, selectivity, real, rng);
        let windows: Vec<Rect<D>> = windows.iter().cycle().take(queries * repeat).copied().collect();
        let queries = windows.len();
        let start = Instant::now();
        let found = windows_all(&db, &windows)?;
        let secs = start.elapsed().as_secs_f64();
        println!("{queries} windows of {selectivity}: {:.0}/s, {found} found", queries as f64 / secs);
        let points: Vec<[f64; D]> = windows.iter().map(|w| std::array::from_fn(|d| w.min[d])).collect();
        let start = Instant::now();
        let found = knn_all(&db, &points)?;
        let secs = start.elapsed().as_secs_f64();
        println!("{queries} kNN (k = 10): {:.0}/s, {found} found", queries as f64 / secs);
    }
    Ok(())
}

#[inline(never)]
fn bulk_all<const D: usize>(
    tree: &mut RTree<'_, quiredb_engine::WriteTxn<'_>, D>,
    ids: &[u64],
    coords: &[f64],
) -> Result<(), Box<dyn std::error::Error>> {
    tree.bulk_load_points(ids, coords)?;
    Ok(())
}

#[inline(never)]
fn commit_all(txn: quiredb_engine::WriteTxn<'_>) -> Result<(), Box<dyn std::error::Error>> {
    txn.commit(Durability::Full)?;
    Ok(())
}

#[inline(never)]
fn insert_all<const D: usize>(
    tree: &mut RTree<'_, quiredb_engine::WriteTxn<'_>, D>,
    coords: &[f64],
) -> Result<(), Box<dyn std::error::Error>> {
    for (id, p) in coords.chunks_exact(D).enumerate() {
        tree.insert_point(p.try_into()?, id as u64)?;
    }
    Ok(())
}

#[inline(never)]
fn windows_all<const D: usize>(db: &Database, windows: &[Rect<D>]) -> Result<usize, Box<dyn std::error::Error>> {
    let mut found = 0;
    for w in windows {
        let read = db.begin_read()?;
        let tree = RTree::<_, D>::open(&read, "points")?;
        tree.visit_window(w, WindowMode::Intersects, |_, _| found += 1)?;
    }
    Ok(found)
}

#[inline(never)]
fn knn_all<const D: usize>(db: &Database, points: &[[f64; D]]) -> Result<usize, Box<dyn std::error::Error>> {
    let mut found = 0;
    for p in points {
        let read = db.begin_read()?;
        let tree = RTree::<_, D>::open(&read, "points")?;
        tree.visit_nearest_k(*p, 10, None, |_, _| found += 1)?;
    }
    Ok(found)
}

fn make_windows<const D: usize>(
    coords: &[f64],
    count: usize,
    selectivity: f64,
    real: bool,
    rng: &mut rand::rngs::StdRng,
) -> Vec<Rect<D>> {
    let (mut lo, mut hi) = ([f64::INFINITY; D], [f64::NEG_INFINITY; D]);
    for p in coords.chunks_exact(D) {
        for d in 0..D {
            lo[d] = lo[d].min(p[d]);
            hi[d] = hi[d].max(p[d]);
        }
    }
    let frac = selectivity.powf(1.0 / D as f64);
    let n = coords.len() / D;
    (0..count)
        .map(|_| {
            let half: [f64; D] = std::array::from_fn(|d| (hi[d] - lo[d]) * frac / 2.0);
            let centre: [f64; D] = if real {
                let at = rng.random_range(0..n) * D;
                std::array::from_fn(|d| coords[at + d])
            } else {
                std::array::from_fn(|d| lo[d] + half[d] + rng.random::<f64>() * (hi[d] - lo[d] - 2.0 * half[d]))
            };
            Rect::new(std::array::from_fn(|d| centre[d] - half[d]), std::array::from_fn(|d| centre[d] + half[d]))
        })
        .collect()
}
