//! The disk-resident R*-tree: `RTree<D, C>` indexes boxes in D dimensions (1 ≤ D ≤ 8
//! tested; a point is a degenerate box), each with a `u64` payload, on node pages of
//! the shared buffer pool. Coordinates are stored as `f64` or, to double the fan-out,
//! `f32` (rounded outward; see `coord.rs`).
//!
//! - insert: R* (Beckmann et al. 1990): overlap-minimising ChooseSubtree at the level
//!   above the leaves, R* split, forced reinsert once per level per insertion
//!   (`insert.rs`, `split.rs`);
//! - remove: condense-and-reinsert, update = remove + insert (`remove.rs`);
//! - queries: window (intersects / contained), point (`query.rs`), best-first k
//!   nearest neighbours, exact k, ties broken by payload (`knn.rs`);
//! - bulk load: STR/OMT-style packing with full nodes, parallel partitioning (`bulk.rs`);
//!   streaming bounded-memory bulk load in Hilbert order with an external sort
//!   (`stream.rs`, `hilbert.rs`, `packer.rs`);
//! - invariant checker for `quire check` (`check.rs`).
//!
//! Layout of the pages: see `node.rs`. The catalog entry's root is the head page,
//! which never moves; its parameters are `[dims u8, coord u8, max u16, min u16]`
//! (little-endian) and are checked on open against `D` and `C`.
//!
//! Invariants (checked by `check.rs`): each branch entry's box is the union of its
//! child's entries; every non-root node holds between `min` and `max` entries (a
//! branch root at least 2); all leaves are at level 0 and the root at `height − 1`;
//! `len` is the number of leaf entries. Every mutation validates its input before it
//! touches a page, so bad input leaves the tree unchanged.

mod bulk;
mod check;
mod coord;
mod geom;
mod hilbert;
mod insert;
mod knn;
mod node;
mod packer;
mod query;
mod remove;
mod scratch;
mod split;
mod stream;

pub use check::check_entry;
pub use coord::Coord;
pub use geom::Rect;
pub use knn::Nearest;
pub use query::{WindowIter, WindowMode};
pub use stream::{BulkBuilder, BulkSorter, BulkStats};

use crate::error::{Error, Result};
use node::{Head, Layout, Node};
use quiredb_engine::page::read_u16;
use quiredb_engine::{CatalogEntry, PageId, PageKind, PageRead, StructureKind, WriteTxn};
use std::marker::PhantomData;

/// Largest number of dimensions.
pub const MAX_DIMS: usize = 32;

/// Options of a new tree.
#[derive(Clone, Copy, Debug, Default)]
pub struct RTreeOptions {
    /// Most entries per node; `None` = as many as fit in a page.
    pub max_entries: Option<usize>,
}

/// Handle on a named R*-tree; cheap to keep across transactions.
#[derive(Clone, Debug)]
pub struct RTree<const D: usize, C: Coord = f64> {
    name: String,
    head: PageId,
    max: usize,
    min: usize,
    _coord: PhantomData<C>,
}

impl<const D: usize, C: Coord> RTree<D, C> {
    /// Creates an empty tree named `name` with default options.
    pub fn create(txn: &WriteTxn<'_>, name: &str) -> Result<Self> {
        Self::create_with(txn, name, RTreeOptions::default())
    }

    /// Creates an empty tree named `name`.
    pub fn create_with(txn: &WriteTxn<'_>, name: &str, options: RTreeOptions) -> Result<Self> {
        let fit = Layout::<D, C>::capacity(txn.payload_size()).min(u16::MAX as usize);
        let max = options.max_entries.unwrap_or(fit);
        if D == 0 || D > MAX_DIMS || !(4..=fit).contains(&max) {
            return Err(Error::InvalidParameter {
                reason: format!(
                    "an R-tree of {D} dimensions needs 1..={MAX_DIMS} dimensions and 4..={fit} entries per node, not {max}"
                ),
            });
        }
        let min = (max * 2 / 5).max(2);
        let root = Layout::<D, C>::create(txn, &Node { level: 0, entries: Vec::new() }, max)?;
        let mut head_page = txn.alloc_page(PageKind::RTREE_HEAD)?;
        let head = Head {
            dims: D as u8,
            coord: C::CODE,
            max: max as u16,
            min: min as u16,
            root: root.0,
            height: 1,
            len: 0,
            nodes: 1,
        };
        head.encode(&mut head_page);
        let head_id = head_page.id();
        drop(head_page);
        txn.create_structure(name, StructureKind::RTREE, &Self::params(max, min), head_id)?;
        Ok(RTree { name: name.to_owned(), head: head_id, max, min, _coord: PhantomData })
    }

    /// Opens the tree named `name`, checking its kind, dimensions and coordinate type.
    pub fn open(txn: &impl PageRead, name: &str) -> Result<Self> {
        let entry = txn
            .catalog_entry(name)?
            .ok_or_else(|| Error::Engine(quiredb_engine::Error::NoSuchStructure(name.to_owned())))?;
        let (dims, coord, max, min) = parse_params(&entry)?;
        if entry.kind != StructureKind::RTREE || dims != D || coord != C::CODE {
            return Err(Error::WrongKind {
                name: name.to_owned(),
                found: describe(&entry),
                expected: format!("rtree<{D}, {}>", C::NAME),
            });
        }
        let tree = RTree { name: name.to_owned(), head: entry.root, max, min, _coord: PhantomData };
        let head = tree.head(txn)?;
        let fits = max <= Layout::<D, C>::capacity(txn.payload_size()) && 2 * min <= max && min >= 1;
        if usize::from(head.max) != max || usize::from(head.min) != min || head.dims as usize != D || !fits {
            return Err(node::corrupted(tree.head, "head page disagrees with the catalog".into()));
        }
        Ok(tree)
    }

    /// Catalog name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Most entries per node.
    pub fn max_entries(&self) -> usize {
        self.max
    }

    /// Fewest entries per non-root node.
    pub fn min_entries(&self) -> usize {
        self.min
    }

    /// Number of entries.
    pub fn len(&self, txn: &impl PageRead) -> Result<u64> {
        Ok(self.head(txn)?.len)
    }

    /// True when the tree holds no entry.
    pub fn is_empty(&self, txn: &impl PageRead) -> Result<bool> {
        Ok(self.len(txn)? == 0)
    }

    /// Levels of the tree (1 = the root is a leaf).
    pub fn height(&self, txn: &impl PageRead) -> Result<u32> {
        Ok(self.head(txn)?.height)
    }

    /// Node pages of the tree (the head page not counted).
    pub fn node_pages(&self, txn: &impl PageRead) -> Result<u64> {
        Ok(self.head(txn)?.nodes)
    }

    /// Checks the invariants; returns the problems found as sentences.
    pub fn check(&self, txn: &impl PageRead) -> Result<Vec<String>> {
        check::check_tree::<D, C>(txn, self.head, self.max, self.min)
    }

    /// Frees every page of the tree and removes it from the catalog.
    pub fn drop_tree(self, txn: &WriteTxn<'_>) -> Result<()> {
        let head = self.head(txn)?;
        self.free_subtree(txn, PageId(head.root), head.root_level())?;
        txn.free_page(self.head)?;
        txn.drop_structure(&self.name)?;
        Ok(())
    }

    fn params(max: usize, min: usize) -> Vec<u8> {
        let mut params = vec![D as u8, C::CODE];
        params.extend_from_slice(&(max as u16).to_le_bytes());
        params.extend_from_slice(&(min as u16).to_le_bytes());
        params
    }

    pub(crate) fn head(&self, txn: &impl PageRead) -> Result<Head> {
        Head::load(txn, self.head)
    }

    pub(crate) fn store_head(&self, txn: &WriteTxn<'_>, head: &Head) -> Result<()> {
        head.store(txn, self.head)
    }

    /// Writes `node` to page `id`.
    pub(crate) fn store_node(&self, txn: &WriteTxn<'_>, id: PageId, node: &Node<D>) -> Result<()> {
        Layout::<D, C>::store(txn, id, node, self.max)
    }

    /// Allocates a page holding `node`.
    pub(crate) fn create_node(&self, txn: &WriteTxn<'_>, node: &Node<D>) -> Result<PageId> {
        Layout::<D, C>::create(txn, node, self.max)
    }

    /// Loads node `id`, which must be at `level` (so a damaged file cannot loop).
    pub(crate) fn load(&self, txn: &impl PageRead, id: PageId, level: u16) -> Result<Node<D>> {
        let node = Layout::<D, C>::load(txn, id, self.max)?;
        if node.level != level {
            return Err(node::corrupted(id, format!("node has level {}, expected {level}", node.level)));
        }
        Ok(node)
    }

    /// Frees node `id` and everything below it.
    pub(crate) fn free_subtree(&self, txn: &WriteTxn<'_>, id: PageId, level: u16) -> Result<u64> {
        let node = self.load(txn, id, level)?;
        let mut freed = 1;
        if level > 0 {
            for e in &node.entries {
                freed += self.free_subtree(txn, PageId(e.id), level - 1)?;
            }
        }
        txn.free_page(id)?;
        Ok(freed)
    }
}

/// `(dims, coord code, max, min)` from a catalog entry.
pub(crate) fn parse_params(entry: &CatalogEntry) -> Result<(usize, u8, usize, usize)> {
    let p = &entry.params;
    if p.len() != 6 {
        return Err(Error::WrongKind { name: entry.name.clone(), found: describe(entry), expected: "rtree".into() });
    }
    Ok((p[0] as usize, p[1], read_u16(p, 2) as usize, read_u16(p, 4) as usize))
}

fn describe(entry: &CatalogEntry) -> String {
    match (entry.kind, entry.params.as_slice()) {
        (StructureKind::RTREE, [dims, coord, ..]) => {
            format!("rtree<{dims}, {}>", if *coord == 4 { "f32" } else { "f64" })
        }
        (kind, _) => kind.name().to_owned(),
    }
}
