//! Fault injection into XML loads: a step of the workload (an append to a collection,
//! or a new collection after a committed one) runs on a [`FaultyStorage`] that fails
//! one I/O operation — EIO, ENOSPC, a torn write or a power cut — picked by the seed
//! among the operations of the load (page reads, spills) or of its commit (writes,
//! syncs). The failure must come back as an error naming its cause, never a panic,
//! and the handle must refuse further writes; then every crash image (the OS keeping
//! the unsynced writes, losing them, or keeping a random subset) must reopen to the
//! state before the step or — only when the commit itself failed or succeeded — the
//! state after it, whole, with every checker clean.
//!
//! `QUIRE_XML_FAULTS` sets the faulted runs (default [`DEFAULT_RUNS`]); `QUIRE_SEED`
//! replays a run exactly (no timing is involved).

use super::{Step, apply, expected, progress, step, verify, write_inputs};
use quiredb_engine::storage::{CrashMode, Fault, FaultKind, FaultyStorage, MemStorage};
use quiredb_engine::{Database, Durability, Options};
use quiredb_test_support::Rng as TestRng;
use rand::Rng;
use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Faulted runs of a default run (a few seconds in a debug build).
const DEFAULT_RUNS: usize = 16;
/// Bytes of a generated document: the faulted step outgrows the pool, so the load
/// spills pages before its commit.
const DOC_BYTES: usize = 15_000;
const KINDS: [FaultKind; 4] = [FaultKind::Eio, FaultKind::Enospc, FaultKind::TornWrite, FaultKind::PowerCut];

/// The engine's smallest pool (64 pages of 4 KiB), so loads spill early.
fn options() -> Options {
    Database::builder().page_size(4096).cache_bytes(64 * 4096).into_options()
}

/// How a faulted run ended.
#[derive(Debug)]
enum Outcome {
    OpenFailed(String),
    LoadFailed(String),
    CommitFailed(String),
    Committed,
}

/// A file holding steps `1..=steps`, each committed with full durability.
fn base(seed: u64, steps: u64, inputs: &Path) -> Vec<u8> {
    let storage = Arc::new(MemStorage::new());
    let db = Database::with_storage(storage.clone(), super::options(), "base").expect("an in-memory database");
    for number in 1..=steps {
        let step = step(seed, number, DOC_BYTES);
        let paths = write_inputs(inputs, &step);
        let txn = db.begin_write().expect("writer");
        apply(&txn, &step, &paths).expect("the base loads");
        txn.commit(Durability::Full).expect("commit");
    }
    drop(db);
    storage.snapshot()
}

/// Runs `step` on `storage`: open, load, commit with full durability. `marks` gets the
/// operation counts after opening and after loading.
fn run(storage: &Arc<FaultyStorage>, step: &Step, paths: &[PathBuf], marks: &mut Vec<u64>) -> Outcome {
    let db = match Database::open_storage(storage.clone(), options(), "faulty") {
        Ok(db) => db,
        Err(error) => return Outcome::OpenFailed(error.to_string()),
    };
    marks.push(storage.ops());
    let outcome = match db.begin_write() {
        Err(error) => Outcome::LoadFailed(error.to_string()),
        Ok(txn) => match apply(&txn, step, paths) {
            Err(error) => Outcome::LoadFailed(error.to_string()),
            Ok(()) => {
                marks.push(storage.ops());
                match txn.commit(Durability::Full) {
                    Err(error) => Outcome::CommitFailed(error.to_string()),
                    Ok(()) => Outcome::Committed,
                }
            }
        },
    };
    if !matches!(outcome, Outcome::Committed) {
        let refused = matches!(db.begin_write(), Err(quiredb_engine::Error::Poisoned));
        assert!(refused, "after {outcome:?} the handle must refuse writes until reopened");
    }
    outcome
}

/// True when `error` names the injected fault (a stopped machine fails with EIO).
fn names_cause(error: &str, kind: FaultKind) -> bool {
    match kind {
        FaultKind::Enospc => error.contains("No space left on device"),
        _ => error.contains("injected EIO"),
    }
}

/// The steps each crash image may hold after `outcome`, given `before` steps before.
fn allowed(outcome: &Outcome, before: u64) -> std::ops::RangeInclusive<u64> {
    match outcome {
        Outcome::OpenFailed(_) | Outcome::LoadFailed(_) => before..=before,
        Outcome::CommitFailed(_) => before..=before + 1,
        Outcome::Committed => before + 1..=before + 1,
    }
}

/// Opens each distinct crash image of `storage` and checks it: a state in `allowed`,
/// a rollback at open (the engine refusing the commit in flight) only if the commit
/// failed.
fn verify_images(storage: &FaultyStorage, seed: u64, outcome: &Outcome, before: u64, what: &str) {
    let allowed = allowed(outcome, before);
    let rollback_allowed = matches!(outcome, Outcome::CommitFailed(_));
    let modes = [CrashMode::KeepUnsynced, CrashMode::DropUnsynced, CrashMode::Subset(seed)];
    let mut seen = HashSet::new();
    for mode in modes {
        let image = storage.crash_image(mode);
        if !seen.insert(image.clone()) {
            continue;
        }
        let db = Database::open_storage(Arc::new(MemStorage::from_bytes(image)), options(), "image")
            .unwrap_or_else(|error| panic!("{what}, {mode:?}: reopen failed: {error}"));
        let found = progress(&db.begin_read().expect("reader")).expect("the counter");
        assert!(allowed.contains(&found), "{what}, {mode:?}: found step {found}, allowed {allowed:?}");
        let problems = verify(&db, &expected(seed, found, DOC_BYTES), rollback_allowed);
        assert!(problems.is_empty(), "{what}, {mode:?}: {problems:#?}");
    }
}

/// The step after `before` steps, and where its operations lie in an unfaulted run.
struct Plan {
    step: Step,
    paths: Vec<PathBuf>,
    /// Operations after opening, after loading, in all.
    opened: u64,
    loaded: u64,
    total: u64,
}

/// Runs the step after `before` on `image` without a fault, counting operations, and
/// checks that every crash image holds it (an acknowledged full commit is durable).
fn plan(seed: u64, image: &[u8], before: u64, inputs: &Path) -> Plan {
    let step = step(seed, before + 1, DOC_BYTES);
    let paths = write_inputs(inputs, &step);
    let clean = Arc::new(FaultyStorage::new(image.to_vec(), None));
    let mut marks = Vec::new();
    let outcome = run(&clean, &step, &paths, &mut marks);
    assert!(matches!(outcome, Outcome::Committed), "seed {seed}: the unfaulted step commits: {outcome:?}");
    verify_images(&clean, seed, &outcome, before, &format!("seed {seed}: step {} unfaulted", before + 1));
    Plan { step, paths, opened: marks[0], loaded: marks[1], total: clean.ops() }
}

#[test]
fn a_failed_io_in_an_xml_load_or_its_commit_leaves_no_trace() {
    // Proves: an I/O failure at any operation of a load or its commit surfaces as an
    // error naming the cause (never a panic), poisons the handle, and leaves a file
    // whose every crash image holds the collection only if its commit was reached —
    // whole then, as before otherwise — and checks clean.
    println!("xml fault injection:");
    let seed = quiredb_test_support::random_seed();
    let runs = super::count_from_env("QUIRE_XML_FAULTS", DEFAULT_RUNS);
    let inputs = tempfile::tempdir().expect("a temp dir");
    let bases = [base(seed, 1, inputs.path()), base(seed, 2, inputs.path())];
    let mut rng = TestRng::new(seed);
    let mut outcomes = [0usize; 4];
    let plans = [plan(seed, &bases[0], 1, inputs.path()), plan(seed, &bases[1], 2, inputs.path())];
    for run_number in 0..runs {
        let before = 1 + (run_number % 2) as u64; // step 2 appends to c1, step 3 creates c3
        let image = &bases[run_number % 2];
        let Plan { step, paths, opened, loaded, total } = &plans[run_number % 2];
        let (opened, loaded, total) = (*opened, *loaded, *total);
        let at_op =
            if rng.random_bool(0.5) { rng.random_range(opened..loaded) } else { rng.random_range(loaded..total) };
        let kind = KINDS[rng.random_range(0..KINDS.len())];
        let what = format!(
            "seed {seed} run {run_number}: step {} ({kind:?} at op {at_op}; load ops {opened}..{loaded}, commit ops ..{total})",
            before + 1
        );
        let storage = Arc::new(FaultyStorage::new(image.clone(), Some(Fault { at_op, kind })));
        let outcome = catch_unwind(AssertUnwindSafe(|| run(&storage, step, paths, &mut Vec::new())))
            .unwrap_or_else(|_| panic!("{what}: the load or its commit panicked"));
        assert!(storage.fault_fired(), "{what}: the fault fired");
        match &outcome {
            Outcome::OpenFailed(error) | Outcome::LoadFailed(error) | Outcome::CommitFailed(error) => {
                assert!(names_cause(error, kind), "{what}: the error does not name the cause: {error}");
            }
            Outcome::Committed => panic!("{what}: the commit was acknowledged despite the fault"),
        }
        outcomes[match outcome {
            Outcome::OpenFailed(_) => 0,
            Outcome::LoadFailed(_) => 1,
            Outcome::CommitFailed(_) => 2,
            Outcome::Committed => 3,
        }] += 1;
        verify_images(&storage, seed, &outcome, before, &what);
    }
    println!(
        "xml fault injection: {runs} runs, failed at open {}, in the load {}, in the commit {}",
        outcomes[0], outcomes[1], outcomes[2]
    );
}
