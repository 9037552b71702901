//! Plain-file peers (`files`): a flat append-only file of fixed-length records for T3
//! (the sequential-I/O limit; `sync_data` after each batch) and one file per blob for
//! T6 (`<dir>/<id % 256>/<id>`; written without fsync, as a filesystem is normally
//! used — its settings string says so).

use super::create_dir;
use crate::error::{BenchError, Result};
use crate::family::{BlobEngine, QueueEngine, dir_size};
use std::fs::{File, OpenOptions};
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};

/// A flat file of fixed-length records.
pub struct FlatFile {
    file: File,
    path: PathBuf,
    record_len: usize,
}

impl FlatFile {
    /// Opener for `files` in T3.
    pub fn open(dir: &Path, record_len: usize) -> Result<Box<dyn QueueEngine>> {
        create_dir(dir)?;
        let path = dir.join("records.bin");
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(&path)
            .map_err(|e| BenchError::io(&path, e))?;
        Ok(Box::new(FlatFile { file, path, record_len }))
    }
}

impl QueueEngine for FlatFile {
    fn append_batch(&mut self, records: &[&[u8]]) -> Result<()> {
        let mut buf = Vec::with_capacity(records.len() * self.record_len);
        for r in records {
            assert_eq!(r.len(), self.record_len, "fixed-length records");
            buf.extend_from_slice(r);
        }
        let io = |e| BenchError::io(&self.path, e);
        self.file.write_all(&buf).map_err(io)?;
        self.file.sync_data().map_err(|e| BenchError::io(&self.path, e))
    }

    fn scan(&mut self, visit: &mut dyn FnMut(&[u8])) -> Result<()> {
        let file = File::open(&self.path).map_err(|e| BenchError::io(&self.path, e))?;
        let mut reader = BufReader::with_capacity(1 << 20, file);
        let mut record = vec![0u8; self.record_len];
        loop {
            match reader.read_exact(&mut record) {
                Ok(()) => visit(&record),
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
                Err(e) => return Err(BenchError::io(&self.path, e)),
            }
        }
    }

    fn size_bytes(&mut self) -> Result<u64> {
        dir_size(self.path.parent().expect("the record file lives in a directory"))
    }
}

/// One file per blob.
pub struct BlobFiles {
    dir: PathBuf,
}

impl BlobFiles {
    /// Opener for `files` in T6.
    pub fn open(dir: &Path) -> Result<Box<dyn BlobEngine>> {
        for shard in 0..256 {
            create_dir(&dir.join(format!("{shard:02x}")))?;
        }
        Ok(Box::new(BlobFiles { dir: dir.into() }))
    }

    fn path(&self, id: u64) -> PathBuf {
        self.dir.join(format!("{:02x}/{id}", id % 256))
    }
}

impl BlobEngine for BlobFiles {
    fn put_batch(&mut self, blobs: &[(u64, &[u8])]) -> Result<()> {
        for (id, data) in blobs {
            let path = self.path(*id);
            std::fs::write(&path, data).map_err(|e| BenchError::io(&path, e))?;
        }
        Ok(())
    }

    fn read(&mut self, id: u64, out: &mut Vec<u8>) -> Result<bool> {
        let path = self.path(id);
        let mut file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(BenchError::io(&path, e)),
        };
        out.clear();
        file.read_to_end(out).map_err(|e| BenchError::io(&path, e))?;
        Ok(true)
    }

    fn size_bytes(&mut self) -> Result<u64> {
        dir_size(&self.dir)
    }
}
