//! The root of an R*-tree as read from its head page in a committed snapshot.
//!
//! A query needs the root page and the tree's height, which live on the head page:
//! reading that page costs a page pin and a check per query, a tenth of a small window
//! query. A committed snapshot never changes, so what was read under one
//! [`SnapshotToken`] holds for every later transaction with the same token; write
//! transactions have none and always read the head.
//!
//! Opening a tree in a read transaction reads the root, and the open is remembered
//! per thread for its snapshot (`opened.rs`), so a loop of one-query read transactions
//! reads neither the catalog nor the head page. The root is a plain value of the
//! handle, set at its open: a query reads it without a lock or an atomic operation.

use quiredb_engine::SnapshotToken;

/// The root page and level read under a snapshot, if the handle was opened in one.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RootSeen(Option<(SnapshotToken, u64, u16)>);

impl RootSeen {
    /// The root read under `token`.
    pub fn new(token: SnapshotToken, root: u64, level: u16) -> Self {
        RootSeen(Some((token, root, level)))
    }

    /// The root if it was read under `token`.
    #[inline]
    pub fn get(&self, token: SnapshotToken) -> Option<(u64, u16)> {
        self.0.filter(|&(seen, _, _)| seen == token).map(|(_, root, level)| (root, level))
    }
}
