//! A frame's listing: the physical page the page table lists the frame under, and
//! whether a reader has read the frame unpinned since ([`super::Pool::peek_seen`]).
//!
//! One atomic word, so that a reader marking the frame and the pool unlisting it are
//! ordered against each other without a lock: whichever comes second sees the other.
//! Unlisting keeps the mark, and only listing a new page clears it, so whoever takes
//! the frame afterwards knows whether it must wait out a grace period (`grace.rs`)
//! before giving it new bytes.
//!
//! ```text
//!   bit 63: read unpinned since listed   bit 62: unlisted   bits 0..62: physical page
//! ```

use std::sync::atomic::{AtomicU64, Ordering};

/// The mark of a frame read unpinned.
const PEEKED: u64 = 1 << 63;
/// A frame listed under no page.
const UNLISTED: u64 = 1 << 62;

/// See the module docs.
#[derive(Debug)]
pub struct Listing(AtomicU64);

/// A value of a [`Listing`], as loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Listed(u64);

impl Listed {
    /// Whether the frame is listed under no page.
    #[inline(always)]
    pub fn is_unlisted(self) -> bool {
        self.0 & UNLISTED != 0
    }

    /// Whether a reader has read the frame unpinned since its page was listed.
    #[inline(always)]
    pub fn peeked(self) -> bool {
        self.0 & PEEKED != 0
    }

    /// Whether the frame is listed under `phys`.
    #[inline(always)]
    pub fn is(self, phys: u64) -> bool {
        self.0 & !PEEKED == phys
    }
}

impl Listing {
    /// A frame listed under no page.
    pub const fn unlisted() -> Self {
        Listing(AtomicU64::new(UNLISTED))
    }

    /// The listing now. `SeqCst`: a reader about to read unpinned loads it so (its side
    /// of the pairing with a grace period, `grace.rs`); acquire for everyone else.
    #[inline(always)]
    pub fn load(&self) -> Listed {
        Listed(self.0.load(Ordering::SeqCst))
    }

    /// Lists the frame under `phys` (its new page, written before), unmarked.
    pub fn list(&self, phys: u64) {
        debug_assert!(phys & (PEEKED | UNLISTED) == 0, "physical page {phys} out of range");
        self.0.store(phys, Ordering::Release);
    }

    /// Unlists the frame if it is listed under `phys`, keeping its mark. `None` if it
    /// was not listed under `phys`.
    pub fn unlist(&self, phys: u64) -> Option<Listed> {
        self.0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| {
                Listed(v).is(phys).then_some((v & PEEKED) | UNLISTED)
            })
            .ok()
            .map(Listed)
    }

    /// Marks the frame read unpinned, if its listing is still `seen` (loaded by the
    /// caller, unmarked): `false` if the frame was unlisted or relisted meanwhile.
    #[inline]
    pub fn mark(&self, seen: Listed) -> bool {
        self.0.compare_exchange(seen.0, seen.0 | PEEKED, Ordering::SeqCst, Ordering::Relaxed).is_ok()
    }
}
