//! Online compaction (`Database::compact_step`, `compact`, `auto_compact_percent`):
//! steps interleaved with writers and long-lived readers against the model, every
//! snapshot still reading what it saw; the file shrinking to about its live pages; and
//! a fault at every I/O operation of a compaction leaving a database that opens to the
//! same contents.

use super::common::*;
use quiredb_engine::storage::{CrashMode, Fault, FaultKind, FaultyStorage, MemStorage};
use quiredb_engine::{Database, Durability, PageId, check};
use rand::Rng;
use std::sync::Arc;

/// Commits `count` pages, then frees all but every `keep`-th; returns the model.
fn sparse(db: &Database, count: u64, keep: usize) -> Model {
    let ids = committed_pages(db, count);
    let txn = db.begin_write().unwrap();
    let mut model = Model::new();
    for (value, id) in ids.iter().enumerate() {
        if value % keep == 0 {
            model.insert(id.0, value as u64);
        } else {
            txn.free_page(*id).unwrap();
        }
    }
    txn.commit(Durability::Full).unwrap();
    model
}

fn file_pages(storage: &MemStorage, db: &Database) -> u64 {
    storage.snapshot().len() as u64 / db.page_size() as u64
}

#[test]
fn compaction_steps_beside_writers_and_readers_keep_every_snapshot_and_shrink_the_file() {
    // Proves: steps move pages while readers hold older snapshots (each still reads its
    // own contents), writers commit between steps (the model follows them), and once the
    // readers are gone the file comes down to about its live pages; the check is clean
    // and a reopened copy holds the model.
    let seed = seed("compaction_steps_beside_writers");
    let mut rng = rng(seed);
    let (storage, db) = memory_db(small_options());
    let mut model = sparse(&db, 1500, 4);
    let peak = file_pages(&storage, &db);
    let mut readers = vec![(db.begin_read().unwrap(), model.clone())];
    let mut moved = 0;
    for round in 0..400u64 {
        let step = db.compact_step(rng.random_range(1..48)).unwrap();
        moved += step.moved;
        if rng.random_bool(0.3) {
            model_round(&db, &mut rng, &mut model, round);
        }
        if rng.random_bool(0.1) {
            readers.push((db.begin_read().unwrap(), model.clone()));
        }
        if readers.len() > 3 || (step.done && !readers.is_empty()) {
            let (reader, seen) = readers.remove(rng.random_range(0..readers.len()));
            assert_matches(&reader, &seen);
        }
        if round % 25 == 0 {
            for (reader, seen) in &readers {
                assert_matches(reader, seen);
            }
        }
        if step.done && readers.is_empty() && round > 50 {
            break;
        }
    }
    drop(readers);
    let after = db.compact().unwrap().bytes_after;
    let (live, log) = (db.meta().live_pages, db.meta().log_pages);
    let pages = after / db.page_size() as u64;
    assert!(moved > 100, "seed {seed}: steps moved {moved} pages");
    assert!((pages - log) * 2 < peak - log, "seed {seed}: {peak} pages before, {pages} after (log {log})");
    assert!(pages <= live + log + live / 8 + 16, "seed {seed}: {pages} pages in the file for {live} live ones");
    assert_eq!(file_pages(&storage, &db), pages, "the file was cut to what compact reported");
    assert_matches(&db.begin_read().unwrap(), &model);
    let report = check(&db).unwrap();
    assert!(report.is_clean(), "seed {seed}: {:?}", report.problems);
    let image = storage.snapshot();
    drop(db);
    let reopened = Database::open_storage(Arc::new(MemStorage::from_bytes(image)), small_options(), "copy").unwrap();
    assert_matches(&reopened.begin_read().unwrap(), &model);
    assert!(check(&reopened).unwrap().is_clean());
}

#[test]
fn holes_left_by_unsynced_commits_are_synced_free_and_filled() {
    // Proves: pages freed by a commit made with `Durability::None` wait for a sync
    // before reuse, and compaction syncs them free when nothing else can move (before,
    // it reported done with the holes left); a commit record written at the end while
    // the pages below waited is moved down; steps then end (`done`), the file at its
    // live pages and the log, with and without a commit log.
    for options in [small_options(), in_place_options()] {
        let (storage, db) = memory_db(options);
        let ids = committed_pages(&db, 600);
        let txn = db.begin_write().unwrap();
        let mut model = Model::new();
        for (value, id) in ids.iter().enumerate() {
            match value < 400 {
                true => txn.free_page(*id).unwrap(),
                false => drop(model.insert(id.0, value as u64)),
            }
        }
        txn.commit(Durability::None).unwrap();
        let steps = (0..40).position(|_| db.compact_step(4096).unwrap().done);
        assert!(steps.is_some(), "compaction steps never end");
        let pages = file_pages(&storage, &db);
        let (live, log) = (db.meta().live_pages, db.meta().log_pages);
        assert_eq!(live, 200);
        assert!(pages <= live + log + 16, "{pages} pages in the file for {live} live ones and a log of {log}");
        assert_matches(&db.begin_read().unwrap(), &model);
        assert!(check(&db).unwrap().is_clean());
    }
}

#[test]
fn a_snapshot_keeps_the_pages_it_reads_until_it_ends() {
    // Proves: pages an open snapshot reads are not moved out from under it or cut off
    // (they are reported as held), and compaction finishes once it ends.
    let (storage, db) = memory_db(small_options());
    let model = sparse(&db, 800, 5);
    let reader = db.begin_read().unwrap();
    let txn = db.begin_write().unwrap();
    for &id in model.keys() {
        txn.page_mut(PageId(id)).unwrap(); // copies every live page: the old copies are the reader's
    }
    txn.commit(Durability::Full).unwrap();
    let mut held = 0;
    for _ in 0..50 {
        let step = db.compact_step(64).unwrap();
        held = held.max(step.held);
        assert_matches(&reader, &model);
    }
    assert!(held > 0, "the reader's pages were reported held");
    let pinned = file_pages(&storage, &db);
    drop(reader);
    let after = db.compact().unwrap().bytes_after;
    assert!(after / (db.page_size() as u64) < pinned, "{pinned} pages with the reader, {after} bytes after");
    assert_matches(&db.begin_read().unwrap(), &model);
}

#[test]
fn auto_compaction_shrinks_the_file_as_commits_go() {
    // Proves: with `auto_compact_percent`, ordinary commits bring a mostly free file
    // down without any explicit call; without it the same commits leave it as it was.
    let run = |auto: bool| {
        let mut builder = Database::builder().page_size(4096).cache_bytes(64 * 4096);
        if auto {
            builder = builder.auto_compact_percent(20);
        }
        let (storage, db) = memory_db(builder.into_options());
        let mut model = sparse(&db, 2000, 10);
        let peak = file_pages(&storage, &db);
        let mut rng = rng(7);
        for round in 0..60 {
            model_round(&db, &mut rng, &mut model, round);
        }
        assert_matches(&db.begin_read().unwrap(), &model);
        assert!(check(&db).unwrap().is_clean());
        (peak, file_pages(&storage, &db))
    };
    let (peak, with_auto) = run(true);
    let (_, without) = run(false);
    assert!(with_auto * 2 < peak, "auto: {peak} pages down to {with_auto}");
    assert!(without * 10 > peak * 9, "no auto: {peak} pages, {without} after");
}

#[test]
fn a_fault_at_any_io_operation_of_a_compaction_loses_nothing() {
    // Proves: compaction is ordinary commits. A torn write, a power cut, an EIO or a
    // full disk at any of its I/O operations gives an error (never a panic), and every
    // crash image (unsynced writes kept, dropped, or torn by sector) opens with a clean
    // check and exactly the contents compaction started from.
    let (storage, db) = memory_db(small_options());
    let model = sparse(&db, 300, 3);
    let log = (db.meta().log_pages * db.page_size() as u64) as usize;
    drop(db);
    let image = storage.snapshot();
    let kinds = [FaultKind::TornWrite, FaultKind::PowerCut, FaultKind::Eio, FaultKind::Enospc];
    let mut runs = 0;
    for kind in kinds {
        for at_op in 0.. {
            let faulty = Arc::new(FaultyStorage::new(image.clone(), Some(Fault { at_op, kind })));
            let result = Database::open_storage(faulty.clone(), small_options(), "faulty")
                .and_then(|db| (0..40).try_for_each(|_| db.compact_step(16).map(drop)));
            let fired = faulty.fault_fired();
            assert_eq!(result.is_err(), fired, "{kind:?} at {at_op}: an error exactly when the fault fired");
            for mode in [CrashMode::KeepUnsynced, CrashMode::DropUnsynced, CrashMode::RandomSectors(at_op)] {
                let what = format!("{kind:?} at op {at_op}, {mode:?}");
                let crashed = faulty.crash_image(mode);
                if !fired {
                    let (after, before) = (crashed.len() - log, image.len() - log);
                    assert!(after * 2 < before, "{what}: {after} bytes, {before} before (and the log's {log})");
                }
                let storage = Arc::new(MemStorage::from_bytes(crashed));
                let db = Database::open_storage(storage, small_options(), "recovered")
                    .unwrap_or_else(|error| panic!("{what}: reopen failed: {error}"));
                let report = check(&db).unwrap();
                assert!(report.problems.is_empty(), "{what}: {:?}", report.problems);
                assert_matches(&db.begin_read().unwrap(), &model);
            }
            if !fired {
                break;
            }
            runs += 1;
        }
    }
    println!("compaction faults: {runs} faulted runs, each checked under 3 crash modes");
    assert!(runs > 40, "{runs} runs");
}
