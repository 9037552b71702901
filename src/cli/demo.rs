//! `quire demo`: the README's one-command tour. Creates a database (a temporary file
//! unless `--db` is given), runs write and read transactions, and prints what it did
//! and the engine's statistics. Later parts of the project extend it with their
//! structures.

use anyhow::{Context, Result};
use quiredb_engine::{Database, Durability, Options, PageRead};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `quire demo`.
#[derive(clap::Args)]
pub struct Args {
    /// Database file to create (default: a file in a temporary directory).
    #[arg(long)]
    pub db: Option<PathBuf>,
}

/// Runs the tour.
pub fn run(args: Args) -> Result<ExitCode> {
    let scratch = tempfile::tempdir()?;
    let path = args.db.unwrap_or_else(|| scratch.path().join("demo.quire"));
    let db =
        Database::create(&path, Options::default()).with_context(|| format!("cannot create {}", path.display()))?;
    outln!("database {} (page size {} bytes, pool {} frames)", path.display(), db.page_size(), db.pool_frames())?;
    engine_tour(&db)?;
    super::demo_btree::tour(&db)?;
    super::demo_queue::tour(&db)?;
    super::demo_rtree::tour(&db)?;
    super::demo_meteo::tour(&db)?;
    super::demo_xml::tour(&db)?;
    let report = quiredb_engine::check(&db)?;
    outln!("integrity check: {}", if report.is_clean() { "clean" } else { "PROBLEMS" })?;
    outln!("stats: {:?}", db.stats())?;
    Ok(if report.is_clean() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// Raw pages through the engine: a write transaction, a durable commit, a snapshot
/// reader that keeps its view while the writer changes every page.
fn engine_tour(db: &Database) -> Result<()> {
    const PAGES: u64 = 10_000;
    let start = Instant::now();
    let txn = db.begin_write()?;
    let mut ids = Vec::with_capacity(PAGES as usize);
    for value in 0..PAGES {
        let mut page = txn.alloc_page(quiredb_structures::queue::DATA_PAGE)?;
        page[..8].copy_from_slice(&value.to_le_bytes());
        ids.push(page.id());
    }
    txn.commit(Durability::Full)?;
    outln!("engine: wrote {PAGES} pages in one transaction in {:.1} ms", start.elapsed().as_secs_f64() * 1e3)?;
    let snapshot = db.begin_read()?;
    let start = Instant::now();
    let txn = db.begin_write()?;
    for id in &ids {
        let mut page = txn.page_mut(*id)?;
        let value = u64::from_le_bytes(page[..8].try_into()?);
        page[..8].copy_from_slice(&(value + PAGES).to_le_bytes());
    }
    txn.commit(Durability::Checksummed)?;
    outln!("engine: rewrote every page (shadow copies) in {:.1} ms", start.elapsed().as_secs_f64() * 1e3)?;
    let (mut old_sum, mut new_sum) = (0u64, 0u64);
    let current = db.begin_read()?;
    for id in &ids {
        old_sum += u64::from_le_bytes(snapshot.page(*id)?[..8].try_into()?);
        new_sum += u64::from_le_bytes(current.page(*id)?[..8].try_into()?);
    }
    outln!("engine: the old snapshot still sums to {old_sum}, the new one to {new_sum}")?;
    anyhow::ensure!(new_sum == old_sum + PAGES * PAGES, "snapshot isolation violated");
    Ok(())
}
