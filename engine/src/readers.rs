//! How a reader starts without a lock: the newest committed snapshot is published in
//! two alternating seqlocked copies ([`Published`]) and a reader announces the snapshot it reads in a slot of
//! [`Readers`] with one compare-and-swap, so `begin_read` and dropping a reader never
//! wait for the writer, a commit, or other readers (a reader preempted at any point
//! holds nothing others need).
//!
//! ```text
//! reader:  meta = published.load()   slot := meta.txn   published.txn() == meta.txn ?
//!                                                         yes: read   no: release, retry
//! writer:  commit: published.store(meta)  ...  next writer: oldest = min(slots)
//! ```
//!
//! (With group commit the store comes once the commit is durable, from whichever thread
//! landed its append: `core.rs`, `Shared`. Every store is made under the `shared` lock,
//! so there is one storer at a time.)
//!
//! Why the check after announcing is enough (all four steps SeqCst): pages freed by
//! commit C are reused only when no announced reader is older than C. If the writer's
//! scan missed a reader's slot, the scan came before the announcement in the total
//! order, so did every commit published before the scan, and the reader's check then
//! sees a newer commit than the one it loaded and retries. A reader of the snapshot
//! that is still the newest needs no such care: nothing it sees has been freed.
//!
//! More concurrent readers than slots go to a locked overflow list (correct, slower).

use crate::meta::{Durability, Meta};
use crate::page::{PageId, PhysId, TxnId};
use parking_lot::Mutex;
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering, fence};

/// Reader slots (each on its own cache line); a power of two.
pub const READER_SLOTS: usize = 128;
const _: () = assert!(READER_SLOTS.is_power_of_two());
/// Words of an encoded [`Meta`].
const META_WORDS: usize = 12;
/// A free slot.
const FREE: u64 = 0;

/// One copy of a meta under its own sequence number (odd while being written).
#[derive(Debug, Default)]
struct MetaCopy {
    seq: AtomicU64,
    words: [AtomicU64; META_WORDS],
}

/// The newest committed meta, readable without a lock (one writer stores it). Two
/// copies alternate: the writer fills the one readers are not directed to and then
/// directs them to it, so a writer preempted halfway never holds a reader up.
#[derive(Debug)]
pub struct Published {
    copies: [MetaCopy; 2],
    /// Stores so far; the newest meta is in copy `stores % 2`.
    stores: AtomicU64,
    /// The published commit id, stored last (the readers' check).
    txn: AtomicU64,
}

impl Published {
    pub fn new(meta: &Meta) -> Self {
        let published = Published { copies: Default::default(), stores: AtomicU64::new(0), txn: AtomicU64::new(0) };
        published.store(meta);
        published
    }

    /// Publishes `meta`. Callers serialise (the writer holds the shared lock).
    pub fn store(&self, meta: &Meta) {
        let next = self.stores.load(Ordering::Relaxed) + 1;
        let copy = &self.copies[(next % 2) as usize];
        let seq = copy.seq.load(Ordering::Relaxed);
        copy.seq.store(seq + 1, Ordering::Relaxed);
        fence(Ordering::Release);
        for (word, value) in copy.words.iter().zip(encode(meta)) {
            word.store(value, Ordering::Relaxed);
        }
        copy.seq.store(seq + 2, Ordering::Release);
        self.stores.store(next, Ordering::Release);
        self.txn.store(meta.txn.0, Ordering::SeqCst);
    }

    /// A consistent copy of the published meta (or of a newer one).
    pub fn load(&self) -> Meta {
        loop {
            let copy = &self.copies[(self.stores.load(Ordering::Acquire) % 2) as usize];
            let seq = copy.seq.load(Ordering::Acquire);
            if seq & 1 == 0 {
                let words: [u64; META_WORDS] = std::array::from_fn(|i| copy.words[i].load(Ordering::Relaxed));
                fence(Ordering::Acquire);
                if copy.seq.load(Ordering::Relaxed) == seq {
                    return decode(&words);
                }
            }
            // Two commits went by and the writer is refilling this copy: look again.
        }
    }

    /// The published commit id (the check after announcing a reader).
    pub fn txn(&self) -> TxnId {
        TxnId(self.txn.load(Ordering::SeqCst))
    }
}

fn encode(meta: &Meta) -> [u64; META_WORDS] {
    let small = u64::from(meta.page_size) | u64::from(meta.map_depth) << 32 | u64::from(meta.durability.code()) << 56;
    [
        small,
        meta.txn.0,
        meta.map_root.0,
        meta.page_count,
        meta.logical_next,
        meta.record_head.0,
        meta.catalog_root.0,
        meta.live_pages,
        meta.last_synced.0,
        u64::from(meta.record_crc) | u64::from(meta.record_len) << 32,
        meta.log_start,
        meta.log_pages,
    ]
}

fn decode(w: &[u64; META_WORDS]) -> Meta {
    Meta {
        page_size: w[0] as u32,
        map_depth: (w[0] >> 32) as u32 & 0xFF_FFFF,
        durability: Durability::from_code((w[0] >> 56) as u8).expect("published durability is valid"),
        txn: TxnId(w[1]),
        map_root: PhysId(w[2]),
        page_count: w[3],
        logical_next: w[4],
        record_head: PhysId(w[5]),
        catalog_root: PageId(w[6]),
        live_pages: w[7],
        last_synced: TxnId(w[8]),
        record_crc: w[9] as u32,
        record_len: (w[9] >> 32) as u32,
        log_start: w[10],
        log_pages: w[11],
    }
}

/// Where a reader is announced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Announcement {
    Slot(usize),
    Overflow,
}

#[derive(Debug, Default)]
#[repr(align(64))]
struct Slot(AtomicU64);

/// The live readers: the snapshot each one reads.
#[derive(Debug)]
pub struct Readers {
    slots: Box<[Slot]>,
    overflow: Mutex<Vec<(TxnId, u32)>>,
}

impl Default for Readers {
    fn default() -> Self {
        Readers { slots: (0..READER_SLOTS).map(|_| Slot::default()).collect(), overflow: Mutex::default() }
    }
}

thread_local! {
    /// The slot this thread took last: usually free again, and on a line it owns.
    static HINT: Cell<usize> = const { Cell::new(0) };
}

impl Readers {
    /// Announces a reader of `txn`. The slot this thread took last is tried inline (it
    /// is usually free again); the search of the others and the overflow list are out
    /// of line, so that the common case saves no registers.
    #[inline]
    pub fn announce(&self, txn: TxnId) -> Announcement {
        let start = HINT.get() & (READER_SLOTS - 1);
        if let Some(slot) = self.slots.get(start)
            && slot.0.load(Ordering::Relaxed) == FREE
            && slot.0.compare_exchange(FREE, txn.0 + 1, Ordering::SeqCst, Ordering::Relaxed).is_ok()
        {
            return Announcement::Slot(start);
        }
        self.announce_elsewhere(txn, start)
    }

    /// [`Readers::announce`] when the hinted slot `start` was taken: the other slots in
    /// turn, then the overflow list.
    #[cold]
    #[inline(never)]
    fn announce_elsewhere(&self, txn: TxnId, start: usize) -> Announcement {
        for step in 1..READER_SLOTS {
            let at = (start + step) & (READER_SLOTS - 1);
            let slot = &self.slots[at].0;
            if slot.load(Ordering::Relaxed) == FREE
                && slot.compare_exchange(FREE, txn.0 + 1, Ordering::SeqCst, Ordering::Relaxed).is_ok()
            {
                HINT.set(at);
                return Announcement::Slot(at);
            }
        }
        let mut overflow = self.overflow.lock();
        match overflow.iter_mut().find(|(held, _)| *held == txn) {
            Some((_, count)) => *count += 1,
            None => overflow.push((txn, 1)),
        }
        fence(Ordering::SeqCst);
        Announcement::Overflow
    }

    /// Withdraws a reader announced as `at` for `txn`.
    #[inline]
    pub fn withdraw(&self, at: Announcement, txn: TxnId) {
        match at {
            Announcement::Slot(at) => self.slots[at].0.store(FREE, Ordering::Release),
            Announcement::Overflow => self.withdraw_overflow(txn),
        }
    }

    /// [`Readers::withdraw`] of a reader in the overflow list.
    #[cold]
    #[inline(never)]
    fn withdraw_overflow(&self, txn: TxnId) {
        let mut overflow = self.overflow.lock();
        let i = overflow.iter().position(|(held, _)| *held == txn).expect("reader was announced");
        overflow[i].1 -= 1;
        if overflow[i].1 == 0 {
            overflow.swap_remove(i);
        }
    }

    /// The snapshot of the oldest live reader.
    pub fn oldest(&self) -> Option<TxnId> {
        let slots = self.slots.iter().map(|slot| slot.0.load(Ordering::SeqCst)).filter(|&v| v != FREE);
        let slotted = slots.map(|v| TxnId(v - 1)).min();
        let overflowed = self.overflow.lock().iter().map(|(txn, _)| *txn).min();
        slotted.into_iter().chain(overflowed).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_published_meta_reads_back_field_for_field() {
        // Proves the word encoding keeps every field, including the widest values.
        let mut meta = Meta::empty(65536);
        meta.txn = TxnId(u64::MAX - 1);
        meta.map_root = PhysId(7);
        meta.map_depth = 5;
        meta.durability = Durability::None;
        meta.page_count = 1 << 40;
        meta.logical_next = 3;
        meta.record_head = PhysId(9);
        meta.catalog_root = PageId(11);
        meta.live_pages = 13;
        meta.last_synced = TxnId(17);
        meta.record_crc = u32::MAX - 3;
        meta.record_len = u32::MAX - 5;
        let published = Published::new(&Meta::empty(4096));
        for txn in [1, 2, 3] {
            // Both copies in turn.
            let meta = Meta { txn: TxnId(meta.txn.0 - txn), ..meta };
            published.store(&meta);
            assert_eq!(published.load(), meta);
            assert_eq!(published.txn(), meta.txn);
        }
    }

    #[test]
    fn oldest_covers_slots_and_overflow() {
        // Proves announcements beyond the slots go to the overflow list, that the
        // oldest reader is found in either place, and that withdrawing frees both.
        let readers = Readers::default();
        let mut held: Vec<(Announcement, TxnId)> =
            (0..READER_SLOTS as u64 + 3).map(|i| (readers.announce(TxnId(100 + i)), TxnId(100 + i))).collect();
        assert_eq!(held.iter().filter(|(at, _)| *at == Announcement::Overflow).count(), 3);
        assert_eq!(readers.oldest(), Some(TxnId(100)));
        held.push((readers.announce(TxnId(5)), TxnId(5)));
        assert_eq!(held.last().unwrap().0, Announcement::Overflow);
        assert_eq!(readers.oldest(), Some(TxnId(5)));
        for (at, txn) in held.drain(..) {
            readers.withdraw(at, txn);
        }
        assert_eq!(readers.oldest(), None);
        assert!(matches!(readers.announce(TxnId(1)), Announcement::Slot(_)));
    }
}
