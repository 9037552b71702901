//! Write-back: a logged commit is durable once its record is, so its pages need not be
//! written to their places at once. They stay in the pool, published *unwritten*
//! (`pool/unwritten.rs`), and the writer writes them later, in physical order:
//! - before every sync that ends the log's epoch (a checkpoint, a meta written in
//!   place), so the file holds every page the new meta names before that meta;
//! - when they fill [`LIMIT_SHARE`] of the pool (no sync: the log still covers them).
//!
//! A one-key commit then costs its durable append alone, where it used to add two to
//! six scattered `pwrite`s of the leaf, the map path and the commit record; and a page
//! rewritten again within the epoch, or freed and reused, is never written at all:
//! pages that are free (or past the file's end) when the write-back runs are dropped.
//! With [`crate::Options::mmap_reads`] too: a snapshot reads a page from the file's map
//! only after the pool's table missed it (`read.rs`, `read_mapped`), and an unwritten
//! page is listed there from before its commit is published until after it is written
//! (a buffered write is in the page cache, which the map shows, when `pwrite` returns).

use crate::core::Core;
use crate::error::Result;
use crate::page::PhysId;
use crate::pool::ReadGuard;

/// Unwritten pages may fill one frame in this many before they are written back.
pub(super) const LIMIT_SHARE: usize = 8;
/// Largest single write.
const RUN_BYTES: usize = 1 << 20;

/// Pages with their frames.
type Frames = Vec<(u64, u32)>;

/// Most pages logged commits may leave unwritten.
pub(super) fn limit(core: &Core) -> usize {
    core.pool.frame_count() / LIMIT_SHARE
}

/// Writes every unwritten page to its place (no sync), except those free or at or past
/// `end` (the page count of the meta the caller is about to make durable), which are
/// forgotten. The caller holds the writer lock. An I/O error poisons the handle.
pub(super) fn write_back(core: &Core, end: u64) -> Result<()> {
    if core.pool.unwritten_count() == 0 {
        return Ok(());
    }
    let (gone, live): (Frames, Frames) = {
        let free = core.free.lock();
        core.pool.unwritten_pages().into_iter().partition(|(phys, _)| *phys >= end || free.free.contains(phys))
    };
    for (phys, _) in gone {
        core.pool.invalidate(PhysId(phys));
    }
    if cfg!(quire_mutant = "no_write_back") {
        return Ok(()); // mutant: a checkpoint names pages the file never received
    }
    let most = RUN_BYTES / core.page_size;
    let mut run: Vec<ReadGuard<'_>> = Vec::with_capacity(most.min(live.len()));
    let mut in_run: Frames = Vec::new();
    for (phys, index) in live {
        // Only the writer writes back or reallocates, so the frame still holds the page.
        let Some(frame) = core.pool.pin_unwritten(index, phys) else { continue };
        let contiguous = in_run.last().is_some_and(|&(last, _)| last + 1 == phys);
        if !contiguous || run.len() == most {
            core.poison_on_io(flush(core, &mut run, &mut in_run))?;
        }
        run.push(frame);
        in_run.push((phys, index));
    }
    core.poison_on_io(flush(core, &mut run, &mut in_run))
}

/// Writes the run of adjacent pages `in_run` straight from their pinned frames `run`,
/// then marks them written; leaves both empty.
fn flush(core: &Core, run: &mut Vec<ReadGuard<'_>>, in_run: &mut Frames) -> Result<()> {
    let Some(&(first, _)) = in_run.first() else { return Ok(()) };
    let pages: Vec<&[u8]> = run.iter().map(|frame| &frame.bytes[..]).collect();
    core.write_page_run(first, &pages, "write-back")?;
    drop(pages);
    run.clear();
    for (phys, index) in in_run.drain(..) {
        core.pool.mark_written(index, phys);
    }
    Ok(())
}
