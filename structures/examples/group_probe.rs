//! Probe of group commit (T7's writers phase): builds a B+tree of `N` 12-byte keys /
//! 20-byte values, then runs `T` threads making one-insert durable commits for `S`
//! seconds each, and prints commits/s, syncs and page writes per commit (a sync per
//! commit below 1 is records sharing appends, above it checkpoints).
//!
//! `cargo run --release -p quiredb-structures --example group_probe -- [n] [threads] [seconds] [plain]`
//! (`QUIRE_LOG_PAGES=P` sets the commit log's pages, the default otherwise;
//! `QUIRE_UPSERT=1` has each thread update its own 1,000 existing keys in turn, as
//! `quire-bench` T7's writers do, instead of inserting random new ones).

use quiredb_engine::{Database, Durability};
use quiredb_structures::btree::BTree;
use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args.get(1).map_or(Ok(1_000_000), |s| s.parse())?;
    let threads: u64 = args.get(2).map_or(Ok(4), |s| s.parse())?;
    let seconds: f64 = args.get(3).map_or(Ok(2.0), |s| s.parse())?;
    let group = args.get(4).is_none_or(|arg| arg != "plain");
    let upsert = std::env::var_os("QUIRE_UPSERT").is_some();
    let log_pages: u64 =
        std::env::var("QUIRE_LOG_PAGES").map_or(Ok(quiredb_engine::DEFAULT_LOG_PAGES), |v| v.parse())?;
    let dir = tempfile::tempdir()?;
    let db = Database::create(
        dir.path().join("probe.quire"),
        Database::builder().group_commit(group).cache_bytes(1 << 30).commit_log_pages(log_pages).into_options(),
    )?;
    let txn = db.begin_write()?;
    BTree::create(&txn, "kv")?.insert_batch((0..n).map(|i| ((i * 2).to_be_bytes(), [7u8; 20])))?;
    txn.commit(Durability::Checksummed)?;
    let (stop, commits) = (AtomicBool::new(false), AtomicU64::new(0));
    let before = db.stats();
    let started = Instant::now();
    std::thread::scope(|scope| -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let workers: Vec<_> = (0..threads)
            .map(|thread| {
                let (db, stop, commits) = (&db, &stop, &commits);
                scope.spawn(move || -> Result<(), quiredb_structures::Error> {
                    let mut rng = rand::rngs::StdRng::seed_from_u64(thread);
                    let mut made = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        let txn = db.begin_write()?;
                        // T7's writers: each thread upserts its own 1,000 keys in turn.
                        let key = if upsert {
                            ((made % 1000 * threads + thread) * 2).to_be_bytes()
                        } else {
                            (rng.random_range(0..n) * 2 + 1).to_be_bytes()
                        };
                        made += 1;
                        BTree::open(&txn, "kv")?.insert(&key, &[9u8; 20])?;
                        txn.commit(Durability::Checksummed)?;
                        commits.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(())
                })
            })
            .collect();
        std::thread::sleep(Duration::from_secs_f64(seconds));
        stop.store(true, Ordering::Relaxed);
        for worker in workers {
            worker.join().expect("a writer panicked")?;
        }
        Ok(())
    })
    .map_err(|error| error.to_string())?;
    let secs = started.elapsed().as_secs_f64();
    let (after, commits) = (db.stats(), commits.load(Ordering::Relaxed));
    println!(
        "{threads} writers ({}): {:.1} k commits/s, {:.2} syncs/commit, {:.2} page writes/commit",
        if group { "group" } else { "plain" },
        commits as f64 / secs / 1e3,
        (after.syncs - before.syncs) as f64 / commits as f64,
        (after.writes - before.writes) as f64 / commits as f64,
    );
    Ok(())
}
