//! The commit log (`Options::commit_log_pages`): what a logged commit writes, that
//! every acknowledged commit survives a power cut through the log alone, that a torn or
//! unsynced record and a checkpoint cut at any step never show a half-done commit, and
//! that a read-only open sees the log without writing. Randomised tests print their
//! seed (`QUIRE_SEED` replays).

use super::common::*;
use quiredb_engine::storage::{CrashMode, Fault, FaultKind, FaultyStorage, MemStorage};
use quiredb_engine::{Database, Durability, Options, PageId, PageKind, PageRead, check};
use rand::Rng;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Pages of the log region in these tests: small, so checkpoints happen often.
const LOG_PAGES: u64 = 64;
/// Transactions of one faulted run.
const TXNS: usize = 24;

fn log_options() -> Options {
    Database::builder().page_size(4096).cache_bytes(64 * 4096).commit_log_pages(LOG_PAGES).into_options()
}

fn format_version(image: &[u8], slot: usize) -> u32 {
    u32::from_le_bytes(image[slot * 4096 + 40..slot * 4096 + 44].try_into().unwrap())
}

/// A small transaction (1–5 page operations), mirrored in `model`.
fn small_txn(
    db: &Database,
    rng: &mut TestRng,
    model: &mut Model,
    value: u64,
    durability: Durability,
) -> quiredb_engine::Result<()> {
    txn_of(db, rng, model, value, durability, 1..6)
}

/// A transaction of `ops` page operations (a count drawn from the range), mirrored in
/// `model`.
fn txn_of(
    db: &Database,
    rng: &mut TestRng,
    model: &mut Model,
    value: u64,
    durability: Durability,
    ops: std::ops::Range<u64>,
) -> quiredb_engine::Result<()> {
    let txn = db.begin_write()?;
    for op in 0..rng.random_range(ops) {
        let value = value * 100 + op;
        if model.len() < 3 || rng.random_range(0..3) == 0 {
            let mut page = txn.alloc_page(PageKind::structure(16))?;
            fill(&mut page, value);
            model.insert(page.id().0, value);
        } else {
            let id = *model.keys().nth(rng.random_range(0..model.len())).expect("non-empty");
            fill(&mut txn.page_mut(PageId(id))?, value);
            model.insert(id, value);
        }
    }
    txn.commit(durability)
}

#[test]
fn a_logged_commit_makes_one_durable_append_and_leaves_the_metas_alone() {
    // Proves: a small commit in log mode writes no meta page and syncs once (but the
    // checkpoint, a commit made in place when the region has no room left: it syncs
    // twice and writes one meta), and it survives a power cut that loses every write
    // that was not made durable.
    let storage = Arc::new(FaultyStorage::new(Vec::new(), None));
    let db = Database::with_storage(storage.clone(), log_options(), "log").unwrap();
    let ids = committed_pages(&db, 4); // allocates the region: a Full commit in place
    let mut metas = storage.crash_image(CrashMode::KeepUnsynced)[..2 * 4096].to_vec();
    assert_eq!(format_version(&metas, 0).max(format_version(&metas, 1)), 7, "a file with a log is version 7");
    let mut model: Model = ids.iter().enumerate().map(|(value, id)| (id.0, value as u64)).collect();
    let mut checkpoints = 0;
    for round in 0..40u64 {
        let before = db.stats();
        let txn = db.begin_write().unwrap();
        fill(&mut txn.page_mut(ids[round as usize % 4]).unwrap(), 1000 + round);
        txn.commit(Durability::Checksummed).unwrap();
        model.insert(ids[round as usize % 4].0, 1000 + round);
        let now = storage.crash_image(CrashMode::KeepUnsynced)[..2 * 4096].to_vec();
        match db.stats().syncs - before.syncs {
            1 => assert!(now == metas, "round {round}: a logged commit wrote a meta"),
            2 => checkpoints += 1,
            syncs => panic!("round {round}: {syncs} syncs"),
        }
        metas = now;
    }
    // Each commit rewrites a whole 4 KiB page, so its record is two pages (the leaf's
    // delta is the whole page; the map page's is small): the 64-page region has no
    // room for the next after 31 commits.
    assert_eq!(checkpoints, 1, "a checkpoint when the region is full");
    let image = storage.crash_image(CrashMode::DropUnsynced);
    drop(db);
    let db = Database::open_storage(Arc::new(MemStorage::from_bytes(image)), log_options(), "replayed").unwrap();
    assert!(check(&db).unwrap().is_clean());
    assert_matches(&db.begin_read().unwrap(), &model);
}

#[test]
fn a_checksummed_commit_too_large_for_the_log_syncs_once_and_the_log_extends_it() {
    // Proves: with the log empty, a `Checksummed` commit written in place makes one sync
    // (pages and meta together, verified at open), not the two of `Full`; the small
    // commits after it are logged against it; while the log holds them, the next large
    // commit is `Full` (two syncs); and a power cut that drops every write not made
    // durable keeps every commit.
    let storage = Arc::new(FaultyStorage::new(Vec::new(), None));
    let db = Database::with_storage(storage.clone(), log_options(), "log").unwrap();
    let ids = committed_pages(&db, 4); // allocates the region: a `Full` commit in place
    let mut model: Model = ids.iter().enumerate().map(|(value, id)| (id.0, value as u64)).collect();
    let mut rng = rng(seed("log_checksummed_in_place"));
    let metas = |storage: &FaultyStorage| storage.crash_image(CrashMode::KeepUnsynced)[..2 * 4096].to_vec();
    for (round, syncs) in [(0u64, 1u64), (1, 2)] {
        let (before, old_metas) = (db.stats(), metas(&storage));
        txn_of(&db, &mut rng, &mut model, 100 + round, Durability::Checksummed, 200..201).unwrap();
        let in_place = metas(&storage);
        assert!(in_place != old_metas, "round {round}: a commit too large for the log writes a meta in place");
        assert_eq!(db.stats().syncs - before.syncs, syncs, "round {round}: syncs of a large commit in place");
        for small in 0..3 {
            let before = db.stats();
            small_txn(&db, &mut rng, &mut model, 200 + 10 * round + small, Durability::Checksummed).unwrap();
            assert_eq!(db.stats().syncs - before.syncs, 1, "round {round}: a small commit after it is one append");
            assert!(metas(&storage) == in_place, "round {round}: a logged commit wrote a meta");
        }
    }
    let image = storage.crash_image(CrashMode::DropUnsynced);
    drop(db);
    let db = Database::open_storage(Arc::new(MemStorage::from_bytes(image)), log_options(), "replayed").unwrap();
    assert!(db.rollback().is_none(), "the newest meta verified");
    assert!(check(&db).unwrap().is_clean());
    assert_matches(&db.begin_read().unwrap(), &model);
}

#[test]
fn a_read_only_open_replays_the_log_in_memory_and_writes_nothing() {
    // Proves: inspection sees every logged commit and leaves the file as it found it.
    let storage = Arc::new(FaultyStorage::new(Vec::new(), None));
    let db = Database::with_storage(storage.clone(), log_options(), "log").unwrap();
    let ids = committed_pages(&db, 2);
    for value in 10..13 {
        let txn = db.begin_write().unwrap();
        fill(&mut txn.page_mut(ids[0]).unwrap(), value);
        txn.commit(Durability::Full).unwrap();
    }
    let image = storage.crash_image(CrashMode::DropUnsynced);
    drop(db);
    let file = Arc::new(MemStorage::from_bytes(image.clone()));
    let db = Database::open_storage_read_only(file.clone(), log_options(), "inspect").unwrap();
    assert_eq!(value_of(&db.begin_read().unwrap().page(ids[0]).unwrap()), Some(12));
    assert!(check(&db).unwrap().is_clean());
    drop(db);
    assert!(file.snapshot() == image, "a read-only open wrote to the file");
}

#[test]
fn a_file_without_a_log_stays_version_3_and_takes_a_log_later() {
    // Proves: a file without a log keeps the format of before; a version-3 file opened
    // with a log gets its region and its commits survive a power cut through the log.
    let (storage, db) = memory_db(in_place_options());
    let ids = committed_pages(&db, 3);
    drop(db);
    let image = storage.snapshot();
    assert_eq!((format_version(&image, 0), format_version(&image, 1)), (3, 3));
    let faulty = Arc::new(FaultyStorage::new(image, None));
    let db = Database::open_storage(faulty.clone(), log_options(), "upgrade").unwrap();
    for value in [7, 8] {
        let txn = db.begin_write().unwrap();
        fill(&mut txn.page_mut(ids[1]).unwrap(), value);
        txn.commit(Durability::Checksummed).unwrap();
    }
    let image = faulty.crash_image(CrashMode::DropUnsynced);
    drop(db);
    let db = Database::open_storage(Arc::new(MemStorage::from_bytes(image)), small_options(), "no log now").unwrap();
    assert_eq!(value_of(&db.begin_read().unwrap().page(ids[1]).unwrap()), Some(8));
    assert!(check(&db).unwrap().is_clean());
}

/// Runs the workload on `db`: each entry of the result is (model, durability) of an
/// attempted commit, and the number acknowledged.
fn workload(db: &Database, seed: u64, base: &Model) -> (Vec<(Model, Durability)>, usize) {
    let mut rng = rng(seed);
    let mut model = base.clone();
    let mut attempts = Vec::new();
    for round in 0..TXNS {
        let durability = random_durability(&mut rng);
        // Every sixth transaction is too large for the log (its record would pass half
        // the region): it commits in place, and a `Checksummed` one with the log empty
        // begins an epoch with one sync, which the small ones after it extend.
        let ops = if round % 6 == 5 { 100..120 } else { 1..6 };
        let result = txn_of(db, &mut rng, &mut model, round as u64 + 1, durability, ops);
        attempts.push((model.clone(), durability));
        if result.is_err() {
            return (attempts, round);
        }
    }
    (attempts, TXNS)
}

#[test]
fn a_fault_at_every_operation_of_logged_commits_and_checkpoints_loses_nothing_acknowledged() {
    // Proves: with a torn write, a power cut or an EIO at any I/O operation — a log
    // append, an in-place write (of a transaction too large for the log too, which
    // then begins an epoch), each step of a checkpoint — every image opens clean at
    // an acknowledged commit no older than the last durable one (or the one in flight,
    // whole), under every crash mode.
    let seed = seed("log_faults");
    let (image, base_model) = base_image(log_options());
    let mut runs = 0;
    for kind in [FaultKind::TornWrite, FaultKind::PowerCut, FaultKind::Eio] {
        for at_op in 0.. {
            let storage = Arc::new(FaultyStorage::new(image.clone(), Some(Fault { at_op, kind })));
            let (attempts, acked) = match Database::open_storage(storage.clone(), log_options(), "faulty") {
                Ok(db) => workload(&db, seed, &base_model),
                Err(_) => (Vec::new(), 0),
            };
            if !storage.fault_fired() {
                assert_eq!(acked, TXNS, "{kind:?}: no fault, everything commits");
                break;
            }
            // The newest acknowledged commit that is durable: a synced one, or any
            // before one.
            let durable = (0..acked).rev().find(|&i| attempts[i].1 != Durability::None).map_or(0, |i| i + 1);
            let modes = [CrashMode::KeepUnsynced, CrashMode::DropUnsynced, CrashMode::Subset(seed ^ at_op)];
            for mode in modes {
                let floor = if mode == CrashMode::KeepUnsynced { acked } else { durable };
                let what = format!("QUIRE_SEED={seed} {kind:?} at op {at_op}, {mode:?}");
                let attempts = Attempts { base: &base_model, commits: &attempts, floor, acked };
                verify_recovered(storage.crash_image(mode), log_options(), &attempts, &what);
            }
            runs += 1;
        }
    }
    println!("log faults: {runs} faulted runs, each checked under 3 crash modes");
    assert!(runs > 100, "the workload is long enough to reach checkpoints ({runs} runs)");
}

#[test]
fn a_fault_at_every_operation_of_the_replay_loses_nothing_and_the_replay_can_run_again() {
    // Proves: opening a file whose log holds records (the last replayed commit's meta
    // names no commit record: open rebuilds the free space from its map and writes it as
    // a new record) can be cut at any I/O operation — a torn write, a power cut, an EIO —
    // and every image opens clean, holding every commit, under every crash mode: the
    // rebuilt record goes past the file's end, so a second replay still finds the pages
    // its deltas were made against (each commit stamps 8 bytes of a page, so its delta
    // needs the base; the pages of the epoch's state it replaced are free once rebuilt).
    // Then the reopened file takes more logged commits.
    let seed = seed("replay_faults");
    let mut rng = rng(seed);
    let storage = Arc::new(FaultyStorage::new(Vec::new(), None));
    let db = Database::with_storage(storage.clone(), log_options(), "log").unwrap();
    let ids = committed_pages(&db, 12);
    // Each page: the value it was filled with, and the stamp at bytes 8..16.
    let mut model: BTreeMap<u64, (u64, u64)> =
        ids.iter().enumerate().map(|(value, id)| (id.0, (value as u64, stamp_of(value as u64)))).collect();
    let before = db.stats().syncs;
    for round in 0..20u64 {
        // One or two pages stamped, and now and then a page freed and another allocated
        // (a logical id freed and taken).
        // The first stamps the first page, the file's lowest: rebuilt, its old version is
        // the lowest free page, which a second replay reads as a base.
        let txn = db.begin_write().unwrap();
        for pick in 0..rng.random_range(1..3) {
            let at = if round == 0 && pick == 0 { 0 } else { rng.random_range(0..model.len()) };
            let id = *model.keys().nth(at).unwrap();
            txn.page_mut(PageId(id)).unwrap()[8..16].copy_from_slice(&(500 + round).to_le_bytes());
            model.get_mut(&id).unwrap().1 = 500 + round;
        }
        if round % 5 == 4 {
            let id = *model.keys().next_back().unwrap();
            txn.free_page(PageId(id)).unwrap();
            model.remove(&id);
            let mut page = txn.alloc_page(PageKind::structure(16)).unwrap();
            fill(&mut page, 900 + round);
            model.insert(page.id().0, (900 + round, stamp_of(900 + round)));
        }
        txn.commit(Durability::Full).unwrap();
    }
    assert_eq!(db.stats().syncs - before, 20, "every commit logged (one sync each), none in place");
    let image = storage.crash_image(CrashMode::DropUnsynced);
    drop(db);
    let expect_all = |db: &Database, model: &BTreeMap<u64, (u64, u64)>, what: &str| {
        let report = check(db).unwrap();
        assert!(report.problems.is_empty(), "{what}: {:?}", report.problems);
        let read = db.begin_read().unwrap();
        for (&id, &(value, stamp)) in model {
            let mut want = read.page(PageId(id)).unwrap().to_vec();
            fill(&mut want, value);
            want[8..16].copy_from_slice(&stamp.to_le_bytes());
            assert!(read.page(PageId(id)).unwrap()[..] == want[..], "{what}: logical page {id}");
        }
    };
    let mut runs = 0;
    for kind in [FaultKind::TornWrite, FaultKind::PowerCut, FaultKind::Eio] {
        for at_op in 0.. {
            let storage = Arc::new(FaultyStorage::new(image.clone(), Some(Fault { at_op, kind })));
            let opened = Database::open_storage(storage.clone(), log_options(), "faulty");
            if !storage.fault_fired() {
                storage.arm(None); // the replay ran whole: no fault for the check
                expect_all(&opened.unwrap(), &model, &format!("QUIRE_SEED={seed} the replay"));
                break;
            }
            drop(opened);
            for mode in [CrashMode::KeepUnsynced, CrashMode::DropUnsynced, CrashMode::Subset(seed ^ at_op)] {
                let what = format!("QUIRE_SEED={seed} {kind:?} at op {at_op} of the replay, {mode:?}");
                let cut = Arc::new(MemStorage::from_bytes(storage.crash_image(mode)));
                let db = Database::open_storage(cut, log_options(), "cut")
                    .unwrap_or_else(|error| panic!("{what}: reopen failed: {error}"));
                expect_all(&db, &model, &what);
            }
            runs += 1;
        }
    }
    assert!(runs >= 3 * 4, "the replay has several operations to cut ({runs} runs)");
    let db = Database::open_storage(Arc::new(MemStorage::from_bytes(image)), log_options(), "again").unwrap();
    for round in 0..40u64 {
        let txn = db.begin_write().unwrap();
        let id = *model.keys().nth(round as usize % model.len()).unwrap();
        txn.page_mut(PageId(id)).unwrap()[8..16].copy_from_slice(&(2000 + round).to_le_bytes());
        model.get_mut(&id).unwrap().1 = 2000 + round;
        txn.commit(Durability::Checksummed).unwrap();
        assert!(check(&db).unwrap().is_clean(), "round {round} after the replay");
    }
    expect_all(&db, &model, "after the replay and 40 more commits");
}

/// The bytes 8..16 that `fill(value)` writes.
fn stamp_of(value: u64) -> u64 {
    let mut page = [0u8; 16];
    fill(&mut page, value);
    u64::from_le_bytes(page[8..16].try_into().unwrap())
}

#[test]
fn group_commits_from_many_threads_keep_every_acknowledged_commit() {
    // Proves: with group commit, each thread's commit is durable when `commit` returns
    // (a power cut at that moment keeps it), and the file recovers clean with every
    // thread's last commit.
    const THREADS: usize = 4;
    const COMMITS: u64 = 60;
    let storage = Arc::new(FaultyStorage::new(Vec::new(), None));
    let options = quiredb_engine::DatabaseBuilder::from(log_options()).group_commit(true).into_options();
    let db = Database::with_storage(storage.clone(), options, "group").unwrap();
    let ids = committed_pages(&db, THREADS as u64);
    let syncs = db.stats().syncs;
    std::thread::scope(|scope| {
        for (thread, id) in ids.iter().enumerate() {
            let (db, storage) = (&db, &storage);
            scope.spawn(move || {
                for round in 1..=COMMITS {
                    let value = (thread as u64 + 1) * 1000 + round;
                    let txn = db.begin_write().unwrap();
                    fill(&mut txn.page_mut(*id).unwrap(), value);
                    txn.commit(Durability::Checksummed).unwrap();
                    if round % 20 == 0 {
                        // What a power cut now would keep holds this thread's commit.
                        let image = storage.crash_image(CrashMode::DropUnsynced);
                        let db = Database::open_storage_read_only(
                            Arc::new(MemStorage::from_bytes(image)),
                            log_options(),
                            "cut",
                        )
                        .unwrap();
                        let held = value_of(&db.begin_read().unwrap().page(*id).unwrap()).unwrap();
                        assert!(held >= value, "thread {thread}: acknowledged {value}, a power cut keeps {held}");
                    }
                }
            });
        }
    });
    let commits = THREADS as u64 * COMMITS;
    println!("group commit: {commits} commits, {} syncs", db.stats().syncs - syncs);
    let image = storage.crash_image(CrashMode::DropUnsynced);
    drop(db);
    let db = Database::open_storage(Arc::new(MemStorage::from_bytes(image)), log_options(), "cut").unwrap();
    assert!(check(&db).unwrap().is_clean());
    let txn = db.begin_read().unwrap();
    for (thread, id) in ids.iter().enumerate() {
        assert_eq!(value_of(&txn.page(*id).unwrap()), Some((thread as u64 + 1) * 1000 + COMMITS));
    }
}

#[test]
fn a_checkpoint_cut_after_its_meta_write_never_trusts_the_meta_without_its_pages() {
    // Proves: a checkpoint (the commit made in place once the log has no room) syncs
    // the logged commits' pages before it writes the `Full` meta: a power cut at the
    // sync after that write which keeps the meta and loses every other unsynced write
    // still opens clean at the last acknowledged commit, or at the checkpoint's own
    // commit, whole (its pages were synced with the others; its `commit` saw the cut).
    let storage = Arc::new(FaultyStorage::new(Vec::new(), None));
    let db = Database::with_storage(storage.clone(), log_options(), "log").unwrap();
    let ids = committed_pages(&db, 4);
    storage.cut_power_at_sync(2); // the second sync of the first checkpoint
    let mut acked = None;
    for value in 100.. {
        let txn = db.begin_write().unwrap();
        fill(&mut txn.page_mut(ids[value as usize % 4]).unwrap(), value);
        if txn.commit(Durability::Checksummed).is_err() {
            break;
        }
        acked = Some(value);
        assert!(value < 1000, "no checkpoint happened");
    }
    let acked = acked.expect("commits before the checkpoint");
    let image = storage.crash_image_filtered(4096, |at, _| at < 2 * 4096); // the meta only
    drop(db);
    let db = Database::open_storage(Arc::new(MemStorage::from_bytes(image)), log_options(), "cut").unwrap();
    let report = check(&db).unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    let txn = db.begin_read().unwrap();
    let cut = acked + 1;
    for (index, id) in ids.iter().enumerate() {
        let last = (100..=acked).rev().find(|value| *value as usize % 4 == index);
        let held = value_of(&txn.page(*id).unwrap());
        let want = Some(last.unwrap_or(index as u64));
        let or_cut = (cut as usize % 4 == index).then_some(cut);
        assert!(held == want || held == or_cut, "page {index}: {held:?}, expected {want:?} or {or_cut:?}");
    }
}

#[test]
fn compaction_moves_the_log_region_down_and_logged_commits_go_on_in_its_new_place() {
    // Proves: a region allocated at the end of a large first commit does not pin the
    // file's length: once the pages below it are freed, compaction ends the log's epoch,
    // moves the region into them and cuts the file; the next commits are logged in the
    // new place (one sync each) and survive a power cut that keeps only durable writes.
    let storage = Arc::new(FaultyStorage::new(Vec::new(), None));
    let db = Database::with_storage(storage.clone(), log_options(), "log").unwrap();
    let ids = committed_pages(&db, 600);
    let old_start = db.meta().log_start;
    assert!(old_start >= 600, "the region follows the first commit's pages ({old_start})");
    let txn = db.begin_write().unwrap();
    ids[4..].iter().for_each(|id| txn.free_page(*id).unwrap());
    txn.commit(Durability::Full).unwrap(); // logged: the freed pages are held for the log
    let mut model: Model = ids[..4].iter().enumerate().map(|(value, id)| (id.0, value as u64)).collect();
    db.compact().unwrap();
    let meta = db.meta();
    assert!(meta.log_start < 40, "the region moved down from {old_start} to {}", meta.log_start);
    assert!(meta.page_count <= meta.log_start + LOG_PAGES + 8, "the file was cut after the region: {meta:?}");
    for round in 0..6u64 {
        let before = db.stats().syncs;
        let txn = db.begin_write().unwrap();
        fill(&mut txn.page_mut(ids[round as usize % 4]).unwrap(), 2000 + round);
        txn.commit(Durability::Full).unwrap();
        model.insert(ids[round as usize % 4].0, 2000 + round);
        assert!(round == 0 || db.stats().syncs - before == 1, "round {round}: a logged commit syncs once");
    }
    let image = storage.crash_image(CrashMode::DropUnsynced);
    drop(db);
    let db = Database::open_storage(Arc::new(MemStorage::from_bytes(image)), log_options(), "replayed").unwrap();
    assert!(check(&db).unwrap().is_clean());
    assert_matches(&db.begin_read().unwrap(), &model);
    assert_eq!(db.meta().log_start, meta.log_start);
}

/// The image's bytes outside `region` (a byte range) are `before`'s; bytes past
/// `before`'s end are zeros (the file grew, nothing was written there).
fn unchanged_outside(before: &[u8], after: &[u8], region: std::ops::Range<usize>) -> bool {
    let common = before.len().min(after.len());
    let outside = |at: usize| !region.contains(&at);
    (0..common).filter(|&at| outside(at)).all(|at| before[at] == after[at])
        && after[common..].iter().enumerate().all(|(at, &byte)| byte == 0 || !outside(common + at))
}

#[test]
fn logged_commits_leave_their_pages_in_the_pool_until_a_checkpoint_writes_them_back() {
    // Proves the write-back (`txn/writeback.rs`): with a pool large enough, a logged
    // commit writes the file only inside the log region, and its pages are read from
    // the pool by every snapshot and by the integrity check (which reads the file); a
    // checkpoint writes them before its meta, so a power cut right after it opens to
    // every commit; with a pool too small to hold them they are written back early and
    // never evicted unwritten (every page read again through a 64-frame pool).
    for frames in [1024usize, 64] {
        let options =
            Database::builder().page_size(4096).cache_bytes(frames * 4096).commit_log_pages(LOG_PAGES).into_options();
        let storage = Arc::new(FaultyStorage::new(Vec::new(), None));
        let db = Database::with_storage(storage.clone(), options.clone(), "writeback").unwrap();
        let ids = committed_pages(&db, 96);
        let mut model: Model = ids.iter().enumerate().map(|(value, id)| (id.0, value as u64)).collect();
        let mut readers = Vec::new();
        let mut checkpoints = 0;
        for round in 0..120u64 {
            let before = (storage.crash_image(CrashMode::KeepUnsynced), db.stats());
            let txn = db.begin_write().unwrap();
            let id = ids[(round * 7 % 96) as usize];
            fill(&mut txn.page_mut(id).unwrap(), 10_000 + round);
            txn.commit(Durability::Full).unwrap();
            model.insert(id.0, 10_000 + round);
            if db.stats().syncs - before.1.syncs > 1 {
                checkpoints += 1;
                let image = storage.crash_image(CrashMode::DropUnsynced);
                let cut = Database::open_storage(Arc::new(MemStorage::from_bytes(image)), options.clone(), "cut");
                assert_matches(&cut.unwrap().begin_read().unwrap(), &model);
            } else if frames == 1024 {
                let meta = db.meta();
                let region = (meta.log_start * 4096) as usize..((meta.log_start + meta.log_pages) * 4096) as usize;
                let after = storage.crash_image(CrashMode::KeepUnsynced);
                assert!(unchanged_outside(&before.0, &after, region), "round {round}: a page written outside the log");
            }
            assert!(check(&db).unwrap().is_clean(), "round {round}: the check read a page the file lacks");
            if round % 10 == 0 {
                readers.push((db.begin_read().unwrap(), model.clone()));
            }
            for (reader, seen) in readers.iter().rev().take(3) {
                assert_matches(reader, seen);
            }
            assert_matches(&db.begin_read().unwrap(), &model);
        }
        assert!(checkpoints >= 2, "{frames} frames: {checkpoints} checkpoints");
        let image = storage.crash_image(CrashMode::DropUnsynced);
        drop(readers);
        drop(db);
        let db = Database::open_storage(Arc::new(MemStorage::from_bytes(image)), options, "replayed").unwrap();
        assert!(check(&db).unwrap().is_clean());
        assert_matches(&db.begin_read().unwrap(), &model);
    }
}

#[test]
fn an_epoch_holds_up_to_a_sixteenth_of_a_large_file_before_its_checkpoint() {
    // Proves the checkpoint policy: the pages of the epoch's state that logged commits
    // free are held until a checkpoint, which comes when they reach the region's size
    // in pages or a sixteenth of the file's, whichever is more. Each commit here frees
    // two such pages with a one-block record: a small file checkpoints on its held
    // pages, with the region half full; a large one holds more, until the region is.
    // Power cuts keeping any subset of the unsynced writes, taken every 16 commits
    // (while more pages are held than the region's size too) and at the end, lose no
    // acknowledged commit.
    const REGION: u64 = 128;
    const ROUNDS: usize = 150;
    let seed = seed("held");
    let options = Database::builder().page_size(4096).cache_bytes(64 * 4096).commit_log_pages(REGION).into_options();
    for (pages, expected) in [(400u64, 55..=66), (6000, 115..=128)] {
        let storage = Arc::new(FaultyStorage::new(Vec::new(), None));
        let db = Database::with_storage(storage.clone(), options.clone(), "held").unwrap();
        let ids = committed_pages(&db, pages);
        let mut first = None;
        for round in 0..ROUNDS {
            let before = db.stats().syncs;
            let txn = db.begin_write().unwrap();
            for id in &ids[2 * round..2 * round + 2] {
                txn.page_mut(*id).unwrap()[..8].copy_from_slice(&(1000 + round as u64).to_le_bytes());
            }
            txn.commit(Durability::Checksummed).unwrap();
            if db.stats().syncs - before > 1 && first.is_none() {
                first = Some(round as u64);
            }
            if round % 16 == 15 || round + 1 == ROUNDS {
                let mode = CrashMode::Subset(seed ^ round as u64);
                let what = format!("QUIRE_SEED={seed} {pages} pages, a power cut after commit {round} ({mode:?})");
                expect_commits(storage.crash_image(mode), &options, &ids, round + 1, &what);
            }
        }
        let first = first.expect("a checkpoint");
        assert!(
            expected.contains(&first),
            "{pages} pages: the first checkpoint at commit {first}, expected {expected:?}"
        );
    }
}

/// Opens `image` and checks that the first `commits` commits of the test above are in
/// it (commit `r` wrote `1000 + r` at the head of pages `2r` and `2r + 1`) and the
/// other pages hold what they were created with.
fn expect_commits(image: Vec<u8>, options: &Options, ids: &[PageId], commits: usize, what: &str) {
    let db = Database::open_storage(Arc::new(MemStorage::from_bytes(image)), options.clone(), "cut").unwrap();
    assert!(check(&db).unwrap().is_clean(), "{what}: not clean");
    let read = db.begin_read().unwrap();
    for (index, id) in ids.iter().enumerate() {
        let head = u64::from_le_bytes(read.page(*id).unwrap()[..8].try_into().unwrap());
        let want = if index < 2 * commits { 1000 + index as u64 / 2 } else { index as u64 };
        assert_eq!(head, want, "{what}: page {index}");
    }
}
