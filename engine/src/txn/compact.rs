//! Online compaction by remapping: moving the pages at the end of the file into free
//! pages nearer its start, a bounded number per write transaction.
//!
//! Structures address logical pages, so moving a page is what every write already
//! does: copy it to a fresh physical page (the lowest free one) and point its logical
//! id there through the page map. [`WriteTxn::relocate_tail`] walks the file from its
//! last page down and moves each page still in use, until its budget is spent or no
//! free page lies below. The old copies are freed like any replaced page: a snapshot
//! that still reads one keeps it (it waits in `pending`, see `freespace.rs`), so no
//! reader ever loses a page it needs, and later steps find those pages free and trim
//! them off the end (`trim_tail` at commit). `Database::compact_step` then shortens
//! the file to what both meta slots name.
//!
//! What a tail page is, is told by the accounting (free, pending, the commit record,
//! the commit log's region) and else by its header: a page-map page (moved by copying
//! the map path of a logical id below it) or a data page whose logical id the map
//! translates to exactly this page. Anything else is left where it is.
//!
//! The commit log's region moves as a whole, and only while the log is empty (no record
//! of the current epoch: nothing in it is needed by any meta that open may choose): to
//! the lowest run of free pages it fits, which may overlap the region itself when the
//! pages right below it are free. The new place is zeroed and named by this step's
//! meta; the old pages it leaves are freed like any replaced page. A stale record found
//! there later belongs to an older epoch and never extends a newer meta (`log.rs`).

use super::write::{WriteState, WriteTxn};
use crate::core::Core;
use crate::error::Result;
use crate::meta::Durability;
use crate::page::{self, PageKind, PhysId};
use std::collections::{HashMap, HashSet};

/// Pages one automatic step moves ([`crate::Options::auto_compact_percent`]).
const AUTO_BUDGET: u64 = 256;

/// What one [`crate::Database::compact_step`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompactStep {
    /// Pages moved toward the start of the file.
    pub moved: u64,
    /// Pages in use above a free page that could not move yet: old snapshots still read
    /// them, or they wait for the sync that makes their replacement durable.
    pub held: u64,
    /// File length before and after the step, in bytes.
    pub before: u64,
    pub after: u64,
    /// The step changed nothing: the file is as compact as it can be while the snapshots
    /// that hold pages (see `held`) live.
    pub done: bool,
}

/// [`crate::Database::compact_step`]: one write transaction relocating the tail, its
/// commit (when it changed anything), then the file cut to what the metas name.
pub(crate) fn compact_step(core: &Core, budget: u64) -> Result<CompactStep> {
    step(core, budget, true)
}

/// A compaction step; with `checkpoint`, one that finds records in the commit log
/// commits in place even if it moved nothing, ending the log's epoch: the pages freed
/// by logged commits are held until then (`freespace.rs`), and the log's region moves
/// only while the log is empty.
fn step(core: &Core, budget: u64, checkpoint: bool) -> Result<CompactStep> {
    core.check_writable()?;
    let before = core.file_len()?;
    let txn = WriteTxn::begin(core, core.lock_writer())?;
    let log_holds = core.log.lock().offset > 0;
    // Pages freed since the last sync wait for one before reuse (`freespace.rs`): an
    // explicit step syncs them free, or holes under commits made with
    // `Durability::None` would never fill. Likewise it commits to move a commit record
    // that sits above free pages (written at the end while the pages below waited).
    let frees_wait_for_sync = !core.head_is_durable()
        && core.free.lock().pending_pages().next().is_some()
        && !cfg!(quire_mutant = "compact_no_sync_step");
    let relocated = txn.relocate_tail(budget)?;
    let trims = txn.trims_tail();
    let record_moves = relocated.record_above_free && !cfg!(quire_mutant = "compact_record_stays");
    let commits = relocated.moved > 0
        || trims
        || relocated.log_waits
        || (checkpoint && (log_holds || frees_wait_for_sync || record_moves));
    if commits {
        txn.trim_tail();
        txn.commit_alone(Durability::Checksummed)?;
    } else {
        drop(txn);
    }
    let _writer = core.lock_writer();
    let idle = !commits;
    // A step with nothing left to move makes both slots agree, so the cut below reaches
    // the newest end (the older slot may name the pages earlier steps freed).
    if idle && core.head_is_durable() && core.pages_named_by_metas()? > core.head().page_count {
        core.poison_on_io(core.mirror_meta())?;
    }
    let after = core.cut_to_metas()?;
    let done = idle && after == before;
    Ok(CompactStep { moved: relocated.moved, held: relocated.held, before, after, done })
}

/// After a commit: with [`crate::Options::auto_compact_percent`] set, one step of
/// [`AUTO_BUDGET`] pages when more of the file is free than that share (pages held for
/// the log's checkpoint, up to a sixteenth of the file, do not count: no step can use
/// them before it), or when the file reaches that share (and a megabyte of growth
/// room) past its last page in use.
/// Unlike an explicit step it does not end the commit log's epoch when it has nothing
/// else to do: it runs after every commit while the file is mostly free, and the log is
/// there so that commits do not sync in place. The step's errors are not the commit's
/// (which is durable by now): an I/O error poisons the handle as always, so the next
/// operation reports it; anything else is left for an explicit
/// [`crate::Database::compact_step`] to report.
pub(crate) fn auto_compact(core: &Core) {
    let Some(percent) = core.auto_compact_percent else { return };
    let share = |pages: u64| pages * u64::from(percent) / 100;
    let pages = core.head().page_count;
    let free = {
        let space = core.free.lock();
        (space.free_and_pending() - space.held()) as u64
    };
    let file_pages = core.file_len.load(std::sync::atomic::Ordering::Acquire) / core.page_size as u64;
    let room = (1 << 20) / core.page_size as u64;
    if free > share(pages) || file_pages > pages + share(pages) + room {
        let _ = step(core, AUTO_BUDGET, false);
    }
}

/// What one relocation pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Relocated {
    /// Pages moved to lower free pages.
    pub moved: u64,
    /// Pages in use above the lowest free page that could not move now (old snapshots
    /// still read them, or they wait for a sync before reuse).
    pub held: u64,
    /// The log's region could move down but the log holds records: this step's commit
    /// (written in place) empties it, so the next step can.
    pub log_waits: bool,
    /// A page of the current commit record lies above two free pages or more: a commit
    /// writes the next record lower and frees it.
    pub record_above_free: bool,
}

/// The commit log's region moves when that brings it down by at least this fraction of
/// its length (or frees the end of the file): each move writes the whole region.
const MOVE_FRACTION: u64 = 8;

/// What [`WriteTxn::move_log_region`] could do.
enum RegionMove {
    Moved,
    /// Records of the current epoch are in the region: it moves after the checkpoint.
    LogHoldsRecords,
    /// No run of free pages below it is long enough (or reaches it).
    NoRoom,
}

/// The lowest start of `len` pages below `start` that are each free or part of the
/// region `start..start + len` (so a run of free pages right below it counts however
/// short); `None` if there is none.
fn lowest_run(free: &std::collections::BTreeSet<u64>, start: u64, len: u64) -> Option<u64> {
    let mut run: Option<(u64, u64)> = None; // (first, last) of the current run of free pages
    for &phys in free.range(..start) {
        run = match run {
            Some((first, last)) if last + 1 == phys => Some((first, phys)),
            _ => Some((phys, phys)),
        };
        let (first, last) = run.expect("just set");
        if last + 1 - first >= len {
            return Some(first);
        }
    }
    run.filter(|&(_, last)| last + 1 == start).map(|(first, _)| first)
}

impl WriteTxn<'_> {
    /// Moves up to `budget` in-use pages from the end of the file to the lowest free
    /// pages, last page first (see the module docs).
    pub(crate) fn relocate_tail(&self, budget: u64) -> Result<Relocated> {
        let held_back = self.held_back();
        let mut map_pages: Option<HashMap<u64, u64>> = None;
        let mut done = Relocated::default();
        let mut buf = vec![0u8; self.core.page_size];
        let mut phys = self.state.borrow().meta.page_count;
        let mut region_tried = false;
        while phys > crate::meta::META_PAGES && done.moved < budget {
            phys -= 1;
            let Some(lowest_free) = self.core.free.lock().free.first().copied() else { break };
            if lowest_free >= phys {
                break;
            }
            if self.core.free.lock().free.contains(&phys) || self.state.borrow().fresh.contains(&phys) {
                continue;
            }
            if self.in_log_region(phys) {
                let start = self.state.borrow().meta.log_start;
                if !std::mem::replace(&mut region_tried, true) {
                    match self.move_log_region()? {
                        RegionMove::Moved => done.moved += 1,
                        RegionMove::LogHoldsRecords => done.log_waits = true,
                        RegionMove::NoRoom => {}
                    }
                }
                phys = start; // the rest of the old region is not looked at page by page
                continue;
            }
            if held_back.contains(&phys) {
                done.held += 1;
                // Worth a commit only with two free pages below: the next record takes
                // one, and with one alone the records would take turns at the end.
                let free = self.core.free.lock();
                done.record_above_free |= free.record_pages.contains(&phys) && free.free.range(..phys).nth(1).is_some();
                continue;
            }
            self.core.read_raw(PhysId(phys), &mut buf)?;
            let header = page::header(&buf);
            let moved = if header.kind == PageKind::MAP {
                let map = match &mut map_pages {
                    Some(map) => map,
                    None => map_pages.insert(self.map_pages()?),
                };
                self.move_map_page(phys, map)?
            } else {
                self.move_data_page(phys, header.logical)?
            };
            if moved {
                done.moved += 1;
            } else {
                done.held += 1;
            }
        }
        Ok(done)
    }

    /// Pages that are neither free nor live: freed but pending, and the pages of the
    /// current commit record (freed by this transaction's commit).
    fn held_back(&self) -> HashSet<u64> {
        let free = self.core.free.lock();
        let pending = free.pending_pages();
        pending.chain(free.record_pages.iter().copied()).collect()
    }

    fn in_log_region(&self, phys: u64) -> bool {
        let meta = self.state.borrow().meta;
        meta.log_pages > 0 && (meta.log_start..meta.log_start + meta.log_pages).contains(&phys)
    }

    /// Moves the commit log's region to the lowest run of free pages below it (module
    /// docs), if the log is empty.
    fn move_log_region(&self) -> Result<RegionMove> {
        let state = &mut *self.state.borrow_mut();
        let (start, len) = (state.meta.log_start, state.meta.log_pages);
        let mut free = self.core.free.lock();
        let Some(to) = lowest_run(&free.free, start, len) else { return Ok(RegionMove::NoRoom) };
        let above = state.meta.page_count - (start + len);
        let at_tail = free.free.range(start + len..).count() as u64 == above;
        if start - to < len / MOVE_FRACTION && !at_tail {
            return Ok(RegionMove::NoRoom); // not worth zeroing a region for, unless it frees the tail
        }
        if self.core.log.lock().offset > 0 {
            return Ok(RegionMove::LogHoldsRecords);
        }
        for phys in to..start.min(to + len) {
            free.free.remove(&phys);
            self.core.pool.invalidate(PhysId(phys));
            state.fresh.insert(phys);
        }
        drop(free);
        state.freed.extend(start.max(to + len)..start + len);
        state.meta.log_start = to;
        state.zero_log_region = true;
        Ok(RegionMove::Moved)
    }

    /// Moves data page `phys` if logical id `logical` (from its header) maps to it.
    fn move_data_page(&self, phys: u64, logical: u64) -> Result<bool> {
        let state = &mut *self.state.borrow_mut();
        if logical == 0 || self.lookup(state, logical)? != Some(PhysId(phys)) {
            return Ok(false); // an older copy, waiting to be freed
        }
        let (new, guard) = self.writable(state, PhysId(phys), None, logical)?;
        drop(guard);
        self.map_set(state, logical, new.0)?;
        Ok(true)
    }

    /// Moves page-map page `phys` by copying the map path of a logical id it leads to
    /// (`map` from [`WriteTxn::map_pages`]); false if it is not part of the map.
    fn move_map_page(&self, phys: u64, map: &HashMap<u64, u64>) -> Result<bool> {
        let Some(&logical) = map.get(&phys) else { return Ok(false) };
        let state = &mut *self.state.borrow_mut();
        let target = self.lookup(state, logical)?.map_or(0, |page| page.0);
        self.map_set(state, logical, target)?;
        Ok(true)
    }

    /// Every page of the transaction's page map below the root, each with a mapped
    /// logical id under it (map pages with none under them are left out).
    fn map_pages(&self) -> Result<HashMap<u64, u64>> {
        let mut found = HashMap::new();
        let meta = self.state.borrow().meta;
        if meta.map_depth > 0 {
            self.walk_map(meta.map_root, meta.map_depth, 0, &mut found)?;
        }
        Ok(found)
    }

    /// Visits map page `phys` at `level` covering ids from `base`; returns a mapped
    /// logical id under it, recording one for every map page below.
    fn walk_map(&self, phys: PhysId, level: u32, base: u64, found: &mut HashMap<u64, u64>) -> Result<Option<u64>> {
        let entries: Vec<(u64, u64)> = {
            let state: &WriteState = &self.state.borrow();
            let page = self.read_any(state, phys, Some(PageKind::MAP), u64::from(level))?;
            let fanout = self.core.fanout;
            (0..fanout)
                .map(|index| (index, Core::map_entry(page.guard_bytes(), index)))
                .filter(|&(_, entry)| entry != 0)
                .collect()
        };
        let span = self.core.fanout.pow(level - 1);
        let mut first = None;
        for (index, entry) in entries {
            let logical = base + index * span;
            let under = if level == 1 {
                Some(logical)
            } else {
                crate::core::check_map_entry(phys, entry, self.state.borrow().meta.page_count)?;
                let under = self.walk_map(PhysId(entry), level - 1, logical, found)?;
                if let Some(under) = under {
                    found.insert(entry, under);
                }
                under
            };
            first = first.or(under);
        }
        Ok(first)
    }
}
