//! quiredb-engine: the storage core of QuireDB.
//!
//! Layers, bottom up (a lower layer never calls up):
//! 1. [`storage`] — the I/O seam: real file, in-memory file, faulty file.
//! 2. [`page`] and `meta` — page header, checksums, the two meta pages
//!    (`FORMAT.md` has the whole on-disk format).
//! 3. `pool` — the shared buffer pool of page frames (CLOCK eviction).
//! 4. `core` — page map lookups (logical → physical, a copy-on-write radix tree),
//!    through `translations`, a lock-free table of recent translations shared by all
//!    snapshots and kept right by every commit.
//! 5. [`txn`] — snapshot readers and the single writer (shadow paging, commit).
//! 6. `catalog`, [`resultset`], [`check`](mod@check) — named structures, recycled query
//!    buffers, integrity check.
//!
//! An application needs [`Database`], its transactions and [`Durability`]. A structure
//! author needs [`raw`]: structures use only logical pages — [`PageRead::page`] to
//! read, and [`WriteTxn::page_mut`], [`WriteTxn::alloc_page`], [`WriteTxn::free_page`]
//! to write — and the catalog. Each page has `page_size − 32` bytes of payload. The
//! modules `catalog`, `freespace`, `meta` and `pool` are private; the engine's own
//! tests and benches reach the few internals they craft files or measure with through
//! `testing`, which exists only with the `testing` feature (a dev-dependency).

mod catalog;
pub mod check;
mod core;
pub mod db;
pub mod error;
mod freespace;
mod meta;
mod open;
mod options;
pub mod page;
mod runcache;
// The bookkeeping sizes and `Pool::page_size` are read only by the engine's bench
// (through `testing`).
#[cfg_attr(not(feature = "testing"), allow(dead_code))]
mod pool;
mod readers;
mod rebuild;
pub mod resultset;
pub mod stats;
pub mod storage;
mod translations;
pub mod txn;

pub(crate) use txn::commit as commit_record;

pub use catalog::{CatalogEntry, StructureKind};
pub use check::{CheckReport, KindCount, check};
pub use db::{Compacted, Database};
pub use error::{Error, Result};
pub use meta::{Durability, Meta};
pub use open::Rollback;
pub use options::{DEFAULT_LOG_PAGES, DEFAULT_PAGE_SIZE, DatabaseBuilder, Options};
pub use page::{ENGINE_KINDS, HEADER_SIZE, KindName, PageId, PageKind, PhysId, TxnId};
pub use pool::prefetch_bytes;
pub use resultset::{ResultSet, ResultSetPool};
pub use stats::Stats;
pub use txn::{
    CompactStep, OwnedReadTxn, PREFETCHED_PAYLOAD, PageMut, PageRead, PageRef, ReadTxn, SnapshotToken, WriteTxn,
};

/// What a structure author builds on, and all of it: logical pages read through a
/// transaction ([`PageRead`], [`PageRef`]) and written in
/// the write transaction ([`PageMut`] borrows it), the catalog's entries
/// and kinds, page kinds (each structure defines its own with [`PageKind::structure`]),
/// little-endian field helpers, and the result-set buffers queries fill.
pub mod raw {
    pub use crate::catalog::{CatalogEntry, StructureKind};
    pub use crate::page::{
        HEADER_SIZE, KindName, PageId, PageKind, read_u16, read_u32, read_u64, write_u16, write_u32, write_u64,
    };
    pub use crate::resultset::ResultSet;
    pub use crate::txn::{PageMut, PageRead, PageRef, SnapshotToken, WriteTxn};
}

/// Internals for the engine's own tests and benches, and nothing else: the free-space
/// record layout (to craft damaged files) and the buffer pool with its bookkeeping
/// sizes (to measure). Only built with the `testing` feature, which the engine enables
/// for its tests and benches through a dev-dependency on itself.
#[cfg(feature = "testing")]
#[doc(hidden)]
pub mod testing {
    pub use crate::freespace::{RECORD_BODY, Record, record_page_body};
    pub use crate::pool::{FRAME_OVERHEAD_BYTES, MAP_ENTRY_BYTES, Pool};
}
