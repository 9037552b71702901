//! The shared buffer pool: preallocated page frames, looked up by physical page id.
//!
//! Committed physical pages are immutable, so readers of every snapshot share frames
//! without coordination beyond a pin. A frame's life cycle:
//!
//! ```text
//!            evict (CLOCK)                 load from storage
//!   Free  <──────────────── Clean  <──────────────────────── Free
//!     │                       ▲
//!     │ writer takes it       │ commit / spill writes it
//!     └──────────> Dirty ─────┘        (abort: Dirty ──> Free)
//! ```
//!
//! A logged commit may publish its frames *unwritten* (clean, but flagged: the file does
//! not hold the page yet, `unwritten.rs`): the hand skips them until the writer has
//! written them back.
//!
//! - *Free*: not in the page table, holds nothing.
//! - *Clean*: in the page table under its physical id; pinned by read guards.
//! - *Dirty*: owned by the single write transaction through its dirty map, never in the
//!   page table, never evicted; becomes Clean when written out.
//!
//! Locks: each frame has an `RwLock`; a pin *is* a read guard, so a pinned frame cannot
//! be evicted (eviction needs `try_write`). The page table (`table.rs`) is probed
//! without locks; a hit costs one table probe, one read-lock of the frame and a check
//! that the frame still holds the page. No lock is held across I/O except the write
//! lock of a frame nobody else can reach yet. Pages that index others are also read
//! without a pin, inside `PageRead::with_page` ([`Pool::peek_seen`], `seen.rs`); a
//! frame read so is retired when it is unlisted and freed after its readers
//! (`grace.rs`, `listing.rs`).
//!
//! Eviction is CLOCK with weights (`evict.rs`): a hit gives a frame as many chances as
//! its page's kind deserves — three for the pages that index others (map pages, and the
//! pages of the kinds a structure flags [`PageKind::indexing`]: B+tree branches, heads;
//! a search passes them on every lookup, and they are under 1 % of a structure), one
//! for the rest — and each pass of the hand takes one. In a pool smaller than the data
//! the inner levels then stay while the leaves come and go.
//!
//! Eviction is CLOCK, not the `lru` crate. Measured on this machine kind
//! (`benches/engine.rs`, `eviction_policy/*`, quiet machine): a hit in an
//! `lru::LruCache` behind a mutex costs 13.8 ns with one thread and 56 ns with two,
//! our whole CLOCK hit path 15.4 ns and 58 ns — but the LRU figure is only the lookup:
//! it still lacks the frame pin, every hit takes the one global mutex (serialising all
//! readers) and writes the list. CLOCK's hit takes no lock shared between pages and
//! writes only the frame's own chance count, so it is kept.
//!
//! Memory: one mapping for all frames, on transparent huge pages by default
//! (`memory.rs`), backed a little ahead of the frames the hand first takes by the
//! pool's toucher thread (`toucher.rs`), so that no read waits for the kernel to clear
//! a fresh huge page. Bookkeeping per frame: see [`FRAME_OVERHEAD_BYTES`] (≈ 1% of an
//! 8 KiB page).

use crate::error::{Error, Result};
use crate::page::{PageKind, PhysId};
use crate::readers::READER_SLOTS;
use crate::stats::Counters;
use grace::Grace;
use listing::Listing;
use memory::{FrameBytes, FrameMemory, Prefetcher};
use parking_lot::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::hash::Hasher;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use table::Table;
use toucher::Toucher;
use unwritten::Unwritten;

mod evict;
mod grace;
mod listing;
mod memory;
mod seen;
mod table;
mod toucher;
mod unwritten;
mod verified;

pub use grace::Phase;
pub use memory::prefetch_bytes;
pub use table::MAX_FRAMES;
pub use verified::Verified;

/// Sentinel physical id of a frame that holds nothing.
const NO_PAGE: u64 = u64::MAX;
/// Longest the writer waits for another thread's instant hold on one of its dirty
/// frames before concluding that it borrows the frame itself (a bug it reports).
const TRANSIENT_LOCK_WAIT: std::time::Duration = std::time::Duration::from_millis(100);
/// Hit counters, striped by thread.
const HIT_STRIPES: usize = 16;

/// The hit-counter stripe of the calling thread (threads take stripes in turn).
#[inline]
fn hit_stripe() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static STRIPE: std::cell::Cell<usize> = const { std::cell::Cell::new(usize::MAX) };
    }
    // `LocalKey::get` on a const-initialised `Cell` is one thread-local load; the
    // closure form of `with` was a call of its own on every hit.
    let stripe = STRIPE.get();
    if stripe != usize::MAX {
        return stripe;
    }
    first_stripe(&NEXT, &STRIPE)
}

/// Gives the calling thread its hit-counter stripe (its first hit), out of line.
#[cold]
#[inline(never)]
fn first_stripe(next: &AtomicUsize, stripe: &'static std::thread::LocalKey<std::cell::Cell<usize>>) -> usize {
    let taken = next.fetch_add(1, Ordering::Relaxed) % HIT_STRIPES;
    stripe.set(taken);
    taken
}

/// Chances a hit gives the pages that index others (page-map pages, the catalog, and
/// the structures' kinds flagged [`PageKind::indexing`]: B+tree branches, heads): a
/// search passes through them on every lookup and they are under 1 % of a structure,
/// so a pool smaller than the data keeps them while the hand sweeps the leaves out.
const MOST_CHANCES: u8 = 3;

/// CLOCK chances a hit gives a page of `kind` (see [`MOST_CHANCES`]); one for the rest,
/// the classic second chance.
fn chances_for(kind: PageKind) -> u8 {
    if kind.indexes_others() { MOST_CHANCES } else { 1 }
}

/// State of a frame, see the module diagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameState {
    /// Holds nothing.
    Free,
    /// Holds a committed (or spilled) page, listed in the page table.
    Clean,
    /// Holds a page of the running write transaction.
    Dirty,
    /// Unlisted, its page one that readers may have read without a pin: free once they
    /// have moved on (`grace.rs`).
    Retiring,
}

/// The lock-protected part of a frame.
#[derive(Debug)]
pub struct FrameData {
    /// Physical page held, `NO_PAGE` when free.
    pub phys: u64,
    /// Life-cycle state.
    pub state: FrameState,
    /// Whether the frame was ever taken (its memory touched), for the counters.
    touched: bool,
    /// The page bytes (header included), a slice of the pool's `FrameMemory`.
    pub bytes: FrameBytes,
}

/// One cache line per frame, so that pinning touches one line (prefetched with the
/// page's first lines, see [`Pool::prefetch_frame_head`]).
#[derive(Debug)]
#[repr(align(64))]
struct Frame {
    data: RwLock<FrameData>,
    /// CLOCK's chances left before the hand may evict the frame: set to the page's
    /// weight (see [`chances_for`]) by every hit, taken one per pass of the hand.
    chances: AtomicU8,
    /// The weight of the page held, from its kind (set when it is loaded or published).
    weight: AtomicU8,
    /// The physical page the page table lists this frame under, `NO_PAGE` when none.
    /// A frame found through a hint instead of the table (`Pool::lookup_frame`) must
    /// still be listed: a page unlisted by [`Pool::invalidate`] keeps its old bytes and
    /// id in the frame until it is evicted, but its physical page now holds another.
    /// Whether a reader read the page unpinned since it was listed is marked here too
    /// (`listing.rs`).
    listing: Listing,
    /// The page is committed but not yet in the file (`unwritten.rs`): not evictable.
    unwritten: AtomicBool,
    /// The snapshots known to read this frame's page as their version of its logical
    /// page: `seen_from..seen_until` (empty when `seen_from >= seen_until`), see
    /// [`Pool::pin_seen`].
    seen_from: AtomicU64,
    seen_until: AtomicU64,
}

// The frame's lock, listing and seen snapshots share the one line a pin touches.
const _: () = assert!(size_of::<Frame>() == 64);

/// Bytes of bookkeeping per frame: the frame struct plus its four page-table slots.
pub const FRAME_OVERHEAD_BYTES: usize = size_of::<Frame>() + 4 * size_of::<u64>();

/// Bytes of one page-map entry (a physical page id).
pub const MAP_ENTRY_BYTES: usize = size_of::<u64>();

/// Multiplicative hash for page ids (they are dense integers).
#[derive(Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _bytes: &[u8]) {
        unreachable!("IdHasher hashes u64 page ids only, through write_u64")
    }
    fn write_u64(&mut self, id: u64) {
        self.0 = id.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29);
    }
}

/// A pinned frame for reading.
pub type ReadGuard<'a> = RwLockReadGuard<'a, FrameData>;
/// An exclusively locked frame.
pub type WriteGuard<'a> = RwLockWriteGuard<'a, FrameData>;

/// The buffer pool. See the module docs.
#[derive(Debug)]
pub struct Pool {
    page_size: usize,
    // Declared before `_memory`, so the frames (and their byte handles) drop first.
    frames: Box<[Frame]>,
    /// Held only to keep the frames' mapping alive as long as the pool.
    _memory: FrameMemory,
    /// Backs the memory of huge-page pools ahead of the frames first taken
    /// (`toucher.rs`).
    toucher: Option<Toucher>,
    prefetcher: Prefetcher,
    table: Table,
    hits: Box<[PaddedCounter]>,
    hand: AtomicUsize,
    /// Frames never taken yet: while some are left, a miss costs no eviction.
    untouched: AtomicUsize,
    /// Frames retired until the readers that may read them unpinned have left.
    grace: Grace,
    /// Frames whose page was reallocated ([`Pool::invalidate`]): taken before the CLOCK
    /// hand looks further, so the copy a commit makes of a page reuses the frame of the
    /// version it replaces instead of touching (page-faulting) memory the pool never used.
    recycled: parking_lot::Mutex<Vec<u32>>,
    /// Frames published unwritten, by physical page.
    unwritten: Unwritten,
    /// Pages checksummed in the file's memory map (see `txn/read.rs`).
    pub verified: Verified,
    /// Shared counters (hits, misses, …).
    pub counters: Counters,
}

/// A counter alone on its cache line(s), so threads counting hits do not share a line.
#[derive(Debug, Default)]
#[repr(align(128))]
struct PaddedCounter(AtomicU64);

impl Pool {
    /// A pool of `frames` frames of `page_size` bytes, in one mapping (`FrameMemory`)
    /// that the kernel backs only as frames are first used, so a large pool costs memory
    /// only as far as it is used (zeroing a 256 MiB pool up front took ~0.1 s per open).
    /// Fails only if the address space for the mapping cannot be had.
    pub fn new(page_size: usize, frames: usize) -> Result<Pool> {
        Pool::with_huge_pages(page_size, frames, true)
    }

    /// [`Pool::new`], its frames' memory advised for transparent huge pages if
    /// `huge_pages` ([`crate::DatabaseBuilder::huge_pages`], `memory.rs`).
    pub fn with_huge_pages(page_size: usize, frames: usize, huge_pages: bool) -> Result<Pool> {
        assert!(frames >= 16, "a pool needs at least 16 frames (checked by Options::validate)");
        let mut memory = FrameMemory::new(page_size, frames, huge_pages)
            .map_err(|error| Error::io(format!("mapping a buffer pool of {frames} frames"), error))?;
        let (bytes, prefetcher) = memory.cut(page_size);
        let frames: Box<[Frame]> = bytes
            .into_iter()
            .map(|bytes| Frame {
                data: RwLock::new(FrameData { phys: NO_PAGE, state: FrameState::Free, touched: false, bytes }),
                chances: AtomicU8::new(0),
                weight: AtomicU8::new(1),
                listing: Listing::unlisted(),
                unwritten: AtomicBool::new(false),
                seen_from: AtomicU64::new(u64::MAX),
                seen_until: AtomicU64::new(0),
            })
            .collect();
        let count = frames.len();
        let table = Table::new(count);
        let toucher = (huge_pages && memory.len() >= toucher::SMALLEST_POOL).then(|| Toucher::new(memory.mapping()));
        let hits = (0..HIT_STRIPES).map(|_| PaddedCounter::default()).collect();
        Ok(Pool {
            page_size,
            frames,
            _memory: memory,
            toucher,
            prefetcher,
            table,
            hits,
            hand: AtomicUsize::new(0),
            untouched: AtomicUsize::new(count),
            grace: Grace::new(READER_SLOTS, count),
            recycled: parking_lot::Mutex::new(Vec::new()),
            unwritten: Unwritten::default(),
            verified: Verified::new(count),
            counters: Counters::default(),
        })
    }

    /// The counters, with the hits the shards counted.
    pub fn stats(&self) -> crate::stats::Stats {
        let mut stats = self.counters.snapshot();
        stats.hits += self.hits.iter().map(|stripe| stripe.0.load(Ordering::Relaxed)).sum::<u64>();
        stats
    }

    /// Whether every frame has been used once: from then on a miss evicts a page.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.untouched.load(Ordering::Relaxed) == 0
    }

    /// Whether a page of `kind` is one that indexes others (see [`MOST_CHANCES`]):
    /// worth a frame even when the pool is full.
    #[inline]
    pub fn is_index_kind(kind: PageKind) -> bool {
        chances_for(kind) > 1
    }

    /// Number of frames.
    pub fn frame_count(&self) -> usize {
        self.frames.len()
    }

    /// Page size of every frame.
    pub fn page_size(&self) -> usize {
        self.page_size
    }

    /// The frame the pool lists `phys` in, unpinned: a hint for a caller that re-checks
    /// the frame before it relies on it (as [`Pool::saw_published`] does).
    #[inline]
    pub fn frame_of(&self, phys: PhysId) -> Option<u32> {
        self.table.get(phys.0)
    }

    /// Pins the frame holding `phys` if it is cached; returns it with its index.
    #[inline]
    pub fn lookup(&self, phys: PhysId) -> Option<(ReadGuard<'_>, u32)> {
        loop {
            let index = self.table.get(phys.0)?;
            let frame = &self.frames[index as usize];
            if let Some(guard) = self.pin_if_holds(frame, frame.data.read(), phys) {
                return Some((guard, index));
            }
            // The frame was evicted between the table probe and the pin: look again.
        }
    }

    /// Pins frame `index` if it holds `phys` (clean): a hit without the table probe, for
    /// a caller that remembers where the page was (`translations.rs`). A stale index
    /// only misses: the frame's own page id is checked under its lock. Never waits: a
    /// stale index may name a frame the writer holds (dirty) for as long as it likes.
    /// Always inlined: it is the pin of every hinted page read, and a call to it cost
    /// a fifth of it.
    #[inline(always)]
    pub fn lookup_frame(&self, index: u32, phys: PhysId) -> Option<ReadGuard<'_>> {
        let frame = self.frames.get(index as usize)?;
        self.pin_if_holds(frame, frame.data.try_read()?, phys)
    }

    /// Keeps the pin `guard` on `frame` if the frame holds `phys` (clean), counting a hit.
    #[inline(always)]
    fn pin_if_holds<'a>(&self, frame: &Frame, guard: ReadGuard<'a>, phys: PhysId) -> Option<ReadGuard<'a>> {
        if guard.phys != phys.0 || guard.state != FrameState::Clean || !frame.listing.load().is(phys.0) {
            return None;
        }
        self.count_hit(frame, frame.weight.load(Ordering::Relaxed));
        Some(guard)
    }

    /// A hit on `frame`: its chances back to `weight` (written only when the hand took
    /// one, so a hit leaves the frame's line alone), and one more hit in the thread's
    /// stripe. A plain load and store, not a locked add: a hit is the hottest path of
    /// every read, and a stripe is shared only when more than [`HIT_STRIPES`] threads
    /// read at once (then a few hits may go uncounted).
    #[inline(always)]
    fn count_hit(&self, frame: &Frame, weight: u8) {
        if frame.chances.load(Ordering::Relaxed) < weight {
            frame.chances.store(weight, Ordering::Relaxed);
        }
        let hits = &self.hits[hit_stripe()].0;
        hits.store(hits.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    /// If frame `index` is in the pool, asks the CPU to bring the byte ranges `ranges`
    /// (after the first `skip` bytes) of it into its caches; no pin, no I/O, no effect
    /// on what anyone reads (a hint: whatever page the frame holds by then).
    #[inline]
    pub fn prefetch_frame(&self, index: u32, skip: usize, ranges: &[std::ops::Range<usize>]) {
        for range in ranges {
            let bytes = range.start.saturating_add(skip)..range.end.saturating_add(skip);
            self.prefetcher.prefetch(index as usize, bytes);
        }
    }

    /// Asks the CPU for frame `index`'s lock and the first `LINES` cache lines of its
    /// page (header included), before pinning it: the misses then overlap.
    #[inline]
    pub fn prefetch_frame_head<const LINES: usize>(&self, index: u32) {
        if let Some(frame) = self.frames.get(index as usize) {
            memory::prefetch_line(std::ptr::from_ref(frame).cast());
            self.prefetcher.prefetch_head::<LINES>(index as usize);
        }
    }

    /// If `phys` is cached, [`Pool::prefetch_frame`] on its frame.
    #[inline]
    pub fn prefetch(&self, phys: PhysId, skip: usize, ranges: &[std::ops::Range<usize>]) {
        if let Some(index) = self.table.get(phys.0) {
            self.prefetch_frame(index, skip, ranges);
        }
    }

    /// Pins `phys`, loading it with `load` on a miss. `load` fills the frame bytes and
    /// verifies them; it runs with only the new frame's own lock held. Returns the pin
    /// and the frame's index.
    #[inline]
    pub fn get(&self, phys: PhysId, load: impl FnOnce(&mut [u8]) -> Result<()>) -> Result<(ReadGuard<'_>, u32)> {
        if let Some(found) = self.lookup(phys) {
            return Ok(found);
        }
        self.counters.miss();
        let (index, mut guard) = self.take_frame()?;
        load(&mut guard.bytes)?;
        guard.phys = phys.0;
        guard.state = FrameState::Clean;
        let frame = &self.frames[index as usize];
        Self::forget_seen(frame, &guard);
        frame.weight.store(chances_for(crate::page::header(&guard.bytes).kind), Ordering::Relaxed);
        frame.chances.store(1, Ordering::Relaxed);
        self.list(phys.0, index);
        Ok((RwLockWriteGuard::downgrade(guard), index))
    }

    /// Takes a frame for a dirty page of the write transaction.
    pub fn take_dirty(&self, phys: PhysId) -> Result<(u32, WriteGuard<'_>)> {
        let (index, mut guard) = self.take_frame()?;
        guard.phys = phys.0;
        guard.state = FrameState::Dirty;
        Ok((index, guard))
    }

    /// Locks a dirty frame owned by the write transaction; `None` if the writer itself
    /// still borrows it. Others lock a dirty frame only for an instant (the CLOCK hand
    /// of a reader's miss tries every frame), so the writer waits out such a holder
    /// for up to `TRANSIENT_LOCK_WAIT` rather than mistaking it for its own borrow.
    pub fn dirty_mut(&self, index: u32, phys: PhysId) -> Option<WriteGuard<'_>> {
        let data = &self.frames[index as usize].data;
        let guard = data.try_write().or_else(|| data.try_write_for(TRANSIENT_LOCK_WAIT))?;
        assert!(guard.phys == phys.0 && guard.state == FrameState::Dirty, "dirty map names frame {index} for {phys}");
        Some(guard)
    }

    /// [`Pool::dirty_mut`] without waiting: `None` also when another thread holds the
    /// frame for its instant. For spills, which may leave any page for later: waiting
    /// there cost 100 ms for every page the writer itself still borrowed (a structure
    /// keeping its head page locked through an insert), at every spill.
    pub fn try_dirty_mut(&self, index: u32, phys: PhysId) -> Option<WriteGuard<'_>> {
        let guard = self.frames[index as usize].data.try_write()?;
        assert!(guard.phys == phys.0 && guard.state == FrameState::Dirty, "dirty map names frame {index} for {phys}");
        Some(guard)
    }

    /// Pins a dirty frame for reading (the writer reading its own page); waits out a
    /// transient holder like [`Pool::dirty_mut`].
    pub fn dirty_ref(&self, index: u32, phys: PhysId) -> Option<ReadGuard<'_>> {
        let data = &self.frames[index as usize].data;
        let guard = data.try_read().or_else(|| data.try_read_for(TRANSIENT_LOCK_WAIT))?;
        assert!(guard.phys == phys.0 && guard.state == FrameState::Dirty, "dirty map names frame {index} for {phys}");
        Some(guard)
    }

    /// Turns a written dirty frame into a clean, shared one.
    pub fn publish(&self, mut guard: WriteGuard<'_>, index: u32) {
        assert_eq!(guard.state, FrameState::Dirty, "only dirty frames are published");
        guard.state = FrameState::Clean;
        let frame = &self.frames[index as usize];
        frame.weight.store(chances_for(crate::page::header(&guard.bytes).kind), Ordering::Relaxed);
        Self::forget_seen(frame, &guard);
        self.list(guard.phys, index);
    }

    /// [`Pool::publish`] for a page the file does not hold yet (`unwritten.rs`): readable
    /// at once, evicted only once [`Pool::mark_written`] says it was written back.
    pub fn publish_unwritten(&self, guard: WriteGuard<'_>, index: u32) {
        self.frames[index as usize].unwritten.store(true, Ordering::Release);
        self.unwritten.insert(guard.phys, index);
        self.publish(guard, index);
    }

    /// Pages published unwritten and not written back (or reallocated) since.
    #[inline]
    pub fn unwritten_count(&self) -> usize {
        self.unwritten.len()
    }

    /// The pages published unwritten, with their frames, in physical order.
    pub fn unwritten_pages(&self) -> Vec<(u64, u32)> {
        self.unwritten.sorted()
    }

    /// Pins frame `index` if it still holds `phys` unwritten.
    pub fn pin_unwritten(&self, index: u32, phys: u64) -> Option<ReadGuard<'_>> {
        let frame = self.frames.get(index as usize)?;
        let guard = frame.data.read();
        let holds = guard.phys == phys && guard.state == FrameState::Clean && frame.unwritten.load(Ordering::Acquire);
        holds.then_some(guard)
    }

    /// Pins the frames of the pages `first..first + count` the file does not hold yet,
    /// with each page's place in the range: a read of those pages from the file takes
    /// them *before* it reads, and copies them over what it read (`unwritten.rs`).
    pub fn pin_unwritten_in(&self, first: u64, count: usize) -> Vec<(usize, ReadGuard<'_>)> {
        if self.unwritten.len() == 0 {
            return Vec::new();
        }
        (0..count)
            .filter_map(|at| {
                let phys = first + at as u64;
                let index = self.unwritten.get(phys)?;
                Some((at, self.pin_unwritten(index, phys)?))
            })
            .collect()
    }

    /// Records that `phys`, held unwritten by frame `index`, is now in the file: the
    /// frame may be evicted. Called by the writer only, after the write returned.
    pub fn mark_written(&self, index: u32, phys: u64) {
        self.frames[index as usize].unwritten.store(false, Ordering::Release);
        self.unwritten.remove(phys);
    }

    /// Lists frame `index` in the page table under `phys`; a frame listed under it
    /// before (a second copy loaded after a false miss) is no longer listed.
    fn list(&self, phys: u64, index: u32) {
        if let Some(old) = self.table.insert(phys, index).filter(|&old| old != index) {
            self.frames[old as usize].listing.unlist(phys);
        }
        self.frames[index as usize].listing.list(phys);
    }

    /// Removes frame `index`'s listing under `phys`, if the table has it. Whether the
    /// frame was read unpinned since it was listed (it was unlisted before if `phys` is
    /// no longer its page): then it must be retired, not rewritten (`grace.rs`).
    fn unlist(&self, phys: u64, index: u32) -> bool {
        self.table.remove(phys, Some(index));
        let listing = &self.frames[index as usize].listing;
        // mutant: a frame read unpinned is rewritten at once, not retired
        listing.unlist(phys).unwrap_or_else(|| listing.load()).peeked() && !cfg!(quire_mutant = "peeked_ignored")
    }

    /// Turns the clean frame holding `phys` (a page the writer spilled) back into a
    /// dirty one without copying, unless it was evicted or is pinned, or was read
    /// unpinned (then it is retired, `grace.rs`).
    pub fn reclaim(&self, phys: PhysId) -> Option<(u32, WriteGuard<'_>)> {
        self.reclaim_at(self.table.get(phys.0)?, phys)
    }

    /// [`Pool::reclaim`] of `phys`, listed in frame `index`.
    fn reclaim_at(&self, index: u32, phys: PhysId) -> Option<(u32, WriteGuard<'_>)> {
        let mut guard = self.frames[index as usize].data.try_write()?;
        if guard.phys != phys.0
            || guard.state != FrameState::Clean
            || self.frames[index as usize].unwritten.load(Ordering::Acquire)
        {
            return None; // an unwritten page's frame is its only copy outside the log
        }
        if self.unlist(phys.0, index) {
            self.retire(index, &mut guard);
            return None;
        }
        guard.state = FrameState::Dirty;
        Some((index, guard))
    }

    /// Gives the clean frame holding committed page `old` to the writer as the dirty
    /// frame of its fresh page `new` (the bytes stay), unless it was evicted or is pinned,
    /// or its page indexes others: readers read those unpinned ([`Pool::peek_seen`]), so
    /// the frame would have to be retired (`grace.rs`) and the page read again for the
    /// writer, where a copy costs one memcpy.
    pub fn steal(&self, old: PhysId, new: PhysId) -> Option<(u32, WriteGuard<'_>)> {
        let index = self.table.get(old.0)?;
        if self.frames[index as usize].weight.load(Ordering::Relaxed) == MOST_CHANCES {
            return None;
        }
        let (index, mut guard) = self.reclaim_at(index, old)?;
        guard.phys = new.0;
        Some((index, guard))
    }

    /// Drops a dirty frame of an aborted transaction.
    pub fn discard(&self, mut guard: WriteGuard<'_>) {
        guard.phys = NO_PAGE;
        guard.state = FrameState::Free;
    }

    /// Forgets any cached copy of `phys` (called when a physical page is reallocated):
    /// the copy is unlisted, so neither the table nor a frame hint finds it again.
    pub fn invalidate(&self, phys: PhysId) {
        self.verified.forget(phys.0);
        if let Some(index) = self.unwritten.remove(phys.0) {
            // Its bytes are no longer wanted: the page is free, reused now.
            self.frames[index as usize].unwritten.store(false, Ordering::Release);
        }
        if let Some(index) = self.table.remove(phys.0, None) {
            let frame = &self.frames[index as usize];
            if frame.listing.unlist(phys.0).is_some() {
                let mut recycled = self.recycled.lock();
                if recycled.len() < self.frames.len() {
                    recycled.push(index);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(value: u8) -> impl FnOnce(&mut [u8]) -> Result<()> {
        move |bytes| {
            bytes.fill(value);
            Ok(())
        }
    }

    #[test]
    fn frames_get_their_memory_when_first_used() {
        // Proves a large pool allocates page memory only for the frames it uses, and
        // that a reused (evicted) frame keeps its memory instead of allocating again.
        let pool = Pool::new(4096, 1 << 16).unwrap();
        assert_eq!(pool.stats().frames_allocated, 0);
        for page in 0..3u64 {
            drop(pool.get(PhysId(page), fill(1)).unwrap().0);
        }
        assert_eq!(pool.stats().frames_allocated, 3);
        let small = Pool::new(4096, 16).unwrap();
        for page in 0..40u64 {
            let guard = small.get(PhysId(page), fill(page as u8)).unwrap().0;
            assert_eq!((guard.bytes.len(), guard.bytes[0]), (4096, page as u8));
        }
        assert_eq!(small.stats().frames_allocated, 16);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_pool_on_huge_pages_has_its_memory_backed_ahead_of_the_frames_it_takes() {
        // The toucher (`toucher.rs`) follows the frames the hand takes: 32 MiB of
        // frames used, it backs AHEAD bytes past them. Small pages need none.
        let pool = Pool::with_huge_pages(8192, 16384, true).unwrap();
        let toucher = pool.toucher.as_ref().expect("a 128 MiB pool on huge pages has a toucher");
        for page in 0..4096u64 {
            drop(pool.get(PhysId(page), fill(1)).unwrap().0);
        }
        let wanted = (4096 * 8192) + toucher::AHEAD;
        let start = std::time::Instant::now();
        while toucher.backed() < wanted {
            assert!(start.elapsed().as_secs() < 60, "backed {} of {wanted} bytes", toucher.backed());
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(Pool::with_huge_pages(8192, 16384, false).unwrap().toucher.is_none());
    }

    #[test]
    fn the_frame_of_a_reallocated_page_is_taken_before_untouched_memory() {
        // Proves: a page copied and its old version's physical page reallocated (what
        // every commit does) reuses the old version's frame, so a large pool does not
        // touch a new frame per commit; a frame the hand gave away since is not taken.
        let pool = Pool::new(4096, 1 << 12).unwrap();
        for page in 0..4u64 {
            drop(pool.get(PhysId(page), fill(1)).unwrap().0);
        }
        for round in 0..100u64 {
            let page = PhysId(round % 4);
            pool.invalidate(page);
            let (index, guard) = pool.take_dirty(page).unwrap();
            pool.publish(guard, index);
        }
        assert_eq!(pool.stats().frames_allocated, 4, "every reallocation reused its old frame");
        let (reader, _) = pool.get(PhysId(0), fill(0)).unwrap(); // a pinned old version
        let before = reader.bytes.to_vec();
        pool.invalidate(PhysId(0));
        let (index, mut guard) = pool.take_dirty(PhysId(0)).unwrap();
        guard.bytes.fill(7);
        assert_eq!(reader.bytes.to_vec(), before, "a pinned frame is not recycled under its reader");
        drop(reader);
        pool.publish(guard, index);
        assert_eq!(pool.get(PhysId(0), fill(0)).unwrap().0.bytes[0], 7);
    }

    #[test]
    fn hit_after_miss_and_eviction_when_full() {
        let pool = Pool::new(4096, 16).unwrap();
        for page in 0..40u64 {
            let guard = pool.get(PhysId(page), fill(page as u8)).unwrap().0;
            assert_eq!(guard.bytes[0], page as u8);
        }
        let guard = pool.get(PhysId(39), fill(0)).unwrap().0;
        assert_eq!(guard.bytes[0], 39, "recent page is cached");
        let stats = pool.stats();
        assert_eq!(stats.misses, 40);
        assert!(stats.evictions >= 24);
    }

    #[test]
    fn pinned_frames_are_not_evicted_and_exhaustion_is_an_error() {
        let pool = Pool::new(4096, 16).unwrap();
        let pins: Vec<_> = (0..16u64).map(|page| pool.get(PhysId(page), fill(1)).unwrap().0).collect();
        assert!(matches!(pool.get(PhysId(99), fill(2)), Err(Error::PoolExhausted { .. })));
        drop(pins);
        assert!(pool.get(PhysId(99), fill(2)).is_ok());
    }

    #[test]
    fn dirty_frames_are_invisible_until_published() {
        let pool = Pool::new(4096, 16).unwrap();
        let (index, mut guard) = pool.take_dirty(PhysId(5)).unwrap();
        guard.bytes[0] = 7;
        drop(guard);
        assert!(pool.lookup(PhysId(5)).is_none());
        let guard = pool.dirty_mut(index, PhysId(5)).unwrap();
        pool.publish(guard, index);
        let (found, frame) = pool.lookup(PhysId(5)).unwrap();
        assert_eq!((found.bytes[0], frame), (7, index));
        drop(found);
        // The frame's own page id decides: a wrong page or an index past the pool misses.
        assert!(pool.lookup_frame(index, PhysId(5)).is_some());
        assert!(pool.lookup_frame(index, PhysId(6)).is_none());
        assert!(pool.lookup_frame(u32::MAX, PhysId(5)).is_none());
    }

    #[test]
    fn an_invalidated_or_replaced_copy_is_not_found_through_a_hint() {
        // A reallocated physical page keeps its old bytes in the frame until eviction;
        // a frame hint naming that frame must miss (the model test of the engine read
        // a stale version through it before frames carried their listing).
        let pool = Pool::new(4096, 16).unwrap();
        let (guard, index) = pool.get(PhysId(5), fill(1)).unwrap();
        drop(guard);
        pool.invalidate(PhysId(5));
        assert!(pool.lookup_frame(index, PhysId(5)).is_none());
        assert!(pool.lookup(PhysId(5)).is_none());
        // A second copy listed over the first (after a false miss) unlists the first.
        let (guard, first) = pool.get(PhysId(6), fill(2)).unwrap();
        drop(guard);
        let (second, mut copy) = pool.take_dirty(PhysId(6)).unwrap();
        copy.bytes[0] = 2;
        pool.publish(copy, second);
        assert!(pool.lookup_frame(first, PhysId(6)).is_none());
        assert_eq!(pool.lookup_frame(second, PhysId(6)).map(|found| found.bytes[0]), Some(2));
        pool.invalidate(PhysId(6));
        assert!(pool.lookup_frame(second, PhysId(6)).is_none());
    }

    #[test]
    fn index_pages_outlive_a_sweep_of_leaves_that_evicts_a_leaf() {
        // Proves the weighting: touched as often as a lookup touches it (once per ten
        // leaves loaded), a branch page (its kind flagged indexing) stays while a leaf
        // touched alike is evicted; so does a map page, known to the engine by its code.
        use crate::page::{TxnId, set_header};
        let leaf_kind = PageKind::structure(16);
        let branch_kind = PageKind::structure(17).indexing();
        for (kind, stays) in [(branch_kind, true), (PageKind::MAP, true), (leaf_kind, false)] {
            let pool = Pool::new(4096, 16).unwrap();
            let load = |kind| {
                move |bytes: &mut [u8]| {
                    set_header(bytes, kind, 1, TxnId(1));
                    Ok(())
                }
            };
            drop(pool.get(PhysId(1), load(kind)).unwrap());
            let mut kept = true;
            for leaf in 0..60u64 {
                if leaf % 10 == 0 {
                    kept &= pool.lookup(PhysId(1)).is_some();
                }
                drop(pool.get(PhysId(100 + leaf), load(leaf_kind)).unwrap());
            }
            assert_eq!(kept, stays, "{kind:?}");
        }
    }

    #[test]
    fn a_frame_is_pinned_untranslated_only_by_the_snapshots_seen_to_read_its_page() {
        // Proves the rule of `pin_seen`: a frame is pinned without a translation only by
        // the snapshots between those `saw` recorded, and forgets them whenever its page
        // changes: republished by the writer, or evicted and loaded again.
        let pool = Pool::new(4096, 16).unwrap();
        let (guard, index) = pool.get(PhysId(5), fill(1)).unwrap();
        drop(guard);
        assert!(pool.pin_seen(index, 10).is_none(), "no snapshot was seen yet");
        let guard = pool.lookup_frame(index, PhysId(5)).unwrap();
        pool.saw(index, &guard, 12);
        pool.saw(index, &guard, 10);
        drop(guard);
        for (snapshot, hit) in [(9, false), (10, true), (11, true), (12, true), (13, false)] {
            assert_eq!(pool.pin_seen(index, snapshot).is_some(), hit, "snapshot {snapshot}");
        }
        pool.invalidate(PhysId(5));
        assert!(pool.pin_seen(index, 11).is_none(), "an unlisted page is not pinned");
        let (again, guard) = pool.take_dirty(PhysId(5)).unwrap();
        assert_eq!(again, index, "the reallocated page's frame is recycled");
        pool.publish(guard, again);
        assert!(pool.pin_seen(index, 11).is_none(), "a republished page is new to every snapshot");
        let guard = pool.lookup_frame(index, PhysId(5)).unwrap();
        pool.saw(index, &guard, 11);
        drop(guard);
        for page in 100..140u64 {
            drop(pool.get(PhysId(page), fill(2)).unwrap());
        }
        assert!(pool.lookup_frame(index, PhysId(5)).is_none(), "the frame was given to another page");
        assert!(pool.pin_seen(index, 11).is_none(), "a frame given to another page is new to every snapshot");
    }

    #[test]
    fn a_page_just_published_is_seen_by_its_commits_snapshot_alone() {
        // Proves `saw_published`: the writer's word makes the commit's own snapshot pin
        // the frame untranslated, no older or newer one, and counts no hit; a frame that
        // holds another page by then is left alone.
        let pool = Pool::new(4096, 16).unwrap();
        let (index, guard) = pool.take_dirty(PhysId(5)).unwrap();
        pool.publish(guard, index);
        let hits = pool.stats().hits;
        pool.saw_published(index, PhysId(5), 20);
        assert_eq!(pool.stats().hits, hits, "the writer's mark is no read");
        for (snapshot, hit) in [(19, false), (20, true), (21, false)] {
            assert_eq!(pool.pin_seen(index, snapshot).is_some(), hit, "snapshot {snapshot}");
        }
        let (other, guard) = pool.take_dirty(PhysId(6)).unwrap();
        pool.publish(guard, other);
        pool.saw_published(other, PhysId(7), 20);
        assert!(pool.pin_seen(other, 20).is_none(), "the frame holds page 6, not 7");
    }

    // Bookkeeping per frame stays under 2% of an 8 KiB page.
    const _: () = assert!(FRAME_OVERHEAD_BYTES * 50 < 8192);
}
