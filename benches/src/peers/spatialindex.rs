//! libspatialindex 1.9.3 peer through its C API (wrapped in `shim/spatial_shim.cpp`,
//! feature `peers`): R*-tree, 8 KiB pages, `libspatialindex-mem` (memory storage) and
//! `libspatialindex-disk` (disk storage, files in the run directory); bulk load is the
//! library's STR stream loader. kNN may return more than k on ties: the first k count.

use crate::error::{BenchError, Result};
use crate::family::{SpatialEngine, WindowAnswer};
use std::ffi::{CString, c_char, c_int, c_void};
use std::path::{Path, PathBuf};

unsafe extern "C" {
    fn sidx_new(dims: u32, disk: c_int, path: *const c_char) -> *mut c_void;
    fn sidx_new_bulk(
        dims: u32,
        disk: c_int,
        path: *const c_char,
        n: usize,
        ids: *const u64,
        pts: *const f64,
    ) -> *mut c_void;
    fn sidx_free(h: *mut c_void);
    fn sidx_flush(h: *mut c_void);
    fn sidx_insert(h: *mut c_void, dims: u32, id: u64, p: *const f64) -> c_int;
    fn sidx_window(h: *mut c_void, dims: u32, lo: *const f64, hi: *const f64, count: *mut u64, sum: *mut u64) -> c_int;
    fn sidx_knn(h: *mut c_void, dims: u32, p: *const f64, k: usize, out: *mut u64, n: *mut usize) -> c_int;
}

/// One libspatialindex index, owned; destroyed on drop.
pub struct SpatialIndex {
    raw: *mut c_void,
    dims: usize,
    disk: bool,
    path: CString,
    id: &'static str,
}

fn base_path(dir: &Path, id: &str) -> Result<CString> {
    std::fs::create_dir_all(dir).map_err(|e| BenchError::io(dir, e))?;
    let path: PathBuf = dir.join("sidx");
    CString::new(path.as_os_str().as_encoded_bytes()).map_err(|e| BenchError::engine(id, e))
}

impl SpatialIndex {
    fn open(dir: &Path, dims: usize, disk: bool, id: &'static str) -> Result<Box<dyn SpatialEngine>> {
        let path = base_path(dir, id)?;
        // SAFETY: `path` is a valid C string for the call; null means failure.
        let raw = unsafe { sidx_new(dims as u32, c_int::from(disk), path.as_ptr()) };
        if raw.is_null() {
            return Err(BenchError::engine(id, "Index_Create failed"));
        }
        Ok(Box::new(SpatialIndex { raw, dims, disk, path, id }))
    }

    fn check(&self, rc: c_int, what: &str) -> Result<()> {
        if rc == 0 { Ok(()) } else { Err(BenchError::engine(self.id, format!("{what} failed"))) }
    }
}

/// Opener for `libspatialindex-mem`.
pub fn open_memory(dir: &Path, dims: usize) -> Result<Box<dyn SpatialEngine>> {
    SpatialIndex::open(dir, dims, false, "libspatialindex-mem")
}

/// Opener for `libspatialindex-disk`.
pub fn open_disk(dir: &Path, dims: usize) -> Result<Box<dyn SpatialEngine>> {
    SpatialIndex::open(dir, dims, true, "libspatialindex-disk")
}

impl Drop for SpatialIndex {
    fn drop(&mut self) {
        // SAFETY: `raw` came from sidx_new(_bulk) and is destroyed exactly once, here.
        unsafe { sidx_free(self.raw) }
    }
}

impl SpatialEngine for SpatialIndex {
    fn insert(&mut self, id: u64, p: &[f64]) -> Result<()> {
        assert_eq!(p.len(), self.dims, "point of the engine's dimension");
        // SAFETY: `raw` is live; `p` holds dims doubles.
        let rc = unsafe { sidx_insert(self.raw, self.dims as u32, id, p.as_ptr()) };
        self.check(rc, "insert")
    }

    fn commit(&mut self) -> Result<()> {
        // SAFETY: `raw` is live.
        unsafe { sidx_flush(self.raw) };
        Ok(())
    }

    fn bulk_load(&mut self, ids: &[u64], coords: &[f64]) -> Result<()> {
        assert_eq!(coords.len(), ids.len() * self.dims, "one point per id");
        // SAFETY: the old index is destroyed before its files are recreated.
        unsafe { sidx_free(self.raw) };
        // SAFETY: path is a valid C string; ids/coords hold n and n*dims values and
        // outlive the call (the stream reads them only during it).
        let raw = unsafe {
            sidx_new_bulk(
                self.dims as u32,
                c_int::from(self.disk),
                self.path.as_ptr(),
                ids.len(),
                ids.as_ptr(),
                coords.as_ptr(),
            )
        };
        if raw.is_null() {
            // Keep the handle valid for Drop.
            // SAFETY: path is a valid C string.
            self.raw = unsafe { sidx_new(self.dims as u32, c_int::from(self.disk), self.path.as_ptr()) };
            return Err(BenchError::engine(self.id, "Index_CreateWithStream failed"));
        }
        self.raw = raw;
        Ok(())
    }

    fn window(&mut self, lo: &[f64], hi: &[f64]) -> Result<WindowAnswer> {
        assert!(lo.len() == self.dims && hi.len() == self.dims, "corners of the engine's dimension");
        let mut a = WindowAnswer::default();
        // SAFETY: `raw` is live; lo/hi hold dims doubles; out pointers are valid.
        let rc =
            unsafe { sidx_window(self.raw, self.dims as u32, lo.as_ptr(), hi.as_ptr(), &mut a.count, &mut a.id_sum) };
        self.check(rc, "window")?;
        Ok(a)
    }

    fn knn(&mut self, p: &[f64], k: usize, out: &mut Vec<u64>) -> Result<()> {
        out.clear();
        out.resize(k, 0);
        let mut n = 0usize;
        // SAFETY: `raw` is live; `p` holds dims doubles; `out` has room for k ids.
        let rc = unsafe { sidx_knn(self.raw, self.dims as u32, p.as_ptr(), k, out.as_mut_ptr(), &mut n) };
        self.check(rc, "knn")?;
        out.truncate(n);
        Ok(())
    }
}
