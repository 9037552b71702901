//! The B+tree: ordered map from byte-string keys to byte-string values, on logical
//! pages of the engine. Values too large for a leaf go to blobs (`crate::blob`).
//!
//! A tree is a catalog entry of kind `btree` whose root page is a HEAD page that never
//! moves; the head holds the real root, the height and the entry count (so `len` is
//! O(1)). Use [`BTree::create`], [`BTree::open`] or [`BTree::open_or_create`] by name.
//!
//! Keys are at most [`max_key_len`] bytes: 984 bytes with 8 KiB pages, 472 with 4 KiB
//! (`(payload − 32) / 8 − 32`); a longer key is refused with
//! [`crate::Error::KeyTooLarge`]. A value is stored in the leaf when its cell
//! (`6 + key + value` bytes) is at most a quarter of a node, else as a blob (the cell
//! then holds the 16-byte `BlobRef`), so every node holds at least four entries.
//!
//! HEAD page ([`HEAD_PAGE`], kind 18, flagged indexing), offsets into the payload, little-endian:
//!
//! | offset | size | field  | meaning                                   |
//! |-------:|-----:|--------|-------------------------------------------|
//! | 0      | 4    | magic  | `0x5142_5431` ("QBT1")                     |
//! | 4      | 4    | height | levels; 1 = the root is a leaf             |
//! | 8      | 8    | root   | logical id of the root node                |
//! | 16     | 8    | len    | number of entries                          |
//!
//! Node ([`LEAF_PAGE`], kind 16 / [`BRANCH_PAGE`], kind 17, flagged indexing), offsets into the payload (`P` bytes, `n` =
//! count). The dense prefix array comes right after the node header, as the read path
//! of `DESIGN.md` asks: a search touches the prefixes (a few cache lines) and then only
//! the one or two cells whose prefix equals the target's. Keys that share their first
//! bytes (a station id, then the high bytes of a time) would give equal prefixes, so
//! the node records how many leading bytes all its keys share (`skip`, at most the
//! common prefix of its first and last key, 0 in files written before it existed —
//! any value up to the true common length is valid) and the prefixes hold the 8 bytes
//! after those. A search first compares the target's first `skip` bytes with key 0.
//!
//! | offset          | size    | field      | meaning                                            |
//! |----------------:|--------:|------------|----------------------------------------------------|
//! | 0               | 2       | count      | entries `n` (keys; a branch has `n + 1` children)   |
//! | 2               | 1       | level      | 0 = leaf, else height above the leaves              |
//! | 3               | 1       | skip       | `s`: bytes every key of the node shares (0..=255)   |
//! | 4               | 2       | cell_start | start of the cell area (cells fill `[cell_start, P)`) |
//! | 6               | 2       | garbage    | dead bytes inside the cell area                     |
//! | 8               | 8       | prev       | previous leaf (leaves; 0 = none)                    |
//! | 16              | 8       | next       | next leaf (leaves; 0 = none)                        |
//! | 24              | 8       | —          | zero                                                |
//! | 32              | 8·n     | prefixes   | key bytes `s..s+8`, zero padded, **big-endian** u64 |
//! | 32+8n           | 8·(n+1) | children   | branches only: child ids (LE), parallel to prefixes |
//! | after those     | 2·n     | slots      | cell offsets (LE), in key order                     |
//! | …               |         | free gap   |                                                     |
//! | cell_start      |         | cells      | leaf: `u16 key_len, u32 value_word, key, value`; branch: `u16 key_len, key` |
//!
//! `value_word` is the value length, or bit 31 set when the value is a blob (16 bytes
//! of `BlobRef` follow the key). Branch child `i` holds keys in `[key(i−1), key(i))`;
//! separators are the shortest prefix of the right node's first key that is greater
//! than the left node's last key.
//!
//! Insert policy: a full leaf is evened out with its right, else left, sibling when
//! the two stay at most 7/8 full, else split in two by bytes (a key past the end of the
//! last leaf starts a new leaf), so random inserts leave leaves about 80% full.
//!
//! Removal policy: a node left under half full is merged with its left sibling, else
//! its right sibling, when the two fit in 7/8 of a page (under a quarter full: in one
//! page), so removing half the keys at random leaves about 65 % of the leaves (95 %
//! when only quarter-full nodes merged: `btree_batch.rs`); otherwise a
//! node under a quarter full is redistributed evenly with the first of them when the
//! parent has room for the new separator, else it stays (its siblings are then over
//! three quarters full). Freed pages go back to
//! the engine. The checker verifies that no two adjacent siblings are both under a
//! quarter full and that no non-root node is empty.
//!
//! Files: `node.rs` (reading, search) · `node_write.rs` (building, in-place edits) ·
//! `write.rs` (insert, split) · `shift.rs` (evening out a full leaf with a sibling) · `remove.rs` (remove, merge) · `cursor.rs` (cursors,
//! ranges, floor/ceiling) · `bulk.rs` (bulk load) · `check.rs` (invariants) ·
//! `pinned.rs` (values read in place) · `range.rs` (ranges both ways). Typed keys
//! and values: `crate::table`.

mod bulk;
mod check;
mod cursor;
mod node;
mod node_write;
mod pinned;
mod range;
mod remove;
#[cfg(test)]
mod search_tests;
mod shift;
mod write;

pub use bulk::BulkAppender;
pub use check::{Stats, check, check_entry, stats};
pub use cursor::Cursor;
pub use node::Value;
pub use pinned::Pinned;
pub use range::{Entries, Range};

use crate::error::{Error, Result};
use crate::handles::OpenMark;
use quiredb_engine::{CatalogEntry, PageId, PageKind, PageMut, PageRead, StructureKind, WriteTxn};
use std::borrow::Cow;
use std::cell::{Cell, OnceCell};

/// Magic number of a head page.
const MAGIC: u32 = 0x5142_5431;

/// Page kind of B+tree leaves.
pub const LEAF_PAGE: PageKind = PageKind::structure(16);
/// Page kind of B+tree branches: they index others, so the pool keeps them longer.
pub const BRANCH_PAGE: PageKind = PageKind::structure(17).indexing();
/// Page kind of a B+tree's head page (root, height, length), read by every search.
pub const HEAD_PAGE: PageKind = PageKind::structure(18).indexing();

/// Longest key for pages of `payload_size` bytes of payload.
pub fn max_key_len(payload_size: usize) -> usize {
    (payload_size - node::NODE_HEADER) / 8 - 32
}

/// Largest leaf cell stored inline (a quarter of a node).
fn max_inline_cell(payload_size: usize) -> usize {
    (payload_size - node::NODE_HEADER) / 4 - node::BRANCH_ENTRY
}

thread_local! {
    /// Trees opened in read transactions on this thread: head page and head, by name
    /// and snapshot (see [`BTree::open`]).
    static HEADS: crate::opened::Remembered<(PageId, Head)> = const { crate::opened::Remembered::new() };
    /// The last of them, checked first (`opened.rs`).
    static LAST_OPEN: Cell<Option<crate::opened::LastOpen<(PageId, Head)>>> = const { Cell::new(None) };
}

/// The fields of the head page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Head {
    root: u64,
    height: u32,
    len: u64,
}

/// A B+tree opened in a transaction. Reads work in any transaction; writes need a
/// [`WriteTxn`]. The handle caches the head, so in a write transaction the first
/// write through a handle claims the tree for it, and opening another handle to a
/// claimed tree, or writing through a second one, is [`Error::AlreadyOpen`] (two
/// writers would work from stale roots). Read-only handles may be several; one opened
/// before another handle's first write reads the tree as it was then.
///
/// # Examples
///
/// ```
/// use quiredb_engine::{Database, Durability, storage::MemStorage};
/// use quiredb_structures::btree::BTree;
/// use std::ops::Bound;
/// use std::sync::Arc;
///
/// let db = Database::builder().cache_bytes(4 << 20).with_storage(Arc::new(MemStorage::new()), "example")?;
/// let txn = db.begin_write()?;
/// let mut tree = BTree::create(&txn, "stations")?;
/// tree.insert(b"beijing", b"39.9,116.4")?;
/// tree.insert(b"oslo", b"59.9,10.7")?;
/// drop(tree);
/// txn.commit(Durability::Checksummed)?;
///
/// let snapshot = db.begin_read()?;
/// let tree = BTree::open(&snapshot, "stations")?;
/// assert_eq!(tree.get_vec(b"oslo")?.as_deref(), Some(&b"59.9,10.7"[..]));
/// let keys: Vec<Vec<u8>> = tree.range(Bound::Unbounded, Bound::Unbounded).map(|entry| entry.map(|(key, _)| key)).collect::<Result<_, _>>()?;
/// assert_eq!(keys, [b"beijing".to_vec(), b"oslo".to_vec()]);
/// # Ok::<(), quiredb_structures::Error>(())
/// ```
pub struct BTree<'t, T: PageRead> {
    txn: &'t T,
    name: Cow<'t, str>,
    head_page: PageId,
    head: Cell<Head>,
    /// Set by the first write in a write transaction: then this handle is the tree's
    /// only one there (see [`BTree`]).
    mark: OnceCell<OpenMark>,
    /// How full (percent of a page) an append leaves the last leaf before starting the
    /// next one (`write.rs`, [`write::DENSE_FILL_PERCENT`]).
    append_fill: Cell<usize>,
    /// The leaf cell an insert builds, kept for the next one: no allocation per insert.
    cell: Vec<u8>,
}

/// `WrongKind` unless `entry` is a B+tree.
pub(crate) fn check_kind(entry: &CatalogEntry) -> Result<()> {
    if entry.kind != StructureKind::BTREE {
        return Err(Error::WrongKind {
            name: entry.name.clone(),
            found: entry.kind.name().to_owned(),
            expected: "btree".to_owned(),
        });
    }
    Ok(())
}

fn corrupted(name: &str, page: u64, reason: impl Into<String>) -> Error {
    corrupted_because(name, page, reason.into())
}

/// [`corrupted`] out of line: the error paths of the read path's inlined checks then
/// cost the hot path no registers and no code.
#[cold]
#[inline(never)]
fn corrupted_because(name: &str, page: u64, reason: String) -> Error {
    Error::Corrupted { structure: name.to_owned(), page, reason }
}

/// Why node `id` is not of the kind a descent expected (out of line, see
/// [`corrupted_because`]).
#[cold]
#[inline(never)]
fn wrong_kind(name: &str, id: u64, expected: PageKind, found: PageKind) -> Error {
    corrupted_because(name, id, format!("expected a {expected:?} page, found {found:?}"))
}

impl<'t, T: PageRead> BTree<'t, T> {
    /// Opens the tree `name`. In a read transaction, what an open reads (the catalog
    /// entry, the head page) is remembered per thread for the snapshot, so reopening a
    /// tree in a hot loop of short read transactions reads no page and allocates
    /// nothing (see `opened.rs`); pass a `&'t str` (not a `String`) for that.
    pub fn open(txn: &'t T, name: impl Into<Cow<'t, str>>) -> Result<Self> {
        let name = name.into();
        let Some(token) = txn.snapshot_token() else {
            let (head_page, head) = open_from_catalog(txn, &name)?;
            return Self::new(txn, name, head_page, head);
        };
        let (head_page, head) =
            crate::opened::remembered_last(&LAST_OPEN, &HEADS, token, &name, || open_from_catalog(txn, &name))?;
        Ok(BTree {
            txn,
            name,
            head_page,
            head: Cell::new(head),
            mark: OnceCell::new(),
            append_fill: Cell::new(write::DENSE_FILL_PERCENT),
            cell: Vec::new(),
        })
    }

    /// Opens the tree of a catalog entry.
    pub(crate) fn open_entry(txn: &'t T, entry: &CatalogEntry) -> Result<Self> {
        check_kind(entry)?;
        let head = read_head(txn, &entry.name, entry.root)?;
        Self::new(txn, Cow::Owned(entry.name.clone()), entry.root, head)
    }

    /// Opens the tree of a catalog entry for reading beside the handles open in a
    /// write transaction, without claiming the one handle (for the checker, which
    /// reads and drops it while no other handle can write).
    pub(crate) fn open_to_check(txn: &'t T, entry: &CatalogEntry) -> Result<Self> {
        check_kind(entry)?;
        let head = read_head(txn, &entry.name, entry.root)?;
        Ok(BTree {
            txn,
            name: Cow::Owned(entry.name.clone()),
            head_page: entry.root,
            head: Cell::new(head),
            mark: OnceCell::new(),
            append_fill: Cell::new(write::DENSE_FILL_PERCENT),
            cell: Vec::new(),
        })
    }

    /// A handle on a tree; in a write transaction (the only kind without a snapshot
    /// token) `AlreadyOpen` when another handle has written to the tree.
    fn new(txn: &'t T, name: Cow<'t, str>, head_page: PageId, head: Head) -> Result<Self> {
        if txn.snapshot_token().is_none() && OpenMark::is_open(txn, &name) {
            return Err(Error::AlreadyOpen { name: name.into_owned() });
        }
        Ok(BTree {
            txn,
            name,
            head_page,
            head: Cell::new(head),
            mark: OnceCell::new(),
            append_fill: Cell::new(write::DENSE_FILL_PERCENT),
            cell: Vec::new(),
        })
    }

    /// The head page: the tree's fixed entry point, as recorded in the catalog.
    pub fn head_page(&self) -> PageId {
        self.head_page
    }

    /// Number of entries (O(1)).
    pub fn len(&self) -> u64 {
        self.head.get().len
    }

    /// True when the tree has no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Levels of the tree (1 = the root is a leaf).
    pub fn height(&self) -> u32 {
        self.head.get().height
    }

    /// Catalog name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The transaction the tree was opened in.
    pub fn txn(&self) -> &'t T {
        self.txn
    }

    /// Reads the value of `key` into `out`; false (and `out` untouched) when absent.
    pub fn get(&self, key: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        let pinned = self.descend(key)?;
        // The payload, dereferenced once (each deref of a `PageRef` asks where it lies).
        let (leaf, id): (&[u8], u64) = (&pinned, pinned.id().0);
        let Ok(i) = node::search(leaf, key).map_err(self.at(id))? else { return Ok(false) };
        let span = node::leaf_span(leaf, node::slots_offset(leaf, node::count(leaf)), i).map_err(self.at(id))?;
        let value = span.at + node::LEAF_CELL_HEADER + span.key_len..span.at + span.len;
        if !span.blob {
            out.clear();
            out.extend_from_slice(&leaf[value]);
        } else if let Value::Blob(blob) = node::cell_value(&leaf[span.at..span.at + span.len]) {
            crate::blob::read_to_vec(self.txn, blob, out)?;
        }
        Ok(true)
    }

    /// The value of `key` as a new vector.
    pub fn get_vec(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let mut out = Vec::new();
        Ok(self.get(key, &mut out)?.then_some(out))
    }

    /// True when `key` is present.
    pub fn contains(&self, key: &[u8]) -> Result<bool> {
        let leaf = self.descend(key)?;
        Ok(node::search(&leaf, key).map_err(self.at(leaf.id().0))?.is_ok())
    }

    /// Pins the leaf that holds (or would hold) `key`. The branches on the way are read
    /// only for the child to take ([`PageRead::with_page`]: a snapshot reads them
    /// unpinned).
    fn descend(&self, key: &[u8]) -> Result<quiredb_engine::PageRef<'t>> {
        let head = self.head.get();
        let mut id = head.root;
        for depth in 1..head.height {
            let parent = id;
            id = self.txn.with_page(PageId(id), |page| {
                self.check_node(parent, page.kind(), page, false)?;
                Ok::<_, Error>(node::child(page, node::child_index(page, key).map_err(self.at(parent))?))
            })??;
            if id == 0 {
                return Err(corrupted(&self.name, parent, format!("null child at depth {depth}")));
            }
        }
        self.node(id, true)
    }

    /// Pins node `id`, checking its kind and header (O(1): cells are checked as read).
    /// Inlined: `leaf` is a constant at every call, and a descent step pays no call.
    #[inline]
    fn node(&self, id: u64, leaf: bool) -> Result<quiredb_engine::PageRef<'t>> {
        let page = self.txn.page(PageId(id))?;
        self.check_node(id, page.kind(), &page, leaf)?;
        Ok(page)
    }

    /// Checks that node `id`, of kind `found`, is a leaf (or a branch) with a sound
    /// header.
    #[inline(always)]
    fn check_node(&self, id: u64, found: PageKind, page: &[u8], leaf: bool) -> Result<()> {
        let kind = if leaf { LEAF_PAGE } else { BRANCH_PAGE };
        if found != kind {
            return Err(wrong_kind(&self.name, id, kind, found));
        }
        node::validate(page, leaf).map_err(self.at(id))
    }

    /// Turns a node's `Err(reason)` into [`Error::Corrupted`] naming page `id`.
    pub(super) fn at(&self, id: u64) -> impl Fn(String) -> Error + '_ {
        move |reason| corrupted_because(&self.name, id, reason)
    }
}

/// The head page and head of tree `name`, from the catalog (kept out of line: a read
/// transaction's open usually finds them remembered).
#[inline(never)]
fn open_from_catalog(txn: &impl PageRead, name: &str) -> Result<(PageId, Head)> {
    let entry =
        txn.catalog_entry(name)?.ok_or_else(|| Error::Engine(quiredb_engine::Error::NoSuchStructure(name.into())))?;
    check_kind(&entry)?;
    Ok((entry.root, read_head(txn, &entry.name, entry.root)?))
}

fn read_head(txn: &impl PageRead, name: &str, page: PageId) -> Result<Head> {
    let bytes = txn.page(page)?;
    let magic = u32::from_le_bytes(bytes[0..4].try_into().expect("4 bytes"));
    if bytes.kind() != HEAD_PAGE || magic != MAGIC {
        return Err(corrupted(name, page.0, "not a B+tree head page"));
    }
    let head = Head {
        height: u32::from_le_bytes(bytes[4..8].try_into().expect("4 bytes")),
        root: node::u64_at(&bytes, 8),
        len: node::u64_at(&bytes, 16),
    };
    if head.height == 0 || head.height > 64 || head.root == 0 {
        return Err(corrupted(name, page.0, format!("bad head: height {}, root {}", head.height, head.root)));
    }
    Ok(head)
}

impl<'t, 'db> BTree<'t, WriteTxn<'db>> {
    /// Claims the tree for this handle before its first write (see [`BTree`]).
    pub(crate) fn claim_write(&self) -> Result<()> {
        if self.mark.get().is_none() {
            let _ = self.mark.set(OpenMark::claim(self.txn, &self.name)?);
        }
        Ok(())
    }

    /// Pins node `id` for writing, checking its kind and header (O(1); cells are
    /// checked as they are read, and a rebuild checks what it builds, see
    /// `node::validate_cells`).
    pub(super) fn node_mut(&self, id: u64, leaf: bool) -> Result<PageMut<'t>> {
        let page = self.txn.page_mut(PageId(id))?;
        self.check_node(id, page.kind(), &page, leaf)?;
        Ok(page)
    }

    /// Creates an empty tree named `name` (the name must be new).
    pub fn create(txn: &'t WriteTxn<'db>, name: &str) -> Result<Self> {
        Self::create_with_params(txn, name, &[])
    }

    /// Creates an empty tree whose catalog entry records `params` (a typed table's
    /// types, see `table/def.rs`).
    pub(crate) fn create_with_params(txn: &'t WriteTxn<'db>, name: &str, params: &[u8]) -> Result<Self> {
        let mark = OpenMark::claim(txn, name)?;
        let root = {
            let mut leaf = txn.alloc_page(LEAF_PAGE)?;
            node_write::build(&mut leaf, 0, (0, 0), &[], &[]);
            leaf.id().0
        };
        let head_page = txn.alloc_page(HEAD_PAGE)?.id();
        let tree = BTree {
            txn,
            name: Cow::Owned(name.to_owned()),
            head_page,
            head: Cell::new(Head { root, height: 1, len: 0 }),
            mark: OnceCell::from(mark),
            append_fill: Cell::new(write::DENSE_FILL_PERCENT),
            cell: Vec::new(),
        };
        tree.store_head()?;
        txn.create_structure(name, StructureKind::BTREE, params, head_page)?;
        Ok(tree)
    }

    /// Opens `name`, creating it empty when absent.
    pub fn open_or_create(txn: &'t WriteTxn<'db>, name: &str) -> Result<Self> {
        if txn.catalog_entry(name)?.is_some() { Self::open(txn, name.to_owned()) } else { Self::create(txn, name) }
    }

    /// Writes the cached head to the head page unless it is still `before`, which the
    /// page holds already: a write that replaced values only (an update) then leaves
    /// the head page out of its transaction, one page fewer to copy, seal and log.
    fn store_head_if_changed(&self, before: Head) -> Result<()> {
        if self.head.get() == before { Ok(()) } else { self.store_head() }
    }

    /// Writes the cached head to the head page.
    fn store_head(&self) -> Result<()> {
        let head = self.head.get();
        let mut page = self.txn.page_mut(self.head_page)?;
        page[0..4].copy_from_slice(&MAGIC.to_le_bytes());
        page[4..8].copy_from_slice(&head.height.to_le_bytes());
        page[8..16].copy_from_slice(&head.root.to_le_bytes());
        page[16..24].copy_from_slice(&head.len.to_le_bytes());
        Ok(())
    }

    /// Removes the tree `name` from the catalog and frees all its pages and blobs.
    pub fn drop_tree(txn: &'t WriteTxn<'db>, name: &str) -> Result<()> {
        let tree = Self::open(txn, name.to_owned())?;
        let head = tree.head.get();
        tree.free_subtree(head.root, head.height)?;
        txn.free_page(tree.head_page)?;
        txn.drop_structure(name)?;
        Ok(())
    }

    fn free_subtree(&self, id: u64, height: u32) -> Result<()> {
        let (children, blobs) = {
            let page = self.node(id, height == 1)?;
            let n = node::count(&page);
            if height == 1 {
                let mut blobs = Vec::new();
                for i in 0..n {
                    if let Value::Blob(blob) = node::value(&page, i).map_err(self.at(id))? {
                        blobs.push(blob);
                    }
                }
                (Vec::new(), blobs)
            } else {
                ((0..=n).map(|i| node::child(&page, i)).collect::<Vec<_>>(), Vec::new())
            }
        };
        for blob in blobs {
            crate::blob::free(self.txn, blob)?;
        }
        for child in children {
            self.free_subtree(child, height - 1)?;
        }
        self.txn.free_page(PageId(id))?;
        Ok(())
    }
}
