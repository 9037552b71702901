//! Pages a write transaction writes before its commit: spills, when the writer holds
//! more dirty pages than the pool lets it, and *write-behind*, pages a structure
//! declared final ([`WriteTxn::write_behind`]).
//!
//! Both write fresh pages only, at physical places no published snapshot refers to, so
//! a crash before the commit loses nothing (the pages are free space again at open).
//! The commit's sync makes them durable with the rest, and its record lists them with
//! the checksum they were written with (`WriteState::sealed`). A page written ahead
//! and then changed again is re-dirtied (`WriteTxn::fresh_frame`) and written again at
//! the commit: correct, one write more.
//!
//! Write-behind exists for the transactions larger than the commit log takes (queue
//! appends, blobs, bulk loads): without it such a commit first writes every page and
//! then waits for the device to take them all; with it, the device takes the first
//! pages while the structure still fills the last ones
//! ([`crate::storage::Storage::start_write_out`]), and the commit's sync waits only
//! for the tail.

use super::write::{WriteState, WriteTxn};
use crate::error::{Error, Result};
use crate::page::{PageId, PhysId};

/// Fewest bytes of final pages gathered before the first write ahead: 2 MiB, where the
/// default commit log (4 MiB) could no longer take the transaction (a logged commit
/// needs twice its pages' bytes in the log, `WriteTxn::fits_log`), so a transaction
/// the log takes is never written ahead. A larger log raises it to half the log.
const FIRST_WRITE_BEHIND_BYTES: usize = 2 << 20;
/// Bytes of final pages gathered before each later write ahead: small, so that the
/// commit's sync finds little not yet on its way (a 3.2 MB queue batch left 150 of its
/// 400 pages to the commit with 2 MiB steps), and still 64 pages of 8 KiB a `pwritev`.
const WRITE_BEHIND_BYTES: usize = 512 << 10;

impl WriteTxn<'_> {
    /// Declares that the structure will not change page `id` again in this transaction
    /// (a full queue page, a blob's data page, a bulk load's finished node), so that the
    /// engine may write it before the commit. A hint: a page changed after all is
    /// written again at the commit. Once a few megabytes of such pages gather, they are
    /// written in runs and their write-out to the device starts at once (module docs).
    ///
    /// # Errors
    ///
    /// [`Error::UnmappedPage`] if `id` maps nowhere in this transaction; an I/O error of
    /// the write, which poisons the handle as a failed spill or commit does.
    pub fn write_behind(&self, id: PageId) -> Result<()> {
        let state = &mut *self.state.borrow_mut();
        let phys = self.lookup(state, id.0)?.ok_or(Error::UnmappedPage(id.0))?;
        let Some(&frame) = state.dirty.get(&phys.0) else { return Ok(()) };
        state.behind.push((phys.0, frame));
        let page_size = self.core.page_size as u64;
        let step = if state.wrote_behind {
            WRITE_BEHIND_BYTES as u64
        } else {
            (FIRST_WRITE_BEHIND_BYTES as u64).max((self.core.log_wanted / 2).saturating_mul(page_size))
        };
        if state.behind.len() as u64 * page_size >= step {
            self.write_final_pages(state)?;
        }
        Ok(())
    }

    /// Writes the pages gathered by `write_behind` that are still dirty and not
    /// borrowed, then starts their write-out to the device.
    fn write_final_pages(&self, state: &mut WriteState) -> Result<()> {
        let mut pages = std::mem::take(&mut state.behind);
        pages.retain(|(phys, frame)| state.dirty.get(phys) == Some(frame));
        let written = self.write_ahead(state, pages)?;
        if cfg!(quire_mutant = "behind_unlisted") {
            // mutant: the commit record does not list the pages written behind, so open
            // trusts a `Checksummed` commit without verifying them
            for (phys, ..) in &written {
                state.sealed.remove(phys);
            }
        }
        state.wrote_behind = true;
        self.core.pool.counters.written_behind(written.len() as u64);
        let page_size = self.core.page_size as u64;
        let (first, last) = written.iter().fold((u64::MAX, 0), |(lo, hi), &(phys, ..)| (lo.min(phys), hi.max(phys)));
        if first <= last {
            self.core.storage.start_write_out(first * page_size, (last + 1 - first) * page_size);
        }
        Ok(())
    }

    /// Spills when the writer holds as many dirty pages as it may.
    pub(super) fn spill_if_full(&self, state: &mut WriteState) -> Result<()> {
        if state.dirty.len() >= self.core.spill_threshold {
            self.spill(state)?;
        }
        Ok(())
    }

    /// Writes the dirty pages not currently borrowed (in adjacent runs), making their
    /// frames evictable. Writing only a share of them (the lowest quarter) was measured
    /// and is slower: `btree_probe 500000 random 1000 12.8` wrote 12 % fewer pages but
    /// ran at half the speed, re-reading more evicted pages.
    fn spill(&self, state: &mut WriteState) -> Result<()> {
        let dirty: Vec<(u64, u32)> = state.dirty.iter().map(|(&phys, &index)| (phys, index)).collect();
        state.behind.clear();
        let written = self.write_ahead(state, dirty)?;
        self.core.pool.counters.spill(written.len() as u64);
        Ok(())
    }

    /// Writes dirty pages `(phys, frame)` before the commit, skipping those still
    /// borrowed, and turns their frames clean (evictable). Returns what was written:
    /// physical page, frame and the checksum it was sealed with.
    fn write_ahead(&self, state: &mut WriteState, pages: Vec<(u64, u32)>) -> Result<Vec<(u64, u32, u32)>> {
        self.core.ensure_len(state.meta.page_count)?;
        let written = self.core.poison_on_io(self.write_runs(pages, true))?;
        for &(phys, index, crc) in &written {
            let guard = self.core.pool.dirty_mut(index, PhysId(phys)).expect("a page just written is not borrowed");
            self.core.pool.publish(guard, index);
            state.dirty.remove(&phys);
            state.sealed.insert(phys, crc);
        }
        Ok(written)
    }
}
