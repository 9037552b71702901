//! [`Database`]: opening and creating the page file, and the entry points of
//! transactions, statistics and maintenance.
//!
//! Opening reads the two meta pages and, unless the newest was made `Full`, the pages
//! of its last sync window (`open.rs`); the commit record's free lists are read by the
//! first writer. A database opened read-write is synced before anything is written
//! (a meta left in the page cache by a killed process becomes durable before a new
//! commit relies on it). [`Database::open_read_only`] never writes. Read next:
//! `open.rs`, `core.rs`, `txn/`.

use crate::core::{Core, Shared};
use crate::error::{Error, Result};
use crate::freespace::FreeSpace;
use crate::meta::{META_PAGES, Meta};
use crate::open::Rollback;
use crate::options::{DEFAULT_PAGE_SIZE, DatabaseBuilder, Options};
use crate::page;
use crate::pool::Pool;
use crate::resultset::{ResultSet, ResultSetPool};
use crate::stats::Stats;
use crate::storage::{FileStorage, OpenError, Storage};
use crate::txn::{CompactStep, OwnedReadTxn, ReadTxn, WriteTxn};
use parking_lot::Mutex;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};

/// Pages one step of [`Database::compact`] moves.
const COMPACT_BUDGET: u64 = 4096;
/// Steps [`Database::compact`] makes after the file's end last fell.
const COMPACT_STALLED_STEPS: u32 = 3;

/// An open database. `Send + Sync`: share it between threads by reference or `Arc`.
///
/// # Examples
///
/// One writer at a time, snapshot readers that never wait for it; a snapshot taken
/// with [`Database::begin_read_owned`] moves into another thread and keeps seeing its
/// version while the database commits newer ones.
///
/// ```
/// use quiredb_engine::{Database, Durability, PageKind, PageRead};
/// use std::sync::Arc;
///
/// let dir = tempfile::tempdir()?;
/// let db = Arc::new(Database::builder().cache_bytes(4 << 20).create(dir.path().join("db.quire"))?);
/// let txn = db.begin_write()?;
/// let mut page = txn.alloc_page(PageKind::structure(16))?;
/// let id = page.id();
/// page[..5].copy_from_slice(b"first");
/// drop(page);
/// txn.commit(Durability::Checksummed)?;
///
/// let snapshot = db.begin_read_owned()?;
/// let txn = db.begin_write()?;
/// txn.page_mut(id)?[..5].copy_from_slice(b"later");
/// txn.commit(Durability::Checksummed)?;
/// let seen = std::thread::spawn(move || snapshot.page(id).map(|page| page[..5].to_vec())).join().unwrap()?;
/// assert_eq!(seen, b"first");
/// assert_eq!(&db.begin_read()?.page(id)?[..5], b"later");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Database {
    core: Core,
}

const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<Database>();
};

/// What [`Database::compact`] did to the file's length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Compacted {
    /// The file's length before, in bytes.
    pub bytes_before: u64,
    /// The file's length after, in bytes.
    pub bytes_after: u64,
}

impl Database {
    /// Creates a new database at `path`, or opens it if it already holds one.
    /// A new file's directory entry is synced, so the file itself survives a power cut.
    pub fn create(path: impl AsRef<Path>, options: Options) -> Result<Database> {
        let path = path.as_ref();
        let existed = path.exists();
        let storage = open_file(path, Mode::Create)?;
        let db = Self::with_storage(Arc::new(storage), options, &path.display().to_string())?;
        if !existed {
            sync_directory(path)?;
        }
        Ok(db)
    }

    /// Opens an existing database at `path`.
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<Database> {
        let storage = open_file(path.as_ref(), Mode::ReadWrite)?;
        Self::open_storage(Arc::new(storage), options, &path.as_ref().display().to_string())
    }

    /// Opens an existing database at `path` for reading only: the file is opened
    /// read-only under a shared lock, nothing is ever written (no sync, no trimming at
    /// close), and [`Database::begin_write`] fails with [`Error::ReadOnly`]. For
    /// inspection (`quire info`, `quire check`) of a file that may hold a rejected meta.
    pub fn open_read_only(path: impl AsRef<Path>, options: Options) -> Result<Database> {
        let storage = open_file(path.as_ref(), Mode::ReadOnly)?;
        Self::open_storage_read_only(Arc::new(storage), options, &path.as_ref().display().to_string())
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
        Self::open_with(storage, options, name, false)
    }

    /// Opens the database held by `storage` for reading only (see [`Self::open_read_only`]).
    pub fn open_storage_read_only(storage: Arc<dyn Storage>, options: Options, name: &str) -> Result<Database> {
        Self::open_with(storage, options, name, true)
    }

    fn open_with(storage: Arc<dyn Storage>, options: Options, name: &str, read_only: bool) -> Result<Database> {
        let opened = crate::open::choose_meta(storage.as_ref(), options.page_size, name)?;
        let frames = options.validate(opened.meta.page_size)?;
        let recovered = crate::txn::recover_log(storage, opened, read_only)?;
        let (storage, opened) = (recovered.storage, recovered.opened);
        let (meta, slot) = (opened.meta, opened.slot);
        let core = Core {
            pool: Pool::with_huge_pages(meta.page_size as usize, frames, options.huge_pages)?,
            translations: crate::translations::Translations::new(frames),
            page_size: meta.page_size as usize,
            fanout: ((meta.page_size as usize - page::HEADER_SIZE) / 8) as u64,
            shared: Mutex::new(Shared::new(&meta, slot)),
            published: crate::readers::Published::new(&meta),
            readers: crate::readers::Readers::default(),
            free: Mutex::new(FreeSpace::default()),
            writer: std::sync::Mutex::new(()),
            writers: std::sync::atomic::AtomicUsize::new(0),
            poisoned: AtomicBool::new(false),
            result_sets: ResultSetPool::new(options.result_set_pool, options.result_set_max_bytes),
            mmap: options.mmap_reads.then(|| Mutex::new(None)),
            log: Mutex::new(recovered.log),
            log_wanted: options.commit_log_pages,
            auto_compact_percent: options.auto_compact_percent,
            group: crate::txn::GroupCommit::default(),
            writer_catalog: Mutex::new(None),
            group_commit: options.group_commit,
            spill_threshold: frames * options.dirty_limit_percent as usize / 100,
            path: name.to_owned(),
            file_len: AtomicU64::new(0),
            rollback: opened.rollback,
            txn_floor: opened.txn_floor,
            read_only,
            instance: next_instance(),
            storage,
        };
        if !read_only {
            // Whatever a killed process left in the page cache (a meta written just
            // before its sync) is made durable before anything new relies on it.
            core.storage.sync().map_err(|error| Error::io("sync at open", error))?;
        }
        Ok(Database { core })
    }

    /// A [`DatabaseBuilder`] over default [`Options`]: set what differs, then
    /// `create`, `open` or `open_read_only`.
    pub fn builder() -> DatabaseBuilder {
        DatabaseBuilder::default()
    }

    /// Starts a snapshot reader. Never waits for the writer.
    pub fn begin_read(&self) -> Result<ReadTxn<'_>> {
        Ok(ReadTxn::begin(&self.core))
    }

    /// Starts a snapshot reader that holds a share of the database instead of a
    /// borrow, so it can move into a spawned thread. Never waits for the writer.
    pub fn begin_read_owned(self: &Arc<Self>) -> Result<OwnedReadTxn> {
        Ok(OwnedReadTxn::begin(Arc::clone(self)))
    }

    pub(crate) fn core(&self) -> &Core {
        &self.core
    }

    /// Starts the write transaction, waiting for the current writer to finish.
    pub fn begin_write(&self) -> Result<WriteTxn<'_>> {
        self.core.check_writable()?;
        WriteTxn::begin(&self.core, self.core.lock_writer())
    }

    /// Starts the write transaction if no other writer is active.
    pub fn try_begin_write(&self) -> Result<Option<WriteTxn<'_>>> {
        self.core.check_writable()?;
        match self.core.try_lock_writer() {
            Some(guard) => WriteTxn::begin(&self.core, guard).map(Some),
            None => Ok(None),
        }
    }

    /// Pool and file counters, and what the oldest live reader holds back.
    pub fn stats(&self) -> Stats {
        let mut stats = self.core.pool.stats();
        if let Some(oldest) = self.core.readers.oldest() {
            stats.oldest_reader_txn = Some(oldest.0);
            stats.oldest_reader_commits_behind = self.core.published.txn().0.saturating_sub(oldest.0);
            stats.pages_held_by_readers = self.core.free.lock().freed_after(oldest) as u64;
        }
        stats
    }

    /// The newest committed meta readers see (with group commit, a commit whose append is
    /// still in flight is not shown yet).
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
        self.core.rollback.is_some()
    }

    /// What opening rejected, if it had to use the older meta page: which commit and
    /// why (see [`crate::Durability`] for when that happens). `None` after a clean open.
    pub fn rollback(&self) -> Option<&Rollback> {
        self.core.rollback.as_ref()
    }

    /// True when opened with [`Database::open_read_only`].
    pub fn is_read_only(&self) -> bool {
        self.core.read_only
    }

    /// Compacts the whole file now: [`Database::compact_step`] until a step changes
    /// nothing, then both meta slots are made to agree so the file can be cut to the
    /// last page in use. Returns the file length before and after. Pages that
    /// old snapshots still read stay (and so does what lies above them); readers and
    /// other writers are never blocked for longer than one step.
    pub fn compact(&self) -> Result<Compacted> {
        let before = self.core.file_len()?;
        // Each step copies the page-map path of what it moves and writes a commit record,
        // which may open a hole the next step fills: stop once the end stops falling.
        let (mut lowest_end, mut stalled) = (u64::MAX, 0);
        while stalled < COMPACT_STALLED_STEPS {
            let step = self.compact_step(COMPACT_BUDGET)?;
            // The newest commit's end (a reader's snapshot may trail it by an append).
            let end = self.core.head().page_count;
            stalled = if end < lowest_end { 0 } else { stalled + 1 };
            lowest_end = lowest_end.min(end);
            if step.done {
                break;
            }
        }
        let writer = self.core.lock_writer();
        if self.core.head_is_durable() {
            self.core.poison_on_io(self.core.mirror_meta())?;
        }
        self.core.cut_to_metas()?;
        drop(writer);
        Ok(Compacted { bytes_before: before, bytes_after: self.core.file_len()? })
    }

    /// One bounded step of online compaction: one write transaction that moves up to
    /// `budget` pages in use from the end of the file into free pages nearer its start
    /// (by remapping their logical ids: structures never notice), frees the end of the
    /// file that earlier steps emptied, and shortens the file to what both meta slots
    /// name. Readers keep their snapshots (a page one still reads is not reused until it
    /// finishes) and never wait; writers wait for one step at most. Call it repeatedly,
    /// e.g. between other work, until [`CompactStep::done`]; or let
    /// [`crate::DatabaseBuilder::auto_compact_percent`] run one step after commits.
    pub fn compact_step(&self, budget: u64) -> Result<CompactStep> {
        crate::txn::compact_step(&self.core, budget)
    }
}

impl Drop for Database {
    /// Returns the growth reserved ahead of use to the file system, so a closed file is
    /// as long as its pages. Best effort: a failure leaves a longer, equally valid file.
    /// Never cuts pages either meta slot still names (a rejected meta's included).
    fn drop(&mut self) {
        if self.core.check_writable().is_err() {
            return;
        }
        let page_size = self.core.page_size as u64;
        let Ok(len) = self.core.storage.len() else { return };
        let head = self.core.head().page_count;
        if len <= head * page_size {
            return;
        }
        let Ok(named) = self.core.pages_named_by_metas() else { return };
        let end = named.max(head) * page_size;
        if len > end {
            let _ = self.core.storage.truncate(end);
        }
    }
}

/// How long `open` keeps trying a lock held by someone else. A child process forked by
/// this program holds the parent's lock between `fork` and `exec` (the descriptor is
/// close-on-exec); the retry rides over that window and nothing longer.
const LOCK_RETRY: std::time::Duration = std::time::Duration::from_millis(250);

/// How a file is opened.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Create,
    ReadWrite,
    ReadOnly,
}

fn open_file(path: &Path, mode: Mode) -> Result<FileStorage> {
    if mode != Mode::Create && !path.exists() {
        let missing = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        return Err(Error::io(format!("opening {}", path.display()), missing));
    }
    let start = std::time::Instant::now();
    loop {
        let opened = match mode {
            Mode::ReadOnly => FileStorage::open_read_only(path),
            _ => FileStorage::open(path, mode == Mode::Create),
        };
        match opened {
            Ok(storage) => return Ok(storage),
            Err(OpenError::Locked) if start.elapsed() < LOCK_RETRY => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Err(OpenError::Locked) => return Err(Error::Locked { path: path.display().to_string() }),
            Err(OpenError::Io(error)) => return Err(Error::io(format!("opening {}", path.display()), error)),
        }
    }
}

/// Syncs the directory holding a newly created file, so its entry survives a power cut.
fn sync_directory(path: &Path) -> Result<()> {
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let sync = std::fs::File::open(parent).and_then(|dir| dir.sync_all());
    sync.map_err(|error| Error::io(format!("syncing directory {}", parent.display()), error))
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

/// A number no other database opened by this process has had.
fn next_instance() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}
