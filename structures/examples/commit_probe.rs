//! Probe of the durable one-key commit (T1/KV individual writes): builds a B+tree of
//! `N` 24-byte keys / 150-byte values, then makes `M` commits of one random insert each
//! and prints what one commit costs in page writes, syncs and time (mean, p50, p99,
//! longest), per durability.
//!
//! With `removed`, half of the keys are removed in one transaction first (the free
//! space a commit record must then carry is large); with `update`, each commit replaces
//! the value of a random existing key with a longer one (T1's update) instead.
//!
//! `QUIRE_LOG_PAGES=2048` puts a commit log of that many pages beside the file;
//! `QUIRE_POOL_MIB=1024` sets the buffer pool (64 MiB, the default, otherwise);
//! `QUIRE_CHUNKS=1` prints the mean latency of each 100 commits in turn;
//! `QUIRE_GROUP=0` turns group commit off (on by default).
//!
//! `cargo run --release -p quiredb-structures --example commit_probe -- [n] [m] [checksummed|full|none|all] [removed|update]`

use quiredb_engine::{Database, Durability};
use quiredb_structures::btree::BTree;
use rand::{Rng, SeedableRng};
use std::time::Instant;

fn key(rng: &mut impl Rng) -> [u8; 24] {
    let mut key = [0u8; 24];
    rng.fill(&mut key[..]);
    key
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).map_or(Ok(300_000), |s| s.parse())?;
    let m: usize = args.get(2).map_or(Ok(1_000), |s| s.parse())?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("probe.quire");
    let log_pages: u64 = std::env::var("QUIRE_LOG_PAGES").map_or(Ok(0), |v| v.parse())?;
    let pool_mib: usize = std::env::var("QUIRE_POOL_MIB").map_or(Ok(64), |v| v.parse())?;
    let group = std::env::var("QUIRE_GROUP").map_or(true, |v| v != "0");
    let options =
        Database::builder().commit_log_pages(log_pages).group_commit(group).cache_bytes(pool_mib << 20).into_options();
    let db = Database::create(&path, options)?;
    let value = [5u8; 150];
    let txn = db.begin_write()?;
    let mut keys: Vec<[u8; 24]> = (0..n).map(|_| key(&mut rng)).collect();
    if std::env::var_os("QUIRE_UNSORTED").is_none() {
        keys.sort_unstable();
    }
    BTree::create(&txn, "kv")?.insert_batch(keys.iter().map(|k| (*k, value)))?;
    txn.commit(Durability::Full)?;
    let (update, longer) = (args.get(4).is_some_and(|arg| arg == "update"), [6u8; 170]);
    if args.get(4).is_some_and(|arg| arg == "removed") {
        let txn = db.begin_write()?;
        let mut tree = BTree::open(&txn, "kv")?;
        for key in keys.iter().step_by(2) {
            tree.remove(key)?;
        }
        drop(tree);
        txn.commit(Durability::Full)?;
    }
    println!("tree of {n}: page_count {} map depth {}", db.meta().page_count, db.meta().map_depth);
    let all = [Durability::Checksummed, Durability::Full, Durability::None];
    let only = args.get(3).map(|name| name.to_lowercase());
    for durability in all
        .into_iter()
        .filter(|d| only.as_ref().is_none_or(|name| name == "all" || format!("{d:?}").to_lowercase() == *name))
    {
        let before = db.stats();
        let started = Instant::now();
        let mut latencies = Vec::with_capacity(m);
        for commit in 0..m {
            let began = Instant::now();
            let txn = db.begin_write()?;
            if update {
                // A stride prime to the key count: each key once per `n` commits.
                let at = commit.wrapping_mul(7_919) % keys.len();
                BTree::open(&txn, "kv")?.insert(&keys[at], &longer)?;
            } else {
                BTree::open(&txn, "kv")?.insert(&key(&mut rng), &value)?;
            }
            txn.commit(durability)?;
            latencies.push(began.elapsed().as_secs_f64() * 1e3);
        }
        let secs = started.elapsed().as_secs_f64();
        if std::env::var_os("QUIRE_CHUNKS").is_some() {
            let means: Vec<String> =
                latencies.chunks(100).map(|c| format!("{:.0}", c.iter().sum::<f64>() * 1e3 / c.len() as f64)).collect();
            println!("  µs a commit, each 100 in turn: {}", means.join(" "));
        }
        latencies.sort_by(f64::total_cmp);
        let at = |q: f64| latencies.get(((m as f64 * q) as usize).min(m.saturating_sub(1))).copied().unwrap_or(0.0);
        let after = db.stats();
        let meta = db.meta();
        println!(
            "  last commit record {} bytes; page_count {}, live {}",
            meta.record_len, meta.page_count, meta.live_pages
        );
        println!(
            "{durability:?}: {:.3} ms/commit (p50 {:.3}, p99 {:.3}, max {:.3}), {:.2} page writes/commit, {:.2} syncs/commit, {:.2} reads/commit",
            secs * 1e3 / m as f64,
            at(0.5),
            at(0.99),
            at(1.0),
            (after.writes - before.writes) as f64 / m as f64,
            (after.syncs - before.syncs) as f64 / m as f64,
            (after.reads - before.reads) as f64 / m as f64,
        );
    }
    if let Ok(copy) = std::env::var("QUIRE_PROBE_COPY") {
        std::fs::copy(&path, copy)?; // the log's records for inspection, before any close
    }
    Ok(())
}
