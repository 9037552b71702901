//! The R*-tree's dimension count chosen at load (`--index-measures`, 1 to 8 of the
//! measures): windows and kNN over trees of 1, 3 and 8 dimensions, loaded by both
//! sinks, answer as a brute-force scan of the rows; 0 or 9 measures, an unknown name, a
//! query point of the wrong size and an append choosing another count are clear errors.
//! `QUIRE_SEED` replays a run (the seed is printed).

use super::store::temp_db;
use quiredb_datasets::meteo::query::MeteoView;
use quiredb_datasets::meteo::store::IndexSink;
use quiredb_datasets::meteo::{LoadOptions, ObservationReader, ParallelConfig, Schema, load, load_parallel};
use quiredb_engine::{Database, Durability};
use quiredb_test_support::Rng;

/// Measures of the test file (one more than the R*-tree can take).
const MEASURES: usize = 9;
const ROWS: usize = 1_500;

/// A value on a 0.5 grid in `[0, 20)` (ties happen, as in real data).
fn value(rng: &mut Rng) -> f64 {
    rng.below(40) as f64 / 2.0
}

/// The generator of one test, from the replayable seed.
fn test_rng() -> Rng {
    Rng::new(quiredb_test_support::seed(0xD1_3E45))
}

/// One row of the model: its line as loaded and its measures (`None` = `NA`).
struct Row {
    line: Vec<u8>,
    measures: Vec<Option<f64>>,
}

/// A CSV of [`MEASURES`] measures `m0…m8` over two stations, about 3 % missing.
fn fixture(rng: &mut Rng) -> (Vec<u8>, Vec<Row>) {
    let names: Vec<String> = (0..MEASURES).map(|m| format!("m{m}")).collect();
    let mut csv = format!("station,time,{}\n", names.join(",")).into_bytes();
    let mut rows = Vec::new();
    for i in 0..ROWS {
        let measures: Vec<Option<f64>> =
            (0..MEASURES).map(|_| if rng.next().is_multiple_of(32) { None } else { Some(value(rng)) }).collect();
        let fields: Vec<String> = measures.iter().map(|m| m.map_or("NA".into(), |v| v.to_string())).collect();
        let (station, hour) = (i % 2, i / 2);
        let (day, hour) = (hour / 24, hour % 24);
        let time = format!("2020-{:02}-{:02}T{hour:02}:00", 1 + day / 28, 1 + day % 28);
        let line = format!("S{station},{time},{}", fields.join(","));
        csv.extend_from_slice(line.as_bytes());
        csv.push(b'\n');
        rows.push(Row { line: line.into_bytes(), measures });
    }
    (csv, rows)
}

fn schema() -> Schema {
    Schema { measures: (2..2 + MEASURES).map(quiredb_datasets::meteo::ColumnRef::Index).collect(), ..Schema::default() }
}

fn reader<'a>(csv: &'a [u8], chosen: &[usize]) -> quiredb_datasets::Result<ObservationReader<&'a [u8]>> {
    let mut reader = ObservationReader::new(csv, &schema())?;
    let names: Vec<String> = chosen.iter().map(|m| format!("m{m}")).collect();
    reader.set_index_measures(&names)?;
    Ok(reader)
}

/// Loads `csv` indexing the measures `chosen`, on two threads or with [`IndexSink`].
fn load_chosen(db: &Database, csv: &[u8], chosen: &[usize], two_threads: bool) -> quiredb_datasets::Result<u64> {
    let mut reader = reader(csv, chosen)?;
    let layout = reader.record_layout();
    if two_threads {
        let tmp = tempfile::tempdir().expect("temp dir");
        let config = ParallelConfig {
            durability: Durability::None,
            measure_names: reader.measure_names(),
            tmp_dir: tmp.path().to_path_buf(),
            rtree_budget: 64 << 10,
            cpu_clock: Default::default(),
            record_layout: Some(layout),
        };
        let (_, stats) = load_parallel(db, &config, &mut reader, LoadOptions::default(), &mut |_, _| {})?;
        return Ok(stats.points);
    }
    let sink = IndexSink::new(db, Durability::None, reader.measure_names())?;
    let mut sink = sink.with_record_layout(layout);
    load(&mut reader, &mut sink, LoadOptions::default(), &mut |_, _| {})?;
    Ok(sink.stats().points)
}

/// The row's point over `chosen`, if all of them are present.
fn point(row: &Row, chosen: &[usize]) -> Option<Vec<f64>> {
    chosen.iter().map(|&m| row.measures[m]).collect()
}

/// Windows and kNN of the database equal a scan of the model.
fn check_answers(db: &Database, rows: &[Row], chosen: &[usize], rng: &mut Rng) {
    let txn = db.begin_read().expect("read");
    let view = MeteoView::open(&txn).expect("layout");
    let dims = chosen.len();
    assert_eq!(view.dimensions(), dims);
    let stats = view.stats().expect("stats");
    assert_eq!(stats.points, rows.iter().filter(|row| point(row, chosen).is_some()).count() as u64);
    // Narrower boxes in few dimensions, wider in many: each catches some rows.
    let spread = if dims > 3 { 0.3 } else { 1.0 };
    let mut caught = 0;
    for query in 0..20 {
        let (mut min, mut max) = (Vec::new(), Vec::new());
        for _ in 0..dims {
            let (a, b) = (value(rng), value(rng));
            min.push(a.min(b) * spread);
            max.push(20.0 - (20.0 - a.max(b)) * spread);
        }
        let inside = |p: &Vec<f64>| (0..dims).all(|d| min[d] <= p[d] && p[d] <= max[d]);
        let mut expected: Vec<&[u8]> =
            rows.iter().filter(|row| point(row, chosen).is_some_and(|p| inside(&p))).map(|r| &r.line[..]).collect();
        let found = view.window(&min, &max).expect("window");
        let mut got: Vec<&[u8]> = found.iter().map(|f| &f.raw[..]).collect();
        expected.sort();
        got.sort();
        assert_eq!(got, expected, "window {query} over {chosen:?}: {min:?}..{max:?}");
        caught += got.len();

        let at: Vec<f64> = (0..dims).map(|_| value(rng)).collect();
        let distance = |p: &Vec<f64>| p.iter().zip(&at).map(|(a, b)| (a - b).powi(2)).sum::<f64>().sqrt();
        let mut naive: Vec<f64> = rows.iter().filter_map(|row| point(row, chosen)).map(|p| distance(&p)).collect();
        naive.sort_by(f64::total_cmp);
        let k = 1 + rng.index(12);
        let nearest = view.knn(&at, k).expect("knn");
        let got: Vec<f64> = nearest.iter().map(|f| f.distance.expect("distance")).collect();
        assert_eq!(got.len(), k.min(naive.len()));
        for ((found, got), want) in nearest.iter().zip(&got).zip(&naive) {
            assert!((got - want).abs() < 1e-9, "kNN {query} over {chosen:?} at {at:?}: {got} vs {want}");
            let row = rows.iter().find(|row| row.line == found.raw).expect("a loaded row");
            let own = distance(&point(row, chosen).expect("indexed rows are complete"));
            assert!((own - got).abs() < 1e-9, "kNN {query}: the record is not at its distance");
        }
    }
    assert!(caught > 100, "the windows over {chosen:?} caught only {caught} rows: too few to prove anything");
}

#[test]
fn trees_of_one_three_and_eight_dimensions_answer_as_a_scan() {
    let mut rng = test_rng();
    let (csv, rows) = fixture(&mut rng);
    for chosen in [&[4][..], &[7, 0, 3], &[8, 1, 2, 3, 5, 6, 7, 0]] {
        for two_threads in [false, true] {
            let (_dir, db) = temp_db();
            let points = load_chosen(&db, &csv, chosen, two_threads).expect("loads");
            assert_eq!(points, rows.iter().filter(|row| point(row, chosen).is_some()).count() as u64);
            check_answers(&db, &rows, chosen, &mut rng);
        }
    }
}

#[test]
fn without_a_choice_the_first_eight_measures_are_the_dimensions() {
    let mut rng = test_rng();
    let (csv, rows) = fixture(&mut rng);
    let (_dir, db) = temp_db();
    let mut reader = ObservationReader::new(&csv[..], &schema()).expect("opens");
    let mut sink = IndexSink::new(&db, Durability::None, reader.measure_names()).expect("sink");
    load(&mut reader, &mut sink, LoadOptions::default(), &mut |_, _| {}).expect("loads");
    check_answers(&db, &rows, &[0, 1, 2, 3, 4, 5, 6, 7], &mut rng);
}

#[test]
fn wrong_counts_names_and_points_are_clear_errors() {
    let mut rng = test_rng();
    let (csv, _) = fixture(&mut rng);
    let message = |chosen: &[&str]| {
        let mut reader = ObservationReader::new(&csv[..], &schema()).expect("opens");
        let names: Vec<String> = chosen.iter().map(|name| (*name).to_owned()).collect();
        reader.set_index_measures(&names).expect_err("refused").to_string()
    };
    assert!(message(&[]).contains("takes 1 to 8 measures (the R*-tree's dimensions), got 0"), "{}", message(&[]));
    let nine = ["m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8"];
    assert!(message(&nine).contains("takes 1 to 8 measures (the R*-tree's dimensions), got 9"), "{}", message(&nine));
    let unknown = message(&["m1", "wind"]);
    assert!(unknown.contains("no measure \"wind\"") && unknown.contains("m0, m1"), "{unknown}");

    let (_dir, db) = temp_db();
    load_chosen(&db, &csv, &[2, 5, 6], false).expect("loads");
    let view_stats = |db: &Database| MeteoView::open(&db.begin_read().expect("read")).expect("layout").stats();
    let before = view_stats(&db).expect("stats");
    let txn = db.begin_read().expect("read");
    let view = MeteoView::open(&txn).expect("layout");
    let wrong = view.knn(&[1.0, 2.0], 3).expect_err("a 2-D point in a 3-D tree").to_string();
    assert!(wrong.contains("3 dimensions: 3 values needed, got 2"), "{wrong}");
    assert!(view.window(&[0.0; 5], &[1.0; 5]).is_err());
    drop(txn);
    for two_threads in [false, true] {
        let error = load_chosen(&db, &csv, &[2, 5], two_threads).expect_err("another dimension count").to_string();
        assert!(error.contains("R*-tree has 3 dimensions, this load indexes 2"), "{error}");
        assert_eq!(view_stats(&db).expect("stats"), before, "a refused append changes nothing");
    }
}
