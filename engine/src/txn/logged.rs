//! Logged commits (`log.rs` has the format and recovery): the decision whether a commit
//! goes to the commit log (it fits, and the log has room for it), the append (one
//! durable write) after which the pages stay in the pool unwritten (`writeback.rs`),
//! and the zeroing of a new region. A commit the log has no room for is made in place,
//! `Full`: that is the log's checkpoint (it writes the pages back, syncs, writes the
//! meta and its commit record, syncs; the log is then empty).
//!
//! A logged commit writes no commit record (`freespace.rs`): re-encoding the free space
//! was 40 % of a one-key commit's instructions at 500 k keys (`commit_probe`, callgrind),
//! and its pages' deltas a share of the record's bytes. What it frees and takes stays in
//! the writer's memory (`FreeSpace`) until the checkpoint writes it; open rebuilds it
//! from the page map after a replay (`rebuild.rs`).
//! Read next: `commit.rs` (the in-place protocol these share their steps with).

use super::commit::Written;
use super::log::{self, LoggedPage};
use super::write::{WriteState, WriteTxn};
use super::writeback;
use crate::core::Core;
use crate::error::{Error, Result};
use crate::meta::{Durability, Meta};
use crate::page::{PhysId, TxnId};
use crate::pool::ReadGuard;

/// An epoch may hold one page in this many of the file (or the region's size in pages,
/// if that is more) before a checkpoint (the next commit made in place): held pages
/// cost file growth until then, and each checkpoint 10–35 ms, which a large file paid every ~480 one-key commits when
/// the region's size alone was the limit (reports/WRITE-PATH.md §23).
const HELD_SHARE: u64 = 16;

/// Most pages an epoch holds before a checkpoint (see [`HELD_SHARE`]).
fn held_limit(region_pages: u64, file_pages: u64) -> u64 {
    region_pages.max(file_pages / HELD_SHARE)
}

/// Largest single write of zeros over a new log region.
const ZERO_RUN_BYTES: usize = 1 << 20;

/// Appends log records at byte `at` and makes them durable.
pub(super) fn append(core: &Core, at: u64, record: &[u8]) -> Result<()> {
    core.pool.counters.write(record.len().div_ceil(core.page_size) as u64);
    core.pool.counters.sync();
    let result = if cfg!(quire_mutant = "log_no_sync") {
        core.storage.write_at(at, record) // mutant: acknowledged before it is durable
    } else {
        core.storage.write_durable(at, record)
    };
    result.map_err(|error| Error::io("append to the commit log", error))
}

impl WriteTxn<'_> {
    /// Whether the commit can go to the log: every page it wrote is still dirty (a
    /// spilled page was written in place unsynced and is in no record), and the record
    /// at its largest (every page a whole-page run) fits half the region.
    pub(super) fn fits_log(&self, state: &WriteState) -> bool {
        let page_size = self.core.page_size;
        log::max_record_bytes(state.dirty.len(), page_size) * 2 <= state.meta.log_pages * page_size as u64
            && state.fresh.iter().all(|phys| state.dirty.contains_key(phys))
    }

    /// Writes zeros over a new log region, so its blocks are allocated and written
    /// before the first append (an append into unwritten blocks would also have to
    /// make the file system's block map durable).
    pub(super) fn zero_log_region(&self, state: &WriteState) -> Result<()> {
        let page_size = self.core.page_size as u64;
        let zeros = vec![0u8; ZERO_RUN_BYTES];
        let (start, end) =
            (state.meta.log_start * page_size, (state.meta.log_start + state.meta.log_pages) * page_size);
        for at in (start..end).step_by(ZERO_RUN_BYTES) {
            let bytes = &zeros[..(end - at).min(ZERO_RUN_BYTES as u64) as usize];
            self.core.storage.write_at(at, bytes).map_err(|error| Error::io("zeroing the commit log", error))?;
        }
        Ok(())
    }

    /// Whether the record of this commit, at its largest, fits the rest of the region,
    /// and the epoch holds fewer pages than a checkpoint waits for: if not, the commit is
    /// made in place, `Full`, and that is the log's checkpoint (`commit.rs`).
    pub(super) fn log_has_room(&self, state: &WriteState) -> bool {
        let page_size = self.core.page_size;
        let most = log::max_record_bytes(state.dirty.len(), page_size);
        self.core.log.lock().offset + most <= state.meta.log_pages * page_size as u64
            && !self.epoch_holds_too_many(state.meta.log_pages, state.meta.page_count)
    }

    /// Logs the commit (module docs): one durable append; the pages stay in the pool,
    /// to be written back later (or, when they cannot, are written in place now). It
    /// writes no commit record: its meta names none, and what it freed and took is in
    /// the writer's memory until the next meta written in place (open rebuilds it from
    /// the page map, `rebuild.rs`). With group commit the record is queued instead and
    /// the commit to wait for is returned (`group.rs`): the caller waits after releasing
    /// the writer lock.
    pub(super) fn write_logged(&self, state: &mut WriteState) -> Result<Option<TxnId>> {
        let page_size = self.core.page_size;
        let limit = writeback::limit(self.core);
        let mut written = Written::logged(state);
        written.unwritten = state.dirty.len() <= limit;
        if written.unwritten && self.core.pool.unwritten_count() + state.dirty.len() > limit {
            writeback::write_back(self.core, state.meta.page_count)?;
        }
        let mut dirty: Vec<(u64, u32)> = state.dirty.iter().map(|(&phys, &index)| (phys, index)).collect();
        dirty.sort_unstable();
        (state.meta.record_head, state.meta.record_len, state.meta.record_crc) = (PhysId(0), 0, 0);
        let meta = Meta { durability: Durability::Full, last_synced: state.meta.txn, ..state.meta };
        let mut log = self.core.log.lock();
        // The record is built block-aligned in the kept buffer, which holds the largest
        // record these pages can make, so the direct append writes it without a copy.
        let mut buffer = std::mem::take(&mut log.record);
        let most = log::max_record_bytes(dirty.len(), page_size) as usize + log::LOG_BLOCK;
        if buffer.capacity() < most {
            buffer = Vec::with_capacity(most);
        }
        let start = buffer.as_ptr().align_offset(log::LOG_BLOCK); // the same for a kept buffer
        let epoch = log.epoch.expect("a commit is logged only while the synced meta is Full");
        {
            let pool = &self.core.pool;
            let guards: Vec<_> = dirty
                .iter()
                .map(|&(phys, index)| pool.dirty_mut(index, PhysId(phys)).expect("no page is borrowed at commit"))
                .collect();
            let framed = self.framed_bases(state, &dirty)?;
            let pages: Vec<LoggedPage<'_>> = dirty
                .iter()
                .zip(&guards)
                .zip(&framed)
                .map(|((&(phys, _), guard), framed)| LoggedPage {
                    phys,
                    bytes: &guard.bytes[..],
                    base: state.bases.get(&phys).map(|base| match (&base.bytes, framed) {
                        (Some(bytes), _) => (base.phys, &bytes[..]),
                        (None, Some(frame)) => (base.phys, &frame.bytes[..]),
                        (None, None) => unreachable!("framed_bases pins every base not kept"),
                    }),
                })
                .collect();
            log::encode_at(&mut buffer, start, epoch, &meta, &pages);
        }
        let record = &mut buffer[start..];
        let record_bytes = record.len() as u64;
        assert!(
            log.offset + record_bytes <= state.meta.log_pages * page_size as u64,
            "a logged commit's record fits the room `log_has_room` found"
        );
        self.core.ensure_len(state.meta.page_count)?;
        let at = state.meta.log_start * page_size as u64 + log.offset;
        let txn = state.meta.txn;
        let queued = self.core.group_commit;
        if queued {
            self.core.group.queue(at, record.to_vec(), txn, log.offset == 0);
        } else {
            append(self.core, at, record)?;
        }
        log.offset += record_bytes;
        if buffer.capacity() <= log::RECORD_BUFFER_KEPT {
            log.record = buffer;
        }
        drop(log);
        if !written.unwritten {
            self.write_dirty(state)?;
        }
        let slot = self.core.shared.lock().synced_slot;
        self.publish(state, Durability::Full, slot, written, !queued, true);
        Ok(queued.then_some(txn))
    }

    /// Pins, for each dirty page in `dirty` whose base was not copied aside
    /// (`WriteState::bases`), the committed base in the pool (read back if it was
    /// evicted meanwhile).
    fn framed_bases(&self, state: &WriteState, dirty: &[(u64, u32)]) -> Result<Vec<Option<ReadGuard<'_>>>> {
        dirty
            .iter()
            .map(|&(phys, _)| match state.bases.get(&phys) {
                Some(base) if base.bytes.is_none() => {
                    self.core.read_committed(PhysId(base.phys), None, base.logical, self.base.txn).map(Some)
                }
                _ => Ok(None),
            })
            .collect()
    }

    /// Whether the pages freed since the epoch began (kept from reuse until a
    /// checkpoint: a later record's delta may be against them) reach the region's size
    /// or [`HELD_SHARE`] of the file's pages, whichever is more.
    fn epoch_holds_too_many(&self, region_pages: u64, file_pages: u64) -> bool {
        self.core.free.lock().held() as u64 >= held_limit(region_pages, file_pages)
    }
}
