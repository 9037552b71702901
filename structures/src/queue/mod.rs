//! The paged queue (heap table): variable-length records appended at the tail,
//! read by [`RecordId`], scanned forward from the head or from any record, consumed
//! from the head (get-and-delete, like BDB's `DB_CONSUME`) and truncated at the head.
//!
//! A queue is a singly linked chain of [`DATA_PAGE`] pages in logical order, plus one
//! [`HEAD_PAGE`] — the catalog root, which never moves — holding the chain's ends
//! and the sequence numbers. Every record gets the next u64 sequence number; a
//! [`RecordId`] is (data page, sequence number), so `get` reads one page, no index:
//! slot = seq − page.first_seq. Sequence numbers also order ids (for truncation and
//! scans) and make stale ids detectable even when a freed page is reused.
//!
//! Queue head page (payload offsets, little-endian):
//!
//! | offset | size | field      | meaning                                   |
//! |-------:|-----:|------------|-------------------------------------------|
//! | 0      | 8    | magic      | `"QUIREQ01"`                              |
//! | 8      | 8    | head_page  | first data page, 0 = none                 |
//! | 16     | 8    | tail_page  | last data page, 0 = none                  |
//! | 24     | 8    | head_seq   | sequence number of the first live record  |
//! | 32     | 8    | next_seq   | sequence number of the next append        |
//! | 40     | 8    | data_pages | data pages in the chain                   |
//!
//! Data page (`P` = payload size = page size − 32; `w` = slot width, 2 bytes for
//! pages up to 32 KiB, 4 bytes for 64 KiB pages):
//!
//! | offset | size     | field     | meaning                                         |
//! |-------:|---------:|-----------|-------------------------------------------------|
//! | 0      | 8        | next      | next data page, 0 = last                        |
//! | 8      | 8        | first_seq | sequence number of slot 0                       |
//! | 16     | 8        | owner     | logical id of the queue's head page             |
//! | 24     | 2        | count     | records in the page (consumed ones included)    |
//! | 26     | 2        | flags     | 1 = variable mode, 2 = holds overflow records   |
//! | 28     | 4        | len_word  | fixed mode: every record's length; variable: data bytes used |
//! | 32     | …        | records   | record bytes, back to back, in slot order       |
//! | P−w·n  | w·n      | slots     | variable mode only: slot i at `P − w·(i+1)`: end offset of record i relative to 32; top bit = overflow |
//!
//! **Fixed mode** (a page whose records all have one length, e.g. the 32-byte meteo
//! records): no per-record overhead at all, record i at `32 + i·len`. The first record
//! of a different length converts the page to variable mode in place (writing the
//! slot array for the records already there) if it fits, else starts a new page.
//!
//! **Why records do not straddle pages.** A record goes whole into the tail page or
//! starts the next one; records longer than `P − 32 − w` go out of line (see
//! `overflow.rs`) and leave a 16-byte reference. The waste per page is less than one
//! record, so the fill is ≥ 1 − r/(P−32) for records of r bytes: 100 % for 32-byte
//! records (254 × 32 = 8128 exactly), 99.7 % for 100-byte records, ≥ 97 % for every
//! record up to 244 bytes in fixed mode; mixed lengths of mean m waste about m/2
//! per page. Not straddling keeps `get` to one page and the scan to one slice per
//! record with no reassembly; the file-size goal (payload + headers + 3 %) holds for
//! the meteo and label-list records this queue is for. Large mid-size records (1–8 KB)
//! can waste up to a record per page; those belong in blobs anyway.
//!
//! **Where the time goes** (T3, 2-core VM, callgrind and perf): appending a record of
//! the tail page's fixed length is a bounds check and a copy (75 M instructions for
//! 1 M 32-byte records, commits included); the rest of a batch is the engine's commit
//! (a checksum and a copy of each 8 KiB page, `pwrite`s of 1 MiB runs, the sync). A
//! scan visits each page where the engine holds it, without copying it; what remains
//! is the kernel's copy into the read buffer and the checksum.
//!
//! **Invariants** (checked by [`check()`]): the chain from `head_page` has
//! `data_pages` pages ending at `tail_page`; each page's `first_seq` is the previous
//! page's `first_seq + count`; the head page holds `head_seq` (or it equals the end),
//! the tail page ends at `next_seq`; every page's owner is the head page; slot offsets
//! increase and stay inside the page; overflow references are readable.
//! Emptied pages are freed at once (consume, truncate), the last one too: an empty
//! queue has no data page.
//!
//! Read next: `page.rs` (encoding), `builder.rs` (append), `reader.rs` (get, scan),
//! `consume.rs` (consume, truncate), `check.rs`.

mod builder;
mod check;
mod consume;
pub(crate) mod handle;
mod overflow;
mod page;
mod reader;

pub use builder::Appender;
pub use check::check;
pub use handle::{QueueDef, QueueHandle};
pub use reader::{Cursor, Lookup};

use crate::error::{Error, Result};
use crate::handles::OpenMark;
use page::{HeadState, corrupted};
use quiredb_engine::{PageId, PageKind, PageRead, StructureKind, WriteTxn};
use std::ops::ControlFlow;

/// The id of one record: its data page and its sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RecordId {
    /// Sequence number (ids compare by it: append order).
    pub seq: u64,
    /// Logical data page holding the record.
    pub page: PageId,
}

/// Parameter block stored in the catalog entry: format version.
const PARAMS: [u8; 1] = [1];

/// Page kind of a queue's data pages.
pub const DATA_PAGE: PageKind = PageKind::structure(22);
/// Page kind of a queue's head page, read by every append and get: kept in the pool longer.
pub const HEAD_PAGE: PageKind = PageKind::structure(23).indexing();

/// A queue opened in a transaction; holds no page. Reads work in any transaction;
/// writes need a write transaction, in which the handle is the queue's only one (a
/// second is [`Error::AlreadyOpen`]).
///
/// # Examples
///
/// ```
/// use quiredb_engine::{Database, Durability, storage::MemStorage};
/// use quiredb_structures::queue::Queue;
/// use std::sync::Arc;
///
/// let db = Database::builder().cache_bytes(4 << 20).with_storage(Arc::new(MemStorage::new()), "example")?;
/// let txn = db.begin_write()?;
/// let mut queue = Queue::create(&txn, "events")?;
/// let first = queue.append(b"sensor 1 up")?;
/// queue.append(b"sensor 2 up")?;
/// drop(queue);
/// txn.commit(Durability::Checksummed)?;
///
/// let snapshot = db.begin_read()?;
/// let queue = Queue::open(&snapshot, "events")?;
/// let mut record = Vec::new();
/// assert!(queue.get(first, &mut record)?);
/// assert_eq!(record, b"sensor 1 up");
/// assert_eq!(queue.len()?, 2);
/// # Ok::<(), quiredb_structures::Error>(())
/// ```
pub struct Queue<'t, T: PageRead> {
    txn: &'t T,
    core: Core,
    _mark: Option<OpenMark>,
}

/// A queue's catalog identity, with every operation taking the transaction; the
/// public handle is [`Queue`], which borrows its transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Core {
    name: String,
    root: PageId,
}

/// Sizes of a queue, for reports (see [`Queue::stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Live records.
    pub records: u64,
    /// Data pages in the chain.
    pub data_pages: u64,
}

impl Core {
    /// Creates an empty queue whose catalog entry records `extra` after the version
    /// byte (a typed queue's record type, see `handle.rs`).
    pub(crate) fn create(txn: &WriteTxn<'_>, name: &str, extra: &[u8]) -> Result<Core> {
        let root = {
            let mut page = txn.alloc_page(HEAD_PAGE)?;
            HeadState::default().encode(&mut page);
            page.id()
        };
        txn.create_structure(name, StructureKind::QUEUE, &[&PARAMS[..], extra].concat(), root)?;
        Ok(Core { name: name.to_owned(), root })
    }

    /// Opens the queue named `name`; also returns the catalog parameters after the
    /// version byte (empty for an untyped queue).
    pub(crate) fn open(txn: &impl PageRead, name: &str) -> Result<(Core, Vec<u8>)> {
        let entry = txn.catalog_entry(name)?.ok_or_else(|| quiredb_engine::Error::NoSuchStructure(name.to_owned()))?;
        match entry.params.split_first() {
            Some((&version, extra)) if entry.kind == StructureKind::QUEUE && version == PARAMS[0] => {
                Ok((Core { name: name.to_owned(), root: entry.root }, extra.to_vec()))
            }
            _ => {
                let found = format!("{} (parameters {:?})", entry.kind.name(), entry.params);
                Err(Error::WrongKind { name: name.to_owned(), found, expected: "queue (version 1)".into() })
            }
        }
    }

    /// Reads the head page.
    fn state(&self, txn: &impl PageRead) -> Result<HeadState> {
        let page = txn.page(self.root)?;
        if page.kind() != HEAD_PAGE {
            return Err(corrupted(&self.name, self.root.0, "catalog root is not a queue head page"));
        }
        HeadState::decode(&page, &self.name, self.root.0)
    }
}

impl<T: PageRead> std::fmt::Debug for Queue<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queue").field("name", &self.name()).finish()
    }
}

/// In a write transaction, the mark that `name` has a handle open there.
fn claim(txn: &impl PageRead, name: &str) -> Result<Option<OpenMark>> {
    match txn.snapshot_token() {
        Some(_) => Ok(None),
        None => OpenMark::claim(txn, name).map(Some),
    }
}

impl<'t, T: PageRead> Queue<'t, T> {
    /// Opens the queue named `name`; in a write transaction, [`Error::AlreadyOpen`]
    /// while another handle to it is open.
    pub fn open(txn: &'t T, name: &str) -> Result<Self> {
        Self::open_with_params(txn, name).map(|(queue, _)| queue)
    }

    /// [`Queue::open`], also returning the catalog parameters after the version byte
    /// (empty for an untyped queue).
    pub(crate) fn open_with_params(txn: &'t T, name: &str) -> Result<(Self, Vec<u8>)> {
        let mark = claim(txn, name)?;
        let (core, extra) = Core::open(txn, name)?;
        Ok((Queue { txn, core, _mark: mark }, extra))
    }

    /// The transaction the queue was opened in.
    pub fn txn(&self) -> &'t T {
        self.txn
    }

    /// Catalog name.
    pub fn name(&self) -> &str {
        &self.core.name
    }

    /// Number of live records.
    pub fn len(&self) -> Result<u64> {
        Ok(self.core.state(self.txn)?.len())
    }

    /// True when the queue holds no record.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Record and page counts.
    pub fn stats(&self) -> Result<QueueStats> {
        let state = self.core.state(self.txn)?;
        Ok(QueueStats { records: state.len(), data_pages: state.data_pages })
    }

    /// Copies record `id` into `out` (replacing its contents); false when the record
    /// is not live in this queue (consumed, truncated, or never existed).
    pub fn get(&self, id: RecordId, out: &mut Vec<u8>) -> Result<bool> {
        self.core.get(self.txn, id, out)
    }

    /// Repeated [`Queue::get`]s that keep the last page pinned and hand records out in
    /// place ([`Lookup`]).
    pub fn lookup(&self) -> Result<Lookup<'_, 't, T>> {
        self.core.lookup(self.txn)
    }

    /// Visits records in append order from the head (`from = None`) or from record
    /// `from` (an id already consumed starts at the head); `visit` returns
    /// `ControlFlow::Break(())` to stop. Returns how many records were visited.
    pub fn for_each(
        &self,
        from: Option<RecordId>,
        visit: impl FnMut(RecordId, &[u8]) -> ControlFlow<()>,
    ) -> Result<u64> {
        self.core.for_each(self.txn, from, visit)
    }

    /// A pull-style cursor from the head or from record `from` (see [`Queue::for_each`]).
    pub fn cursor(&self, from: Option<RecordId>) -> Result<Cursor<'_, 't, T>> {
        self.core.cursor(self.txn, from)
    }
}

impl<'t, 'db> Queue<'t, WriteTxn<'db>> {
    /// Creates an empty queue named `name`.
    pub fn create(txn: &'t WriteTxn<'db>, name: &str) -> Result<Self> {
        Self::create_with_params(txn, name, &[])
    }

    /// Creates an empty queue whose catalog entry records `extra` after the version
    /// byte (a typed queue's record type, see `handle.rs`).
    pub(crate) fn create_with_params(txn: &'t WriteTxn<'db>, name: &str, extra: &[u8]) -> Result<Self> {
        let mark = claim(txn, name)?;
        Ok(Queue { txn, core: Core::create(txn, name, extra)?, _mark: mark })
    }

    /// Opens the queue named `name`, creating it when absent.
    pub fn open_or_create(txn: &'t WriteTxn<'db>, name: &str) -> Result<Self> {
        match txn.catalog_entry(name)? {
            Some(_) => Queue::open(txn, name),
            None => Queue::create(txn, name),
        }
    }

    /// Drops the queue: removes it from the catalog and frees all its pages.
    pub fn drop_queue(mut self) -> Result<()> {
        self.clear()?;
        self.txn.drop_structure(&self.core.name)?;
        self.txn.free_page(self.core.root)?;
        Ok(())
    }

    /// Starts appending (see [`Appender`]).
    pub fn appender(&mut self) -> Result<Appender<'_, 't, 'db>> {
        self.core.appender(self.txn)
    }

    /// Appends one record; returns its id (an appender for one record).
    pub fn append(&mut self, record: &[u8]) -> Result<RecordId> {
        self.appender()?.append(record)
    }

    /// Removes the head record, copying it into `out` (replacing its contents);
    /// `None` when the queue is empty.
    pub fn consume(&mut self, out: &mut Vec<u8>) -> Result<Option<RecordId>> {
        self.core.consume(self.txn, out)
    }

    /// Removes every record before `first_kept` (which stays and becomes the head).
    /// `first_kept` must be a live record of this queue; ids at or before the head
    /// remove nothing. Returns the number of records removed.
    pub fn truncate_before(&mut self, first_kept: RecordId) -> Result<u64> {
        self.core.truncate_before(self.txn, first_kept)
    }

    /// Removes every record; returns how many there were.
    pub fn clear(&mut self) -> Result<u64> {
        self.core.clear(self.txn)
    }
}
