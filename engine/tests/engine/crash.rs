//! Crash torture: a child process runs random write transactions on a real file and
//! reports each acknowledged commit on stdout; the parent SIGKILLs it at a random
//! moment, reopens, checks integrity and verifies the state equals the model at a commit
//! at or after the last acknowledged one — never a half-done transaction.
//!
//! The child is this same test binary, started with `--ignored --exact crash::child`
//! and the database path and seed in the environment. Each transaction's changes are a
//! function of (seed, commit number, current state), so the parent replays the model.
//! `QUIRE_CRASH_KILLS` sets the number of kills (default 100; 10,000 for a long run).

use super::common::*;
use quiredb_engine::{Database, Durability, Options, PageId, PageKind, PageRead, WriteTxn, check};
use rand::Rng;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Logical page of the directory: commit number, then slot → logical page id.
const SLOTS: usize = 48;

fn options() -> Options {
    Options { page_size: Some(4096), cache_bytes: 256 * 4096, ..Options::default() }
}

/// The slot table: which logical page holds each slot (0 = empty) and its value.
#[derive(Clone, Debug, Default, PartialEq)]
struct State {
    commit: u64,
    pages: Vec<u64>,
    values: Vec<u64>,
}

/// Transaction `commit` of the torture run, applied to `state` (and to the db if given).
fn step(seed: u64, state: &mut State, txn: Option<&WriteTxn<'_>>) -> quiredb_engine::Result<Durability> {
    let commit = state.commit + 1;
    let mut rng = rng(seed ^ commit.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    for _ in 0..rng.random_range(1..12) {
        let slot = rng.random_range(0..SLOTS);
        let value = commit * 100 + slot as u64;
        match (state.pages[slot], rng.random_range(0..4)) {
            (0, _) | (_, 0) => {
                if let Some(txn) = txn {
                    if state.pages[slot] != 0 {
                        txn.free_page(PageId(state.pages[slot]))?;
                    }
                    let mut page = txn.alloc_page(PageKind::BTREE_LEAF)?;
                    fill(&mut page, value);
                    state.pages[slot] = page.id().0;
                }
            }
            (id, _) => {
                if let Some(txn) = txn {
                    fill(&mut txn.page_mut(PageId(id))?, value);
                }
            }
        }
        state.values[slot] = value;
    }
    state.commit = commit;
    Ok(match commit % 3 {
        0 => Durability::Full,
        1 => Durability::Checksummed,
        _ => Durability::None,
    })
}

/// Writes the directory page (logical page 1).
fn save_directory(txn: &WriteTxn<'_>, state: &State) -> quiredb_engine::Result<()> {
    let mut page = txn.page_mut(PageId(1))?;
    page[..8].copy_from_slice(&state.commit.to_le_bytes());
    for (slot, id) in state.pages.iter().enumerate() {
        page[8 + slot * 8..16 + slot * 8].copy_from_slice(&id.to_le_bytes());
    }
    Ok(())
}

/// Reads the directory and the slot values from the database.
fn load(db: &Database) -> State {
    let txn = db.begin_read().unwrap();
    let page = txn.page(PageId(1)).unwrap();
    let mut state = State { commit: u64::from_le_bytes(page[..8].try_into().unwrap()), ..State::default() };
    for slot in 0..SLOTS {
        let id = u64::from_le_bytes(page[8 + slot * 8..16 + slot * 8].try_into().unwrap());
        state.pages.push(id);
        let value = if id == 0 { 0 } else { value_of(&txn.page(PageId(id)).unwrap()).expect("intact slot page") };
        state.values.push(value);
    }
    state
}

fn create(path: &std::path::Path) {
    let db = Database::create(path, options()).unwrap();
    let txn = db.begin_write().unwrap();
    assert_eq!(txn.alloc_page(PageKind::BTREE_HEAD).unwrap().id(), PageId(1));
    save_directory(&txn, &State { commit: 0, pages: vec![0; SLOTS], values: vec![0; SLOTS] }).unwrap();
    txn.commit(Durability::Full).unwrap();
}

#[test]
#[ignore = "child process of crash_torture"]
fn child() {
    let Ok(path) = std::env::var("QUIRE_CRASH_DB") else { return };
    let seed: u64 = std::env::var("QUIRE_CRASH_SEED").unwrap().parse().unwrap();
    let db = Database::open(&path, options()).unwrap();
    let mut state = load(&db);
    tell("ready");
    loop {
        let txn = db.begin_write().unwrap();
        let durability = step(seed, &mut state, Some(&txn)).unwrap();
        save_directory(&txn, &state).unwrap();
        txn.commit(durability).unwrap();
        tell(&format!("ack {}", state.commit));
    }
}

#[test]
fn crash_torture() {
    // Proves: after a SIGKILL at any moment, the file checks clean and holds exactly the
    // state of a commit at or after the last acknowledged one.
    let seed = seed("crash torture");
    let kills = env_usize("QUIRE_CRASH_KILLS", 100);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("torture.quire");
    create(&path);
    let mut model = State { commit: 0, pages: vec![0; SLOTS], values: vec![0; SLOTS] };
    let mut rng = rng(seed);
    let mut productive = 0; // kills whose child acknowledged at least one commit
    for kill in 0..kills {
        let acked_now = kill_mid_work(&mut exe_args(&path, seed), dir.path(), kill, &mut rng, 1_000..30_000);
        productive += usize::from(acked_now.is_some());
        let acked = acked_now.unwrap_or(model.commit);
        let db = Database::open(&path, options()).unwrap();
        let report = check(&db).unwrap();
        assert!(report.is_clean(), "kill {kill}: {:?}", report.problems);
        let found = load(&db);
        assert!(found.commit >= acked, "kill {kill}: commit {} lost (found {})", acked, found.commit);
        while model.commit < found.commit {
            step(seed, &mut model, None).unwrap();
        }
        assert_eq!(found.values, model.values, "kill {kill}: state differs from the model at commit {}", found.commit);
    }
    // A floor on progress: a child that never commits (or a commit that does nothing
    // while acknowledging) must not pass as a crash that lost nothing.
    assert!(productive * 2 >= kills, "only {productive} of {kills} children acknowledged a commit");
    assert!(model.commit as usize >= kills, "{} commits in {kills} kills", model.commit);
    println!("crash torture: {kills} kills ({productive} with acknowledged commits), last commit {}", model.commit);
}

/// The child's command line.
fn exe_args(path: &std::path::Path, seed: u64) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--ignored", "--exact", "crash::child", "--nocapture", "--test-threads=1"])
        .env("QUIRE_CRASH_DB", path)
        .env("QUIRE_CRASH_SEED", seed.to_string());
    command
}

/// Starts the child, waits until it has opened the database and is committing
/// ("ready"), lets it work for a random time in `pause` (µs), checks it is still alive
/// and SIGKILLs it. Returns the last commit it acknowledged. The child's stderr is kept
/// in a file and shown if it dies on its own.
fn kill_mid_work(
    command: &mut Command,
    dir: &std::path::Path,
    kill: usize,
    rng: &mut impl Rng,
    pause: std::ops::Range<u64>,
) -> Option<u64> {
    let stderr_path = dir.join(format!("child-{kill}.stderr"));
    let stderr_file = std::fs::File::create(&stderr_path).unwrap();
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::from(stderr_file)).spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (lines, received) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let stderr = || std::fs::read_to_string(&stderr_path).unwrap_or_default();
    // The test harness prints its own lines first, and "test child ... " without an
    // end of line, so "ready" ends the line it is on.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match received.recv_timeout(left) {
            Ok(line) if line.ends_with("ready") => break,
            Ok(_) => {}
            Err(error) => panic!("kill {kill}: the child did not get ready ({error}):\n{}", stderr()),
        }
    }
    std::thread::sleep(Duration::from_micros(rng.random_range(pause)));
    // The child must be killed mid-work: one that exited by itself proves nothing.
    assert!(child.try_wait().unwrap().is_none(), "kill {kill}: the child exited early:\n{}", stderr());
    child.kill().unwrap();
    child.wait().unwrap();
    reader.join().unwrap();
    let _ = std::fs::remove_file(&stderr_path);
    received.try_iter().filter_map(|line| line.strip_prefix("ack ").and_then(|n| n.parse::<u64>().ok())).last()
}

/// Writes a line to the parent and flushes it at once (stdout to a pipe is block
/// buffered: an acknowledgement still in the buffer dies with the child unseen).
fn tell(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").and_then(|()| out.flush()).expect("the parent reads the child's stdout");
}
