//! QuireDB's B+tree as an ordered key-value engine (`quiredb`, `quiredb-full`,
//! `quiredb-log`) for T1, T2, T7 and KV: one database file `kv.quire`, default 8 KiB
//! pages, one tree named `kv`. Each `put_batch`/`delete_batch` is one write transaction
//! committed with `Durability::Checksummed` on the default options (a commit log of
//! [`DEFAULT_LOG_PAGES`] pages: one durable append per small commit); `quiredb-inplace`:
//! the same without a commit log (one sync per commit, in place); `quiredb-full`:
//! `Durability::Full` without a log, two syncs; `quiredb-log`: a log of [`LOG_PAGES`]
//! pages; `quiredb-solo`: the default without group commit (each commit its own
//! append; the engine's default shares appends between writers). All of them read as the default
//! does, leaves past a full pool in place from a memory map (`Options::mmap_reads`);
//! `quiredb-pread` reads every pool miss with `pread` instead; `quiredb-small` keeps the
//! pool on small pages (`huge_pages` off). Every call opens the tree by name in its own
//! transaction (a read open is remembered per snapshot: no catalog lookup). Pool: the harness's cache budget, else
//! 1 GiB.

use super::{OrEngine, create_dir};
use crate::error::Result;
use crate::family::{KvEngine, KvOptions, dir_size};
use quiredb_engine::{DEFAULT_LOG_PAGES, Database, Durability};
use quiredb_structures::btree::BTree;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const ID: &str = "quiredb";
const NAME: &str = "kv";
/// Commit log region of `quiredb-log` (16 MiB at 8 KiB pages).
pub const LOG_PAGES: u64 = 2048;
/// Pages one compaction step moves (KV's compaction after removal).
const COMPACT_BUDGET: u64 = 512;
/// Pool size when the harness sets no cache budget.
const DEFAULT_CACHE_BYTES: u64 = 1 << 30;

/// The key-value adapter.
pub struct QuireKv {
    db: Arc<Database>,
    durability: Durability,
    dir: PathBuf,
}

/// How a variant of the adapter opens its database.
struct Variant {
    durability: Durability,
    log_pages: u64,
    group: bool,
    mmap: bool,
    huge_pages: bool,
}

/// `quiredb`: the default options, checksummed commits.
const DEFAULT: Variant = Variant {
    durability: Durability::Checksummed,
    log_pages: DEFAULT_LOG_PAGES,
    group: true,
    mmap: true,
    huge_pages: true,
};

impl QuireKv {
    /// Opener for `quiredb` (checksummed commits, the default commit log).
    pub fn open(dir: &Path, options: &KvOptions) -> Result<Box<dyn KvEngine>> {
        Self::boxed(dir, options, DEFAULT)
    }

    /// Opener for `quiredb-inplace` (checksummed commits without a commit log).
    pub fn open_in_place(dir: &Path, options: &KvOptions) -> Result<Box<dyn KvEngine>> {
        Self::boxed(dir, options, Variant { log_pages: 0, ..DEFAULT })
    }

    /// Opener for `quiredb-log` (checksummed commits through a commit log).
    pub fn open_log(dir: &Path, options: &KvOptions) -> Result<Box<dyn KvEngine>> {
        Self::boxed(dir, options, Variant { log_pages: LOG_PAGES, ..DEFAULT })
    }

    /// Opener for `quiredb-solo` (the default without group commit: each commit makes
    /// its own durable append, holding the writer lock until it is durable).
    pub fn open_solo(dir: &Path, options: &KvOptions) -> Result<Box<dyn KvEngine>> {
        Self::boxed(dir, options, Variant { group: false, ..DEFAULT })
    }

    /// Opener for `quiredb-pread` (checksummed commits, the default commit log; every
    /// pool miss read with `pread` into a frame, no memory map: `mmap_reads` off).
    pub fn open_pread(dir: &Path, options: &KvOptions) -> Result<Box<dyn KvEngine>> {
        Self::boxed(dir, options, Variant { mmap: false, ..DEFAULT })
    }

    /// Opener for `quiredb-small` (the default, with the pool on small pages:
    /// `huge_pages` off).
    pub fn open_small(dir: &Path, options: &KvOptions) -> Result<Box<dyn KvEngine>> {
        Self::boxed(dir, options, Variant { huge_pages: false, ..DEFAULT })
    }

    /// Opener for `quiredb-full` (full commits without a commit log: data sync, then
    /// meta sync).
    pub fn open_full(dir: &Path, options: &KvOptions) -> Result<Box<dyn KvEngine>> {
        Self::boxed(dir, options, Variant { durability: Durability::Full, log_pages: 0, ..DEFAULT })
    }

    fn boxed(dir: &Path, options: &KvOptions, variant: Variant) -> Result<Box<dyn KvEngine>> {
        Ok(Box::new(Self::create(dir, options, variant)?))
    }

    fn create(dir: &Path, options: &KvOptions, variant: Variant) -> Result<QuireKv> {
        create_dir(dir)?;
        let cache = options.cache_bytes.unwrap_or(DEFAULT_CACHE_BYTES) as usize;
        let options = Database::builder()
            .cache_bytes(cache)
            .commit_log_pages(variant.log_pages)
            .group_commit(variant.group)
            .mmap_reads(variant.mmap)
            .huge_pages(variant.huge_pages)
            .into_options();
        let path = dir.join("kv.quire");
        let db = if path.exists() { Database::open(&path, options) } else { Database::create(&path, options) }
            .or_engine(ID)?;
        let txn = db.begin_write().or_engine(ID)?;
        BTree::open_or_create(&txn, NAME).or_engine(ID)?;
        txn.commit(Durability::Full).or_engine(ID)?;
        Ok(QuireKv { db: Arc::new(db), durability: variant.durability, dir: dir.into() })
    }
}

impl KvEngine for QuireKv {
    fn put_batch(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<()> {
        let txn = self.db.begin_write().or_engine(ID)?;
        let mut tree = BTree::open(&txn, NAME).or_engine(ID)?;
        tree.insert_batch(pairs.iter().copied()).or_engine(ID)?;
        drop(tree);
        txn.commit(self.durability).or_engine(ID)
    }

    fn delete_batch(&mut self, keys: &[&[u8]]) -> Result<u64> {
        let txn = self.db.begin_write().or_engine(ID)?;
        let mut tree = BTree::open(&txn, NAME).or_engine(ID)?;
        let deleted = tree.remove_batch(keys.iter()).or_engine(ID)?;
        drop(tree);
        txn.commit(self.durability).or_engine(ID)?;
        Ok(deleted)
    }

    fn get(&mut self, key: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        let txn = self.db.begin_read().or_engine(ID)?;
        let tree = BTree::open(&txn, NAME).or_engine(ID)?;
        tree.get(key, out).or_engine(ID)
    }

    fn scan(&mut self, visit: &mut dyn FnMut(&[u8], &[u8])) -> Result<()> {
        let txn = self.db.begin_read().or_engine(ID)?;
        let tree = BTree::open(&txn, NAME).or_engine(ID)?;
        let mut cursor = tree.cursor();
        cursor.seek_first().or_engine(ID)?;
        let mut scratch = Vec::new();
        while let (Some(key), Some(value)) = (cursor.key(), cursor.value_in(&mut scratch).or_engine(ID)?) {
            visit(key, value);
            cursor.move_next().or_engine(ID)?;
        }
        Ok(())
    }

    fn range(&mut self, start: &[u8], count: usize, visit: &mut dyn FnMut(&[u8], &[u8])) -> Result<Option<usize>> {
        let txn = self.db.begin_read().or_engine(ID)?;
        let tree = BTree::open(&txn, NAME).or_engine(ID)?;
        let mut cursor = tree.cursor();
        cursor.seek(start).or_engine(ID)?;
        let mut scratch = Vec::new();
        let mut seen = 0;
        while seen < count {
            let (Some(key), Some(value)) = (cursor.key(), cursor.value_in(&mut scratch).or_engine(ID)?) else { break };
            visit(key, value);
            seen += 1;
            cursor.move_next().or_engine(ID)?;
        }
        Ok(Some(seen))
    }

    fn size_bytes(&mut self) -> Result<u64> {
        dir_size(&self.dir)
    }

    fn compacts_online(&self) -> bool {
        true
    }

    fn compact_step(&mut self) -> Result<bool> {
        Ok(self.db.compact_step(COMPACT_BUDGET).or_engine(ID)?.done)
    }

    fn reader(&self) -> Result<Box<dyn KvEngine + Send>> {
        Ok(Box::new(QuireKv { db: self.db.clone(), durability: self.durability, dir: self.dir.clone() }))
    }
}
