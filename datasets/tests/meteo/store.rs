//! Loading into a database: range, window and kNN answers equal a naive scan of the
//! generated CSV; a load that stops on a bad row, or is aborted, leaves the database
//! as before; batches commit as they go.

use quiredb_datasets::meteo::generator::{GeneratorConfig, ObservationGenerator, write_csv};
use quiredb_datasets::meteo::query::MeteoView;
use quiredb_datasets::meteo::store::IndexSink;
use quiredb_datasets::meteo::{LoadOptions, Observation, ObservationReader, ObservationSink, Schema, load};
use quiredb_engine::{Database, Durability, Options};

pub fn names() -> Vec<String> {
    ["temp", "pres", "dewp", "rain", "wspm"].map(String::from).to_vec()
}

fn load_into(db: &Database, csv: &[u8], batch_rows: Option<u64>) -> quiredb_datasets::Result<()> {
    let mut reader = ObservationReader::new(csv, &Schema::default())?;
    let mut sink = IndexSink::new(db, Durability::None, names())?;
    let options = LoadOptions { batch_rows, ..LoadOptions::default() };
    load(&mut reader, &mut sink, options, &mut |_, _| {}).map(|_| ())
}

pub fn fixture(rows: u64, seed: u64) -> (Vec<u8>, Vec<Observation>) {
    println!("store fixture seed {seed}");
    let config = GeneratorConfig { seed, stations: Some(3), ..GeneratorConfig::new(rows) };
    let mut csv = Vec::new();
    write_csv(&config, &mut csv, &mut |_, _| {}).expect("generates");
    (csv, ObservationGenerator::new(config).expect("config").collect())
}

pub fn line(observation: &Observation) -> Vec<u8> {
    let mut text = Vec::new();
    quiredb_datasets::meteo::generator::write_row(observation, &mut text);
    text.pop();
    text
}

pub fn temp_db() -> (tempfile::TempDir, Database) {
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
    let mut got: Vec<Vec<u8>> = view.window(&min, &max).expect("window").into_iter().map(|f| f.raw).collect();
    expected.sort();
    got.sort();
    assert_eq!(got, expected);
    assert!(got.len() > 10, "window too small to prove anything: {}", got.len());

    let point = [10.0, 1010.0, 0.0, 0.0, 2.0];
    let distance = |p: [f64; 5]| (0..5).map(|d| (p[d] - point[d]).powi(2)).sum::<f64>().sqrt();
    let mut naive: Vec<f64> = observations.iter().filter_map(|o| o.point::<5>()).map(distance).collect();
    naive.sort_by(f64::total_cmp);
    let found = view.knn(&point, 10).expect("knn");
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

/// Environment variable that turns the kill test's process into the loading child.
const KILL_CHILD: &str = "QUIRE_METEO_KILL_CHILD";

/// A load killed with SIGKILL in the middle of its transaction (after dirty pages were
/// spilled to the file by a tiny buffer pool) leaves the database exactly as it was.
/// The test re-runs its own binary as the loading child, which stops after 150,000 rows
/// and waits to be killed; no timing decides the outcome.
#[test]
fn killed_load_leaves_the_database_as_before() {
    if let Some(path) = std::env::var_os(KILL_CHILD) {
        return stalled_child_load(std::path::Path::new(&path));
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("killed.quire");
    let small = Database::builder().cache_bytes(1 << 20).into_options();
    let before = {
        let db = Database::create(&path, small.clone()).expect("create");
        load_into(&db, &fixture(2_000, 3).0, None).expect("first load");
        MeteoView::open(&db.begin_read().expect("read")).expect("layout").stats().expect("stats")
    };
    let size_before = std::fs::metadata(&path).expect("file").len();
    let marker = dir.path().join("stalled");
    let mut child = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args(["store::killed_load_leaves_the_database_as_before", "--exact", "--nocapture"])
        .env(KILL_CHILD, &path)
        .spawn()
        .expect("spawn the loading child");
    while !marker.exists() {
        if let Some(status) = child.try_wait().expect("child status") {
            panic!("the loading child ended before stalling: {status}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().expect("SIGKILL the child");
    child.wait().expect("reap the child");
    let size_killed = std::fs::metadata(&path).expect("file").len();
    println!("file {size_before} bytes before the child, {size_killed} after the kill");
    assert!(size_killed > size_before, "the child should have spilled pages into the file");
    let db = Database::open(&path, small).expect("reopen after the kill");
    assert!(quiredb_engine::check(&db).expect("check runs").is_clean(), "integrity after the kill");
    let after = MeteoView::open(&db.begin_read().expect("read")).expect("layout").stats().expect("stats");
    assert_eq!(after, before);
}

/// The child side: loads 200,000 rows into `path`; after 150,000 it marks the file
/// `stalled` beside the database and sleeps until killed.
fn stalled_child_load(path: &std::path::Path) {
    struct Stall<'db> {
        inner: IndexSink<'db>,
        rows: u64,
        marker: std::path::PathBuf,
    }
    impl ObservationSink for Stall<'_> {
        fn push(&mut self, observation: &Observation, raw: &[u8]) -> quiredb_datasets::Result<()> {
            self.inner.push(observation, raw)?;
            self.rows += 1;
            if self.rows == 150_000 {
                std::fs::write(&self.marker, b"stalled")?;
                loop {
                    std::thread::sleep(std::time::Duration::from_secs(1));
                }
            }
            Ok(())
        }
        fn finish(&mut self) -> quiredb_datasets::Result<()> {
            self.inner.finish()
        }
    }
    let small = Database::builder().cache_bytes(1 << 20).into_options();
    let db = Database::open(path, small).expect("child opens the database");
    let (csv, _) = fixture(200_000, 4);
    let mut reader = ObservationReader::new(csv.as_slice(), &Schema::default()).expect("opens");
    let inner = IndexSink::new(&db, Durability::Checksummed, names()).expect("sink");
    let marker = path.with_file_name("stalled");
    let mut sink = Stall { inner, rows: 0, marker };
    let result = load(&mut reader, &mut sink, LoadOptions::default(), &mut |_, _| {});
    panic!("the child was not killed: {result:?}");
}

/// A database written before records were packed (raw lines in the queue, no
/// `record_encoding` in `meteo.meta`, a box-leaf R-tree) still answers with its lines,
/// and a load into it keeps writing raw lines; a new database stores packed records.
#[test]
fn earlier_raw_line_databases_read_and_keep_their_encoding() {
    use quiredb_datasets::meteo::store::{self, BTREE_NAME, META_NAME, MeasureTree, QUEUE_NAME, RTREE_NAME};
    use quiredb_structures::btree::BTree;
    use quiredb_structures::queue::Queue;
    let old_line = b"OLD,2000-01-01T00:00,1,1000,0,0,1".to_vec();
    let (_dir, db) = temp_db();
    let txn = db.begin_write().expect("write");
    let mut queue = Queue::create(&txn, QUEUE_NAME).expect("queue");
    let id = queue.append(&old_line).expect("append");
    let mut key = Vec::new();
    store::encode_key(&"OLD".to_owned(), 946_684_800, &mut key);
    let mut btree = BTree::create(&txn, BTREE_NAME).expect("btree");
    btree.insert(&key, &store::encode_record_id(id).expect("id")).expect("insert");
    let mut rtree = MeasureTree::<_, 5>::create(&txn, RTREE_NAME).expect("rtree");
    rtree.insert_point([1.0, 1000.0, 0.0, 0.0, 1.0], store::pack_record_id(id).expect("id")).expect("point");
    BTree::create(&txn, META_NAME).expect("meta").insert(b"measures", names().join(",").as_bytes()).expect("meta");
    txn.commit(Durability::None).expect("commit");

    let (csv, observations) = fixture(500, 5);
    load_into(&db, &csv, None).expect("load into the earlier database");
    let txn = db.begin_read().expect("read");
    let view = MeteoView::open(&txn).expect("layout");
    assert_eq!(view.range("OLD", 0, i64::MAX).expect("range")[0].raw, old_line);
    let first = &observations[0];
    let found = view.range(&first.station, first.time, first.time).expect("range");
    assert_eq!(found.iter().map(|f| f.raw.clone()).collect::<Vec<_>>(), vec![line(first)]);
    let mut stored = Vec::new();
    Queue::open(&txn, QUEUE_NAME).expect("queue").get(found[0].id, &mut stored).expect("get");
    assert_eq!(stored, line(first), "a load into a raw-line database writes raw lines");

    let (_dir, fresh) = temp_db();
    load_into(&fresh, &csv, None).expect("load into a new database");
    let txn = fresh.begin_read().expect("read");
    let found = MeteoView::open(&txn).expect("layout").range(&first.station, first.time, first.time).expect("range");
    assert_eq!(found[0].raw, line(first));
    Queue::open(&txn, QUEUE_NAME).expect("queue").get(found[0].id, &mut stored).expect("get");
    assert!(stored.len() * 3 < line(first).len() * 2, "a new database stores packed records");
}

/// The (station, time) keys of an empty tree are streamed by the B+tree's bulk
/// appender while every chunk of 65,536 rows follows the one before, and inserted from
/// the first chunk that does not: here the second half of the rows comes first, then
/// the first half, then 1,000 repeated rows (the later row wins). Every station's
/// range equals the generated rows in time order, and the key count is exact.
#[test]
fn keys_stream_in_order_then_fall_back_to_inserts() {
    let (_, observations) = fixture(150_000, 12);
    let mut csv = b"station,time,temp,pres,dewp,rain,wspm\n".to_vec();
    let (first, second) = observations.split_at(75_000);
    for observation in second.iter().chain(first).chain(&first[..1_000]) {
        csv.extend_from_slice(&line(observation));
        csv.push(b'\n');
    }
    let (_dir, db) = temp_db();
    load_into(&db, &csv, None).expect("loads");
    let txn = db.begin_read().expect("read");
    let view = MeteoView::open(&txn).expect("layout present");
    let stats = view.stats().expect("stats");
    assert_eq!((stats.records, stats.keys), (151_000, 150_000));
    for station in ["S00001", "S00002", "S00003"] {
        let mut expected: Vec<&Observation> = observations.iter().filter(|o| o.station == station).collect();
        expected.sort_by_key(|o| o.time);
        let expected: Vec<Vec<u8>> = expected.into_iter().map(line).collect();
        let got: Vec<Vec<u8>> =
            view.range(station, i64::MIN, i64::MAX).expect("range").into_iter().map(|f| f.raw).collect();
        assert_eq!(got.len(), expected.len(), "{station}");
        assert!(got == expected, "{station}: ranges differ");
    }
    let problems = quiredb_engine::check(&db).expect("check runs");
    assert!(problems.is_clean(), "integrity");
}

/// A range read by two threads has the rows of the one-thread range, in order: one
/// station's times, every station (more than one batch), every station's times, one
/// key, no key; and a limit stops a range.
#[cfg(feature = "arrow")]
#[test]
fn ranges_on_two_threads_equal_one_thread() {
    use quiredb_datasets::meteo::arrow::{RANGE_BATCH_ROWS, range, range_on_two_threads};
    let (csv, observations) = fixture(RANGE_BATCH_ROWS as u64 + 4_000, 12);
    let (_dir, db) = temp_db();
    load_into(&db, &csv, None).expect("loads");
    let (from, to) = (observations[50].time, observations[900].time);
    let every = i64::MIN..=i64::MAX;
    let cases = [
        (Some("S00002"), from..=to, 2),
        (None, every.clone(), 2),
        (None, from..=to, 2),
        (Some("S00003"), from..=from, 1),
        (Some("nowhere"), every.clone(), 1),
    ];
    let rows_of = |batches: &[arrow_array::RecordBatch]| -> Vec<arrow_array::RecordBatch> {
        batches.iter().flat_map(|batch| (0..batch.num_rows()).map(|row| batch.slice(row, 1))).collect()
    };
    for (station, times, batches) in cases {
        let one = range(&db.begin_read().expect("read"), station, times.clone(), usize::MAX).expect("range");
        let two = range_on_two_threads(&db, station, times.clone()).expect("range on two threads");
        assert_eq!(two.len(), batches, "{station:?} {times:?}");
        assert_eq!(rows_of(&one), rows_of(&two), "{station:?} {times:?}");
    }
    let all = range(&db.begin_read().expect("read"), None, every.clone(), usize::MAX).expect("range");
    let sizes: Vec<usize> = all.iter().map(|batch| batch.num_rows()).collect();
    assert_eq!(sizes, [RANGE_BATCH_ROWS, 4_000]);
    let first = range(&db.begin_read().expect("read"), None, every, 7).expect("range with a limit");
    assert_eq!(rows_of(&first), rows_of(&all)[..7]);
}

/// Measure names with commas (an Onset HOBO logger's `Temp, °F (LGR S/N: …)`) are
/// stored and read back whole, in order; a `measures` entry written before, names
/// joined with commas, still reads.
#[test]
fn measure_names_with_commas_are_kept_whole() {
    use quiredb_datasets::meteo::aggregate::stored_measure_names;
    use quiredb_datasets::meteo::store::{decode_measure_names, encode_measure_names};
    let (_dir, db) = temp_db();
    let named: Vec<String> =
        ["Temp, °F (LGR S/N: 1, SEN S/N: 1)", "RH, %", "dewp", "rain", "wspm"].map(String::from).to_vec();
    let (csv, _) = fixture(50, 7);
    let mut reader = ObservationReader::new(&csv[..], &Schema::default()).expect("reader");
    let mut sink = IndexSink::new(&db, Durability::None, named.clone()).expect("sink");
    load(&mut reader, &mut sink, LoadOptions::default(), &mut |_, _| {}).expect("load");
    let txn = db.begin_read().expect("read");
    assert_eq!(stored_measure_names(&txn).expect("names"), named);
    assert_eq!(MeteoView::open(&txn).expect("view").stats().expect("stats").measure_names, named);
    assert_eq!(decode_measure_names(&encode_measure_names(&named)), named);
    assert_eq!(decode_measure_names(b"temp,pres,dewp"), ["temp", "pres", "dewp"]);
}
