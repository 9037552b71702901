//! SQLite peers through rusqlite (`bundled`): an ordered key-value table (T1, T2, T7),
//! a rowid heap table (T3) and a blob table read through SQL or `sqlite3_blob_read`
//! (T6). Journal mode is WAL or DELETE, always `synchronous=FULL`; every batch is one
//! transaction. The cache knob is `PRAGMA cache_size` (in KiB, negative).

use super::{OrEngine, create_dir};
use crate::error::{BenchError, Result};
use crate::family::{BlobEngine, KvEngine, KvOptions, QueueEngine, dir_size};
use rusqlite::{Connection, OptionalExtension};
use std::path::{Path, PathBuf};

/// The journal mode of a SQLite peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Journal {
    Wal,
    Delete,
}

impl Journal {
    fn id(self) -> &'static str {
        match self {
            Journal::Wal => "sqlite-wal",
            Journal::Delete => "sqlite-delete",
        }
    }
}

/// Opens `path` with the durable settings of `journal` and an optional cache budget.
pub fn connect(path: &Path, journal: Journal, cache_bytes: Option<u64>) -> Result<Connection> {
    let id = journal.id();
    let conn = Connection::open(path).or_engine(id)?;
    // The busy timeout first: setting the journal mode takes a lock, and a handle opened
    // while another commits (T7's writers open theirs as the first ones start) got
    // "database is locked" at once without it.
    conn.busy_timeout(std::time::Duration::from_secs(30)).or_engine(id)?;
    let mode = match journal {
        Journal::Wal => "WAL",
        Journal::Delete => "DELETE",
    };
    let got: String = conn.query_row(&format!("PRAGMA journal_mode={mode}"), [], |r| r.get(0)).or_engine(id)?;
    if !got.eq_ignore_ascii_case(mode) {
        return Err(BenchError::engine(id, format!("journal_mode is {got}, wanted {mode}")));
    }
    conn.execute_batch("PRAGMA synchronous=FULL;").or_engine(id)?;
    if let Some(bytes) = cache_bytes {
        let kib = (bytes / 1024).max(64);
        conn.execute_batch(&format!("PRAGMA cache_size=-{kib}")).or_engine(id)?;
    }
    Ok(conn)
}

/// Ordered key-value table `kv(key BLOB PRIMARY KEY, value BLOB)`.
pub struct SqliteKv {
    conn: Connection,
    path: PathBuf,
    journal: Journal,
    cache_bytes: Option<u64>,
}

impl SqliteKv {
    fn open(dir: &Path, options: &KvOptions, journal: Journal) -> Result<Box<dyn KvEngine>> {
        create_dir(dir)?;
        let path = dir.join("kv.sqlite");
        let conn = connect(&path, journal, options.cache_bytes)?;
        conn.execute_batch("CREATE TABLE IF NOT EXISTS kv(key BLOB PRIMARY KEY, value BLOB)")
            .or_engine(journal.id())?;
        Ok(Box::new(SqliteKv { conn, path, journal, cache_bytes: options.cache_bytes }))
    }

    /// Opener for `sqlite-wal`.
    pub fn open_wal(dir: &Path, options: &KvOptions) -> Result<Box<dyn KvEngine>> {
        SqliteKv::open(dir, options, Journal::Wal)
    }

    /// Opener for `sqlite-delete`.
    pub fn open_delete(dir: &Path, options: &KvOptions) -> Result<Box<dyn KvEngine>> {
        SqliteKv::open(dir, options, Journal::Delete)
    }
}

impl KvEngine for SqliteKv {
    fn put_batch(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<()> {
        let id = self.journal.id();
        let tx = self.conn.transaction().or_engine(id)?;
        {
            let mut stmt = tx.prepare_cached("INSERT OR REPLACE INTO kv(key, value) VALUES (?1, ?2)").or_engine(id)?;
            for (k, v) in pairs {
                stmt.execute((k, v)).or_engine(id)?;
            }
        }
        tx.commit().or_engine(id)
    }

    fn delete_batch(&mut self, keys: &[&[u8]]) -> Result<u64> {
        let id = self.journal.id();
        let tx = self.conn.transaction().or_engine(id)?;
        let mut deleted = 0;
        {
            let mut stmt = tx.prepare_cached("DELETE FROM kv WHERE key = ?1").or_engine(id)?;
            for k in keys {
                deleted += stmt.execute([k]).or_engine(id)? as u64;
            }
        }
        tx.commit().or_engine(id)?;
        Ok(deleted)
    }

    fn get(&mut self, key: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        let id = self.journal.id();
        let mut stmt = self.conn.prepare_cached("SELECT value FROM kv WHERE key = ?1").or_engine(id)?;
        let found = stmt
            .query_row([key], |row| {
                out.clear();
                out.extend_from_slice(row.get_ref(0)?.as_blob()?);
                Ok(())
            })
            .optional()
            .or_engine(id)?;
        Ok(found.is_some())
    }

    fn scan(&mut self, visit: &mut dyn FnMut(&[u8], &[u8])) -> Result<()> {
        let id = self.journal.id();
        let tx = self.conn.transaction().or_engine(id)?;
        {
            let mut stmt = tx.prepare_cached("SELECT key, value FROM kv ORDER BY key").or_engine(id)?;
            let mut rows = stmt.query([]).or_engine(id)?;
            while let Some(row) = rows.next().or_engine(id)? {
                let k = row.get_ref(0).or_engine(id)?.as_blob().or_engine(id)?;
                let v = row.get_ref(1).or_engine(id)?.as_blob().or_engine(id)?;
                visit(k, v);
            }
        }
        tx.commit().or_engine(id)
    }

    fn range(&mut self, start: &[u8], count: usize, visit: &mut dyn FnMut(&[u8], &[u8])) -> Result<Option<usize>> {
        let id = self.journal.id();
        let mut stmt = self
            .conn
            .prepare_cached("SELECT key, value FROM kv WHERE key >= ?1 ORDER BY key LIMIT ?2")
            .or_engine(id)?;
        let mut rows = stmt.query(rusqlite::params![start, count as i64]).or_engine(id)?;
        let mut seen = 0;
        while let Some(row) = rows.next().or_engine(id)? {
            let k = row.get_ref(0).or_engine(id)?.as_blob().or_engine(id)?;
            let v = row.get_ref(1).or_engine(id)?.as_blob().or_engine(id)?;
            visit(k, v);
            seen += 1;
        }
        Ok(Some(seen))
    }

    fn size_bytes(&mut self) -> Result<u64> {
        dir_size(self.path.parent().expect("the database file lives in a directory"))
    }

    fn reader(&self) -> Result<Box<dyn KvEngine + Send>> {
        let conn = connect(&self.path, self.journal, self.cache_bytes)?;
        Ok(Box::new(SqliteKv { conn, path: self.path.clone(), journal: self.journal, cache_bytes: self.cache_bytes }))
    }
}

/// Heap table: a rowid table of records, scanned in rowid order (WAL + FULL).
pub struct SqliteHeap {
    conn: Connection,
    dir: PathBuf,
}

impl SqliteHeap {
    /// Opener for `sqlite-wal` in T3.
    pub fn open(dir: &Path, _record_len: usize) -> Result<Box<dyn QueueEngine>> {
        create_dir(dir)?;
        let conn = connect(&dir.join("heap.sqlite"), Journal::Wal, None)?;
        conn.execute_batch("CREATE TABLE IF NOT EXISTS heap(rec BLOB)").or_engine("sqlite-wal")?;
        Ok(Box::new(SqliteHeap { conn, dir: dir.into() }))
    }
}

impl QueueEngine for SqliteHeap {
    fn append_batch(&mut self, records: &[&[u8]]) -> Result<()> {
        let tx = self.conn.transaction().or_engine("sqlite-wal")?;
        {
            let mut stmt = tx.prepare_cached("INSERT INTO heap(rec) VALUES (?1)").or_engine("sqlite-wal")?;
            for r in records {
                stmt.execute([r]).or_engine("sqlite-wal")?;
            }
        }
        tx.commit().or_engine("sqlite-wal")
    }

    fn scan(&mut self, visit: &mut dyn FnMut(&[u8])) -> Result<()> {
        let id = "sqlite-wal";
        let mut stmt = self.conn.prepare_cached("SELECT rec FROM heap ORDER BY rowid").or_engine(id)?;
        let mut rows = stmt.query([]).or_engine(id)?;
        while let Some(row) = rows.next().or_engine(id)? {
            visit(row.get_ref(0).or_engine(id)?.as_blob().or_engine(id)?);
        }
        Ok(())
    }

    fn size_bytes(&mut self) -> Result<u64> {
        dir_size(&self.dir)
    }
}

/// Blob table `blobs(id INTEGER PRIMARY KEY, data BLOB)`, read by SQL or incremental
/// blob I/O (`sqlite3_blob_open` + `sqlite3_blob_read`).
pub struct SqliteBlobs {
    conn: Connection,
    dir: PathBuf,
    incremental: bool,
}

impl SqliteBlobs {
    fn open(dir: &Path, incremental: bool) -> Result<Box<dyn BlobEngine>> {
        create_dir(dir)?;
        let conn = connect(&dir.join("blobs.sqlite"), Journal::Wal, None)?;
        conn.execute_batch("CREATE TABLE IF NOT EXISTS blobs(id INTEGER PRIMARY KEY, data BLOB)")
            .or_engine("sqlite-wal")?;
        Ok(Box::new(SqliteBlobs { conn, dir: dir.into(), incremental }))
    }

    /// Opener for `sqlite-wal` (SQL reads).
    pub fn open_sql(dir: &Path) -> Result<Box<dyn BlobEngine>> {
        SqliteBlobs::open(dir, false)
    }

    /// Opener for `sqlite-wal-blobio` (incremental blob reads).
    pub fn open_blobio(dir: &Path) -> Result<Box<dyn BlobEngine>> {
        SqliteBlobs::open(dir, true)
    }
}

impl BlobEngine for SqliteBlobs {
    fn put_batch(&mut self, blobs: &[(u64, &[u8])]) -> Result<()> {
        let id = "sqlite-wal";
        let tx = self.conn.transaction().or_engine(id)?;
        {
            let mut stmt = tx.prepare_cached("INSERT INTO blobs(id, data) VALUES (?1, ?2)").or_engine(id)?;
            for (k, data) in blobs {
                stmt.execute((*k as i64, data)).or_engine(id)?;
            }
        }
        tx.commit().or_engine(id)
    }

    fn read(&mut self, key: u64, out: &mut Vec<u8>) -> Result<bool> {
        let id = "sqlite-wal";
        if self.incremental {
            let blob = match self.conn.blob_open(c"main", c"blobs", c"data", key as i64, true) {
                Ok(b) => b,
                Err(rusqlite::Error::SqliteFailure(_, _)) => return Ok(false),
                Err(e) => return Err(BenchError::engine(id, e)),
            };
            out.resize(blob.len(), 0);
            blob.read_at_exact(out, 0).or_engine(id)?;
            return Ok(true);
        }
        let mut stmt = self.conn.prepare_cached("SELECT data FROM blobs WHERE id = ?1").or_engine(id)?;
        let found = stmt
            .query_row([key as i64], |row| {
                out.clear();
                out.extend_from_slice(row.get_ref(0)?.as_blob()?);
                Ok(())
            })
            .optional()
            .or_engine(id)?;
        Ok(found.is_some())
    }

    fn size_bytes(&mut self) -> Result<u64> {
        dir_size(&self.dir)
    }
}
