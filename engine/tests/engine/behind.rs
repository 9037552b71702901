//! Write-behind (`WriteTxn::write_behind`): pages a structure declares final are
//! written before their commit. A transaction written behind must commit, abort and
//! reopen like any other, a page changed after it was written behind must come back
//! as its last version, and a fault at any I/O operation of such transactions (a torn
//! write, a power cut, an EIO) must lose no acknowledged commit and show no half-done
//! one, with the commit log and without it. Randomised: the seed is printed
//! (`QUIRE_SEED` replays).

use super::common::*;
use super::crafted::{PAGE, logical_of};
use quiredb_engine::storage::{CrashMode, Fault, FaultKind, FaultyStorage, MemStorage};
use quiredb_engine::{Database, Durability, Options, PageId, PageKind, WriteTxn, check};
use rand::Rng;
use std::sync::Arc;

/// Large transactions of one run.
const TXNS: u64 = 4;
/// Faulted runs per fault kind, at operations spread over the whole workload.
const FAULT_POINTS: u64 = 30;

/// 4 KiB pages, a pool of 1,024 frames (the transactions fit: they are written behind,
/// not spilled), and the default commit log or none.
fn options(log: bool) -> Options {
    let builder = Database::builder().page_size(4096).cache_bytes(1024 * 4096);
    if log { builder } else { builder.commit_log_pages(0) }.into_options()
}

/// One transaction larger than the commit log takes, committed with `durability`
/// (see [`large_changes`]).
fn large_txn(
    db: &Database,
    rng: &mut TestRng,
    model: &mut Model,
    round: u64,
    durability: Durability,
) -> quiredb_engine::Result<()> {
    let txn = db.begin_write()?;
    large_changes(&txn, rng, model, round)?;
    txn.commit(durability)
}

/// The changes of a large transaction: 600–900 new pages, each declared final once
/// filled, then a few pages rewritten (most of them pages already written behind) or
/// freed. Mirrored in `model`.
fn large_changes(txn: &WriteTxn<'_>, rng: &mut TestRng, model: &mut Model, round: u64) -> quiredb_engine::Result<()> {
    let mut fresh = Vec::new();
    for op in 0..rng.random_range(600..900) {
        let mut page = txn.alloc_page(PageKind::structure(16))?;
        let (id, value) = (page.id(), round * 10_000 + op);
        fill(&mut page, value);
        drop(page);
        model.insert(id.0, value);
        txn.write_behind(id)?;
        fresh.push(id);
    }
    for op in 0..rng.random_range(1..20) {
        let value = round * 10_000 + 5_000 + op;
        let id = if rng.random_bool(0.7) {
            fresh[rng.random_range(0..fresh.len())]
        } else {
            PageId(*model.keys().nth(rng.random_range(0..model.len())).expect("the model is not empty"))
        };
        if !model.contains_key(&id.0) {
            continue; // freed earlier in this transaction
        }
        if rng.random_bool(0.8) {
            fill(&mut txn.page_mut(id)?, value);
            model.insert(id.0, value);
        } else {
            txn.free_page(id)?;
            model.remove(&id.0);
        }
    }
    Ok(())
}

#[test]
fn transactions_written_behind_commit_abort_and_reopen_like_the_model() {
    for log in [true, false] {
        let seed = seed("behind_model");
        let mut rng = rng(seed);
        let storage = Arc::new(MemStorage::new());
        let db = Database::with_storage(storage.clone(), options(log), "behind").unwrap();
        let mut model = Model::new();
        for round in 1..=8 {
            let mut next = model.clone();
            let txn = db.begin_write().unwrap();
            large_changes(&txn, &mut rng, &mut next, round).unwrap();
            if rng.random_bool(0.25) {
                drop(txn); // nothing of it may show
            } else {
                txn.commit(random_durability(&mut rng)).unwrap();
                model = next;
            }
            assert_matches(&db.begin_read().unwrap(), &model);
        }
        let stats = db.stats();
        assert!(stats.written_behind > 1_000, "QUIRE_SEED={seed} log {log}: pages were written behind ({stats:?})");
        assert_eq!(stats.spills, 0, "QUIRE_SEED={seed} log {log}: the pool held the transactions");
        assert!(check(&db).unwrap().is_clean(), "QUIRE_SEED={seed} log {log}");
        drop(db);
        let db = Database::open_storage(Arc::new(MemStorage::from_bytes(storage.snapshot())), options(log), "reopened")
            .unwrap();
        assert_matches(&db.begin_read().unwrap(), &model);
        assert!(check(&db).unwrap().is_clean(), "QUIRE_SEED={seed} log {log}: after reopening");
    }
}

/// Runs the workload: (model, durability) of each attempted commit, and how many were
/// acknowledged.
fn workload(db: &Database, seed: u64, base: &Model) -> (Vec<(Model, Durability)>, usize) {
    let mut rng = rng(seed);
    let mut model = base.clone();
    let mut attempts = Vec::new();
    for round in 1..=TXNS {
        let durability = random_durability(&mut rng);
        let result = large_txn(db, &mut rng, &mut model, round, durability);
        attempts.push((model.clone(), durability));
        if result.is_err() {
            return (attempts, round as usize - 1);
        }
    }
    (attempts, TXNS as usize)
}

#[test]
fn a_fault_anywhere_in_transactions_written_behind_loses_nothing_acknowledged() {
    let seed = seed("behind_faults");
    let mut points = rng(seed ^ 0xB3);
    for log in [true, false] {
        let (image, base_model) = base_image(options(log));
        let clean = Arc::new(FaultyStorage::new(image.clone(), None));
        let db = Database::open_storage(clean.clone(), options(log), "clean").unwrap();
        assert_eq!(workload(&db, seed, &base_model).1, TXNS as usize);
        assert!(db.stats().written_behind > 0, "the workload writes behind");
        drop(db);
        let ops = clean.ops();
        for kind in [FaultKind::TornWrite, FaultKind::PowerCut, FaultKind::Eio] {
            for _ in 0..FAULT_POINTS {
                let at_op = points.random_range(0..ops);
                let storage = Arc::new(FaultyStorage::new(image.clone(), Some(Fault { at_op, kind })));
                let (attempts, acked) = match Database::open_storage(storage.clone(), options(log), "faulty") {
                    Ok(db) => workload(&db, seed, &base_model),
                    Err(_) => (Vec::new(), 0),
                };
                let durable = (0..acked).rev().find(|&i| attempts[i].1 != Durability::None).map_or(0, |i| i + 1);
                let modes = [CrashMode::KeepUnsynced, CrashMode::DropUnsynced, CrashMode::Subset(seed ^ at_op)];
                for mode in modes {
                    let floor = if mode == CrashMode::KeepUnsynced { acked } else { durable };
                    let what = format!("QUIRE_SEED={seed} log {log} {kind:?} at op {at_op} of {ops}, {mode:?}");
                    let attempts = Attempts { base: &base_model, commits: &attempts, floor, acked };
                    verify_recovered(storage.crash_image(mode), options(log), &attempts, &what);
                }
            }
        }
    }
}

#[test]
fn a_page_written_behind_and_lost_in_a_power_cut_never_passes_for_its_commit() {
    // Without the log a `Checksummed` commit writes its meta before its one sync, and
    // open verifies the pages its record lists. A power cut that keeps the meta and
    // loses one page written behind must make open reject the commit.
    let storage = Arc::new(FaultyStorage::new(Vec::new(), None));
    let db = Database::with_storage(storage.clone(), options(false), "cut").unwrap();
    let before: Model = committed_pages(&db, 3).iter().enumerate().map(|(v, id)| (id.0, v as u64)).collect();
    let mut after = before.clone();
    let txn = db.begin_write().unwrap();
    let mut rng = rng(seed("behind_cut"));
    large_changes(&txn, &mut rng, &mut after, 1).unwrap();
    let lost = *after.keys().find(|id| !before.contains_key(id)).expect("the transaction added pages");
    assert!(db.stats().written_behind > 0, "pages were written behind");
    storage.cut_power_at_sync(1);
    assert!(txn.commit(Durability::Checksummed).is_err(), "the sync failed");
    let lost_value = after[&lost];
    let image = storage.crash_image_filtered(PAGE, |_, chunk| {
        !(chunk.len() == PAGE && logical_of(chunk) == lost && value_of(&chunk[32..]) == Some(lost_value))
    });
    let db = Database::open_storage(Arc::new(MemStorage::from_bytes(image)), options(false), "image").unwrap();
    assert_matches(&db.begin_read().unwrap(), &before);
    assert_eq!(db.rollback().and_then(|rollback| rollback.rejected_txn).map(|txn| txn.0), Some(2));
}

#[test]
fn a_transaction_the_log_could_take_is_never_written_behind() {
    // With a 4,096-page log (16 MiB) a transaction of 600–900 pages of 4 KiB fits the
    // log, so writing it behind would only force it in place.
    let options = Database::builder().page_size(4096).cache_bytes(1024 * 4096).commit_log_pages(4096).into_options();
    let db = Database::with_storage(Arc::new(MemStorage::new()), options, "big log").unwrap();
    let mut model = Model::new();
    committed_pages(&db, 1);
    let mut rng = rng(seed("behind_big_log"));
    large_txn(&db, &mut rng, &mut model, 1, Durability::Full).unwrap();
    assert_eq!(db.stats().written_behind, 0, "nothing was written behind: {:?}", db.stats());
    assert_matches(&db.begin_read().unwrap(), &model);
}
