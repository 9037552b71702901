//! Berkeley DB 5.3 peers through the C shim `shim/bdb_shim.c` (feature `peers`):
//! B-tree as an ordered key-value store (T1, T2) and Queue / Recno as heap tables
//! (T3). Transactional environment, synchronous commit, 8 KiB pages; the cache knob
//! is `set_cachesize`. The environment and database are free-threaded (DB_THREAD):
//! [`KvEngine::reader`] gives another handle for another thread (T7's writers), and a
//! transaction the deadlock detector chose as victim is aborted and run again.

use super::create_dir;
use crate::error::{BenchError, Result};
use crate::family::{KvEngine, KvOptions, QueueEngine};
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::path::{Path, PathBuf};

#[repr(C)]
struct RawHandle {
    _private: [u8; 0],
}

type Visit = extern "C" fn(*mut c_void, *const u8, usize, *const u8, usize);

unsafe extern "C" {
    fn bdb_error_text(code: c_int) -> *const c_char;
    fn bdb_open(dir: *const c_char, kind: c_int, re_len: u32, cache: u64, out: *mut *mut RawHandle) -> c_int;
    fn bdb_close(h: *mut RawHandle);
    fn bdb_begin(h: *mut RawHandle) -> c_int;
    fn bdb_commit(h: *mut RawHandle) -> c_int;
    fn bdb_abort(h: *mut RawHandle) -> c_int;
    fn bdb_clone(h: *mut RawHandle, out: *mut *mut RawHandle) -> c_int;
    fn bdb_put(h: *mut RawHandle, k: *const u8, kl: usize, v: *const u8, vl: usize) -> c_int;
    fn bdb_delete(h: *mut RawHandle, k: *const u8, kl: usize) -> c_int;
    fn bdb_append(h: *mut RawHandle, v: *const u8, vl: usize) -> c_int;
    fn bdb_get(
        h: *mut RawHandle,
        k: *const u8,
        kl: usize,
        out: *mut u8,
        cap: usize,
        vlen: *mut usize,
        found: *mut c_int,
    ) -> c_int;
    fn bdb_scan(h: *mut RawHandle, visit: Visit, ctx: *mut c_void) -> c_int;
    fn bdb_sync(h: *mut RawHandle) -> c_int;
}

/// Berkeley DB's `DB_NOTFOUND`.
const DB_NOTFOUND: c_int = -30988;
/// Berkeley DB's `DB_LOCK_DEADLOCK`: this transaction was chosen to break a deadlock.
const DB_LOCK_DEADLOCK: c_int = -30993;

/// An error from the shim, keeping the code (a deadlock is retried).
struct Failed(c_int);

/// The access method of a handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Btree = 0,
    Queue = 1,
    Recno = 2,
}

impl Kind {
    fn id(self) -> &'static str {
        match self {
            Kind::Btree => "bdb",
            Kind::Queue => "bdb-queue",
            Kind::Recno => "bdb-recno",
        }
    }
}

/// One handle on an environment + database; the last handle closes them on drop.
pub struct Bdb {
    raw: *mut RawHandle,
    kind: Kind,
    dir: PathBuf,
}

fn check(kind: Kind, rc: c_int) -> Result<()> {
    if rc == 0 { Ok(()) } else { Err(failure(kind, rc)) }
}

/// The error for a non-zero code.
fn failure(kind: Kind, rc: c_int) -> BenchError {
    // SAFETY: db_strerror returns a pointer to a static NUL-terminated string for any code.
    let text = unsafe { CStr::from_ptr(bdb_error_text(rc)) };
    BenchError::engine(kind.id(), format!("error {rc}: {}", text.to_string_lossy()))
}

impl Bdb {
    fn open_raw(dir: &Path, kind: Kind, re_len: usize, cache: Option<u64>) -> Result<Bdb> {
        create_dir(dir)?;
        let cdir = CString::new(dir.as_os_str().as_encoded_bytes()).map_err(|e| BenchError::engine(kind.id(), e))?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: `cdir` is a valid C string for the call; `raw` is a valid out pointer.
        let rc = unsafe { bdb_open(cdir.as_ptr(), kind as c_int, re_len as u32, cache.unwrap_or(0), &mut raw) };
        check(kind, rc)?;
        Ok(Bdb { raw, kind, dir: dir.into() })
    }

    /// Opener for `bdb` (B-tree).
    pub fn open_btree(dir: &Path, options: &KvOptions) -> Result<Box<dyn KvEngine>> {
        Ok(Box::new(Bdb::open_raw(dir, Kind::Btree, 0, options.cache_bytes)?))
    }

    /// Opener for `bdb-queue` (fixed-length records).
    pub fn open_queue(dir: &Path, record_len: usize) -> Result<Box<dyn QueueEngine>> {
        Ok(Box::new(Bdb::open_raw(dir, Kind::Queue, record_len, None)?))
    }

    /// Opener for `bdb-recno`.
    pub fn open_recno(dir: &Path, _record_len: usize) -> Result<Box<dyn QueueEngine>> {
        Ok(Box::new(Bdb::open_raw(dir, Kind::Recno, 0, None)?))
    }

    /// Runs `body` inside one transaction, committing on success; a transaction
    /// chosen as a deadlock's victim is aborted and `body` runs again.
    fn in_txn<T>(&mut self, mut body: impl FnMut(&mut Bdb) -> std::result::Result<T, Failed>) -> Result<T> {
        loop {
            // SAFETY: `raw` is a live handle owned by self; no transaction is open.
            check(self.kind, unsafe { bdb_begin(self.raw) })?;
            let rc = match body(self) {
                // SAFETY: a transaction was begun on this handle above.
                Ok(out) => match unsafe { bdb_commit(self.raw) } {
                    0 => return Ok(out),
                    rc => rc, // a failed commit has ended the transaction
                },
                Err(Failed(rc)) => {
                    // SAFETY: the transaction begun above is still open.
                    check(self.kind, unsafe { bdb_abort(self.raw) })?;
                    rc
                }
            };
            if rc != DB_LOCK_DEADLOCK {
                return Err(failure(self.kind, rc));
            }
        }
    }

    fn size(&mut self) -> Result<u64> {
        // SAFETY: `raw` is a live handle owned by self.
        check(self.kind, unsafe { bdb_sync(self.raw) })?;
        // The database file only: the environment's region files (__db.*) hold the
        // cache and the logs are transient, like SQLite's -shm and LMDB's lock file.
        let path = self.dir.join("data.db");
        std::fs::metadata(&path).map(|m| m.len()).map_err(|e| BenchError::io(&path, e))
    }

    fn scan_raw(&mut self, visit: &mut dyn FnMut(&[u8], &[u8])) -> Result<()> {
        extern "C" fn trampoline(ctx: *mut c_void, k: *const u8, kl: usize, v: *const u8, vl: usize) {
            // SAFETY: ctx is the `&mut &mut dyn FnMut` passed below, alive for the scan;
            // k/kl and v/vl describe buffers valid during this callback.
            unsafe {
                let visit = &mut *(ctx as *mut &mut dyn FnMut(&[u8], &[u8]));
                visit(std::slice::from_raw_parts(k, kl), std::slice::from_raw_parts(v, vl));
            }
        }
        let mut visit = visit;
        let ctx = &mut visit as *mut &mut dyn FnMut(&[u8], &[u8]) as *mut c_void;
        // SAFETY: `raw` is live; the callback only uses ctx during this call.
        check(self.kind, unsafe { bdb_scan(self.raw, trampoline, ctx) })
    }
}

// SAFETY: a handle is used by one thread at a time (`&mut self`); what handles share,
// the environment and the database, is opened DB_THREAD (free-threaded), and the
// shared reference count is atomic.
unsafe impl Send for Bdb {}

impl Drop for Bdb {
    fn drop(&mut self) {
        // SAFETY: `raw` came from bdb_open and is closed exactly once, here.
        unsafe { bdb_close(self.raw) }
    }
}

impl KvEngine for Bdb {
    fn put_batch(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<()> {
        self.in_txn(|h| {
            for (k, v) in pairs {
                // SAFETY: slices are valid for their lengths; a transaction is open.
                let rc = unsafe { bdb_put(h.raw, k.as_ptr(), k.len(), v.as_ptr(), v.len()) };
                if rc != 0 {
                    return Err(Failed(rc));
                }
            }
            Ok(())
        })
    }

    fn delete_batch(&mut self, keys: &[&[u8]]) -> Result<u64> {
        self.in_txn(|h| {
            let mut deleted = 0;
            for k in keys {
                // SAFETY: the slice is valid for its length; a transaction is open.
                match unsafe { bdb_delete(h.raw, k.as_ptr(), k.len()) } {
                    0 => deleted += 1,
                    DB_NOTFOUND => {}
                    rc => return Err(Failed(rc)),
                }
            }
            Ok(deleted)
        })
    }

    fn get(&mut self, key: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        if out.capacity() < 64 {
            out.reserve(64);
        }
        loop {
            let cap = out.capacity();
            let (mut vlen, mut found) = (0usize, 0 as c_int);
            // SAFETY: `out` has `cap` bytes of capacity the C side may write into;
            // vlen/found are valid out pointers.
            let rc =
                unsafe { bdb_get(self.raw, key.as_ptr(), key.len(), out.as_mut_ptr(), cap, &mut vlen, &mut found) };
            check(self.kind, rc)?;
            match found {
                0 => return Ok(false),
                1 => {
                    // SAFETY: the shim wrote exactly `vlen` <= cap bytes into `out`.
                    unsafe { out.set_len(vlen) };
                    return Ok(true);
                }
                _ => out.reserve(vlen.saturating_sub(out.len())),
            }
        }
    }

    fn scan(&mut self, visit: &mut dyn FnMut(&[u8], &[u8])) -> Result<()> {
        self.scan_raw(visit)
    }

    fn size_bytes(&mut self) -> Result<u64> {
        self.size()
    }

    fn reader(&self) -> Result<Box<dyn KvEngine + Send>> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: `self.raw` is live; `raw` is a valid out pointer.
        check(self.kind, unsafe { bdb_clone(self.raw, &mut raw) })?;
        Ok(Box::new(Bdb { raw, kind: self.kind, dir: self.dir.clone() }))
    }
}

impl QueueEngine for Bdb {
    fn append_batch(&mut self, records: &[&[u8]]) -> Result<()> {
        self.in_txn(|h| {
            for r in records {
                // SAFETY: the slice is valid for its length; a transaction is open.
                match unsafe { bdb_append(h.raw, r.as_ptr(), r.len()) } {
                    0 => {}
                    rc => return Err(Failed(rc)),
                }
            }
            Ok(())
        })
    }

    fn scan(&mut self, visit: &mut dyn FnMut(&[u8])) -> Result<()> {
        self.scan_raw(&mut |_, v| visit(v))
    }

    fn size_bytes(&mut self) -> Result<u64> {
        self.size()
    }
}
