//! Blobs: byte strings of any length (tested to 1 GiB) stored as a small radix tree of
//! `BLOB` pages, with streaming write ([`write`](fn@write)), positional reads ([`read_at`]), a
//! streaming reader ([`BlobReader`], `Read + Seek`) and length without reading data.
//!
//! A blob is named by a [`BlobRef`]: 16 bytes (root page id + length) that fit in a
//! B+tree leaf cell or a queue record. The empty blob has no pages (root id 0).
//!
//! Page layouts (offsets into the page *payload*, i.e. after the engine's 32-byte
//! header; `P` = payload size, 8160 bytes for 8 KiB pages; little-endian):
//!
//! Root page ([`BLOB_PAGE`], kind 19; data and index pages are of that kind too):
//!
//! | offset        | size      | field    | meaning                                          |
//! |--------------:|----------:|----------|--------------------------------------------------|
//! | 0             | 8         | len      | blob length in bytes (must equal the `BlobRef`'s) |
//! | 8             | 4         | tail_len | bytes of the blob's end kept inline in the root   |
//! | 12            | 2         | count    | child ids in the root                             |
//! | 14            | 1         | height   | 0 = no children; 1 = children are data pages; h = children are index pages of height h−1 |
//! | 15            | 1         | —        | zero                                              |
//! | 16            | 8·count   | children | logical page ids                                  |
//! | 16+8·count    | tail_len  | tail     | the last `tail_len` bytes of the blob             |
//!
//! Data page: `P` bytes of blob data (the last data page may be partly used).
//! Index page: `P/8` little-endian u64 child ids (unused slots are zero).
//!
//! Data page `i` holds blob bytes `[i·P, (i+1)·P)`; the root's child `j` at height `h`
//! covers data pages `[j·F^(h−1), (j+1)·F^(h−1))` with `F = P/8`, so [`read_at`] costs
//! `height` page reads, independent of the offset. Small blobs (≤ `P − 16` bytes) live
//! wholly in the root; a 10 KB blob takes two 8 KiB pages (three 4 KiB pages).
//!
//! Invariants (checked by [`check`]): header length equals the reference's, every data
//! page is full except possibly the last, `tail_len` ≤ `P − 16 − 8·count`, the tree
//! covers exactly `len − tail_len` bytes, every page is reachable once.
//!
//! Read next: `writer.rs` (building the tree), `reader.rs` (reads and the checker).

mod reader;
mod writer;

pub use reader::{BlobReader, check, len, read_at, read_to_vec, reader};
pub use writer::{free, write, write_bytes};

use crate::error::{Error, Result};
use quiredb_engine::{PageId, PageKind, PageRead, StructureKind, WriteTxn};

/// Page kind of every page of a blob: root, index and data pages.
pub const BLOB_PAGE: PageKind = PageKind::structure(19);

/// Size of the root page header.
pub(crate) const ROOT_HEADER: usize = 16;

/// A stored blob: its root page and its length. Fixed size ([`BlobRef::SIZE`] bytes).
///
/// # Examples
///
/// ```
/// use quiredb_engine::{Database, Durability, storage::MemStorage};
/// use quiredb_structures::blob::{self, BlobRef};
/// use std::io::{Read, Seek, SeekFrom};
/// use std::sync::Arc;
///
/// let db = Database::builder().cache_bytes(4 << 20).with_storage(Arc::new(MemStorage::new()), "example")?;
/// let txn = db.begin_write()?;
/// let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
/// let blob: BlobRef = blob::write_bytes(&txn, &data)?;
/// txn.commit(Durability::Checksummed)?;
///
/// let snapshot = db.begin_read()?;
/// assert_eq!(blob::len(&snapshot, blob)?, 100_000);
/// let mut middle = [0u8; 4];
/// blob::read_at(&snapshot, blob, 50_000, &mut middle)?;
/// assert_eq!(middle, data[50_000..50_004]);
/// let mut reader = blob::reader(&snapshot, blob);
/// reader.seek(SeekFrom::End(-3))?;
/// let mut end = Vec::new();
/// reader.read_to_end(&mut end)?;
/// assert_eq!(end, data[99_997..]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlobRef {
    /// Root page (0 for the empty blob).
    pub root: PageId,
    /// Length in bytes.
    pub len: u64,
}

impl BlobRef {
    /// Bytes of the encoded form.
    pub const SIZE: usize = 16;

    /// Length of the blob in bytes (no page is read).
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True for the empty blob.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The 16-byte encoding: root id then length, little-endian.
    pub fn to_bytes(&self) -> [u8; Self::SIZE] {
        let mut out = [0u8; Self::SIZE];
        out[..8].copy_from_slice(&self.root.0.to_le_bytes());
        out[8..].copy_from_slice(&self.len.to_le_bytes());
        out
    }

    /// Decodes [`BlobRef::to_bytes`]; `None` if `bytes` is not 16 bytes long.
    pub fn from_bytes(bytes: &[u8]) -> Option<BlobRef> {
        let bytes: &[u8; Self::SIZE] = bytes.try_into().ok()?;
        let root = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
        let len = u64::from_le_bytes(bytes[8..].try_into().expect("8 bytes"));
        Some(BlobRef { root: PageId(root), len })
    }
}

/// Stores `data` as a named blob in the catalog (kind `blob`, parameters = the 16-byte
/// [`BlobRef`]). Fails if the name exists.
pub fn put_named(txn: &WriteTxn<'_>, name: &str, data: &mut impl std::io::Read) -> Result<BlobRef> {
    let blob = write(txn, data)?;
    txn.create_structure(name, StructureKind::BLOB, &blob.to_bytes(), blob.root)?;
    Ok(blob)
}

/// The named blob `name`, if the catalog has it.
pub fn get_named(txn: &impl PageRead, name: &str) -> Result<Option<BlobRef>> {
    let Some(entry) = txn.catalog_entry(name)? else {
        return Ok(None);
    };
    named_ref(&entry).map(Some)
}

/// Removes the named blob and frees its pages; false if there was none.
pub fn delete_named(txn: &WriteTxn<'_>, name: &str) -> Result<bool> {
    if get_named(txn, name)?.is_none() {
        return Ok(false);
    }
    let entry = txn.drop_structure(name)?;
    free(txn, named_ref(&entry)?)?;
    Ok(true)
}

/// The [`BlobRef`] of a catalog entry of kind `blob`.
pub(crate) fn named_ref(entry: &quiredb_engine::CatalogEntry) -> Result<BlobRef> {
    if entry.kind != StructureKind::BLOB {
        return Err(Error::WrongKind {
            name: entry.name.clone(),
            found: entry.kind.name().to_owned(),
            expected: "blob".to_owned(),
        });
    }
    BlobRef::from_bytes(&entry.params).ok_or_else(|| Error::Corrupted {
        structure: entry.name.clone(),
        page: entry.root.0,
        reason: format!("blob parameters are {} bytes, not 16", entry.params.len()),
    })
}

/// The checker of a named blob, for `quire check` (`check.rs`).
pub fn check_entry(txn: &impl PageRead, entry: &quiredb_engine::CatalogEntry) -> Result<Vec<String>> {
    let blob = named_ref(entry)?;
    let mut pages = Vec::new();
    let mut problems = check(txn, blob, &mut pages)?;
    let distinct: std::collections::HashSet<u64> = pages.iter().copied().collect();
    if distinct.len() != pages.len() {
        problems.push(format!("{} pages are reachable more than once", pages.len() - distinct.len()));
    }
    Ok(problems)
}
