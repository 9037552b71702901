//! Counters of the buffer pool and the file, reported by `Database::stats`.
//!
//! Relaxed atomics: the figures are statistics, not synchronisation.

use std::sync::atomic::{AtomicU64, Ordering};

/// A snapshot of the counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Page requests answered from the pool.
    pub hits: u64,
    /// Page requests that had to read the file.
    pub misses: u64,
    /// Frames reused for another page.
    pub evictions: u64,
    /// Pages read from the file.
    pub reads: u64,
    /// Pages written to the file.
    pub writes: u64,
    /// `fdatasync` calls.
    pub syncs: u64,
    /// Commits.
    pub commits: u64,
    /// Dirty pages written before their commit to free frames.
    pub spills: u64,
    /// Pages a structure declared final written before their commit
    /// (`WriteTxn::write_behind`).
    pub written_behind: u64,
    /// Pool frames holding page memory (frames get it when first used).
    pub frames_allocated: u64,
    /// The snapshot the oldest live reader reads, if any reader is live.
    pub oldest_reader_txn: Option<u64>,
    /// How many commits that snapshot is behind the newest (a reader's age in
    /// commits: while it lives, pages those commits replaced cannot be reused).
    pub oldest_reader_commits_behind: u64,
    /// Physical pages freed by commits newer than the oldest reader's snapshot, kept
    /// from reuse for it (the file grows by these while it lives).
    pub pages_held_by_readers: u64,
}

/// The live counters.
#[derive(Debug, Default)]
pub struct Counters {
    misses: AtomicU64,
    evictions: AtomicU64,
    reads: AtomicU64,
    writes: AtomicU64,
    syncs: AtomicU64,
    commits: AtomicU64,
    spills: AtomicU64,
    written_behind: AtomicU64,
    frames_allocated: AtomicU64,
}

impl Counters {
    /// One page missed.
    pub fn miss(&self) {
        self.misses.fetch_add(1, Ordering::Relaxed);
    }
    /// One frame evicted.
    pub fn eviction(&self) {
        self.evictions.fetch_add(1, Ordering::Relaxed);
    }
    /// One page read from the file.
    pub fn read(&self) {
        self.read_pages(1);
    }
    /// `pages` pages read from the file (in one read).
    pub fn read_pages(&self, pages: u64) {
        self.reads.fetch_add(pages, Ordering::Relaxed);
    }
    /// `pages` pages written to the file.
    pub fn write(&self, pages: u64) {
        self.writes.fetch_add(pages, Ordering::Relaxed);
    }
    /// One sync.
    pub fn sync(&self) {
        self.syncs.fetch_add(1, Ordering::Relaxed);
    }
    /// One commit.
    pub fn commit(&self) {
        self.commits.fetch_add(1, Ordering::Relaxed);
    }
    /// `pages` pages spilled.
    pub fn spill(&self, pages: u64) {
        self.spills.fetch_add(pages, Ordering::Relaxed);
    }

    /// `pages` final pages written ahead of their commit.
    pub fn written_behind(&self, pages: u64) {
        self.written_behind.fetch_add(pages, Ordering::Relaxed);
    }

    /// One frame given its page memory.
    pub fn frame_allocated(&self) {
        self.frames_allocated.fetch_add(1, Ordering::Relaxed);
    }

    /// Reads all counters.
    pub fn snapshot(&self) -> Stats {
        let get = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        Stats {
            hits: 0, // counted by the pool's table shards, see `Pool::stats`
            misses: get(&self.misses),
            evictions: get(&self.evictions),
            reads: get(&self.reads),
            writes: get(&self.writes),
            syncs: get(&self.syncs),
            commits: get(&self.commits),
            spills: get(&self.spills),
            written_behind: get(&self.written_behind),
            frames_allocated: get(&self.frames_allocated),
            ..Stats::default()
        }
    }
}
