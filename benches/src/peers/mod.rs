//! Peer engine adapters. Each file adapts one engine to one or more family traits of
//! `family.rs`. Native peers (Berkeley DB, Boost, libspatialindex) compile only with
//! the `peers` feature; the others are pure Rust or bundled and always present.
//! Every `unsafe` block in this module tree carries a `// SAFETY:` comment.

pub mod basex;
#[cfg(feature = "peers")]
pub mod bdb;
#[cfg(feature = "peers")]
pub mod boost;
pub mod files;
pub mod fjall;
pub mod lmdb;
pub mod quiredb_blobs;
pub mod quiredb_kv;
pub mod quiredb_queue;
pub mod quiredb_spatial;
pub mod quiredb_xml;
pub mod redb;
pub mod rstar;
#[cfg(feature = "peers")]
pub mod spatialindex;
pub mod sqlite;
pub mod sqlite_rtree;

use crate::error::{BenchError, Result};

/// Maps any displayable error to an engine error naming `engine`.
pub trait OrEngine<T> {
    fn or_engine(self, engine: &str) -> Result<T>;
}

impl<T, E: std::fmt::Display> OrEngine<T> for std::result::Result<T, E> {
    fn or_engine(self, engine: &str) -> Result<T> {
        self.map_err(|e| BenchError::engine(engine, e))
    }
}

/// Creates `dir` and its parents.
pub fn create_dir(dir: &std::path::Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| BenchError::io(dir, e))
}
