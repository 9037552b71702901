//! Workload runner: the configuration of a run, the per-engine scratch directories,
//! cache eviction for cold runs, and `run` which executes one workload, verifies its
//! cross-checks, prints its table and appends its JSON lines.
//! Each workload module (t1 … t8, kv) exposes `run(&Config) -> Result<Outcome>`.

pub mod kv;
pub mod t1;
pub mod t2;
pub mod t3;
pub mod t4;
pub mod t5;
pub mod t6;
pub mod t7;
pub mod t7_writers;
pub mod t8;
pub mod t8_xpath;

use crate::check::Checks;
use crate::context::Machine;
use crate::error::{BenchError, Result};
use crate::family::Entry;
use crate::registry;
use crate::results::{Collector, Record, RecordContext, append_jsonl, table};
use std::path::{Path, PathBuf};

/// Every workload id `all` runs, in order.
pub const ALL: &[&str] = &["T1", "T2", "T3", "T4", "T5", "T6", "T7", "T8", "KV"];

/// How big a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    /// Tiny sizes for CI: every workload, every peer, seconds.
    Smoke,
    /// The default sizes of BENCHMARKS.md.
    Default,
    /// The published full sizes.
    Full,
}

/// The configuration of one invocation.
#[derive(Debug, Clone)]
pub struct Config {
    pub size: Size,
    /// Overrides the main count of the workload (keys, records, points, blobs).
    pub n: Option<usize>,
    pub seed: u64,
    pub repeats: usize,
    /// Engine ids to run; empty = all registered.
    pub engines: Vec<String>,
    /// Scratch directory for databases (removed per engine run).
    pub work_dir: PathBuf,
    /// JSON-lines output; `None` = `results/<date>-<workload>.jsonl`.
    pub out: Option<PathBuf>,
    /// Directory of `<collection>-<bucket>.qset` files (T5).
    pub qsets: Option<PathBuf>,
    /// Directory of `<collection>.xml` documents (T5).
    pub xml_dir: Option<PathBuf>,
    pub machine: Machine,
    pub run_id: String,
    /// A note attached to every engine of the run (e.g. why the size was reduced).
    pub note: Option<String>,
    /// T2: `all` or `80` runs only that cache budget's phases; `None` both.
    pub t2_cache: Option<String>,
    /// T5: load and size only.
    pub t5_load_only: bool,
}

impl Config {
    /// The workload's main count: the override, or smoke/default/full.
    pub fn count(&self, smoke: usize, default: usize, full: usize) -> usize {
        self.n.unwrap_or(match self.size {
            Size::Smoke => smoke,
            Size::Default => default,
            Size::Full => full,
        })
    }

    /// A secondary count (queries, phases) by run size only, ignoring `--n`.
    pub fn sized(&self, smoke: usize, default: usize, full: usize) -> usize {
        match self.size {
            Size::Smoke => smoke,
            Size::Default => default,
            Size::Full => full,
        }
    }

    /// The selected entries of a family, failing loudly on unknown requested ids.
    pub fn select<O: Copy>(&self, workload: &str, entries: Vec<Entry<O>>) -> Result<Vec<Entry<O>>> {
        let chosen = registry::select(entries, &self.engines);
        if chosen.is_empty() {
            return Err(BenchError::MissingEngine {
                workload: workload.into(),
                engine: self.engines.join(","),
                reason: "no registered engine of this workload has that id".into(),
            });
        }
        Ok(chosen)
    }

    /// A fresh, empty scratch directory for one engine run.
    pub fn scratch(&self, workload: &str, engine: &str) -> Result<PathBuf> {
        let dir = self.work_dir.join(workload).join(engine);
        remove_dir(&dir)?;
        std::fs::create_dir_all(&dir).map_err(|e| BenchError::io(&dir, e))?;
        Ok(dir)
    }
}

/// The engines in the order repeat `repeat` runs them: turned by one place each repeat,
/// so that each engine runs first as often as the others. It matters on this project's
/// machine kind: a VM whose balloon hands freed memory back to the host, so the first
/// engine to fill the page cache after a phase that freed it pays for memory the host
/// must supply again (T3, 5 M records of 100 B, QuireDB first: 4.6 M appends/s; the
/// same binary in the next repeat, after the flat file: 19.3 M/s).
pub fn in_turn<T>(engines: &[T], repeat: usize) -> impl Iterator<Item = &T> {
    let turn = repeat % engines.len().max(1);
    engines[turn..].iter().chain(&engines[..turn])
}

/// Removes a directory tree if it exists.
pub fn remove_dir(dir: &Path) -> Result<()> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(BenchError::io(dir, e)),
        _ => Ok(()),
    }
}

/// Evicts the files under `dir` from the OS page cache (fsync, then
/// `POSIX_FADV_DONTNEED`), so the next read is cold without touching other users'
/// cache. Call it with every handle on those files closed.
pub fn evict_cache(dir: &Path) -> Result<()> {
    use std::os::fd::AsRawFd;
    let entries = std::fs::read_dir(dir).map_err(|e| BenchError::io(dir, e))?;
    for entry in entries {
        let path = entry.map_err(|e| BenchError::io(dir, e))?.path();
        if path.is_dir() {
            evict_cache(&path)?;
            continue;
        }
        let file = std::fs::File::open(&path).map_err(|e| BenchError::io(&path, e))?;
        file.sync_all().map_err(|e| BenchError::io(&path, e))?;
        // SAFETY: the descriptor is open for the duration of the call; fadvise only
        // drops clean cached pages and never touches memory of this process.
        let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        if rc != 0 {
            return Err(BenchError::io(&path, std::io::Error::from_raw_os_error(rc)));
        }
    }
    Ok(())
}

/// What a workload hands back: its measurements, its answers, its data description.
#[derive(Debug)]
pub struct Outcome {
    pub collector: Collector,
    pub checks: Checks,
    pub dataset: String,
}

/// Runs one workload end to end; returns its records.
pub fn run(workload: &str, cfg: &Config) -> Result<Vec<Record>> {
    let mut outcome = match workload {
        "T1" => t1::run(cfg)?,
        "T2" => t2::run(cfg)?,
        "T3" => t3::run(cfg)?,
        "T4" => t4::run(cfg)?,
        "T5" => t5::run(cfg)?,
        "T6" => t6::run(cfg)?,
        "T7" => t7::run(cfg)?,
        "T8" => t8::run(cfg)?,
        "KV" => kv::run(cfg)?,
        other => {
            return Err(BenchError::Usage(format!("unknown workload {other} (T1…T8, KV, all, report)")));
        }
    };
    outcome.checks.verify()?;
    if let Some(note) = &cfg.note {
        outcome.collector.note_all(note);
    }
    let (checks, answers) = outcome.checks.counts();
    let base = RecordContext {
        machine: cfg.machine.clone(),
        dataset: outcome.dataset.clone(),
        seed: cfg.seed,
        settings: String::new(),
    };
    let records = outcome.collector.records(workload, &cfg.run_id, &base);
    println!("\n== {workload}: {} (seed {:#x}) ==", outcome.dataset, cfg.seed);
    print!("{}", table(&records));
    println!("cross-checks: {checks} checks, {answers} answers, all engines agree");
    let out =
        cfg.out.clone().unwrap_or_else(|| PathBuf::from(format!("results/{}-{workload}.jsonl", cfg.machine.day())));
    append_jsonl(&out, &records)?;
    println!("appended {} records to {}", records.len(), out.display());
    Ok(records)
}

#[cfg(test)]
mod turn_tests {
    use super::in_turn;

    #[test]
    fn each_engine_runs_first_in_one_repeat_of_as_many() {
        let engines = ["a", "b", "c"];
        let orders: Vec<Vec<&str>> = (0..4).map(|repeat| in_turn(&engines, repeat).copied().collect()).collect();
        assert_eq!(orders, [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"], ["a", "b", "c"]]);
        assert_eq!(in_turn::<&str>(&[], 2).count(), 0);
    }
}
