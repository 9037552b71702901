//! Pages committed through the commit log and not yet written to their place in the
//! file (*write-back*, `txn/writeback.rs`): the log record made them durable, so their
//! frames are the only current copy outside the log until the writer writes them.
//!
//! Such a frame is clean (listed, readable by every snapshot) but flagged
//! (`Frame::unwritten`): the CLOCK hand skips it and the writer does not steal it. This
//! registry lists them by physical page for two readers:
//! - the writer, which writes them back in physical order (before a checkpoint, or when
//!   they fill their share of the pool);
//! - a read from the file (`Core::read_raw`): the pool's table may miss a listed page
//!   for an instant (a rebuild), and a run read covers pages nobody asked the pool for,
//!   so such a read takes the flagged frames in its range from here and copies them over
//!   what it read.
//!
//! Order that makes the second safe: the writer clears a frame's flag only after its
//! write returned, and removes the entry after that; a reader pins the frames it finds
//! here *before* it reads the file, and keeps a frame only if its flag is still set.
//! So a reader either copies the frame (pinned: it cannot be evicted meanwhile) or finds
//! the page already in the file.

use super::IdHasher;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicUsize, Ordering};

/// See the module docs.
#[derive(Debug, Default)]
pub struct Unwritten {
    /// Physical page → frame.
    pages: Mutex<HashMap<u64, u32, BuildHasherDefault<IdHasher>>>,
    /// `pages.len()`, read without the lock (zero on every read path but the log's).
    count: AtomicUsize,
}

impl Unwritten {
    /// Pages listed.
    #[inline]
    pub fn len(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }

    /// Lists `phys`, held by frame `index`.
    pub fn insert(&self, phys: u64, index: u32) {
        let mut pages = self.pages.lock();
        pages.insert(phys, index);
        self.count.store(pages.len(), Ordering::Release);
    }

    /// Unlists `phys`; returns the frame it named.
    pub fn remove(&self, phys: u64) -> Option<u32> {
        if self.len() == 0 {
            return None;
        }
        let mut pages = self.pages.lock();
        let index = pages.remove(&phys);
        self.count.store(pages.len(), Ordering::Release);
        index
    }

    /// The frame listed for `phys`.
    pub fn get(&self, phys: u64) -> Option<u32> {
        if self.len() == 0 {
            return None;
        }
        self.pages.lock().get(&phys).copied()
    }

    /// Every page listed with its frame, in physical order.
    pub fn sorted(&self) -> Vec<(u64, u32)> {
        let mut pages: Vec<(u64, u32)> = self.pages.lock().iter().map(|(&phys, &index)| (phys, index)).collect();
        pages.sort_unstable();
        pages
    }
}
