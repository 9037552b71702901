//! `quire info`, `quire check`, `quire compact`: look at and maintain a database file.
//!
//! `check` runs the engine's page accounting and checksum walk, then every structure's
//! own invariant checker (`quiredb_structures::check`). `info` and `check` open the
//! file read-only: looking at a file never changes it, even one whose newest commit
//! was rejected at open (they say so, and `check` then exits non-zero).

use anyhow::{Context, Result};
use quiredb_engine::{Database, Options, PageRead};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `quire info`.
#[derive(clap::Args)]
pub struct InfoArgs {
    /// Database file.
    pub path: PathBuf,
}

/// Arguments of `quire check`.
#[derive(clap::Args)]
pub struct CheckArgs {
    /// Database file.
    pub path: PathBuf,
}

/// Arguments of `quire compact`.
#[derive(clap::Args)]
pub struct CompactArgs {
    /// Database file.
    pub path: PathBuf,
    /// Pages one step moves (each step is one short write transaction: readers never
    /// wait, a writer waits for one step at most).
    #[arg(long, default_value_t = 4096)]
    pub budget: u64,
    /// Stop after this many steps (default: until the file is as small as it gets).
    #[arg(long)]
    pub steps: Option<u64>,
}

fn open(path: &PathBuf) -> Result<Database> {
    Database::open(path, Options::default()).with_context(|| format!("cannot open {}", path.display()))
}

fn open_read_only(path: &PathBuf) -> Result<Database> {
    Database::open_read_only(path, Options::default()).with_context(|| format!("cannot open {}", path.display()))
}

/// Prints the newest meta page and the catalog.
pub fn info(args: InfoArgs) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    let db = open_read_only(&args.path)?;
    let meta = db.meta();
    let file_bytes = std::fs::metadata(&args.path)?.len();
    writeln!(out, "file            {} ({file_bytes} bytes)", args.path.display())?;
    writeln!(out, "page size       {} bytes", meta.page_size)?;
    writeln!(out, "transaction     {}", meta.txn)?;
    writeln!(out, "durability      {:?}", meta.durability)?;
    writeln!(out, "physical pages  {}", meta.page_count)?;
    writeln!(out, "logical pages   {} live, next id {}", meta.live_pages, meta.logical_next)?;
    writeln!(out, "page map        root {} depth {}", meta.map_root, meta.map_depth)?;
    match db.rollback() {
        Some(rollback) => writeln!(out, "rollback        {rollback}"),
        None => writeln!(out, "rollback        none (the newest meta verified)"),
    }?;
    let stats = db.stats();
    match stats.oldest_reader_txn {
        Some(txn) => writeln!(
            out,
            "oldest reader   snapshot {txn}, {} commits behind, holding {} freed pages",
            stats.oldest_reader_commits_behind, stats.pages_held_by_readers
        ),
        None => writeln!(out, "oldest reader   none"),
    }?;
    let txn = db.begin_read()?;
    let entries = txn.catalog_list()?;
    writeln!(out, "structures      {}", entries.len())?;
    for entry in entries {
        writeln!(out, "  {:<24} {:<6} root {}", entry.name, entry.kind.name(), entry.root)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Verifies the file; exit status 0 only when clean.
pub fn check(args: CheckArgs) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    let db = open_read_only(&args.path)?;
    let report = quiredb_engine::check(&db)?;
    writeln!(
        out,
        "checked transaction {}: {} pages = {} page-map + {} data + {} commit-record + {} free + 2 meta",
        report.txn, report.page_count, report.map_pages, report.data_pages, report.record_pages, report.free_pages
    )?;
    let (named, unknown) = name_kinds(&report.kinds);
    writeln!(out, "data pages by kind: {}", named.join(", "))?;
    if let Some(rollback) = &report.rollback {
        writeln!(out, "problem: rollback at open: {rollback}")?;
    }
    for problem in &unknown {
        writeln!(out, "problem: {problem}")?;
    }
    for problem in &report.problems {
        writeln!(out, "problem: {problem}")?;
    }
    let txn = db.begin_read()?;
    let mut structures = quiredb_structures::check::check_all(&txn)?;
    for name in quiredb_xml::store::collections(&txn)? {
        for problem in quiredb_xml::store::check(&txn, &name)? {
            structures.push((name.clone(), problem));
        }
    }
    for (name, problem) in &structures {
        writeln!(out, "problem in {name}: {problem}")?;
    }
    if report.is_clean() && structures.is_empty() && unknown.is_empty() {
        writeln!(out, "clean")?;
        Ok(ExitCode::SUCCESS)
    } else {
        let rollback = usize::from(report.rollback.is_some());
        writeln!(out, "{} problems", report.problems.len() + structures.len() + unknown.len() + rollback)?;
        Ok(ExitCode::FAILURE)
    }
}

/// Names each kind's count ("1203 B+tree leaf") from the lists of the engine, the
/// structures and the XML store; a kind none of them defines is a problem.
fn name_kinds(kinds: &[quiredb_engine::KindCount]) -> (Vec<String>, Vec<String>) {
    let lists = [quiredb_engine::ENGINE_KINDS, quiredb_structures::PAGE_KINDS, quiredb_xml::store::PAGE_KINDS];
    let (mut named, mut unknown) = (Vec::new(), Vec::new());
    for count in kinds {
        match lists.iter().copied().flatten().find(|known| known.kind == count.kind) {
            Some(known) => named.push(format!("{} {}", count.pages, known.name)),
            None => unknown.push(format!("{} pages of kind {}, which no structure defines", count.pages, count.kind)),
        }
    }
    (named, unknown)
}

/// Compacts the file online, in steps ([`Database::compact_step`]), printing each
/// step's progress; without `--steps`, finishes with [`Database::compact`] (which
/// cuts the file to its last page in use).
pub fn compact(args: CompactArgs) -> Result<ExitCode> {
    let db = open(&args.path)?;
    let started = std::fs::metadata(&args.path).with_context(|| format!("cannot stat {}", args.path.display()))?.len();
    let mut taken = 0;
    while args.steps.is_none_or(|steps| taken < steps) {
        let step = db.compact_step(args.budget)?;
        taken += 1;
        outln!("step {taken}: moved {} pages, {} held by snapshots, file {} bytes", step.moved, step.held, step.after)?;
        if step.done {
            break;
        }
    }
    if args.steps.is_none() {
        db.compact()?;
    }
    let after = std::fs::metadata(&args.path).with_context(|| format!("cannot stat {}", args.path.display()))?.len();
    outln!("{}: {started} bytes -> {after} bytes", args.path.display())?;
    Ok(ExitCode::SUCCESS)
}
