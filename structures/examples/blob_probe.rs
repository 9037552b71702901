//! Probe of T6's blob reads: `write` stores `N` random blobs of 8,000–12,000 bytes
//! (4 KiB pages, a 256 MiB pool, a B+tree from the big-endian id to the `BlobRef`,
//! one commit per 1,000 blobs) into `PATH`; `read` opens `PATH` and reads every blob
//! once in a random order, printing the time and the pool's page reads. Evict the file
//! from the OS cache between the two for a cold read (T6 uses `POSIX_FADV_DONTNEED`),
//! and run `read` under `perf` to see where a cold read's time goes. With `passes` > 1
//! the reads are repeated in the same order, the same pool: the later passes are T6's
//! warm reads (the first also pays for the pool's first touch of its memory).
//!
//! `cargo run --release -p quiredb-structures --example blob_probe -- write|read PATH [n] [passes]`

use quiredb_engine::{Database, Durability, Options};
use quiredb_structures::blob::{self, BlobRef};
use quiredb_structures::btree::BTree;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use std::time::Instant;

const BATCH: u64 = 1000;
const USAGE: &str = "usage: write|read PATH [n] [passes]";

/// Bytes this process has made the kernel read from storage so far (Linux; 0 elsewhere).
fn storage_bytes_read() -> u64 {
    let io = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
    io.lines().find_map(|l| l.strip_prefix("read_bytes: ")?.trim().parse().ok()).unwrap_or(0)
}

fn options() -> Options {
    Database::builder().page_size(4096).cache_bytes(256 << 20).into_options()
}

fn write(path: &str, n: u64) -> Result<(), Box<dyn std::error::Error>> {
    let db = Database::create(path, options())?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(6);
    let mut bytes = vec![0u8; 12_000];
    for start in (0..n).step_by(BATCH as usize) {
        let txn = db.begin_write()?;
        let mut tree = BTree::open_or_create(&txn, "blobs")?;
        for id in start..(start + BATCH).min(n) {
            let len = rng.random_range(8_000..=12_000);
            rng.fill(&mut bytes[..len]);
            let stored = blob::write_bytes(&txn, &bytes[..len])?;
            tree.insert(&id.to_be_bytes(), &stored.to_bytes())?;
        }
        drop(tree);
        txn.commit(Durability::Checksummed)?;
    }
    println!("wrote {n} blobs: {} pages", db.meta().page_count);
    Ok(())
}

fn read(path: &str, n: u64, passes: u32) -> Result<(), Box<dyn std::error::Error>> {
    let db = Database::open(path, options())?;
    let mut order: Vec<u64> = (0..n).collect();
    order.shuffle(&mut rand::rngs::StdRng::seed_from_u64(7));
    for pass in 1..=passes {
        print!("pass {pass}: ");
        read_pass(&db, &order)?;
    }
    Ok(())
}

fn read_pass(db: &Database, order: &[u64]) -> Result<(), Box<dyn std::error::Error>> {
    let n = order.len();
    let (mut reference, mut out, mut total) = (Vec::new(), Vec::new(), 0u64);
    let (before, storage_before) = (db.stats(), storage_bytes_read());
    let started = Instant::now();
    for &id in order {
        let txn = db.begin_read()?;
        let tree = BTree::open(&txn, "blobs")?;
        if tree.get(&id.to_be_bytes(), &mut reference)? {
            let stored = BlobRef::from_bytes(&reference).ok_or("a reference is not 16 bytes")?;
            blob::read_to_vec(&txn, stored, &mut out)?;
            total += out.len() as u64;
        }
    }
    let secs = started.elapsed().as_secs_f64();
    let after = db.stats();
    let (reads, evictions) = (after.reads - before.reads, after.evictions - before.evictions);
    let storage = storage_bytes_read() - storage_before;
    println!("storage bytes read (readahead included): {storage}");
    println!(
        "read {n} blobs ({total} bytes) in {secs:.3} s: {:.0}/s, {reads} page reads, {evictions} evictions",
        n as f64 / secs
    );
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (mode, path) = (args.get(1).map(String::as_str), args.get(2).ok_or(USAGE)?);
    let n: u64 = args.get(3).map_or(Ok(100_000), |s| s.parse())?;
    let passes: u32 = args.get(4).map_or(Ok(1), |s| s.parse())?;
    match mode {
        Some("write") => write(path, n),
        Some("read") => read(path, n, passes),
        _ => Err(USAGE.into()),
    }
}
