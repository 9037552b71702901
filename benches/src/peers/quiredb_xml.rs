//! QuireDB's native XML store for T5 (`quiredb`): one database file per collection
//! (`<name>.quire`, 8 KiB pages, pool 256 MiB), the document loaded in one write
//! transaction committed with `Durability::Checksummed`. The load time is the whole
//! `load` + commit, measured here around the call.
//!
//! Queries over the store (structural joins) are the next issue's work: until then
//! this engine loads only, and T5 says so in its report instead of timing queries.

use super::{OrEngine, create_dir};
use crate::error::{BenchError, Result};
use crate::family::{QueryTiming, XmlEngine};
use quiredb_engine::{Database, Durability};
use quiredb_xml::store::{self, LoadOptions};
use std::path::{Path, PathBuf};

const ID: &str = "quiredb";

/// The XML adapter.
pub struct QuireXml {
    dir: PathBuf,
}

/// Opener for `quiredb` in T5.
pub fn open(dir: &Path) -> Result<Box<dyn XmlEngine>> {
    create_dir(dir)?;
    Ok(Box::new(QuireXml { dir: dir.into() }))
}

impl QuireXml {
    fn file(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.quire"))
    }
}

impl XmlEngine for QuireXml {
    fn load(&mut self, name: &str, file: &Path) -> Result<Option<f64>> {
        let db = Database::builder().cache_bytes(256 << 20).create(self.file(name)).or_engine(ID)?;
        let txn = db.begin_write().or_engine(ID)?;
        store::load(&txn, name, &[file.to_path_buf()], LoadOptions::default(), &mut |_| {}).or_engine(ID)?;
        txn.commit(Durability::Checksummed).or_engine(ID)?;
        Ok(None)
    }

    fn answers_queries(&self) -> bool {
        false
    }

    fn run_queries(&mut self, _name: &str, _queries: &[String], _runs: usize) -> Result<Vec<QueryTiming>> {
        Err(BenchError::engine(ID, "the XML store answers no XPath yet (structural joins are the next issue)"))
    }

    fn size_bytes(&mut self, name: &str) -> Result<u64> {
        let path = self.file(name);
        Ok(std::fs::metadata(&path).map_err(|e| BenchError::io(&path, e))?.len())
    }
}
