//! The pool's page table: physical page id → frame index, an open-addressing hash
//! table that readers probe without taking any lock.
//!
//! Each slot is one `AtomicU64`: `0` empty, `u64::MAX` a tombstone, otherwise
//! `(phys + 1) << FRAME_BITS | frame`. Readers load slots with `Acquire` and stop at the
//! first empty slot. Inserts and removals take the table's mutex (they happen on pool
//! misses and evictions, which do I/O anyway). When live entries and tombstones fill
//! three quarters of the slots, the table is rebuilt in place; a reader probing during
//! a rebuild may miss an entry — a *false miss*, which only makes the pool load the
//! page again (committed pages are immutable, so a second copy is harmless) — but it
//! never finds a wrong frame, because the caller re-checks the frame's own page id
//! after pinning it.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bits of a slot holding the frame index.
pub const FRAME_BITS: u32 = 24;
/// Largest number of frames a pool can have.
pub const MAX_FRAMES: usize = 1 << FRAME_BITS;
const EMPTY: u64 = 0;
const TOMBSTONE: u64 = u64::MAX;
const FRAME_MASK: u64 = (1 << FRAME_BITS) - 1;

#[derive(Debug, Default)]
struct Counts {
    live: usize,
    tombstones: usize,
}

/// See the module docs.
#[derive(Debug)]
pub struct Table {
    slots: Box<[AtomicU64]>,
    mask: usize,
    counts: Mutex<Counts>,
}

fn hash(phys: u64) -> usize {
    (phys.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20) as usize
}

fn key(phys: u64) -> u64 {
    phys + 1
}

impl Table {
    /// A table for a pool of `frames` frames (4 slots per frame, a power of two).
    pub fn new(frames: usize) -> Table {
        assert!(frames <= MAX_FRAMES, "pool of {frames} frames exceeds {MAX_FRAMES} (checked by Options)");
        let size = (frames * 4).next_power_of_two().max(64);
        Table { slots: (0..size).map(|_| AtomicU64::new(EMPTY)).collect(), mask: size - 1, counts: Mutex::default() }
    }

    /// Frame holding `phys`, if the table lists one. Lock-free.
    #[inline]
    pub fn get(&self, phys: u64) -> Option<u32> {
        let wanted = key(phys);
        let mut at = hash(phys) & self.mask;
        loop {
            let slot = self.slots[at].load(Ordering::Acquire);
            if slot == EMPTY {
                return None;
            }
            if slot != TOMBSTONE && slot >> FRAME_BITS == wanted {
                return Some((slot & FRAME_MASK) as u32);
            }
            at = (at + 1) & self.mask;
        }
    }

    /// Lists `phys` in `frame`, replacing an older listing; returns the frame that
    /// listing named, if any.
    pub fn insert(&self, phys: u64, frame: u32) -> Option<u32> {
        let mut counts = self.counts.lock();
        let entry = key(phys) << FRAME_BITS | u64::from(frame);
        let mut free_slot = None;
        let mut at = hash(phys) & self.mask;
        loop {
            let slot = self.slots[at].load(Ordering::Relaxed);
            if slot == EMPTY {
                break;
            }
            if slot == TOMBSTONE {
                free_slot = free_slot.or(Some(at));
            } else if slot >> FRAME_BITS == key(phys) {
                self.slots[at].store(entry, Ordering::Release);
                return Some((slot & FRAME_MASK) as u32);
            }
            at = (at + 1) & self.mask;
        }
        match free_slot {
            Some(tomb) => {
                counts.tombstones -= 1;
                self.slots[tomb].store(entry, Ordering::Release);
            }
            None => self.slots[at].store(entry, Ordering::Release),
        }
        counts.live += 1;
        if (counts.live + counts.tombstones) * 4 > self.slots.len() * 3 {
            self.rebuild(&mut counts);
        }
        None
    }

    /// Removes the listing of `phys`, only if it names `frame` when one is given;
    /// returns the frame it named. Never a false miss (it holds the table's lock).
    pub fn remove(&self, phys: u64, frame: Option<u32>) -> Option<u32> {
        let mut counts = self.counts.lock();
        let mut at = hash(phys) & self.mask;
        loop {
            let slot = self.slots[at].load(Ordering::Relaxed);
            if slot == EMPTY {
                return None;
            }
            if slot != TOMBSTONE && slot >> FRAME_BITS == key(phys) {
                let listed = (slot & FRAME_MASK) as u32;
                if frame.is_some_and(|frame| frame != listed) {
                    return None;
                }
                self.slots[at].store(TOMBSTONE, Ordering::Release);
                counts.live -= 1;
                counts.tombstones += 1;
                return Some(listed);
            }
            at = (at + 1) & self.mask;
        }
    }

    /// Re-inserts every live entry into a cleared table (tombstones vanish).
    fn rebuild(&self, counts: &mut Counts) {
        let live: Vec<u64> = self
            .slots
            .iter()
            .map(|slot| slot.load(Ordering::Relaxed))
            .filter(|&slot| slot != EMPTY && slot != TOMBSTONE)
            .collect();
        for slot in self.slots.iter() {
            slot.store(EMPTY, Ordering::Release);
        }
        for entry in &live {
            let mut at = hash((entry >> FRAME_BITS) - 1) & self.mask;
            while self.slots[at].load(Ordering::Relaxed) != EMPTY {
                at = (at + 1) & self.mask;
            }
            self.slots[at].store(*entry, Ordering::Release);
        }
        *counts = Counts { live: live.len(), tombstones: 0 };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn matches_a_hash_map_through_churn_and_rebuilds() {
        // Proves: get/insert/remove agree with std's HashMap over many tombstones.
        let table = Table::new(16);
        let mut model = HashMap::new();
        let mut state = 12345u64;
        for step in 0..20_000u64 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let phys = state % 40;
            if state.is_multiple_of(3) {
                table.remove(phys, None);
                model.remove(&phys);
            } else if model.len() < 48 || model.contains_key(&phys) {
                table.insert(phys, (step % 1000) as u32);
                model.insert(phys, (step % 1000) as u32);
            }
            for probe in 0..40 {
                assert_eq!(table.get(probe), model.get(&probe).copied(), "step {step}, page {probe}");
            }
        }
    }

    #[test]
    fn remove_with_a_stale_frame_keeps_the_newer_listing() {
        let table = Table::new(16);
        table.insert(7, 1);
        table.insert(7, 2);
        table.remove(7, Some(1));
        assert_eq!(table.get(7), Some(2));
        table.remove(7, Some(2));
        assert_eq!(table.get(7), None);
    }
}
