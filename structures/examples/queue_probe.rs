//! Probe of T3's queue workload, for profilers (`perf record`, callgrind): appends `n`
//! records of `len` bytes to a queue in a file-backed database (one write transaction
//! and one commit per 100,000 records, as T3's adapters do), then
//! scans them once with `Queue::for_each` in a snapshot, and prints the wall time of
//! each phase (and the CPU time of each scan); `append` as the third argument skips the scan, `scan` scans five times,
//! `cold` scans five times after closing the database, dropping the file from the page
//! cache (`dd iflag=nocache count=0`) and reopening it (T3's cold scan).
//!
//! `QUIRE_CACHE_MIB=16` sets the pool (default 64 MiB, the engine's default and T3's);
//! commits are `Durability::Full` (two syncs, T3's `quiredb-full`);
//! `QUIRE_DURABILITY=checksummed` commits with one sync (T3's `quiredb`);
//! `QUIRE_MMAP=0` reads pages past the pool with `pread` instead of the file's map;
//! `QUIRE_HASH=1` hashes every record's words as T3's scan does (so a cold scan's reads
//! can overlap that work, as they must for T3).
//!
//! `cargo run --release -p quiredb-structures --example queue_probe -- [n] [len] [all|append|scan]`

use quiredb_engine::{Database, Durability};
use quiredb_structures::queue::Queue;
use quiredb_test_support::thread_cpu_ns;
use std::ops::ControlFlow;
use std::time::Instant;

/// Records per write transaction (T3's `BATCH`).
const BATCH: usize = 100_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).map_or(Ok(1_000_000), |s| s.parse())?;
    let len: usize = args.get(2).map_or(Ok(32), |s| s.parse())?;
    let mode = args.get(3).map(String::as_str);
    let scans = match mode {
        Some("append") => 0,
        Some("scan" | "cold") => 5,
        _ => 1,
    };
    let cold = mode == Some("cold");
    let dir = tempfile::tempdir()?;
    let durability = match std::env::var("QUIRE_DURABILITY").as_deref() {
        Ok("checksummed") => Durability::Checksummed,
        _ => Durability::Full,
    };
    let cache_mib: usize = std::env::var("QUIRE_CACHE_MIB").map_or(Ok(64), |v| v.parse())?;
    let path = dir.path().join("probe.quire");
    let mmap = std::env::var("QUIRE_MMAP").map_or(true, |v| v != "0");
    let hash = std::env::var("QUIRE_HASH").is_ok_and(|v| v == "1");
    let builder = || Database::builder().cache_bytes(cache_mib << 20).mmap_reads(mmap);
    let mut db = builder().create(&path)?;
    let record: Vec<u8> = (0..len).map(|i| i as u8).collect();
    let started = Instant::now();
    for batch in 0..n.div_ceil(BATCH) {
        let txn = db.begin_write()?;
        let mut queue = Queue::open_or_create(&txn, "t3")?;
        let mut appender = queue.appender()?;
        for _ in batch * BATCH..n.min((batch + 1) * BATCH) {
            appender.append(&record)?;
        }
        drop(appender);
        drop(queue);
        txn.commit(durability)?;
    }
    let append_s = started.elapsed().as_secs_f64();
    println!("append {n} × {len} B: {append_s:.3} s, {:.2} M/s", n as f64 / append_s / 1e6);
    for _ in 0..scans {
        if cold {
            drop(db);
            let evicted = std::process::Command::new("dd")
                .arg(format!("if={}", path.display()))
                .args(["iflag=nocache", "count=0"])
                .status()?;
            assert!(evicted.success(), "dd dropped the file from the page cache");
            db = builder().open(&path)?;
        }
        let (started, cpu) = (Instant::now(), thread_cpu_ns());
        let txn = db.begin_read()?;
        let queue = Queue::open(&txn, "t3")?;
        let mut sum = 0u64;
        let visited = queue.for_each(None, |_, bytes| {
            sum = sum.wrapping_add(if hash { word_hash(bytes) } else { u64::from(bytes[0]) + bytes.len() as u64 });
            ControlFlow::Continue(())
        })?;
        let (scan_s, cpu_s) = (started.elapsed().as_secs_f64(), thread_cpu_ns().saturating_sub(cpu) as f64 / 1e9);
        println!(
            "scan {visited} records: {scan_s:.3} s, {:.2} M/s, CPU {cpu_s:.3} s (sum {sum})",
            visited as f64 / scan_s / 1e6
        );
    }
    Ok(())
}

/// T3's record hash (`quiredb-bench`'s `check::word_hash`): every 8-byte word mixed in.
fn word_hash(bytes: &[u8]) -> u64 {
    let mut h = bytes.len() as u64;
    for chunk in bytes.chunks(8) {
        let mut w = [0u8; 8];
        w[..chunk.len()].copy_from_slice(chunk);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    h
}
