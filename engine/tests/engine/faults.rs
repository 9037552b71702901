//! Fault injection: a small workload runs once for every I/O operation index with an
//! injected torn write, power cut, EIO or ENOSPC there. Each run either commits
//! completely or leaves the previous state, under every crash mode, and the error names
//! its cause.

use super::common::*;
use quiredb_engine::storage::{CrashMode, Fault, FaultKind, FaultyStorage, MemStorage};
use quiredb_engine::{Database, Durability, Error, StructureKind, check};
use std::sync::Arc;

const WORKLOAD_SEED: u64 = 0x5EED_FA17;
const TXNS: usize = 3;

/// A committed base state to start every run from.
fn base() -> (Vec<u8>, Model) {
    let (storage, db) = memory_db(small_options());
    let mut model = Model::new();
    let mut rng = rng(1);
    for round in 0..3 {
        let txn = db.begin_write().unwrap();
        random_txn(&txn, &mut rng, &mut model, round).unwrap();
        txn.commit(Durability::Full).unwrap();
    }
    drop(db);
    (storage.snapshot(), model)
}

/// Runs the workload; returns how many transactions committed and the first error.
fn workload(db: &Database, model: &mut Model, models: &mut Vec<Model>) -> (usize, Option<Error>) {
    let mut rng = rng(WORKLOAD_SEED);
    for round in 0..TXNS {
        let mut step = || -> quiredb_engine::Result<()> {
            let txn = db.begin_write()?;
            random_txn(&txn, &mut rng, model, 100 + round as u64)?;
            if round == 1 {
                txn.create_structure("s", StructureKind::QUEUE, b"", quiredb_engine::PageId(0))?;
            }
            txn.commit(if round == 1 { Durability::Checksummed } else { Durability::Full })
        };
        if let Err(error) = step() {
            models.push(model.clone()); // what the failed transaction would have made
            return (round, Some(error));
        }
        models.push(model.clone());
    }
    (TXNS, None)
}

fn assert_names_cause(error: &Error, kind: FaultKind) {
    let text = error.to_string();
    let named = match kind {
        FaultKind::Enospc => text.contains("No space left on device"),
        _ => text.contains("injected EIO"),
    };
    assert!(named, "error does not name the cause {kind:?}: {text}");
}

#[test]
fn every_io_operation_can_fail_without_losing_or_half_applying_a_commit() {
    // Proves: atomicity and durability of commits under each fault at each operation.
    let (image, base_model) = base();
    let kinds = [FaultKind::TornWrite, FaultKind::PowerCut, FaultKind::Eio, FaultKind::Enospc];
    let mut runs = 0;
    for kind in kinds {
        for at_op in 0.. {
            let storage = Arc::new(FaultyStorage::new(image.clone(), Some(Fault { at_op, kind })));
            let mut models = vec![base_model.clone()];
            let (acked, error) = match Database::open_storage(storage.clone(), small_options(), "faulty") {
                Ok(db) => {
                    let mut model = base_model.clone();
                    let (acked, error) = workload(&db, &mut model, &mut models);
                    if let Some(error) = &error {
                        assert_names_cause(error, kind);
                        assert!(matches!(db.begin_write(), Err(Error::Poisoned)), "handle refuses writes");
                    }
                    (acked, error)
                }
                Err(error) => (0, Some(error)),
            };
            if !storage.fault_fired() {
                assert_eq!(acked, TXNS, "{kind:?}: no fault, everything commits");
                break;
            }
            assert!(error.is_some(), "{kind:?} at {at_op}: the fault surfaced as an error");
            for mode in [CrashMode::KeepUnsynced, CrashMode::DropUnsynced, CrashMode::RandomSectors(at_op)] {
                verify_recovery(
                    storage.crash_image(mode),
                    &models,
                    acked,
                    &format!("{kind:?} at op {at_op}, {mode:?}"),
                );
            }
            runs += 1;
        }
    }
    println!("fault injection: {runs} faulted runs, each checked under 3 crash modes");
    assert!(runs > 40);
}

/// The recovered state is the last acknowledged commit or the one after it, complete.
fn verify_recovery(image: Vec<u8>, models: &[Model], acked: usize, what: &str) {
    let db = Database::open_storage(Arc::new(MemStorage::from_bytes(image)), small_options(), "recovered")
        .unwrap_or_else(|error| panic!("{what}: reopen failed: {error}"));
    let report = check(&db).unwrap();
    assert!(report.problems.is_empty(), "{what}: {:?}", report.problems);
    let txn = db.begin_read().unwrap();
    let committed = txn.meta().txn.0 as usize - 3; // the base holds 3 commits
    if let Some(rollback) = db.rollback() {
        // Only the commit in flight may be rejected, never an acknowledged one.
        let rejected = rollback.rejected_txn.map(|txn| txn.0 as usize - 3);
        assert!(rejected.is_none_or(|rejected| rejected > acked), "{what}: {rollback}");
        assert!(!report.is_clean(), "{what}: a rollback makes the check unclean");
    }
    assert!(committed == acked || committed == acked + 1, "{what}: recovered commit {committed}, acknowledged {acked}");
    let model = models.get(committed).unwrap_or_else(|| panic!("{what}: commit {committed} was never attempted"));
    assert_matches(&txn, model);
}
