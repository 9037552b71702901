//! [`DirectAppender`]: the commit log's durable append through a second descriptor of
//! the page file opened with `O_DIRECT`.
//!
//! A buffered `pwritev2(RWF_DSYNC)` copies the block into the page cache, dirties it,
//! starts its writeback, waits for it and flushes the device. A direct write hands the
//! caller's block to the device and then flushes: on this machine kind (ext4 on a
//! virtio disk without FUA) a 4 KiB durable append took 80 µs and 17.7 µs of CPU
//! against 95–107 µs and 32 µs buffered (`reports/WRITE-PATH.md` §11). The promise is
//! the same: `RWF_DSYNC` on a direct write returns only after the data and whatever
//! metadata is needed to read it back are on stable storage.
//!
//! Direct I/O needs the offset, the length and the memory aligned to the device's
//! block; records are whole 4 KiB blocks at block offsets, built at an aligned address
//! (`txn/logged.rs`), else copied into an aligned scratch buffer first. Anything else,
//! or a file system that refuses `O_DIRECT` (`EINVAL` at open or at the write), takes
//! the buffered path:
//! [`DirectAppender::append`] returns `None` and the caller writes as before.
//!
//! Beside the page cache and the read-only map of `mmap_reads` (`mapped.rs`): the kernel
//! writes back and drops the cached pages of the range before a direct write, and
//! drops them again after it (unmapping them from every mapping), so a read of the
//! range that raced with the write (a scan's run, a read-ahead hint) leaves no stale
//! copy. What the kernel cannot drop is a dirty page, and nothing dirties the log's
//! region through the cache while appends go direct: the map is read-only, and a
//! buffered append happens only when a direct one cannot.

use parking_lot::Mutex;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// Alignment of a direct write's offset, length and memory: the largest logical block
/// size of the devices in use (a page cache page).
pub(super) const DIRECT_ALIGN: usize = 4096;

/// The page file opened a second time with `O_DIRECT | O_DSYNC`, with its aligned buffer.
#[derive(Debug)]
pub(super) struct DirectAppender {
    file: File,
    /// Bytes with room to start an aligned run of any length asked for so far.
    scratch: Mutex<Vec<u8>>,
    /// Cleared for good when a direct write is refused.
    enabled: AtomicBool,
}

impl DirectAppender {
    /// Opens `path` for direct, synchronous writes; `None` when the file system refuses
    /// (the buffered path is then the only one).
    pub(super) fn open(path: &Path) -> Option<Self> {
        let file = OpenOptions::new().write(true).custom_flags(libc::O_DIRECT | libc::O_DSYNC).open(path).ok()?;
        Some(DirectAppender { file, scratch: Mutex::new(Vec::new()), enabled: AtomicBool::new(true) })
    }

    /// Turns direct writes off for the life of the storage.
    pub(super) fn disable(&self) {
        self.enabled.store(false, Ordering::Release);
    }

    /// Writes `buf` at `offset` durably with direct I/O. `None` when this write cannot
    /// go direct (unaligned, turned off, or refused with `EINVAL`): the caller then
    /// writes all of it buffered, the same bytes over any part written directly.
    /// `Some(Err)` is a real I/O error.
    pub(super) fn append(&self, offset: u64, buf: &[u8]) -> Option<io::Result<()>> {
        let aligned = offset.is_multiple_of(DIRECT_ALIGN as u64) && buf.len().is_multiple_of(DIRECT_ALIGN);
        if !aligned || buf.is_empty() || !self.enabled.load(Ordering::Acquire) {
            return None;
        }
        if buf.as_ptr().align_offset(DIRECT_ALIGN) == 0 {
            return self.write(buf, offset); // the commit log builds its records aligned
        }
        let mut scratch = self.scratch.lock();
        if scratch.len() < buf.len() + DIRECT_ALIGN {
            *scratch = vec![0u8; buf.len() + DIRECT_ALIGN];
        }
        let start = scratch.as_ptr().align_offset(DIRECT_ALIGN);
        let block = &mut scratch[start..start + buf.len()];
        block.copy_from_slice(buf);
        self.write(block, offset)
    }

    /// Writes the aligned `block` at `offset` (see [`DirectAppender::append`]).
    fn write(&self, block: &[u8], offset: u64) -> Option<io::Result<()>> {
        match self.file.write_all_at(block, offset) {
            Ok(()) => Some(Ok(())),
            Err(error) if error.raw_os_error() == Some(libc::EINVAL) => {
                // The file system takes O_DIRECT at open but not this write (alignment
                // stricter than a page): from now on every append goes buffered.
                self.disable();
                None
            }
            Err(error) => Some(Err(error)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_appends_go_direct_and_read_back_the_others_are_left_to_the_caller() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let file = OpenOptions::new().read(true).write(true).create_new(true).open(&path).unwrap();
        file.set_len(4 * DIRECT_ALIGN as u64).unwrap();
        let Some(direct) = DirectAppender::open(&path) else {
            return; // a file system without O_DIRECT (tmpfs before Linux 6.6): nothing to test
        };
        let block = vec![7u8; 2 * DIRECT_ALIGN];
        match direct.append(DIRECT_ALIGN as u64, &block) {
            Some(result) => result.unwrap(),
            None => return, // refused at the write: the buffered path serves
        }
        let mut back = vec![0u8; 2 * DIRECT_ALIGN];
        file.read_exact_at(&mut back, DIRECT_ALIGN as u64).unwrap();
        assert_eq!(back, block);
        // A block already at an aligned address is written from where it is.
        let mut room = vec![9u8; 2 * DIRECT_ALIGN];
        let start = room.as_ptr().align_offset(DIRECT_ALIGN);
        room[start..start + DIRECT_ALIGN].fill(3);
        direct.append(0, &room[start..start + DIRECT_ALIGN]).expect("aligned in every way").unwrap();
        file.read_exact_at(&mut back[..DIRECT_ALIGN], 0).unwrap();
        assert!(back[..DIRECT_ALIGN].iter().all(|&byte| byte == 3));
        assert!(direct.append(100, &block).is_none(), "an unaligned offset goes buffered");
        assert!(direct.append(0, &block[..100]).is_none(), "an unaligned length goes buffered");
        direct.disable();
        assert!(direct.append(0, &block).is_none(), "a refused file goes buffered");
    }
}
