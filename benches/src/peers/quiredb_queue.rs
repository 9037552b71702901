//! QuireDB's paged queue as a T3 heap table: one database file `queue.quire` in the
//! engine's default 8 KiB pages and 64 MiB pool; one queue named `t3`; each batch is
//! appended through one `Appender` in one write transaction committed with the
//! default `Durability::Checksummed` — one sync, and the batch survives a power cut
//! once the commit returns, the promise of the flat file's `sync_data` (`quiredb-full`:
//! `Durability::Full`, two syncs); scans run `Queue::for_each` in a read snapshot,
//! which visits the data pages past the pool in place in the file's memory map
//! (`quiredb`, the default `mmap_reads`) or in runs of 32 read with one `pread`
//! (`quiredb-pread`).

use super::{OrEngine, create_dir};
use crate::error::Result;
use crate::family::{QueueEngine, dir_size};
use quiredb_engine::{Database, Durability};
use quiredb_structures::queue::Queue;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

const ID: &str = "quiredb";
const NAME: &str = "t3";

/// The T3 adapter.
pub struct QuireQueue {
    db: Database,
    dir: PathBuf,
    durability: Durability,
}

impl QuireQueue {
    /// Opener for `quiredb` in T3 (creates the database and the queue when absent).
    pub fn open(dir: &Path, _record_len: usize) -> Result<Box<dyn QueueEngine>> {
        Self::create(dir, true, Durability::Checksummed)
    }

    /// Opener for `quiredb-full` in T3: batches committed with `Durability::Full`.
    pub fn open_full(dir: &Path, _record_len: usize) -> Result<Box<dyn QueueEngine>> {
        Self::create(dir, true, Durability::Full)
    }

    /// Opener for `quiredb-pread` in T3: pool misses read with `pread`, no memory map.
    pub fn open_pread(dir: &Path, _record_len: usize) -> Result<Box<dyn QueueEngine>> {
        Self::create(dir, false, Durability::Checksummed)
    }

    fn create(dir: &Path, mmap: bool, durability: Durability) -> Result<Box<dyn QueueEngine>> {
        create_dir(dir)?;
        let db = Database::builder().mmap_reads(mmap).create(dir.join("queue.quire")).or_engine(ID)?;
        let txn = db.begin_write().or_engine(ID)?;
        Queue::open_or_create(&txn, NAME).or_engine(ID)?;
        txn.commit(Durability::Full).or_engine(ID)?;
        Ok(Box::new(QuireQueue { db, dir: dir.into(), durability }))
    }
}

impl QueueEngine for QuireQueue {
    fn append_batch(&mut self, records: &[&[u8]]) -> Result<()> {
        let txn = self.db.begin_write().or_engine(ID)?;
        let mut queue = Queue::open(&txn, NAME).or_engine(ID)?;
        let mut appender = queue.appender().or_engine(ID)?;
        for record in records {
            appender.append(record).or_engine(ID)?;
        }
        drop(appender);
        txn.commit(self.durability).or_engine(ID)
    }

    fn scan(&mut self, visit: &mut dyn FnMut(&[u8])) -> Result<()> {
        let txn = self.db.begin_read().or_engine(ID)?;
        let queue = Queue::open(&txn, NAME).or_engine(ID)?;
        queue
            .for_each(None, |_, bytes| {
                visit(bytes);
                ControlFlow::Continue(())
            })
            .or_engine(ID)?;
        Ok(())
    }

    fn size_bytes(&mut self) -> Result<u64> {
        dir_size(&self.dir)
    }
}
