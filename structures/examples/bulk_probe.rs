//! Probe of the one-transaction bulk load (KV's "bulk load (1 txn)", issue 23): inserts
//! `N` random 24-byte keys with 150-byte values, in random order, through one
//! `insert_batch` in one write transaction, commits it, and prints the time of the
//! inserts and of the commit, for a pool of `POOL_MIB` MiB. Run it under `perf` or
//! `valgrind --tool=callgrind` to see where a large transaction's time goes.
//!
//! `cargo run --release -p quiredb-structures --example bulk_probe -- [n] [pool MiB]`
//! (defaults: 1,000,000 keys, 1024 MiB).

use quiredb_engine::{Database, Durability};
use quiredb_structures::btree::BTree;
use std::time::Instant;

/// xorshift64*: the same data on every run.
fn fill(state: &mut u64, out: &mut [u8]) {
    for chunk in out.chunks_mut(8) {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        let word = state.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes();
        chunk.copy_from_slice(&word[..chunk.len()]);
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.first().map_or(Ok(1_000_000), |text| text.parse())?;
    let pool_mib: usize = args.get(1).map_or(Ok(1024), |text| text.parse())?;
    let mut state = 0x5155_4952_4544_4231u64;
    let pairs: Vec<([u8; 24], [u8; 150])> = (0..n)
        .map(|_| {
            let (mut key, mut value) = ([0u8; 24], [0u8; 150]);
            fill(&mut state, &mut key);
            fill(&mut state, &mut value);
            (key, value)
        })
        .collect();
    let dir = tempfile::tempdir()?;
    let db = Database::builder().cache_bytes(pool_mib << 20).create(dir.path().join("bulk.quire"))?;
    let start = Instant::now();
    let txn = db.begin_write()?;
    let mut tree = BTree::create(&txn, "kv")?;
    tree.insert_batch(pairs.iter().map(|(key, value)| (&key[..], &value[..])))?;
    drop(tree);
    let inserted = start.elapsed();
    txn.commit(Durability::Checksummed)?;
    let total = start.elapsed();
    let size = std::fs::metadata(dir.path().join("bulk.quire"))?.len();
    println!(
        "{n} keys, pool {pool_mib} MiB: inserts {:.3} s, commit {:.3} s, total {:.3} s ({:.0} k/s), file {:.1} MB",
        inserted.as_secs_f64(),
        (total - inserted).as_secs_f64(),
        total.as_secs_f64(),
        n as f64 / total.as_secs_f64() / 1e3,
        size as f64 / 1e6
    );
    Ok(())
}
