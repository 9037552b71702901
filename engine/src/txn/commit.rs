//! Commit: persist the catalog and the commit record, write the dirty pages, sync and
//! switch the meta page, then publish the new snapshot.
//!
//! Order of writes per durability (the meta goes to the slot that does *not* hold the
//! last durable meta, so a torn meta write always leaves a good one behind):
//! - `Full`: pages, sync, meta, sync.
//! - `Checksummed`: pages, meta, sync; the record lists the pages written since the
//!   last sync with the CRC of the version written, and the meta the CRC of the
//!   record, so that open can verify exactly this commit's bytes before trusting it.
//! - `None`: pages, meta; the same list; pages freed by this commit wait for a sync
//!   before reuse (`FreeSpace::promote`).
//!
//! With a commit log (`log.rs`, [`crate::Options::commit_log_pages`]) a small `Full` or
//! `Checksummed` commit is logged instead (`write_logged`): its pages are appended to
//! the log and made durable in one write, then left in the pool to be written in
//! place later (`writeback.rs`); no meta and no commit record are written. A commit the
//! log has no room for is made in place: the log's checkpoint. A meta written in place while the
//! log holds commits is `Full` and preceded by a sync, so the pages of the logged
//! commits are durable before it. A `Checksummed` commit too large for an empty log is
//! written in place as `Checksummed` (one sync); once that sync returns, its meta and
//! pages are durable and the log extends it as it would a `Full` one.

use super::write::{WriteState, WriteTxn};
use crate::core::Core;
use crate::error::{Error, Result};
use crate::freespace::{Record, fill_record_page, record_page_body};
use crate::meta::{Durability, Meta};
use crate::page::{self, PageId, PageKind, PhysId, TxnId};
use crate::pool::WriteGuard;
use std::sync::Arc;

/// Largest number of unsynced pages a commit may leave to verify at open; beyond it the
/// commit is made the `Full` way (two syncs, nothing to verify). Every commit record
/// carries the list, so it also bounds what a run of `None` commits pays per commit:
/// at 2,048 pages the list is 16 KiB.
const MAX_UNSYNCED_PAGES: usize = 1 << 11;
/// Largest number of freed pages that may wait for a sync before reuse; beyond it a
/// `None` commit is made `Checksummed` (one sync). Without this bound a run of `None`
/// commits never reuses a page: the file grows and every commit record carries all
/// the scattered pages (`commit_probe 300000 3000 none` went from 0.24 to 1.2 ms a
/// commit and from 10 to 17 page writes).
const MAX_WAITING_FOR_SYNC: usize = 1 << 11;
/// Largest single write of adjacent pages at commit.
const WRITE_RUN_BYTES: usize = 1 << 20;

/// Writes `meta` into meta slot `slot` (no sync).
pub(super) fn write_meta_page(core: &Core, meta: &Meta, slot: u64) -> Result<()> {
    let mut page = vec![0u8; core.page_size];
    meta.encode(slot, &mut page);
    core.storage
        .write_at(slot * core.page_size as u64, &page)
        .map_err(|error| Error::io("write of the meta page", error))?;
    core.pool.counters.write(1);
    Ok(())
}

pub(super) fn sync(core: &Core) -> Result<()> {
    core.pool.counters.sync();
    if cfg!(quire_mutant = "no_sync") {
        return Ok(()); // mutant: the sync is left out (the durability tests must fail)
    }
    core.storage.sync().map_err(|error| Error::io("sync", error))
}

/// Reads the commit record of `meta`: its contents and the pages holding it.
pub(crate) fn read_record(core: &Core, meta: &Meta) -> Result<(Record, Vec<u64>)> {
    read_record_with(meta, core.page_size, |phys, buf| core.read_raw(phys, buf))
}

/// Reads and verifies the commit record of `meta` through `read`: every page of the
/// chain written by that very commit, the stream exactly as long as the meta says and
/// with its CRC. A page left over from an older commit, or a record page the power cut
/// kept from being written, fails here with [`Error::Corrupted`]; errors of `read`
/// pass through unchanged.
pub(crate) fn read_record_with(
    meta: &Meta,
    page_size: usize,
    mut read: impl FnMut(PhysId, &mut [u8]) -> Result<()>,
) -> Result<(Record, Vec<u64>)> {
    let mut stream = Vec::new();
    let mut pages = Vec::new();
    let mut next = meta.record_head.0;
    let mut buf = vec![0u8; page_size];
    let stale_allowed = cfg!(quire_mutant = "stale_record");
    while next != 0 {
        let phys = PhysId(next);
        if next < crate::meta::META_PAGES || next >= meta.page_count || stream.len() > meta.record_len as usize {
            return Err(Error::corrupted(phys, "commit record chain leaves the file or runs past its length"));
        }
        read(phys, &mut buf)?;
        let head = page::verify_expect(&buf, phys, Some(PageKind::RECORD), pages.len() as u64, meta.txn)?;
        if head.txn != meta.txn && !stale_allowed {
            return Err(Error::corrupted(
                phys,
                format!("commit record page written by transaction {} where {} was expected", head.txn, meta.txn),
            ));
        }
        let (following, bytes) = record_page_body(&buf, phys)?;
        stream.extend_from_slice(bytes);
        pages.push(next);
        next = following;
    }
    let whole = stream.len() == meta.record_len as usize && page::crc32c(&stream) == meta.record_crc;
    if !whole && !stale_allowed {
        return Err(Error::corrupted(
            meta.record_head,
            format!("commit record of transaction {} is not the one its meta names (length or CRC)", meta.txn),
        ));
    }
    if pages.is_empty() {
        return Ok((Record::default(), pages));
    }
    Ok((Record::decode(&stream, meta.record_head, meta.page_count)?, pages))
}

/// What `write_record` (or, for a logged commit, `Written::logged`) prepared for
/// `publish`.
pub(super) struct Written {
    /// Committed pages this commit frees (old versions, and the previous record if it
    /// wrote one).
    freed: Vec<u64>,
    /// Pages written since the last sync and their CRCs (empty for `Full`).
    unsynced: Vec<(u64, u32)>,
    /// Pages of the new commit record; `None`: the commit wrote none (logged), the last
    /// one stays.
    record_pages: Option<Vec<u64>>,
    /// Freed pages (this commit's included) that wait for a sync before reuse.
    waiting_for_sync: usize,
    /// The dirty pages are published unwritten (a logged commit, `writeback.rs`).
    pub(super) unwritten: bool,
}

impl Written {
    /// A logged commit: it frees the pages its transaction replaced and writes no
    /// commit record (`Full`: nothing unsynced).
    pub(super) fn logged(state: &mut WriteState) -> Written {
        let freed = std::mem::take(&mut state.freed);
        Written { freed, unsynced: Vec::new(), record_pages: None, waiting_for_sync: 0, unwritten: false }
    }
}

impl WriteTxn<'_> {
    /// Commits; `Some(txn)` when the commit was queued for a group append and its
    /// caller must wait for it (`group.rs`) once it has released the writer lock.
    pub(super) fn commit_inner(&self, durability: Durability) -> Result<Option<TxnId>> {
        self.persist_catalog()?;
        let state = &mut *self.state.borrow_mut();
        if state.fresh.is_empty() && state.freed.is_empty() && !state.trim_tail {
            state.done = true;
            return Ok(None); // nothing changed: no new snapshot
        }
        if cfg!(debug_assertions) {
            self.assert_state(state);
        }
        if cfg!(quire_mutant = "commit_noop") {
            state.done = true; // mutant: the commit is acknowledged and nothing is written
            return Ok(None);
        }
        // From here on the free-space state is being rewritten: any failure leaves the
        // handle unusable for writes until reopened (the file itself is untouched).
        let result = self.write_out(state, durability);
        if result.is_err() {
            self.core.poisoned.store(true, std::sync::atomic::Ordering::Release);
        }
        result
    }

    fn write_out(&self, state: &mut WriteState, durability: Durability) -> Result<Option<TxnId>> {
        self.seal_dirty(state);
        let log_mode = self.core.log_wanted > 0 && !state.trim_tail;
        let new_region = log_mode && state.meta.log_pages == 0;
        if new_region {
            state.meta.log_start = state.meta.page_count;
            state.meta.log_pages = self.core.log_wanted;
            state.meta.page_count += self.core.log_wanted;
            state.zero_log_region = true;
        }
        // A meta written in place while the log holds records is `Full`: until it is
        // durable, open may fall back to the epoch's meta, whose records need the pages
        // freed since. So is the one that makes the log's region, and a commit that will
        // be logged encodes its record as `Full` (nothing listed to verify). A
        // `Checksummed` commit too large for an empty log stays `Checksummed`: one sync,
        // after which its meta is as durable as a `Full` one and the log may extend it.
        let log_holds = self.core.log.lock().offset > 0;
        let requested = durability;
        let loggable = log_mode
            && !new_region
            && requested != Durability::None
            && self.core.log.lock().epoch.is_some()
            && self.fits_log(state);
        if loggable && self.log_has_room(state) {
            return self.write_logged(state);
        }
        // In place. While the log holds records this is its checkpoint: the meta is
        // `Full`, written after the logged commits' pages and a sync (`write_meta`).
        let durability = if log_holds || loggable || (new_region && requested != Durability::None) {
            Durability::Full
        } else {
            requested
        };
        let written = self.write_record(state, durability)?;
        // A transaction too large to verify cheaply at open is made durable the `Full` way.
        let durability = if written.unsynced.len() > MAX_UNSYNCED_PAGES {
            Durability::Full
        } else if durability == Durability::None && written.waiting_for_sync > MAX_WAITING_FOR_SYNC {
            Durability::Checksummed // the record is the same: it lists the unsynced pages
        } else {
            durability
        };
        self.core.ensure_len(state.meta.page_count)?;
        self.write_dirty(state)?;
        if state.zero_log_region {
            self.zero_log_region(state)?;
        }
        let slot = self.write_meta(state, durability)?;
        let txn = state.meta.txn;
        self.publish(state, durability, slot, written, durability != Durability::None, false);
        // The log starts over after a meta written in place (records of the old epoch
        // no longer extend the synced meta; the write above made it `Full` if the log
        // held records). A synced meta, `Full` or `Checksummed`, begins an epoch: the
        // records appended from now on extend it.
        let mut log = self.core.log.lock();
        if log.offset > 0 {
            self.core.free.lock().end_epoch();
        }
        // mutant: a meta no sync made durable (`None`) begins an epoch too
        let synced = durability != Durability::None || cfg!(quire_mutant = "log_epoch_unsynced");
        log.restart(synced.then_some(txn));
        Ok(None)
    }

    fn persist_catalog(&self) -> Result<()> {
        if !self.state.borrow().catalog_dirty {
            return Ok(());
        }
        let mut catalog = self.state.borrow_mut().catalog.take().expect("a dirty catalog is loaded");
        let root = Arc::make_mut(&mut catalog).store(self)?;
        let state = &mut *self.state.borrow_mut();
        state.meta.catalog_root = root;
        state.catalog = Some(catalog);
        state.catalog_dirty = false;
        Ok(())
    }

    /// Seals every dirty page (they are final: no page handle outlives its borrow of the
    /// transaction) and remembers each checksum for the commit record.
    fn seal_dirty(&self, state: &mut WriteState) {
        for (&phys, &index) in &state.dirty {
            let mut guard = self.core.pool.dirty_mut(index, PhysId(phys)).expect("no page is borrowed at commit");
            page::reseal(&mut guard.bytes);
            state.sealed.insert(phys, page::read_u32(&guard.bytes, 0));
        }
    }

    /// Builds the commit record and puts it into dirty frames.
    fn write_record(&self, state: &mut WriteState, durability: Durability) -> Result<Written> {
        let last_synced = self.core.shared.lock().last_synced;
        let mut free = self.core.free.lock();
        let mut freed_now = std::mem::take(&mut state.freed);
        freed_now.extend(free.record_pages.iter().copied());
        if state.trim_tail {
            while state.meta.page_count > crate::meta::META_PAGES
                && free.free.last() == Some(&(state.meta.page_count - 1))
            {
                free.free.pop_last();
                state.meta.page_count -= 1;
            }
            if cfg!(quire_mutant = "compact_trim_pending") {
                // mutant: pages still pending (old snapshots read them) are trimmed too
                let last = state.meta.page_count - 1;
                if free.pending_pages().any(|page| page == last) {
                    free.forget_pending(last);
                    state.meta.page_count -= 1;
                }
            }
        }
        let waiting_for_sync = freed_now.len()
            + free
                .pending
                .iter()
                .rev()
                .take_while(|(txn, _)| *txn > last_synced)
                .map(|(_, pages)| pages.len())
                .sum::<usize>()
            + free.held();
        let mut logical = free.logical.clone();
        logical.extend(state.logical_freed.iter().copied());
        // Pages written since the last sync that this commit makes unreachable leave the
        // list: once durable they may be reused, and open must not verify them then.
        let mut unsynced = if durability == Durability::Full {
            Vec::new()
        } else {
            let gone: std::collections::HashSet<u64> = freed_now.iter().copied().collect();
            free.unsynced.iter().copied().filter(|(phys, _)| !gone.contains(phys)).collect()
        };
        let last_record_pages = free.record_pages.len();
        drop(free);
        if durability != Durability::Full {
            // A fresh page without a CRC was never filled (its allocation failed) and
            // nothing refers to it.
            unsynced.extend(state.fresh.iter().filter_map(|phys| state.sealed.get(phys).map(|crc| (*phys, *crc))));
        }
        freed_now.sort_unstable();
        let per_page = Record::capacity_per_page(self.core.page_size);
        let mut pages: Vec<PhysId> = Vec::new();
        // The record's own pages are taken first, as many as the last record took (the
        // stream changes by a few bytes a commit), so that it is usually encoded once;
        // they come off the free list and are written by this commit, so they leave
        // its lists. A page more than the stream needs is left empty in the chain.
        let mut wanted = last_record_pages.max(1);
        loop {
            while pages.len() < wanted {
                let phys = self.alloc_phys(state);
                unsynced.retain(|(page, _)| *page != phys.0);
                pages.push(phys);
            }
            let stream = self.core.free.lock().encode_record(&freed_now, &logical, &unsynced);
            wanted = stream.len().div_ceil(per_page).max(1);
            if pages.len() >= wanted {
                self.fill_record_pages(state, &pages, &stream)?;
                state.meta.record_head = pages[0];
                state.meta.record_crc = page::crc32c(&stream);
                state.meta.record_len = u32::try_from(stream.len())
                    .map_err(|_| Error::corrupted(pages[0], "commit record larger than 4 GiB"))?;
                let record_pages = Some(pages.iter().map(|phys| phys.0).collect());
                return Ok(Written { freed: freed_now, unsynced, record_pages, waiting_for_sync, unwritten: false });
            }
        }
    }

    fn fill_record_pages(&self, state: &mut WriteState, pages: &[PhysId], stream: &[u8]) -> Result<()> {
        let per_page = Record::capacity_per_page(self.core.page_size);
        for (index, phys) in pages.iter().enumerate() {
            let chunk = stream.get(index * per_page..).unwrap_or(&[]);
            let chunk = &chunk[..chunk.len().min(per_page)];
            let (frame, mut guard) = self.core.pool.take_dirty(*phys)?;
            let next = pages.get(index + 1).map_or(0, |next| next.0);
            fill_record_page(&mut guard.bytes, index, next, chunk, state.meta.txn);
            state.dirty.insert(phys.0, frame);
        }
        Ok(())
    }

    /// Writes every dirty page, sealed by `seal_dirty` and `fill_record_pages`.
    pub(super) fn write_dirty(&self, state: &mut WriteState) -> Result<()> {
        let dirty: Vec<(u64, u32)> = state.dirty.iter().map(|(&phys, &index)| (phys, index)).collect();
        self.write_runs(dirty, false).map(drop)
    }

    /// Writes dirty pages `(phys, frame)` in physical order, runs of adjacent pages in
    /// one call. A spill (`spill`) seals each page first and skips pages still borrowed;
    /// a commit writes pages it sealed already, none borrowed. Returns the pages written
    /// with their CRCs.
    pub(super) fn write_runs(&self, mut dirty: Vec<(u64, u32)>, spill: bool) -> Result<Vec<(u64, u32, u32)>> {
        dirty.sort_unstable();
        let most = WRITE_RUN_BYTES / self.core.page_size;
        // The frames of one run, locked until it is written straight from them.
        let mut run: Vec<WriteGuard<'_>> = Vec::with_capacity(most.min(dirty.len()));
        let mut run_start = 0u64;
        let mut written = Vec::with_capacity(dirty.len());
        for (phys, index) in dirty {
            let pool = &self.core.pool;
            let locked =
                if spill { pool.try_dirty_mut(index, PhysId(phys)) } else { pool.dirty_mut(index, PhysId(phys)) };
            let Some(mut guard) = locked else {
                assert!(spill, "page {phys} is still borrowed at commit");
                continue;
            };
            if spill {
                page::reseal(&mut guard.bytes);
            }
            let contiguous = !run.is_empty() && run_start + run.len() as u64 == phys;
            if !contiguous || run.len() == most {
                self.flush_run(run_start, &mut run)?;
                run_start = phys;
            }
            written.push((phys, index, page::read_u32(&guard.bytes, 0)));
            run.push(guard);
        }
        self.flush_run(run_start, &mut run)?;
        Ok(written)
    }

    /// Writes the adjacent pages of `run` from `first` on, then unlocks them.
    fn flush_run(&self, first: u64, run: &mut Vec<WriteGuard<'_>>) -> Result<()> {
        if run.is_empty() {
            return Ok(());
        }
        let pages: Vec<&[u8]> = run.iter().map(|guard| &guard.bytes[..]).collect();
        self.core.write_page_run(first, &pages, "write")?;
        drop(pages);
        run.clear();
        Ok(())
    }

    /// Syncs and writes the meta as the durability asks. Returns the slot written.
    fn write_meta(&self, state: &WriteState, durability: Durability) -> Result<u64> {
        let (slot, last_synced) = {
            let shared = self.core.shared.lock();
            (1 - shared.synced_slot, shared.last_synced)
        };
        // Pages logged commits left in the pool go to the file before the sync below (one
        // follows whenever the log holds records).
        super::writeback::write_back(self.core, state.meta.page_count)?;
        let log_holds = self.core.log.lock().offset > 0;
        if durability == Durability::Full || log_holds {
            self.core.group.drain(self.core)?; // queued records before the meta
            if !(log_holds && cfg!(quire_mutant = "checkpoint_no_sync")) {
                // mutant: a checkpoint's meta may reach the disk before the logged pages
                sync(self.core)?; // the pages (and those of logged commits) before the meta
            }
        }
        let synced_after = durability != Durability::None;
        let meta = Meta {
            durability,
            last_synced: if durability == Durability::Full { state.meta.txn } else { last_synced },
            ..state.meta
        };
        write_meta_page(self.core, &meta, slot)?;
        if synced_after {
            sync(self.core)?;
        }
        Ok(slot)
    }

    /// Stamps every translation slot an id was remapped into with the commit's
    /// translation, and for each such page the commit wrote, points the id's frame hint
    /// at its frame and marks the frame seen by snapshot `txn`: the commit's readers then
    /// find its pages as a later snapshot's readers find pages already read, with no
    /// walk of the map (a first read after a large commit walked it for every page: a
    /// sixth of `lookup_probe`'s first pass at 12 M keys). Before `txn` is published.
    fn show_remaps(&self, state: &WriteState, txn: TxnId) {
        let (translations, pool) = (&self.core.translations, &self.core.pool);
        for (index, logical, target) in state.touched_slots() {
            translations.stamp(index, txn, (logical, target));
            // An unmapped id (target 0, a meta page's number) has no page; a page written
            // ahead of the commit (`ahead.rs`) is no longer dirty: the pool lists its frame.
            let frame = match state.dirty.get(&target) {
                Some(&frame) => Some(frame),
                None if target != 0 => pool.frame_of(PhysId(target)),
                None => None,
            };
            if let Some(frame) = frame {
                translations.remember_frame(PageId(logical), frame);
                pool.saw_published(frame, PhysId(target), txn.0);
            }
        }
    }

    /// Makes the commit visible: new snapshot, free-space bookkeeping, clean frames.
    /// `durable`: the commit is durable now (not queued for a group append, which
    /// advances `last_synced` itself once it is). `logged`: it went to the commit log
    /// (some of the pages it frees are held until the checkpoint, `FreeSpace::free_logged`).
    pub(super) fn publish(
        &self,
        state: &mut WriteState,
        durability: Durability,
        slot: u64,
        written: Written,
        durable: bool,
        logged: bool,
    ) {
        let txn: TxnId = state.meta.txn;
        let synced = durability != Durability::None;
        {
            let mut free = self.core.free.lock();
            if logged {
                free.free_logged(txn, written.freed);
                free.epoch_written.extend(state.dirty.keys().copied());
            } else {
                free.push_pending(txn, written.freed);
            }
            free.unsynced = if synced { Vec::new() } else { written.unsynced };
            free.logical.append(&mut state.logical_freed);
            if let Some(pages) = written.record_pages {
                free.record_pages = pages;
            }
        }
        for (&phys, &index) in &state.dirty {
            let guard = self.core.pool.dirty_mut(index, PhysId(phys)).expect("dirty frame free after write");
            if written.unwritten {
                self.core.pool.publish_unwritten(guard, index);
            } else {
                self.core.pool.publish(guard, index);
            }
        }
        self.show_remaps(state, txn);
        let mut shared = self.core.shared.lock();
        let current = Meta {
            durability,
            last_synced: if durability == Durability::Full { txn } else { shared.last_synced },
            ..state.meta
        };
        if synced && durable {
            shared.last_synced = txn;
            shared.synced_slot = slot;
        }
        shared.head = current;
        // Shown now unless queued and not yet durable (a `None` commit promises nothing).
        // mutant: readers see a queued commit before its append is durable
        if !synced || shared.last_synced >= txn || cfg!(quire_mutant = "group_seen_early") {
            debug_assert!(shared.unseen.is_empty(), "an unseen commit is shown before any later one");
            self.core.published.store(&current);
        } else {
            shared.unseen.push_back(current); // shown once its append lands (`group.rs`)
        }
        drop(shared);
        if let Some(catalog) = state.catalog.take() {
            let mut kept = self.core.writer_catalog.lock();
            if kept.is_none() || !cfg!(quire_mutant = "catalog_kept_first") {
                // mutant: a catalog this commit changed is not the next writer's
                *kept = Some((state.meta.catalog_root, catalog));
            }
        }
        self.core.pool.counters.commit();
        if !state.bases.is_empty() {
            let mut log = self.core.log.lock();
            state.bases.drain().filter_map(|(_, base)| base.bytes).for_each(|page| log.give_page(page));
        }
        state.dirty.clear();
        state.fresh.clear();
        state.logical_taken.clear();
        state.done = true;
    }
}
