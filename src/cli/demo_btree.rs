//! `quire demo`, B+tree and blob part: bulk-loads 200,000 station/time keys, inserts
//! and removes in durable transactions, answers point, floor/ceiling and range
//! queries through a typed table, stores a 5 MB blob and reads a slice of it, and
//! prints timings, tree shape and leaf fill.

use anyhow::{Result, ensure};
use quiredb_engine::{Database, Durability};
use quiredb_structures::Structures;
use quiredb_structures::blob;
use quiredb_structures::btree;
use quiredb_structures::table::TableDef;
use std::time::Instant;

const STATIONS: u64 = 200;
const HOURS: u64 = 1000;
/// (station, hour) → temperature in °C.
const TEMPERATURES: TableDef<(u64, u64), f64> = TableDef::new("demo_temperatures");

fn reading(station: u64, hour: u64) -> f64 {
    ((station * 31 + hour * 7) % 400) as f64 / 10.0 - 10.0
}

/// Runs the B+tree and blob tour on `db`.
pub fn tour(db: &Database) -> Result<()> {
    bulk(db)?;
    edits(db)?;
    queries(db)?;
    blobs(db)
}

/// Sorted bulk load of (station, hour) → temperature.
fn bulk(db: &Database) -> Result<()> {
    let start = Instant::now();
    let txn = db.begin_write()?;
    let mut tree = txn.open_table(TEMPERATURES)?;
    let entries =
        (0..STATIONS).flat_map(|station| (0..HOURS).map(move |hour| ((station, hour), reading(station, hour))));
    let loaded = tree.bulk_load(entries)?;
    let stats = btree::stats(tree.untyped())?;
    drop(tree);
    txn.commit(Durability::Full)?;
    outln!(
        "btree: bulk-loaded {loaded} (station, hour) keys in {:.1} ms: height {}, {} leaves at {:.1}% fill, {} branches",
        start.elapsed().as_secs_f64() * 1e3,
        stats.height,
        stats.leaves,
        stats.leaf_fill * 100.0,
        stats.branches
    )?;
    Ok(())
}

/// Durable single-key transactions: inserts, one update, removals.
fn edits(db: &Database) -> Result<()> {
    let start = Instant::now();
    for hour in HOURS..HOURS + 100 {
        let txn = db.begin_write()?;
        let mut tree = txn.open_table(TEMPERATURES)?;
        tree.insert((7, hour), reading(7, hour))?;
        drop(tree);
        txn.commit(Durability::Checksummed)?;
    }
    let per_commit = start.elapsed().as_secs_f64() * 1e6 / 100.0;
    let txn = db.begin_write()?;
    let mut tree = txn.open_table(TEMPERATURES)?;
    for hour in 0..HOURS / 2 {
        tree.remove((199, hour))?;
    }
    let problems = btree::check(tree.untyped())?;
    ensure!(problems.is_empty(), "B+tree check: {problems:?}");
    let len = tree.len();
    drop(tree);
    txn.commit(Durability::Full)?;
    outln!(
        "btree: 100 single-insert durable commits at {per_commit:.0} µs each; removed 500 keys; {len} keys, checker clean"
    )?;
    Ok(())
}

/// Point, floor/ceiling and range queries through a typed table.
fn queries(db: &Database) -> Result<()> {
    let txn = db.begin_read()?;
    let tree = txn.open_table(TEMPERATURES)?;
    let start = Instant::now();
    let mut sum = 0.0;
    for i in 0..100_000u64 {
        let key = ((i * 7919) % STATIONS, (i * 104_729) % HOURS);
        sum += tree.get(key)?.map_or(0.0, |value| value.value());
    }
    let lookup_ns = start.elapsed().as_secs_f64() * 1e9 / 100_000.0;
    let floor = tree.range(..=(199, 0))?.next_back().transpose()?.map(|(key, _)| key.key());
    let ceiling = tree.range((199, 0)..)?.next().transpose()?.map(|(key, _)| key.key());
    let day: Vec<f64> =
        tree.range((42, 24)..(42, 48))?.map(|entry| entry.map(|(_, t)| t.value())).collect::<Result<_, _>>()?;
    let mean = day.iter().sum::<f64>() / day.len() as f64;
    outln!("btree: 100,000 random lookups at {lookup_ns:.0} ns each (checksum {sum:.1})")?;
    outln!(
        "btree: floor(199, 0) = {:?}, ceiling(199, 0) = {:?}; station 42, day 2: {} readings, mean {mean:.2} °C",
        floor,
        ceiling,
        day.len()
    )?;
    Ok(())
}

/// A 5 MB blob: streaming write, positional read.
fn blobs(db: &Database) -> Result<()> {
    let data: Vec<u8> = (0..5_000_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    let start = Instant::now();
    let txn = db.begin_write()?;
    let stored = blob::put_named(&txn, "demo_blob", &mut &data[..])?;
    txn.commit(Durability::Full)?;
    let written = start.elapsed();
    let txn = db.begin_read()?;
    let stored = blob::get_named(&txn, "demo_blob")?.unwrap_or(stored);
    let mut slice = vec![0u8; 1000];
    let got = blob::read_at(&txn, stored, 3_000_000, &mut slice)?;
    ensure!(got == 1000 && slice[..] == data[3_000_000..3_001_000], "blob slice reads back");
    outln!(
        "blob: wrote {} bytes in {:.1} ms; read_at(3,000,000, 1000 bytes) matches; length {} without reading",
        data.len(),
        written.as_secs_f64() * 1e3,
        blob::len(&txn, stored)?
    )?;
    Ok(())
}
