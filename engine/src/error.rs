//! The engine's one error type.
//!
//! Three kinds of failure (see STYLE.md): our own bugs are `assert!`/`expect`; bad bytes
//! on disk and bad input are values of [`Error`] that name what and where; operating
//! system failures arrive as [`Error::Io`], after which the database refuses further
//! writes ([`Error::Poisoned`]) until it is reopened.

use crate::page::{PageId, PhysId, TxnId};
use std::io;

/// Result alias of the engine.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the engine.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The operating system failed an I/O operation.
    #[error("I/O error during {operation}: {source}")]
    Io {
        /// What the engine was doing (`"read page 17"`, `"sync"`, …).
        operation: String,
        /// The OS error (EIO, ENOSPC, …).
        source: io::Error,
    },
    /// A page failed verification: its bytes are not what the engine wrote there.
    #[error("corrupted page {page}: {reason}")]
    Corrupted {
        /// Physical page number.
        page: PhysId,
        /// What check failed.
        reason: String,
    },
    /// The file is not a QuireDB database.
    #[error("{path} is not a QuireDB database (bad magic number)")]
    NotADatabase {
        /// The file that was opened.
        path: String,
    },
    /// The file was written in a format version this build does not read (version 1,
    /// before the compact commit record, or a newer one).
    #[error("database format version {found} is not supported: this build reads and writes version {supported}")]
    FormatVersion {
        /// Version found in the file.
        found: u32,
        /// Version this build writes.
        supported: u32,
    },
    /// The file's page size differs from the one requested in [`crate::Options`].
    #[error("page size mismatch: the file uses {found} bytes, the options ask for {requested}")]
    PageSizeMismatch {
        /// Page size stored in the file.
        found: u32,
        /// Page size requested by the caller.
        requested: u32,
    },
    /// The file is shorter than its meta page says.
    #[error("truncated database file: {found} bytes, at least {expected} expected")]
    Truncated {
        /// Length of the file.
        found: u64,
        /// Minimum length the meta page implies.
        expected: u64,
    },
    /// Another process (or another handle) holds the database open.
    #[error("database {path} is locked by another process")]
    Locked {
        /// The file that was opened.
        path: String,
    },
    /// An earlier I/O error left the handle unable to write; reopen the database.
    #[error("database refuses writes after an earlier I/O error; reopen it")]
    Poisoned,
    /// The options are out of range.
    #[error("invalid options: {0}")]
    InvalidOptions(String),
    /// A named structure does not exist in the catalog.
    #[error("no structure named {0:?} in the catalog")]
    NoSuchStructure(String),
    /// A named structure already exists in the catalog.
    #[error("a structure named {0:?} already exists")]
    StructureExists(String),
    /// A catalog name or parameter block is too long.
    #[error("catalog entry too large: {0}")]
    CatalogEntryTooLarge(String),
    /// A logical page holds something other than what its structure expects.
    #[error("corrupted logical page {page}: {reason}")]
    CorruptedLogical {
        /// Logical page id.
        page: PageId,
        /// What check failed.
        reason: String,
    },
    /// A page is locked for writing in this transaction and was asked for again: two
    /// handles on one page, or a corrupt file that uses one physical page twice.
    #[error("logical page {0} is already locked by this transaction")]
    PageBusy(u64),
    /// The database was opened read-only and a write was asked for.
    #[error("the database was opened read-only")]
    ReadOnly,
    /// A logical page id that is not mapped in this snapshot.
    #[error("logical page {0} is not allocated")]
    UnmappedPage(u64),
    /// The write transaction touches more pages than the buffer pool can hold pinned.
    #[error("buffer pool exhausted: all {frames} frames are pinned")]
    PoolExhausted {
        /// Number of frames in the pool.
        frames: usize,
    },
    /// The transaction id space is exhausted (never expected in practice).
    #[error("transaction id {0} cannot be advanced")]
    TxnIdOverflow(TxnId),
}

impl Error {
    /// Wraps an OS error with what the engine was doing.
    pub(crate) fn io(operation: impl Into<String>, source: io::Error) -> Self {
        Error::Io { operation: operation.into(), source }
    }

    /// Builds a corruption error for a logical page.
    pub(crate) fn corrupted_logical(page: PageId, reason: impl Into<String>) -> Self {
        Error::CorruptedLogical { page, reason: reason.into() }
    }

    /// Builds a corruption error for a physical page.
    pub(crate) fn corrupted(page: PhysId, reason: impl Into<String>) -> Self {
        Error::Corrupted { page, reason: reason.into() }
    }
}
