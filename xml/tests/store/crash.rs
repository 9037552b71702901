//! Crash torture of XML loads: a child process runs the steps of the workload (loads
//! into new collections and appends, see `mod.rs`), one transaction each, reporting
//! each acknowledged commit; the parent SIGKILLs it at random moments — mid-load,
//! mid-commit, between steps — reopens the file and checks that it holds exactly the
//! steps up to the counter found, which must be the last acknowledged step or the one
//! after it: every collection equal to its documents' DOMs, the collection of a load
//! not committed absent, an append not committed leaving its collection as before,
//! and every checker clean. The next child goes on from the recovered file.
//!
//! A file takes [`STEPS_PER_FILE`] steps, then the run starts a new one, so a run
//! stays short whatever its kill count. `QUIRE_CRASH_KILLS` sets the kills (default
//! [`DEFAULT_KILLS`]); `QUIRE_SEED` replays the workload (the moments of the kills
//! depend on timing, so a replay strikes elsewhere).

use super::child::{child_options, exe_args_for_kill, kill_mid_work, tell};
use super::{apply, durability, expected, options, progress, step, verify, write_inputs};
use quiredb_engine::Database;
use quiredb_test_support::Rng as TestRng;
use rand::Rng;
use std::path::{Path, PathBuf};

/// Kills of a default run (a few seconds in a debug build).
const DEFAULT_KILLS: usize = 24;
/// Steps a file takes before the run moves to a new one.
const STEPS_PER_FILE: u64 = 5;
/// Bytes of a generated document (about; a step loads 2 to 5).
const DOC_BYTES: usize = 10_000;
/// How long the child works before it is killed, in µs.
const PAUSE_US: std::ops::Range<u64> = 2_000..100_000;
/// How long the child commits before it is killed, when the kill aims at a commit.
const COMMIT_PAUSE_US: std::ops::Range<u64> = 0..12_000;

/// Where a kill struck, from the phase file the child keeps and what the file held.
#[derive(Debug, Default)]
struct Tally {
    mid_load: usize,
    mid_commit: usize,
    /// The commit landed but its acknowledgement did not reach the parent.
    committed_unacknowledged: usize,
    between: usize,
}

/// A new database file for epoch `epoch`, at step 0.
fn new_file(dir: &Path, epoch: u64) -> PathBuf {
    let path = dir.join(format!("xml-{epoch}.quire"));
    Database::create(&path, options()).expect("create");
    path
}

/// The file in which the child announces what it is doing ("load N", "commit N").
fn phase_file(db: &Path) -> PathBuf {
    db.with_extension("phase")
}

#[test]
#[ignore = "child process of a_killed_xml_load_leaves_no_trace"]
fn child() {
    let Ok(path) = std::env::var("QUIRE_CRASH_DB") else { return };
    let path = PathBuf::from(path);
    let seed: u64 = std::env::var("QUIRE_CRASH_SEED").expect("a seed").parse().expect("a number");
    // A third of the children log their commits, a third also group-commit them.
    let db = Database::open(&path, child_options(options())).expect("the parent checked the file");
    let mut number = progress(&db.begin_read().expect("reader")).expect("the counter");
    let inputs = path.with_extension("inputs");
    // Aimed at a commit, the child is "ready" once its first load is done, and the
    // parent's pause is about as long as a commit.
    let mut ready_at_commit = std::env::var("QUIRE_XML_KILL").is_ok_and(|aim| aim == "commit");
    if !ready_at_commit {
        tell("ready");
    }
    loop {
        number += 1;
        let step = step(seed, number, DOC_BYTES);
        let paths = write_inputs(&inputs, &step);
        std::fs::write(phase_file(&path), format!("load {number}")).expect("the phase file");
        let txn = db.begin_write().expect("writer");
        apply(&txn, &step, &paths).expect("the load");
        std::fs::write(phase_file(&path), format!("commit {number}")).expect("the phase file");
        if std::mem::take(&mut ready_at_commit) {
            tell("ready");
        }
        txn.commit(durability(number)).expect("the commit");
        std::fs::write(phase_file(&path), format!("done {number}")).expect("the phase file");
        tell(&format!("ack {number}"));
    }
}

#[test]
fn a_killed_xml_load_leaves_no_trace() {
    // Proves: after a SIGKILL at any moment of a load or its commit, the reopened file
    // holds every acknowledged load whole and equal to its documents, no trace of the
    // load in flight (a new collection absent, an appended one as before) unless its
    // commit landed whole, and the engine's, structures' and store's checks are clean.
    println!("xml crash torture:");
    let seed = quiredb_test_support::random_seed();
    let kills = super::count_from_env("QUIRE_CRASH_KILLS", DEFAULT_KILLS);
    let dir = tempfile::tempdir().expect("a temp dir");
    let mut rng = TestRng::new(seed);
    let (mut epoch, mut committed) = (0, 0);
    let mut path = new_file(dir.path(), epoch);
    let mut tally = Tally::default();
    let mut steps = 0;
    for kill in 0..kills {
        let file_seed = seed.wrapping_add(epoch);
        let mut command = exe_args_for_kill("store::crash::child", &path, file_seed, kill);
        let pause = if rng.random_ratio(1, 3) {
            command.env("QUIRE_XML_KILL", "commit");
            COMMIT_PAUSE_US
        } else {
            PAUSE_US
        };
        let acked = kill_mid_work(&mut command, dir.path(), kill, &mut rng, pause).unwrap_or(committed);
        let db = Database::open(&path, options()).unwrap_or_else(|e| panic!("seed {seed} kill {kill}: reopen: {e}"));
        let found = progress(&db.begin_read().expect("reader")).expect("the counter");
        let what = format!("seed {seed} kill {kill} (file {epoch}, acknowledged step {acked}, found {found})");
        assert!(found >= acked, "{what}: an acknowledged load was lost");
        assert!(found <= acked + 1, "{what}: a step was never run");
        let problems = verify(&db, &expected(file_seed, found, DOC_BYTES), false);
        assert!(problems.is_empty(), "{what}: {problems:#?}");
        let phase = std::fs::read_to_string(phase_file(&path)).unwrap_or_default();
        match phase.split_once(' ') {
            Some(("load", _)) => tally.mid_load += 1,
            Some(("commit", _)) if found == acked => tally.mid_commit += 1,
            _ if found > acked => tally.committed_unacknowledged += 1,
            _ => tally.between += 1,
        }
        steps += found - committed;
        committed = found;
        if committed >= STEPS_PER_FILE {
            epoch += 1;
            (path, committed) = (new_file(dir.path(), epoch), 0);
        }
    }
    println!("xml crash torture: {kills} kills, {steps} steps committed in {} files, {tally:?}", epoch + 1);
    // A floor on progress: a child that never commits must not pass as one that lost
    // nothing.
    assert!(steps * 2 >= kills as u64, "seed {seed}: {steps} steps committed in {kills} kills");
}
