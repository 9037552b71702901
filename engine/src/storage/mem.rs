//! [`MemStorage`]: an in-memory page file, for tests and temporary databases.
//!
//! Every operation takes a short lock on the byte vector; `sync` is a no-op because
//! nothing outlives the process anyway.

use super::Storage;
use parking_lot::Mutex;
use std::io;

/// A page file held in a `Vec<u8>`.
#[derive(Debug, Default)]
pub struct MemStorage {
    bytes: Mutex<Vec<u8>>,
}

impl MemStorage {
    /// An empty in-memory file.
    pub fn new() -> Self {
        Self::default()
    }

    /// An in-memory file holding `bytes` (for example a crash image).
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        MemStorage { bytes: Mutex::new(bytes) }
    }

    /// A copy of the current contents.
    pub fn snapshot(&self) -> Vec<u8> {
        self.bytes.lock().clone()
    }
}

/// Reads `buf.len()` bytes at `offset` out of `bytes`.
pub(crate) fn read_slice(bytes: &[u8], offset: u64, buf: &mut [u8]) -> io::Result<()> {
    let past_end = || io::Error::new(io::ErrorKind::UnexpectedEof, "read past the end of the file");
    let start = usize::try_from(offset).map_err(|_| past_end())?;
    let end = start.checked_add(buf.len()).ok_or_else(past_end)?;
    if end > bytes.len() {
        return Err(past_end());
    }
    buf.copy_from_slice(&bytes[start..end]);
    Ok(())
}

/// Writes `buf` at `offset` into `bytes`, growing it with zeros.
pub(crate) fn write_slice(bytes: &mut Vec<u8>, offset: u64, buf: &[u8]) {
    let start = offset as usize;
    let end = start + buf.len();
    if end > bytes.len() {
        bytes.resize(end, 0);
    }
    bytes[start..end].copy_from_slice(buf);
}

impl Storage for MemStorage {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        read_slice(&self.bytes.lock(), offset, buf)
    }

    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        write_slice(&mut self.bytes.lock(), offset, buf);
        Ok(())
    }

    fn sync(&self) -> io::Result<()> {
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.bytes.lock().len() as u64)
    }

    fn grow_to(&self, len: u64) -> io::Result<()> {
        let mut bytes = self.bytes.lock();
        if (bytes.len() as u64) < len {
            bytes.resize(len as usize, 0);
        }
        Ok(())
    }

    fn truncate(&self, len: u64) -> io::Result<()> {
        self.bytes.lock().truncate(len as usize);
        Ok(())
    }
}
