//! The root of an R*-tree as last read from its head page in a committed snapshot.
//!
//! A query needs the root page and the tree's height, which live on the head page:
//! reading that page costs a page pin and a check per query, a tenth of a small window
//! query. A committed snapshot never changes, so what was read under one
//! [`SnapshotToken`] holds for every later transaction with the same token; write
//! transactions have none and always read the head.
//!
//! Opening a tree in a read transaction reads the root into the cache, and the open
//! is remembered per thread for its snapshot (`opened.rs`), so a loop of one-query
//! read transactions reads neither the catalog nor the head page. The cache never
//! makes a thread wait: when another thread holds it for its instant, the caller
//! reads the head.

use quiredb_engine::SnapshotToken;
use std::sync::Mutex;

/// One remembered (snapshot, root page, root level).
#[derive(Debug, Default)]
pub(crate) struct RootCache(Mutex<Option<(SnapshotToken, u64, u16)>>);

impl RootCache {
    /// The root remembered for `token`, if any (and if nobody else holds the cache).
    pub fn get(&self, token: SnapshotToken) -> Option<(u64, u16)> {
        let seen = *self.0.try_lock().ok()?;
        seen.filter(|&(t, _, _)| t == token).map(|(_, root, level)| (root, level))
    }

    /// Remembers the root read under `token` (skipped while another thread holds it).
    pub fn set(&self, token: SnapshotToken, root: u64, level: u16) {
        if let Ok(mut seen) = self.0.try_lock() {
            *seen = Some((token, root, level));
        }
    }
}

impl Clone for RootCache {
    /// A copy remembering the same root (empty while another thread holds it): what
    /// was read under a token stays true under it.
    fn clone(&self) -> Self {
        RootCache(Mutex::new(self.0.try_lock().ok().and_then(|seen| *seen)))
    }
}
