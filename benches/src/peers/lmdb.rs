//! LMDB peer through heed 0.23 (default flags: every commit syncs). Ordered key-value
//! family (T1, T2, T7). LMDB reads through mmap and has no cache knob: an 80%-fits
//! run is not comparable for it unless the process memory is capped (see T2).

use super::{OrEngine, create_dir};
use crate::error::Result;
use crate::family::{KvEngine, KvOptions, dir_size};
use heed::types::Bytes;
use heed::{CommitOrAbort, Database, Env, EnvOpenOptions};
use std::path::{Path, PathBuf};

const ID: &str = "lmdb";
/// Address space reserved for the map; the file grows only as data is written.
const MAP_SIZE: usize = 256 << 30;

/// One LMDB environment holding the unnamed database.
pub struct Lmdb {
    env: Env,
    db: Database<'static, Bytes, Bytes>,
    dir: PathBuf,
}

impl Lmdb {
    /// Opener for `lmdb`.
    pub fn open(dir: &Path, _options: &KvOptions) -> Result<Box<dyn KvEngine>> {
        create_dir(dir)?;
        // SAFETY: the environment directory is private to this benchmark run and opened
        // once per process, as heed's `open` contract requires.
        let env = unsafe { EnvOpenOptions::new().map_size(MAP_SIZE).max_dbs(1).open(dir) }.or_engine(ID)?;
        let wtxn = env.write_txn().or_engine(ID)?;
        let db = env
            .create_databases_and_commit(wtxn, |opener, wtxn| {
                opener.create_database::<Bytes, Bytes>(wtxn, None).map(CommitOrAbort::<_, ()>::Commit)
            })
            .or_engine(ID)?;
        let CommitOrAbort::Commit(db) = db else { unreachable!("the closure above never aborts") };
        Ok(Box::new(Lmdb { env, db, dir: dir.into() }))
    }
}

impl KvEngine for Lmdb {
    fn put_batch(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<()> {
        let mut wtxn = self.env.write_txn().or_engine(ID)?;
        for (k, v) in pairs {
            self.db.put(&mut wtxn, k, v).or_engine(ID)?;
        }
        wtxn.commit().or_engine(ID)
    }

    fn delete_batch(&mut self, keys: &[&[u8]]) -> Result<u64> {
        let mut wtxn = self.env.write_txn().or_engine(ID)?;
        let mut deleted = 0;
        for k in keys {
            deleted += u64::from(self.db.delete(&mut wtxn, k).or_engine(ID)?);
        }
        wtxn.commit().or_engine(ID)?;
        Ok(deleted)
    }

    fn get(&mut self, key: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        let rtxn = self.env.read_txn().or_engine(ID)?;
        match self.db.get(&rtxn, key).or_engine(ID)? {
            Some(v) => {
                out.clear();
                out.extend_from_slice(v);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn scan(&mut self, visit: &mut dyn FnMut(&[u8], &[u8])) -> Result<()> {
        let rtxn = self.env.read_txn().or_engine(ID)?;
        for item in self.db.iter(&rtxn).or_engine(ID)? {
            let (k, v) = item.or_engine(ID)?;
            visit(k, v);
        }
        Ok(())
    }

    fn range(&mut self, start: &[u8], count: usize, visit: &mut dyn FnMut(&[u8], &[u8])) -> Result<Option<usize>> {
        let rtxn = self.env.read_txn().or_engine(ID)?;
        let bounds = (std::ops::Bound::Included(start), std::ops::Bound::Unbounded);
        let mut seen = 0;
        for item in self.db.range(&rtxn, &bounds).or_engine(ID)?.take(count) {
            let (k, v) = item.or_engine(ID)?;
            visit(k, v);
            seen += 1;
        }
        Ok(Some(seen))
    }

    fn size_bytes(&mut self) -> Result<u64> {
        dir_size(&self.dir)
    }

    fn reader(&self) -> Result<Box<dyn KvEngine + Send>> {
        Ok(Box::new(Lmdb { env: self.env.clone(), db: self.db, dir: self.dir.clone() }))
    }
}
