//! [`Database`]: opening and creating the page file, and the entry points of
//! transactions, statistics and maintenance.
//!
//! Opening reads the two meta pages and nothing else (the commit record is read by the
//! first writer), so it costs the same whatever the size of the file. Read next:
//! `core.rs`, `txn/`.

use crate::core::{Core, Shared};
use crate::error::{Error, Result};
use crate::freespace::FreeSpace;
use crate::meta::{self, Durability, META_PAGES, META_PROBE_BYTES, Meta};
use crate::page::{self, PhysId};
use crate::pool::Pool;
use crate::resultset::{ResultSet, ResultSetPool};
use crate::stats::Stats;
use crate::storage::{FileStorage, OpenError, Storage};
use crate::txn::{ReadTxn, WriteTxn};
use parking_lot::Mutex;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};

/// Commits `compact` makes: relocation rounds, then two that only trim.
const COMPACT_ROUNDS: usize = 4;

/// Default page size.
pub const DEFAULT_PAGE_SIZE: u32 = 8192;

/// How to open a database.
#[derive(Clone, Debug)]
pub struct Options {
    /// Page size for a new file; when opening, `Some` must match the file.
    pub page_size: Option<u32>,
    /// Bytes of the buffer pool (frames are preallocated up front).
    pub cache_bytes: usize,
    /// Serve pool misses by copying from a memory map instead of `pread`.
    pub mmap_reads: bool,
    /// Idle result sets the database keeps for reuse.
    pub result_set_pool: usize,
    /// Largest result set (in bytes of buffers) that is kept for reuse.
    pub result_set_max_bytes: usize,
    /// Fraction of the pool a write transaction may fill with dirty pages before it
    /// writes some early (spills), in percent. Default 75: random inserts into a tree
    /// larger than the pool (`btree_probe 500000 random 1000 12.8`) ran at 165 k/s
    /// with 50, 205 k/s with 75 and 232 k/s with 90; 75 leaves readers a quarter.
    pub dirty_limit_percent: u8,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            page_size: None,
            cache_bytes: 64 << 20,
            mmap_reads: false,
            result_set_pool: 64,
            result_set_max_bytes: 4 << 20,
            dirty_limit_percent: 75,
        }
    }
}

impl Options {
    fn validate(&self, page_size: u32) -> Result<usize> {
        if !page_size.is_power_of_two() || !(4096..=65536).contains(&page_size) {
            return Err(Error::InvalidOptions(format!("page size {page_size} is not a power of two in 4096..=65536")));
        }
        let frames = self.cache_bytes / page_size as usize;
        if frames > crate::pool::MAX_FRAMES {
            return Err(Error::InvalidOptions(format!(
                "a cache of {frames} pages exceeds {}",
                crate::pool::MAX_FRAMES
            )));
        }
        if frames < 64 {
            return Err(Error::InvalidOptions(format!(
                "cache of {} bytes holds {frames} pages; at least 64 are needed",
                self.cache_bytes
            )));
        }
        if !(1..=90).contains(&self.dirty_limit_percent) {
            return Err(Error::InvalidOptions("dirty_limit_percent must be in 1..=90".into()));
        }
        Ok(frames)
    }
}

/// An open database. `Send + Sync`: share it between threads by reference or `Arc`.
#[derive(Debug)]
pub struct Database {
    core: Core,
}

const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<Database>();
};

impl Database {
    /// Creates a new database at `path`, or opens it if it already holds one.
    pub fn create(path: impl AsRef<Path>, options: Options) -> Result<Database> {
        let storage = open_file(path.as_ref(), true)?;
        Self::with_storage(Arc::new(storage), options, &path.as_ref().display().to_string())
    }

    /// Opens an existing database at `path`.
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<Database> {
        let display = path.as_ref().display().to_string();
        if !path.as_ref().exists() {
            return Err(Error::io(format!("opening {display}"), std::io::ErrorKind::NotFound.into()));
        }
        let storage = open_file(path.as_ref(), false)?;
        Self::open_storage(Arc::new(storage), options, &display)
    }

    /// Creates a database in `storage` if it is empty, else opens it.
    pub fn with_storage(storage: Arc<dyn Storage>, options: Options, name: &str) -> Result<Database> {
        let len = storage.len().map_err(|error| Error::io("reading the file length", error))?;
        if len == 0 {
            initialise(storage.as_ref(), options.page_size.unwrap_or(DEFAULT_PAGE_SIZE))?;
        }
        Self::open_storage(storage, options, name)
    }

    /// Opens the database held by `storage`.
    pub fn open_storage(storage: Arc<dyn Storage>, options: Options, name: &str) -> Result<Database> {
        let (meta, slot, fell_back) = choose_meta(storage.as_ref(), &options, name)?;
        let frames = options.validate(meta.page_size)?;
        let core = Core {
            pool: Pool::new(meta.page_size as usize, frames)?,
            translations: crate::translations::Translations::new(frames),
            page_size: meta.page_size as usize,
            fanout: ((meta.page_size as usize - page::HEADER_SIZE) / 8) as u64,
            shared: Mutex::new(Shared { last_synced: meta.txn, synced_slot: slot }),
            published: crate::readers::Published::new(&meta),
            readers: crate::readers::Readers::default(),
            free: Mutex::new(FreeSpace::default()),
            writer: Mutex::new(()),
            poisoned: AtomicBool::new(false),
            result_sets: ResultSetPool::new(options.result_set_pool, options.result_set_max_bytes),
            mmap: options.mmap_reads.then(|| Mutex::new(None)),
            spill_threshold: frames * options.dirty_limit_percent as usize / 100,
            path: name.to_owned(),
            file_len: AtomicU64::new(0),
            fell_back,
            instance: next_instance(),
            storage,
        };
        if meta.durability != Durability::Full {
            core.storage.sync().map_err(|error| Error::io("sync at open", error))?;
        }
        Ok(Database { core })
    }

    /// Starts a snapshot reader. Never waits for the writer.
    pub fn begin_read(&self) -> Result<ReadTxn<'_>> {
        Ok(ReadTxn::begin(&self.core))
    }

    /// Starts the write transaction, waiting for the current writer to finish.
    pub fn begin_write(&self) -> Result<WriteTxn<'_>> {
        self.core.check_not_poisoned()?;
        WriteTxn::begin(&self.core, self.core.writer.lock())
    }

    /// Starts the write transaction if no other writer is active.
    pub fn try_begin_write(&self) -> Result<Option<WriteTxn<'_>>> {
        self.core.check_not_poisoned()?;
        match self.core.writer.try_lock() {
            Some(guard) => WriteTxn::begin(&self.core, guard).map(Some),
            None => Ok(None),
        }
    }

    /// Pool and file counters.
    pub fn stats(&self) -> Stats {
        self.core.pool.stats()
    }

    /// The newest committed meta.
    pub fn meta(&self) -> Meta {
        self.core.published.load()
    }

    /// Page size in bytes.
    pub fn page_size(&self) -> usize {
        self.core.page_size
    }

    /// Frames in the buffer pool.
    pub fn pool_frames(&self) -> usize {
        self.core.pool.frame_count()
    }

    /// An empty result set from the recycling pool.
    pub fn result_set(&self) -> ResultSet {
        self.core.result_sets.take()
    }

    /// True when opening found the newest meta page invalid and used the older one.
    pub fn fell_back_to_older_meta(&self) -> bool {
        self.core.fell_back
    }

    /// Returns the free pages at the end of the file to the operating system.
    /// Returns the file length before and after.
    pub fn compact(&self) -> Result<(u64, u64)> {
        let before = self.core.storage.len().map_err(|error| Error::io("reading the file length", error))?;
        // Move pages out of the upper part of the file (each move frees a high page and
        // takes the lowest free one), then let two more commits retire the old record
        // pages; every commit trims the free tail.
        for round in 0..COMPACT_ROUNDS {
            let txn = self.begin_write()?;
            if round + 2 < COMPACT_ROUNDS {
                let threshold = txn.packed_page_count() + txn.packed_page_count() / 16 + 64;
                txn.relocate_from(threshold)?;
            }
            txn.trim_tail();
            txn.commit(Durability::Full)?;
        }
        let _writer = self.core.writer.lock();
        let end = self.meta().page_count * self.core.page_size as u64;
        let result = self.core.storage.truncate(end).map_err(|error| Error::io("truncating the file", error));
        self.core.poison_on_io(result)?;
        self.core.file_len.store(end, std::sync::atomic::Ordering::Release);
        Ok((before, end))
    }
}

impl Drop for Database {
    /// Returns the growth reserved ahead of use to the file system, so a closed file is
    /// as long as its pages. Best effort: a failure leaves a longer, equally valid file.
    fn drop(&mut self) {
        if self.core.check_not_poisoned().is_err() {
            return;
        }
        let end = self.meta().page_count * self.core.page_size as u64;
        if self.core.storage.len().is_ok_and(|len| len > end) {
            let _ = self.core.storage.truncate(end);
        }
    }
}

/// How long `open` keeps trying a lock held by someone else. A child process forked by
/// this program holds the parent's lock between `fork` and `exec` (the descriptor is
/// close-on-exec); the retry rides over that window and nothing longer.
const LOCK_RETRY: std::time::Duration = std::time::Duration::from_millis(250);

fn open_file(path: &Path, create: bool) -> Result<FileStorage> {
    let start = std::time::Instant::now();
    loop {
        match FileStorage::open(path, create) {
            Ok(storage) => return Ok(storage),
            Err(OpenError::Locked) if start.elapsed() < LOCK_RETRY => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Err(OpenError::Locked) => return Err(Error::Locked { path: path.display().to_string() }),
            Err(OpenError::Io(error)) => return Err(Error::io(format!("opening {}", path.display()), error)),
        }
    }
}

/// Writes the two meta pages of an empty database.
fn initialise(storage: &dyn Storage, page_size: u32) -> Result<()> {
    Options { page_size: Some(page_size), ..Options::default() }.validate(page_size)?;
    let mut page = vec![0u8; page_size as usize];
    for slot in 0..META_PAGES {
        Meta::empty(page_size).encode(slot, &mut page);
        storage
            .write_at(slot * u64::from(page_size), &page)
            .map_err(|error| Error::io("creating the database", error))?;
    }
    storage.sync().map_err(|error| Error::io("creating the database", error))
}

/// Legal page sizes, smallest first.
const PAGE_SIZES: [u32; 5] = [4096, 8192, 16384, 32768, 65536];

/// What reading the meta slots found.
#[derive(Default)]
struct Found {
    metas: Vec<(Meta, u64)>,
    other_version: Option<u32>,
    magic_seen: bool,
    first_error: Option<Error>,
}

impl Found {
    /// Reads slot `slot` assuming pages of `page_size` bytes; a slot past the end of a
    /// file of `len` bytes is simply absent.
    fn try_slot(&mut self, storage: &dyn Storage, len: u64, slot: u64, page_size: u32) -> Result<()> {
        let offset = slot * u64::from(page_size);
        if self.metas.iter().any(|(_, held)| *held == slot) || offset + u64::from(page_size) > len {
            return Ok(());
        }
        let read =
            |buf: &mut [u8]| storage.read_at(offset, buf).map_err(|error| Error::io("reading a meta page", error));
        let mut probe = [0u8; META_PROBE_BYTES];
        read(&mut probe)?;
        if meta::probe_page_size(&probe).is_none() {
            return Ok(());
        }
        self.magic_seen = true;
        let version = page::read_u32(&probe, 40);
        if version != meta::FORMAT_VERSION {
            self.other_version = Some(version);
            return Ok(());
        }
        if meta::probe_page_size(&probe) != Some(page_size) {
            return Ok(());
        }
        let mut page = vec![0u8; page_size as usize];
        read(&mut page)?;
        match Meta::decode(slot, &page) {
            Ok(meta) => self.metas.push((meta, slot)),
            Err(error) => self.first_error = self.first_error.take().or(Some(error)),
        }
        Ok(())
    }
}

/// Reads both meta pages and picks the one to trust. Returns it, its slot and whether
/// the newer one had to be rejected. Slot 0 names the page size; if it is damaged, slot
/// 1 is looked for at every legal page size.
fn choose_meta(storage: &dyn Storage, options: &Options, name: &str) -> Result<(Meta, u64, bool)> {
    let len = storage.len().map_err(|error| Error::io("reading the file length", error))?;
    let mut found = Found::default();
    let mut probe = [0u8; META_PROBE_BYTES];
    if len >= META_PROBE_BYTES as u64 {
        storage.read_at(0, &mut probe).map_err(|error| Error::io("reading the meta page", error))?;
    }
    let claimed = meta::probe_page_size(&probe).filter(|size| PAGE_SIZES.contains(size));
    for page_size in claimed.into_iter().chain(PAGE_SIZES) {
        found.try_slot(storage, len, 0, page_size)?;
        found.try_slot(storage, len, 1, page_size)?;
        if found.metas.len() == 2 {
            break;
        }
    }
    let Some(page_size) = found.metas.first().map(|(meta, _)| meta.page_size) else {
        return Err(match (found.other_version, found.magic_seen) {
            (Some(version), _) => Error::FormatVersion { found: version, supported: meta::FORMAT_VERSION },
            (None, true) => found.first_error.unwrap_or_else(|| Error::corrupted(PhysId(0), "no valid meta page")),
            (None, false) => Error::NotADatabase { path: name.to_owned() },
        });
    };
    if let Some(requested) = options.page_size
        && requested != page_size
    {
        return Err(Error::PageSizeMismatch { found: page_size, requested });
    }
    if len < META_PAGES * u64::from(page_size) {
        return Err(Error::Truncated { found: len, expected: META_PAGES * u64::from(page_size) });
    }
    let rejected = found.metas.len() < 2 || found.first_error.is_some();
    let mut candidates = found.metas;
    candidates.sort_by_key(|(meta, slot)| (std::cmp::Reverse(meta.txn), *slot));
    let newest_valid = candidates.first().map(|(meta, _)| meta.txn);
    for (meta, slot) in &candidates {
        if meta.durability == Durability::Full || unsynced_pages_verify(storage, meta) {
            let expected = meta.page_count * u64::from(page_size);
            if len < expected {
                return Err(Error::Truncated { found: len, expected });
            }
            return Ok((*meta, *slot, rejected || Some(meta.txn) != newest_valid));
        }
    }
    Err(Error::corrupted(PhysId(0), "no meta page describes a complete commit"))
}

/// True if every page the meta's commit record lists as unsynced was fully written.
fn unsynced_pages_verify(storage: &dyn Storage, meta: &Meta) -> bool {
    let page_size = meta.page_size as usize;
    let mut buf = vec![0u8; page_size];
    let read = |phys: u64, buf: &mut [u8]| storage.read_at(phys * page_size as u64, buf).is_ok();
    let mut stream = Vec::new();
    let mut next = meta.record_head.0;
    let mut index = 0u64;
    while next != 0 {
        if next >= meta.page_count || index > meta.page_count || !read(next, &mut buf) {
            return false;
        }
        let ok = page::verify_expect(&buf, PhysId(next), Some(page::PageKind::RECORD), index, meta.txn).is_ok();
        let Ok((following, bytes)) = crate::freespace::record_page_body(&buf, PhysId(next)) else { return false };
        if !ok {
            return false;
        }
        stream.extend_from_slice(bytes);
        next = following;
        index += 1;
    }
    let Ok(record) = crate::freespace::Record::decode(&stream, meta.record_head, meta.page_count) else {
        return false;
    };
    record.unsynced.iter().all(|&phys| {
        phys < meta.page_count
            && read(phys, &mut buf)
            && page::verify(&buf, PhysId(phys)).is_ok_and(|head| head.txn > meta.last_synced && head.txn <= meta.txn)
    })
}

/// A number no other database opened by this process has had.
fn next_instance() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}
