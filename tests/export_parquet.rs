//! `quire export` read back with the parquet crate (feature `parquet`): every record of
//! a generated data set, partitioned by station and year, equals the database's answer
//! row by row (time, each measure, the raw record), and the partition paths hold the
//! station and year of their rows. Also `quire xpath --format parquet`.
#![cfg(feature = "parquet")]

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, TimestampMillisecondType, TimestampSecondType, UInt64Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, TimeUnit};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use quiredb::Database;
use quiredb::datasets::meteo::arrow::range;
use quiredb::datasets::meteo::fields::civil_from_days;

fn quire(args: &[&str]) {
    let output = Command::new(env!("CARGO_BIN_EXE_quire")).args(args).output().expect("quire runs");
    assert!(output.status.success(), "quire {args:?}: {}", String::from_utf8_lossy(&output.stderr));
}

/// The rows of `batches`, in order (see [`rows`]).
fn rows_of_all(batches: &[RecordBatch]) -> Vec<(i64, Vec<Option<f64>>, String)> {
    batches.iter().flat_map(rows).collect()
}

/// Rows of a batch as comparable values: time, measures, record (station excluded).
fn rows(batch: &RecordBatch) -> Vec<(i64, Vec<Option<f64>>, String)> {
    let schema = batch.schema();
    let column = |name: &str| batch.column(schema.index_of(name).expect("column"));
    // Parquet files hold milliseconds, the database and Arrow IPC seconds.
    let times: Vec<i64> = match column("time").data_type() {
        DataType::Timestamp(TimeUnit::Millisecond, _) => {
            column("time").as_primitive::<TimestampMillisecondType>().values().iter().map(|ms| ms / 1000).collect()
        }
        _ => column("time").as_primitive::<TimestampSecondType>().values().to_vec(),
    };
    let records = column("record").as_string::<i32>().clone();
    let measures: Vec<_> = ["temp", "pres", "dewp", "rain", "wspm"]
        .iter()
        .map(|name| column(name).as_primitive::<Float64Type>().clone())
        .collect();
    (0..batch.num_rows())
        .map(|row| {
            let values = measures.iter().map(|m| (!m.is_null(row)).then(|| m.value(row))).collect();
            (times[row], values, records.value(row).to_owned())
        })
        .collect()
}

fn read_parquet(path: &Path) -> Vec<RecordBatch> {
    let file = File::open(path).expect("exported file");
    let reader = ParquetRecordBatchReaderBuilder::try_new(file).expect("parquet").build().expect("reader");
    reader.collect::<Result<_, _>>().expect("batches")
}

/// The exported files under `dir`, by (station, year) of their path.
fn partitions(dir: &Path) -> BTreeMap<(String, i64), PathBuf> {
    let mut found = BTreeMap::new();
    for station in std::fs::read_dir(dir).expect("export dir") {
        let station = station.expect("entry").path();
        let name = station.file_name().unwrap().to_string_lossy().into_owned();
        let station_name = name.strip_prefix("station=").expect("station=…").to_owned();
        for year in std::fs::read_dir(&station).expect("station dir") {
            let year = year.expect("entry").path();
            let text = year.file_name().unwrap().to_string_lossy().into_owned();
            let year_value: i64 = text.strip_prefix("year=").expect("year=…").parse().expect("a year");
            found.insert((station_name.clone(), year_value), year.join("part-0.parquet"));
        }
    }
    found
}

#[test]
fn exported_parquet_equals_the_database_row_by_row() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("gen.csv");
    let db_path = dir.path().join("x.quire");
    let out = dir.path().join("export");
    // Two years of hourly rows per station: partitions split inside a station.
    quire(&["gen", "meteo", "--rows", "40000", "--stations", "3", "--out", csv.to_str().unwrap()]);
    quire(&["load-csv", csv.to_str().unwrap(), "--db", db_path.to_str().unwrap(), "--quiet"]);
    quire(&["export", db_path.to_str().unwrap(), "--to", out.to_str().unwrap(), "--partition-by", "station,year"]);

    let db = Database::open_read_only(&db_path, Default::default()).unwrap();
    let txn = db.begin_read().unwrap();
    let files = partitions(&out);
    let stations: std::collections::BTreeSet<&String> = files.keys().map(|(station, _)| station).collect();
    assert_eq!(stations.len(), 3, "{files:?}");
    assert!(files.len() > 3, "more than one year per station: {files:?}");
    let mut total = 0;
    for station in stations {
        let expected = rows_of_all(&range(&txn, Some(station), i64::MIN..=i64::MAX, usize::MAX).unwrap());
        let mut exported = Vec::new();
        for ((_, year), path) in files.range((station.clone(), i64::MIN)..=(station.clone(), i64::MAX)) {
            for batch in read_parquet(path) {
                assert!(batch.schema().index_of("station").is_err(), "the partition column is in the path");
                for row in rows(&batch) {
                    assert_eq!(civil_from_days(row.0.div_euclid(86_400)).0, *year, "{path:?}");
                    exported.push(row);
                }
            }
        }
        assert_eq!(exported.len(), expected.len(), "{station}");
        assert!(exported == expected, "{station}: the exported rows differ from the database's");
        total += exported.len();
    }
    assert_eq!(total, 40000);
}

#[test]
fn unpartitioned_export_and_arrow_ipc() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("gen.csv");
    let db_path = dir.path().join("x.quire");
    quire(&["gen", "meteo", "--rows", "3000", "--stations", "2", "--out", csv.to_str().unwrap()]);
    quire(&["load-csv", csv.to_str().unwrap(), "--db", db_path.to_str().unwrap(), "--quiet"]);
    let out = dir.path().join("flat");
    quire(&["export", db_path.to_str().unwrap(), "--to", out.to_str().unwrap()]);
    let batches = read_parquet(&out.join("part-0.parquet"));
    let db = Database::open_read_only(&db_path, Default::default()).unwrap();
    let txn = db.begin_read().unwrap();
    let expected = rows_of_all(&range(&txn, None, i64::MIN..=i64::MAX, usize::MAX).unwrap());
    let exported: Vec<_> = batches.iter().flat_map(rows).collect();
    assert!(exported == expected);
    let ipc = dir.path().join("ipc");
    quire(&["export", db_path.to_str().unwrap(), "--to", ipc.to_str().unwrap(), "--format", "arrow-ipc"]);
    let file = File::open(ipc.join("part-0.arrow")).unwrap();
    let reader = arrow_ipc::reader::FileReader::try_new(file, None).unwrap();
    let exported: Vec<_> = reader.flat_map(|batch| rows(&batch.unwrap())).collect();
    assert!(exported == expected);
}

#[test]
fn xpath_results_as_parquet() {
    let dir = tempfile::tempdir().unwrap();
    let xml = dir.path().join("a.xml");
    std::fs::write(&xml, "<r><b id='1'>one</b><b id='2'>two <i>2</i></b></r>").unwrap();
    let db_path = dir.path().join("x.quire");
    quire(&["load-xml", db_path.to_str().unwrap(), "c", xml.to_str().unwrap(), "--quiet"]);
    let out = dir.path().join("r.parquet");
    let db = db_path.to_str().unwrap();
    quire(&["xpath", db, "c", "//b | //b/@id", "--format", "parquet", "--out", out.to_str().unwrap()]);
    let batches = read_parquet(&out);
    let batch = &batches[0];
    let strings = |name: &str| -> Vec<String> {
        let column = batch.column(batch.schema().index_of(name).unwrap()).as_string::<i32>().clone();
        (0..column.len()).map(|i| column.value(i).to_owned()).collect()
    };
    assert_eq!(strings("name"), ["b", "@id", "b", "@id"]);
    assert_eq!(strings("path"), ["/r/b", "/r/b/@id", "/r/b", "/r/b/@id"]);
    assert_eq!(strings("value"), ["one", "1", "two 2", "2"]);
    let pres = batch.column(0).as_primitive::<UInt64Type>();
    assert!(pres.values().windows(2).all(|w| w[0] < w[1]), "document order");
}

#[test]
fn load_csv_reads_an_exported_parquet_file_back() {
    // Proves: `load-csv` takes Parquet with the CSV options (here the default layout:
    // station, time, five measures; the extra `record` column is kept in the line) and
    // the reloaded database answers with the same times and measures.
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("gen.csv");
    let first = dir.path().join("first.quire");
    quire(&["gen", "meteo", "--rows", "5000", "--stations", "2", "--out", csv.to_str().unwrap()]);
    quire(&["load-csv", csv.to_str().unwrap(), "--db", first.to_str().unwrap(), "--quiet"]);
    let out = dir.path().join("flat");
    quire(&["export", first.to_str().unwrap(), "--to", out.to_str().unwrap()]);
    let second = dir.path().join("second.quire");
    let parquet = out.join("part-0.parquet");
    quire(&["load-csv", parquet.to_str().unwrap(), "--db", second.to_str().unwrap(), "--quiet"]);
    let answers = |path: &Path| {
        let db = Database::open_read_only(path, Default::default()).unwrap();
        let txn = db.begin_read().unwrap();
        let batches = range(&txn, None, i64::MIN..=i64::MAX, usize::MAX).unwrap();
        rows_of_all(&batches).into_iter().map(|(time, measures, _)| (time, measures)).collect::<Vec<_>>()
    };
    let (before, after) = (answers(&first), answers(&second));
    assert_eq!(before.len(), 5000);
    assert!(before == after, "the reloaded rows differ");
}
