//! quire-bench: runs the published comparisons of BENCHMARKS.md against real peer
//! engines, side by side, in one invocation.
//!
//! `quire-bench <T1…T8|KV|all> [--smoke|--full] [--engines a,b] [--out FILE]` prints a
//! table per workload and appends JSON lines to `results/<date>-<workload>.jsonl`;
//! `quire-bench report [--input results] [--output reports]` turns those into Markdown
//! with SVG charts. Read next: `family.rs` (the engine traits), `registry.rs` (who
//! runs), `workloads/` (what runs), `results.rs` and `check.rs` (what comes out).

mod allocs;
mod check;
mod context;
mod data;
mod error;
mod family;
mod measure;
mod peers;
mod qset;
mod registry;
mod report;
mod results;
mod workloads;

use clap::Parser;
use error::{BenchError, Result};
use std::path::PathBuf;
use workloads::{ALL, Config, Size};

/// Command line of quire-bench.
#[derive(Debug, Parser)]
#[command(name = "quire-bench", about = "QuireDB against real peer engines (BENCHMARKS.md)")]
struct Cli {
    /// A workload (T1 … T8, KV), `all` (every one), or `report`.
    target: String,
    /// Tiny sizes (CI): every workload and peer in seconds.
    #[arg(long, conflicts_with = "full")]
    smoke: bool,
    /// The published full sizes.
    #[arg(long)]
    full: bool,
    /// Override the workload's main count (keys, records, points, blobs, items).
    #[arg(long)]
    n: Option<usize>,
    /// Comma-separated engine ids (default: every registered engine).
    #[arg(long, value_delimiter = ',')]
    engines: Vec<String>,
    /// JSON-lines output file (default results/<date>-<workload>.jsonl).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Repeats per engine (medians are reported; at least 3 recommended).
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// Seed of every data generator.
    #[arg(long, default_value_t = data::DEFAULT_SEED)]
    seed: u64,
    /// Scratch directory for the databases.
    #[arg(long, default_value = "target-bench/quire-bench-work")]
    work_dir: PathBuf,
    /// T5: directory of `<collection>-<bucket>.qset` files.
    #[arg(long)]
    qsets: Option<PathBuf>,
    /// T5: directory of `<collection>.xml[.zst]` documents (default: the qsets dir).
    #[arg(long)]
    xml_dir: Option<PathBuf>,
    /// A note attached to every engine's records (e.g. "reduced size: …").
    #[arg(long)]
    note: Option<String>,
    /// T5: load and size only, no query timings (for collections whose BaseX query
    /// runs take hours; the report says so).
    #[arg(long)]
    load_only: bool,
    /// T2: run only the phases of this cache budget, `all` (all fits) or `80` (80 %
    /// fits), so a full-size run can be split into parts (default: both).
    #[arg(long, value_parser = ["all", "80"])]
    cache: Option<String>,
    /// report: directory of JSON-lines results.
    #[arg(long, default_value = "results")]
    input: PathBuf,
    /// report: output directory.
    #[arg(long, default_value = "reports")]
    output: PathBuf,
}

fn main() {
    if let Err(e) = run(Cli::parse()) {
        eprintln!("quire-bench: error: {e}");
        std::process::exit(1);
    }
}

fn run(cli: Cli) -> Result<()> {
    if cli.target == "report" {
        return report::generate(&cli.input, &cli.output);
    }
    if cli.repeats == 0 {
        return Err(BenchError::Usage("--repeats must be at least 1".into()));
    }
    let missing = registry::native_missing();
    if !missing.is_empty() {
        eprintln!(
            "quire-bench: WARNING: built without `--features peers`: native peers {} are NOT run. \
             Install them with benches/install-peers.sh and build with --features peers.",
            missing.join(", ")
        );
        if let Some(asked) = cli.engines.iter().find(|e| missing.contains(&e.as_str())) {
            return Err(BenchError::MissingEngine {
                workload: cli.target.clone(),
                engine: asked.clone(),
                reason: "built without --features peers".into(),
            });
        }
    }
    let machine = context::Machine::detect();
    let cfg = Config {
        size: if cli.smoke {
            Size::Smoke
        } else if cli.full {
            Size::Full
        } else {
            Size::Default
        },
        n: cli.n,
        seed: cli.seed,
        repeats: cli.repeats,
        engines: cli.engines,
        work_dir: cli.work_dir,
        out: cli.out,
        qsets: cli.qsets,
        xml_dir: cli.xml_dir,
        run_id: format!("{}-{}", machine.date, std::process::id()),
        note: cli.note,
        t2_cache: cli.cache,
        t5_load_only: cli.load_only,
        machine,
    };
    println!(
        "quire-bench {} ({:?}, seed {:#x}, {} repeats) on {} ({} cores, {}), commit {}",
        cli.target,
        cfg.size,
        cfg.seed,
        cfg.repeats,
        cfg.machine.cpu,
        cfg.machine.cores,
        cfg.machine.mem,
        cfg.machine.commit
    );
    let targets: Vec<String> = if cli.target.eq_ignore_ascii_case("all") {
        ALL.iter().map(|s| s.to_string()).collect()
    } else {
        vec![cli.target.to_uppercase()]
    };
    let start = std::time::Instant::now();
    for t in &targets {
        let t0 = std::time::Instant::now();
        workloads::run(t, &cfg)?;
        println!("{t} took {:.1} s", t0.elapsed().as_secs_f64());
    }
    workloads::remove_dir(&cfg.work_dir)?;
    println!("quire-bench: done in {:.1} s", start.elapsed().as_secs_f64());
    Ok(())
}
