//! The catalog: named structures (`"stations"`, `"obs_by_time"`, …) with their kind,
//! parameters and root page, reachable from the meta page.
//!
//! The catalog is small (one entry per structure), so it is kept as one serialised
//! stream over a chain of logical `CATALOG` pages, loaded whole and rewritten whole
//! when it changes. Page body (after the 32-byte header):
//!
//! | offset | size | field | meaning                                   |
//! |-------:|-----:|-------|-------------------------------------------|
//! | 32     | 8    | next  | logical id of the next catalog page, 0 = last |
//! | 40     | 4    | used  | stream bytes in this page                  |
//! | 44     | 4    | —     | zero                                      |
//! | 48     | used | bytes | a slice of the stream                      |
//!
//! Stream: `u32 count`, then per entry `u16 name_len, name (UTF-8), u16 kind,
//! u32 params_len, params, u64 root` (little-endian).

use crate::error::{Error, Result};
use crate::page::{HEADER_SIZE, PageId, PageKind, read_u16, read_u32, read_u64};
use crate::txn::{PageRead, WriteTxn};
use std::collections::BTreeMap;

/// Longest structure name, in bytes.
pub const MAX_NAME_BYTES: usize = 255;
/// Largest parameter block of an entry, in bytes.
pub const MAX_PARAMS_BYTES: usize = 4096;
/// Offset of the stream inside a catalog page payload.
const BODY: usize = 48 - HEADER_SIZE;

/// The kind of a structure, as a registered code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StructureKind(pub u16);

impl StructureKind {
    /// B+tree.
    pub const BTREE: StructureKind = StructureKind(1);
    /// R*-tree.
    pub const RTREE: StructureKind = StructureKind(2);
    /// Paged queue / heap table.
    pub const QUEUE: StructureKind = StructureKind(3);
    /// Blob store.
    pub const BLOB: StructureKind = StructureKind(4);
    /// XML collection.
    pub const XML: StructureKind = StructureKind(5);

    /// Human-readable name.
    pub fn name(self) -> &'static str {
        match self {
            Self::BTREE => "btree",
            Self::RTREE => "rtree",
            Self::QUEUE => "queue",
            Self::BLOB => "blob",
            Self::XML => "xml",
            _ => "unknown",
        }
    }
}

/// One named structure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogEntry {
    /// Unique name.
    pub name: String,
    /// What it is.
    pub kind: StructureKind,
    /// Structure-defined parameters (dimensions, key encoding, …).
    pub params: Vec<u8>,
    /// The structure's entry page.
    pub root: PageId,
}

impl CatalogEntry {
    /// Builds an entry, checking the size limits.
    pub fn new(name: &str, kind: StructureKind, params: &[u8], root: PageId) -> Result<Self> {
        if name.is_empty() || name.len() > MAX_NAME_BYTES {
            return Err(Error::CatalogEntryTooLarge(format!("name of {} bytes (1..={MAX_NAME_BYTES})", name.len())));
        }
        if params.len() > MAX_PARAMS_BYTES {
            return Err(Error::CatalogEntryTooLarge(format!("parameters of {} bytes", params.len())));
        }
        Ok(CatalogEntry { name: name.to_owned(), kind, params: params.to_vec(), root })
    }
}

/// The loaded catalog and the pages that hold it.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    entries: BTreeMap<String, CatalogEntry>,
    pages: Vec<PageId>,
}

impl Catalog {
    /// Reads the catalog chain starting at logical page `root` (`PageId(0)`: empty).
    /// A chain that returns to a page it visited is an error, so a crafted file costs
    /// at most one pass over its pages.
    pub fn load(txn: &impl PageRead, root: PageId) -> Result<Catalog> {
        let mut catalog = Catalog::default();
        let mut stream = Vec::new();
        let mut visited = std::collections::HashSet::new();
        let mut next = root;
        while next != PageId(0) {
            let bad = |reason: &str| Error::corrupted_logical(next, format!("catalog page: {reason}"));
            if !visited.insert(next) {
                return Err(bad("the catalog chain comes back to this page"));
            }
            let page = txn.page(next)?;
            if page.kind() != PageKind::CATALOG {
                return Err(bad("not a catalog page"));
            }
            let used = read_u32(&page, 8) as usize;
            let bytes = page.get(BODY..BODY.saturating_add(used)).ok_or_else(|| bad("length out of range"))?;
            stream.extend_from_slice(bytes);
            catalog.pages.push(next);
            next = PageId(read_u64(&page, 0));
        }
        catalog.parse(&stream, root)?;
        Ok(catalog)
    }

    fn parse(&mut self, stream: &[u8], root: PageId) -> Result<()> {
        if stream.is_empty() {
            return Ok(());
        }
        let bad = || Error::corrupted_logical(root, "catalog stream is malformed");
        let mut at = 0usize;
        let take = |at: &mut usize, len: usize| -> Result<&[u8]> {
            let slice = stream.get(*at..at.saturating_add(len)).ok_or_else(bad)?;
            *at += len;
            Ok(slice)
        };
        let count = read_u32(take(&mut at, 4)?, 0);
        for _ in 0..count {
            let name_len = read_u16(take(&mut at, 2)?, 0) as usize;
            let name = std::str::from_utf8(take(&mut at, name_len)?).map_err(|_| bad())?.to_owned();
            let kind = StructureKind(read_u16(take(&mut at, 2)?, 0));
            let params_len = read_u32(take(&mut at, 4)?, 0) as usize;
            let params = take(&mut at, params_len)?.to_vec();
            let root = PageId(read_u64(take(&mut at, 8)?, 0));
            self.entries.insert(name.clone(), CatalogEntry { name, kind, params, root });
        }
        Ok(())
    }

    fn serialise(&self) -> Vec<u8> {
        let mut out = (self.entries.len() as u32).to_le_bytes().to_vec();
        for entry in self.entries.values() {
            out.extend_from_slice(&(entry.name.len() as u16).to_le_bytes());
            out.extend_from_slice(entry.name.as_bytes());
            out.extend_from_slice(&entry.kind.0.to_le_bytes());
            out.extend_from_slice(&(entry.params.len() as u32).to_le_bytes());
            out.extend_from_slice(&entry.params);
            out.extend_from_slice(&entry.root.0.to_le_bytes());
        }
        out
    }

    /// Writes the catalog back through the write transaction; returns the root page.
    /// The pages holding it are remembered (the writer keeps the catalog for the next
    /// transactions: `Core::writer_catalog`).
    pub fn store(&mut self, txn: &WriteTxn<'_>) -> Result<PageId> {
        let stream = self.serialise();
        let per_page = txn.payload_size() - BODY;
        let needed = stream.len().div_ceil(per_page).max(1);
        let mut pages = self.pages.clone();
        while pages.len() > needed {
            txn.free_page(pages.pop().expect("more pages than needed"))?;
        }
        while pages.len() < needed {
            pages.push(txn.alloc_page(PageKind::CATALOG)?.id());
        }
        for (index, id) in pages.iter().enumerate() {
            let chunk = stream.get(index * per_page..).unwrap_or(&[]);
            let chunk = &chunk[..chunk.len().min(per_page)];
            let mut page = txn.page_mut(*id)?;
            page.fill(0);
            page[0..8].copy_from_slice(&pages.get(index + 1).map_or(0, |next| next.0).to_le_bytes());
            page[8..12].copy_from_slice(&(chunk.len() as u32).to_le_bytes());
            page[BODY..BODY + chunk.len()].copy_from_slice(chunk);
        }
        self.pages = pages;
        Ok(self.pages[0])
    }

    /// The entry named `name`.
    pub fn get(&self, name: &str) -> Option<&CatalogEntry> {
        self.entries.get(name)
    }

    /// Entries in name order.
    pub fn entries(&self) -> impl Iterator<Item = &CatalogEntry> {
        self.entries.values()
    }

    /// Adds an entry; the name must be new.
    pub fn insert(&mut self, entry: CatalogEntry) -> Result<()> {
        if self.entries.contains_key(&entry.name) {
            return Err(Error::StructureExists(entry.name));
        }
        self.entries.insert(entry.name.clone(), entry);
        Ok(())
    }

    /// Changes the root of an entry.
    pub fn set_root(&mut self, name: &str, root: PageId) -> Result<()> {
        let entry = self.entries.get_mut(name).ok_or_else(|| Error::NoSuchStructure(name.to_owned()))?;
        entry.root = root;
        Ok(())
    }

    /// Removes an entry.
    pub fn remove(&mut self, name: &str) -> Result<CatalogEntry> {
        self.entries.remove(name).ok_or_else(|| Error::NoSuchStructure(name.to_owned()))
    }
}
