//! Probe of T7's "reads with a writer" phase: builds a B+tree of `N` 12-byte keys /
//! 20-byte values in one transaction, then one thread makes one-key durable commits
//! (updating the first 10,000 keys in turn, as `quire-bench` T7's writer does) while
//! this thread reads random keys, each in its own snapshot, for `S` seconds. Prints the
//! reads' latency percentiles, how many took over 10 µs and 100 µs, and the writer's
//! commits/s: what a reader pays for a writer beside it.
//!
//! `cargo run --release -p quiredb-structures --example reader_probe -- [n] [seconds]`
//! (`QUIRE_GROUP=0` turns group commit off; `QUIRE_PREAD=1` reads pool misses with
//! `pread`; `QUIRE_NO_SYNC=1` commits with `Durability::None`; `QUIRE_NO_WRITER=1` reads
//! alone).

use quiredb_engine::{Database, Durability};
use quiredb_structures::btree::BTree;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Keys the writer updates in turn.
const WRITTEN: u64 = 10_000;

/// xorshift64*: the same reads on every run.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    state.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

/// Key `i`: a station number and a time, big-endian, as T2's are.
fn key(i: u64) -> [u8; 12] {
    let mut out = [0u8; 12];
    out[..4].copy_from_slice(&((i / 8760) as u32).to_be_bytes());
    out[4..].copy_from_slice(&(i % 8760 * 3600).to_be_bytes());
    out
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args.get(1).map_or(Ok(5_000_000), |s| s.parse())?;
    let seconds: f64 = args.get(2).map_or(Ok(3.0), |s| s.parse())?;
    let flag = |name: &str| std::env::var(name).is_ok_and(|value| value != "0");
    let group = !std::env::var("QUIRE_GROUP").is_ok_and(|value| value == "0");
    let durability = if flag("QUIRE_NO_SYNC") { Durability::None } else { Durability::Checksummed };
    let dir = tempfile::tempdir()?;
    let db = Database::builder()
        .group_commit(group)
        .mmap_reads(!flag("QUIRE_PREAD"))
        .cache_bytes(1 << 30)
        .create(dir.path().join("probe.quire"))?;
    let txn = db.begin_write()?;
    BTree::create(&txn, "kv")?.insert_batch((0..n).map(|i| (key(i), [7u8; 20])))?;
    txn.commit(Durability::Checksummed)?;
    let (stop, commits) = (AtomicBool::new(false), AtomicU64::new(0));
    let mut latencies = Vec::with_capacity(8 << 20);
    std::thread::scope(|scope| -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let writer = (!flag("QUIRE_NO_WRITER")).then(|| {
            let (db, stop, commits) = (&db, &stop, &commits);
            scope.spawn(move || -> Result<(), quiredb_structures::Error> {
                let mut made = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let txn = db.begin_write()?;
                    BTree::open(&txn, "kv")?.insert(&key(made % WRITTEN), &made.to_le_bytes().repeat(2)[..12])?;
                    txn.commit(durability)?;
                    made += 1;
                    commits.fetch_add(1, Ordering::Relaxed);
                }
                Ok(())
            })
        });
        let (mut state, mut out, mut found) = (5u64, Vec::new(), 0u64);
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs_f64(seconds) {
            let target = key(next(&mut state) % n);
            let t0 = Instant::now();
            let txn = db.begin_read()?;
            found += u64::from(BTree::open(&txn, "kv")?.get(&target, &mut out)?);
            drop(txn);
            latencies.push(t0.elapsed().as_nanos() as u64);
        }
        stop.store(true, Ordering::Relaxed);
        if let Some(writer) = writer {
            writer.join().expect("the writer panicked")?;
        }
        assert_eq!(found, latencies.len() as u64, "every key is found");
        Ok(())
    })
    .map_err(|error| error.to_string())?;
    latencies.sort_unstable();
    let at = |p: f64| latencies[((latencies.len() - 1) as f64 * p / 100.0) as usize] as f64 / 1e3;
    let over = |ns: u64| latencies.len() - latencies.partition_point(|&l| l <= ns);
    println!(
        "{} reads: p50 {:.2} µs, p99 {:.2} µs, p99.9 {:.1} µs, max {:.0} µs; over 10 µs {}, over 100 µs {}; writer {:.1} k commits/s",
        latencies.len(),
        at(50.0),
        at(99.0),
        at(99.9),
        at(100.0),
        over(10_000),
        over(100_000),
        commits.load(Ordering::Relaxed) as f64 / seconds / 1e3,
    );
    Ok(())
}
