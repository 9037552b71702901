//! redb peer (4.x, `Durability::Immediate`: one fsync per commit). Ordered key-value
//! family (T1, T2, T7); the cache knob is `Builder::set_cache_size`.

use super::{OrEngine, create_dir};
use crate::error::Result;
use crate::family::{KvEngine, KvOptions};
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const ID: &str = "redb";
const TABLE: TableDefinition<&[u8], &[u8]> = TableDefinition::new("kv");

/// One redb file holding table `kv`.
pub struct Redb {
    db: Arc<Database>,
    path: PathBuf,
}

impl Redb {
    /// Opener for `redb`.
    pub fn open(dir: &Path, options: &KvOptions) -> Result<Box<dyn KvEngine>> {
        create_dir(dir)?;
        let path = dir.join("kv.redb");
        let mut builder = Database::builder();
        if let Some(bytes) = options.cache_bytes {
            builder.set_cache_size(bytes as usize);
        }
        let db = builder.create(&path).or_engine(ID)?;
        let wtxn = db.begin_write().or_engine(ID)?;
        wtxn.open_table(TABLE).or_engine(ID)?;
        wtxn.commit().or_engine(ID)?;
        Ok(Box::new(Redb { db: Arc::new(db), path }))
    }
}

impl KvEngine for Redb {
    fn put_batch(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<()> {
        let wtxn = self.db.begin_write().or_engine(ID)?;
        {
            let mut table = wtxn.open_table(TABLE).or_engine(ID)?;
            for (k, v) in pairs {
                table.insert(*k, *v).or_engine(ID)?;
            }
        }
        wtxn.commit().or_engine(ID)
    }

    fn delete_batch(&mut self, keys: &[&[u8]]) -> Result<u64> {
        let wtxn = self.db.begin_write().or_engine(ID)?;
        let mut deleted = 0;
        {
            let mut table = wtxn.open_table(TABLE).or_engine(ID)?;
            for k in keys {
                deleted += u64::from(table.remove(*k).or_engine(ID)?.is_some());
            }
        }
        wtxn.commit().or_engine(ID)?;
        Ok(deleted)
    }

    fn get(&mut self, key: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        let rtxn = self.db.begin_read().or_engine(ID)?;
        let table = rtxn.open_table(TABLE).or_engine(ID)?;
        match table.get(key).or_engine(ID)? {
            Some(v) => {
                out.clear();
                out.extend_from_slice(v.value());
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn scan(&mut self, visit: &mut dyn FnMut(&[u8], &[u8])) -> Result<()> {
        let rtxn = self.db.begin_read().or_engine(ID)?;
        let table = rtxn.open_table(TABLE).or_engine(ID)?;
        for item in table.iter().or_engine(ID)? {
            let (k, v) = item.or_engine(ID)?;
            visit(k.value(), v.value());
        }
        Ok(())
    }

    fn range(&mut self, start: &[u8], count: usize, visit: &mut dyn FnMut(&[u8], &[u8])) -> Result<Option<usize>> {
        let rtxn = self.db.begin_read().or_engine(ID)?;
        let table = rtxn.open_table(TABLE).or_engine(ID)?;
        let mut seen = 0;
        for item in table.range::<&[u8]>(start..).or_engine(ID)?.take(count) {
            let (k, v) = item.or_engine(ID)?;
            visit(k.value(), v.value());
            seen += 1;
        }
        Ok(Some(seen))
    }

    fn size_bytes(&mut self) -> Result<u64> {
        let meta = std::fs::metadata(&self.path);
        meta.map(|m| m.len()).map_err(|e| crate::error::BenchError::io(&self.path, e))
    }

    fn reader(&self) -> Result<Box<dyn KvEngine + Send>> {
        Ok(Box::new(Redb { db: Arc::clone(&self.db), path: self.path.clone() }))
    }
}
