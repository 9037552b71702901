//! The shared inner state of a database and the read path every transaction uses.
//!
//! `Core` holds the storage, the buffer pool, the published snapshot and the reader
//! registry; readers take no lock (`published` and `readers`, see `readers.rs`).
//! Locks and what they guard (none is held across I/O, none is taken by a reader):
//! - `shared` (short, writers and group-commit leaders): the newest commit, the newest
//!   durable one and the slot of its meta, and the commits readers may not see yet.
//! - `free` (writer only, plus `check`): the [`FreeSpace`].
//! - `log` (writer only): where the next commit-log record goes (`txn/log.rs`).
//! - `group` (committers): logged records waiting for their append (`txn/group.rs`);
//!   its leader writes without holding it. Order: `log` → `group` → `shared`.
//! - `writer`: held by the one [`crate::WriteTxn`] for its whole life.
//!
//! Read next: `txn/read.rs`, `txn/write.rs`.

use crate::error::{Error, Result};
use crate::freespace::FreeSpace;
use crate::meta::Meta;
use crate::page::{self, HEADER_SIZE, PageId, PageKind, PhysId, TxnId, read_u64};
use crate::pool::{Pool, ReadGuard};
use crate::readers::{Published, Readers};
use crate::resultset::ResultSetPool;
use crate::storage::{FileMap, Storage};
use crate::translations::Translations;
use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// The state commits keep: the newest commit, what of it is durable, and what readers
/// may not see yet.
///
/// Readers see a commit once it is durable: with group commit a commit is made (its
/// pages published in the pool, the next writer building on it) before its append is,
/// and its meta waits in `unseen` until the append lands (`txn/group.rs`). Without
/// group commit every commit is published to readers when it is made: durable, or
/// `Durability::None`, which promises no durability.
#[derive(Debug)]
pub struct Shared {
    /// Newest commit known durable.
    pub last_synced: TxnId,
    /// Meta slot (0 or 1) holding the last durable meta.
    pub synced_slot: u64,
    /// The newest commit, the next writer's base: [`Core::published`] or newer.
    pub head: Meta,
    /// Commits made but not yet shown to readers (their appends are not durable yet),
    /// oldest first; the newest is `head`.
    pub unseen: std::collections::VecDeque<Meta>,
}

impl Shared {
    /// The state of a database just opened at `meta`, durable, in meta slot `slot`.
    pub fn new(meta: &Meta, slot: u64) -> Self {
        Shared { last_synced: meta.txn, synced_slot: slot, head: *meta, unseen: Default::default() }
    }

    /// Moves `last_synced` up to `durable`, and shows readers the newest commit
    /// `unseen` holds that it reaches (commits are shown in order, and only durable).
    pub fn synced_up_to(&mut self, durable: TxnId, published: &Published) {
        self.last_synced = self.last_synced.max(durable);
        let mut shown = None;
        while self.unseen.front().is_some_and(|meta| meta.txn <= self.last_synced) {
            shown = self.unseen.pop_front();
        }
        if let Some(meta) = shown {
            published.store(&meta);
        }
    }
}

/// Everything a database handle shares between threads.
pub struct Core {
    /// The page file.
    pub storage: Arc<dyn Storage>,
    /// The buffer pool.
    pub pool: Pool,
    /// Bytes per page.
    pub page_size: usize,
    /// Entries per page-map page.
    pub fanout: u64,
    /// The newest commit, its durability and what readers may not see yet.
    pub shared: Mutex<Shared>,
    /// The newest snapshot readers may see (lock-free; `readers.rs`): the newest commit,
    /// or with group commit the newest durable one ([`Shared`]). Stored under `shared`.
    pub published: Published,
    /// The snapshots live readers hold (lock-free; `readers.rs`).
    pub readers: Readers,
    /// Free space (used by the writer).
    pub free: Mutex<FreeSpace>,
    /// Serialises writers ([`Core::lock_writer`]). The standard library's mutex, not
    /// `parking_lot`'s, whose waiters call `sched_yield` before they sleep: with group
    /// commit, four writers on two cores made about one such yield a commit.
    pub(crate) writer: std::sync::Mutex<()>,
    /// Threads that hold the writer lock or wait for it ([`WriterLock`]): group commit
    /// holds a lone record back while another commit is on its way (`group.rs`).
    pub(crate) writers: AtomicUsize,
    /// Set after an I/O error: writes are refused until reopen.
    pub poisoned: AtomicBool,
    /// Logical → physical translations shared by all transactions.
    pub translations: Translations,
    /// Recycled query buffers.
    pub result_sets: Arc<ResultSetPool>,
    /// Whether pool misses copy from a memory map instead of `pread`.
    pub mmap: Option<Mutex<Option<Arc<FileMap>>>>,
    /// Where the writer appends to the commit log.
    pub log: Mutex<crate::txn::LogState>,
    /// Logged commits waiting for a shared append ([`crate::Options::group_commit`]).
    pub group: crate::txn::GroupCommit,
    /// The catalog as the last commit that read or changed it left it, and its root:
    /// the next write transaction starts from it instead of reading and parsing the
    /// catalog's pages again (`WriteTxn::load_catalog`).
    pub writer_catalog: Mutex<Option<(crate::page::PageId, Arc<crate::catalog::Catalog>)>>,
    /// Whether logged commits share appends.
    pub group_commit: bool,
    /// Free share of the file, in percent, above which a commit runs one compaction
    /// step ([`crate::Options::auto_compact_percent`]).
    pub auto_compact_percent: Option<u8>,
    /// Pages of commit log wanted ([`crate::Options::commit_log_pages`]; 0 = no log).
    pub log_wanted: u64,
    /// Dirty pages a writer may hold before spilling.
    pub spill_threshold: usize,
    /// Display name of the file.
    pub path: String,
    /// Bytes the file is known to hold (grown ahead of use).
    pub file_len: AtomicU64,
    /// Set when opening rejected the newest meta page and used the older one.
    pub rollback: Option<crate::open::Rollback>,
    /// The newest transaction id of any meta seen at open: commits go above it.
    pub txn_floor: TxnId,
    /// Opened with `Database::open_read_only`: nothing is ever written.
    pub read_only: bool,
    /// This open database among all opened by the process (part of [`SnapshotToken`]).
    ///
    /// [`SnapshotToken`]: crate::SnapshotToken
    pub instance: u64,
}

impl std::fmt::Debug for Core {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Core").field("path", &self.path).field("page_size", &self.page_size).finish()
    }
}

/// The writer lock, held: counted in [`Core::writers`] until dropped.
pub struct WriterLock<'a> {
    _guard: std::sync::MutexGuard<'a, ()>,
    writers: &'a AtomicUsize,
}

impl Drop for WriterLock<'_> {
    fn drop(&mut self) {
        self.writers.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Core {
    /// Waits for the writer lock. A writer that panicked held no state the lock
    /// guards (its transaction's drop undid its work), so a poisoned lock is taken as is.
    pub fn lock_writer(&self) -> WriterLock<'_> {
        self.writers.fetch_add(1, Ordering::Relaxed);
        let guard = self.writer.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        WriterLock { _guard: guard, writers: &self.writers }
    }

    /// The writer lock if no writer holds it.
    pub fn try_lock_writer(&self) -> Option<WriterLock<'_>> {
        let guard = match self.writer.try_lock() {
            Ok(guard) => guard,
            Err(std::sync::TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        self.writers.fetch_add(1, Ordering::Relaxed);
        Some(WriterLock { _guard: guard, writers: &self.writers })
    }

    /// Whether a thread holds the writer lock or waits for it.
    pub(crate) fn writer_coming(&self) -> bool {
        self.writers.load(Ordering::Relaxed) > 0
    }

    /// Refuses to write after an I/O error.
    pub fn check_not_poisoned(&self) -> Result<()> {
        if self.poisoned.load(Ordering::Acquire) { Err(Error::Poisoned) } else { Ok(()) }
    }

    /// Refuses to write after an I/O error or on a read-only handle.
    pub fn check_writable(&self) -> Result<()> {
        if self.read_only {
            return Err(Error::ReadOnly);
        }
        self.check_not_poisoned()
    }

    /// The largest page count a valid meta in either slot names: the file must not be
    /// cut below it. A slot that does not decode names nothing (open would not use it).
    pub fn pages_named_by_metas(&self) -> Result<u64> {
        let mut page = vec![0u8; self.page_size];
        let mut most = 0;
        for slot in 0..crate::meta::META_PAGES {
            let read = self.storage.read_at(slot * self.page_size as u64, &mut page);
            self.poison_on_io(read.map_err(|error| Error::io(format!("read of meta page {slot}"), error)))?;
            if let Ok(meta) = Meta::decode(slot, &page) {
                most = most.max(meta.page_count);
            }
        }
        Ok(most)
    }

    /// The file's length in bytes.
    pub fn file_len(&self) -> Result<u64> {
        let len = self.storage.len().map_err(|error| Error::io("reading the file length", error));
        self.poison_on_io(len)
    }

    /// The newest commit (the next writer's base; readers may not see it yet).
    pub fn head(&self) -> Meta {
        self.shared.lock().head
    }

    /// True when the newest commit is durable and written in place (no logged commit
    /// extends it), so [`Core::mirror_meta`] may copy it over the other slot.
    pub fn head_is_durable(&self) -> bool {
        let synced = {
            let shared = self.shared.lock();
            shared.last_synced >= shared.head.txn
        }; // one lock at a time
        synced && self.log.lock().offset == 0
    }

    /// Shortens the file to the pages the newest commit and both meta slots name
    /// (an older slot may still need pages past the newest end); returns the length.
    /// The caller holds the writer lock.
    pub fn cut_to_metas(&self) -> Result<u64> {
        let len = self.file_len()?;
        let named = self.pages_named_by_metas()?;
        let end = named.max(self.head().page_count) * self.page_size as u64;
        if len <= end {
            return Ok(len);
        }
        let cut = self.storage.truncate(end).map_err(|error| Error::io("truncating the file", error));
        self.poison_on_io(cut)?;
        self.file_len.store(end, Ordering::Release);
        Ok(end)
    }

    /// Writes the newest commit's meta, which must be durable, over the other slot too
    /// (then syncs), so that no older meta names pages beyond it.
    pub fn mirror_meta(&self) -> Result<()> {
        let meta = self.head();
        let slot = 1 - self.shared.lock().synced_slot;
        let mut page = vec![0u8; self.page_size];
        meta.encode(slot, &mut page);
        self.storage
            .write_at(slot * self.page_size as u64, &page)
            .map_err(|error| Error::io("write of the meta page", error))?;
        self.storage.sync().map_err(|error| Error::io("sync", error))
    }

    /// Marks the handle unusable for writes if `result` is an I/O error.
    pub fn poison_on_io<T>(&self, result: Result<T>) -> Result<T> {
        if let Err(Error::Io { .. }) = &result {
            self.poisoned.store(true, Ordering::Release);
        }
        result
    }

    /// Reads physical pages from `phys` on into `buf` (no verification): from the file,
    /// except the pages logged commits left unwritten, which come from their frames
    /// (pinned before the file is read: `pool/unwritten.rs`).
    pub fn read_raw(&self, phys: PhysId, buf: &mut [u8]) -> Result<()> {
        let pages = buf.len().div_ceil(self.page_size);
        let mut unwritten = self.pool.pin_unwritten_in(phys.0, pages);
        if cfg!(quire_mutant = "no_overlay") {
            unwritten.clear(); // mutant: a page not yet written back is read from the file
        }
        self.read_file(phys, buf)?;
        for (at, frame) in unwritten {
            let start = at * self.page_size;
            let end = (start + self.page_size).min(buf.len());
            buf[start..end].copy_from_slice(&frame.bytes[..end - start]);
        }
        Ok(())
    }

    /// [`Core::read_raw`] from the file alone.
    fn read_file(&self, phys: PhysId, buf: &mut [u8]) -> Result<()> {
        let offset = phys.0 * self.page_size as u64;
        self.pool.counters.read_pages(buf.len().div_ceil(self.page_size) as u64);
        if let Some(map) = &self.mmap
            && let Some(mapped) = self.mapped(map, offset + buf.len() as u64)
            && let Some(bytes) = mapped.get(offset as usize..offset as usize + buf.len())
        {
            buf.copy_from_slice(bytes);
            if !mapped.faulted() {
                return Ok(());
            }
            // The map could not read part of it: `pread` reports why (`mapped.rs`).
        }
        let result =
            self.storage.read_at(offset, buf).map_err(|error| Error::io(format!("read of page {phys}"), error));
        self.poison_on_io(result)
    }

    /// With [`crate::Options::mmap_reads`], a memory map of the file reaching at least
    /// `end` bytes; `None` without the option or when the storage cannot be mapped.
    pub fn file_map(&self, end: u64) -> Option<Arc<FileMap>> {
        self.mmap.as_ref().and_then(|map| self.mapped(map, end))
    }

    /// Writes `pages`, adjacent, from physical page `first` on, straight from their
    /// frames (one gathered write), and counts them; `what` names the write in an error.
    pub fn write_page_run(&self, first: u64, pages: &[&[u8]], what: &str) -> Result<()> {
        let end = first + pages.len() as u64;
        self.storage
            .write_pages_at(first * self.page_size as u64, pages)
            .map_err(|error| Error::io(format!("{what} of pages {first}..{end}"), error))?;
        self.pool.counters.write(pages.len() as u64);
        Ok(())
    }

    /// Checks a page read in place from the file's map: fully (checksum, kind, logical
    /// id, not newer than `newest`) the first time since it was last allocated
    /// (`pool::Verified`), its identity after; counted as a pool miss.
    pub fn verify_mapped(
        &self,
        bytes: &[u8],
        phys: PhysId,
        kind: Option<PageKind>,
        logical: u64,
        newest: TxnId,
    ) -> Result<()> {
        if self.pool.verified.contains(phys.0) {
            page::verify_identity(bytes, phys, kind, logical)?;
        } else {
            self.pool.counters.read();
            page::verify_expect(bytes, phys, kind, logical, newest)?;
            self.pool.verified.insert(phys.0);
        }
        self.pool.counters.miss();
        Ok(())
    }

    /// The current memory map, mapped again if it does not reach `end` or a read of it
    /// has faulted.
    fn mapped(&self, map: &Mutex<Option<Arc<FileMap>>>, end: u64) -> Option<Arc<FileMap>> {
        let mut slot = map.lock();
        if slot.as_ref().is_none_or(|mapped| (mapped.len() as u64) < end || mapped.faulted()) {
            *slot = None; // a map no snapshot holds frees its table entry for the new one
            *slot = self.storage.map()?.ok().and_then(FileMap::new).map(Arc::new);
        }
        slot.clone().filter(|mapped| mapped.len() as u64 >= end)
    }

    /// Pins a committed page, reading and verifying it on a miss.
    #[inline]
    pub fn read_committed(
        &self,
        phys: PhysId,
        kind: Option<PageKind>,
        logical: u64,
        newest: TxnId,
    ) -> Result<ReadGuard<'_>> {
        Ok(self.read_committed_frame(phys, kind, logical, newest)?.0)
    }

    /// [`Core::read_committed`], also returning the pool frame that holds the page.
    pub fn read_committed_frame(
        &self,
        phys: PhysId,
        kind: Option<PageKind>,
        logical: u64,
        newest: TxnId,
    ) -> Result<(ReadGuard<'_>, u32)> {
        if phys.0 < crate::meta::META_PAGES {
            return Err(Error::corrupted(phys, format!("reference to meta page {phys} from logical {logical}")));
        }
        let (guard, frame) = self.pool.get(phys, |buf| {
            self.read_raw(phys, buf)?;
            page::verify_expect(buf, phys, kind, logical, newest).map(|_| ())
        })?;
        // A hit is checked too: the frame may hold this physical page as another
        // logical page expects it (a misdirected map entry read through another id).
        page::verify_identity(&guard.bytes, phys, kind, logical)?;
        Ok((guard, frame))
    }

    /// Reads one entry of a page-map page.
    pub fn map_entry(page: &[u8], index: u64) -> u64 {
        read_u64(page, HEADER_SIZE + 8 * index as usize)
    }

    /// Logical ids a page map of `depth` levels can address.
    pub fn map_capacity(&self, depth: u32) -> u64 {
        self.fanout.saturating_pow(depth)
    }

    /// Index into the map page at `level` (1 = leaves) for `logical`.
    pub fn map_index(&self, logical: u64, level: u32) -> u64 {
        (logical / self.fanout.pow(level - 1)) % self.fanout
    }

    /// Translates a logical id as snapshot `meta` sees it: through the shared
    /// translation table, or by walking the page map (and remembering the answer).
    #[inline]
    pub fn translate(&self, meta: &Meta, id: PageId) -> Result<Option<PhysId>> {
        if let Some(phys) = self.translations.get(id, meta.txn) {
            return Ok(Some(phys));
        }
        let found = self.map_lookup(meta, id)?;
        if let Some(phys) = found {
            self.translations.fill(id, phys, meta.txn);
        }
        Ok(found)
    }

    /// Translates a logical id through a committed snapshot's page map.
    pub fn map_lookup(&self, meta: &Meta, id: PageId) -> Result<Option<PhysId>> {
        let logical = id.0;
        if meta.map_depth == 0 || logical >= self.map_capacity(meta.map_depth) {
            return Ok(None);
        }
        let mut phys = meta.map_root;
        for level in (1..=meta.map_depth).rev() {
            let page = self.read_committed(phys, Some(PageKind::MAP), u64::from(level), meta.txn)?;
            let entry = Self::map_entry(&page.bytes, self.map_index(logical, level));
            if entry == 0 {
                return Ok(None);
            }
            check_map_entry(phys, entry, meta.page_count)?;
            phys = PhysId(entry);
        }
        Ok(Some(phys))
    }
}

/// A page-map entry read from map page `map` must name a page of the file.
pub fn check_map_entry(map: PhysId, entry: u64, page_count: u64) -> Result<()> {
    if entry < crate::meta::META_PAGES || entry >= page_count {
        return Err(Error::corrupted(map, format!("page-map entry {entry} is outside the file (2..{page_count})")));
    }
    Ok(())
}

impl Core {
    /// Makes sure the file holds `page_count` pages (grows in preallocated chunks).
    /// An I/O error poisons the handle, whichever write path met it (a spill or a commit).
    pub fn ensure_len(&self, page_count: u64) -> Result<()> {
        let needed = page_count * self.page_size as u64;
        if self.file_len.load(Ordering::Acquire) >= needed {
            return Ok(());
        }
        let grown = self.storage.grow_to(needed).map_err(|error| Error::io("growing the file", error));
        self.poison_on_io(grown)?;
        let len = self.storage.len().map_err(|error| Error::io("reading the file length", error));
        self.file_len.store(self.poison_on_io(len)?, Ordering::Release);
        Ok(())
    }
}

/// A snapshot's memory map of the file ([`crate::Options::mmap_reads`]): taken from the
/// core at the snapshot's first read in place, then held for the snapshot's life, so
/// that later reads in place take no lock and no reference on the core's map. A map
/// that faults is not replaced here: its reads fall back to `pread` (which reports the
/// disk's error), and the core maps the file afresh for later snapshots.
#[derive(Default)]
pub(crate) struct SnapshotMap(std::cell::OnceCell<Option<Arc<FileMap>>>);

impl SnapshotMap {
    /// The map reaching the snapshot's pages (`meta`'s page count); `None` without one.
    pub fn get(&self, core: &Core, meta: &Meta) -> Option<&FileMap> {
        self.0.get_or_init(|| core.file_map(meta.page_count * core.page_size as u64)).as_deref()
    }
}
