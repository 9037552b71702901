//! Grace periods: when a frame that readers may read without a pin can be written again.
//!
//! A reader descending a structure reads the pages that index others (B+tree branches,
//! map pages, the catalog) *unpinned* ([`super::Pool::peek_seen`], through
//! `PageRead::with_page`): it checks the frame (listed, its page seen by the reader's
//! snapshot), marks it read unpinned once per page listed (`listing.rs`), and then
//! reads its bytes with no lock. So two readers passing the same root write nothing
//! shared: a pin is a locked add on the frame's line, and with two reader threads that
//! line moved between their cores at every lookup (`lookup_probe` with two threads,
//! 1,000 keys: 195 → 175 ns a lookup, medians of five; 1 M keys: 717–914 → 647–664 ns).
//! In exchange, a marked frame is not given new bytes the moment it is unlisted: it is
//! *retired*, and freed only once every reader that was reading unpinned then has
//! moved on. Frames never marked are evicted at once, as before.
//!
//! ```text
//!   Clean, marked ──evicted or reclaimed──> Retiring ──every reader seen moved on──> Free
//! ```
//!
//! Which readers: a reader's [`Phase`] (one per reader slot of `readers.rs`, kept here
//! so that the pool asks nothing of the layers above it) is odd while it reads unpinned
//! (entered before it looks at a frame, left when `with_page` returns), and a grace
//! period waits for the readers found at an odd count when it starts
//! ([`Grace::unpinned`]) to move to another. Why that is enough: the retiring thread
//! unlists the frame and then passes a `SeqCst` fence; a reader enters with a `SeqCst`
//! swap and checks the frame with a `SeqCst` load of its listing; the grace period
//! starts with a `SeqCst` fence and then reads the phases. A reader whose check saw the
//! frame listed therefore entered before the retiring fence, and the scan sees it (the
//! store-load pairing of Dekker's algorithm); a reader that enters later finds the frame
//! unlisted. Readers past the slots (the overflow list) never read unpinned.
//!
//! A reader holds a phase only for the length of a `with_page` call, so an idle
//! snapshot, however old, holds back no frame. With an eighth of the frames retired at
//! once (a reader stopped inside a call), the pool leaves marked frames where they are
//! until it has room again, as it leaves pinned ones.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering, fence};

/// Whether a reader holds pages it read without a pin (odd) or not (even), counting every
/// change: a grace period waits for the readers it finds at an odd count to move past it.
/// One per reader slot (`readers.rs`), written only by the reader announced in it, alone
/// on its cache line.
#[derive(Debug, Default)]
#[repr(align(64))]
pub struct Phase(AtomicU64);

impl Phase {
    /// The reader is about to read pages unpinned. A `SeqCst` swap: the count is
    /// visible before the reader loads what it checks (its side of the pairing in the
    /// module docs).
    #[inline]
    pub fn enter(&self) {
        let count = self.0.load(Ordering::Relaxed);
        debug_assert!(count.is_multiple_of(2), "entered twice");
        self.0.swap(count + 1, Ordering::SeqCst);
    }

    /// The reader holds no page read unpinned any more. Release: whoever sees the new
    /// count sees its reads of them done.
    #[inline]
    pub fn leave(&self) {
        let count = self.0.load(Ordering::Relaxed);
        debug_assert!(!count.is_multiple_of(2), "left without entering");
        self.0.store(count + 1, Ordering::Release);
    }
}

/// The frames on their way from Clean to Free, and the phases of the readers they wait for.
#[derive(Debug)]
pub struct Grace {
    phases: Box<[Phase]>,
    /// Frames retired and not yet handed back (cheap to check on every frame taken).
    retired: AtomicUsize,
    /// Most frames retired at once.
    room: usize,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Retired after the current grace period started: they wait for the next one.
    waiting: Vec<u32>,
    /// Retired before the current grace period started: free once it ends.
    covered: Vec<u32>,
    /// The readers the current grace period waits for: their phase and its count.
    seen: Vec<(usize, u64)>,
}

impl Grace {
    /// Grace periods over `readers` reader phases, for a pool of `frames` frames.
    pub fn new(readers: usize, frames: usize) -> Self {
        let phases = (0..readers).map(|_| Phase::default()).collect();
        Grace { phases, retired: AtomicUsize::new(0), room: frames / 8, state: Mutex::default() }
    }

    /// The phase of the reader announced in slot `at` of `readers.rs`.
    #[inline(always)]
    pub fn phase(&self, at: usize) -> &Phase {
        &self.phases[at]
    }

    /// The readers inside a phase now, each named by its slot and its phase count: a
    /// grace period starts here. Starts with the `SeqCst` fence of the pairing in the
    /// module docs.
    fn unpinned(&self) -> Vec<(usize, u64)> {
        fence(Ordering::SeqCst);
        let counts = self.phases.iter().map(|phase| phase.0.load(Ordering::SeqCst));
        counts.enumerate().filter(|&(_, count)| !count.is_multiple_of(2)).collect()
    }

    /// Whether every reader of `seen` ([`Grace::unpinned`]) has moved past that phase.
    fn all_moved_on(&self, seen: &[(usize, u64)]) -> bool {
        seen.iter().all(|&(at, count)| self.phases[at].0.load(Ordering::Acquire) != count)
    }

    /// Whether another frame may be retired now (see the module docs).
    #[inline]
    pub fn has_room(&self) -> bool {
        self.retired.load(Ordering::Relaxed) < self.room
    }

    /// Frames retired and not yet handed back.
    #[inline]
    pub fn retired(&self) -> usize {
        self.retired.load(Ordering::Relaxed)
    }

    /// Records frame `index`, which the caller has just unlisted (under the frame's
    /// write lock, its state now `Retiring`), as waiting for a grace period.
    pub fn retire(&self, index: u32) {
        fence(Ordering::SeqCst);
        self.state.lock().waiting.push(index);
        self.retired.fetch_add(1, Ordering::Relaxed);
    }

    /// Appends to `out` the frames whose grace period has ended (they are the caller's
    /// to free), and starts the next grace period if frames wait for one. Never waits:
    /// if another thread is at it, nothing is handed out this time.
    pub fn collect(&self, out: &mut Vec<u32>) {
        if self.retired() == 0 {
            return;
        }
        let Some(mut state) = self.state.try_lock() else { return };
        // mutant: retired frames are handed back without waiting for their readers
        let ended = cfg!(quire_mutant = "grace_none") || self.all_moved_on(&state.seen);
        if !state.covered.is_empty() && ended {
            self.retired.fetch_sub(state.covered.len(), Ordering::Relaxed);
            out.append(&mut state.covered);
        }
        if state.covered.is_empty() && !state.waiting.is_empty() {
            state.seen = self.unpinned();
            let waiting = std::mem::take(&mut state.waiting);
            state.covered = waiting;
            if state.seen.is_empty() {
                self.retired.fetch_sub(state.covered.len(), Ordering::Relaxed);
                out.append(&mut state.covered);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{PhysId, Pool};
    use crate::page::{PageKind, TxnId, set_header};

    fn page(kind: PageKind, value: u8) -> impl FnOnce(&mut [u8]) -> crate::Result<()> {
        move |bytes| {
            bytes.fill(value);
            set_header(bytes, kind, 1, TxnId(1));
            Ok(())
        }
    }

    #[test]
    fn a_frame_read_unpinned_gets_new_bytes_only_after_its_reader_has_moved_on() {
        // Proves the grace period: a branch page read unpinned by a reader whose phase
        // has entered is evicted (retired, no longer found) but its frame keeps the bytes
        // the reader holds through a sweep that reuses every other frame many times
        // over; once the reader's phase leaves, the frame is taken again. A frame whose
        // reader had left by the time it was evicted is taken at once. A leaf is never
        // read unpinned.
        let pool = Pool::with_huge_pages(4096, 16, false).unwrap();
        let branch = PageKind::structure(17).indexing();
        let (guard, index) = pool.get(PhysId(1), page(branch, 9)).unwrap();
        pool.saw(index, &guard, 10);
        drop(guard);
        let (guard, leaf) = pool.get(PhysId(2), page(PageKind::structure(16), 8)).unwrap();
        pool.saw(leaf, &guard, 10);
        drop(guard);
        assert!(pool.peekable(index) && !pool.peekable(leaf));
        let at = 3; // the slot a reader of snapshot 10 was announced in
        pool.phase(at).enter();
        // SAFETY: the phase entered above and leaves below, after the last use of `held`.
        let held = unsafe { pool.peek_seen(index, 10) }.expect("a branch seen by snapshot 10");
        assert!(unsafe { pool.peek_seen(index, 11) }.is_none(), "snapshot 11 was not seen to read it");
        assert!(unsafe { pool.peek_seen(leaf, 10) }.is_none(), "a leaf is pinned, never read unpinned");
        let before = held.to_vec();
        for other in 100..400u64 {
            drop(pool.get(PhysId(other), page(PageKind::structure(16), other as u8)).unwrap());
        }
        assert!(pool.lookup(PhysId(1)).is_none(), "the branch was evicted");
        assert!(unsafe { pool.peek_seen(index, 10) }.is_none(), "a retired frame is not read");
        assert_eq!(held, &before[..], "the frame kept its bytes while its reader held them");
        assert_eq!(pool.grace.retired(), 1);
        pool.phase(at).leave();
        for other in 400..440u64 {
            drop(pool.get(PhysId(other), page(PageKind::structure(16), 0)).unwrap());
        }
        assert_eq!(pool.grace.retired(), 0, "freed once its reader moved on");
        // Read unpinned again, then left before the eviction: nothing to wait for.
        let (guard, index) = pool.get(PhysId(1), page(branch, 9)).unwrap();
        pool.saw(index, &guard, 10);
        drop(guard);
        pool.phase(at).enter();
        assert!(unsafe { pool.peek_seen(index, 10) }.is_some());
        pool.phase(at).leave();
        for other in 500..600u64 {
            drop(pool.get(PhysId(other), page(PageKind::structure(16), 0)).unwrap());
        }
        assert!(pool.lookup(PhysId(1)).is_none(), "evicted");
        assert_eq!(pool.grace.retired(), 0, "taken at once: no reader held it");
        assert_eq!(pool.stats().frames_allocated, 16);
    }
}
