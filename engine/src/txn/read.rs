//! [`ReadTxn`]: a snapshot reader. It copies the published meta and announces itself
//! so that the pages it can see are not reused, both without a lock (`readers.rs`); it
//! never waits for the writer, for a commit's sync, or for other readers.

use super::{PageRead, PageRef, SnapshotToken};
use crate::catalog::{self, CatalogEntry};
use crate::core::Core;
use crate::error::{Error, Result};
use crate::meta::Meta;
use crate::page::{HEADER_SIZE, PageId, PhysId, TxnId};
use crate::readers::Announcement;
use crate::resultset::ResultSet;
use crate::translations::Translation;
use std::cell::OnceCell;

/// A read-only snapshot of the database.
///
/// Pages are found through the database-wide translation table (`translations.rs`),
/// so the hot pages of a structure cost one pool probe from the snapshot's first
/// query on, instead of one per page-map level plus one.
pub struct ReadTxn<'db> {
    core: &'db Core,
    meta: Meta,
    /// Where this reader announced its snapshot.
    announced: Announcement,
    /// The catalog, parsed on first use (it cannot change within a snapshot).
    catalog: OnceCell<catalog::Catalog>,
}

impl<'db> ReadTxn<'db> {
    /// Announces a reader of the newest snapshot, retrying if a commit published a
    /// newer one meanwhile (the protocol of `readers.rs`). Never waits on a lock.
    pub(crate) fn begin(core: &'db Core) -> Self {
        loop {
            let meta = core.published.load();
            let announced = core.readers.announce(meta.txn);
            if core.published.txn() == meta.txn {
                return ReadTxn { core, meta, announced, catalog: OnceCell::new() };
            }
            core.readers.withdraw(announced, meta.txn);
        }
    }

    /// The meta this snapshot was taken from.
    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    pub(crate) fn core(&self) -> &'db Core {
        self.core
    }

    fn catalog(&self) -> Result<&catalog::Catalog> {
        if let Some(catalog) = self.catalog.get() {
            return Ok(catalog);
        }
        let loaded = catalog::Catalog::load(self, self.meta.catalog_root)?;
        Ok(self.catalog.get_or_init(|| loaded))
    }
}

impl Drop for ReadTxn<'_> {
    fn drop(&mut self) {
        self.core.readers.withdraw(self.announced, self.meta.txn);
    }
}

impl PageRead for ReadTxn<'_> {
    #[inline]
    fn page(&self, id: PageId) -> Result<PageRef<'_>> {
        let found = self.core.translate(&self.meta, id.0)?.ok_or(Error::UnmappedPage(id.0))?;
        let phys = PhysId(found.phys);
        if let Some(guard) = found.frame.and_then(|frame| self.core.pool.lookup_frame(frame, phys)) {
            crate::page::verify_identity(&guard.bytes, phys, None, id.0)?;
            return Ok(PageRef::new(guard, id));
        }
        let (guard, frame) = self.core.read_committed_frame(phys, None, id.0, self.meta.txn)?;
        self.core.translations.remember_frame(id.0, frame);
        Ok(PageRef::new(guard, id))
    }

    #[inline]
    fn prefetch(&self, id: PageId, ranges: &[std::ops::Range<usize>]) {
        match self.core.translations.find(id.0, self.meta.txn.0) {
            Some(Translation { frame: Some(frame), .. }) => self.core.pool.prefetch_frame(frame, HEADER_SIZE, ranges),
            Some(Translation { phys, frame: None }) => self.core.pool.prefetch(PhysId(phys), HEADER_SIZE, ranges),
            None => {}
        }
    }

    fn payload_size(&self) -> usize {
        self.core.page_size - HEADER_SIZE
    }

    fn txn_id(&self) -> TxnId {
        self.meta.txn
    }

    fn snapshot_token(&self) -> Option<SnapshotToken> {
        Some(SnapshotToken::new(self.core.instance, self.meta.txn))
    }

    fn catalog_entry(&self, name: &str) -> Result<Option<CatalogEntry>> {
        Ok(self.catalog()?.get(name).cloned())
    }

    fn catalog_list(&self) -> Result<Vec<CatalogEntry>> {
        Ok(self.catalog()?.entries().cloned().collect())
    }

    fn result_set(&self) -> ResultSet {
        self.core.result_sets.take()
    }
}
