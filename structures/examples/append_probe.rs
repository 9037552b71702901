//! Probe of T2's sorted insert (issue 23): `N` records of 12-byte keys (a station id and
//! a time, big-endian, ascending) with 20-byte values, inserted with `insert_batch` in
//! write transactions of 100,000 (T2's batches), each committed with the default
//! `Durability::Checksummed`, into a pool of `POOL_MIB` MiB. Prints the time spent in
//! the inserts and in the commits, and the CPU time of the whole load (thread
//! schedstat), for `perf record` or callgrind to explain.
//!
//! `cargo run --release -p quiredb-structures --example append_probe -- [n] [pool MiB]`
//! (defaults: 5,000,000 records, 1024 MiB).

use quiredb_engine::{Database, Durability};
use quiredb_structures::btree::BTree;
use quiredb_test_support::thread_cpu_ns;
use std::time::{Duration, Instant};

/// Records per write transaction (T2's batch).
const BATCH: u64 = 100_000;
/// Readings per station before the next station's (about a year of hourly readings).
const PER_STATION: u64 = 8_760;

fn record(index: u64) -> ([u8; 12], [u8; 20]) {
    let mut key = [0u8; 12];
    key[..4].copy_from_slice(&((index / PER_STATION) as u32).to_be_bytes());
    key[4..].copy_from_slice(&(1_600_000_000 + (index % PER_STATION) * 3_600).to_be_bytes());
    let mut value = [0u8; 20];
    for (at, chunk) in value.chunks_mut(4).enumerate() {
        chunk.copy_from_slice(&((index as f32) * 0.1 + at as f32).to_le_bytes());
    }
    (key, value)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: u64 = args.first().map_or(Ok(5_000_000), |text| text.parse())?;
    let pool_mib: usize = args.get(1).map_or(Ok(1024), |text| text.parse())?;
    let records: Vec<([u8; 12], [u8; 20])> = (0..n).map(record).collect();
    let dir = tempfile::tempdir()?;
    let db = Database::builder().cache_bytes(pool_mib << 20).create(dir.path().join("append.quire"))?;
    let txn = db.begin_write()?;
    BTree::create(&txn, "t2")?;
    txn.commit(Durability::Checksummed)?;
    let (mut inserting, mut committing) = (Duration::ZERO, Duration::ZERO);
    let (started, cpu) = (Instant::now(), thread_cpu_ns());
    for batch in records.chunks(BATCH as usize) {
        let at = Instant::now();
        let txn = db.begin_write()?;
        let mut tree = BTree::open(&txn, "t2")?;
        tree.insert_batch(batch.iter().map(|(key, value)| (&key[..], &value[..])))?;
        drop(tree);
        let inserted = Instant::now();
        txn.commit(Durability::Checksummed)?;
        (inserting, committing) = (inserting + (inserted - at), committing + inserted.elapsed());
    }
    let (total, cpu_s) = (started.elapsed().as_secs_f64(), thread_cpu_ns().saturating_sub(cpu) as f64 / 1e9);
    println!(
        "{n} records, pool {pool_mib} MiB: inserts {:.3} s, commits {:.3} s, total {total:.3} s ({:.0} ns a record), CPU {cpu_s:.3} s",
        inserting.as_secs_f64(),
        committing.as_secs_f64(),
        total * 1e9 / n as f64
    );
    Ok(())
}
