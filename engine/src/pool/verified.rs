//! [`Verified`]: the physical pages whose checksum was verified in the file's memory
//! map, so that a page served in place from the map (`txn/read.rs`) is checksummed
//! once, not at every read.
//!
//! A direct-mapped table of `phys + 1` tags: a collision forgets a page (it is
//! verified again, never trusted unverified). A physical page that is reallocated is
//! forgotten by [`Verified::forget`] before its new bytes are written (the pool's
//! `invalidate` calls it), so a verification never outlives the bytes it checked.

use std::sync::atomic::{AtomicU64, Ordering};

/// Fewest entries.
const MIN_ENTRIES: usize = 1 << 12;
/// Most entries (8 B each: 32 MiB).
const MAX_ENTRIES: usize = 1 << 22;

/// See the module docs.
#[derive(Debug)]
pub struct Verified {
    tags: Box<[AtomicU64]>,
    mask: u64,
}

impl Verified {
    /// A table with room for the pages of a pool of `frames` frames sixteen times over
    /// (the map serves pages beyond the pool), within bounds.
    pub fn new(frames: usize) -> Verified {
        let count = frames.saturating_mul(16).clamp(MIN_ENTRIES, MAX_ENTRIES).next_power_of_two();
        Verified { tags: (0..count).map(|_| AtomicU64::new(0)).collect(), mask: count as u64 - 1 }
    }

    fn entry(&self, phys: u64) -> &AtomicU64 {
        &self.tags[(phys & self.mask) as usize]
    }

    /// Whether `phys` was verified since it was last forgotten.
    #[inline]
    pub fn contains(&self, phys: u64) -> bool {
        self.entry(phys).load(Ordering::Acquire) == phys + 1
    }

    /// Records that `phys` passed its checksum.
    pub fn insert(&self, phys: u64) {
        self.entry(phys).store(phys + 1, Ordering::Release);
    }

    /// Forgets `phys` (its bytes are about to change).
    pub fn forget(&self, phys: u64) {
        let _ = self.entry(phys).compare_exchange(phys + 1, 0, Ordering::AcqRel, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_known_until_forgotten_or_displaced() {
        let verified = Verified::new(0);
        assert!(!verified.contains(7));
        verified.insert(7);
        assert!(verified.contains(7));
        verified.forget(8);
        assert!(verified.contains(7), "forgetting another page leaves it");
        verified.insert(7 + MIN_ENTRIES as u64);
        assert!(!verified.contains(7), "a colliding page displaces it: verified again");
        verified.insert(7);
        verified.forget(7);
        assert!(!verified.contains(7));
    }
}
