//! [`FileStorage`]: the real page file.
//!
//! Positioned reads and writes (`pread`/`pwrite` through `FileExt`), `fdatasync` for
//! durability, and growth in preallocated chunks with `posix_fallocate`, so a commit
//! never changes the file's size (which would force a journal commit of the file system
//! on the next sync). Nothing is created or unlinked on the commit path. The file is
//! locked exclusively (`flock`) for as long as the storage lives. The commit log's
//! durable appends go through a second, `O_DIRECT` descriptor when the file system
//! takes one (`direct.rs`). A chunk the file grows by is read into the page cache ahead
//! of the writes that fill it, by a thread (`warmer.rs`).

use super::Storage;
use super::direct::DirectAppender;
use super::warmer::CacheWarmer;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// Smallest growth step of the file.
const MIN_GROWTH_BYTES: u64 = 1 << 20;
/// Largest growth step of the file.
const MAX_GROWTH_BYTES: u64 = 64 << 20;
/// Most buffers one `pwritev` takes (Linux's `IOV_MAX` is 1,024).
const MAX_IOVECS: usize = 1024;
/// Smallest growth whose room past the caller's need is read into the page cache
/// (`warmer.rs`): a smaller file starts no thread.
const WARM_FROM_BYTES: u64 = 4 << 20;

/// The real page file.
#[derive(Debug)]
pub struct FileStorage {
    file: File,
    /// The direct path of [`Storage::write_durable`]; `None` read-only or where the
    /// file system refuses `O_DIRECT`.
    direct: Option<DirectAppender>,
    /// Reads the room each growth leaves past the caller's need into the page cache;
    /// started by the first growth of at least [`WARM_FROM_BYTES`].
    warmer: std::sync::OnceLock<Option<CacheWarmer>>,
}

/// What kind of open failed: the lock or something else.
#[derive(Debug)]
pub enum OpenError {
    /// Another handle holds the lock.
    Locked,
    /// Any other I/O failure.
    Io(io::Error),
}

impl FileStorage {
    /// Opens (or creates, with `create`) the file and takes an exclusive lock on it.
    pub fn open(path: &Path, create: bool) -> Result<Self, OpenError> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(create)
            .truncate(false)
            .open(path)
            .map_err(OpenError::Io)?;
        match file.try_lock() {
            Ok(()) => Ok(FileStorage { file, direct: DirectAppender::open(path), warmer: Default::default() }),
            Err(std::fs::TryLockError::WouldBlock) => Err(OpenError::Locked),
            Err(std::fs::TryLockError::Error(error)) => Err(OpenError::Io(error)),
        }
    }

    /// Opens the file for reading only, under a shared lock (other read-only handles
    /// may hold it too; a writer's exclusive lock excludes them).
    pub fn open_read_only(path: &Path) -> Result<Self, OpenError> {
        let file = OpenOptions::new().read(true).open(path).map_err(OpenError::Io)?;
        match file.try_lock_shared() {
            Ok(()) => Ok(FileStorage { file, direct: None, warmer: Default::default() }),
            Err(std::fs::TryLockError::WouldBlock) => Err(OpenError::Locked),
            Err(std::fs::TryLockError::Error(error)) => Err(OpenError::Io(error)),
        }
    }

    /// Has the room `range` a growth left past the caller's need read into the page
    /// cache (`warmer.rs`), if it is large enough to be worth a thread.
    fn warm(&self, range: std::ops::Range<u64>) {
        if range.end - range.start < WARM_FROM_BYTES {
            return;
        }
        let warmer = self.warmer.get_or_init(|| self.file.try_clone().ok().and_then(CacheWarmer::start));
        if let Some(warmer) = warmer {
            warmer.warm(range);
        }
    }

    /// Growth step for a file of `len` bytes: an eighth of it, within bounds.
    fn growth_step(len: u64) -> u64 {
        (len / 8).clamp(MIN_GROWTH_BYTES, MAX_GROWTH_BYTES)
    }

    /// Writes the buffers `iovecs` point to back to back from `offset` with `pwritev2`
    /// and `flags` (`RWF_DSYNC` for a durable write), at most [`MAX_IOVECS`] a call; a
    /// partial write resumes inside the buffer it stopped in. The iovecs must point into
    /// slices the caller holds for the whole call.
    fn write_gathered(&self, mut offset: u64, iovecs: &mut [libc::iovec], flags: libc::c_int) -> io::Result<()> {
        let mut done = iovecs.iter().take_while(|iovec| iovec.iov_len == 0).count();
        while done < iovecs.len() {
            let batch = &iovecs[done..iovecs.len().min(done + MAX_IOVECS)];
            // SAFETY: the descriptor is the open file `self.file` owns; each iovec of
            // `batch` points to `iov_len` readable bytes of a slice the caller holds for
            // the whole call (advanced below only within it); the kernel only reads them.
            let written = unsafe {
                libc::pwritev2(
                    self.file.as_raw_fd(),
                    batch.as_ptr(),
                    batch.len() as libc::c_int,
                    offset as libc::off_t,
                    flags,
                )
            };
            if written < 0 {
                let error = io::Error::last_os_error();
                if error.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(error);
            }
            if written == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            offset += written as u64;
            let mut left = written as usize;
            while left > 0 || iovecs.get(done).is_some_and(|iovec| iovec.iov_len == 0) {
                let iovec = &mut iovecs[done];
                let taken = left.min(iovec.iov_len);
                iovec.iov_base = iovec.iov_base.wrapping_add(taken);
                iovec.iov_len -= taken;
                left -= taken;
                if iovec.iov_len == 0 {
                    done += 1;
                }
            }
        }
        Ok(())
    }
}

impl Storage for FileStorage {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.file.read_exact_at(buf, offset)
    }

    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.file.write_all_at(buf, offset)
    }

    fn sync(&self) -> io::Result<()> {
        self.file.sync_data()
    }

    fn write_durable(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        if let Some(result) = self.direct.as_ref().and_then(|direct| direct.append(offset, buf)) {
            return result;
        }
        let iovec = libc::iovec { iov_base: buf.as_ptr() as *mut libc::c_void, iov_len: buf.len() };
        self.write_gathered(offset, &mut [iovec], libc::RWF_DSYNC)
    }

    fn write_pages_at(&self, offset: u64, pages: &[&[u8]]) -> io::Result<()> {
        let mut iovecs: Vec<libc::iovec> = pages
            .iter()
            .map(|page| libc::iovec { iov_base: page.as_ptr() as *mut libc::c_void, iov_len: page.len() })
            .collect();
        self.write_gathered(offset, &mut iovecs, 0)
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }

    fn grow_to(&self, len: u64) -> io::Result<()> {
        let current = self.len()?;
        if current >= len {
            return Ok(());
        }
        let target = len.max(current + Self::growth_step(current));
        let fd = self.file.as_raw_fd();
        // SAFETY: `fd` is a valid open descriptor owned by `self.file` for the whole call.
        let rc = unsafe { libc::posix_fallocate(fd, current as libc::off_t, (target - current) as libc::off_t) };
        match rc {
            0 => {}
            // File systems without fallocate support: fall back to a sparse extension.
            libc::EOPNOTSUPP | libc::EINVAL => self.file.set_len(target)?,
            errno => return Err(io::Error::from_raw_os_error(errno)),
        }
        self.warm(len..target);
        Ok(())
    }

    fn truncate(&self, len: u64) -> io::Result<()> {
        self.file.set_len(len)?;
        self.file.sync_all()
    }

    fn map(&self) -> Option<io::Result<memmap2::Mmap>> {
        // SAFETY: the file is locked exclusively by this process (flock), and the engine
        // only reads mapped ranges holding committed pages, which are never rewritten
        // while a snapshot that can see them is alive; truncation happens only below
        // the lowest such page.
        Some(unsafe { memmap2::Mmap::map(&self.file) })
    }

    fn will_need(&self, offset: u64, len: u64) {
        use std::os::fd::AsRawFd;
        let (Ok(offset), Ok(len)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) else { return };
        // SAFETY: posix_fadvise reads only its integer arguments; the descriptor is the
        // open file this storage owns. Its result is ignored: the hint may be dropped.
        let _ = unsafe { libc::posix_fadvise(self.file.as_raw_fd(), offset, len, libc::POSIX_FADV_WILLNEED) };
    }

    fn start_write_out(&self, offset: u64, len: u64) {
        use std::os::fd::AsRawFd;
        let (Ok(offset), Ok(len)) = (libc::off64_t::try_from(offset), libc::off64_t::try_from(len)) else { return };
        // SAFETY: sync_file_range reads only its integer arguments; the descriptor is the
        // open file this storage owns. `SYNC_FILE_RANGE_WRITE` alone starts the write-out
        // of the range's dirty pages without waiting for it; its result is ignored (a
        // hint: the commit's `fdatasync` writes whatever this did not start).
        let _ = unsafe { libc::sync_file_range(self.file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_in_chunks_and_locks_exclusively() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let storage = FileStorage::open(&path, true).unwrap();
        storage.grow_to(8192).unwrap();
        assert!(storage.len().unwrap() >= MIN_GROWTH_BYTES);
        storage.write_at(100, b"hello").unwrap();
        let mut buf = [0u8; 5];
        storage.read_at(100, &mut buf).unwrap();
        assert_eq!(&buf, b"hello");
        storage.write_durable(4096, b"durable").unwrap();
        let mut buf = [0u8; 7];
        storage.read_at(4096, &mut buf).unwrap();
        assert_eq!(&buf, b"durable");
        assert!(matches!(FileStorage::open(&path, false), Err(OpenError::Locked)));
        drop(storage);
        assert!(FileStorage::open(&path, false).is_ok());
    }

    /// Pages of `range` of `file` the page cache holds (`mincore` on a map of it).
    fn resident_pages(file: &File, range: std::ops::Range<usize>) -> usize {
        // SAFETY: the map is read by the kernel only (`mincore` reads no byte of it), and
        // the test's storage does not truncate the file while it lives.
        let map = unsafe { memmap2::Mmap::map(file) }.unwrap();
        let pages = (range.end - range.start).div_ceil(4096);
        let mut vector = vec![0u8; pages];
        // SAFETY: `range` lies in the map (4 KiB-aligned start) and `vector` holds a byte
        // per page of it.
        let rc = unsafe {
            libc::mincore(
                map.as_ptr().add(range.start) as *mut libc::c_void,
                range.end - range.start,
                vector.as_mut_ptr(),
            )
        };
        assert_eq!(rc, 0, "mincore: {}", io::Error::last_os_error());
        vector.iter().filter(|&&flags| flags & 1 == 1).count()
    }

    #[test]
    fn the_room_a_growth_leaves_is_read_into_the_page_cache_and_the_thread_ends_with_the_storage() {
        // Proves: growing past the caller's need has the room beyond it read into the
        // page cache by the warmer (fallocate alone leaves it uncached), the part the
        // caller asked for is left to its own writes, and dropping the storage ends the
        // thread holding a duplicate of the locked descriptor (the file opens again).
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let storage = FileStorage::open(&path, true).unwrap();
        let (mib, page) = (1usize << 20, 4096usize);
        storage.grow_to(64 * mib as u64).unwrap();
        assert_eq!(resident_pages(&storage.file, 0..64 * mib), 0, "a first growth to the need warms nothing");
        storage.grow_to((64 * mib + page) as u64).unwrap();
        assert_eq!(storage.len().unwrap(), 72 * mib as u64, "the growth step is an eighth of the file");
        let room = 64 * mib + page..72 * mib;
        let wanted = (room.end - room.start) / page;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while resident_pages(&storage.file, room.clone()) < wanted && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(resident_pages(&storage.file, room), wanted, "the room past the need is cached");
        assert_eq!(resident_pages(&storage.file, 0..64 * mib), 0, "the needed part is the writer's");
        drop(storage);
        assert!(FileStorage::open(&path, false).is_ok(), "the warmer let go of the file");
    }

    #[test]
    fn gathered_pages_land_back_to_back_like_one_write() {
        let dir = tempfile::tempdir().unwrap();
        let storage = FileStorage::open(&dir.path().join("f"), true).unwrap();
        // More buffers than one pwritev takes, of uneven sizes, with empty ones between.
        let pages: Vec<Vec<u8>> = (0..MAX_IOVECS + 300).map(|i| vec![(i % 251) as u8; (i % 5) * 700]).collect();
        let slices: Vec<&[u8]> = pages.iter().map(Vec::as_slice).collect();
        storage.write_pages_at(3, &slices).unwrap();
        let whole = pages.concat();
        let mut back = vec![0u8; whole.len()];
        storage.read_at(3, &mut back).unwrap();
        assert!(back == whole, "the gathered write differs from the concatenation");
        storage.write_pages_at(0, &[]).unwrap();
    }
}
