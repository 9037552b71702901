//! A profiling probe for the B+tree read path (issue 22): loads `--keys` random 24-byte
//! keys with 150-byte values (the KV workload's shape) into a file once, then times
//! random point lookups or 10-pair range reads, each in its own snapshot as a user's
//! one-off read would be. Run it under `perf stat`, `perf record` or
//! `valgrind --tool=callgrind` to see what one lookup costs:
//!
//! ```sh
//! cargo run --release -p quiredb-structures --example lookup_probe -- /tmp/probe.quire 1000000 2000000 get 1024
//! ```
//!
//! Arguments: file, keys, operations, `get`, `range` (10 pairs through `entries`) or
//! `cursor` (10 pairs through a cursor, values borrowed in place, as the `quire-bench`
//! KV adapter reads them), `begin` (only the snapshot's begin and drop), `open` (those and
//! the tree's open) or `remove` (OPS random keys removed with one `remove_batch`,
//! as KV's "remove half" does; the transaction is then dropped, the file unchanged),
//! pool MiB (default 1024), and `pread` to read pool misses with `pread` instead of
//! from the file's memory map (the default, `Options::mmap_reads`).
//!
//! `QUIRE_SHAPE=t2` gives the keys and values T2's shape instead (12 and 20 bytes: a
//! meteorological record's station and time, its five measures), so that nodes hold
//! the hundreds of entries a large T2 tree has.
//!
//! `QUIRE_POLLUTE_MIB=174` reads one byte at a random place of an array that large
//! before each lookup, as `quire-bench` KV reads each key from its 174 MB pair array:
//! the CPU's caches then hold what they hold in the harness, not the whole tree's
//! upper levels.
//!
//! `QUIRE_THREADS=2` runs each pass in that many threads at once (each its own keys).
//! `QUIRE_PASSES=2` times that many passes over the same keys (each line gives the
//! pool's hits and misses of its pass); `QUIRE_COMMIT_BETWEEN=1` commits a one-key
//! insert before each pass after the first, so that the pass reads a newer snapshot
//! than every frame was seen in (what a query after a load does); `QUIRE_BULK=1` builds the file with one
//! `insert_batch`, as `quire-bench` KV's bulk load does, instead of one insert a key.

use quiredb_engine::{Database, Durability};
use quiredb_structures::btree::BTree;
use std::ops::Bound;
use std::time::Instant;

const KEY_LEN: usize = 24;
const VALUE_LEN: usize = 150;

/// Bytes of a key and of a value: the KV workload's by default, T2's with `QUIRE_SHAPE=t2`.
fn shape() -> (usize, usize) {
    if std::env::var("QUIRE_SHAPE").is_ok_and(|shape| shape == "t2") { (12, 20) } else { (KEY_LEN, VALUE_LEN) }
}

/// xorshift64*: the same keys on every run.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    state.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

fn key(index: u64) -> [u8; KEY_LEN] {
    let mut state = index.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = [0u8; KEY_LEN];
    for chunk in out.chunks_mut(8) {
        chunk.copy_from_slice(&next(&mut state).to_le_bytes());
    }
    out
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path, keys, ops, mode, rest @ ..] = args.as_slice() else {
        return Err("usage: lookup_probe FILE KEYS OPS get|range|cursor|begin|open|remove [POOL_MIB [pread]]".into());
    };
    let (keys, ops): (u64, u64) = (keys.parse()?, ops.parse()?);
    let pool_mib: usize = rest.first().map_or(Ok(1024), |text| text.parse())?;
    let pread = rest.get(1).is_some_and(|flag| flag == "pread");
    let builder = Database::builder().cache_bytes(pool_mib << 20).mmap_reads(!pread);
    let db = if std::path::Path::new(path).exists() {
        builder.open(path)?
    } else {
        let db = builder.create(path)?;
        let txn = db.begin_write()?;
        let mut tree = BTree::create(&txn, "kv")?;
        let (key_len, value_len) = shape();
        let value = |index: u64| vec![index as u8; value_len];
        if std::env::var_os("QUIRE_BULK").is_some() {
            tree.insert_batch((0..keys).map(|index| (key(index)[..key_len].to_vec(), value(index))))?;
        } else {
            for index in 0..keys {
                tree.insert(&key(index)[..key_len], &value(index))?;
            }
        }
        drop(tree);
        txn.commit(Durability::Checksummed)?;
        db
    };
    if mode == "remove" {
        return remove(&db, keys, ops);
    }
    let passes: u32 = std::env::var("QUIRE_PASSES").map_or(Ok(1), |v| v.parse())?;
    let threads: u64 = std::env::var("QUIRE_THREADS").map_or(Ok(1), |v| v.parse())?;
    let commit_between = std::env::var_os("QUIRE_COMMIT_BETWEEN").is_some();
    let pollute_mib: usize = std::env::var("QUIRE_POLLUTE_MIB").map_or(Ok(0), |v| v.parse())?;
    let pollution: Vec<u8> = (0..pollute_mib << 20).map(|at| at as u8).collect();
    for round in 0..passes {
        if commit_between && round > 0 {
            let txn = db.begin_write()?;
            BTree::open(&txn, "kv")?.insert(&[0xff; 12], &round.to_le_bytes())?;
            txn.commit(Durability::Checksummed)?;
        }
        let before = db.stats();
        let start = Instant::now();
        let found = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|thread| {
                    scope.spawn({
                        let (db, pollution) = (&db, &pollution);
                        move || pass(db, mode, keys, ops, 7 + thread * 7919, pollution)
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|worker| worker.join().expect("a reader thread panicked"))
                .sum::<Result<u64, String>>()
        })?;
        let elapsed = start.elapsed();
        let stats = db.stats();
        println!(
            "{threads}x{ops} {mode} in {elapsed:.2?}: {:.0} ns/op a thread, found {found}, pool hits {} misses {}",
            elapsed.as_nanos() as f64 / ops as f64,
            stats.hits - before.hits,
            stats.misses - before.misses
        );
    }
    Ok(())
}

/// `ops` random reads from the xorshift stream seeded with `seed`, each after a read
/// of one random byte of `pollution` (if not empty); what they found.
fn pass(db: &Database, mode: &str, keys: u64, ops: u64, seed: u64, pollution: &[u8]) -> Result<u64, String> {
    if mode == "shared" {
        return shared(db, keys, ops, seed);
    }
    let (mut state, mut found, mut out) = (seed, 0u64, Vec::new());
    let key_len = shape().0;
    for _ in 0..ops {
        let index = next(&mut state);
        if let Some(byte) = pollution.get(index as usize % pollution.len().max(1)) {
            std::hint::black_box(*byte);
        }
        let target = key(index % keys);
        found += lookup(db, mode, &target[..key_len], &mut out).map_err(|e| e.to_string())?;
    }
    Ok(found)
}

/// `ops` random point reads in one snapshot (mode `shared`): what a lookup costs
/// without the snapshot's begin, the tree's open and the drop around it.
fn shared(db: &Database, keys: u64, ops: u64, seed: u64) -> Result<u64, String> {
    let (mut state, mut found, mut out) = (seed, 0u64, Vec::new());
    let key_len = shape().0;
    let txn = db.begin_read().map_err(|e| e.to_string())?;
    let tree = BTree::open(&txn, "kv").map_err(|e| e.to_string())?;
    for _ in 0..ops {
        let target = key(next(&mut state) % keys);
        found += u64::from(tree.get(&target[..key_len], &mut out).map_err(|e| e.to_string())?);
    }
    Ok(found)
}

/// Removes the keys of `ops` random indexes (repeats included) with one `remove_batch`
/// in one transaction, as `quire-bench` KV's "remove half" does, and times it (the
/// commit apart); the file is left as it was (the transaction is aborted).
fn remove(db: &Database, keys: u64, ops: u64) -> Result<(), Box<dyn std::error::Error>> {
    let mut state = 11u64;
    let key_len = shape().0;
    let targets: Vec<Vec<u8>> = (0..ops).map(|_| key(next(&mut state) % keys)[..key_len].to_vec()).collect();
    let txn = db.begin_write()?;
    let mut tree = BTree::open(&txn, "kv")?;
    let start = Instant::now();
    let removed = tree.remove_batch(&targets)?;
    let elapsed = start.elapsed();
    println!("{ops} remove in {elapsed:.2?}: {:.0} ns/op, removed {removed}", elapsed.as_nanos() as f64 / ops as f64);
    Ok(())
}

/// One read of `target` in its own snapshot, as `mode` says; what it found, counted.
fn lookup(db: &Database, mode: &str, target: &[u8], out: &mut Vec<u8>) -> Result<u64, Box<dyn std::error::Error>> {
    let txn = db.begin_read()?;
    if mode == "begin" {
        return Ok(u64::from(txn.meta().txn.0 > 0));
    }
    let tree = BTree::open(&txn, "kv")?;
    let mut found = 0;
    if mode == "open" {
        found += 1;
    } else if mode == "get" {
        found += u64::from(tree.get(target, out)?);
    } else if mode == "cursor" {
        let mut cursor = tree.cursor();
        cursor.seek(target)?;
        for _ in 0..10 {
            let (Some(key), Some(value)) = (cursor.key(), cursor.value_in(out)?) else { break };
            found += (key.len() + value.len()) as u64;
            cursor.move_next()?;
        }
    } else {
        for entry in tree.entries(Bound::Included(target), Bound::Unbounded).take(10) {
            found += entry?.1.len() as u64;
        }
    }
    Ok(found)
}
