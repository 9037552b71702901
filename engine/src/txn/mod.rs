//! Transactions: snapshot readers ([`ReadTxn`]) and the single writer ([`WriteTxn`]),
//! and the page handles they give out ([`PageRef`], [`PageMut`]).
//!
//! Life cycle of a write transaction:
//!
//! ```text
//!   begin_write ──> Active ──commit──> Committed (snapshot published)
//!                     │ └──I/O error──> Failed (handle poisoned, state as before)
//!                     └──drop────────> Aborted (nothing reached the snapshot)
//! ```
//!
//! Structures see only logical pages: [`PageRead::page`] for reading in either kind
//! of transaction, and `WriteTxn::{page_mut, alloc_page, free_page}` for writing.

mod ahead;
pub(crate) mod commit;
mod compact;
mod delta;
mod direct;
mod group;
mod log;
mod logged;
mod pagemap;

mod read;
mod write;
mod writeback;

pub use compact::CompactStep;
pub(crate) use compact::{auto_compact, compact_step};
pub(crate) use group::GroupCommit;
pub(crate) use log::{LogState, recover as recover_log};
pub use read::{OwnedReadTxn, PREFETCHED_PAYLOAD, ReadTxn};
pub use write::WriteTxn;

use crate::catalog::CatalogEntry;
use crate::error::Result;
use crate::page::{self, HEADER_SIZE, PageId, PageKind, TxnId};
use crate::pool::{ReadGuard, WriteGuard};
use crate::resultset::ResultSet;
use std::ops::{Deref, DerefMut};

/// Names one committed snapshot of one open database (see
/// [`PageRead::snapshot_token`]). A transaction id alone does not: a write transaction
/// that rolls back leaves its id to the next one, with other contents, and another
/// database (or the same file reopened after a crash) has its own ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SnapshotToken {
    instance: u64,
    txn: TxnId,
}

impl SnapshotToken {
    pub(crate) fn new(instance: u64, txn: TxnId) -> Self {
        SnapshotToken { instance, txn }
    }
}

/// Read access to the pages of a snapshot; implemented by both transaction kinds so a
/// structure's read path is written once.
pub trait PageRead {
    /// Pins logical page `id` for reading. The slice is the page *payload* (the bytes
    /// after the engine's 32-byte header), [`PageRead::payload_size`] long.
    fn page(&self, id: PageId) -> Result<PageRef<'_>>;
    /// Calls `f` with page `id` and returns what it returns: for a page used only
    /// briefly, such as a branch on a descent's way to a leaf. The default pins the page
    /// for the call. A snapshot reads a page that indexes others without a pin when it
    /// can (`Pool::peek_seen`, `pool/grace.rs`): two readers passing the same root then
    /// write nothing the other must fetch back.
    #[inline(always)]
    fn with_page<R>(&self, id: PageId, f: impl FnOnce(&PageRef<'_>) -> R) -> Result<R> {
        Ok(f(&self.page(id)?))
    }
    /// A hint that page `id` will be read soon, the payload byte ranges `ranges` first:
    /// if the page is cached and its translation known, the CPU is asked to bring those
    /// bytes into its caches, so their misses overlap the caller's work until it reads
    /// them. No pin, no I/O, no error; a structure walking a tree calls it for the nodes
    /// it will open next. The default does nothing.
    #[inline]
    fn prefetch(&self, id: PageId, ranges: &[std::ops::Range<usize>]) {
        let _ = (id, ranges);
    }
    /// Copies bytes `skip..skip + out.len()` of the payloads of pages `ids`, all of
    /// `kind`, laid end to end, into `out`: for data read once (a blob's pages, a
    /// scan's), `ahead` naming how many pages the caller expects to read next. The
    /// default pins each page. A snapshot copies a page the pool holds from its frame
    /// and reads the others from the file without taking a frame (nothing is evicted):
    /// with the pages physically after them, up to `ids.len() + ahead` pages in one
    /// read, each verified as a pool load verifies it before it is copied
    /// (`txn/direct.rs`). A page of another kind is `Corrupted`. Panics if the range
    /// reaches past the pages (a caller's bug).
    fn read_payloads(&self, ids: &[PageId], kind: PageKind, skip: usize, ahead: usize, out: &mut [u8]) -> Result<()> {
        let _ = ahead;
        let payload = self.payload_size();
        assert!(skip + out.len() <= ids.len() * payload, "read past the pages given");
        let (mut done, mut index, mut within) = (0, skip / payload, skip % payload);
        while done < out.len() {
            let take = (out.len() - done).min(payload - within);
            let page = self.page(ids[index])?;
            if page.kind() != kind {
                let reason = format!("kind {} where {} was expected", page.kind().code(), kind.code());
                return Err(crate::Error::corrupted_logical(page.id(), reason));
            }
            out[done..done + take].copy_from_slice(&page[within..within + take]);
            (done, index, within) = (done + take, index + 1, 0);
        }
        Ok(())
    }
    /// Calls `visit` with the payload of page `id`, of `kind`, where it lies — no copy:
    /// the one-page form of [`PageRead::read_payloads`] for a scan that reads each page
    /// once, `ahead` naming how many pages it expects to read next. The default pins the
    /// page. A snapshot visits the page in the buffer an earlier read past the pool
    /// brought it into, else in its pool frame (pinned while `visit` runs), else reads
    /// it past the pool as `read_payloads` does, verified before `visit` sees it. A page
    /// of another kind is `Corrupted`; `visit` is not called on an error.
    fn visit_payload(&self, id: PageId, kind: PageKind, ahead: usize, visit: &mut dyn FnMut(&[u8])) -> Result<()> {
        let _ = ahead;
        let page = self.page(id)?;
        if page.kind() != kind {
            let reason = format!("kind {} where {} was expected", page.kind().code(), kind.code());
            return Err(crate::Error::corrupted_logical(page.id(), reason));
        }
        visit(&page);
        Ok(())
    }
    /// Bytes of payload per page (page size − 32).
    fn payload_size(&self) -> usize;
    /// The snapshot's (or the writer's new) transaction id.
    fn txn_id(&self) -> TxnId;
    /// The committed snapshot this transaction reads, `None` in a write transaction
    /// (whose pages change as it writes). Equal tokens mean equal contents that never
    /// change, so a structure may reuse what it decoded under one token, such as its
    /// root, for as long as it sees that token again.
    fn snapshot_token(&self) -> Option<SnapshotToken>;
    /// Looks up a named structure in the catalog.
    fn catalog_entry(&self, name: &str) -> Result<Option<CatalogEntry>>;
    /// Every catalog entry, in name order.
    fn catalog_list(&self) -> Result<Vec<CatalogEntry>>;
    /// An empty result set from the database's recycling pool.
    fn result_set(&self) -> ResultSet;
}

/// A pinned page for reading. While it lives the frame cannot be evicted (or, for a
/// page served in place from the file's memory map, the map cannot go).
pub struct PageRef<'a> {
    bytes: PageBytes<'a>,
    id: PageId,
}

/// Where the bytes of a [`PageRef`] are (header included).
enum PageBytes<'a> {
    /// A pinned pool frame.
    Frame(ReadGuard<'a>),
    /// Bytes that stay put while the page reference lives, without a pin: the page in
    /// the file's memory map, checksummed once (`pool::Verified`), or a pool frame read
    /// unpinned within [`PageRead::with_page`] (`pool/grace.rs`).
    Unpinned(&'a [u8]),
}

impl<'a> PageRef<'a> {
    pub(crate) fn new(guard: ReadGuard<'a>, id: PageId) -> Self {
        PageRef { bytes: PageBytes::Frame(guard), id }
    }

    /// A page read in place from the file's memory map, or from a pool frame unpinned
    /// ([`crate::pool::Pool::peek_seen`]).
    pub(crate) fn unpinned(bytes: &'a [u8], id: PageId) -> Self {
        PageRef { bytes: PageBytes::Unpinned(bytes), id }
    }

    /// The whole page, header included.
    #[inline]
    fn whole(&self) -> &[u8] {
        match &self.bytes {
            PageBytes::Frame(guard) => &guard.bytes,
            PageBytes::Unpinned(bytes) => bytes,
        }
    }

    /// Logical id of the page.
    pub fn id(&self) -> PageId {
        self.id
    }

    /// Kind the page was allocated with.
    #[inline]
    pub fn kind(&self) -> PageKind {
        page::kind_of(self.whole())
    }

    /// Transaction that wrote this version of the page. Together with the logical id it
    /// names the version: a structure may cache a decoded page keyed by both.
    pub fn txn(&self) -> TxnId {
        page::header(self.whole()).txn
    }
}

impl Deref for PageRef<'_> {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        &self.whole()[HEADER_SIZE..]
    }
}

/// A page of the running write transaction, locked for writing; dropping it releases
/// the lock (the page stays dirty). It borrows its transaction, so the compiler refuses
/// to commit or abort while one is alive — a commit never meets a page half written:
///
/// ```compile_fail,E0505
/// # use quiredb_engine::{Database, Durability, Options, PageKind, storage::MemStorage};
/// # let db = Database::with_storage(std::sync::Arc::new(MemStorage::new()), Options::default(), "m").unwrap();
/// let txn = db.begin_write().unwrap();
/// let mut page = txn.alloc_page(PageKind::structure(16)).unwrap();
/// txn.commit(Durability::Full).unwrap(); // error: `txn` is borrowed by `page`
/// page[0] = 1;
/// ```
///
/// ```compile_fail,E0505
/// # use quiredb_engine::{Database, Options, PageKind, storage::MemStorage};
/// # let db = Database::with_storage(std::sync::Arc::new(MemStorage::new()), Options::default(), "m").unwrap();
/// let txn = db.begin_write().unwrap();
/// let mut page = txn.alloc_page(PageKind::structure(16)).unwrap();
/// drop(txn); // error: an abort with a page still locked
/// page[0] = 1;
/// ```
///
/// Dropping the page first is the way:
///
/// ```
/// # use quiredb_engine::{Database, Durability, Options, PageKind, storage::MemStorage};
/// # let db = Database::with_storage(std::sync::Arc::new(MemStorage::new()), Options::default(), "m").unwrap();
/// let txn = db.begin_write().unwrap();
/// let mut page = txn.alloc_page(PageKind::structure(16)).unwrap();
/// page[0] = 1;
/// drop(page);
/// txn.commit(Durability::Full).unwrap();
/// ```
pub struct PageMut<'a> {
    guard: WriteGuard<'a>,
    id: PageId,
}

impl<'a> PageMut<'a> {
    pub(crate) fn new(guard: WriteGuard<'a>, id: PageId) -> Self {
        PageMut { guard, id }
    }

    /// Logical id of the page.
    pub fn id(&self) -> PageId {
        self.id
    }

    /// Kind the page was allocated with.
    pub fn kind(&self) -> PageKind {
        page::kind_of(&self.guard.bytes)
    }
}

impl Deref for PageMut<'_> {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        &self.guard.bytes[HEADER_SIZE..]
    }
}

impl DerefMut for PageMut<'_> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.guard.bytes[HEADER_SIZE..]
    }
}
