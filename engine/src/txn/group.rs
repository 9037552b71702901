//! Group commit ([`crate::Options::group_commit`]): logged commits of several threads
//! share one durable append.
//!
//! A logged commit reserves its place in the log and queues its record under the
//! writer lock, writes its pages in place and publishes, then releases the writer lock
//! and waits here until its record is durable. The first waiter to find records queued
//! and no append running becomes the *leader*: it takes every queued record (they are
//! contiguous in the log), writes them with one `write_durable` and wakes the others.
//! Meanwhile the next writer builds its transaction on the published snapshot, and its
//! record joins the next append. `commit` returns only once its own record is durable.
//!
//! Life cycle of a queued record:
//!
//! ```text
//!   queued (writer lock) ──leader takes it──> being written ──Ok──> durable
//!                                                  └──I/O error──> failed (handle poisoned)
//! ```
//!
//! Invariants: queued records are contiguous and follow the durable ones, so every
//! append extends the durable prefix of the log; `durable_txn` only rises; a checkpoint
//! or an in-place meta waits for the queue to drain first ([`GroupCommit::drain`]).
//! Pages freed by a queued commit are not reused before it is durable (`last_synced`
//! advances only here). A reader may see a commit whose `commit` has not returned yet;
//! a crash before its record is durable loses it and every commit queued after it.

use crate::core::Core;
use crate::error::{Error, Result};
use crate::page::TxnId;
use parking_lot::{Condvar, Mutex};

/// A record waiting to be made durable: its byte offset in the file and its commit.
struct Queued {
    at: u64,
    record: Vec<u8>,
    txn: TxnId,
}

#[derive(Default)]
struct State {
    queued: Vec<Queued>,
    /// Newest commit whose record is durable.
    durable_txn: TxnId,
    /// An append is being written (by a leader, without the lock).
    leader: bool,
    /// An append failed: the handle is poisoned and no queued commit becomes durable.
    failed: bool,
}

/// The queue of logged commits waiting for their append (under `Core::group`).
#[derive(Default)]
pub struct GroupCommit {
    state: Mutex<State>,
    done: Condvar,
}

fn failed() -> Error {
    Error::io("group commit", std::io::Error::other("an append to the commit log failed; reopen the database"))
}

impl GroupCommit {
    /// Queues the record of commit `txn` at byte `at` (the writer holds the log lock).
    pub(crate) fn queue(&self, at: u64, record: Vec<u8>, txn: TxnId) {
        let mut state = self.state.lock();
        debug_assert!(state.queued.last().is_none_or(|last| last.at + last.record.len() as u64 == at), "contiguous");
        state.queued.push(Queued { at, record, txn });
    }

    /// Returns once the record of commit `txn` is durable, writing it (and every
    /// record queued with it) if no other thread is doing so.
    pub(crate) fn wait(&self, core: &Core, txn: TxnId) -> Result<()> {
        let mut state = self.state.lock();
        loop {
            if state.durable_txn >= txn {
                return Ok(());
            }
            if state.failed {
                return Err(failed());
            }
            if state.leader || state.queued.is_empty() {
                self.done.wait(&mut state);
                continue;
            }
            let batch = std::mem::take(&mut state.queued);
            state.leader = true;
            drop(state);
            let result = append_batch(core, &batch);
            state = self.state.lock();
            state.leader = false;
            match &result {
                Ok(()) => {
                    let newest = batch.last().expect("a batch is never empty").txn;
                    state.durable_txn = newest;
                    let mut shared = core.shared.lock();
                    shared.last_synced = shared.last_synced.max(newest);
                }
                Err(_) => {
                    state.failed = true;
                    core.poisoned.store(true, std::sync::atomic::Ordering::Release);
                }
            }
            self.done.notify_all();
            result?;
        }
    }

    /// Returns once every queued record is durable (the writer holds the writer lock,
    /// so no record is queued meanwhile).
    pub(crate) fn drain(&self, core: &Core) -> Result<()> {
        let newest = self.state.lock().queued.last().map(|queued| queued.txn);
        if let Some(txn) = newest {
            return self.wait(core, txn);
        }
        let mut state = self.state.lock();
        while state.leader {
            self.done.wait(&mut state);
        }
        if state.failed { Err(failed()) } else { Ok(()) }
    }
}

/// Writes contiguous records with one durable write.
fn append_batch(core: &Core, batch: &[Queued]) -> Result<()> {
    if let [only] = batch {
        return super::logged::append(core, only.at, &only.record); // no copy for one
    }
    let first = batch.first().expect("a batch is never empty").at;
    let mut bytes = Vec::with_capacity(batch.iter().map(|queued| queued.record.len()).sum());
    for queued in batch {
        debug_assert_eq!(first + bytes.len() as u64, queued.at, "queued records are contiguous");
        bytes.extend_from_slice(&queued.record);
    }
    super::logged::append(core, first, &bytes)
}
