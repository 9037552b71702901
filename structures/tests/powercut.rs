//! The power-cut simulator (issue 18): a deterministic, seeded, replayable driver in the
//! manner of TigerBeetle's VOPR and SQLite's crash VFS. One database in a
//! [`FaultyStorage`] (4 KiB pages, small pools, so writers spill) holds a B+tree with
//! blob values, a paged queue and a 2-D R*-tree; a random workload commits with random
//! durability, aborts, retries, and fails commits with an EIO or ENOSPC (or a power cut,
//! or a torn write) at a random I/O operation. At random crash points — between
//! transactions, inside one after it spilled, after a failed commit — it takes several
//! crash images keeping an arbitrary subset of the unsynced writes (whole, lost or torn
//! at 512-byte sectors) or all of them but one page write (preferably the newest of a
//! page written twice, so an older version survives), opens each, checks it (engine
//! and every structure) and compares it with the model; then it goes on with the live
//! process, restarts the process on the same file (the OS keeping its unsynced writes),
//! or continues from one of the images, so later crashes strike recovered files
//! (double faults). Half the processes log their small commits (`commit_log_pages`, a
//! 64-page region, so checkpoints are frequent): crash points then strike log appends,
//! in-place writes after them and every step of a checkpoint, and images replay the log.
//!
//! Invariant, with a commit counter kept in the B+tree: an image holds commit `c` with
//! `durable_acked <= c <= attempted` after a power cut and `acked <= c <= attempted`
//! after a process crash, and its contents equal the model of `c` ([`Bounds`] in
//! `support/book.rs`). `durable_acked` is the newest acknowledged commit
//! that a sync made durable (a `Full` or `Checksummed` commit, or any before one), so a
//! `None` commit may be lost but never half-applied; `attempted` is a failed commit in
//! flight, which may survive only whole.
//!
//! `QUIRE_SEED` replays a run (the seed is printed first); `QUIRE_POWERCUT_IMAGES` sets
//! the number of images (default 4,000: about 10 s of `--release` on two idle cores);
//! `QUIRE_POWERCUT_TOLERATE=N` goes on after up to N failures, listing each (for triage;
//! the test still fails); `QUIRE_POWERCUT_DUMP=DIR` saves each failing image there;
//! `QUIRE_POWERCUT_TRACE=1` prints every step. The long mode takes 1,000,000 images:
//!
//! ```sh
//! cargo test --release -p quiredb-structures --test powercut -- --ignored power_cuts_long --nocapture
//! QUIRE_POWERCUT_IMAGES=1000000 cargo test --release -p quiredb-structures --test powercut -- --nocapture
//! ```
//!
//! Read next: `support/workload.rs` (model, operations), `support/book.rs` (the
//! bounds), `support/images.rs` (verification), `engine/src/storage/faulty.rs`.

mod support;

use quiredb_engine::storage::{CrashMode, Fault, FaultKind, FaultyStorage};
use quiredb_engine::{Database, DatabaseBuilder, Durability, Error, Options};
use quiredb_test_support::Rng as TestRng;
use rand::Rng;
use std::sync::Arc;
use support::book::{Book, Bounds};
use support::counters::{Counters, cut_index, durability_index, fault_index};
use support::images::{Cut, Recovered, crash_image, options, verify, verify_all};
use support::workload::{Model, Op, apply, create_all, diff, draw_txn, load};

/// Images of a default run.
const DEFAULT_IMAGES: usize = 4_000;
/// Images of the long mode.
const LONG_IMAGES: usize = 1_000_000;
/// Pages of the commit log of a process that logs its commits.
const LOG_PAGES: u64 = 64;
/// Pool sizes (in 4 KiB pages) a process may have; 64 is the engine's minimum.
const POOL_FRAMES: [usize; 4] = [64, 64, 96, 200];

/// What a run is asked to do.
#[derive(Clone, Copy, Debug)]
struct Config {
    seed: u64,
    images: usize,
    tolerate: usize,
    threads: usize,
    trace: bool,
}

impl Config {
    fn from_env(default_images: usize) -> Config {
        let number = |name: &str| std::env::var(name).ok().and_then(|s| s.parse::<u64>().ok());
        println!("powercut:");
        let seed = quiredb_test_support::random_seed();
        let images = number("QUIRE_POWERCUT_IMAGES").map_or(default_images, |n| n as usize);
        let tolerate = number("QUIRE_POWERCUT_TOLERATE").unwrap_or(0) as usize;
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
        let trace = number("QUIRE_POWERCUT_TRACE").is_some_and(|n| n != 0);
        println!("powercut: QUIRE_POWERCUT_IMAGES={images}");
        Config { seed, images, tolerate, threads, trace }
    }
}

/// The running process: its file and its open database.
struct Process {
    storage: Arc<FaultyStorage>,
    db: Database,
}

impl Process {
    /// A new file holding the three structures (commit 0).
    fn create(options: Options) -> Process {
        let storage = Arc::new(FaultyStorage::new(Vec::new(), None));
        let db = Database::with_storage(storage.clone(), options, "powercut").expect("create in memory");
        let txn = db.begin_write().expect("first writer");
        create_all(&txn).expect("create the structures");
        txn.commit(Durability::Full).expect("commit 0");
        Process { storage, db }
    }
}

/// Whether the live process may go on after a crash point.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Liveness {
    /// Nothing failed: the process may continue.
    Healthy,
    /// An I/O error poisoned the handle: the process must restart, the file is intact.
    Poisoned,
    /// The machine stopped: only a crash image is left.
    Stopped,
}

/// How the run goes on after a crash point.
enum Restart {
    /// The process dies and restarts on the same file (the OS keeps unsynced writes).
    Process,
    /// The machine restarts from a crash image holding commit `counter`.
    Image { image: Vec<u8>, counter: u64 },
    /// Every image failed (tolerate mode only): start over with a new file.
    Fresh,
}

/// One outcome of a transaction run with a fault armed.
enum Outcome {
    Committed,
    Failed { in_commit: bool, error: String },
}

/// Everything but the process, so that a step can hold a transaction of the process
/// while it records.
struct Driver {
    config: Config,
    rng: TestRng,
    book: Book,
    counters: Counters,
    /// Typical I/O operations of a whole transaction and of its commit, to aim faults.
    spans: (u64, u64),
    /// A failed transaction's operations, retried if the restart lost it.
    retry: Option<(Vec<Op>, Model)>,
}

impl Driver {
    /// Prints an event of the run with `QUIRE_POWERCUT_TRACE=1`.
    fn trace(&self, event: impl FnOnce() -> String) {
        if self.config.trace {
            println!("  [{}] {}", self.counters.steps, event());
        }
    }

    fn durability(&mut self) -> Durability {
        match self.rng.random_range(0..20) {
            0..5 => Durability::Full,
            5..12 => Durability::Checksummed,
            _ => Durability::None,
        }
    }

    /// The next transaction: a pending retry if it still applies, else a new one.
    fn next_txn(&mut self) -> (Vec<Op>, Model) {
        match self.retry.take() {
            Some((ops, model)) if model.commit == self.book.acked + 1 => {
                self.counters.retries += 1;
                (ops, model)
            }
            _ => draw_txn(&mut self.rng, self.book.model()),
        }
    }

    fn step(&mut self, process: &Process) -> Option<Restart> {
        self.counters.steps += 1;
        match self.rng.random_range(0..100) {
            0..62 => self.commit_step(process),
            62..70 => self.abort_step(process),
            70..76 => self.fault_step(process, [FaultKind::Eio, FaultKind::Enospc]),
            76..82 => self.fault_step(process, [FaultKind::PowerCut, FaultKind::TornWrite]),
            _ => self.between_txns(process),
        }
    }

    /// Applies `ops` in a transaction, with a chance of a crash point before the
    /// commit (likelier once it spilled); `Err` when the run restarts from there.
    fn applied<'db>(
        &mut self,
        process: &'db Process,
        ops: &[Op],
        commit: u64,
    ) -> Result<quiredb_engine::WriteTxn<'db>, Restart> {
        let spills = process.db.stats().spills;
        let txn = process.db.begin_write().unwrap_or_else(|error| self.fatal(format!("begin_write: {error}")));
        if let Err(error) = apply(&txn, ops, commit) {
            self.fatal(format!("a transaction with no fault armed failed: {error}"));
        }
        let spilled = process.db.stats().spills - spills;
        if spilled > 0 {
            self.counters.spilling_txns += 1;
            self.counters.spilled_pages += spilled;
        }
        if self.rng.random_ratio(1, if spilled > 0 { 3 } else { 15 }) {
            self.counters.mid_txn_points += 1;
            if let Some(restart) = self.crash_point(&process.storage, Liveness::Healthy, "inside a transaction") {
                return Err(restart);
            }
        }
        Ok(txn)
    }

    fn commit_step(&mut self, process: &Process) -> Option<Restart> {
        let (ops, model) = self.next_txn();
        let durability = self.durability();
        let ops_before = process.storage.ops();
        let txn = match self.applied(process, &ops, model.commit) {
            Ok(txn) => txn,
            Err(restart) => return Some(restart),
        };
        let commit_before = process.storage.ops();
        self.book.attempt(model);
        txn.commit(durability).unwrap_or_else(|error| self.fatal(format!("commit with no fault armed: {error}")));
        self.book.acknowledge(durability);
        self.counters.commits[durability_index(durability)] += 1;
        self.trace(|| format!("commit {} {durability:?} (txn {})", self.book.acked, process.db.meta().txn.0));
        let (txn_ops, commit_ops) = (process.storage.ops() - ops_before, process.storage.ops() - commit_before);
        self.spans = ((self.spans.0 * 7 + txn_ops) / 8, (self.spans.1 * 7 + commit_ops) / 8);
        None
    }

    /// A transaction dropped without committing (the live file must not change), and
    /// sometimes retried.
    fn abort_step(&mut self, process: &Process) -> Option<Restart> {
        let (ops, model) = draw_txn(&mut self.rng, self.book.model());
        match self.applied(process, &ops, model.commit) {
            Ok(txn) => txn.abort(),
            Err(restart) => return Some(restart),
        }
        self.counters.aborts += 1;
        self.trace(|| format!("abort (spilled {})", process.storage.unsynced_writes()));
        let found = load(&process.db.begin_read().expect("a reader never fails to begin"));
        match found.map(|found| diff(self.book.model(), &found)) {
            Ok(None) => {}
            Ok(Some(difference)) => self.fatal(format!("an aborted transaction changed the file: {difference}")),
            Err(error) => self.fatal(format!("reading the file after an abort: {error}")),
        }
        if self.rng.random_bool(0.5) {
            self.retry = Some((ops, model));
            return self.commit_step(process);
        }
        None
    }

    /// A transaction with a fault armed at a random operation: anywhere in it, or in
    /// its commit. A fault that fires must surface as an error naming its cause and
    /// poison the handle; then the process restarts.
    fn fault_step(&mut self, process: &Process, kinds: [FaultKind; 2]) -> Option<Restart> {
        let kind = kinds[self.rng.random_range(0..2)];
        let (ops, model) = self.next_txn();
        let durability = self.durability();
        let in_commit_only = self.rng.random_bool(0.5);
        let outcome = self.run_with_fault(process, kind, in_commit_only, (&ops, &model), durability);
        let fired = process.storage.fault_fired();
        process.storage.arm(None);
        self.trace(|| format!("{kind:?} for commit {} {durability:?}: fired {fired}", model.commit));
        match (fired, outcome) {
            (false, Outcome::Committed) => {
                self.counters.faults_missed += 1;
                self.book.acknowledge(durability);
                self.counters.commits[durability_index(durability)] += 1;
                None
            }
            (false, Outcome::Failed { error, .. }) => self.fatal(format!("failed with no fault fired: {error}")),
            (true, Outcome::Committed) => self.fatal(format!("the injected {kind:?} did not surface")),
            (true, Outcome::Failed { in_commit, error }) => {
                self.after_fault(process, kind, in_commit, &error);
                self.retry = Some((ops, model));
                let liveness = if kinds[0] == FaultKind::Eio { Liveness::Poisoned } else { Liveness::Stopped };
                self.crash_point(&process.storage, liveness, "after a failed commit")
            }
        }
    }

    fn run_with_fault(
        &mut self,
        process: &Process,
        kind: FaultKind,
        in_commit_only: bool,
        (ops, model): (&[Op], &Model),
        durability: Durability,
    ) -> Outcome {
        let arm = |span: u64, rng: &mut TestRng| {
            let at_op = process.storage.ops() + rng.random_range(0..=span.max(4) * 3 / 2);
            process.storage.arm(Some(Fault { at_op, kind }));
        };
        if !in_commit_only {
            arm(self.spans.0, &mut self.rng);
        }
        let failed = |error: &dyn std::fmt::Display| Outcome::Failed { in_commit: false, error: error.to_string() };
        let txn = match process.db.begin_write() {
            Ok(txn) => txn,
            Err(error) => return failed(&error),
        };
        if let Err(error) = apply(&txn, ops, model.commit) {
            return failed(&error);
        }
        if in_commit_only {
            arm(self.spans.1, &mut self.rng);
        }
        self.book.attempt(model.clone());
        match txn.commit(durability) {
            Ok(()) => Outcome::Committed,
            Err(error) => Outcome::Failed { in_commit: true, error: error.to_string() },
        }
    }

    /// Checks what a fired fault left and records it.
    fn after_fault(&mut self, process: &Process, kind: FaultKind, in_commit: bool, text: &str) {
        self.trace(|| format!("failed {}: {text}", if in_commit { "in the commit" } else { "before the commit" }));
        let named = if kind == FaultKind::Enospc { "No space left on device" } else { "injected EIO" };
        if !text.contains(named) {
            self.violation(format!("the error of an injected {kind:?} does not name it: {text}"));
        }
        if !matches!(process.db.begin_write(), Err(Error::Poisoned)) {
            self.violation(format!("the handle still accepts writes after an injected {kind:?}: {text}"));
        }
        if !in_commit {
            self.book.abandon();
        }
        self.book.torn = kind == FaultKind::TornWrite;
        self.counters.failed_commits[fault_index(kind)] += 1;
    }

    fn between_txns(&mut self, process: &Process) -> Option<Restart> {
        let bounds = self.book.bounds();
        let live = verify(&process.db, &self.book.history, bounds.acked, bounds.acked);
        live.unwrap_or_else(|failure| self.fatal(format!("the live file: {failure}")));
        self.crash_point(&process.storage, Liveness::Healthy, "between transactions")
    }

    /// How to cut the images of one crash point: one image when nothing is unsynced
    /// (they would all be equal), else 2–8, mostly `Subset` and `LoseOne`.
    fn cuts(&mut self, unsynced: usize) -> Vec<Cut> {
        if unsynced == 0 {
            return vec![Cut::Mode(CrashMode::KeepUnsynced)];
        }
        let count = self.rng.random_range(2..=8);
        (0..count)
            .map(|index| match (index, self.rng.random_range(0..8)) {
                (0, 0) => Cut::Mode(CrashMode::KeepUnsynced),
                (1, 0) => Cut::Mode(CrashMode::DropUnsynced),
                (_, 1) => Cut::Mode(CrashMode::RandomSectors(self.rng.random())),
                (_, 2 | 3) => Cut::LoseOne(self.rng.random()),
                _ => Cut::Mode(CrashMode::Subset(self.rng.random())),
            })
            .collect()
    }

    /// Takes crash images of `storage` now, verifies each, and decides how to go on.
    fn crash_point(&mut self, storage: &FaultyStorage, liveness: Liveness, moment: &str) -> Option<Restart> {
        self.counters.crash_points += 1;
        let unsynced = storage.unsynced_writes();
        if unsynced == 0 {
            self.book.synced(); // a sync completed after every acknowledged write
        }
        let images: Vec<(Cut, Vec<u8>)> =
            self.cuts(unsynced).into_iter().map(|cut| (cut, crash_image(storage, cut))).collect();
        let bounds = self.book.bounds();
        self.trace(|| format!("crash point {moment}: {unsynced} unsynced writes, {bounds:?}"));
        let results = verify_all(&images, &self.book.history, bounds, self.config.threads);
        let mut passed = Vec::new();
        for (index, ((cut, image), result)) in images.into_iter().zip(results).enumerate() {
            let position = self.counters.images;
            self.counters.images += 1;
            self.counters.images_by_cut[cut_index(cut)] += 1;
            match result {
                Ok(recovered) => {
                    self.record(recovered, bounds);
                    passed.push((image, recovered.counter));
                }
                Err(failure) => {
                    dump(&self.config, position, storage, &image);
                    self.fail(position, index, cut, bounds, moment, &failure);
                }
            }
        }
        self.choose(liveness, passed)
    }

    fn record(&mut self, recovered: Recovered, bounds: Bounds) {
        self.counters.fell_back += u64::from(recovered.fell_back);
        self.counters.in_flight_recovered += u64::from(recovered.counter > bounds.acked);
        self.counters.older_recovered += u64::from(recovered.counter < bounds.acked);
    }

    fn fail(&mut self, position: usize, index: usize, cut: Cut, bounds: Bounds, moment: &str, failure: &str) {
        let point = self.counters.crash_points;
        let message = format!(
            "image {position} (crash point {point}, {moment}, image {index} of it, {cut:?}, {bounds:?}): {failure}"
        );
        self.violation(message);
    }

    /// A broken invariant after which the run cannot go on.
    fn fatal(&self, message: String) -> ! {
        panic!("QUIRE_SEED={} step {}: {message}", self.config.seed, self.counters.steps)
    }

    /// A broken invariant: the run stops, unless `QUIRE_POWERCUT_TOLERATE` allows more.
    fn violation(&mut self, message: String) {
        let message = format!("QUIRE_SEED={} step {}: {message}", self.config.seed, self.counters.steps);
        self.counters.failures += 1;
        assert!(self.counters.failures <= self.config.tolerate, "{message}");
        println!("FAILED {message}");
    }

    /// A restarted process opened `db`: it must verify (holding `counter` if given);
    /// the book then starts from the commit it holds.
    fn took_over(&mut self, storage: &FaultyStorage, db: &Database, moment: &str, counter: Option<u64>) {
        let book = &self.book;
        let (low, high) = counter.map_or((book.acked, book.attempted), |counter| (counter, counter));
        let recovered =
            verify(db, &book.history, low, high).unwrap_or_else(|failure| self.fatal(format!("{moment}: {failure}")));
        // Durable if nothing written is still unsynced (opening may have synced); else
        // a power cut may still take the commit found, unless an earlier sync made it so.
        let durable = counter.is_some() || storage.unsynced_writes() == 0;
        self.trace(|| format!("{moment}: commit {} (txn {}), durable {durable}", recovered.counter, db.meta().txn.0));
        self.book.recover(recovered.counter, durable);
    }

    /// Continue live, restart the process on the same file, or restart from an image.
    fn choose(&mut self, liveness: Liveness, mut passed: Vec<(Vec<u8>, u64)>) -> Option<Restart> {
        let roll = self.rng.random_range(0..100);
        let counters: Vec<u64> = passed.iter().map(|(_, counter)| *counter).collect();
        self.trace(|| format!("images hold commits {counters:?}"));
        if liveness == Liveness::Healthy && roll < 50 {
            self.counters.continued += 1;
            return None;
        }
        if liveness != Liveness::Stopped && (roll < 65 || passed.is_empty()) {
            self.counters.process_restarts += 1;
            return Some(Restart::Process);
        }
        if passed.is_empty() {
            return Some(Restart::Fresh);
        }
        self.counters.image_restarts += 1;
        let (image, counter) = passed.swap_remove(self.rng.random_range(0..passed.len()));
        Some(Restart::Image { image, counter })
    }
}

/// With `QUIRE_POWERCUT_DUMP=DIR`, writes a failing image to `DIR` for `quire check`,
/// beside the image keeping every write (`-keep`) and the one keeping none (`-drop`).
fn dump(config: &Config, position: usize, storage: &FaultyStorage, image: &[u8]) {
    let Ok(dir) = std::env::var("QUIRE_POWERCUT_DUMP") else { return };
    let path = |suffix: &str| format!("{dir}/seed-{}-image-{position}{suffix}.quire", config.seed);
    std::fs::write(path(""), image).expect("write the failing image");
    std::fs::write(path("-keep"), crash_image(storage, Cut::Mode(CrashMode::KeepUnsynced))).expect("write the image");
    std::fs::write(path("-drop"), storage.crash_image(CrashMode::DropUnsynced)).expect("write the image");
}

/// The simulator: the live process and the driver.
struct Sim {
    process: Process,
    driver: Driver,
}

impl Sim {
    fn new(config: Config) -> Sim {
        let rng = TestRng::new(config.seed);
        let counters = Counters::default();
        let mut driver = Driver { config, rng, book: Book::default(), counters, spans: (40, 10), retry: None };
        let options = live_options(&mut driver.rng, 64);
        Sim { process: Process::create(options), driver }
    }

    /// The old process ends (its handle closed), a new one starts as `how` says.
    fn restart(self, how: Restart) -> Sim {
        let Sim { process, mut driver } = self;
        let frames = POOL_FRAMES[driver.rng.random_range(0..POOL_FRAMES.len())];
        let options = live_options(&mut driver.rng, frames);
        // Killed, not closed: the new process finds what the OS holds, unsynced writes too.
        let survivor = matches!(how, Restart::Process).then(|| Arc::new(process.storage.after_process_crash()));
        drop(process);
        let process = match how {
            Restart::Process => {
                let storage = survivor.expect("made above for a process restart");
                let db = Database::open_storage(storage.clone(), options, "restarted")
                    .unwrap_or_else(|error| driver.fatal(format!("reopening after a process crash: {error}")));
                driver.took_over(&storage, &db, "after a process restart", None);
                Process { storage, db }
            }
            Restart::Image { image, counter } => {
                let storage = Arc::new(FaultyStorage::new(image, None));
                let db = Database::open_storage(storage.clone(), options, "image").expect("this image opened before");
                driver.took_over(&storage, &db, "after a restart from an image", Some(counter));
                Process { storage, db }
            }
            Restart::Fresh => {
                driver.book = Book::default();
                Process::create(options)
            }
        };
        Sim { process, driver }
    }
}

/// The options of a new process: half of them log their small commits, and half of
/// those queue them for a group append (one thread: each commit leads its own).
fn live_options(rng: &mut TestRng, frames: usize) -> Options {
    let log_pages = if rng.random_bool(0.5) { LOG_PAGES } else { 0 };
    let group = log_pages > 0 && rng.random_bool(0.5);
    DatabaseBuilder::from(options(frames)).commit_log_pages(log_pages).group_commit(group).into_options()
}

fn run(config: Config) {
    let mut sim = Sim::new(config);
    while sim.driver.counters.images < config.images {
        if let Some(how) = sim.driver.step(&sim.process) {
            sim = sim.restart(how);
        }
    }
    sim.driver.counters.print(config.seed, sim.driver.book.acked);
    let failures = sim.driver.counters.failures;
    assert!(failures == 0, "QUIRE_SEED={}: {failures} failures (listed above)", config.seed);
}

#[test]
fn power_cuts_at_random_points_recover_an_acknowledged_or_in_flight_commit() {
    // Proves: whatever subset of the unsynced writes survives a power cut (or a process
    // crash, or an I/O error), the file opens, checks clean, and holds exactly one
    // commit's contents, no older than the last durable acknowledged one.
    run(Config::from_env(DEFAULT_IMAGES));
}

#[test]
#[ignore = "long mode: 1,000,000 crash images (hours)"]
fn power_cuts_long() {
    // Proves: the same as the default run, over a million images.
    run(Config::from_env(LONG_IMAGES));
}
