//! [`Options`], how a database is opened, and [`DatabaseBuilder`], the way to set them
//! (`Database::builder().cache_bytes(…).create(path)`). `Options` is
//! `#[non_exhaustive]`: new settings can be added without breaking callers, who read
//! its fields but build it through the builder. Ranges are checked when the database
//! opens (`Options::validate`), not when a setter is called. Read next: `db.rs`.

use crate::db::Database;
use crate::error::{Error, Result};
use crate::storage::Storage;
use std::path::Path;
use std::sync::Arc;

/// Default page size.
pub const DEFAULT_PAGE_SIZE: u32 = 8192;

/// How to open a database; built with [`Database::builder`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Options {
    /// Page size for a new file; when opening, `Some` must match the file.
    pub page_size: Option<u32>,
    /// Bytes of the buffer pool (frames are preallocated up front).
    pub cache_bytes: usize,
    /// Read through a memory map of the file (on by default; see
    /// [`DatabaseBuilder::mmap_reads`]).
    pub mmap_reads: bool,
    /// Advise the pool's memory for transparent huge pages (on by default; see
    /// [`DatabaseBuilder::huge_pages`]).
    pub huge_pages: bool,
    /// Idle result sets the database keeps for reuse.
    pub result_set_pool: usize,
    /// Largest result set (in bytes of buffers) that is kept for reuse.
    pub result_set_max_bytes: usize,
    /// Fraction of the pool a write transaction may fill with dirty pages before it
    /// writes some early (spills), in percent (1..=90). The default, 75, leaves readers
    /// a quarter of the pool; random inserts into a tree larger than the pool run about
    /// 25 % faster than with 50.
    pub dirty_limit_percent: u8,
    /// Pages of the commit log region (`txn/log.rs`; 0 = no log, else 64..=65536; 512 by
    /// default, 4 MiB at 8 KiB pages). With a log, a small `Full` or `Checksummed`
    /// commit appends what it changed (page deltas) to the log in one sequential write
    /// made durable on its own, instead of writing its pages in place and syncing the
    /// whole file; a checkpoint when the region is full folds them into the file. The
    /// region is allocated by the first commit (a file written without a log keeps
    /// format version 3 until then) and moved by compaction. With a log every meta
    /// written in place is `Full`.
    pub commit_log_pages: u64,
    /// With a commit log: logged commits of several threads share durable appends, two
    /// of which may be in flight at once (`txn/group.rs`); the writer lock is released
    /// before a commit waits for its append, so the next writer builds on it meanwhile.
    /// Readers see a commit only once it is durable, as without group commit. On by
    /// default: with four writers it makes 2.2× the durable commits a second that it
    /// does without, and one writer alone is no slower (reports/WRITE-PATH.md §31).
    pub group_commit: bool,
    /// Compact the file online as it goes: after a commit, when more than this share of
    /// the file (in percent, 1..=99) is free, the committing thread runs one
    /// [`crate::Database::compact_step`] of a few hundred pages before `commit`
    /// returns. `None` (the default): the file only shrinks when asked
    /// ([`crate::Database::compact`], `compact_step`).
    pub auto_compact_percent: Option<u8>,
}

/// Pages of the commit log by default ([`Options::commit_log_pages`]).
pub const DEFAULT_LOG_PAGES: u64 = 512;

impl Default for Options {
    fn default() -> Self {
        Options {
            page_size: None,
            cache_bytes: 64 << 20,
            mmap_reads: true,
            huge_pages: true,
            result_set_pool: 64,
            result_set_max_bytes: 4 << 20,
            dirty_limit_percent: 75,
            commit_log_pages: DEFAULT_LOG_PAGES,
            group_commit: true,
            auto_compact_percent: None,
        }
    }
}

impl Options {
    /// Checks the options against the file's `page_size`; returns the pool's frames.
    pub(crate) fn validate(&self, page_size: u32) -> Result<usize> {
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
        if self.commit_log_pages != 0 && !(64..=65536).contains(&self.commit_log_pages) {
            return Err(Error::InvalidOptions("commit_log_pages must be 0 (no log) or in 64..=65536".into()));
        }
        if self.auto_compact_percent.is_some_and(|percent| !(1..=99).contains(&percent)) {
            return Err(Error::InvalidOptions("auto_compact_percent must be in 1..=99".into()));
        }
        Ok(frames)
    }
}

/// Sets [`Options`] one at a time and opens a database with them.
///
/// # Examples
///
/// ```
/// use quiredb_engine::Database;
///
/// let dir = tempfile::tempdir()?;
/// let db = Database::builder().page_size(4096).cache_bytes(8 << 20).create(dir.path().join("db.quire"))?;
/// assert_eq!(db.page_size(), 4096);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default)]
#[must_use = "a builder does nothing until create, open or into_options is called"]
pub struct DatabaseBuilder {
    options: Options,
}

impl From<Options> for DatabaseBuilder {
    fn from(options: Options) -> Self {
        DatabaseBuilder { options }
    }
}

impl DatabaseBuilder {
    /// Page size of a new file (a power of two in 4096..=65536); when opening, it must
    /// match the file's. Unset: 8192 for a new file, the file's own when opening.
    pub fn page_size(mut self, bytes: u32) -> Self {
        self.options.page_size = Some(bytes);
        self
    }

    /// Bytes of the buffer pool, at least 64 pages; preallocated when the database opens.
    pub fn cache_bytes(mut self, bytes: usize) -> Self {
        self.options.cache_bytes = bytes;
        self
    }

    /// Read through a memory map of the file (on by default): pool misses copy from the
    /// map instead of `pread`, and once the pool is full, snapshots read pages that
    /// index no others (leaves, blobs, queue pages) in place from the map, checksummed
    /// the first time, instead of evicting a frame for each — the kernel's page cache
    /// becomes the cold tier, which is what makes a pool smaller than the data cheap
    /// (issue 22: 3.4 → 1.2 µs per lookup with a pool of a quarter of the data).
    ///
    /// A mapped page the kernel cannot read (a disk error, a file cut short by another
    /// process) raises `SIGBUS`; the engine installs a handler for it, chained to any
    /// earlier one, that turns such a read into [`crate::Error::Io`] (the read is
    /// retried with `pread`, which reports the disk's error). A program that installs
    /// its own `SIGBUS` handler afterwards, without chaining, should turn this off.
    /// Off: every pool miss is a `pread` into a frame.
    pub fn mmap_reads(mut self, on: bool) -> Self {
        self.options.mmap_reads = on;
        self
    }

    /// Puts the buffer pool on transparent huge pages (Linux, where they are enabled
    /// for `madvise`; on by default): fewer TLB misses for reads over a pool larger than
    /// the CPU caches. The kernel clears each 2 MiB of the pool whole when it is first
    /// used; a thread of the pool's (the toucher) does that a little ahead of the frames
    /// the pool is about to take, so reads and writes do not wait for it. On a VM whose
    /// balloon takes free memory back that clearing costs 3–4 ms per MiB of CPU, while
    /// small pages may reuse memory the process freed shortly before for a sixth of
    /// that: a program that opens databases briefly, with a small working set, may turn
    /// this off. See `pool/memory.rs` for the measurements.
    pub fn huge_pages(mut self, on: bool) -> Self {
        self.options.huge_pages = on;
        self
    }

    /// Idle result sets the database keeps for reuse.
    pub fn result_set_pool(mut self, count: usize) -> Self {
        self.options.result_set_pool = count;
        self
    }

    /// Largest result set (in bytes of buffers) that is kept for reuse.
    pub fn result_set_max_bytes(mut self, bytes: usize) -> Self {
        self.options.result_set_max_bytes = bytes;
        self
    }

    /// Percent of the pool (1..=90) a writer may fill with dirty pages before it
    /// writes some early ([`Options::dirty_limit_percent`]).
    pub fn dirty_limit_percent(mut self, percent: u8) -> Self {
        self.options.dirty_limit_percent = percent;
        self
    }

    /// Pages of the commit log region, 0 = none ([`Options::commit_log_pages`]).
    pub fn commit_log_pages(mut self, pages: u64) -> Self {
        self.options.commit_log_pages = pages;
        self
    }

    /// Logged commits of several threads share durable appends ([`Options::group_commit`]).
    pub fn group_commit(mut self, on: bool) -> Self {
        self.options.group_commit = on;
        self
    }

    /// Runs a compaction step after commits that leave more than `percent` % of the
    /// file free ([`Options::auto_compact_percent`]).
    pub fn auto_compact_percent(mut self, percent: u8) -> Self {
        self.options.auto_compact_percent = Some(percent);
        self
    }

    /// The options set so far.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The options set so far, for the `Database` functions that take them.
    pub fn into_options(self) -> Options {
        self.options
    }

    /// [`Database::create`]: creates the database at `path`, or opens the one there.
    pub fn create(self, path: impl AsRef<Path>) -> Result<Database> {
        Database::create(path, self.options)
    }

    /// [`Database::open`]: opens an existing database at `path`.
    pub fn open(self, path: impl AsRef<Path>) -> Result<Database> {
        Database::open(path, self.options)
    }

    /// [`Database::open_read_only`]: opens `path` for reading only.
    pub fn open_read_only(self, path: impl AsRef<Path>) -> Result<Database> {
        Database::open_read_only(path, self.options)
    }

    /// [`Database::with_storage`]: creates a database in an empty `storage`, else opens it.
    pub fn with_storage(self, storage: Arc<dyn Storage>, name: &str) -> Result<Database> {
        Database::with_storage(storage, self.options, name)
    }

    /// [`Database::open_storage`]: opens the database held by `storage`.
    pub fn open_storage(self, storage: Arc<dyn Storage>, name: &str) -> Result<Database> {
        Database::open_storage(storage, self.options, name)
    }
}
