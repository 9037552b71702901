//! [`Pinned`]: bytes of a stored key or value read in place, keeping the leaf that
//! holds them pinned (no copy), or owned when they came from a blob or a removal.

use super::node::{self, Value};
use super::{BTree, Result};
use quiredb_engine::{PageRead, PageRef};
use std::ops::{Deref, Range};
use std::rc::Rc;

/// Stored bytes: a range of a pinned leaf (which cannot be evicted or change while
/// this lives) or an owned copy.
pub struct Pinned<'t>(Repr<'t>);

enum Repr<'t> {
    Page(PageRef<'t>, Range<usize>),
    Shared(Rc<PageRef<'t>>, Range<usize>),
    Owned(Vec<u8>),
}

impl<'t> Pinned<'t> {
    /// `range` of a leaf a cursor shares.
    pub(crate) fn shared(leaf: &Rc<PageRef<'t>>, range: Range<usize>) -> Self {
        Pinned(Repr::Shared(Rc::clone(leaf), range))
    }

    /// Owned bytes.
    pub fn owned(bytes: Vec<u8>) -> Self {
        Pinned(Repr::Owned(bytes))
    }
}

impl Deref for Pinned<'_> {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        match &self.0 {
            Repr::Page(page, range) => &page[range.clone()],
            Repr::Shared(page, range) => &page[range.clone()],
            Repr::Owned(bytes) => bytes,
        }
    }
}

/// Where the value of a leaf cell is: `range` of the leaf, or a blob.
pub(crate) fn value_range(cell_at: usize, cell: &[u8]) -> std::result::Result<Range<usize>, crate::blob::BlobRef> {
    match node::cell_value(cell) {
        Value::Inline(bytes) => Ok(cell_at + cell.len() - bytes.len()..cell_at + cell.len()),
        Value::Blob(blob) => Err(blob),
    }
}

impl<'t, T: PageRead> BTree<'t, T> {
    /// The value of `key`, read in place from its pinned leaf (a blob value is read
    /// into an owned copy); `None` when absent.
    pub fn get_pinned(&self, key: &[u8]) -> Result<Option<Pinned<'t>>> {
        let leaf = self.descend(key)?;
        let Ok(i) = node::search(&leaf, key).map_err(self.at(leaf.id().0))? else { return Ok(None) };
        let (at, len) = node::cell_span(&leaf, i).map_err(self.at(leaf.id().0))?;
        match value_range(at, &leaf[at..at + len]) {
            Ok(range) => Ok(Some(Pinned(Repr::Page(leaf, range)))),
            Err(blob) => self.blob_value(blob).map(Some),
        }
    }

    /// A blob value as owned bytes.
    pub(crate) fn blob_value(&self, blob: crate::blob::BlobRef) -> Result<Pinned<'t>> {
        let mut out = Vec::new();
        crate::blob::read_to_vec(self.txn, blob, &mut out)?;
        Ok(Pinned::owned(out))
    }
}
