//! The two-thread load (`load_parallel`, R*-tree by the streaming bulk builder with a
//! tiny sort budget so that it spills): the same database contents and query answers
//! as the single-thread `IndexSink`; a bad row leaves the database unchanged; batches.

use super::store::{fixture, line, names, temp_db};
use quiredb_datasets::meteo::query::MeteoView;
use quiredb_datasets::meteo::store::IndexSink;
use quiredb_datasets::meteo::{CpuClock, LoadOptions, ObservationReader, ParallelConfig, Schema, load, load_parallel};
use quiredb_engine::{Database, Durability, PageRead};

/// A two-thread load's configuration: sorting in `tmp` with a 64 KiB R-tree sort
/// budget (a few hundred points), no clock, no record layout.
fn config(tmp: &std::path::Path) -> ParallelConfig {
    ParallelConfig {
        durability: Durability::None,
        measure_names: names(),
        tmp_dir: tmp.to_path_buf(),
        rtree_budget: 64 << 10,
        cpu_clock: Default::default(),
        record_layout: None,
    }
}

/// Loads `csv` on two threads with a 64 KiB R-tree sort budget (a few hundred points).
fn load_two_threads(db: &Database, csv: &[u8], batch_rows: Option<u64>) -> quiredb_datasets::Result<()> {
    let tmp = tempfile::tempdir().expect("temp dir");
    let config = config(tmp.path());
    let mut reader = ObservationReader::new(csv, &Schema::default())?;
    let options = LoadOptions { batch_rows, ..LoadOptions::default() };
    let (summary, stats) = load_parallel(db, &config, &mut reader, options, &mut |_, _| {})?;
    assert_eq!(summary.rows, stats.records);
    assert_eq!(summary.complete_rows, stats.points);
    Ok(())
}

fn load_one_thread(db: &Database, csv: &[u8]) {
    let mut reader = ObservationReader::new(csv, &Schema::default()).expect("opens");
    let mut sink = IndexSink::new(db, Durability::None, names()).expect("sink");
    load(&mut reader, &mut sink, LoadOptions::default(), &mut |_, _| {}).expect("loads");
}

/// Sorted raw records of every query kind, for comparing two databases.
fn answers(db: &Database) -> Vec<Vec<Vec<u8>>> {
    let txn = db.begin_read().expect("read");
    let view = MeteoView::open(&txn).expect("layout");
    let sorted = |found: Vec<quiredb_datasets::meteo::query::Found>| {
        let mut raw: Vec<Vec<u8>> = found.into_iter().map(|f| f.raw).collect();
        raw.sort();
        raw
    };
    vec![
        sorted(view.range("S00002", i64::MIN, i64::MAX).expect("range")),
        sorted(view.window(&[0.0, 1000.0, -10.0, 0.0, 0.0], &[20.0, 1020.0, 5.0, 0.0, 3.0]).expect("window")),
        view.knn(&[10.0, 1010.0, 0.0, 0.0, 2.0], 5).expect("knn").into_iter().map(|f| f.raw).collect(),
    ]
}

/// Two threads and one thread build databases with equal sizes and equal answers, and
/// the window answer equals a naive scan.
#[test]
fn two_threads_equal_one_thread() {
    let (csv, observations) = fixture(8_000, 21);
    let (_one_dir, one) = temp_db();
    let (_two_dir, two) = temp_db();
    load_one_thread(&one, &csv);
    load_two_threads(&two, &csv, None).expect("loads");
    let stats =
        |db: &Database| MeteoView::open(&db.begin_read().expect("read")).expect("layout").stats().expect("stats");
    let (a, b) = (stats(&one), stats(&two));
    assert_eq!((a.records, a.keys, a.points, &a.measure_names), (b.records, b.keys, b.points, &b.measure_names));
    assert!(quiredb_engine::check(&two).expect("check runs").is_clean());
    let (got, want) = (answers(&two), answers(&one));
    assert_eq!(got[..2], want[..2]);
    assert_eq!(got[2].len(), want[2].len());
    let inside = |p: [f64; 5]| {
        let (min, max) = ([0.0, 1000.0, -10.0, 0.0, 0.0], [20.0, 1020.0, 5.0, 0.0, 3.0]);
        (0..5).all(|d| min[d] <= p[d] && p[d] <= max[d])
    };
    let mut naive: Vec<Vec<u8>> =
        observations.iter().filter(|o| o.point::<5>().is_some_and(inside)).map(line).collect();
    naive.sort();
    assert_eq!(got[1], naive);
}

/// A bad row stops a two-thread load and leaves nothing; batches commit and a second
/// load appends (R-tree inserts after the bulk build).
#[test]
fn two_thread_errors_and_batches() {
    let (csv, observations) = fixture(5_000, 9);
    let (_dir, db) = temp_db();
    let mut broken = csv.clone();
    broken.extend_from_slice(b"S00009,2013-03-01T00:00,warm,1,1,1,1\n");
    let error = load_two_threads(&db, &broken, None).expect_err("bad row stops the load");
    assert!(error.to_string().contains("line 5002"), "{error}");
    assert!(MeteoView::open(&db.begin_read().expect("read")).is_err(), "nothing may be left");

    load_two_threads(&db, &csv, Some(1_500)).expect("batched load");
    load_two_threads(&db, &csv, None).expect("second load");
    let stats = MeteoView::open(&db.begin_read().expect("read")).expect("layout").stats().expect("stats");
    let complete = observations.iter().filter(|o| o.is_complete()).count() as u64;
    assert_eq!((stats.records, stats.keys, stats.points), (10_000, 5_000, 2 * complete));
}

/// Loads `csv` into `db` choosing `index` as the R*-tree's measures, on two threads or
/// on one (`IndexSink`).
fn load_choosing(db: &Database, csv: &[u8], index: &str, two_threads: bool) -> quiredb_datasets::Result<u64> {
    let mut reader = ObservationReader::new(csv, &Schema::default())?;
    reader.set_index_measures(&[index.to_owned()])?;
    if !two_threads {
        let sink = IndexSink::new(db, Durability::None, names())?;
        let mut sink = sink.with_record_layout(reader.record_layout());
        load(&mut reader, &mut sink, LoadOptions::default(), &mut |_, _| {})?;
        return Ok(sink.stats().points);
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let config = ParallelConfig { record_layout: Some(reader.record_layout()), ..config(tmp.path()) };
    let (_, stats) = load_parallel(db, &config, &mut reader, LoadOptions::default(), &mut |_, _| {})?;
    Ok(stats.points)
}

#[test]
fn index_measures_none_builds_no_r_tree() {
    // Proves: with --index-measures none both loads write records and keys but no
    // R*-tree; range answers as usual, stats counts no point, window and kNN refuse
    // naming the reason; a later load must say none again, and a none load into a
    // database with a tree is refused (both leave the database as it was).
    let (csv, observations) = fixture(2_000, 17);
    for two_threads in [false, true] {
        let (_dir, db) = temp_db();
        assert_eq!(load_choosing(&db, &csv, "None", two_threads).expect("loads"), 0);
        let txn = db.begin_read().expect("read");
        assert!(txn.catalog_entry("meteo.by_measures").expect("catalog").is_none(), "no R*-tree");
        let view = MeteoView::open(&txn).expect("opens without a tree");
        let stats = view.stats().expect("stats");
        assert_eq!((stats.records, stats.keys, stats.points, stats.dimensions), (2_000, 2_000, 0, 0));
        let (from, to) = (observations[10].time, observations[60].time);
        let expected: Vec<Vec<u8>> =
            observations.iter().filter(|o| o.station == "S00001" && (from..=to).contains(&o.time)).map(line).collect();
        let got: Vec<Vec<u8>> = view.range("S00001", from, to).expect("range").into_iter().map(|f| f.raw).collect();
        assert_eq!(got, expected);
        for refused in [view.window(&[0.0; 5], &[1.0; 5]).map(|_| ()), view.knn(&[0.0; 5], 3).map(|_| ())] {
            let error = refused.expect_err("no tree").to_string();
            assert!(error.contains("no R*-tree") && error.contains("--index-measures none"), "{error}");
        }
        drop(txn);
        let error = load_choosing(&db, &csv, "temp", two_threads).expect_err("must say none again").to_string();
        assert!(error.contains("loaded with --index-measures none"), "{error}");
        assert_eq!(load_choosing(&db, &csv, "none", two_threads).expect("appends"), 0);
        let txn = db.begin_read().expect("read");
        assert_eq!(MeteoView::open(&txn).expect("opens").stats().expect("stats").records, 4_000);
        drop(txn);
        let (_other_dir, indexed) = temp_db();
        load_choosing(&indexed, &csv, "temp", two_threads).expect("loads with a tree");
        let error = load_choosing(&indexed, &csv, "none", two_threads).expect_err("tree exists").to_string();
        assert!(error.contains("this load builds none"), "{error}");
        let txn = indexed.begin_read().expect("read");
        assert_eq!(MeteoView::open(&txn).expect("opens").stats().expect("stats").records, 2_000);
    }
}

/// A clock that moves one millisecond each time it is read.
fn ticking() -> std::time::Duration {
    static TICKS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    std::time::Duration::from_millis(TICKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
}

#[test]
fn the_callers_clock_times_each_thread() {
    // Proves: a two-thread load reads the CPU clocks it is given on the parse, index
    // and sort threads and at the commit (the default clock leaves them zero).
    let (csv, _) = fixture(3_000, 5);
    let (_dir, db) = temp_db();
    let tmp = tempfile::tempdir().expect("temp dir");
    let config = ParallelConfig { cpu_clock: CpuClock { thread: ticking, process: ticking }, ..config(tmp.path()) };
    let mut reader = ObservationReader::new(&csv[..], &Schema::default()).expect("reader");
    let (_, stats) = load_parallel(&db, &config, &mut reader, LoadOptions::default(), &mut |_, _| {}).expect("loads");
    let times = stats.times;
    let zero = std::time::Duration::ZERO;
    for (what, cpu) in [("parse", times.parse_cpu), ("index", times.index_cpu), ("sort", times.sort_cpu)] {
        assert!(cpu > zero, "{what} thread CPU counted: {times:?}");
    }
    assert!(times.commit_cpu > zero && times.tail_process_cpu > zero, "{times:?}");
}
