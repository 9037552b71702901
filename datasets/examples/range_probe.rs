//! Probe of a meteorological range read into Arrow batches (what the Python package's
//! `Database.range(...)` does, without Python): opens `DB`, reads the records of one
//! station `REPEAT` times on one thread (or two with `two`) and prints rows and CPU-free
//! wall time per run, for profiling with `perf record`.
//!
//! `cargo run --release -p quiredb-datasets --features arrow --example range_probe -- DB STATION [REPEAT] [two]`

use quiredb_datasets::meteo::arrow::{range, range_on_two_threads};
use quiredb_engine::Database;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (path, station) = (&args[1], args[2].as_str());
    let repeat: usize = args.get(3).map_or(Ok(5), |s| s.parse())?;
    let two = args.get(4).is_some_and(|arg| arg == "two");
    let db = Database::builder().cache_bytes(1 << 30).open_read_only(path)?;
    for _ in 0..repeat {
        let started = Instant::now();
        let batches = if two {
            range_on_two_threads(&db, Some(station), i64::MIN..=i64::MAX)?
        } else {
            range(&db.begin_read()?, Some(station), i64::MIN..=i64::MAX, usize::MAX)?
        };
        let rows: usize = batches.iter().map(|batch| batch.num_rows()).sum();
        println!("{rows} rows in {:.3} s", started.elapsed().as_secs_f64());
    }
    Ok(())
}
