//! Probe of the B+tree on a file database, for profiling and the size question of
//! T2: inserts `N` 12-byte keys / 20-byte values (sorted or shuffled, a commit every
//! 100,000), prints file size, page counts and tree fill, then times point queries
//! with one read transaction each (as the bench adapters do).
//!
//! `cargo run --release -p quiredb-structures --example btree_probe -- [n] [random|sorted] [queries] [cache MB]`
//! (the cache defaults to 256 MB; T2's "80% fits" is 0.8 × 32 B × n; `QUIRE_DIRTY=P` sets the
//! dirty limit in percent; `QUIRE_BATCH=B` the keys per transaction, 100,000 by default).

use quiredb_engine::{Database, Durability};
use quiredb_structures::btree::{self, BTree};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use std::time::Instant;

/// Keys per transaction unless `QUIRE_BATCH` says otherwise.
const BATCH: usize = 100_000;

fn key(i: u64) -> [u8; 12] {
    let mut k = [0u8; 12];
    k[..4].copy_from_slice(&((i / 1000) as u32).to_be_bytes());
    k[4..].copy_from_slice(&(1_600_000_000 + (i % 1000) * 600).to_be_bytes());
    k
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args.get(1).map_or(Ok(500_000), |s| s.parse())?;
    let random = args.get(2).is_none_or(|s| s == "random");
    let queries: usize = args.get(3).map_or(Ok(200_000), |s| s.parse())?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut order: Vec<u64> = (0..n).collect();
    if random {
        order.shuffle(&mut rng);
    }
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("probe.quire");
    let cache_mb: f64 = args.get(4).map_or(Ok(256.0), |s| s.parse())?;
    let dirty: u8 = std::env::var("QUIRE_DIRTY").ok().and_then(|v| v.parse().ok()).unwrap_or(50);
    let db = Database::create(
        &path,
        Database::builder().cache_bytes((cache_mb * 1e6) as usize).dirty_limit_percent(dirty).into_options(),
    )?;
    {
        let txn = db.begin_write()?;
        BTree::create(&txn, "kv")?;
        txn.commit(Durability::Full)?;
    }
    let started = Instant::now();
    let batch = std::env::var("QUIRE_BATCH").ok().and_then(|v| v.parse().ok()).unwrap_or(BATCH);
    for chunk in order.chunks(batch) {
        let txn = db.begin_write()?;
        let mut tree = BTree::open(&txn, "kv")?;
        let value = [7u8; 20];
        tree.insert_batch(chunk.iter().map(|&i| (key(i), value)))?;
        drop(tree);
        txn.commit(Durability::Checksummed)?;
        let meta = db.meta();
        println!("  commit: page_count {} live {}", meta.page_count, meta.live_pages);
    }
    let secs = started.elapsed().as_secs_f64();
    let stats = db.stats();
    println!(
        "pool: {} hits, {} misses, {} evictions, {} page writes, {} spilled",
        stats.hits, stats.misses, stats.evictions, stats.writes, stats.spills
    );
    println!("insert {n} ({}): {:.0} k/s", if random { "random" } else { "sorted" }, n as f64 / secs / 1e3);
    let meta = db.meta();
    let size = std::fs::metadata(&path)?.len();
    let txn = db.begin_read()?;
    let tree = BTree::open(&txn, "kv")?;
    let s = btree::stats(&tree)?;
    println!(
        "file {:.1} MB, page_count {}, live {}, leaves {}, branches {}, height {}, leaf fill {:.3}",
        size as f64 / 1e6,
        meta.page_count,
        meta.live_pages,
        s.leaves,
        s.branches,
        s.height,
        s.leaf_fill
    );
    drop(tree);
    drop(txn);
    let picks: Vec<u64> = (0..queries).map(|_| rng.random_range(0..n)).collect();
    let mut out = Vec::new();
    let started = Instant::now();
    let mut found = 0;
    for &i in &picks {
        let txn = db.begin_read()?;
        let tree = BTree::open(&txn, "kv")?;
        found += usize::from(tree.get(&key(i), &mut out)?);
    }
    let secs = started.elapsed().as_secs_f64();
    println!("point queries: {found}/{queries} found, {:.0} k/s", queries as f64 / secs / 1e3);
    small_batches(&db, n, &mut rng)
}

/// Like KV's "batch writes": 100 transactions of 1,000 random keys each (mostly new,
/// between existing ones).
fn small_batches(db: &Database, n: u64, rng: &mut rand::rngs::StdRng) -> Result<(), Box<dyn std::error::Error>> {
    let before = db.stats();
    let started = Instant::now();
    for _ in 0..100 {
        let txn = db.begin_write()?;
        let mut tree = BTree::open(&txn, "kv")?;
        let value = [3u8; 20];
        tree.insert_batch((0..1000).map(|_| {
            let mut k = key(rng.random_range(0..n));
            k[11] = k[11].wrapping_add(rng.random_range(1..255));
            (k, value)
        }))?;
        drop(tree);
        txn.commit(Durability::Checksummed)?;
    }
    let secs = started.elapsed().as_secs_f64();
    let after = db.stats();
    println!(
        "batches of 1000: {:.0} k/s, {:.1} pages written per txn",
        1e5 / secs / 1e3,
        (after.writes - before.writes) as f64 / 100.0
    );
    Ok(())
}
