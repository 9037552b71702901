//! [`OverlayStorage`]: a read-only view of a file with some pages replaced in memory.
//!
//! A read-only open of a file whose commit log holds commits (`txn/log.rs`) may not
//! write them into place, so it reads through this view: the pages the log holds are
//! served from memory, everything else from the file. Every write is refused.
//!
//! Invariant: each replaced page is exactly `page_size` bytes at a page boundary;
//! reads of any range see the replaced bytes wherever a replaced page overlaps it.

use super::Storage;
use std::collections::BTreeMap;
use std::io;
use std::sync::Arc;

/// A file with pages replaced in memory; writes fail.
pub(crate) struct OverlayStorage {
    inner: Arc<dyn Storage>,
    page_size: u64,
    /// Physical page → its bytes.
    pages: BTreeMap<u64, Vec<u8>>,
}

impl OverlayStorage {
    /// `inner` seen with `pages` (physical page → `page_size` bytes) replaced.
    pub(crate) fn new(inner: Arc<dyn Storage>, page_size: usize, pages: BTreeMap<u64, Vec<u8>>) -> Self {
        debug_assert!(pages.values().all(|bytes| bytes.len() == page_size), "whole pages only");
        OverlayStorage { inner, page_size: page_size as u64, pages }
    }

    /// Byte length of the view: the file's, or more if a replaced page lies past it.
    fn view_len(&self) -> io::Result<u64> {
        let past = self.pages.keys().next_back().map_or(0, |last| (last + 1) * self.page_size);
        Ok(self.inner.len()?.max(past))
    }
}

fn read_only() -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, "the database is open for reading only")
}

impl Storage for OverlayStorage {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let end = offset + buf.len() as u64;
        if end > self.view_len()? {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        // The part the file holds (a replaced page past its end reads as zeros first).
        let file_len = self.inner.len()?;
        buf.fill(0);
        if offset < file_len {
            let upto = (end.min(file_len) - offset) as usize;
            self.inner.read_at(offset, &mut buf[..upto])?;
        }
        let first = offset / self.page_size;
        for (&phys, bytes) in self.pages.range(first..end.div_ceil(self.page_size)) {
            let page_start = phys * self.page_size;
            let from = offset.max(page_start);
            let to = end.min(page_start + self.page_size);
            buf[(from - offset) as usize..(to - offset) as usize]
                .copy_from_slice(&bytes[(from - page_start) as usize..(to - page_start) as usize]);
        }
        Ok(())
    }

    fn write_at(&self, _offset: u64, _buf: &[u8]) -> io::Result<()> {
        Err(read_only())
    }

    fn sync(&self) -> io::Result<()> {
        Err(read_only())
    }

    fn len(&self) -> io::Result<u64> {
        self.view_len()
    }

    fn grow_to(&self, _len: u64) -> io::Result<()> {
        Err(read_only())
    }

    fn truncate(&self, _len: u64) -> io::Result<()> {
        Err(read_only())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::MemStorage;

    #[test]
    fn replaced_pages_are_read_and_writes_refused() {
        let inner = Arc::new(MemStorage::from_bytes(vec![1; 3 * 4096]));
        let pages = BTreeMap::from([(1, vec![2; 4096]), (4, vec![3; 4096])]);
        let view = OverlayStorage::new(inner, 4096, pages);
        assert_eq!(view.len().unwrap(), 5 * 4096, "a replaced page past the end extends the view");
        let mut buf = vec![0; 3 * 4096];
        view.read_at(2048, &mut buf).unwrap();
        assert_eq!((buf[0], buf[2048], buf[2048 + 4096], buf[3 * 4096 - 1]), (1, 2, 1, 0));
        let mut page = vec![0; 4096];
        view.read_at(4 * 4096, &mut page).unwrap();
        assert!(page.iter().all(|&byte| byte == 3));
        assert!(view.write_at(0, &[0]).is_err() && view.sync().is_err());
        assert!(view.read_at(5 * 4096, &mut page).is_err());
    }
}
