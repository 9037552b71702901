//! What a frame knows of the snapshots that read its page, so that their next reads of
//! it skip the translation: the seen snapshots (`seen_from..seen_until`, set by
//! [`Pool::saw`] after a translated read, emptied whenever the frame's page changes),
//! the pin they allow ([`Pool::pin_seen`]) and the unpinned read of a page that indexes
//! others ([`Pool::peek_seen`], `grace.rs`).

use super::{Frame, FrameState, MOST_CHANCES, Phase, Pool, ReadGuard, WriteGuard};
use crate::page::PhysId;
use std::sync::atomic::Ordering;

impl Pool {
    /// Empties the seen snapshots of `frame`, whose page `_locked` (its write lock) has
    /// just changed: no snapshot is known to read the new page yet. Every page a frame
    /// is listed with comes through here ([`Pool::get`], [`Pool::publish`]).
    pub(super) fn forget_seen(frame: &Frame, _locked: &WriteGuard<'_>) {
        // mutant: a frame keeps the seen snapshots of the page it held before
        if cfg!(quire_mutant = "seen_kept") {
            return;
        }
        frame.seen_from.store(u64::MAX, Ordering::Relaxed);
        frame.seen_until.store(0, Ordering::Relaxed);
    }

    /// Pins frame `index` if it holds a clean, listed page that a reader of snapshot
    /// `snapshot` was shown to see as its version of the page's logical id
    /// ([`Pool::saw`]): a hit without translating the logical id. The caller still
    /// checks that the page's header names the logical id it wants (a frame hint may
    /// name a frame holding another page). Never waits, like [`Pool::lookup_frame`].
    ///
    /// Why the seen snapshots may be trusted without asking the page map: each bound
    /// was set by a reader that translated the page's logical id through its snapshot's
    /// map and found this frame's physical page, and the bounds are emptied whenever the
    /// frame's page changes. A logical id mapped to the same physical page by snapshots
    /// `a` and `b` is mapped to it by every snapshot between them: a commit that remapped
    /// it in between would have had to map it back to a physical page it freed, which is
    /// reused only after being reallocated, and a reallocated page is unlisted
    /// ([`Pool::invalidate`]) and reloaded or republished (bounds emptied) before any
    /// reader finds it again.
    #[inline(always)]
    pub fn pin_seen(&self, index: u32, snapshot: u64) -> Option<ReadGuard<'_>> {
        let frame = self.frames.get(index as usize)?;
        let guard = frame.data.try_read()?;
        // mutant: a pin trusts the frame whichever snapshots were seen to read it
        let any = cfg!(quire_mutant = "seen_any");
        if !any
            && (frame.seen_from.load(Ordering::Relaxed) > snapshot
                || frame.seen_until.load(Ordering::Relaxed) <= snapshot)
        {
            return None;
        }
        let phys = PhysId(guard.phys);
        self.pin_if_holds(frame, guard, phys)
    }

    /// The phase of the reader announced in reader slot `at` (`readers.rs`): entered
    /// around its reads with [`Pool::peek_seen`].
    #[inline(always)]
    pub fn phase(&self, at: usize) -> &Phase {
        self.grace.phase(at)
    }

    /// Whether frame `index` holds a page readers read unpinned (one that indexes
    /// others), as far as its weight tells without a look at the page: worth a
    /// [`Pool::peek_seen`], which checks.
    #[inline(always)]
    pub fn peekable(&self, index: u32) -> bool {
        self.frames.get(index as usize).is_some_and(|frame| frame.weight.load(Ordering::Relaxed) == MOST_CHANCES)
    }

    /// The bytes of frame `index`, read without a pin, if it holds a listed page that
    /// indexes others ([`Pool::is_index_kind`]: B+tree branches, map pages, the catalog)
    /// and that a reader of snapshot `snapshot` was shown to see as its version of the
    /// page's logical id (the rule of [`Pool::pin_seen`]). The caller still checks that
    /// the page's header names the logical id it wants. Writes nothing shared but, once
    /// per page listed, the frame's mark (`listing.rs`); a hit is counted in the
    /// thread's stripe, the frame's chances restored only when the hand took one.
    ///
    /// # Safety
    ///
    /// The caller is a reader announced in a reader slot whose [`Pool::phase`] has
    /// entered before this call and leaves only once the returned bytes are no longer
    /// used (`grace.rs`); no other thread uses that phase meanwhile.
    #[inline(always)]
    pub unsafe fn peek_seen(&self, index: u32, snapshot: u64) -> Option<&[u8]> {
        let frame = self.frames.get(index as usize)?;
        let listed = frame.listing.load();
        let weight = frame.weight.load(Ordering::Relaxed);
        if listed.is_unlisted() || weight != MOST_CHANCES || !(listed.peeked() || frame.listing.mark(listed)) {
            return None;
        }
        // Loaded after the listing: a frame listed since (its page changed) has
        // forgotten the snapshots that saw the page before.
        // mutant: (as in `pin_seen`) whichever snapshots were seen to read it
        if !cfg!(quire_mutant = "seen_any")
            && (frame.seen_from.load(Ordering::Relaxed) > snapshot
                || frame.seen_until.load(Ordering::Relaxed) <= snapshot)
        {
            return None;
        }
        // SAFETY: the frame is listed and marked read unpinned, so whoever unlists it
        // retires it (`grace.rs`) instead of giving it new bytes until this reader, whose
        // phase entered before it looked, has left it (the caller's contract); nobody
        // writes a listed page.
        let bytes = unsafe { self.prefetcher.unlocked(index as usize) };
        self.count_hit(frame, weight);
        Some(bytes)
    }

    /// Records that a reader of snapshot `snapshot` reads the page pinned in frame
    /// `index` (`_pinned`) as its version of the page's logical id: the reader found it
    /// by translating that id through its snapshot (see [`Pool::pin_seen`]).
    #[inline]
    pub fn saw(&self, index: u32, _pinned: &ReadGuard<'_>, snapshot: u64) {
        let frame = &self.frames[index as usize];
        if frame.seen_from.load(Ordering::Relaxed) > snapshot {
            frame.seen_from.fetch_min(snapshot, Ordering::Relaxed);
        }
        if frame.seen_until.load(Ordering::Relaxed) <= snapshot {
            frame.seen_until.fetch_max(snapshot.saturating_add(1), Ordering::Relaxed);
        }
    }

    /// Records that snapshot `snapshot` reads the page `phys` in frame `index` as its
    /// version of the page's logical id: the writer's word, for a page commit
    /// `snapshot` itself mapped that id to and has just published (so its readers pin
    /// it untranslated from their first read, see [`Pool::pin_seen`]). Nothing is
    /// recorded if the frame no longer holds `phys` (a reader's miss may have taken it
    /// meanwhile) or is locked. Counts no hit.
    pub fn saw_published(&self, index: u32, phys: PhysId, snapshot: u64) {
        let frame = &self.frames[index as usize];
        let Some(guard) = frame.data.try_read() else { return };
        if guard.phys != phys.0 || guard.state != FrameState::Clean || !frame.listing.load().is(phys.0) {
            return;
        }
        // mutant: the snapshots before the commit are taken to read its page
        let snapshot = if cfg!(quire_mutant = "published_seen_early") { 0 } else { snapshot };
        self.saw(index, &guard, snapshot);
    }
}
