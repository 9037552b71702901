//! The I/O seam: every byte the engine reads or writes goes through [`Storage`].
//!
//! Three implementations: [`FileStorage`] (the real file: positioned I/O, `fdatasync`,
//! growth in preallocated chunks), [`MemStorage`] (a `Vec<u8>`), and [`FaultyStorage`]
//! (for tests: tears writes at 512-byte granularity, forgets unsynced writes when it
//! "crashes", fails the N-th operation with EIO or ENOSPC).
//!
//! Invariant: after `sync` returns `Ok`, every write issued before it survives a crash;
//! after `write_durable` returns `Ok`, that write does (earlier ones need not). Nothing
//! else is promised — in particular unsynced writes may survive partially.

mod direct;
mod faulty;
mod file;
mod mapped;
mod mem;
mod overlay;
mod warmer;

pub use faulty::{CrashMode, Fault, FaultKind, FaultyStorage};
pub use file::{FileStorage, OpenError};
pub(crate) use mapped::FileMap;
pub use mem::MemStorage;
pub(crate) use overlay::OverlayStorage;

use std::io;

/// Page-file I/O. Offsets and lengths are in bytes; implementations are shared between
/// threads, so every method takes `&self`.
pub trait Storage: Send + Sync {
    /// Fills `buf` from `offset`; reading past the end is an error.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()>;
    /// Writes all of `buf` at `offset`, growing the file if needed.
    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()>;
    /// Writes `pages` back to back from `offset` (a run of adjacent pages, each in its
    /// own frame), as [`Storage::write_at`] of their concatenation would. The file's
    /// implementation gathers them in one `pwritev`, without copying them into one
    /// buffer first; the default writes them one by one.
    fn write_pages_at(&self, mut offset: u64, pages: &[&[u8]]) -> io::Result<()> {
        for page in pages {
            self.write_at(offset, page)?;
            offset += page.len() as u64;
        }
        Ok(())
    }
    /// Makes every earlier write durable (`fdatasync`).
    fn sync(&self) -> io::Result<()>;
    /// Writes all of `buf` at `offset` and makes *that write* durable before returning
    /// (the commit log's append). Earlier writes elsewhere need not become durable: the
    /// file's implementation flushes only this range (`RWF_DSYNC`), which is what
    /// makes an append cheaper than a `sync` of a file with other dirty pages. The
    /// default writes and then syncs everything, which keeps the promise.
    fn write_durable(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.write_at(offset, buf)?;
        self.sync()
    }
    /// Current length in bytes.
    fn len(&self) -> io::Result<u64>;
    /// True when the file holds no bytes.
    fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }
    /// Reserves space so that the file is at least `len` bytes long. Cheap if it already is.
    fn grow_to(&self, len: u64) -> io::Result<()>;
    /// Cuts the file to `len` bytes (used by `compact`).
    fn truncate(&self, len: u64) -> io::Result<()>;
    /// A read-only memory map of the file, for the optional mmap read path.
    fn map(&self) -> Option<io::Result<memmap2::Mmap>> {
        None
    }
    /// A hint that bytes `offset..offset + len` will be read soon, so the OS may start
    /// reading them (a scan's next run). No error: a hint may be ignored. The default
    /// does nothing.
    fn will_need(&self, offset: u64, len: u64) {
        let _ = (offset, len);
    }
    /// A hint that bytes `offset..offset + len`, just written, should start on their way
    /// to the device now (a large transaction's pages written ahead of its commit), so
    /// that the commit's sync waits only for what is still in flight. It promises
    /// nothing about durability; only [`Storage::sync`] does. No error: a hint may be
    /// ignored. The default does nothing.
    fn start_write_out(&self, offset: u64, len: u64) {
        let _ = (offset, len);
    }
}
