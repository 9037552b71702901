//! The storage the `db` target opens: the engine's `MemStorage` on a disk of bounded
//! size. Reads that would pass the end of the file (including offsets whose end
//! overflows a u64) fail with `UnexpectedEof`, as `pread` would; writes and growth past
//! the file's first length plus [`GROWTH_LIMIT_BYTES`] fail with `StorageFull`, as a
//! full disk would — before `MemStorage` sees them.
//!
//! A detour around finding db-2 (`fuzz/README.md`): a meta whose logical-next counter
//! is near 2^64 makes the first allocation grow the file by over a gigabyte, which
//! `MemStorage` allocates whole (and, with format v2, `MemStorage` panicked on reads
//! whose end overflows). With `QUIRE_FUZZ_STRICT=1` the target uses a plain
//! `MemStorage` instead.

use std::io;

use quiredb_engine::storage::{MemStorage, Storage};

/// How far the file may grow beyond its length when opened.
pub const GROWTH_LIMIT_BYTES: u64 = 16 << 20;

/// A `MemStorage` with bounds checks in front of it.
#[derive(Debug)]
pub struct BoundedDisk {
    inner: MemStorage,
    capacity_bytes: u64,
}

impl BoundedDisk {
    /// A disk holding `image` with room for [`GROWTH_LIMIT_BYTES`] more.
    pub fn new(image: Vec<u8>) -> Self {
        let capacity_bytes = image.len() as u64 + GROWTH_LIMIT_BYTES;
        BoundedDisk { inner: MemStorage::from_bytes(image), capacity_bytes }
    }

    fn room_for(&self, end: Option<u64>) -> io::Result<()> {
        match end {
            Some(end) if end <= self.capacity_bytes => Ok(()),
            _ => Err(io::Error::new(io::ErrorKind::StorageFull, "the fuzz disk is full")),
        }
    }
}

impl Storage for BoundedDisk {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        match offset.checked_add(buf.len() as u64) {
            Some(end) if end <= self.inner.len()? => self.inner.read_at(offset, buf),
            _ => Err(io::Error::new(io::ErrorKind::UnexpectedEof, "read past the end of the fuzz disk")),
        }
    }

    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.room_for(offset.checked_add(buf.len() as u64))?;
        self.inner.write_at(offset, buf)
    }

    fn sync(&self) -> io::Result<()> {
        self.inner.sync()
    }

    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }

    fn grow_to(&self, len: u64) -> io::Result<()> {
        self.room_for(Some(len))?;
        self.inner.grow_to(len)
    }

    fn truncate(&self, len: u64) -> io::Result<()> {
        self.inner.truncate(len)
    }
}
