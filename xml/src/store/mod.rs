//! The native XML store (QuickXDB's layout on QuireDB's structures): collections of
//! documents shredded into a **document index** and a **partition index**, with a path
//! summary, a value index and per-name counts, all inside the database file and
//! written in one transaction.
//!
//! **Labels.** Every node (document, element, attribute, text, comment, processing
//! instruction) gets `pre`, its rank in document order across the whole collection
//! (document after document; an element's attributes right after it), `size` (its
//! descendants, attributes included) and `level` (a document node is level 0). `d` is
//! a descendant of `a` iff `a.pre < d.pre <= a.pre + a.size`; a child iff also
//! `d.level == a.level + 1`; document order is `pre` order.
//!
//! **Structures of collection `C`** (catalog entries):
//!
//! | name | kind | key → value |
//! |------|------|-------------|
//! | `C` | XML | root = the head page below |
//! | `xml:C:doc` | B+tree, the document index | pre of a block's first node (u64 BE) → a block of up to [`BLOCK_NODES`] node records (`record.rs`) |
//! | `xml:C:part` | B+tree, the partition index | kind (u8), name id (u32 BE), first pre (u64 BE) → a block of labels of that name in document order (`record.rs`) |
//! | `xml:C:dict` | B+tree | names, path summary, documents, counts (`dict.rs`) |
//! | `xml:C:value` | B+tree, the value index | see `values.rs` |
//! | `xml:C:text` | B+tree, the value stream | number of a chunk's first value → values over [`format::INLINE_MAX`] bytes in document order, in zstd-compressed chunks of about a page (`chunks.rs`) |
//!
//! Why blocks rather than one entry per node (measured on XMark f=0.1 while building
//! it): a B+tree cell costs 16 bytes of overhead plus its 8-byte key, more than the
//! node record itself (7 bytes on average), and partition lists as one queue per name
//! cost two pages for every rare name; blocks of varints keep both indexes dense, a
//! subtree is still a range scan and a partition is still a stream that can skip.
//! Values stream into compressed chunks rather than one queue record each: the
//! queue took 7.5 MB on XMark f=0.1 where BaseX's texts take 4.9 MB.
//!
//! Head page ([`HEAD_PAGE`], kind 24), payload offsets, little-endian:
//!
//! | offset | size | field     | meaning                                  |
//! |-------:|-----:|-----------|------------------------------------------|
//! | 0      | 8    | magic     | `"QXML0001"`                              |
//! | 8      | 8    | next_pre  | pre of the next node loaded               |
//! | 16     | 8    | documents | documents in the collection               |
//! | 24     | 4    | names     | distinct names (ids `1..=names`)           |
//! | 28     | 4    | paths     | distinct paths (ids `0..paths`, 0 = `/`)   |
//! | 32     | 48   | nodes     | node counts by kind (6 × u64, `Kind` order) |
//! | 80     | 8    | streamed  | values in the value stream                 |
//!
//! Read next: `format.rs` and `record.rs` (bytes), `shred.rs` + `load.rs` (writing),
//! `read.rs` (nodes, values, serialisation), `check.rs` (invariants).

mod check;
mod chunks;
mod dict;
pub mod format;
mod load;
pub mod oracle;
mod query;
mod read;
pub mod record;
mod shred;
mod tape;
mod values;
mod vblock;

#[cfg(test)]
mod tests;

pub use check::check;
pub use dict::{Dictionary, Document, PathInfo};
pub use format::{Kind, ValueRef};
pub use load::{LoadOptions, LoadSummary, load};
pub use query::{Prepared, XPathValue, local_name};

pub use read::{NodeCursor, PartitionCursor};
pub use record::{Label, NodeRecord};
pub use values::VALUE_MAX;

use crate::error::{Error, Result};
use quiredb_engine::{KindName, PageId, PageKind, PageRead, StructureKind, WriteTxn};
use quiredb_structures::btree::BTree;

/// Nodes per document-index block at most (a block also ends at about a quarter page).
pub const BLOCK_NODES: usize = 64;
/// Labels per partition block at most.
pub const PART_LABELS: usize = 256;

const MAGIC: &[u8; 8] = b"QXML0001";
/// Catalog parameters of a collection entry: the format version. Version 2 keeps
/// each name's namespace URI (`dict.rs`); version 1 collections are still read and
/// loaded into, without URIs.
const PARAMS: [u8; 1] = [2];
/// The parameters of a version-1 collection.
const PARAMS_V1: [u8; 1] = [1];

/// Page kind of a collection's head page (its other pages are B+trees and queues).
pub const HEAD_PAGE: PageKind = PageKind::structure(24);
/// The XML store's page kinds and their names, for `quire check`.
pub const PAGE_KINDS: &[KindName] = &[KindName { kind: HEAD_PAGE, name: "XML collection head" }];

/// The counters of the head page.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub next_pre: u64,
    pub documents: u64,
    pub names: u32,
    pub paths: u32,
    /// Nodes by kind, in `Kind` order.
    pub nodes: [u64; 6],
    /// Values in the value stream.
    pub streamed: u64,
}

impl Counters {
    fn decode(page: &[u8], collection: &str, id: PageId) -> Result<Counters> {
        if page.len() < 88 || &page[0..8] != MAGIC {
            return Err(corrupted(collection, id.0, "not an XML collection head page"));
        }
        let u64_at = |at: usize| u64::from_le_bytes(page[at..at + 8].try_into().expect("8 bytes"));
        let u32_at = |at: usize| u32::from_le_bytes(page[at..at + 4].try_into().expect("4 bytes"));
        let mut nodes = [0; 6];
        for (i, n) in nodes.iter_mut().enumerate() {
            *n = u64_at(32 + 8 * i);
        }
        let counters = Counters {
            next_pre: u64_at(8),
            documents: u64_at(16),
            names: u32_at(24),
            paths: u32_at(28),
            nodes,
            streamed: u64_at(80),
        };
        if counters.nodes.iter().sum::<u64>() != counters.next_pre {
            return Err(corrupted(collection, id.0, "node counts do not add up to the next pre"));
        }
        Ok(counters)
    }

    fn encode(&self, page: &mut [u8]) {
        page[0..8].copy_from_slice(MAGIC);
        page[8..16].copy_from_slice(&self.next_pre.to_le_bytes());
        page[16..24].copy_from_slice(&self.documents.to_le_bytes());
        page[24..28].copy_from_slice(&self.names.to_le_bytes());
        page[28..32].copy_from_slice(&self.paths.to_le_bytes());
        for (i, n) in self.nodes.iter().enumerate() {
            page[32 + 8 * i..40 + 8 * i].copy_from_slice(&n.to_le_bytes());
        }
        page[80..88].copy_from_slice(&self.streamed.to_le_bytes());
    }
}

/// Pages one index of a collection takes (see [`XmlStore::index_pages`]).
#[derive(Clone, Copy, Debug)]
pub struct IndexPages {
    pub index: &'static str,
    /// Pages, head pages included (not the blobs of values stored out of the leaves).
    pub pages: u64,
    /// Entries (blocks or chunks) in the tree.
    pub entries: u64,
    /// Used bytes of the B+tree leaves over their capacity.
    pub leaf_fill: Option<f64>,
}

/// Catalog name of a component of collection `collection`.
fn component(collection: &str, part: &str) -> String {
    format!("xml:{collection}:{part}")
}

const COMPONENTS: [&str; 5] = ["doc", "part", "dict", "value", "text"];

fn corrupted(collection: &str, page: u64, reason: impl Into<String>) -> Error {
    Error::Store(quiredb_structures::Error::Corrupted { structure: collection.to_owned(), page, reason: reason.into() })
}

/// A collection opened in a transaction (reads in any transaction; loading needs a
/// [`WriteTxn`], see [`load()`]). Like [`BTree`], the handle borrows its transaction.
///
/// # Examples
///
/// Load a document into collection `books` and ask for the titles of recent books:
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use quiredb_engine::{Database, Durability};
/// use quiredb_xml::store::{self, LoadOptions, XmlStore};
///
/// let dir = tempfile::tempdir()?;
/// let file = dir.path().join("books.xml");
/// std::fs::write(&file, "<lib><book year='2001'><t>A</t></book><book year='1999'><t>B</t></book></lib>")?;
/// let db = Database::create(dir.path().join("books.quire"), Default::default())?;
/// let txn = db.begin_write()?;
/// store::load(&txn, "books", &[file], LoadOptions::default(), &mut |_| {})?;
/// txn.commit(Durability::Full)?;
///
/// let snapshot = db.begin_read()?;
/// let books = XmlStore::open(&snapshot, "books")?;
/// let mut recent = books.prepare("//book[@year > 2000]/t")?;
/// assert_eq!(recent.run()?.len(), 1);
/// let mut count = books.prepare("count(//book)")?;
/// let value = count.value()?;
/// assert_eq!(count.value_string(&value)?, "2");
/// # Ok(()) }
/// ```
pub struct XmlStore<'t, T: PageRead> {
    txn: &'t T,
    name: String,
    counters: Counters,
    doc: BTree<'t, T>,
    part: BTree<'t, T>,
    dict: BTree<'t, T>,
    value: BTree<'t, T>,
    text: BTree<'t, T>,
    dictionary: std::sync::Arc<Dictionary>,
    /// The last chunk of the value stream read.
    chunk_cache: std::cell::RefCell<chunks::Chunk>,
}

impl<'t, T: PageRead> XmlStore<'t, T> {
    /// Opens collection `name`.
    pub fn open(txn: &'t T, name: &str) -> Result<Self> {
        // A missing or foreign name fails here, naming it.
        let (_, uris_known) = read_counters(txn, name)?;
        let dict = BTree::open(txn, component(name, "dict"))?;
        let dictionary = std::sync::Arc::new(Dictionary::read(&dict, name, uris_known)?);
        Self::open_with(txn, name, dictionary)
    }

    /// What another thread needs to open this collection in its own transaction of
    /// the same snapshot, sharing the dictionary (see [`Shared::open`]).
    pub fn share(&self) -> Shared {
        Shared {
            token: self.txn.snapshot_token(),
            name: self.name.clone(),
            dictionary: std::sync::Arc::clone(&self.dictionary),
        }
    }

    fn open_with(txn: &'t T, name: &str, dictionary: std::sync::Arc<Dictionary>) -> Result<Self> {
        let (counters, _) = read_counters(txn, name)?;
        let tree = |part: &str| BTree::open(txn, component(name, part));
        let dict = tree("dict")?;
        Ok(XmlStore {
            txn,
            name: name.to_owned(),
            counters,
            doc: tree("doc")?,
            part: tree("part")?,
            dict,
            value: tree("value")?,
            text: tree("text")?,
            dictionary,
            chunk_cache: std::cell::RefCell::new(chunks::Chunk::default()),
        })
    }

    /// The collection's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Counters of the head page (nodes by kind, documents, names, paths).
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// Number of nodes (all kinds).
    pub fn len(&self) -> u64 {
        self.counters.next_pre
    }

    /// True when the collection holds no document.
    pub fn is_empty(&self) -> bool {
        self.counters.next_pre == 0
    }

    /// Pages of each index (B+tree nodes and head, queue data pages and head).
    pub fn index_pages(&self) -> Result<Vec<IndexPages>> {
        let mut pages = Vec::new();
        let trees = [
            ("document index", &self.doc),
            ("partition index", &self.part),
            ("dictionary", &self.dict),
            ("value index", &self.value),
            ("value stream", &self.text),
        ];
        for (index, tree) in trees {
            let stats = quiredb_structures::btree::stats(tree)?;
            pages.push(IndexPages {
                index,
                pages: stats.leaves + stats.branches + 1,
                entries: tree.len(),
                leaf_fill: Some(stats.leaf_fill),
            });
        }
        Ok(pages)
    }

    /// The transaction the store was opened in.
    pub fn txn(&self) -> &'t T {
        self.txn
    }
}

/// A collection opened in one transaction, ready to be opened in another of the same
/// snapshot on another thread (transactions are not shared between threads).
#[derive(Clone, Debug)]
pub struct Shared {
    token: Option<quiredb_engine::SnapshotToken>,
    name: String,
    dictionary: std::sync::Arc<Dictionary>,
}

impl Shared {
    /// The collection in `txn`; `None` when `txn` is not a read transaction of the
    /// snapshot the collection was shared from.
    pub fn open<'u, U: PageRead>(&self, txn: &'u U) -> Result<Option<XmlStore<'u, U>>> {
        if self.token.is_none() || txn.snapshot_token() != self.token {
            return Ok(None);
        }
        XmlStore::open_with(txn, &self.name, std::sync::Arc::clone(&self.dictionary)).map(Some)
    }
}

/// Reads the counters of collection `name` from its head page, checking that the
/// catalog entry is an XML collection of a format this build reads; true when that
/// format keeps namespace URIs.
fn read_counters(txn: &impl PageRead, name: &str) -> Result<(Counters, bool)> {
    let entry = txn.catalog_entry(name)?.ok_or_else(|| Error::NoSuchCollection(name.to_owned()))?;
    if entry.kind != StructureKind::XML || (entry.params != PARAMS && entry.params != PARAMS_V1) {
        return Err(Error::Store(quiredb_structures::Error::WrongKind {
            name: name.to_owned(),
            found: format!("{} (parameters {:?})", entry.kind.name(), entry.params),
            expected: "xml collection (version 1 or 2)".to_owned(),
        }));
    }
    let uris_known = entry.params == PARAMS;
    let head = txn.page(entry.root)?;
    if head.kind() != HEAD_PAGE {
        return Err(corrupted(name, entry.root.0, "catalog root is not an XML head page"));
    }
    Ok((Counters::decode(&head, name, entry.root)?, uris_known))
}

/// Names of the XML collections in the catalog, sorted.
pub fn collections(txn: &impl PageRead) -> Result<Vec<String>> {
    let mut names: Vec<String> =
        txn.catalog_list()?.into_iter().filter(|e| e.kind == StructureKind::XML).map(|e| e.name).collect();
    names.sort();
    Ok(names)
}

/// Creates the empty collection `name` (its structures and head page).
fn create(txn: &WriteTxn<'_>, name: &str) -> Result<()> {
    if txn.catalog_entry(name)?.is_some() {
        return Err(Error::CollectionExists(name.to_owned()));
    }
    for part in COMPONENTS {
        BTree::create(txn, &component(name, part))?;
    }
    let root = {
        let mut page = txn.alloc_page(HEAD_PAGE)?;
        Counters::default().encode(&mut page);
        page.id()
    };
    txn.create_structure(name, StructureKind::XML, &PARAMS, root)?;
    Ok(())
}

/// Writes the counters to the collection's head page.
fn store_counters(txn: &WriteTxn<'_>, name: &str, counters: &Counters) -> Result<()> {
    let entry = txn.catalog_entry(name)?.ok_or_else(|| Error::NoSuchCollection(name.to_owned()))?;
    let mut page = txn.page_mut(entry.root)?;
    counters.encode(&mut page);
    Ok(())
}

/// Drops collection `name` and frees every page it used.
pub fn drop_collection(txn: &WriteTxn<'_>, name: &str) -> Result<()> {
    let entry = txn.catalog_entry(name)?.ok_or_else(|| Error::NoSuchCollection(name.to_owned()))?;
    if entry.kind != StructureKind::XML {
        return Err(Error::NoSuchCollection(name.to_owned()));
    }
    for part in COMPONENTS {
        BTree::drop_tree(txn, &component(name, part))?;
    }
    txn.drop_structure(name)?;
    txn.free_page(entry.root)?;
    Ok(())
}
