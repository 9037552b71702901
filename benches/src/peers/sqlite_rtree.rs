//! SQLite R*Tree peer (`sqlite-rtree`, WAL + FULL): points stored as float32 boxes with
//! min = max (the generators emit f32-exact coordinates, so nothing rounds). Window
//! queries are plain SQL; kNN registers a query callback `knn(x, y, …)` through
//! `sqlite3_rtree_query_callback` that scores each node by its minimum squared
//! distance, so the R*Tree's priority queue returns entries nearest first and
//! `LIMIT k` ends the search. SQLite has no bulk loader: bulk load is all inserts in
//! one transaction. Inserts stay in one open transaction until `commit`.

use super::sqlite::{Journal, connect};
use super::{OrEngine, create_dir};
use crate::error::{BenchError, Result};
use crate::family::{SpatialEngine, WindowAnswer};
use libsqlite3_sys as ffi;
use rusqlite::{Connection, params_from_iter};
use std::ffi::c_int;
use std::path::Path;

const ID: &str = "sqlite-rtree";

/// An R*Tree virtual table `rt(id, c0_lo, c0_hi, …)` of `dims` dimensions.
pub struct SqliteRtree {
    conn: Connection,
    dims: usize,
    in_txn: bool,
    insert_sql: String,
    window_sql: String,
    knn_sql: String,
}

/// The kNN scoring callback: minimum squared distance from the query point (the
/// parameters) to the entry's box; leaves are FULLY_WITHIN so they are returned.
unsafe extern "C" fn knn_score(info: *mut ffi::sqlite3_rtree_query_info) -> c_int {
    // SAFETY: SQLite passes a valid info struct for the duration of the call; aParam
    // holds nParam doubles and aCoord nCoord doubles (2 per dimension).
    let info = unsafe { &mut *info };
    let (params, coords) = unsafe {
        (
            std::slice::from_raw_parts(info.aParam, info.nParam as usize),
            std::slice::from_raw_parts(info.aCoord, info.nCoord as usize),
        )
    };
    let mut d2 = 0.0;
    for (i, &p) in params.iter().enumerate() {
        let (lo, hi) = (coords[2 * i], coords[2 * i + 1]);
        let d = if p < lo {
            lo - p
        } else if p > hi {
            p - hi
        } else {
            0.0
        };
        d2 += d * d;
    }
    info.rScore = d2;
    info.eWithin = if info.iLevel == 0 { ffi::FULLY_WITHIN } else { ffi::PARTLY_WITHIN };
    ffi::SQLITE_OK
}

fn register_knn(conn: &Connection) -> Result<()> {
    // SAFETY: the handle is live while `conn` is; the callback has no context to free
    // and stays valid for the program's lifetime.
    let rc = unsafe {
        ffi::sqlite3_rtree_query_callback(conn.handle(), c"knn".as_ptr(), Some(knn_score), std::ptr::null_mut(), None)
    };
    if rc == ffi::SQLITE_OK { Ok(()) } else { Err(BenchError::engine(ID, format!("rtree callback: code {rc}"))) }
}

/// Opener for `sqlite-rtree`.
pub fn open(dir: &Path, dims: usize) -> Result<Box<dyn SpatialEngine>> {
    if !(1..=5).contains(&dims) {
        return Err(BenchError::engine(ID, "the R*Tree module allows at most 5 dimensions"));
    }
    create_dir(dir)?;
    let path = dir.join("rtree.sqlite");
    let _ = std::fs::remove_file(&path);
    let conn = connect(&path, Journal::Wal, None)?;
    let cols: Vec<String> = (0..dims).map(|i| format!("c{i}_lo, c{i}_hi")).collect();
    conn.execute_batch(&format!("CREATE VIRTUAL TABLE rt USING rtree(id, {})", cols.join(", "))).or_engine(ID)?;
    register_knn(&conn)?;
    let marks = vec!["?"; 1 + 2 * dims].join(", ");
    let conds: Vec<String> =
        (0..dims).map(|i| format!("c{i}_hi >= ?{} AND c{i}_lo <= ?{}", 1 + i, 1 + dims + i)).collect();
    let args = vec!["?"; dims].join(", ");
    Ok(Box::new(SqliteRtree {
        conn,
        dims,
        in_txn: false,
        insert_sql: format!("INSERT INTO rt VALUES ({marks})"),
        window_sql: format!("SELECT id FROM rt WHERE {}", conds.join(" AND ")),
        knn_sql: format!("SELECT id FROM rt WHERE id MATCH knn({args}) LIMIT ?{}", dims + 1),
    }))
}

impl SqliteRtree {
    fn begin(&mut self) -> Result<()> {
        if !self.in_txn {
            self.conn.execute_batch("BEGIN").or_engine(ID)?;
            self.in_txn = true;
        }
        Ok(())
    }

    fn insert_row(&mut self, id: u64, p: &[f64]) -> Result<()> {
        let mut stmt = self.conn.prepare_cached(&self.insert_sql).or_engine(ID)?;
        let mut params = Vec::with_capacity(1 + 2 * p.len());
        params.push(rusqlite::types::Value::Integer(id as i64));
        for &c in p {
            params.extend([rusqlite::types::Value::Real(c), rusqlite::types::Value::Real(c)]);
        }
        stmt.execute(params_from_iter(params)).or_engine(ID)?;
        Ok(())
    }
}

impl SpatialEngine for SqliteRtree {
    fn insert(&mut self, id: u64, p: &[f64]) -> Result<()> {
        assert_eq!(p.len(), self.dims, "point of the engine's dimension");
        self.begin()?;
        self.insert_row(id, p)
    }

    fn commit(&mut self) -> Result<()> {
        if self.in_txn {
            self.conn.execute_batch("COMMIT").or_engine(ID)?;
            self.in_txn = false;
        }
        Ok(())
    }

    fn bulk_load(&mut self, ids: &[u64], coords: &[f64]) -> Result<()> {
        self.begin()?;
        self.conn.execute_batch("DELETE FROM rt").or_engine(ID)?;
        for (&id, p) in ids.iter().zip(coords.chunks_exact(self.dims)) {
            self.insert_row(id, p)?;
        }
        self.commit()
    }

    fn window(&mut self, lo: &[f64], hi: &[f64]) -> Result<WindowAnswer> {
        let mut stmt = self.conn.prepare_cached(&self.window_sql).or_engine(ID)?;
        let mut rows = stmt.query(params_from_iter(lo.iter().chain(hi))).or_engine(ID)?;
        let mut answer = WindowAnswer::default();
        while let Some(row) = rows.next().or_engine(ID)? {
            answer.add(row.get::<_, i64>(0).or_engine(ID)? as u64);
        }
        Ok(answer)
    }

    fn knn(&mut self, p: &[f64], k: usize, out: &mut Vec<u64>) -> Result<()> {
        out.clear();
        let mut stmt = self.conn.prepare_cached(&self.knn_sql).or_engine(ID)?;
        let params: Vec<rusqlite::types::Value> = p
            .iter()
            .map(|&c| rusqlite::types::Value::Real(c))
            .chain(std::iter::once(rusqlite::types::Value::Integer(k as i64)))
            .collect();
        let mut rows = stmt.query(params_from_iter(params)).or_engine(ID)?;
        while let Some(row) = rows.next().or_engine(ID)? {
            out.push(row.get::<_, i64>(0).or_engine(ID)? as u64);
        }
        Ok(())
    }
}
