//! [`WriteTxn`]: the single writer. Shadow paging happens here.
//!
//! The first `page_mut` of a committed logical page in this transaction copies it to a
//! fresh physical page and remaps the logical id; later writes go to that copy in
//! place. Page-map pages are copied the same way, top-down along the path (a
//! copy-on-write radix tree). Committed physical pages are never overwritten, so a
//! crash at any instant leaves the last durable meta intact.
//!
//! Invariants (checked by `assert_state` in debug builds):
//! - every dirty page is fresh (allocated by this transaction);
//! - a fresh page is either dirty or spilled (written, clean in the pool);
//! - `freed` holds only committed pages, each once.
//!
//! All methods take `&self` (state in a `RefCell`) so a structure can hold several
//! pages at once, e.g. both halves of a split. Read next: `pagemap.rs` (the page-map
//! side of shadow paging), `commit.rs`.

use super::{PageMut, PageRead, PageRef, SnapshotToken};
use crate::catalog::{Catalog, CatalogEntry, StructureKind};
use crate::core::{Core, WriterLock};
use crate::error::{Error, Result};
use crate::meta::Meta;
use crate::page::{self, HEADER_SIZE, PageId, PageKind, PhysId, TxnId};
use crate::pool::{IdHasher, WriteGuard};
use crate::resultset::ResultSet;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;
use std::sync::Arc;

type IdMap<V> = HashMap<u64, V, BuildHasherDefault<IdHasher>>;
type IdSet = HashSet<u64, BuildHasherDefault<IdHasher>>;

/// The mutable state of a write transaction.
#[derive(Default)]
pub(super) struct WriteState {
    /// The working meta: roots as modified so far; `txn` is the id being committed.
    pub meta: Meta,
    /// Dirty pages: physical id → pool frame.
    pub dirty: IdMap<u32>,
    /// Physical pages allocated by this transaction.
    pub fresh: IdSet,
    /// The checksum each fresh page was last sealed with (at a spill or at commit):
    /// the version the commit record names, so open can tell it from an earlier one.
    pub sealed: IdMap<u32>,
    /// Committed physical pages this transaction replaced or freed.
    pub freed: Vec<u64>,
    /// Logical ids taken from the free list (returned on abort).
    pub logical_taken: Vec<u64>,
    /// Logical ids freed (applied at commit).
    pub logical_freed: Vec<u64>,
    /// The catalog, once loaded (shared with `Core::writer_catalog` until changed);
    /// `catalog_dirty` when it must be rewritten.
    pub catalog: Option<Arc<Catalog>>,
    pub catalog_dirty: bool,
    /// Return free pages at the end of the file at commit (`compact`).
    pub trim_tail: bool,
    /// The commit log's region was allocated or moved: the commit zeroes it.
    pub zero_log_region: bool,
    /// Set once the commit is published: dropping then gives nothing back.
    pub done: bool,
    /// Dirty pages the structures declared final, not yet written ahead (`ahead.rs`):
    /// physical id and pool frame.
    pub behind: Vec<(u64, u32)>,
    /// Pages were written behind already: the transaction is too large for the log.
    pub wrote_behind: bool,
    /// Recent translations logical → physical of this transaction's map (direct-mapped;
    /// `map_set` keeps them current). Empty until the first lookup, then grown with
    /// use (a one-key commit zeroed a 64 KiB table: 39 % of T1's instructions).
    pub translations: Vec<(u64, u64)>,
    /// Translations remembered since `translations` last grew.
    pub remembered_since_growth: usize,
    /// Slots of the shared translation table that hold an id this transaction
    /// remapped, each with the last id remapped into it and that id's new physical
    /// page (0 = unmapped): stamped with it at publish. A map, not a bitmap of every
    /// slot: with a 1 GiB pool that bitmap was 32 KiB to zero and scan per commit, 11 %
    /// of a one-key logged commit's instructions.
    pub touched: IdMap<(u64, u64)>,
    /// With a commit log, the committed version each of the first [`BASES_KEPT`] copied
    /// pages was copied from: fresh phys → (committed phys, its bytes), so a logged
    /// commit carries only the bytes that changed (`delta.rs`). The bytes are `None`
    /// when the committed copy kept its own frame (the writer copied it instead of
    /// taking the frame over): the commit reads it there (`logged.rs`).
    pub bases: IdMap<Base>,
}

/// The committed version a copied page was copied from (`WriteState::bases`).
pub(super) struct Base {
    /// Its physical page.
    pub phys: u64,
    /// The logical id both versions have.
    pub logical: u64,
    /// Its bytes, when its frame went to the copy; `None`: still in its own frame.
    pub bytes: Option<Vec<u8>>,
}

/// Copied pages whose committed version a write transaction keeps for the commit log
/// (a logged commit is small; a larger one logs the rest as whole pages).
const BASES_KEPT: usize = 64;

/// Most translations a write transaction remembers (a power of two).
const TRANSLATIONS: usize = 4096;
/// Translations remembered at first (a power of two); the table grows eightfold each
/// time as many were remembered since it last grew.
const TRANSLATIONS_FIRST: usize = 64;

impl WriteState {
    /// The state of a transaction that will commit `meta`, its sets sized for a small
    /// transaction (growing them from empty took about seven allocations a one-key
    /// commit).
    fn new(meta: Meta) -> Self {
        const SMALL: usize = 16;
        WriteState {
            meta,
            dirty: IdMap::with_capacity_and_hasher(SMALL, Default::default()),
            fresh: IdSet::with_capacity_and_hasher(SMALL, Default::default()),
            sealed: IdMap::with_capacity_and_hasher(SMALL, Default::default()),
            touched: IdMap::with_capacity_and_hasher(SMALL, Default::default()),
            bases: IdMap::with_capacity_and_hasher(SMALL, Default::default()),
            ..WriteState::default()
        }
    }

    pub(super) fn remembered(&self, logical: u64) -> Option<PhysId> {
        let slot = logical as usize & self.translations.len().wrapping_sub(1);
        let (held, phys) = *self.translations.get(slot)?;
        (held == logical && logical != 0 && phys != 0).then_some(PhysId(phys))
    }

    pub(super) fn remember(&mut self, logical: u64, phys: u64) {
        let size = self.translations.len();
        if size < TRANSLATIONS && self.remembered_since_growth >= size {
            self.grow_translations();
        }
        self.remembered_since_growth += 1;
        let mask = self.translations.len() - 1;
        self.translations[logical as usize & mask] = (logical, phys);
    }

    fn grow_translations(&mut self) {
        let size = (self.translations.len() * 8).clamp(TRANSLATIONS_FIRST, TRANSLATIONS);
        let old = std::mem::replace(&mut self.translations, vec![(0, 0); size]);
        for (logical, phys) in old.into_iter().filter(|&(logical, _)| logical != 0) {
            self.translations[logical as usize & (size - 1)] = (logical, phys);
        }
        self.remembered_since_growth = 0;
    }

    /// Marks slot `index` of the shared translation table as holding an id this
    /// transaction remapped: `logical`, now at physical page `target` (0 = unmapped).
    /// The slot keeps the last id remapped into it, whose target is then final (a later
    /// remap of that id would replace it).
    pub(super) fn touch(&mut self, index: usize, logical: u64, target: u64) {
        self.touched.insert(index as u64, (logical, target));
    }

    /// Whether this transaction remapped an id falling into slot `index`.
    pub(super) fn is_touched(&self, index: usize) -> bool {
        self.touched.contains_key(&(index as u64))
    }

    /// The touched slots, ascending, each with the last id remapped into it and that
    /// id's physical page (see [`WriteState::touch`]).
    pub(super) fn touched_slots(&self) -> Vec<(usize, u64, u64)> {
        let mut slots: Vec<(usize, u64, u64)> =
            self.touched.iter().map(|(&slot, &(logical, target))| (slot as usize, logical, target)).collect();
        slots.sort_unstable();
        slots
    }
}

impl Default for Meta {
    fn default() -> Self {
        Meta::empty(4096)
    }
}

/// The one write transaction. Dropping it aborts.
pub struct WriteTxn<'db> {
    pub(super) core: &'db Core,
    pub(super) base: Meta,
    pub(super) state: RefCell<WriteState>,
    pub(super) _writer: WriterLock<'db>,
}

impl<'db> WriteTxn<'db> {
    pub(crate) fn begin(core: &'db Core, writer: WriterLock<'db>) -> Result<Self> {
        core.check_not_poisoned()?;
        let (base, last_synced) = {
            let shared = core.shared.lock();
            (shared.head, shared.last_synced)
        };
        let oldest = core.readers.oldest();
        // Above any meta seen at open, the one rejected there included: a commit never
        // reuses the id of a meta that is still on disk.
        let newest = base.txn.max(core.txn_floor);
        let txn = TxnId(newest.0.checked_add(1).ok_or(Error::TxnIdOverflow(newest))?);
        let txn_state =
            WriteTxn { core, base, state: RefCell::new(WriteState::new(Meta { txn, ..base })), _writer: writer };
        txn_state.load_free_space()?;
        core.free.lock().promote(oldest, last_synced);
        Ok(txn_state)
    }

    /// Reads the commit record of the opened meta the first time a writer needs it.
    fn load_free_space(&self) -> Result<()> {
        let mut free = self.core.free.lock();
        if free.loaded {
            return Ok(());
        }
        let (record, pages) = super::commit::read_record(self.core, &self.base)?;
        free.free.extend(record.free);
        free.logical = record.logical;
        free.record_pages = pages;
        free.loaded = true;
        Ok(())
    }

    /// Locks the dirty frame of fresh page `phys`, re-dirtying it if it was spilled.
    pub(super) fn fresh_frame(&self, state: &mut WriteState, phys: PhysId, logical: u64) -> Result<WriteGuard<'db>> {
        let pool = &self.core.pool;
        if let Some(&index) = state.dirty.get(&phys.0) {
            return pool.dirty_mut(index, phys).ok_or(Error::PageBusy(logical));
        }
        // Spilled earlier: turn its clean frame back into a dirty one (nobody else can
        // see a page of this transaction), or read the written copy into a new frame.
        self.spill_if_full(state)?;
        let (index, guard) = match pool.reclaim(phys) {
            Some(reclaimed) => reclaimed,
            None => {
                pool.invalidate(phys);
                let (index, mut guard) = pool.take_dirty(phys)?;
                let read = self.core.read_raw(phys, &mut guard.bytes);
                if let Err(error) =
                    read.and_then(|()| page::verify_expect(&guard.bytes, phys, None, logical, state.meta.txn))
                {
                    pool.discard(guard);
                    return Err(error);
                }
                (index, guard)
            }
        };
        state.dirty.insert(phys.0, index);
        Ok(guard)
    }

    /// A pool frame for a new dirty page, spilling first if the writer holds too many.
    fn take_dirty(&self, state: &mut WriteState, phys: PhysId) -> Result<(u32, WriteGuard<'db>)> {
        self.spill_if_full(state)?;
        self.core.pool.take_dirty(phys)
    }

    /// Allocates a physical page: the lowest free one, else one past the end.
    pub(super) fn alloc_phys(&self, state: &mut WriteState) -> PhysId {
        let phys = match self.core.free.lock().free.pop_first() {
            Some(phys) => phys,
            None => {
                state.meta.page_count += 1;
                state.meta.page_count - 1
            }
        };
        self.core.pool.invalidate(PhysId(phys));
        state.fresh.insert(phys);
        PhysId(phys)
    }

    /// A new dirty page at a fresh physical location with the given header and a
    /// zeroed payload.
    pub(super) fn new_page(
        &self,
        state: &mut WriteState,
        kind: PageKind,
        logical: u64,
    ) -> Result<(PhysId, WriteGuard<'db>)> {
        self.new_page_with(state, kind, logical, true)
    }

    /// [`Self::new_page`], leaving the payload as the frame held it unless `zero`.
    fn new_page_with(
        &self,
        state: &mut WriteState,
        kind: PageKind,
        logical: u64,
        zero: bool,
    ) -> Result<(PhysId, WriteGuard<'db>)> {
        let phys = self.alloc_phys(state);
        let (index, mut guard) = match self.take_dirty(state, phys) {
            Ok(taken) => taken,
            Err(error) => {
                state.fresh.remove(&phys.0);
                self.core.free.lock().free.insert(phys.0);
                return Err(error);
            }
        };
        if zero {
            guard.bytes.fill(0);
        } else {
            guard.bytes[..HEADER_SIZE].fill(0);
        }
        page::set_header(&mut guard.bytes, kind, logical, state.meta.txn);
        state.dirty.insert(phys.0, index);
        Ok((phys, guard))
    }

    /// Makes `phys` writable in this transaction: fresh pages in place, committed ones by
    /// copying to a fresh page (the old one is freed at commit).
    pub(super) fn writable(
        &self,
        state: &mut WriteState,
        phys: PhysId,
        kind: Option<PageKind>,
        logical: u64,
    ) -> Result<(PhysId, WriteGuard<'db>)> {
        if state.fresh.contains(&phys.0) {
            return Ok((phys, self.fresh_frame(state, phys, logical)?));
        }
        drop(self.core.read_committed(phys, kind, logical, self.base.txn)?); // cached and verified
        self.spill_if_full(state)?;
        let new = self.alloc_phys(state);
        // The committed copy's frame becomes the new page's: no copy, and the pool does
        // not keep two versions of every page the writer touches. An old snapshot that
        // still needs the committed copy reads it again from the file (it stays there
        // until no snapshot can see it). If the frame is pinned, was evicted or holds a
        // page not yet written back (`writeback.rs`), copy.
        let (index, mut guard, stolen) = match self.core.pool.steal(phys, new) {
            Some((index, guard)) => (index, guard, true),
            None => {
                let old = self.core.read_committed(phys, kind, logical, self.base.txn)?;
                let (index, mut guard) = self.take_dirty(state, new)?;
                guard.bytes.copy_from_slice(&old.bytes);
                (index, guard, false)
            }
        };
        if self.core.log_wanted > 0 && state.bases.len() < BASES_KEPT {
            // A copied page's base stays in its frame (an unwritten one until this commit
            // frees it): no second copy of it here.
            let bytes = stolen.then(|| {
                let mut copy = self.core.log.lock().take_page(guard.bytes.len());
                copy.copy_from_slice(&guard.bytes);
                copy
            });
            state.bases.insert(new.0, Base { phys: phys.0, logical, bytes });
        }
        let head = page::header(&guard.bytes);
        page::set_header(&mut guard.bytes, head.kind, logical, state.meta.txn);
        state.dirty.insert(new.0, index);
        state.freed.push(phys.0);
        Ok((new, guard))
    }

    /// Pins a physical page as this transaction sees it: dirty copy first, else committed.
    pub(super) fn read_any(
        &self,
        state: &WriteState,
        phys: PhysId,
        kind: Option<PageKind>,
        logical: u64,
    ) -> Result<AnyPage<'db>> {
        if let Some(&index) = state.dirty.get(&phys.0) {
            let guard = self.core.pool.dirty_ref(index, phys).ok_or(Error::PageBusy(logical))?;
            return Ok(AnyPage(guard));
        }
        Ok(AnyPage(self.core.read_committed(phys, kind, logical, state.meta.txn)?))
    }

    /// Locks logical page `id` for writing (copy-on-write on first touch).
    pub fn page_mut(&self, id: PageId) -> Result<PageMut<'_>> {
        let state = &mut *self.state.borrow_mut();
        let phys = self.lookup(state, id.0)?.ok_or(Error::UnmappedPage(id.0))?;
        let (new, guard) = self.writable(state, phys, None, id.0)?;
        if new != phys {
            self.map_set(state, id.0, new.0)?;
        }
        Ok(PageMut::new(guard, id))
    }

    /// Allocates a new logical page of `kind`, zero-filled, locked for writing.
    pub fn alloc_page(&self, kind: PageKind) -> Result<PageMut<'_>> {
        self.alloc_page_with(kind, true)
    }

    /// Allocates a new logical page of `kind` whose payload the caller overwrites
    /// entirely (bulk builders encoding whole pages): it is not zeroed first, so it
    /// holds whatever the pool frame held (bytes of another page of this file) until
    /// written. Zeroing was ~3 % of the CPU of a 57.8 M-row meteo load.
    pub fn alloc_page_for_overwrite(&self, kind: PageKind) -> Result<PageMut<'_>> {
        self.alloc_page_with(kind, false)
    }

    fn alloc_page_with(&self, kind: PageKind, zero: bool) -> Result<PageMut<'_>> {
        let state = &mut *self.state.borrow_mut();
        let logical = match self.core.free.lock().logical.pop() {
            Some(logical) => {
                state.logical_taken.push(logical);
                logical
            }
            None => {
                let next = state.meta.logical_next;
                state.meta.logical_next = next
                    .checked_add(1)
                    .ok_or_else(|| Error::corrupted_logical(PageId(next), "the logical id space is exhausted"))?;
                next
            }
        };
        let (phys, guard) = self.new_page_with(state, kind, logical, zero)?;
        self.map_set(state, logical, phys.0)?;
        state.meta.live_pages += 1;
        Ok(PageMut::new(guard, PageId(logical)))
    }

    /// Frees logical page `id`; its id and physical page become reusable.
    pub fn free_page(&self, id: PageId) -> Result<()> {
        let state = &mut *self.state.borrow_mut();
        let phys = self.lookup(state, id.0)?.ok_or(Error::UnmappedPage(id.0))?;
        // A page still locked by a handle of this transaction cannot be freed.
        let dirty = match state.dirty.get(&phys.0) {
            Some(&index) => Some((index, self.core.pool.dirty_mut(index, phys).ok_or(Error::PageBusy(id.0))?)),
            None => None,
        };
        self.map_set(state, id.0, 0)?;
        self.prune_map(state, id.0)?;
        if state.fresh.remove(&phys.0) {
            state.sealed.remove(&phys.0);
            if let Some((_, guard)) = dirty {
                state.dirty.remove(&phys.0);
                self.core.pool.discard(guard);
            }
            self.core.pool.invalidate(phys);
            self.core.free.lock().free.insert(phys.0);
        } else {
            state.freed.push(phys.0);
        }
        state.logical_freed.push(id.0);
        // A corrupt meta may count fewer live pages than are mapped.
        state.meta.live_pages = state.meta.live_pages.saturating_sub(1);
        Ok(())
    }

    /// Runs `edit` on this transaction's copy of the catalog (the shared one is copied
    /// first).
    fn with_catalog<T>(&self, edit: impl FnOnce(&mut Catalog) -> Result<T>) -> Result<T> {
        self.load_catalog()?;
        let state = &mut *self.state.borrow_mut();
        edit(Arc::make_mut(state.catalog.as_mut().expect("catalog loaded above")))
    }

    /// Runs `read` on the catalog.
    fn read_catalog<T>(&self, read: impl FnOnce(&Catalog) -> T) -> Result<T> {
        self.load_catalog()?;
        Ok(read(self.state.borrow().catalog.as_ref().expect("catalog loaded above")))
    }

    /// Loads the catalog the first time the transaction needs it: the one the last
    /// commit that read or changed it left (`Core::writer_catalog`), if it is at the
    /// root this transaction's base names, else from its pages. Every commit that
    /// changes the catalog leaves its own there, so the one kept is the base's.
    fn load_catalog(&self) -> Result<()> {
        let (loaded, root) = {
            let state = self.state.borrow();
            (state.catalog.is_some(), state.meta.catalog_root)
        };
        if loaded {
            return Ok(());
        }
        let kept = self.core.writer_catalog.lock().as_ref().filter(|(at, _)| *at == root).map(|(_, kept)| kept.clone());
        let catalog = match kept {
            Some(catalog) => catalog,
            None => Arc::new(Catalog::load(self, root)?),
        };
        self.state.borrow_mut().catalog = Some(catalog);
        Ok(())
    }

    /// Registers a named structure. Its pages are the caller's; `root` is its entry page.
    pub fn create_structure(&self, name: &str, kind: StructureKind, params: &[u8], root: PageId) -> Result<()> {
        self.with_catalog(|catalog| catalog.insert(CatalogEntry::new(name, kind, params, root)?))?;
        self.state.borrow_mut().catalog_dirty = true;
        Ok(())
    }

    /// Changes the root page recorded for a structure.
    pub fn set_structure_root(&self, name: &str, root: PageId) -> Result<()> {
        self.with_catalog(|catalog| catalog.set_root(name, root))?;
        self.state.borrow_mut().catalog_dirty = true;
        Ok(())
    }

    /// Removes a structure from the catalog and returns its entry; the caller frees its
    /// pages (the engine does not know their shape).
    pub fn drop_structure(&self, name: &str) -> Result<CatalogEntry> {
        let entry = self.with_catalog(|catalog| catalog.remove(name))?;
        self.state.borrow_mut().catalog_dirty = true;
        Ok(entry)
    }

    /// Asks the commit to return free pages at the end of the file (see `compact`).
    pub(crate) fn trim_tail(&self) {
        self.state.borrow_mut().trim_tail = true;
    }

    /// True when the last page of the file is free now (a commit with
    /// [`WriteTxn::trim_tail`] would shorten the file).
    pub(crate) fn trims_tail(&self) -> bool {
        let end = self.state.borrow().meta.page_count;
        self.core.free.lock().free.last() == Some(&end.saturating_sub(1))
    }

    /// Commits with the given durability. On an I/O error the database is poisoned and
    /// the committed state stays as it was before this transaction.
    /// With group commit (`Options::group_commit`) the writer lock is released before
    /// the wait for the commit's durable append, so the next writer can build its
    /// transaction meanwhile; readers see the commit, and `commit` returns, only once it
    /// is durable.
    /// With [`crate::Options::auto_compact_percent`], a commit that leaves enough of the
    /// file free then runs one compaction step (`compact.rs`).
    pub fn commit(self, durability: crate::meta::Durability) -> Result<()> {
        let core = self.core;
        self.commit_alone(durability)?;
        super::auto_compact(core);
        Ok(())
    }

    /// [`WriteTxn::commit`] without the automatic compaction step after it.
    pub(super) fn commit_alone(self, durability: crate::meta::Durability) -> Result<()> {
        self.core.check_not_poisoned()?;
        let core = self.core;
        let result = self.commit_inner(durability);
        drop(self); // the writer lock
        let wait = |txn| {
            if cfg!(quire_mutant = "group_no_wait") {
                return Ok(()); // mutant: acknowledged while its record is still queued
            }
            core.group.wait(core, txn)
        };
        let result = result.and_then(|queued| queued.map_or(Ok(()), wait));
        core.poison_on_io(result)
    }

    /// Aborts explicitly (the same as dropping).
    pub fn abort(self) {}

    /// Number of dirty pages held right now.
    pub fn dirty_pages(&self) -> usize {
        self.state.borrow().dirty.len()
    }

    /// Debug check of the state invariants in the module docs.
    pub(super) fn assert_state(&self, state: &WriteState) {
        for phys in state.dirty.keys() {
            assert!(state.fresh.contains(phys), "dirty page {phys} was not allocated by this transaction");
        }
        let freed: IdSet = state.freed.iter().copied().collect();
        assert_eq!(freed.len(), state.freed.len(), "a committed page was freed twice");
        assert!(freed.iter().all(|phys| !state.fresh.contains(phys)), "a fresh page is in the freed list");
    }
}

/// A pinned page as the writer sees it (dirty or committed).
pub(super) struct AnyPage<'a>(crate::pool::ReadGuard<'a>);

impl AnyPage<'_> {
    pub(super) fn guard_bytes(&self) -> &[u8] {
        &self.0.bytes
    }
}

impl Drop for WriteTxn<'_> {
    fn drop(&mut self) {
        // Abort (or the tail of a commit): give back what this transaction took.
        let state = &mut *self.state.borrow_mut();
        if state.done {
            return;
        }
        for (&phys, &index) in &state.dirty {
            if let Some(guard) = self.core.pool.dirty_mut(index, PhysId(phys)) {
                self.core.pool.discard(guard);
            }
        }
        let mut free = self.core.free.lock();
        for &phys in &state.fresh {
            self.core.pool.invalidate(PhysId(phys));
            if phys < self.base.page_count {
                free.free.insert(phys);
            }
        }
        free.logical.append(&mut state.logical_taken);
        // Pages this transaction allocated past the old end and then freed.
        free.free.split_off(&self.base.page_count);
    }
}

impl PageRead for WriteTxn<'_> {
    fn page(&self, id: PageId) -> Result<PageRef<'_>> {
        let state = &mut *self.state.borrow_mut();
        let phys = self.lookup(state, id.0)?.ok_or(Error::UnmappedPage(id.0))?;
        Ok(PageRef::new(self.read_any(state, phys, None, id.0)?.0, id))
    }

    fn payload_size(&self) -> usize {
        self.core.page_size - HEADER_SIZE
    }

    fn txn_id(&self) -> TxnId {
        self.state.borrow().meta.txn
    }

    fn snapshot_token(&self) -> Option<SnapshotToken> {
        None
    }

    fn catalog_entry(&self, name: &str) -> Result<Option<CatalogEntry>> {
        self.read_catalog(|catalog| catalog.get(name).cloned())
    }

    fn catalog_list(&self) -> Result<Vec<CatalogEntry>> {
        self.read_catalog(|catalog| catalog.entries().cloned().collect())
    }

    fn result_set(&self) -> ResultSet {
        self.core.result_sets.take()
    }
}

#[cfg(test)]
mod tests {
    use super::WriteState;

    #[test]
    fn touched_slots_come_back_in_order_once_each_with_their_last_remap() {
        let mut state = WriteState::default();
        assert!(state.touched_slots().is_empty());
        for (slot, logical) in [(200, 1), (3, 2), (64, 3), (3, 4), (63, 5), (4095, 6)] {
            state.touch(slot, logical, logical * 10);
        }
        let slots: Vec<usize> = state.touched_slots().iter().map(|&(slot, ..)| slot).collect();
        assert_eq!(slots, vec![3, 63, 64, 200, 4095]);
        assert_eq!(state.touched_slots()[0], (3, 4, 40), "the last id remapped into a slot");
        assert!(state.is_touched(64) && !state.is_touched(65));
    }
}
