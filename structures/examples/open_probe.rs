//! Probe of recovery: opens a file read-write (replaying its commit log, if it holds
//! records) and prints how long the open took. Make the file with `commit_probe` and
//! `QUIRE_PROBE_COPY=FILE` (a copy taken while the database is open: what a killed
//! process leaves), e.g. 6 M keys (≈ 1 GB) and 3,000 one-key commits:
//!
//! `QUIRE_LOG_PAGES=2048 QUIRE_PROBE_COPY=/tmp/c.quire cargo run --release -p quiredb-structures --example commit_probe -- 6000000 3000 checksummed`
//! `cargo run --release -p quiredb-structures --example open_probe -- /tmp/c.quire`

use quiredb_engine::Database;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: open_probe FILE")?;
    let bytes = std::fs::metadata(&path)?.len();
    let log_pages: u64 = std::env::var("QUIRE_LOG_PAGES").map_or(Ok(2048), |v| v.parse())?;
    let options = Database::builder().commit_log_pages(log_pages).into_options();
    let started = Instant::now();
    let db = Database::open(&path, options)?;
    let took = started.elapsed();
    let meta = db.meta();
    println!(
        "{bytes} bytes: open {:.1} ms; txn {}, page_count {}, map depth {}",
        took.as_secs_f64() * 1e3,
        meta.txn.0,
        meta.page_count,
        meta.map_depth
    );
    Ok(())
}
