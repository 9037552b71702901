//! `quire-fuzz`: the stable, in-process driver of the fuzz targets.
//!
//! `run` supervises a worker process (`supervisor.rs`) that draws inputs from the
//! built-in seeds and the corpus directories, each a pure function of (seed, index)
//! (`Target::input`), runs them in process and counts them; a panic is a finding, saved
//! to the findings directory with its message and backtrace printed. A watchdog thread
//! ends the worker when one input takes longer than `--hang-seconds`, and the allocation
//! guard aborts it on a single allocation over 1 GiB; the supervisor then saves that
//! input and starts the next worker after it. `replay` runs saved inputs (corpus,
//! findings, AFL crashes); `seeds` writes the built-in seeds (for AFL's `-i`); `dict`
//! the dictionary (for AFL's `-x`); `input` regenerates one input of a run; `explain`
//! prints what a saved input does (for `db`, the decoded mutation program).
//! Coverage-guided runs use the AFL++ harnesses instead (`afl-*`, see `fuzz/README.md`).
#![forbid(unsafe_code)]

use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand};
use quiredb_fuzz::Target;
use quiredb_fuzz::alloc_guard::{CURRENT_INPUT, Guard};

mod supervisor;

#[global_allocator]
static GUARD: Guard = Guard;

/// The last panic's report (message, location, backtrace), written by the hook.
static LAST_PANIC: Mutex<String> = Mutex::new(String::new());

#[derive(Parser)]
#[command(
    name = "quire-fuzz",
    about = "Runs QuireDB's fuzz targets in process (targets: db, xpath, xml, xml-store, csv)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Mutates and runs inputs until --inputs or --seconds is reached.
    Run(RunArgs),
    /// Runs saved inputs (files, or every file in a directory).
    Replay { target: String, paths: Vec<PathBuf> },
    /// Writes the built-in seeds into a directory.
    Seeds { target: String, dir: PathBuf },
    /// Prints what saved inputs do (db: the decoded mutation program).
    Explain { target: String, paths: Vec<PathBuf> },
    /// Writes the target's dictionary in AFL's format (`-x FILE`).
    Dict { target: String, file: PathBuf },
    /// Writes input `index` of a run seeded with `seed` to `out`.
    Input {
        target: String,
        #[arg(long)]
        seed: u64,
        #[arg(long)]
        index: u64,
        #[arg(long)]
        corpus: Vec<PathBuf>,
        #[arg(long)]
        out: PathBuf,
    },
}

/// Arguments of `run` (kept whole: the supervisor passes them on to its workers).
#[derive(Args, Clone, Debug)]
struct RunArgs {
    target: String,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Inputs to run (default: unlimited, until --seconds).
    #[arg(long)]
    inputs: Option<u64>,
    /// Wall-clock limit in seconds.
    #[arg(long)]
    seconds: Option<u64>,
    /// First input index (to resume or to regenerate a stretch of a run).
    #[arg(long, default_value_t = 0)]
    start: u64,
    /// Corpus directories whose files join the built-in seeds.
    #[arg(long)]
    corpus: Vec<PathBuf>,
    /// Where findings are saved.
    #[arg(long, default_value = "fuzz/findings/new")]
    findings: PathBuf,
    /// An input running longer than this is a hang.
    #[arg(long, default_value_t = 20)]
    hang_seconds: u64,
    /// Known, reported findings: one text a line that a panic's location or message (or
    /// an abort's report) contains (`#` starts a comment). Those are counted but do not
    /// fail the run.
    #[arg(long)]
    known: Option<PathBuf>,
    /// Internal: run the input loop in this process, writing the index of the input
    /// being run to this file (the supervisor reads it after a crash).
    #[arg(long, hide = true)]
    worker_index_file: Option<PathBuf>,
}

fn main() {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Run(args) => {
            let target = target_named(&args.target);
            let known = args.known.as_deref().map(known_findings).unwrap_or_default();
            let corpus = corpus_of(target, &args.corpus);
            match &args.worker_index_file {
                Some(file) => run(target, &Plan::of(&args, known), &corpus, &IndexFile::create(file)),
                None => supervisor::supervise(target, &args, &known, &corpus),
            }
        }
        Command::Replay { target, paths } => replay(target_named(&target), &paths),
        Command::Seeds { target, dir } => write_seeds(target_named(&target), &dir),
        Command::Dict { target, file } => write_dictionary(target_named(&target), &file),
        Command::Explain { target, paths } => explain(target_named(&target), &paths),
        Command::Input { target, seed, index, corpus, out } => {
            let target = target_named(&target);
            let input = target.input(seed, index, &corpus_of(target, &corpus));
            std::fs::write(&out, input).unwrap_or_else(|error| fail(&format!("writing {}: {error}", out.display())));
            0
        }
    };
    std::process::exit(code);
}

fn target_named(name: &str) -> Target {
    Target::from_name(name)
        .unwrap_or_else(|| fail(&format!("unknown target {name:?}; targets: db, xpath, xml, xml-store, csv")))
}

fn fail(message: &str) -> ! {
    eprintln!("quire-fuzz: {message}");
    std::process::exit(2)
}

/// The files of `paths` (directories expanded one level), sorted by name.
fn files(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let entries = std::fs::read_dir(path).unwrap_or_else(|error| fail(&format!("{}: {error}", path.display())));
            let mut found: Vec<PathBuf> = entries.filter_map(|entry| entry.ok().map(|entry| entry.path())).collect();
            found.retain(|file| file.is_file());
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    files
}

/// The built-in seeds, then the corpus files in name order.
fn corpus_of(target: Target, dirs: &[PathBuf]) -> Vec<Vec<u8>> {
    let mut corpus = target.seeds();
    for file in files(dirs) {
        corpus.push(std::fs::read(&file).unwrap_or_else(|error| fail(&format!("{}: {error}", file.display()))));
    }
    corpus
}

/// Installs a panic hook that keeps the report instead of printing it.
fn capture_panics() {
    panic::set_hook(Box::new(|info| {
        let backtrace = std::backtrace::Backtrace::force_capture();
        let report = format!("{info}\n{backtrace}");
        *LAST_PANIC.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = report;
    }));
}

fn last_panic() -> String {
    std::mem::take(&mut *LAST_PANIC.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
}

/// The first line of a panic report (`panicked at FILE:LINE:COLUMN:`), to group findings.
fn headline(report: &str) -> String {
    report.lines().next().unwrap_or_default().to_owned()
}

struct Plan {
    seed: u64,
    inputs: Option<u64>,
    seconds: Option<u64>,
    start: u64,
    findings: PathBuf,
    hang_seconds: u64,
    known: Vec<String>,
}

impl Plan {
    fn of(args: &RunArgs, known: Vec<String>) -> Plan {
        Plan {
            seed: args.seed,
            inputs: args.inputs,
            seconds: args.seconds,
            start: args.start,
            findings: args.findings.clone(),
            hang_seconds: args.hang_seconds,
            known,
        }
    }
}

/// The worker's window to its supervisor: the index of the input being run (and, at
/// the end, the next index), 8 bytes little-endian at offset 0.
struct IndexFile(std::fs::File);

impl IndexFile {
    fn create(path: &Path) -> IndexFile {
        let file = std::fs::File::create(path).unwrap_or_else(|error| fail(&format!("{}: {error}", path.display())));
        IndexFile(file)
    }

    fn set(&self, index: u64) {
        use std::os::unix::fs::FileExt;
        if let Err(error) = self.0.write_all_at(&index.to_le_bytes(), 0) {
            fail(&format!("writing the index file: {error}"));
        }
    }
}

/// The texts of a known-findings file (see `--known`).
fn known_findings(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|error| fail(&format!("{}: {error}", file.display())));
    let lines = text.lines().map(|line| line.split('#').next().unwrap_or_default().trim());
    lines.filter(|line| !line.is_empty()).map(str::to_owned).collect()
}

/// Starts the watchdog: exits the process when one input runs too long.
fn watchdog(target: Target, plan: &Plan, started_ms: Arc<AtomicU64>, clock: Instant) {
    let (seed, hang_ms) = (plan.seed, plan.hang_seconds * 1000);
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(Duration::from_millis(500));
            let started = started_ms.load(Ordering::Relaxed);
            let now = clock.elapsed().as_millis() as u64;
            if now.saturating_sub(started) > hang_ms {
                let index = CURRENT_INPUT.load(Ordering::Relaxed);
                eprintln!(
                    "HANG: {} input #{index} of seed {seed} ran longer than {} s; regenerate it with \
                     `quire-fuzz input {} --seed {seed} --index {index} --out FILE` (same --corpus)",
                    target.name(),
                    hang_ms / 1000,
                    target.name()
                );
                std::process::exit(3);
            }
        }
    });
}

/// The input loop (a worker of [`supervisor::supervise`]).
fn run(target: Target, plan: &Plan, corpus: &[Vec<u8>], index_file: &IndexFile) -> i32 {
    capture_panics();
    let clock = Instant::now();
    let started_ms = Arc::new(AtomicU64::new(0));
    watchdog(target, plan, started_ms.clone(), clock);
    let deadline = plan.seconds.map(|seconds| clock + Duration::from_secs(seconds));
    let end = plan.inputs.map_or(u64::MAX, |inputs| plan.start.saturating_add(inputs));
    println!(
        "quire-fuzz {}: seed {}, inputs {}..{}, corpus {} entries",
        target.name(),
        plan.seed,
        plan.start,
        plan.inputs.map_or("unlimited".into(), |_| end.to_string()),
        corpus.len()
    );
    let mut findings: Vec<Finding> = Vec::new();
    let (mut index, mut next_report) = (plan.start, clock + Duration::from_secs(60));
    while index < end && deadline.is_none_or(|deadline| Instant::now() < deadline) {
        CURRENT_INPUT.store(index, Ordering::Relaxed);
        index_file.set(index);
        started_ms.store(clock.elapsed().as_millis() as u64, Ordering::Relaxed);
        let input = target.input(plan.seed, index, corpus);
        if panic::catch_unwind(AssertUnwindSafe(|| target.run(&input))).is_err() {
            record(target, plan, index, &input, &mut findings);
        }
        index += 1;
        if Instant::now() >= next_report {
            next_report += Duration::from_secs(60);
            report(target, plan, index, clock, findings.len(), false);
        }
    }
    index_file.set(index);
    report(target, plan, index, clock, findings.len(), true);
    let mut new = 0;
    for finding in &findings {
        let known = finding.is_known(&plan.known);
        new += usize::from(!known);
        println!("  {} x {}{}", finding.count, if known { "(known) " } else { "" }, finding.headline);
    }
    i32::from(new > 0)
}

/// The panics of one location in a run.
struct Finding {
    /// `panicked at FILE:LINE:COLUMN:`.
    headline: String,
    /// Inputs that panicked there.
    count: u64,
    /// The first panic's message (first line).
    message: String,
}

impl Finding {
    fn is_known(&self, known: &[String]) -> bool {
        known.iter().any(|text| self.headline.contains(text.as_str()) || self.message.contains(text.as_str()))
    }
}

fn record(target: Target, plan: &Plan, index: u64, input: &[u8], findings: &mut Vec<Finding>) {
    let report = last_panic();
    let headline = headline(&report);
    let message = report.lines().nth(1).unwrap_or_default().to_owned();
    let file = plan.findings.join(format!("{}-s{}-i{index}.bin", target.name(), plan.seed));
    if let Some(seen) = findings.iter_mut().find(|finding| finding.headline == headline) {
        seen.count += 1;
        if seen.count > 3 {
            return;
        }
    } else {
        findings.push(Finding { headline, count: 1, message });
        println!("FINDING: {} input #{index} of seed {}:\n{report}", target.name(), plan.seed);
    }
    let saved = std::fs::create_dir_all(&plan.findings).and_then(|()| std::fs::write(&file, input));
    match saved {
        Ok(()) => println!("  saved to {}", file.display()),
        Err(error) => println!("  could not save to {}: {error}", file.display()),
    }
}

fn report(target: Target, plan: &Plan, index: u64, clock: Instant, findings: usize, last: bool) {
    let seconds = clock.elapsed().as_secs_f64();
    let done = index - plan.start;
    println!(
        "{}{}: {done} inputs in {seconds:.1} s ({:.0}/s), seed {}, next index {index}, {findings} distinct findings",
        if last { "done " } else { "" },
        target.name(),
        done as f64 / seconds.max(1e-9),
        plan.seed,
    );
}

fn replay(target: Target, paths: &[PathBuf]) -> i32 {
    capture_panics();
    let files = files(paths);
    let mut failed = 0;
    for file in &files {
        let input = std::fs::read(file).unwrap_or_else(|error| fail(&format!("{}: {error}", file.display())));
        if panic::catch_unwind(AssertUnwindSafe(|| target.run(&input))).is_err() {
            failed += 1;
            println!("FINDING: {}:\n{}", file.display(), last_panic());
        }
    }
    println!("replayed {} {} inputs: {failed} panicked", files.len(), target.name());
    i32::from(failed > 0)
}

fn write_seeds(target: Target, dir: &Path) -> i32 {
    let seeds = target.seeds();
    std::fs::create_dir_all(dir).unwrap_or_else(|error| fail(&format!("{}: {error}", dir.display())));
    for (index, seed) in seeds.iter().enumerate() {
        let file = dir.join(format!("seed-{index:03}"));
        std::fs::write(&file, seed).unwrap_or_else(|error| fail(&format!("{}: {error}", file.display())));
    }
    println!("wrote {} seeds to {}", seeds.len(), dir.display());
    0
}

fn write_dictionary(target: Target, file: &Path) -> i32 {
    let mut text = String::new();
    for token in target.dictionary().iter().filter(|token| !token.is_empty()) {
        let escaped: String = token.iter().map(|&byte| format!("\\x{byte:02X}")).collect();
        text.push_str(&format!("\"{escaped}\"\n"));
    }
    std::fs::write(file, text).unwrap_or_else(|error| fail(&format!("{}: {error}", file.display())));
    0
}

fn explain(target: Target, paths: &[PathBuf]) -> i32 {
    for file in files(paths) {
        let input = std::fs::read(&file).unwrap_or_else(|error| fail(&format!("{}: {error}", file.display())));
        println!("{}:", file.display());
        match target {
            Target::Db => {
                for line in quiredb_fuzz::db::program::describe(&input, quiredb_fuzz::db::images::images()) {
                    println!("  {line}");
                }
            }
            Target::Xpath | Target::Xml | Target::XmlStore | Target::Csv => println!("  {}", input.escape_ascii()),
        }
    }
    0
}
