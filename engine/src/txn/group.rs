//! Group commit ([`crate::Options::group_commit`]): logged commits of several threads
//! share durable appends, and two appends may be in flight at once.
//!
//! A logged commit reserves its place in the log and queues its record under the
//! writer lock, writes its pages in place and publishes, then releases the writer lock
//! and waits here until its record is durable. A waiter that finds records queued and
//! fewer than [`IN_FLIGHT`] appends running becomes a *leader* — unless its record is
//! the only one queued, an append is in flight and another writer is on its way (it
//! holds or waits for the writer lock, or a landing woke it and it has not run yet):
//! then it lets that writer's record catch up to share the next append
//! (`State::holds_back`; at 4 writers 0.60 → 0.52 appends a commit). A leader takes every queued
//! record (they are contiguous in the log), writes them with one `write_durable`, and
//! wakes the waiters it made durable and, if records are queued that may go now, one
//! waiter to lead them: not every waiter, which would cost each a context switch for
//! nothing (`group_probe 1000000 4 5`: 0.80 → 0.74 appends a commit). Meanwhile the
//! next writers build their transactions on the commit just made (`Shared::head`), and their records
//! join the next append, which may start before the one ahead of it has returned: on
//! this machine kind two durable 4 KiB writes in flight complete at 14.3 k/s against
//! 7.4 k/s one at a time (the device's flush is a round trip that two writes share).
//! `commit` returns only once its own record *and every record before it* are durable.
//!
//! Life cycle of a queued record:
//!
//! ```text
//!   queued (writer lock) ──leader takes it──> in flight ──Ok──> landed ──every append
//!                                                 │                     ahead landed──> durable
//!                                                 └──I/O error──> failed (handle poisoned)
//! ```
//!
//! Invariants: queued records are contiguous and follow the ones in flight; appends in
//! flight are kept in log order, and `durable_txn` moves only over a prefix of them
//! that has landed, so it only rises and names a commit whose every predecessor is
//! durable. A later append may land while an earlier one is lost in a crash; recovery
//! replays the longest prefix of records that verifies (`log.rs`), which ends at the
//! hole, so what landed past it is ignored, and no commit past the hole was
//! acknowledged. Recovery that replays records writes a `Full` meta, a new epoch, so the
//! records past the hole (of the old epoch) never extend a later meta. Recovery that
//! replays none keeps the epoch, so the epoch's first record is always written alone:
//! no append starts while it is in flight, and then a hole at offset 0 has nothing
//! past it. A checkpoint or an in-place meta waits for the queue and the appends to
//! drain first ([`GroupCommit::drain`]). Pages freed by a queued commit are not reused
//! before it is durable (`last_synced` advances only here). Readers see a commit only
//! once it is durable: the commit is the next writer's base from the moment it is made,
//! but its meta waits in `Shared::unseen` until its append and every one ahead of it
//! have landed ([`crate::core::Shared::synced_up_to`], before the committers are
//! woken). So no reader acts on a commit that a crash could still take back, and a
//! thread whose `commit` returned sees it in its next snapshot.

use crate::core::Core;
use crate::error::{Error, Result};
use crate::page::TxnId;
use parking_lot::{Mutex, MutexGuard};
use std::collections::VecDeque;
use std::thread::Thread;

/// Most appends in flight at once.
const IN_FLIGHT: usize = 2;

/// A record waiting to be made durable: its byte offset in the file, its commit, and
/// whether it is its epoch's first (at the start of the log region).
struct Queued {
    at: u64,
    record: Vec<u8>,
    txn: TxnId,
    opens_epoch: bool,
}

/// An append in flight: the newest commit in it, whether it returned `Ok`, and whether
/// it holds its epoch's first record.
struct Append {
    newest: TxnId,
    landed: bool,
    opens_epoch: bool,
}

#[derive(Default)]
struct State {
    queued: Vec<Queued>,
    /// Appends being written, in log order (the oldest first).
    in_flight: VecDeque<Append>,
    /// Newest commit whose record, and every record before it, is durable.
    durable_txn: TxnId,
    /// An append failed: the handle is poisoned and no queued commit becomes durable.
    failed: bool,
    /// Buffers that batches were built in, for the next ones (at most [`IN_FLIGHT`]).
    spare: Vec<Vec<u8>>,
    /// Threads parked until an append lands: what each waits for.
    parked: Vec<(Awaits, Thread)>,
    /// Threads [`State::wake`] took off `parked` that have not run since: committers
    /// whose commit landed, on their way back to the caller (and, in a writer's loop,
    /// to its next commit).
    waking: usize,
}

/// What a parked thread waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Awaits {
    /// Commit `TxnId` durable (or a turn to lead).
    Commit(TxnId),
    /// No append in flight ([`GroupCommit::drain`]).
    Drained,
}

impl State {
    /// Whether a waiter may take the queued records and write them now.
    fn may_lead(&self) -> bool {
        if cfg!(quire_mutant = "pipeline_epoch_start") {
            return !self.queued.is_empty() && self.in_flight.len() < IN_FLIGHT; // mutant: no rule for it
        }
        let Some(first) = self.queued.first() else { return false };
        let epoch_in_flight = self.in_flight.iter().any(|append| append.opens_epoch);
        self.in_flight.len() < IN_FLIGHT && !epoch_in_flight && (self.in_flight.is_empty() || !first.opens_epoch)
    }

    /// Whether a waiter that may lead holds the queued record back instead: it is the
    /// only one queued, one append is in flight, and another writer holds or waits for
    /// the writer lock (`writer_coming`) or a committer woken by the last landing has
    /// not run yet (`waking`), so the next record is likely on its way and can share
    /// the next append. The lone record waits at most for the append in flight: when it
    /// lands, [`State::wake`] wakes a waiter to lead what is queued, and with nothing in
    /// flight no record is held back.
    fn holds_back(&self, writer_coming: bool) -> bool {
        let others_coming = writer_coming || self.waking > 0;
        if cfg!(quire_mutant = "group_hold_idle") {
            // mutant: held back with nothing in flight, so nothing lands to wake it
            return others_coming && self.queued.len() == 1 && self.in_flight.len() <= 1;
        }
        others_coming && self.queued.len() == 1 && self.in_flight.len() == 1
    }

    /// The records the next append writes: every one queued, except that the epoch's
    /// first goes alone (a torn batch could land the records after it without it).
    fn take_batch(&mut self) -> Vec<Queued> {
        let alone = self.queued[0].opens_epoch && !cfg!(quire_mutant = "pipeline_epoch_start");
        if alone { self.queued.drain(..1).collect() } else { std::mem::take(&mut self.queued) }
    }

    /// Marks the append whose newest commit is `newest` landed, then moves
    /// `durable_txn` over the landed prefix; returns the newest commit it reached.
    fn landed(&mut self, newest: TxnId) -> TxnId {
        if let Some(append) = self.in_flight.iter_mut().find(|append| append.newest == newest) {
            append.landed = true;
        }
        if cfg!(quire_mutant = "pipeline_out_of_order") {
            self.in_flight.retain(|append| !append.landed); // mutant: a later append acknowledges alone
            self.durable_txn = self.durable_txn.max(newest);
        }
        while self.in_flight.front().is_some_and(|append| append.landed) {
            let append = self.in_flight.pop_front().expect("a front exists");
            self.durable_txn = self.durable_txn.max(append.newest);
        }
        self.durable_txn
    }

    /// Parks the calling thread until [`State::wake`] (or a spurious wake-up) with the
    /// state unlocked; returns the state locked again, the thread no longer listed.
    fn park<'a>(mut state: MutexGuard<'a, State>, awaits: Awaits, lock: &'a Mutex<State>) -> MutexGuard<'a, State> {
        let me = std::thread::current();
        let id = me.id();
        state.parked.push((awaits, me));
        drop(state);
        std::thread::park();
        let mut state = lock.lock();
        let listed = state.parked.len();
        state.parked.retain(|(_, thread)| thread.id() != id);
        if state.parked.len() == listed {
            state.waking = state.waking.saturating_sub(1); // `wake` took it off the list
        }
        state
    }

    /// After an append returned: wakes the threads whose commit is now durable (all
    /// of them if it failed), the drain once nothing is in flight, and one other
    /// waiter to write the queued records if it may. Waking only those, not every
    /// waiter, saves the others a context switch each.
    fn wake(&mut self) {
        let (durable, failed, drained) = (self.durable_txn, self.failed, self.in_flight.is_empty());
        let listed = self.parked.len();
        self.parked.retain(|(awaits, thread)| {
            let ready = failed
                || match awaits {
                    Awaits::Commit(txn) => *txn <= durable,
                    Awaits::Drained => drained,
                };
            if ready {
                thread.unpark();
            }
            !ready
        });
        self.waking += listed - self.parked.len();
        if self.may_lead()
            && let Some((_, thread)) = self.parked.iter().find(|(awaits, _)| matches!(awaits, Awaits::Commit(_)))
        {
            thread.unpark();
        }
    }
}

/// The queue of logged commits waiting for their append (under `Core::group`).
#[derive(Default)]
pub struct GroupCommit {
    state: Mutex<State>,
}

fn failed() -> Error {
    Error::io("group commit", std::io::Error::other("an append to the commit log failed; reopen the database"))
}

impl GroupCommit {
    /// Queues the record of commit `txn` at byte `at`, the epoch's first if
    /// `opens_epoch` (the writer holds the log lock).
    pub(crate) fn queue(&self, at: u64, record: Vec<u8>, txn: TxnId, opens_epoch: bool) {
        let mut state = self.state.lock();
        debug_assert!(state.queued.last().is_none_or(|last| last.at + last.record.len() as u64 == at), "contiguous");
        state.queued.push(Queued { at, record, txn, opens_epoch });
    }

    /// Returns once the record of commit `txn` and every one before it are durable,
    /// writing the queued records if no more than one other append is running.
    pub(crate) fn wait(&self, core: &Core, txn: TxnId) -> Result<()> {
        self.wait_for(core, txn, true)
    }

    /// [`GroupCommit::wait`]; `may_hold_back`: a lone queued record may wait for the next
    /// writer's ([`State::holds_back`]; not for a drain, whose caller holds the writer
    /// lock and queues nothing more).
    fn wait_for(&self, core: &Core, txn: TxnId, may_hold_back: bool) -> Result<()> {
        let mut state = self.state.lock();
        loop {
            if state.durable_txn >= txn {
                return Ok(());
            }
            if state.failed {
                return Err(failed());
            }
            if !state.may_lead() || (may_hold_back && state.holds_back(core.writer_coming())) {
                state = State::park(state, Awaits::Commit(txn), &self.state);
                continue;
            }
            let batch = state.take_batch();
            let newest = batch.last().expect("a batch is never empty").txn;
            let opens_epoch = batch[0].opens_epoch;
            state.in_flight.push_back(Append { newest, landed: false, opens_epoch });
            let mut buffer = state.spare.pop().unwrap_or_default();
            drop(state);
            let result = append_batch(core, &batch, &mut buffer);
            state = self.state.lock();
            if buffer.capacity() <= super::log::RECORD_BUFFER_KEPT {
                state.spare.push(buffer); // a large commit's buffer is not kept
            }
            match &result {
                Ok(()) => {
                    let durable = state.landed(newest);
                    core.shared.lock().synced_up_to(durable, &core.published);
                }
                Err(_) => {
                    state.failed = true;
                    core.poisoned.store(true, std::sync::atomic::Ordering::Release);
                }
            }
            state.wake();
            result?;
        }
    }

    /// Returns once every queued record is durable and no append is in flight (the
    /// writer holds the writer lock, so no record is queued meanwhile).
    pub(crate) fn drain(&self, core: &Core) -> Result<()> {
        let newest = self.state.lock().queued.last().map(|queued| queued.txn);
        if let Some(txn) = newest {
            self.wait_for(core, txn, false)?;
        }
        let mut state = self.state.lock();
        while !state.in_flight.is_empty() && !state.failed {
            state = State::park(state, Awaits::Drained, &self.state);
        }
        if state.failed { Err(failed()) } else { Ok(()) }
    }
}

/// Writes contiguous records with one durable write, from `buffer` at an address
/// aligned for a direct write (`storage/direct.rs`), so that two appends in flight
/// need no shared scratch buffer.
fn append_batch(core: &Core, batch: &[Queued], buffer: &mut Vec<u8>) -> Result<()> {
    const ALIGN: usize = 4096;
    let first = batch.first().expect("a batch is never empty").at;
    let bytes: usize = batch.iter().map(|queued| queued.record.len()).sum();
    if buffer.len() < bytes + ALIGN {
        *buffer = vec![0u8; bytes + ALIGN];
    }
    let start = buffer.as_ptr().align_offset(ALIGN);
    let mut end = start;
    for queued in batch {
        debug_assert_eq!(first + (end - start) as u64, queued.at, "queued records are contiguous");
        buffer[end..end + queued.record.len()].copy_from_slice(&queued.record);
        end += queued.record.len();
    }
    super::logged::append(core, first, &buffer[start..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What is still parked, in order.
    fn still_parked(state: &State) -> Vec<Awaits> {
        state.parked.iter().map(|(awaits, _)| *awaits).collect()
    }

    fn in_flight(newest: u64) -> Append {
        Append { newest: TxnId(newest), landed: false, opens_epoch: false }
    }

    #[test]
    fn a_landed_append_wakes_the_commits_it_made_durable_and_the_drain_once_nothing_is_in_flight() {
        // Proves the choice of whom `wake` unparks (it takes them off the list): the
        // commits up to the durable one, the drain only when no append is in flight,
        // everyone after a failure; the others stay parked, not woken for nothing.
        let me = std::thread::current();
        let mut state = State::default();
        for awaits in [Awaits::Commit(TxnId(5)), Awaits::Commit(TxnId(7)), Awaits::Drained, Awaits::Commit(TxnId(6))] {
            state.parked.push((awaits, me.clone()));
        }
        state.in_flight.push_back(in_flight(6));
        state.in_flight.push_back(in_flight(7));
        state.landed(TxnId(6));
        state.wake();
        assert_eq!(still_parked(&state), [Awaits::Commit(TxnId(7)), Awaits::Drained]);
        assert_eq!(state.waking, 2, "the woken committers are on their way");
        state.landed(TxnId(7));
        state.wake();
        assert_eq!(still_parked(&state), [], "commit 7 durable, nothing in flight");
        assert_eq!(state.waking, 4);
        state.parked.push((Awaits::Commit(TxnId(9)), me.clone()));
        state.parked.push((Awaits::Drained, me.clone()));
        state.in_flight.push_back(in_flight(9));
        state.failed = true;
        state.wake();
        assert!(state.parked.is_empty(), "a failed append wakes everyone");
    }

    #[test]
    fn a_lone_record_is_held_back_only_behind_an_append_in_flight_with_another_writer_coming() {
        // Proves the hold-back rule's bounds: a waiter waits for company only while an
        // append is in flight (whose landing wakes one to lead, as the test below
        // shows), only for a lone record and only when another writer is on its way.
        let mut state = State::default();
        state.queued.push(Queued { at: 0, record: vec![0; 4096], txn: TxnId(8), opens_epoch: false });
        assert!(state.may_lead() && !state.holds_back(true), "nothing in flight: the record goes at once");
        state.in_flight.push_back(in_flight(7));
        assert!(state.may_lead() && state.holds_back(true), "one in flight, a writer coming: it waits");
        assert!(!state.holds_back(false), "no writer coming: it goes");
        state.waking = 1;
        assert!(state.holds_back(false), "a committer woken by the last landing has not run: it waits");
        state.waking = 0;
        state.queued.push(Queued { at: 4096, record: vec![0; 4096], txn: TxnId(9), opens_epoch: false });
        assert!(!state.holds_back(true), "two queued: they go together");
        state.queued.truncate(1);
        state.landed(TxnId(7));
        assert!(state.may_lead() && !state.holds_back(true), "landed: nothing in flight, it goes");
    }

    #[test]
    fn a_woken_committer_is_counted_as_coming_until_it_runs() {
        // Proves `waking` both ways: `wake` counts the committer it takes off the list,
        // and the committer, once it runs again, takes itself off the count (else a lone
        // record would be held back behind every append from then on).
        let lock = Mutex::new(State::default());
        lock.lock().in_flight.push_back(in_flight(5));
        std::thread::scope(|scope| {
            let waiter = scope.spawn(|| {
                let mut state = lock.lock();
                while state.durable_txn < TxnId(5) {
                    state = State::park(state, Awaits::Commit(TxnId(5)), &lock);
                }
            });
            let start = std::time::Instant::now();
            while lock.lock().parked.is_empty() {
                assert!(start.elapsed().as_secs() < 60, "the waiter never parked");
                std::thread::yield_now();
            }
            {
                let mut state = lock.lock();
                state.landed(TxnId(5));
                state.wake();
                assert_eq!(state.waking, 1, "woken, not yet run");
            }
            waiter.join().unwrap();
            assert_eq!(lock.lock().waking, 0, "it ran");
        });
    }

    #[test]
    fn queued_records_that_may_go_wake_one_waiter_to_lead_them() {
        // Proves that records queued behind full appends are not left waiting: a
        // committer parked while two appends were in flight is woken (to lead them)
        // once one lands, and not before.
        let lock = Mutex::new(State::default());
        {
            let mut state = lock.lock();
            state.in_flight.push_back(in_flight(6));
            state.in_flight.push_back(in_flight(7));
            state.queued.push(Queued { at: 0, record: vec![0; 4096], txn: TxnId(8), opens_epoch: false });
        }
        let woken = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            let waiter = scope.spawn(|| {
                let mut state = lock.lock();
                while !state.may_lead() && !woken.load(std::sync::atomic::Ordering::Acquire) {
                    state = State::park(state, Awaits::Commit(TxnId(8)), &lock);
                    if state.may_lead() {
                        woken.store(true, std::sync::atomic::Ordering::Release);
                    }
                }
            });
            let start = std::time::Instant::now();
            while lock.lock().parked.is_empty() {
                assert!(start.elapsed().as_secs() < 60, "the waiter never parked");
                std::thread::yield_now();
            }
            lock.lock().wake();
            std::thread::sleep(std::time::Duration::from_millis(20));
            assert!(!woken.load(std::sync::atomic::Ordering::Acquire), "woken while both appends were in flight");
            {
                let mut state = lock.lock();
                state.landed(TxnId(6));
                state.wake();
            }
            while !woken.load(std::sync::atomic::Ordering::Acquire) && start.elapsed().as_secs() < 60 {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            let led = woken.swap(true, std::sync::atomic::Ordering::AcqRel); // ends the waiter's loop
            if let Some((_, thread)) = lock.lock().parked.first() {
                thread.unpark(); // a waiter never woken is let go, so the test fails, not hangs
            }
            waiter.join().unwrap();
            assert!(led, "the parked committer was not woken to lead the queued records");
        });
    }
}
