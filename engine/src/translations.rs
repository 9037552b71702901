//! [`Translations`]: a database-wide, lock-free cache of logical → physical page
//! translations shared by every transaction.
//!
//! Without it each fresh snapshot walks the radix page map for every page it touches
//! (one pool probe per map level before the page itself). With it a page read costs
//! one slot read and one pool probe, for every reader, from its first query on. A
//! page whose frame a reader of the same snapshot already found costs no slot read at
//! all: the frame records the snapshots seen to read it (`Pool::pin_seen`), and the
//! frame hint below leads to it.
//!
//! A slot holds one translation `logical → phys`, valid *from* transaction `from` on
//! (until a commit remaps that logical id), and `last_remap`: the newest commit that
//! remapped any logical id falling into this slot. The rules that keep it right:
//! - a commit, before it publishes its snapshot, stamps every slot it remapped an id
//!   of: the slot then holds the last id the commit remapped into it, with its new
//!   page (or nothing, if unmapped), valid from the commit on, and `last_remap` is set
//!   to the commit's transaction id;
//! - a reader of snapshot `S` uses a translation only if `from ≤ S`;
//! - a reader of snapshot `S` fills a slot after walking the map only if
//!   `last_remap ≤ S` at that moment (no newer commit touched the slot), with
//!   `from = S`: from `S` on the translation holds until a commit remaps the id, and
//!   that commit stamps the slot.
//!
//! Beside the slots, a dense array of *frame hints* (4 bytes per entry, several entries
//! per slot) remembers which pool frame last held each logical id's page. A hint is only
//! an address to prefetch and to try first: the pool checks the frame's own page id
//! under its lock, so a stale or colliding hint costs a miss, never a wrong page. Read
//! before the slot, it lets the page's first lines and its frame's lock travel from
//! memory at the same time as the slot (16 hints share a cache line, so the hints of a
//! tree's hot pages stay in the CPU's caches where the slots may not).
//!
//! Each slot is a sequence lock over plain atomics: writers (fills and stamps) take it
//! with a compare-and-swap and never wait (a busy slot is skipped, except by a commit,
//! which spins for the few instructions a fill takes); readers never wait either and
//! treat a torn read as a miss.

use crate::page::{PageId, PhysId, TxnId};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};

/// Fewest slots in a table.
const MIN_SLOTS: usize = 1 << 10;
/// Most slots in a table (64 B each: 64 MiB).
const MAX_SLOTS: usize = 1 << 20;

/// One cache line: sequence, translation, validity and the slot's last remap.
#[derive(Default)]
#[repr(align(64))]
struct Slot {
    /// Even when stable, odd while a writer holds the slot.
    seq: AtomicU64,
    logical: AtomicU64,
    phys: AtomicU64,
    from: AtomicU64,
    last_remap: AtomicU64,
}

/// Frame hints per translation slot.
const HINTS_PER_SLOT: usize = 4;

/// The shared translation cache of one open database.
pub struct Translations {
    slots: Box<[Slot]>,
    mask: u64,
    /// 1 + the pool frame that last held a logical id's page, 0 if unknown; indexed by
    /// `logical & hint_mask` (see the module docs).
    hints: Box<[AtomicU32]>,
    hint_mask: u64,
}

impl Translations {
    /// A table sized for a buffer pool of `frames` frames (twice as many slots, within
    /// bounds, a power of two).
    pub fn new(frames: usize) -> Self {
        let count = frames.saturating_mul(2).clamp(MIN_SLOTS, MAX_SLOTS).next_power_of_two();
        let hints = count * HINTS_PER_SLOT;
        Translations {
            slots: (0..count).map(|_| Slot::default()).collect(),
            mask: count as u64 - 1,
            hints: (0..hints).map(|_| AtomicU32::new(0)).collect(),
            hint_mask: hints as u64 - 1,
        }
    }

    /// Number of slots (a power of two).
    #[cfg(test)]
    pub fn slot_count(&self) -> usize {
        self.slots.len()
    }

    /// The slot index `logical` falls into.
    pub fn slot_of(&self, logical: u64) -> usize {
        (logical & self.mask) as usize
    }

    /// The physical page of `id` as seen by snapshot `snapshot`, if remembered.
    #[inline]
    pub fn get(&self, id: PageId, snapshot: TxnId) -> Option<PhysId> {
        let (logical, snapshot) = (id.0, snapshot.0);
        let slot = &self.slots[self.slot_of(logical)];
        let seq = slot.seq.load(Ordering::Acquire);
        if seq & 1 == 1 {
            return None;
        }
        let (held, phys, from) = (
            slot.logical.load(Ordering::Relaxed),
            slot.phys.load(Ordering::Relaxed),
            slot.from.load(Ordering::Relaxed),
        );
        fence(Ordering::Acquire);
        if slot.seq.load(Ordering::Relaxed) != seq {
            return None;
        }
        (held == logical && phys != 0 && from <= snapshot).then_some(PhysId(phys))
    }

    /// The pool frame that last held `id`'s page, if remembered: a hint (see the
    /// module docs).
    #[inline]
    pub fn frame_hint(&self, id: PageId) -> Option<u32> {
        self.hints[(id.0 & self.hint_mask) as usize].load(Ordering::Relaxed).checked_sub(1)
    }

    /// Remembers that pool frame `frame` holds `id`'s page (a hint).
    #[inline]
    pub fn remember_frame(&self, id: PageId, frame: u32) {
        let hint = &self.hints[(id.0 & self.hint_mask) as usize];
        let value = frame.saturating_add(1);
        if hint.load(Ordering::Relaxed) != value {
            hint.store(value, Ordering::Relaxed);
        }
    }

    /// Remembers `id → phys`, found by walking the map of snapshot `snapshot`,
    /// unless a newer commit touched the slot or another writer holds it.
    pub fn fill(&self, id: PageId, phys: PhysId, snapshot: TxnId) {
        let (logical, phys, snapshot) = (id.0, phys.0, snapshot.0);
        let slot = &self.slots[self.slot_of(logical)];
        let Some(seq) = Self::try_lock(slot) else { return };
        if slot.last_remap.load(Ordering::Relaxed) <= snapshot {
            slot.logical.store(logical, Ordering::Relaxed);
            slot.phys.store(phys, Ordering::Relaxed);
            slot.from.store(snapshot, Ordering::Relaxed);
        }
        slot.seq.store(seq + 2, Ordering::Release);
    }

    /// Records that commit `txn` remapped ids falling into slot `index`, `remapped`
    /// being the last of them and its new physical page (0 = unmapped): the slot then
    /// holds that translation, valid from `txn` on (a later commit that remaps the id
    /// stamps the slot again before it publishes), and refuses fills from older
    /// snapshots. Called for every remapped slot before `txn` is published, so the
    /// readers of `txn` find the commit's pages without walking the map.
    pub fn stamp(&self, index: usize, txn: TxnId, remapped: (u64, u64)) {
        let slot = &self.slots[index];
        let seq = loop {
            if let Some(seq) = Self::try_lock(slot) {
                break seq;
            }
            std::hint::spin_loop();
        };
        let (logical, phys) = if remapped.1 == 0 { (0, 0) } else { remapped };
        // mutant: the snapshot before the commit is shown the commit's translation
        let from = if cfg!(quire_mutant = "stamp_early") { txn.0 - 1 } else { txn.0 };
        slot.logical.store(logical, Ordering::Relaxed);
        slot.phys.store(phys, Ordering::Relaxed);
        slot.from.store(if phys == 0 { u64::MAX } else { from }, Ordering::Relaxed);
        slot.last_remap.store(txn.0, Ordering::Relaxed);
        slot.seq.store(seq + 2, Ordering::Release);
    }

    /// Takes the slot's sequence lock; returns the even sequence it held.
    fn try_lock(slot: &Slot) -> Option<u64> {
        let seq = slot.seq.load(Ordering::Relaxed);
        if seq & 1 == 1 {
            return None;
        }
        slot.seq.compare_exchange(seq, seq + 1, Ordering::Acquire, Ordering::Relaxed).ok()?;
        fence(Ordering::Release);
        Some(seq)
    }
}

impl std::fmt::Debug for Translations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Translations").field("slots", &self.slots.len()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_translation_is_seen_only_by_snapshots_after_its_fill() {
        let table = Translations::new(0);
        assert_eq!(table.slot_count(), MIN_SLOTS);
        table.fill(PageId(7), PhysId(100), TxnId(5));
        assert_eq!(table.get(PageId(7), TxnId(5)), Some(PhysId(100)));
        assert_eq!(table.get(PageId(7), TxnId(9)), Some(PhysId(100)));
        assert_eq!(table.get(PageId(7), TxnId(4)), None, "an older snapshot may map 7 elsewhere");
        assert_eq!(table.get(PageId(8), TxnId(9)), None);
    }

    #[test]
    fn a_stamp_clears_and_refuses_older_fills() {
        let table = Translations::new(0);
        table.fill(PageId(7), PhysId(100), TxnId(5));
        table.stamp(table.slot_of(7), TxnId(6), (7, 0));
        assert_eq!(table.get(PageId(7), TxnId(6)), None, "7 unmapped by commit 6");
        table.fill(PageId(7), PhysId(100), TxnId(5)); // a reader of snapshot 5 walked the map before commit 6
        assert_eq!(table.get(PageId(7), TxnId(6)), None, "the stale fill was refused");
        table.fill(PageId(7), PhysId(200), TxnId(6));
        assert_eq!(table.get(PageId(7), TxnId(6)), Some(PhysId(200)));
        let other = 7 + MIN_SLOTS as u64;
        table.fill(PageId(other), PhysId(300), TxnId(6));
        assert_eq!(table.get(PageId(other), TxnId(7)), Some(PhysId(300)));
        assert_eq!(table.get(PageId(7), TxnId(7)), None, "direct-mapped: the other id took the slot");
    }

    #[test]
    fn a_stamp_shows_the_commits_translation_to_its_snapshot_and_later_ones_only() {
        // Proves: the commit that remapped 7 to 300 leaves that translation for its own
        // and later snapshots (no map walk for its readers), never for older ones, which
        // must walk their own map; their fills are refused; a later stamp replaces it.
        let table = Translations::new(0);
        table.fill(PageId(7), PhysId(100), TxnId(5));
        table.stamp(table.slot_of(7), TxnId(6), (7, 300));
        assert_eq!(table.get(PageId(7), TxnId(5)), None, "snapshot 5 maps 7 to 100, not 300");
        assert_eq!(table.get(PageId(7), TxnId(6)), Some(PhysId(300)));
        assert_eq!(table.get(PageId(7), TxnId(9)), Some(PhysId(300)));
        table.fill(PageId(7), PhysId(100), TxnId(5));
        assert_eq!(table.get(PageId(7), TxnId(6)), Some(PhysId(300)), "the older fill was refused");
        let other = 7 + MIN_SLOTS as u64;
        table.stamp(table.slot_of(7), TxnId(7), (other, 400));
        assert_eq!(table.get(PageId(7), TxnId(7)), None, "the slot holds the other id now");
        assert_eq!(table.get(PageId(other), TxnId(7)), Some(PhysId(400)));
        assert_eq!(table.get(PageId(other), TxnId(6)), None);
    }

    #[test]
    fn a_frame_hint_is_kept_apart_from_translations() {
        // Proves: a hint comes back for its id until another id of its entry or a newer
        // frame replaces it; fills and stamps, which decide what a snapshot may read,
        // leave hints alone (the pool validates a hinted frame by its own page id).
        let table = Translations::new(0);
        assert_eq!(table.frame_hint(PageId(7)), None);
        table.remember_frame(PageId(7), 42);
        assert_eq!(table.frame_hint(PageId(7)), Some(42));
        table.fill(PageId(7), PhysId(100), TxnId(5));
        table.stamp(table.slot_of(7), TxnId(8), (7, 0));
        assert_eq!(table.frame_hint(PageId(7)), Some(42));
        table.remember_frame(PageId(7 + MIN_SLOTS as u64), 43);
        assert_eq!(table.frame_hint(PageId(7)), Some(42), "hints are denser than slots");
        let alias = 7 + (MIN_SLOTS * HINTS_PER_SLOT) as u64;
        table.remember_frame(PageId(alias), 9);
        assert_eq!(table.frame_hint(PageId(7)), Some(9), "an alias replaces the hint");
        table.remember_frame(PageId(7), 0);
        assert_eq!(table.frame_hint(PageId(7)), Some(0));
    }

    #[test]
    fn concurrent_fills_and_stamps_never_tear() {
        let table = Translations::new(0);
        let ids = |round: u64| 1 + (round % 3) * MIN_SLOTS as u64;
        std::thread::scope(|scope| {
            for _ in 0..2 {
                scope.spawn(|| {
                    for round in 0..50_000u64 {
                        table.fill(PageId(ids(round)), PhysId(ids(round) * 10), TxnId(1));
                        if let Some(phys) = table.get(PageId(ids(round + 1)), TxnId(1)) {
                            assert_eq!(phys, PhysId(ids(round + 1) * 10), "a translation is never torn");
                        }
                    }
                });
            }
            scope.spawn(|| {
                for round in 0..5_000u64 {
                    table.stamp(table.slot_of(1), TxnId(1 + round % 2), (0, 0));
                }
            });
        });
    }
}
