//! The meteorological part of `quire demo`: generate ~1 M observations with the
//! Beijing-calibrated generator, load them in one transaction into a queue of raw
//! records, a (station, time) B+tree and a 5-D R*-tree, then run each query kind.

use anyhow::Result;
use quiredb_datasets::meteo::generator::write_csv;
use quiredb_datasets::meteo::{GeneratorConfig, IndexSink, LoadOptions, MeteoView, ObservationReader, Schema, load};
use quiredb_engine::{Database, Durability};
use std::time::Instant;

/// Rows the demo generates.
const ROWS: u64 = 1_000_000;

/// Runs the meteo tour on `db`.
pub fn tour(db: &Database) -> Result<()> {
    let start = Instant::now();
    let mut csv = Vec::with_capacity(48 * ROWS as usize);
    write_csv(&GeneratorConfig::new(ROWS), &mut csv, &mut |_, _| {})?;
    let generated = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let mut reader = ObservationReader::new(csv.as_slice(), &Schema::default())?;
    let mut sink =
        IndexSink::new(db, Durability::Checksummed, reader.measure_names())?.with_record_layout(reader.record_layout());
    let options = LoadOptions { skip_bad: false, batch_rows: None, skip_report: None };
    let summary = load(&mut reader, &mut sink, options, &mut |_, _| {})?;
    outln!(
        "meteo: generated {} rows ({:.0} MB) in {generated:.1} s, loaded in {:.1} s ({} stations, {} with all 5 measures)",
        summary.rows,
        csv.len() as f64 / 1e6,
        start.elapsed().as_secs_f64(),
        summary.stations,
        summary.complete_rows
    )?;
    let txn = db.begin_read()?;
    let view = MeteoView::open(&txn)?;
    let first = csv.split(|&byte| byte == b'\n').nth(1).unwrap_or_default();
    let station = String::from_utf8_lossy(first.split(|&byte| byte == b',').next().unwrap_or_default()).into_owned();
    let start = Instant::now();
    let range = view.range(&station, i64::MIN, i64::MAX)?;
    outln!("meteo: range  station {station:?}, all time: {} records in {:.1} ms", range.len(), ms(start))?;
    let start = Instant::now();
    let window = view.window(&[10.0, 1005.0, 0.0, 0.0, 1.0], &[15.0, 1010.0, 5.0, 0.5, 3.0])?;
    outln!(
        "meteo: window 10–15 °C, 1005–1010 hPa, dew point 0–5 °C, rain ≤ 0.5, wind 1–3: {} records in {:.1} ms",
        window.len(),
        ms(start)
    )?;
    let start = Instant::now();
    let nearest = view.knn(&[20.0, 1000.0, 10.0, 0.0, 2.0], 10)?;
    let farthest = nearest.last().and_then(|found| found.distance).unwrap_or(0.0);
    outln!(
        "meteo: kNN    10 nearest to (20 °C, 1000 hPa, 10 °C, 0 mm, 2 m/s): farthest at {farthest:.3}, in {:.1} ms",
        ms(start)
    )?;
    Ok(())
}

fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}
