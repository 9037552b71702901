//! Boost.Geometry rtree 1.74 peer through the C++ shim `shim/spatial_shim.cpp`
//! (feature `peers`), in memory: `boost` = rstar<16>, `boost-quadratic-16` =
//! quadratic<16>; bulk load uses the packing constructor. Spatial family (T4).

use crate::error::{BenchError, Result};
use crate::family::{SpatialEngine, WindowAnswer};
use std::ffi::{c_int, c_void};
use std::path::Path;

unsafe extern "C" {
    fn boost_rtree_new(dims: u32, variant: c_int) -> *mut c_void;
    fn boost_rtree_free(h: *mut c_void);
    fn boost_rtree_insert(h: *mut c_void, id: u64, p: *const f64) -> c_int;
    fn boost_rtree_bulk(h: *mut c_void, n: usize, ids: *const u64, pts: *const f64) -> c_int;
    fn boost_rtree_window(h: *mut c_void, lo: *const f64, hi: *const f64, count: *mut u64, sum: *mut u64) -> c_int;
    fn boost_rtree_knn(h: *mut c_void, p: *const f64, k: usize, out: *mut u64, n: *mut usize) -> c_int;
}

/// One Boost rtree, owned; freed on drop.
pub struct Boost {
    raw: *mut c_void,
    dims: usize,
    id: &'static str,
}

impl Boost {
    fn open(dims: usize, variant: c_int, id: &'static str) -> Result<Box<dyn SpatialEngine>> {
        // SAFETY: plain constructor call; null means unsupported dims or allocation failure.
        let raw = unsafe { boost_rtree_new(dims as u32, variant) };
        if raw.is_null() {
            return Err(BenchError::engine(id, format!("cannot create a {dims}-D rtree")));
        }
        Ok(Box::new(Boost { raw, dims, id }))
    }

    fn check(&self, rc: c_int, what: &str) -> Result<()> {
        if rc == 0 { Ok(()) } else { Err(BenchError::engine(self.id, format!("{what} threw"))) }
    }
}

/// Opener for `boost` (rstar<16>).
pub fn open_rstar(_dir: &Path, dims: usize) -> Result<Box<dyn SpatialEngine>> {
    Boost::open(dims, 0, "boost")
}

/// Opener for `boost-quadratic-16`.
pub fn open_quadratic(_dir: &Path, dims: usize) -> Result<Box<dyn SpatialEngine>> {
    Boost::open(dims, 1, "boost-quadratic-16")
}

impl Drop for Boost {
    fn drop(&mut self) {
        // SAFETY: `raw` came from boost_rtree_new and is freed exactly once, here.
        unsafe { boost_rtree_free(self.raw) }
    }
}

impl SpatialEngine for Boost {
    fn insert(&mut self, id: u64, p: &[f64]) -> Result<()> {
        assert_eq!(p.len(), self.dims, "point of the engine's dimension");
        // SAFETY: `raw` is live and `p` holds `dims` doubles.
        let rc = unsafe { boost_rtree_insert(self.raw, id, p.as_ptr()) };
        self.check(rc, "insert")
    }

    fn commit(&mut self) -> Result<()> {
        Ok(())
    }

    fn bulk_load(&mut self, ids: &[u64], coords: &[f64]) -> Result<()> {
        assert_eq!(coords.len(), ids.len() * self.dims, "one point per id");
        // SAFETY: `raw` is live; ids has n entries and coords n*dims doubles.
        let rc = unsafe { boost_rtree_bulk(self.raw, ids.len(), ids.as_ptr(), coords.as_ptr()) };
        self.check(rc, "bulk load")
    }

    fn window(&mut self, lo: &[f64], hi: &[f64]) -> Result<WindowAnswer> {
        assert!(lo.len() == self.dims && hi.len() == self.dims, "corners of the engine's dimension");
        let mut a = WindowAnswer::default();
        // SAFETY: `raw` is live; lo/hi hold `dims` doubles; out pointers are valid.
        let rc = unsafe { boost_rtree_window(self.raw, lo.as_ptr(), hi.as_ptr(), &mut a.count, &mut a.id_sum) };
        self.check(rc, "window")?;
        Ok(a)
    }

    fn knn(&mut self, p: &[f64], k: usize, out: &mut Vec<u64>) -> Result<()> {
        assert_eq!(p.len(), self.dims, "point of the engine's dimension");
        out.clear();
        out.resize(k, 0);
        let mut n = 0usize;
        // SAFETY: `raw` is live; `p` holds dims doubles; `out` has room for k ids.
        let rc = unsafe { boost_rtree_knn(self.raw, p.as_ptr(), k, out.as_mut_ptr(), &mut n) };
        self.check(rc, "knn")?;
        out.truncate(n);
        Ok(())
    }
}
