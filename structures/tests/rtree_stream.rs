//! The streaming bulk load of the R*-tree (`RTree::bulk_builder`) against a brute-force
//! model: small memory budgets force many sorted runs through the external merge; every
//! tree passes the invariant checker and answers windows and kNN like the model, also
//! after reopen. Bad boxes are refused at push and leave the tree untouched. The same
//! holds for a `BulkSorter` fed on another thread, with key bounds given up front
//! (runs sorted while pushing), also when the bounds are too small and clamp.
//! `QUIRE_SEED` replays a run, `RTREE_SCALE` scales the sizes.

use quiredb_engine::storage::MemStorage;
use quiredb_engine::{Database, Durability, PageRead};
use quiredb_structures::Error;
use quiredb_structures::rtree::{Coord, RTree, RTreeOptions, Rect, WindowMode};
use quiredb_test_support::Rng;
use std::sync::Arc;

/// What these tests draw beyond [`Rng`]'s own helpers.
trait RngExt {
    fn coord(&mut self) -> f64;
}

impl RngExt for Rng {
    fn coord(&mut self) -> f64 {
        (self.next() % 1025) as f64 / 1024.0
    }
}

fn seed() -> u64 {
    quiredb_test_support::seed(0x5eed_5173)
}

fn scale() -> usize {
    std::env::var("RTREE_SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(1)
}

fn db() -> Database {
    let options = Database::builder().page_size(4096).cache_bytes(2 << 20).into_options();
    Database::with_storage(Arc::new(MemStorage::new()), options, "stream").expect("database")
}

type Model<const D: usize> = Vec<(Rect<D>, u64)>;

/// Random entries: one box in four (none with `points`), the rest points.
fn random_entries<const D: usize>(rng: &mut Rng, n: usize, points: bool) -> Model<D> {
    (0..n as u64)
        .map(|id| {
            let min: [f64; D] = std::array::from_fn(|_| rng.coord());
            let boxed = rng.next().is_multiple_of(4) && !points;
            let max = std::array::from_fn(|d| if boxed { min[d] + (rng.next() % 8) as f64 / 1024.0 } else { min[d] });
            // Duplicates: every 7th entry repeats the box of an earlier one.
            (if id % 7 == 6 { Rect::new(min, min) } else { Rect::new(min, max) }, id)
        })
        .collect()
}

/// The model as the tree stores it (f32 box trees round outward, f32 point trees to
/// the nearest).
fn stored<const D: usize, C: Coord>(model: &Model<D>, points: bool) -> Model<D> {
    let near = |r: &Rect<D>| {
        Rect::point(std::array::from_fn(|d| if C::BYTES == 8 { r.min[d] } else { f64::from(r.min[d] as f32) }))
    };
    model.iter().map(|(r, id)| (if points { near(r) } else { round::<D, C>(r) }, *id)).collect()
}

/// A new tree named `t`, a point tree with `points`.
fn create<'t, 'db, const D: usize, C: Coord>(
    txn: &'t quiredb_engine::WriteTxn<'db>,
    points: bool,
) -> RTree<'t, quiredb_engine::WriteTxn<'db>, D, C> {
    RTree::<_, D, C>::create_with(txn, "t", RTreeOptions { max_entries: None, points }).expect("create")
}

fn round<const D: usize, C: Coord>(r: &Rect<D>) -> Rect<D> {
    if C::BYTES == 8 {
        return *r;
    }
    let down = |v: f64| {
        let n = v as f32;
        f64::from(if f64::from(n) > v { n.next_down() } else { n })
    };
    let up = |v: f64| {
        let n = v as f32;
        f64::from(if f64::from(n) < v { n.next_up() } else { n })
    };
    Rect::new(std::array::from_fn(|d| down(r.min[d])), std::array::from_fn(|d| up(r.max[d])))
}

fn sorted(mut ids: Vec<u64>) -> Vec<u64> {
    ids.sort_unstable();
    ids
}

fn compare<T: PageRead, const D: usize, C: Coord>(tree: &RTree<'_, T, D, C>, txn: &T, model: &Model<D>, rng: &mut Rng) {
    assert_eq!(tree.len().expect("len"), model.len() as u64);
    let problems = tree.check().expect("check runs");
    assert!(problems.is_empty(), "invariants: {problems:?}");
    let mut out = txn.result_set();
    for q in 0..40 {
        let min: [f64; D] = std::array::from_fn(|_| rng.coord());
        let window = Rect::new(min, std::array::from_fn(|d| min[d] + (rng.next() % 300) as f64 / 1024.0));
        out.clear();
        tree.window_into(&window, WindowMode::Intersects, &mut out).expect("window");
        let expected = sorted(model.iter().filter(|(r, _)| window.intersects(r)).map(|(_, id)| *id).collect());
        assert_eq!(sorted(out.ids().to_vec()), expected, "window #{q} {window:?}");
        let k = 1 + (rng.next() % 20) as usize;
        out.clear();
        tree.nearest_k(min, k, None, &mut out).expect("knn");
        let mut all: Vec<(f64, u64)> = model.iter().map(|(r, id)| (r.min_dist2(&min), *id)).collect();
        all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let expected: Vec<u64> = all.iter().take(k).map(|(_, id)| *id).collect();
        assert_eq!(out.ids().to_vec(), expected, "knn #{q} k={k} at {min:?}");
    }
}

/// Builds with `budget` bytes, checks, commits, reopens and checks again, on a box
/// tree and on a point tree.
fn stream_run<const D: usize, C: Coord>(seed: u64, n: usize, budget: usize, expect_runs: bool) {
    stream_layout::<D, C>(seed, n, budget, expect_runs, false);
    stream_layout::<D, C>(seed, n, budget, expect_runs, true);
}

fn stream_layout<const D: usize, C: Coord>(seed: u64, n: usize, budget: usize, expect_runs: bool, points: bool) {
    // Point leaves hold more entries: a budget holding two of them is larger.
    let budget = if points { 2 * budget } else { budget };
    let mut rng = Rng::new(seed ^ ((D as u64) << 32) ^ C::BYTES as u64 ^ budget as u64);
    let model = random_entries::<D>(&mut rng, n, points);
    let dir = tempfile::tempdir().expect("tmp dir");
    let db = db();
    let txn = db.begin_write().expect("txn");
    let mut tree = create::<D, C>(&txn, points);
    // Old contents are replaced by the build.
    tree.insert_point([0.5; D], u64::MAX).expect("insert");
    let mut builder = tree.bulk_builder(dir.path(), budget).expect("builder");
    for (r, id) in &model {
        builder.push(r, *id).expect("push");
    }
    let stats = builder.finish().expect("finish");
    assert_eq!(stats.entries, n as u64);
    assert_eq!(stats.runs > 1, expect_runs, "runs {stats:?} for {n} entries in {budget} bytes");
    let model = stored::<D, C>(&model, points);
    compare(&tree, &txn, &model, &mut rng);
    drop(tree);
    txn.commit(Durability::Full).expect("commit");
    let read = db.begin_read().expect("read");
    let tree = RTree::<_, D, C>::open(&read, "t").expect("open");
    compare(&tree, &read, &model, &mut rng);
    assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 0, "temporary files left behind");
}

#[test]
fn streaming_builds_match_brute_force_with_many_runs_and_in_memory() {
    let (seed, n) = (seed(), 4000 * scale());
    stream_run::<2, f64>(seed, n, 20_000, true);
    stream_run::<2, f64>(seed, n, 64 << 20, false);
    stream_run::<5, f64>(seed, n, 40_000, true);
    stream_run::<5, f32>(seed, n, 30_000, true);
    stream_run::<1, f64>(seed, n, 20_000, true);
    stream_run::<8, f32>(seed, n / 2, 64 << 20, false);
    for n in [0, 1, 2, 50, 101, 199, 200, 201] {
        stream_run::<3, f64>(seed, n, 64 << 20, false);
    }
}

/// How a sorter build gets its key bounds.
#[derive(Clone, Copy, Debug)]
enum Bounds {
    /// None: bounds of the centres, runs cut at the finish.
    Tracked,
    /// The unit cube the entries lie in.
    Exact,
    /// A small box inside the data: most centres clamp.
    Clamped,
}

/// Like `stream_run` through `bulk_sorter` pushed on a second thread.
fn sorter_run<const D: usize, C: Coord>(seed: u64, n: usize, budget: usize, bounds: Bounds, expect_runs: bool) {
    sorter_layout::<D, C>(seed, n, budget, bounds, expect_runs, false);
    sorter_layout::<D, C>(seed, n, budget, bounds, expect_runs, true);
}

fn sorter_layout<const D: usize, C: Coord>(
    seed: u64,
    n: usize,
    budget: usize,
    bounds: Bounds,
    expect_runs: bool,
    points: bool,
) {
    let mut rng = Rng::new(seed ^ ((D as u64) << 40) ^ budget as u64 ^ bounds as u64);
    let model = random_entries::<D>(&mut rng, n, points);
    let dir = tempfile::tempdir().expect("tmp dir");
    let db = db();
    let txn = db.begin_write().expect("txn");
    let mut tree = create::<D, C>(&txn, points);
    tree.insert_point([0.5; D], u64::MAX).expect("insert");
    let mut sorter = tree.bulk_sorter(dir.path(), budget).expect("sorter");
    sorter = match bounds {
        Bounds::Tracked => sorter,
        Bounds::Exact => sorter.with_key_bounds(&Rect::new([0.0; D], [1.0; D])).expect("bounds"),
        Bounds::Clamped => sorter.with_key_bounds(&Rect::new([0.4; D], [0.45; D])).expect("bounds"),
    };
    let sorter = std::thread::scope(|s| {
        s.spawn(|| {
            for (r, id) in &model {
                sorter.push(r, *id).expect("push");
            }
            assert!(sorter.push_point([f64::NAN; D], 0).is_err());
            sorter
        })
        .join()
        .expect("pusher")
    });
    assert_eq!(sorter.len(), n as u64);
    let stats = sorter.finish_into(&tree).expect("finish");
    assert_eq!(stats.entries, n as u64);
    assert_eq!(stats.runs > 1, expect_runs, "runs {stats:?} for {n} entries in {budget} bytes ({bounds:?})");
    let model = stored::<D, C>(&model, points);
    compare(&tree, &txn, &model, &mut rng);
    drop(tree);
    txn.commit(Durability::Full).expect("commit");
    let read = db.begin_read().expect("read");
    compare(&RTree::<_, D, C>::open(&read, "t").expect("open"), &read, &model, &mut rng);
    assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 0, "temporary files left behind");
}

#[test]
fn sorters_with_key_bounds_match_brute_force() {
    let (seed, n) = (seed(), 3000 * scale());
    for bounds in [Bounds::Tracked, Bounds::Exact, Bounds::Clamped] {
        sorter_run::<2, f64>(seed, n, 20_000, bounds, true);
        sorter_run::<5, f64>(seed, n, 40_000, bounds, true);
        sorter_run::<5, f32>(seed, n, 64 << 20, bounds, false);
        sorter_run::<3, f64>(seed, 150, 20_000, bounds, false);
    }
    sorter_run::<3, f64>(seed, 0, 20_000, Bounds::Exact, false);
}

#[test]
fn bad_or_late_key_bounds_are_refused_and_a_dropped_sorter_leaves_the_tree() {
    let dir = tempfile::tempdir().expect("tmp dir");
    let db = db();
    let txn = db.begin_write().expect("txn");
    let mut tree = RTree::<_, 2>::create(&txn, "t").expect("create");
    tree.insert_point([0.25, 0.25], 7).expect("insert");
    let sorter = tree.bulk_sorter(dir.path(), 20_000).expect("sorter");
    assert!(matches!(sorter.with_key_bounds(&Rect::new([0.0, f64::NAN], [1.0, 1.0])), Err(Error::InvalidBox { .. })));
    let sorter = tree.bulk_sorter(dir.path(), 20_000).expect("sorter");
    assert!(matches!(sorter.with_key_bounds(&Rect::new([1.0, 0.0], [0.0, 1.0])), Err(Error::InvalidBox { .. })));
    let mut sorter = tree.bulk_sorter(dir.path(), 20_000).expect("sorter");
    sorter.push_point([0.5, 0.5], 1).expect("push");
    assert!(matches!(sorter.with_key_bounds(&Rect::new([0.0; 2], [1.0; 2])), Err(Error::InvalidParameter { .. })));
    let mut sorter = tree
        .bulk_sorter(dir.path(), 20_000)
        .expect("sorter")
        .with_key_bounds(&Rect::new([0.0; 2], [1.0; 2]))
        .expect("bounds");
    for i in 0..2000u64 {
        sorter.push_point([(i % 50) as f64 / 50.0, (i / 50) as f64 / 40.0], i).expect("push");
    }
    assert!(matches!(sorter.push_point([f64::NAN, 0.0], 9), Err(Error::InvalidBox { .. })));
    drop(sorter);
    assert_eq!(tree.len().expect("len"), 1, "an unfinished sorter leaves the tree alone");
    assert!(tree.check().expect("check").is_empty());
    assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 0, "temporary files left behind");
    assert!(matches!(tree.bulk_sorter(dir.path(), 100), Err(Error::InvalidParameter { .. })));
}

#[test]
fn bad_boxes_are_refused_at_push_and_the_tree_is_untouched() {
    let dir = tempfile::tempdir().expect("tmp dir");
    let db = db();
    let txn = db.begin_write().expect("txn");
    let mut tree = RTree::<_, 2>::create(&txn, "t").expect("create");
    tree.insert_point([0.25, 0.25], 7).expect("insert");
    let mut builder = tree.bulk_builder(dir.path(), 20_000).expect("builder");
    builder.push_point([0.5, 0.5], 1).expect("good point");
    for bad in [[f64::NAN, 0.0], [0.0, f64::INFINITY], [f64::NEG_INFINITY, 1.0]] {
        assert!(matches!(builder.push_point(bad, 2), Err(Error::InvalidBox { .. })), "{bad:?}");
    }
    assert!(matches!(builder.push(&Rect::new([1.0, 0.0], [0.0, 0.0]), 3), Err(Error::InvalidBox { .. })));
    assert_eq!(builder.len(), 1);
    drop(builder);
    assert_eq!(tree.len().expect("len"), 1, "an unfinished build leaves the tree alone");
    let mut builder = tree.bulk_builder(dir.path(), 20_000).expect("builder");
    builder.push_point([0.5, 0.5], 1).expect("good point");
    assert!(builder.push_point([f64::NAN, 0.0], 2).is_err());
    builder.finish().expect("finish");
    let mut out = txn.result_set();
    tree.window_into(&Rect::new([0.0, 0.0], [1.0, 1.0]), WindowMode::Intersects, &mut out).expect("window");
    assert_eq!(out.ids(), [1]);
    assert!(matches!(tree.bulk_builder(dir.path(), 100), Err(Error::InvalidParameter { .. })));
    assert!(matches!(tree.bulk_builder(dir.path().join("missing"), 1 << 20), Err(Error::InvalidParameter { .. })));
}

/// Scale run (ignored; `RTREE_STREAM_N=10000000 cargo test --release --test rtree_stream
/// -- --ignored --nocapture`): 5-D f64 points on a file database with a 64 MiB pool and
/// a 128 MiB sort budget; prints the time, the runs and the peak resident memory.
#[test]
#[ignore]
fn streaming_build_of_many_points_in_bounded_memory() {
    let n: u64 = std::env::var("RTREE_STREAM_N").ok().and_then(|s| s.parse().ok()).unwrap_or(2_000_000);
    let dir = tempfile::tempdir().expect("tmp dir");
    let options = Database::builder().page_size(8192).cache_bytes(64 << 20).into_options();
    let db = Database::create(dir.path().join("big.db"), options).expect("database");
    let mut rng = Rng::new(seed());
    let start = std::time::Instant::now();
    let txn = db.begin_write().expect("txn");
    let mut tree = RTree::<_, 5>::create(&txn, "big").expect("create");
    let mut builder = tree.bulk_builder(dir.path(), 128 << 20).expect("builder");
    for id in 0..n {
        builder.push_point(std::array::from_fn(|_| rng.coord()), id).expect("push");
    }
    let stats = builder.finish().expect("finish");
    txn.commit(Durability::Full).expect("commit");
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let peak = status.lines().find(|l| l.starts_with("VmHWM")).unwrap_or("VmHWM: ?").to_owned();
    println!("{n} points: {stats:?} in {:.1} s, {peak}", start.elapsed().as_secs_f64());
    let read = db.begin_read().expect("read");
    let tree = RTree::<_, 5>::open(&read, "big").expect("open");
    assert_eq!(tree.len().expect("len"), n);
    assert!(tree.check().expect("check").is_empty());
}

/// Query loop for profiling (ignored; `RTREE_PROFILE=knn|window|both`, `RTREE_STREAM_N`
/// points, `RTREE_DIMS=5|2`, `RTREE_POINTS=1` for point leaves, `RTREE_QUERIES`,
/// `RTREE_WINDOW` selectivity, `RTREE_BUILD=insert` for one-by-one inserts): bulk-loads uniform f64 points and runs the queries, one
/// read snapshot per query (as the T4 adapter does); prints queries per second.
#[test]
#[ignore]
fn profile_queries() {
    if std::env::var("RTREE_DIMS").is_ok_and(|v| v == "2") {
        profile::<2>();
    } else {
        profile::<5>();
    }
}

fn profile<const D: usize>() {
    let n: u64 = std::env::var("RTREE_STREAM_N").ok().and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let what = std::env::var("RTREE_PROFILE").unwrap_or_else(|_| "both".into());
    let dir = tempfile::tempdir().expect("tmp dir");
    let options = Database::builder().page_size(8192).cache_bytes(256 << 20).into_options();
    let db = Database::create(dir.path().join("q.db"), options).expect("database");
    let mut rng = Rng::new(seed());
    let (ids, coords): (Vec<u64>, Vec<f64>) = (0..n).map(|i| (i, 0.0)).unzip();
    let coords: Vec<f64> = coords.iter().flat_map(|_| std::array::from_fn::<f64, D, _>(|_| rng.coord())).collect();
    let txn = db.begin_write().expect("txn");
    let max_entries = std::env::var("RTREE_MAX").ok().and_then(|v| v.parse().ok());
    let points = std::env::var("RTREE_POINTS").is_ok_and(|v| v == "1");
    let mut tree = RTree::<_, D>::create_with(&txn, "q", RTreeOptions { max_entries, points }).expect("create");
    if std::env::var("RTREE_BUILD").is_ok_and(|v| v == "insert") {
        for (&id, p) in ids.iter().zip(coords.chunks_exact(D)) {
            tree.insert_point(p.try_into().expect("D coordinates"), id).expect("insert");
        }
    } else {
        tree.bulk_load_points(&ids, &coords).expect("bulk");
    }
    drop(tree);
    txn.commit(Durability::Full).expect("commit");
    let selectivity: f64 = std::env::var("RTREE_WINDOW").ok().and_then(|v| v.parse().ok()).unwrap_or(1e-4);
    let side = selectivity.powf(1.0 / D as f64);
    let mut found = 0usize;
    let queries: u32 = std::env::var("RTREE_QUERIES").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000);
    if what != "knn" {
        let start = std::time::Instant::now();
        for _ in 0..queries {
            let read = db.begin_read().expect("read");
            let tree = RTree::<_, D>::open(&read, "q").expect("open");
            let min: [f64; D] = std::array::from_fn(|_| rng.coord() * (1.0 - side));
            let window = Rect::new(min, std::array::from_fn(|d| min[d] + side));
            tree.visit_window(&window, WindowMode::Intersects, |_, _| found += 1).expect("window");
        }
        println!("window 0.01%: {:.0}/s ({found} found)", f64::from(queries) / start.elapsed().as_secs_f64());
    }
    if what != "window" {
        let start = std::time::Instant::now();
        for _ in 0..queries {
            let read = db.begin_read().expect("read");
            let mut out = read.result_set();
            let tree = RTree::<_, D>::open(&read, "q").expect("open");
            tree.nearest_k(std::array::from_fn(|_| rng.coord()), 10, None, &mut out).expect("knn");
            found += out.len();
        }
        println!("kNN k=10: {:.0}/s ({found} rows)", f64::from(queries) / start.elapsed().as_secs_f64());
    }
}
