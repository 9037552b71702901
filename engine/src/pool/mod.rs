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
//! - *Free*: not in the page table, holds nothing.
//! - *Clean*: in the page table under its physical id; pinned by read guards.
//! - *Dirty*: owned by the single write transaction through its dirty map, never in the
//!   page table, never evicted; becomes Clean when written out.
//!
//! Locks: each frame has an `RwLock`; a pin *is* a read guard, so a pinned frame cannot
//! be evicted (eviction needs `try_write`). The page table is sharded; no thread waits
//! on a frame lock while holding a shard lock, and no lock is held across I/O except the
//! write lock of a frame nobody else can reach yet.
//!
//! Eviction is CLOCK, not the `lru` crate: a hit under CLOCK is one relaxed store of a
//! reference bit, while an LRU list must be reordered under a global mutex on every hit,
//! which serialises readers (measured in `benches/engine.rs`, `pool_hit_*`).
//!
//! Bookkeeping per frame: see [`FRAME_OVERHEAD_BYTES`] (< 1% of an 8 KiB page).

use crate::error::{Error, Result};
use crate::page::PhysId;
use crate::stats::Counters;
use parking_lot::{Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Sentinel physical id of a frame that holds nothing.
const NO_PAGE: u64 = u64::MAX;
/// Number of page-table shards (a power of two).
const SHARDS: usize = 64;

/// State of a frame, see the module diagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameState {
    /// Holds nothing.
    Free,
    /// Holds a committed (or spilled) page, listed in the page table.
    Clean,
    /// Holds a page of the running write transaction.
    Dirty,
}

/// The lock-protected part of a frame.
#[derive(Debug)]
pub struct FrameData {
    /// Physical page held, `NO_PAGE` when free.
    pub phys: u64,
    /// Life-cycle state.
    pub state: FrameState,
    /// The page bytes (header included).
    pub bytes: Box<[u8]>,
}

#[derive(Debug)]
struct Frame {
    data: RwLock<FrameData>,
    referenced: AtomicBool,
}

/// Bytes of bookkeeping per frame: the frame struct plus about two page-table slots.
pub const FRAME_OVERHEAD_BYTES: usize = size_of::<Frame>() + 2 * size_of::<(u64, u32)>();

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

type Table = HashMap<u64, u32, BuildHasherDefault<IdHasher>>;

/// A pinned frame for reading.
pub type ReadGuard<'a> = RwLockReadGuard<'a, FrameData>;
/// An exclusively locked frame.
pub type WriteGuard<'a> = RwLockWriteGuard<'a, FrameData>;

/// The buffer pool. See the module docs.
#[derive(Debug)]
pub struct Pool {
    page_size: usize,
    frames: Box<[Frame]>,
    table: Box<[Mutex<Table>]>,
    hand: AtomicUsize,
    /// Shared counters (hits, misses, …).
    pub counters: Counters,
}

fn shard_of(phys: u64) -> usize {
    (phys.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize % SHARDS
}

impl Pool {
    /// A pool of `frames` preallocated frames of `page_size` bytes.
    pub fn new(page_size: usize, frames: usize) -> Pool {
        assert!(frames >= 16, "a pool needs at least 16 frames (checked by Options::validate)");
        let frames = (0..frames)
            .map(|_| Frame {
                data: RwLock::new(FrameData {
                    phys: NO_PAGE,
                    state: FrameState::Free,
                    bytes: vec![0u8; page_size].into_boxed_slice(),
                }),
                referenced: AtomicBool::new(false),
            })
            .collect();
        let table = (0..SHARDS).map(|_| Mutex::new(Table::default())).collect();
        Pool { page_size, frames, table, hand: AtomicUsize::new(0), counters: Counters::default() }
    }

    /// Number of frames.
    pub fn frame_count(&self) -> usize {
        self.frames.len()
    }

    /// Page size of every frame.
    pub fn page_size(&self) -> usize {
        self.page_size
    }

    /// Pins the frame holding `phys` if it is cached.
    pub fn lookup(&self, phys: PhysId) -> Option<ReadGuard<'_>> {
        loop {
            let index = *self.table[shard_of(phys.0)].lock().get(&phys.0)?;
            let frame = &self.frames[index as usize];
            let guard = frame.data.read();
            if guard.phys == phys.0 && guard.state == FrameState::Clean {
                frame.referenced.store(true, Ordering::Relaxed);
                self.counters.hit();
                return Some(guard);
            }
            // The frame was evicted between the table probe and the pin: look again.
        }
    }

    /// Pins `phys`, loading it with `load` on a miss. `load` fills the frame bytes and
    /// verifies them; it runs with only the new frame's own lock held.
    pub fn get(&self, phys: PhysId, load: impl FnOnce(&mut [u8]) -> Result<()>) -> Result<ReadGuard<'_>> {
        if let Some(guard) = self.lookup(phys) {
            return Ok(guard);
        }
        self.counters.miss();
        let (index, mut guard) = self.take_frame()?;
        load(&mut guard.bytes)?;
        guard.phys = phys.0;
        guard.state = FrameState::Clean;
        self.table[shard_of(phys.0)].lock().insert(phys.0, index);
        self.frames[index as usize].referenced.store(true, Ordering::Relaxed);
        Ok(RwLockWriteGuard::downgrade(guard))
    }

    /// Takes a frame for a dirty page of the write transaction.
    pub fn take_dirty(&self, phys: PhysId) -> Result<(u32, WriteGuard<'_>)> {
        let (index, mut guard) = self.take_frame()?;
        guard.phys = phys.0;
        guard.state = FrameState::Dirty;
        Ok((index, guard))
    }

    /// Locks a dirty frame owned by the write transaction.
    pub fn dirty_mut(&self, index: u32, phys: PhysId) -> Option<WriteGuard<'_>> {
        let guard = self.frames[index as usize].data.try_write()?;
        assert!(guard.phys == phys.0 && guard.state == FrameState::Dirty, "dirty map names frame {index} for {phys}");
        Some(guard)
    }

    /// Pins a dirty frame for reading (the writer reading its own page).
    pub fn dirty_ref(&self, index: u32, phys: PhysId) -> Option<ReadGuard<'_>> {
        let guard = self.frames[index as usize].data.try_read()?;
        assert!(guard.phys == phys.0 && guard.state == FrameState::Dirty, "dirty map names frame {index} for {phys}");
        Some(guard)
    }

    /// Turns a written dirty frame into a clean, shared one.
    pub fn publish(&self, mut guard: WriteGuard<'_>, index: u32) {
        assert_eq!(guard.state, FrameState::Dirty, "only dirty frames are published");
        guard.state = FrameState::Clean;
        self.table[shard_of(guard.phys)].lock().insert(guard.phys, index);
    }

    /// Drops a dirty frame of an aborted transaction.
    pub fn discard(&self, mut guard: WriteGuard<'_>) {
        guard.phys = NO_PAGE;
        guard.state = FrameState::Free;
    }

    /// Forgets any cached copy of `phys` (called when a physical page is reallocated).
    pub fn invalidate(&self, phys: PhysId) {
        self.table[shard_of(phys.0)].lock().remove(&phys.0);
    }

    /// Finds a frame to reuse with CLOCK: skip pinned and dirty frames, give
    /// referenced ones a second chance.
    fn take_frame(&self) -> Result<(u32, WriteGuard<'_>)> {
        let count = self.frames.len();
        for _ in 0..3 * count {
            let index = self.hand.fetch_add(1, Ordering::Relaxed) % count;
            let frame = &self.frames[index];
            if frame.referenced.swap(false, Ordering::Relaxed) {
                continue;
            }
            let Some(mut guard) = frame.data.try_write() else { continue };
            match guard.state {
                FrameState::Dirty => continue,
                FrameState::Free => {}
                FrameState::Clean => {
                    let mut shard = self.table[shard_of(guard.phys)].lock();
                    if shard.get(&guard.phys) == Some(&(index as u32)) {
                        shard.remove(&guard.phys);
                    }
                    drop(shard);
                    self.counters.eviction();
                    guard.phys = NO_PAGE;
                    guard.state = FrameState::Free;
                }
            }
            return Ok((index as u32, guard));
        }
        Err(Error::PoolExhausted { frames: count })
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
    fn hit_after_miss_and_eviction_when_full() {
        let pool = Pool::new(4096, 16);
        for page in 0..40u64 {
            let guard = pool.get(PhysId(page), fill(page as u8)).unwrap();
            assert_eq!(guard.bytes[0], page as u8);
        }
        let guard = pool.get(PhysId(39), fill(0)).unwrap();
        assert_eq!(guard.bytes[0], 39, "recent page is cached");
        let stats = pool.counters.snapshot();
        assert_eq!(stats.misses, 40);
        assert!(stats.evictions >= 24);
    }

    #[test]
    fn pinned_frames_are_not_evicted_and_exhaustion_is_an_error() {
        let pool = Pool::new(4096, 16);
        let pins: Vec<_> = (0..16u64).map(|page| pool.get(PhysId(page), fill(1)).unwrap()).collect();
        assert!(matches!(pool.get(PhysId(99), fill(2)), Err(Error::PoolExhausted { .. })));
        drop(pins);
        assert!(pool.get(PhysId(99), fill(2)).is_ok());
    }

    #[test]
    fn dirty_frames_are_invisible_until_published() {
        let pool = Pool::new(4096, 16);
        let (index, mut guard) = pool.take_dirty(PhysId(5)).unwrap();
        guard.bytes[0] = 7;
        drop(guard);
        assert!(pool.lookup(PhysId(5)).is_none());
        let guard = pool.dirty_mut(index, PhysId(5)).unwrap();
        pool.publish(guard, index);
        assert_eq!(pool.lookup(PhysId(5)).unwrap().bytes[0], 7);
    }

    // Bookkeeping per frame stays under 2% of an 8 KiB page.
    const _: () = assert!(FRAME_OVERHEAD_BYTES * 50 < 8192);
}
