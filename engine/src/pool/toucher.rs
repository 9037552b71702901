//! The pool's toucher: a thread that backs the pool's memory a little ahead of the
//! frames the pool is about to use for the first time, so that a read or a write never
//! waits for the kernel to clear a fresh huge page.
//!
//! Why. A pool on transparent huge pages (`memory.rs`) pays for each 2 MiB of its
//! memory when it is first touched, inside the miss or write that touched it. On this
//! project's machine kind that is a huge page the host took back, 3–4 ms per MiB:
//! readers stalled for 20–25 ms during KV's online compaction (the goal is 10 ms), and
//! a one-transaction load of 1 M keys ran at a third of its speed. The frames are first
//! taken in order (the CLOCK hand's first sweep, `Pool::take_frame`), so the memory the
//! pool will touch next is known: the toucher backs it with `MADV_POPULATE_WRITE`, which
//! faults pages in without writing them (contents stay zero, nothing races with the
//! frames' users), [`AHEAD`] bytes past the last frame taken, and then sleeps until the
//! pool takes more. It never backs memory the pool would not have used within the next
//! [`AHEAD`] bytes, and ends when the whole pool is backed or the pool is dropped.
//!
//! Measured with a C probe (512 MiB on huge pages, a write every 8 KiB with 2 µs of work
//! between): 1.49–2.65 s alone, 0.46–0.68 s with a thread populating 64 MiB ahead. In
//! `quire-bench KV` at 5 M keys the one-transaction load went from 0.47 M to 1.15 M
//! keys/s, and its process CPU (the toucher's included) from 10.2 to 6.7 s: backing
//! 2 MiB in one call costs less than faulting it in; see `memory.rs` for the rest.

use memmap2::MmapMut;
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::Thread;

/// How far past the last frame taken the toucher backs the pool: at 3–4 ms per MiB it
/// backs ~300 MiB a second, so this absorbs a tenth of a second of misses at that rate.
pub const AHEAD: usize = 32 << 20;
/// Bytes backed per call (one huge page).
const STEP: usize = 2 << 20;
/// Pools smaller than this get no toucher (tests' pools, and a pool the toucher would
/// back whole in a few calls anyway).
pub const SMALLEST_POOL: usize = 2 * AHEAD;

/// What the pool and its toucher share.
#[derive(Debug, Default)]
struct Shared {
    /// Bytes of the mapping the pool has taken frames from (the hand's first sweep).
    frontier: AtomicUsize,
    /// Bytes of the mapping the toucher has backed.
    backed: AtomicUsize,
    /// Set when the pool is dropped.
    stop: AtomicBool,
}

/// The pool's handle on its toucher; the thread starts when the pool has taken its
/// first [`START`] bytes of frames (a database that uses a few pages never has one) and
/// stops when this is dropped.
#[derive(Debug)]
pub struct Toucher {
    shared: Arc<Shared>,
    /// The mapping, for the thread to take when it starts.
    map: Arc<MmapMut>,
    /// The thread, once started; `None` inside if it could not be had (the pool then
    /// touches its own memory).
    thread: OnceLock<Option<Thread>>,
}

/// Frames the pool takes before its toucher starts.
const START: usize = STEP;

impl Toucher {
    /// A toucher for `map` (kept mapped until the thread ends, whatever the pool does);
    /// no thread yet.
    pub fn new(map: Arc<MmapMut>) -> Toucher {
        Toucher { shared: Arc::new(Shared::default()), map, thread: OnceLock::new() }
    }

    /// The pool has taken frames up to byte `end` of its mapping: starts the toucher or
    /// wakes it when that leaves less than [`AHEAD`] bytes backed beyond it. Called once
    /// per frame, when the pool first takes it.
    #[inline]
    pub fn reached(&self, end: usize) {
        self.shared.frontier.fetch_max(end, Ordering::Release);
        if end < START || self.shared.backed.load(Ordering::Acquire) >= end + AHEAD {
            return;
        }
        if let Some(thread) = self.thread.get_or_init(|| self.spawn()) {
            thread.unpark();
        }
    }

    /// Starts the thread.
    fn spawn(&self) -> Option<Thread> {
        let (map, shared) = (Arc::clone(&self.map), Arc::clone(&self.shared));
        let handle =
            std::thread::Builder::new().name("quiredb-pool-toucher".into()).spawn(move || run(&map, &shared)).ok()?;
        // Not joined, here or on drop: the thread holds its own reference to the
        // mapping, and it may be backing a huge page (milliseconds) nobody now needs.
        Some(handle.thread().clone())
    }

    /// Bytes backed so far (tests).
    #[cfg(test)]
    pub fn backed(&self) -> usize {
        self.shared.backed.load(Ordering::Acquire)
    }
}

impl Drop for Toucher {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(Some(thread)) = self.thread.get() {
            thread.unpark();
        }
    }
}

/// The toucher's loop (see the module docs): from the frame the pool has reached, on.
fn run(map: &MmapMut, shared: &Shared) {
    let len = map.len();
    let mut backed = shared.frontier.load(Ordering::Acquire) / STEP * STEP;
    while backed < len && !shared.stop.load(Ordering::Acquire) {
        let wanted = shared.frontier.load(Ordering::Acquire).saturating_add(AHEAD).min(len);
        if backed >= wanted {
            std::thread::park();
            continue;
        }
        let step = STEP.min(len - backed);
        if !back(map, backed, step) {
            // An old kernel (before 5.14) or no memory left: the pool touches its own.
            return;
        }
        backed += step;
        shared.backed.store(backed, Ordering::Release);
    }
}

/// Backs `len` bytes of `map` from `offset` without writing them; false if the kernel
/// refused.
#[cfg(target_os = "linux")]
fn back(map: &MmapMut, offset: usize, len: usize) -> bool {
    map.advise_range(memmap2::Advice::PopulateWrite, offset, len).is_ok()
}

/// No `MADV_POPULATE_WRITE` here: the toucher stops at once.
#[cfg(not(target_os = "linux"))]
fn back(_map: &MmapMut, _offset: usize, _len: usize) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::memory::FrameMemory;
    use std::time::{Duration, Instant};

    /// Bytes of frames the test maps.
    const POOL_BYTES: usize = 128 << 20;

    /// Bytes of the test's mapping of [`POOL_BYTES`] from `start` that are resident,
    /// counted page by page with `mincore`: the `Rss` of the mapping in
    /// `/proc/self/smaps` would count another test's pool too when the kernel merges
    /// the two adjacent mappings into one (seen once in a parallel test run).
    fn resident(start: usize) -> usize {
        const PAGE: usize = 4096;
        let mut pages = vec![0u8; POOL_BYTES / PAGE];
        // SAFETY: `start` is the page-aligned start of the test's live mapping of
        // `POOL_BYTES` bytes (`FrameMemory` keeps it mapped until the test ends), and
        // `pages` has one byte for each of its 4 KiB pages, as `mincore` writes.
        let rc = unsafe { libc::mincore(start as *mut libc::c_void, POOL_BYTES, pages.as_mut_ptr()) };
        assert_eq!(rc, 0, "mincore: {}", std::io::Error::last_os_error());
        pages.iter().filter(|&&page| page & 1 == 1).count() * PAGE
    }

    /// Waits (up to a minute: a liveness bound, not a speed check) until `done`.
    fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
        let start = Instant::now();
        while !done() {
            assert!(start.elapsed() < Duration::from_secs(60), "never happened: {what}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_toucher_backs_the_pool_ahead_of_the_frames_taken_and_no_further() {
        // 128 MiB of frames; nothing touched by this test but through the toucher.
        let mut memory = FrameMemory::new(8192, POOL_BYTES / 8192, true).unwrap();
        let (frames, _) = memory.cut(8192);
        let start = frames[0].as_ptr().addr();
        let toucher = Toucher::new(memory.mapping());
        // A pool that took less than START bytes of frames has no toucher running.
        toucher.reached(START - 8192);
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!((toucher.backed(), resident(start)), (0, 0));
        // START taken: it backs AHEAD bytes past them, then waits.
        toucher.reached(START);
        wait_for("AHEAD bytes past START backed", || toucher.backed() >= START + AHEAD);
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(toucher.backed(), START + AHEAD, "it waits for the pool");
        assert!(resident(start) >= AHEAD, "backed means resident: {} bytes", resident(start));
        assert!(resident(start) <= START + AHEAD, "no further: {} bytes", resident(start));
        // The pool took frames up to 64 MiB: the toucher goes on to 96 MiB.
        toucher.reached(64 << 20);
        wait_for("64 MiB + AHEAD backed", || toucher.backed() >= (64 << 20) + AHEAD);
        assert!(resident(start) >= (64 << 20) + AHEAD - START);
        // Backed, not written: every frame still reads as zeros.
        assert!(frames.iter().all(|bytes| bytes.iter().all(|&b| b == 0)));
        drop(toucher);
    }
}
