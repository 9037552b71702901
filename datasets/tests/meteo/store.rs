//! Loading into a database: range, window and kNN answers equal a naive scan of the
//! generated CSV; a load that stops on a bad row, or is aborted, leaves the database
//! as before; batches commit as they go.

use quiredb_datasets::meteo::generator::{GeneratorConfig, ObservationGenerator, write_csv};
use quiredb_datasets::meteo::query::MeteoView;
use quiredb_datasets::meteo::store::IndexSink;
use quiredb_datasets::meteo::{LoadOptions, Observation, ObservationReader, ObservationSink, Schema, load};
use quiredb_engine::{Database, Durability, Options};

fn names() -> Vec<String> {
    ["temp", "pres", "dewp", "rain", "wspm"].map(String::from).to_vec()
}

fn load_into(db: &Database, csv: &[u8], batch_rows: Option<u64>) -> quiredb_datasets::Result<()> {
    let mut reader = ObservationReader::new(csv, &Schema::default())?;
    let mut sink = IndexSink::new(db, Durability::None, names())?;
    let options = LoadOptions { batch_rows, ..LoadOptions::default() };
    load(&mut reader, &mut sink, options, &mut |_, _| {}).map(|_| ())
}

fn fixture(rows: u64, seed: u64) -> (Vec<u8>, Vec<Observation>) {
    println!("store fixture seed {seed}");
    let config = GeneratorConfig { seed, stations: Some(3), ..GeneratorConfig::new(rows) };
    let mut csv = Vec::new();
    write_csv(&config, &mut csv, &mut |_, _| {}).expect("generates");
    (csv, ObservationGenerator::new(config).expect("config").collect())
}

fn line(observation: &Observation) -> Vec<u8> {
    let mut text = Vec::new();
    quiredb_datasets::meteo::generator::write_row(observation, &mut text);
    text.pop();
    text
}

fn temp_db() -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = Database::create(dir.path().join("meteo.quire"), Options::default()).expect("create");
    (dir, db)
}

/// Range, window and kNN answers equal a naive scan of the generated observations.
#[test]
fn queries_equal_a_naive_scan() {
    let (csv, observations) = fixture(6_000, 11);
    let (_dir, db) = temp_db();
    load_into(&db, &csv, None).expect("loads");
    let txn = db.begin_read().expect("read");
    let view = MeteoView::open(&txn).expect("layout present");
    let stats = view.stats().expect("stats");
    let complete = observations.iter().filter(|o| o.is_complete()).count() as u64;
    assert_eq!((stats.records, stats.keys, stats.points), (6_000, 6_000, complete));
    assert_eq!(stats.measure_names, names());

    let (from, to) = (observations[100].time, observations[400].time);
    let expected: Vec<Vec<u8>> =
        observations.iter().filter(|o| o.station == "S00002" && (from..=to).contains(&o.time)).map(line).collect();
    let got: Vec<Vec<u8>> = view.range("S00002", from, to).expect("range").into_iter().map(|f| f.raw).collect();
    assert_eq!(got, expected);
    assert!(!got.is_empty());

    let (min, max) = ([0.0, 1000.0, -10.0, 0.0, 0.0], [20.0, 1020.0, 5.0, 0.0, 3.0]);
    let inside = |p: [f64; 5]| (0..5).all(|d| min[d] <= p[d] && p[d] <= max[d]);
    let mut expected: Vec<Vec<u8>> =
        observations.iter().filter(|o| o.point::<5>().is_some_and(inside)).map(line).collect();
    let mut got: Vec<Vec<u8>> = view.window(min, max).expect("window").into_iter().map(|f| f.raw).collect();
    expected.sort();
    got.sort();
    assert_eq!(got, expected);
    assert!(got.len() > 10, "window too small to prove anything: {}", got.len());

    let point = [10.0, 1010.0, 0.0, 0.0, 2.0];
    let distance = |p: [f64; 5]| (0..5).map(|d| (p[d] - point[d]).powi(2)).sum::<f64>().sqrt();
    let mut naive: Vec<f64> = observations.iter().filter_map(|o| o.point::<5>()).map(distance).collect();
    naive.sort_by(f64::total_cmp);
    let found = view.knn(point, 10).expect("knn");
    let distances: Vec<f64> = found.iter().map(|f| f.distance.expect("kNN has distances")).collect();
    assert_eq!(distances.len(), 10);
    for (got, want) in distances.iter().zip(&naive) {
        assert!((got - want).abs() < 1e-9, "kNN distances {distances:?} vs naive {:?}", &naive[..10]);
    }
}

/// A bad row stops the load and the database stays exactly as before (still empty of
/// meteorological data); so does an explicit abort.
#[test]
fn failed_or_aborted_loads_leave_the_database_unchanged() {
    let (csv, _) = fixture(3_000, 5);
    let (_dir, db) = temp_db();
    let mut broken = csv.clone();
    broken.extend_from_slice(b"S00009,2013-03-01T00:00,warm,1,1,1,1\n");
    let error = load_into(&db, &broken, None).expect_err("bad row stops the load");
    assert!(error.to_string().contains("line 3002"), "{error}");
    assert!(MeteoView::open(&db.begin_read().expect("read")).is_err(), "nothing may be left");

    load_into(&db, &csv, None).expect("loads");
    let before = MeteoView::open(&db.begin_read().expect("read")).expect("layout").stats().expect("stats");
    let mut sink = IndexSink::new(&db, Durability::None, names()).expect("sink");
    let mut reader = ObservationReader::new(csv.as_slice(), &Schema::default()).expect("opens");
    let mut observation = Observation::default();
    while let quiredb_datasets::meteo::ReadOutcome::Row = reader.read(&mut observation).expect("reads") {
        sink.push(&observation, reader.raw_record()).expect("push");
    }
    sink.abort();
    let after = MeteoView::open(&db.begin_read().expect("read")).expect("layout").stats().expect("stats");
    assert_eq!(before, after);
}

/// With batches, each batch is committed; a second load appends (keys replaced, since
/// the same rows come again) and the R-tree grows by inserts after its bulk load.
#[test]
fn batches_commit_and_loads_append() {
    let (csv, observations) = fixture(5_000, 9);
    let (_dir, db) = temp_db();
    load_into(&db, &csv, Some(1_500)).expect("batched load");
    load_into(&db, &csv, None).expect("second load");
    let txn = db.begin_read().expect("read");
    let stats = MeteoView::open(&txn).expect("layout").stats().expect("stats");
    let complete = observations.iter().filter(|o| o.is_complete()).count() as u64;
    assert_eq!((stats.records, stats.keys, stats.points), (10_000, 5_000, 2 * complete));
}
