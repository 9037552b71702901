//! A probe for `quire-bench` T1's search phase (issue 22): a fresh file on the default
//! options, KEYS random 16-byte string keys with 32-byte values inserted one durable
//! commit each (as T1 does), then PASSES timed passes of one lookup per key, each in its
//! own snapshot, printing nanoseconds a lookup per pass. T1 times only the first pass
//! right after the inserts; the later ones show what a warm lookup costs.
//! `QUIRE_COMMIT_BETWEEN=1` commits a one-key insert before each pass after the first
//! (each pass then reads a newer snapshot, right after a durable commit).
//!
//! ```sh
//! cargo run --release -p quiredb-structures --example t1_probe -- /tmp/t1.quire 1000 5
//! ```

use quiredb_engine::{Database, Durability};
use quiredb_structures::btree::BTree;
use std::time::Instant;

/// xorshift64*: the same keys on every run.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    state.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

fn text(state: &mut u64, len: usize) -> String {
    (0..len).map(|_| char::from(b'a' + (next(state) % 26) as u8)).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path, keys, passes] = args.as_slice() else {
        return Err("usage: t1_probe FILE KEYS PASSES".into());
    };
    let (keys, passes): (usize, u32) = (keys.parse()?, passes.parse()?);
    let _ = std::fs::remove_file(path);
    let db = Database::builder().cache_bytes(1 << 30).create(path)?;
    let txn = db.begin_write()?;
    BTree::create(&txn, "kv")?;
    txn.commit(Durability::Full)?;
    let mut state = 7u64;
    let pairs: Vec<(String, String)> = (0..keys).map(|_| (text(&mut state, 16), text(&mut state, 32))).collect();
    let start = Instant::now();
    for (key, value) in &pairs {
        let txn = db.begin_write()?;
        BTree::open(&txn, "kv")?.insert(key.as_bytes(), value.as_bytes())?;
        txn.commit(Durability::Checksummed)?;
    }
    println!("insert: {:.1} µs a commit", start.elapsed().as_secs_f64() * 1e6 / keys as f64);
    let mut out = Vec::new();
    let commit_between = std::env::var_os("QUIRE_COMMIT_BETWEEN").is_some();
    let between = if std::env::var_os("QUIRE_NO_SYNC").is_some() { Durability::None } else { Durability::Checksummed };
    for pass in 0..passes {
        if commit_between && pass > 0 {
            let txn = db.begin_write()?;
            BTree::open(&txn, "kv")?.insert(b"~", &pass.to_le_bytes())?;
            txn.commit(between)?;
        }
        let (start, mut found) = (Instant::now(), 0usize);
        for (key, _) in &pairs {
            let txn = db.begin_read()?;
            found += usize::from(BTree::open(&txn, "kv")?.get(key.as_bytes(), &mut out)?);
        }
        let ns = start.elapsed().as_secs_f64() * 1e9 / keys as f64;
        println!("search pass {pass}: {ns:.0} ns a lookup ({found} found)");
    }
    Ok(())
}
