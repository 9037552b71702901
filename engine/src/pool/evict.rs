//! Finding a frame for a page: a recycled one (its page invalidated), a retired one
//! whose grace period has ended (`grace.rs`), or one the CLOCK hand takes from the
//! page it holds (the weights of the module's docs).

use super::{FrameState, MOST_CHANCES, NO_PAGE, Pool, TRANSIENT_LOCK_WAIT, WriteGuard};
use crate::error::{Error, Result};
use std::sync::atomic::Ordering;

impl Pool {
    /// A recycled frame still holding nothing anyone can find (clean and unlisted, or
    /// free), if one is left: the CLOCK hand may have given it to another page since.
    /// One whose page readers may read unpinned is retired instead (`grace.rs`).
    fn take_recycled(&self) -> Option<(u32, WriteGuard<'_>)> {
        loop {
            let index = self.recycled.lock().pop()?;
            let frame = &self.frames[index as usize];
            let Some(mut guard) = frame.data.try_write() else { continue };
            let listed = frame.listing.load();
            let garbage = guard.state == FrameState::Clean && listed.is_unlisted();
            if garbage && listed.peeked() {
                self.retire(index, &mut guard);
            } else if garbage || guard.state == FrameState::Free {
                guard.phys = NO_PAGE;
                guard.state = FrameState::Free;
                return Some((index, guard));
            }
        }
    }

    /// Retires frame `index` (`guard`, its write lock), unlisted and read unpinned while
    /// it was listed: it is freed only after the readers who may still read it
    /// (`grace.rs`).
    pub(super) fn retire(&self, index: u32, guard: &mut WriteGuard<'_>) {
        guard.phys = NO_PAGE;
        guard.state = FrameState::Retiring;
        self.grace.retire(index);
    }

    /// A retired frame whose grace period has ended, freed, if there is one; the others
    /// that ended with it go to the recycled frames.
    fn take_graced(&self) -> Option<(u32, WriteGuard<'_>)> {
        if self.grace.retired() == 0 {
            return None;
        }
        let mut ended = Vec::new();
        self.grace.collect(&mut ended);
        let mut taken = None;
        for index in ended {
            // Nobody pins a retiring frame: a pin needs a clean one, so a holder of its
            // lock only looks and lets go.
            let Some(mut guard) = self.frames[index as usize].data.try_write_for(TRANSIENT_LOCK_WAIT) else {
                self.grace.retire(index);
                continue;
            };
            debug_assert_eq!(guard.state, FrameState::Retiring);
            guard.state = FrameState::Free;
            match taken {
                None => taken = Some((index, guard)),
                Some(_) => {
                    drop(guard);
                    self.recycled.lock().push(index);
                }
            }
        }
        taken
    }

    /// Finds a frame to reuse with CLOCK: skip pinned and dirty frames, and frames
    /// with chances left (taking one).
    pub(super) fn take_frame(&self) -> Result<(u32, WriteGuard<'_>)> {
        if let Some(taken) = self.take_recycled().or_else(|| self.take_graced()) {
            return Ok(taken);
        }
        let count = self.frames.len();
        for _ in 0..(2 + usize::from(MOST_CHANCES)) * count {
            let index = self.hand.fetch_add(1, Ordering::Relaxed) % count;
            let frame = &self.frames[index];
            let chances = frame.chances.load(Ordering::Relaxed);
            if chances > 0 {
                frame.chances.store(chances - 1, Ordering::Relaxed);
                continue;
            }
            let Some(mut guard) = frame.data.try_write() else { continue };
            match guard.state {
                FrameState::Dirty | FrameState::Retiring => continue,
                FrameState::Clean if frame.unwritten.load(Ordering::Acquire) => continue,
                FrameState::Free if !guard.touched => {
                    guard.touched = true;
                    if let Some(toucher) = &self.toucher {
                        toucher.reached((index + 1) * self.page_size);
                    }
                    self.untouched.fetch_sub(1, Ordering::Relaxed);
                    self.counters.frame_allocated();
                }
                FrameState::Free => {}
                FrameState::Clean if frame.listing.load().peeked() && !self.grace.has_room() => continue,
                FrameState::Clean if self.unlist(guard.phys, index as u32) => {
                    self.counters.eviction();
                    self.retire(index as u32, &mut guard);
                    drop(guard);
                    // With no reader announced, its grace period ends at once.
                    if let Some(taken) = self.take_graced() {
                        return Ok(taken);
                    }
                    continue;
                }
                FrameState::Clean => {
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
