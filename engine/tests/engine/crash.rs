//! Crash torture: a child process runs random write transactions on a real file and
//! reports each acknowledged commit on stdout; the parent SIGKILLs it at a random
//! moment, reopens, checks integrity and verifies the state equals the model at a commit
//! at or after the last acknowledged one — never a half-done transaction.
//!
//! The child is this same test binary, started with `--ignored --exact crash::child`
//! and the database path and seed in the environment. Each transaction's changes are a
//! function of (seed, commit number, current state), so the parent replays the model.
//! `QUIRE_CRASH_KILLS` sets the number of kills (default 100; 10,000 for a long run).

use super::child::{child_options, exe_args_for_kill, kill_mid_work, tell};
use super::common::*;
use quiredb_engine::{Database, Durability, Options, PageId, PageKind, PageRead, WriteTxn, check};
use rand::Rng;

/// Logical page of the directory: commit number, then slot → logical page id.
const SLOTS: usize = 48;

fn options() -> Options {
    Database::builder().page_size(4096).cache_bytes(256 * 4096).into_options()
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
                    let mut page = txn.alloc_page(PageKind::structure(16))?;
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
    assert_eq!(txn.alloc_page(PageKind::structure(18)).unwrap().id(), PageId(1));
    save_directory(&txn, &State { commit: 0, pages: vec![0; SLOTS], values: vec![0; SLOTS] }).unwrap();
    txn.commit(Durability::Full).unwrap();
}

#[test]
#[ignore = "child process of crash_torture"]
fn child() {
    let Ok(path) = std::env::var("QUIRE_CRASH_DB") else { return };
    let seed: u64 = std::env::var("QUIRE_CRASH_SEED").unwrap().parse().unwrap();
    let db = Database::open(&path, child_options(options())).unwrap();
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
        let acked_now = kill_mid_work(
            &mut exe_args_for_kill("crash::child", &path, seed, kill),
            dir.path(),
            kill,
            &mut rng,
            1_000..30_000,
        );
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
