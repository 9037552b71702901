//! QuireDB blobs for T6 (`quiredb`): one database file `blobs.quire` with 4 KiB pages
//! (a 10 KB blob then takes three pages, like SQLite's overflow chains), a B+tree
//! `blobs` from the big-endian id to the 16-byte `BlobRef`. Each batch is one write
//! transaction committed with `Durability::Checksummed`; reads open a snapshot per call.

use super::{OrEngine, create_dir};
use crate::error::Result;
use crate::family::{BlobEngine, dir_size};
use quiredb_engine::{Database, Durability};
use quiredb_structures::blob::{self, BlobRef};
use quiredb_structures::btree::BTree;
use std::path::{Path, PathBuf};

const ID: &str = "quiredb";
const NAME: &str = "blobs";

/// The blob adapter.
pub struct QuireBlobs {
    db: Database,
    dir: PathBuf,
    reference: Vec<u8>,
}

impl QuireBlobs {
    /// Opener for `quiredb` in T6 (the default options: pages beyond the pool read in
    /// place from a memory map of the file, `Options::mmap_reads`).
    pub fn open(dir: &Path) -> Result<Box<dyn BlobEngine>> {
        Self::create(dir, true)
    }

    /// Opener for `quiredb-pread` in T6: every pool miss read with `pread`, no map.
    pub fn open_pread(dir: &Path) -> Result<Box<dyn BlobEngine>> {
        Self::create(dir, false)
    }

    fn create(dir: &Path, mmap: bool) -> Result<Box<dyn BlobEngine>> {
        create_dir(dir)?;
        let options = Database::builder().page_size(4096).cache_bytes(256 << 20).mmap_reads(mmap).into_options();
        let db = Database::create(dir.join("blobs.quire"), options).or_engine(ID)?;
        let txn = db.begin_write().or_engine(ID)?;
        BTree::open_or_create(&txn, NAME).or_engine(ID)?;
        txn.commit(Durability::Full).or_engine(ID)?;
        Ok(Box::new(QuireBlobs { db, dir: dir.into(), reference: Vec::new() }))
    }
}

impl BlobEngine for QuireBlobs {
    fn put_batch(&mut self, blobs: &[(u64, &[u8])]) -> Result<()> {
        let txn = self.db.begin_write().or_engine(ID)?;
        let mut tree = BTree::open(&txn, NAME).or_engine(ID)?;
        for (id, bytes) in blobs {
            let stored = blob::write_bytes(&txn, bytes).or_engine(ID)?;
            tree.insert(&id.to_be_bytes(), &stored.to_bytes()).or_engine(ID)?;
        }
        drop(tree);
        txn.commit(Durability::Checksummed).or_engine(ID)
    }

    fn read(&mut self, id: u64, out: &mut Vec<u8>) -> Result<bool> {
        let txn = self.db.begin_read().or_engine(ID)?;
        let tree = BTree::open(&txn, NAME).or_engine(ID)?;
        if !tree.get(&id.to_be_bytes(), &mut self.reference).or_engine(ID)? {
            return Ok(false);
        }
        let stored = BlobRef::from_bytes(&self.reference).ok_or("a blob reference is not 16 bytes").or_engine(ID)?;
        blob::read_to_vec(&txn, stored, out).or_engine(ID)?;
        Ok(true)
    }

    fn size_bytes(&mut self) -> Result<u64> {
        dir_size(&self.dir)
    }
}
