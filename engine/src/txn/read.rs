//! Snapshot readers: [`ReadTxn`] borrows its database, [`OwnedReadTxn`] holds an
//! `Arc<Database>` so it can move into a spawned thread or a task. Both are one
//! `Snapshot` that copies the published meta and announces itself so that the pages
//! it can see are not reused, without a lock (`readers.rs`); a reader never waits for
//! the writer, for a commit's sync, or for other readers.

use super::{PageRead, PageRef, SnapshotToken};
use crate::catalog::{self, CatalogEntry};
use crate::core::{Core, SnapshotMap};
use crate::db::Database;
use crate::error::{Error, Result};
use crate::meta::Meta;
use crate::page::{HEADER_SIZE, PageId, PageKind, PhysId, TxnId};
use crate::pool::Phase;
use crate::readers::Announcement;
use crate::resultset::ResultSet;
use std::cell::{Cell, OnceCell};
use std::sync::Arc;

/// Cache lines at the start of a page fetched into the CPU caches while its frame is
/// pinned: the page header and what a structure reads first (a B+tree node's header
/// and about 50 key prefixes).
const PAGE_HEAD_LINES: usize = 8;

/// Bytes of those lines.
const PAGE_HEAD_BYTES: usize = PAGE_HEAD_LINES * 64;

/// Bytes at the start of a page's payload (after its header) that a snapshot's read
/// asks the CPU for with the frame (the page's first eight cache lines): a structure
/// that knows it will read further (a large node's key prefixes) asks for the rest
/// itself.
pub const PREFETCHED_PAYLOAD: usize = PAGE_HEAD_BYTES - HEADER_SIZE;

/// What keeps the database's core alive for a snapshot: a borrow or an `Arc`.
trait CoreHolder {
    fn core(&self) -> &Core;
}

impl CoreHolder for &Core {
    fn core(&self) -> &Core {
        self
    }
}

impl CoreHolder for Arc<Database> {
    fn core(&self) -> &Core {
        Database::core(self)
    }
}

/// One announced snapshot over a core held by `H`.
///
/// Pages are found through the database-wide translation table (`translations.rs`),
/// so the hot pages of a structure cost one pool probe from the snapshot's first
/// query on, instead of one per page-map level plus one; and once a snapshot was seen
/// to read a frame's page, through the frame hint alone (`Pool::pin_seen`): a pin and
/// a header check, no translation.
struct Snapshot<H: CoreHolder> {
    holder: H,
    meta: Meta,
    /// Where this reader announced its snapshot.
    announced: Announcement,
    /// The catalog, parsed on first use (it cannot change within a snapshot).
    catalog: OnceCell<catalog::Catalog>,
    /// The file's memory map reaching every page of the snapshot, taken at the first
    /// page read in place ([`crate::Options::mmap_reads`]).
    map: SnapshotMap,
    /// Calls of [`PageRead::with_page`] reading unpinned, one inside the other
    /// (`Entered`).
    unpinned: Cell<u32>,
}

/// A reader's phase entered for reads without a pin, left when the outermost one is
/// dropped (`nested` counts the ones around it).
struct Entered<'a> {
    nested: &'a Cell<u32>,
    phase: &'a Phase,
}

impl<'a> Entered<'a> {
    #[inline(always)]
    fn enter(nested: &'a Cell<u32>, phase: &'a Phase) -> Self {
        let depth = nested.get();
        if depth == 0 {
            phase.enter();
        }
        nested.set(depth + 1);
        Entered { nested, phase }
    }
}

impl Drop for Entered<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        let depth = self.nested.get() - 1;
        self.nested.set(depth);
        if depth == 0 {
            self.phase.leave();
        }
    }
}

impl<H: CoreHolder> Snapshot<H> {
    /// Announces a reader of the newest snapshot, retrying if a commit published a
    /// newer one meanwhile (the protocol of `readers.rs`). Never waits on a lock.
    fn begin(holder: H) -> Self {
        let core = holder.core();
        loop {
            let meta = core.published.load();
            let announced = core.readers.announce(meta.txn);
            if core.published.txn() == meta.txn {
                let (catalog, map, unpinned) = (OnceCell::new(), SnapshotMap::default(), Cell::new(0));
                return Snapshot { holder, meta, announced, catalog, map, unpinned };
            }
            core.readers.withdraw(announced, meta.txn);
        }
    }

    /// With [`crate::Options::mmap_reads`] and a full pool, a page that indexes no
    /// others is read in place from the file's memory map (checksummed the first time,
    /// `pool::Verified`) instead of evicting a frame for a copy of it: the kernel's page
    /// cache is then the cold tier, as for LMDB, and the pool keeps the inner levels
    /// and the pages read before it filled. `None`: read it through the pool.
    fn read_mapped<'s>(&'s self, core: &'s Core, phys: PhysId, id: PageId) -> Result<Option<PageRef<'s>>> {
        if core.mmap.is_none() || !core.pool.is_full() {
            return Ok(None);
        }
        // mutant: the map serves a page whose newest bytes are in the pool, unwritten
        let listed = if cfg!(quire_mutant = "mmap_past_pool") { None } else { core.pool.lookup(phys) };
        if let Some((guard, frame)) = listed {
            crate::page::verify_identity(&guard.bytes, phys, None, id.0)?;
            core.translations.remember_frame(id, frame);
            core.pool.saw(frame, &guard, self.meta.txn.0);
            return Ok(Some(PageRef::new(guard, id)));
        }
        let page_size = core.page_size;
        let Some(map) = self.map.get(core, &self.meta) else { return Ok(None) };
        let start = phys.0 as usize * page_size;
        let Some(bytes) = map.page(start..start + page_size) else { return Ok(None) };
        // The lines a pooled page's read asks for with its frame: the header's miss and
        // the prefixes' then overlap here too.
        crate::pool::prefetch_bytes(&bytes[..PAGE_HEAD_BYTES.min(page_size)]);
        if crate::pool::Pool::is_index_kind(crate::page::header(bytes).kind) {
            return Ok(None);
        }
        core.verify_mapped(bytes, phys, None, id.0, self.meta.txn)?;
        Ok(Some(PageRef::unpinned(bytes, id)))
    }

    /// [`PageRead::with_page`]: `f` on page `id` read unpinned, if its frame hint names a
    /// frame the pool lets this reader read so ([`crate::pool::Pool::peek_seen`]); `Err(f)`
    /// otherwise: loads only, nothing written that another reader's core would have to
    /// fetch back. The reader's phase ([`crate::pool::Pool::phase`] of its reader slot)
    /// enters before the frame is looked at, unless a call around this one entered it,
    /// and leaves when `f` has returned (or unwound), so that the pool's grace periods
    /// (`pool/grace.rs`) wait for this reader only while it reads unpinned.
    #[inline(always)]
    fn with_page_unpinned<R, F: FnOnce(&PageRef<'_>) -> R>(&self, id: PageId, f: F) -> std::result::Result<R, F> {
        let core = self.holder.core();
        let (Some(frame), Announcement::Slot(at)) = (core.translations.frame_hint(id), self.announced) else {
            return Err(f);
        };
        core.pool.prefetch_frame_head::<PAGE_HEAD_LINES>(frame);
        if !core.pool.peekable(frame) {
            return Err(f);
        }
        let _phase = Entered::enter(&self.unpinned, core.pool.phase(at));
        // SAFETY: the phase entered (here or around this call) and leaves only when
        // `_phase` drops, after `f`'s last use of the bytes.
        match unsafe { core.pool.peek_seen(frame, self.meta.txn.0) } {
            Some(bytes) if crate::page::logical_of(bytes) == id.0 => Ok(f(&PageRef::unpinned(bytes, id))),
            _ => Err(f),
        }
    }

    /// [`PageRead::page`] of `id` when the frame it hints at was not seen by this
    /// snapshot: translated, then pinned through the hint, the map or the pool's table
    /// (reading it on a miss); the frame found is then known to this snapshot
    /// ([`crate::pool::Pool::saw`]), so the next read of `id` skips the translation. Out
    /// of line, so that the seen hit, a hot page's usual case, is small enough to be
    /// inlined into its caller.
    #[inline(never)]
    fn page_translated<'s>(&'s self, core: &'s Core, id: PageId, hint: Option<u32>) -> Result<PageRef<'s>> {
        let Some(phys) = core.translate(&self.meta, id)? else { return Err(Error::UnmappedPage(id.0)) };
        if let Some(frame) = hint
            && let Some(guard) = core.pool.lookup_frame(frame, phys)
        {
            crate::page::verify_identity(&guard.bytes, phys, None, id.0)?;
            core.pool.saw(frame, &guard, self.meta.txn.0);
            return Ok(PageRef::new(guard, id));
        }
        if let Some(page) = self.read_mapped(core, phys, id)? {
            return Ok(page);
        }
        let (guard, frame) = core.read_committed_frame(phys, None, id.0, self.meta.txn)?;
        core.translations.remember_frame(id, frame);
        core.pool.saw(frame, &guard, self.meta.txn.0);
        Ok(PageRef::new(guard, id))
    }

    /// This snapshot as reads past the pool see it (`direct.rs`), with the map
    /// `read_mapped` uses.
    fn direct(&self) -> super::direct::Snap<'_> {
        let token = SnapshotToken::new(self.holder.core().instance, self.meta.txn);
        super::direct::Snap { meta: &self.meta, token, map: &self.map }
    }

    fn catalog(&self) -> Result<&catalog::Catalog> {
        if let Some(catalog) = self.catalog.get() {
            return Ok(catalog);
        }
        let loaded = catalog::Catalog::load(self, self.meta.catalog_root)?;
        Ok(self.catalog.get_or_init(|| loaded))
    }
}

impl<H: CoreHolder> Drop for Snapshot<H> {
    fn drop(&mut self) {
        self.holder.core().readers.withdraw(self.announced, self.meta.txn);
    }
}

impl<H: CoreHolder> PageRead for Snapshot<H> {
    /// A page read: the frame hint is read first and the frame pinned if this snapshot
    /// was seen to read its page ([`crate::pool::Pool::pin_seen`]) and the page is
    /// `id`, with no translation: a hot page's usual case, one pin and one header
    /// check. Otherwise [`Snapshot::page_translated`]. Always inlined: with the rest out
    /// of line what is left is small, and a B+tree descent calling it paid a sixth of it
    /// in the call itself (saved registers, the result moved through memory).
    #[inline(always)]
    fn page(&self, id: PageId) -> Result<PageRef<'_>> {
        let core = self.holder.core();
        let hint = core.translations.frame_hint(id);
        if let Some(frame) = hint {
            core.pool.prefetch_frame_head::<PAGE_HEAD_LINES>(frame);
            if let Some(guard) = core.pool.pin_seen(frame, self.meta.txn.0)
                && crate::page::logical_of(&guard.bytes) == id.0
            {
                return Ok(PageRef::new(guard, id));
            }
        }
        self.page_translated(core, id, hint)
    }

    #[inline(always)]
    fn with_page<R>(&self, id: PageId, f: impl FnOnce(&PageRef<'_>) -> R) -> Result<R> {
        match self.with_page_unpinned(id, f) {
            Ok(done) => Ok(done),
            Err(f) => Ok(f(&self.page(id)?)),
        }
    }

    #[inline]
    fn prefetch(&self, id: PageId, ranges: &[std::ops::Range<usize>]) {
        let core = self.holder.core();
        if let Some(frame) = core.translations.frame_hint(id) {
            core.pool.prefetch_frame(frame, HEADER_SIZE, ranges);
        } else if let Some(phys) = core.translations.get(id, self.meta.txn) {
            core.pool.prefetch(phys, HEADER_SIZE, ranges);
        }
    }

    fn read_payloads(&self, ids: &[PageId], kind: PageKind, skip: usize, ahead: usize, out: &mut [u8]) -> Result<()> {
        let request = super::direct::Request { ids, kind, skip, ahead };
        super::direct::read_payloads(self.holder.core(), &self.direct(), &request, out)
    }

    fn visit_payload(&self, id: PageId, kind: PageKind, ahead: usize, visit: &mut dyn FnMut(&[u8])) -> Result<()> {
        super::direct::visit_payload(self.holder.core(), &self.direct(), (id, kind), ahead, visit)
    }

    fn payload_size(&self) -> usize {
        self.holder.core().page_size - HEADER_SIZE
    }

    fn txn_id(&self) -> TxnId {
        self.meta.txn
    }

    fn snapshot_token(&self) -> Option<SnapshotToken> {
        Some(SnapshotToken::new(self.holder.core().instance, self.meta.txn))
    }

    fn catalog_entry(&self, name: &str) -> Result<Option<CatalogEntry>> {
        Ok(self.catalog()?.get(name).cloned())
    }

    fn catalog_list(&self) -> Result<Vec<CatalogEntry>> {
        Ok(self.catalog()?.entries().cloned().collect())
    }

    fn result_set(&self) -> ResultSet {
        self.holder.core().result_sets.take()
    }
}

/// A read-only snapshot of the database, borrowing it (see [`Database::begin_read`]).
pub struct ReadTxn<'db>(Snapshot<&'db Core>);

impl<'db> ReadTxn<'db> {
    pub(crate) fn begin(core: &'db Core) -> Self {
        ReadTxn(Snapshot::begin(core))
    }

    /// The meta this snapshot was taken from.
    pub fn meta(&self) -> &Meta {
        &self.0.meta
    }

    pub(crate) fn core(&self) -> &'db Core {
        self.0.holder
    }
}

/// A read-only snapshot that owns a share of its database, so it can move into another
/// thread (see [`Database::begin_read_owned`]). It reads the version that was newest
/// when it began, whatever is committed meanwhile, until it is dropped.
pub struct OwnedReadTxn(Snapshot<Arc<Database>>);

impl OwnedReadTxn {
    pub(crate) fn begin(db: Arc<Database>) -> Self {
        OwnedReadTxn(Snapshot::begin(db))
    }

    /// The meta this snapshot was taken from.
    pub fn meta(&self) -> &Meta {
        &self.0.meta
    }

    /// The database this snapshot reads.
    pub fn database(&self) -> &Arc<Database> {
        &self.0.holder
    }
}

// A snapshot moves between threads; it is not shared (its catalog is parsed lazily).
const _: () = {
    const fn movable<T: Send>() {}
    movable::<OwnedReadTxn>();
    movable::<ReadTxn<'static>>();
};

/// Implements [`PageRead`] for a wrapper of `Snapshot` by delegating to field 0.
macro_rules! delegate_page_read {
    ($type:ty) => {
        impl PageRead for $type {
            #[inline(always)]
            fn page(&self, id: PageId) -> Result<PageRef<'_>> {
                self.0.page(id)
            }
            #[inline(always)]
            fn with_page<R>(&self, id: PageId, f: impl FnOnce(&PageRef<'_>) -> R) -> Result<R> {
                self.0.with_page(id, f)
            }
            #[inline]
            fn prefetch(&self, id: PageId, ranges: &[std::ops::Range<usize>]) {
                self.0.prefetch(id, ranges)
            }
            fn read_payloads(
                &self,
                ids: &[PageId],
                kind: PageKind,
                skip: usize,
                ahead: usize,
                out: &mut [u8],
            ) -> Result<()> {
                self.0.read_payloads(ids, kind, skip, ahead, out)
            }
            fn visit_payload(
                &self,
                id: PageId,
                kind: PageKind,
                ahead: usize,
                visit: &mut dyn FnMut(&[u8]),
            ) -> Result<()> {
                self.0.visit_payload(id, kind, ahead, visit)
            }
            fn payload_size(&self) -> usize {
                self.0.payload_size()
            }
            fn txn_id(&self) -> TxnId {
                self.0.txn_id()
            }
            fn snapshot_token(&self) -> Option<SnapshotToken> {
                self.0.snapshot_token()
            }
            fn catalog_entry(&self, name: &str) -> Result<Option<CatalogEntry>> {
                self.0.catalog_entry(name)
            }
            fn catalog_list(&self) -> Result<Vec<CatalogEntry>> {
                self.0.catalog_list()
            }
            fn result_set(&self) -> ResultSet {
                self.0.result_set()
            }
        }
    };
}

delegate_page_read!(ReadTxn<'_>);
delegate_page_read!(OwnedReadTxn);
