//! fjall peer (3.x: an LSM tree with a journal). Ordered key-value family (T1, T2,
//! T7, KV): one database directory, keyspace `kv`. Each `put_batch`/`delete_batch` is
//! one write batch committed with `PersistMode::SyncData` (the journal is
//! `fdatasync`ed before the commit returns, fjall's durable mode); the cache knob is
//! `cache_size`. Reads use a snapshot per call. Background flushes and compactions run
//! on fjall's own worker threads.

use super::{OrEngine, create_dir};
use crate::error::Result;
use crate::family::{KvEngine, KvOptions, dir_size};
use fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode, Readable};
use std::path::{Path, PathBuf};

const ID: &str = "fjall";

/// One fjall database holding keyspace `kv`.
pub struct Fjall {
    db: Database,
    keyspace: Keyspace,
    dir: PathBuf,
}

impl Fjall {
    /// Opener for `fjall`.
    pub fn open(dir: &Path, options: &KvOptions) -> Result<Box<dyn KvEngine>> {
        create_dir(dir)?;
        let mut builder = Database::builder(dir.join("fjall"));
        if let Some(bytes) = options.cache_bytes {
            builder = builder.cache_size(bytes);
        }
        let db = builder.open().or_engine(ID)?;
        let keyspace = db.keyspace("kv", KeyspaceCreateOptions::default).or_engine(ID)?;
        Ok(Box::new(Fjall { db, keyspace, dir: dir.into() }))
    }

    fn visit(&self, pairs: fjall::Iter, count: usize, visit: &mut dyn FnMut(&[u8], &[u8])) -> Result<usize> {
        let mut seen = 0;
        for guard in pairs.take(count) {
            let (key, value) = guard.into_inner().or_engine(ID)?;
            visit(&key, &value);
            seen += 1;
        }
        Ok(seen)
    }
}

impl KvEngine for Fjall {
    fn put_batch(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<()> {
        let mut batch = self.db.batch().durability(Some(PersistMode::SyncData));
        for (key, value) in pairs {
            batch.insert(&self.keyspace, *key, *value);
        }
        batch.commit().or_engine(ID)
    }

    fn delete_batch(&mut self, keys: &[&[u8]]) -> Result<u64> {
        let snapshot = self.db.snapshot();
        let mut batch = self.db.batch().durability(Some(PersistMode::SyncData));
        let mut deleted = 0;
        for key in keys {
            deleted += u64::from(snapshot.contains_key(&self.keyspace, key).or_engine(ID)?);
            batch.remove(&self.keyspace, *key);
        }
        batch.commit().or_engine(ID)?;
        Ok(deleted)
    }

    fn get(&mut self, key: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        match self.keyspace.get(key).or_engine(ID)? {
            Some(value) => {
                out.clear();
                out.extend_from_slice(&value);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn scan(&mut self, visit: &mut dyn FnMut(&[u8], &[u8])) -> Result<()> {
        let snapshot = self.db.snapshot();
        self.visit(snapshot.iter(&self.keyspace), usize::MAX, visit).map(drop)
    }

    fn range(&mut self, start: &[u8], count: usize, visit: &mut dyn FnMut(&[u8], &[u8])) -> Result<Option<usize>> {
        let snapshot = self.db.snapshot();
        self.visit(snapshot.range(&self.keyspace, start..), count, visit).map(Some)
    }

    fn size_bytes(&mut self) -> Result<u64> {
        dir_size(&self.dir)
    }

    fn reader(&self) -> Result<Box<dyn KvEngine + Send>> {
        Ok(Box::new(Fjall { db: self.db.clone(), keyspace: self.keyspace.clone(), dir: self.dir.clone() }))
    }
}
