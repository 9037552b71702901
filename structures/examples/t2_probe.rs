//! A probe for `quire-bench` T2's random insert (issue 23): N records of a 12-byte key
//! (T2's station + time shape, in random order) and a 20-byte value, inserted through
//! `insert_batch` in durable commits of BATCH records on a pool of POOL_MIB, as T2's
//! "all fits" phase does. Prints, every STEP records, the rate and the process's CPU
//! time of that stretch, so a profile attached early (`perf record -p`) and one
//! attached late show what grows with the tree.
//!
//! ```sh
//! cargo run --release -p quiredb-structures --example t2_probe -- /tmp/t2.quire 57852305 100000 7500
//! ```

use quiredb_engine::{Database, Durability};
use quiredb_structures::btree::BTree;
use std::time::Instant;

/// Records between two progress lines.
const STEP: u64 = 5_000_000;

/// A bijection of u64 (splitmix64's finaliser): distinct records get distinct keys.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

fn key(index: u64) -> [u8; 12] {
    let mut out = [0u8; 12];
    out[..4].copy_from_slice(&((index % 4_000) as u32).to_be_bytes()); // the station
    out[4..].copy_from_slice(&mix(index).to_be_bytes()); // the time, scrambled
    out
}

/// User + system CPU seconds of this process so far (`/proc/self/stat`, clock ticks).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path, n, batch, pool_mib] = args.as_slice() else {
        return Err("usage: t2_probe FILE N BATCH POOL_MIB".into());
    };
    let (n, batch, pool_mib): (u64, u64, usize) = (n.parse()?, batch.parse()?, pool_mib.parse()?);
    let _ = std::fs::remove_file(path);
    let db = Database::builder().cache_bytes(pool_mib << 20).create(path)?;
    let txn = db.begin_write()?;
    BTree::create(&txn, "kv")?;
    txn.commit(Durability::Full)?;
    let (mut wall, mut cpu, mut done, mut since) = (Instant::now(), cpu_seconds(), 0u64, 0u64);
    // Records in a random order: a multiplicative permutation of 0..n.
    let order = |i: u64| i.wrapping_mul(0x9E37_79B9_7F4A_7C15 | 1) % n.next_power_of_two();
    let mut next = 0u64;
    while done < n {
        let mut pairs = Vec::with_capacity(batch as usize);
        while (pairs.len() as u64) < batch && done + (pairs.len() as u64) < n {
            let index = order(next);
            next += 1;
            if index < n {
                pairs.push((key(index), [index as u8; 20]));
            }
        }
        let txn = db.begin_write()?;
        BTree::open(&txn, "kv")?.insert_batch(pairs.iter().map(|(k, v)| (k, v)))?;
        txn.commit(Durability::Checksummed)?;
        done += pairs.len() as u64;
        since += pairs.len() as u64;
        if since >= STEP || done == n {
            let (now, cpu_now) = (Instant::now(), cpu_seconds());
            println!(
                "{done} records: {:.1} k/s, {:.2} µs CPU a record since the last line",
                since as f64 / 1e3 / (now - wall).as_secs_f64().max(1e-9),
                (cpu_now - cpu) * 1e6 / since as f64,
            );
            (wall, cpu, since) = (now, cpu_now, 0);
        }
    }
    println!("file: {} MB", std::fs::metadata(path)?.len() / 1_000_000);
    Ok(())
}
