//! The disk-resident R*-tree: `RTree<D, C>` indexes boxes in D dimensions (1 ≤ D ≤ 8
//! tested; a point is a degenerate box), each with a `u64` payload, on node pages of
//! the shared buffer pool. Coordinates are stored as `f64` or, to double the fan-out,
//! `f32` (rounded outward; see `coord.rs`).
//!
//! - insert: R* (Beckmann et al. 1990): overlap-minimising ChooseSubtree at the level
//!   above the leaves, read from the pages (`choose.rs`), R* split, forced reinsert
//!   (10 % of a node) once per level per insertion, nodes rewritten in compact groups
//!   of 16 (`insert.rs`, `split.rs`, `group.rs`);
//! - remove: condense-and-reinsert, update = remove + insert (`remove.rs`);
//! - queries: window (intersects / contained), point (`query.rs`), best-first k
//!   nearest neighbours, exact k, ties broken by payload (`knn.rs`);
//! - bulk load: STR/OMT-style packing with full nodes, parallel partitioning (`bulk.rs`);
//!   streaming bounded-memory bulk load in Hilbert order with an external sort
//!   (`stream.rs`, `hilbert.rs`, `packer.rs`);
//! - invariant checker for `quire check` (`check.rs`).
//!
//! Point trees ([`RTreeOptions::points`], [`RTree::create_points`]) store their leaf
//! entries as points, `D` coordinates instead of a degenerate box's `2·D`, so a leaf
//! holds about twice the entries (160 instead of 89 in 5-D f64 on 8 KiB pages) and a
//! query scans half the bytes; they refuse a box with `min != max` with
//! [`Error::NotAPoint`]. An f32 point tree rounds each point to the nearest f32 (a box
//! tree rounds outward).
//!
//! Layout of the pages: see `node.rs`; their kinds are [`NODE_PAGE`] (20) and
//! [`HEAD_PAGE`] (21, flagged indexing). The catalog entry's root is the head page,
//! which never moves; its parameters are `[dims u8, coord u8, max u16, min u16]`
//! (little-endian), followed for a point tree by `[flags u8 (bit 0 = points),
//! leaf max u16, leaf min u16]`; they are checked on open against `D` and `C`.
//!
//! Invariants (checked by `check.rs`): each branch entry's box is the union of its
//! child's entries; every non-root node holds between `min` and `max` entries (a
//! branch root at least 2); all leaves are at level 0 and the root at `height − 1`;
//! `len` is the number of leaf entries. Every mutation validates its input before it
//! touches a page, so bad input leaves the tree unchanged.

mod bulk;
mod check;
mod choose;
mod coord;
mod dist;
mod geom;
mod group;
pub(crate) mod handle;
mod hilbert;
mod insert;
mod knn;
mod node;
mod packer;
mod query;
mod remove;
mod root_cache;
mod scratch;
mod split;
mod stream;

pub use check::check_entry;
pub use coord::Coord;
pub use geom::Rect;
pub use handle::{RTree, RTreeDef};
pub use knn::Nearest;
pub use query::{WindowIter, WindowMode};
pub use stream::{BulkBuilder, BulkSorter, BulkStats};

use crate::error::{Error, Result};
use node::{Form, Head, Layout, Node};
use quiredb_engine::SnapshotToken;
use quiredb_engine::page::read_u16;
use quiredb_engine::{CatalogEntry, PageId, PageKind, PageRead, StructureKind, WriteTxn};
use root_cache::RootSeen;
use std::cell::Cell;
use std::marker::PhantomData;

/// Largest number of dimensions.
pub const MAX_DIMS: usize = 32;

/// Page kind of R*-tree nodes, leaves and branches alike.
pub const NODE_PAGE: PageKind = PageKind::structure(20);
/// Page kind of an R*-tree's head page, read by every query: kept in the pool longer.
pub const HEAD_PAGE: PageKind = PageKind::structure(21).indexing();

/// Options of a new tree.
#[derive(Clone, Copy, Debug, Default)]
pub struct RTreeOptions {
    /// Most entries per node; `None` = as many as fit in a page.
    pub max_entries: Option<usize>,
    /// Leaves hold points only (`D` coordinates each, about twice the fan-out);
    /// a box with `min != max` is refused with [`Error::NotAPoint`].
    pub points: bool,
}

/// A tree's catalog identity and node bounds, with every operation taking the
/// transaction; the public handle is [`RTree`], which borrows its transaction and holds
/// the name. What an open in a read transaction decodes is remembered per snapshot
/// (`opened.rs`). A plain `Copy` value: an open or a query iterator copies it whole.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Core<const D: usize, C: Coord = f64> {
    head: PageId,
    max: usize,
    min: usize,
    /// Node bounds of the leaves (= `max`, `min` unless `points`).
    leaf_max: usize,
    leaf_min: usize,
    points: bool,
    /// The root as read in the committed snapshot of the open (`root_cache.rs`).
    root_seen: RootSeen,
    _coord: PhantomData<C>,
}

/// What an open of a tree decodes in a committed snapshot ([`Core::open_in_snapshot`]).
#[derive(Clone, Copy)]
struct Opened {
    params: Params,
    head: PageId,
    root: u64,
    level: u16,
}

thread_local! {
    /// Trees opened in read transactions on this thread, by name and snapshot.
    static OPENED: crate::opened::Remembered<Opened> = const { crate::opened::Remembered::new() };
    /// The last of them, checked first (`opened.rs`).
    static LAST_OPEN: Cell<Option<crate::opened::LastOpen<Opened>>> = const { Cell::new(None) };
}

/// The catalog parameters of a tree.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Params {
    pub dims: usize,
    pub coord: u8,
    pub max: usize,
    pub min: usize,
    pub points: bool,
    pub leaf_max: usize,
    pub leaf_min: usize,
}

impl<const D: usize, C: Coord> Core<D, C> {
    /// Creates an empty tree named `name`.
    pub fn create_with(txn: &WriteTxn<'_>, name: &str, options: RTreeOptions) -> Result<Self> {
        let fit = Layout::<D, C>::capacity(txn.payload_size(), false).min(u16::MAX as usize);
        let max = options.max_entries.unwrap_or(fit);
        if D == 0 || D > MAX_DIMS || !(4..=fit).contains(&max) {
            return Err(Error::InvalidParameter {
                reason: format!(
                    "an R-tree of {D} dimensions needs 1..={MAX_DIMS} dimensions and 4..={fit} entries per node, not {max}"
                ),
            });
        }
        let point_fit = Layout::<D, C>::capacity(txn.payload_size(), true).min(u16::MAX as usize);
        let leaf_max = if options.points { options.max_entries.unwrap_or(point_fit) } else { max };
        let (min, leaf_min) = ((max * 2 / 5).max(2), (leaf_max * 2 / 5).max(2));
        let params = Params { dims: D, coord: C::CODE, max, min, points: options.points, leaf_max, leaf_min };
        let mut tree = Core::from_params(PageId(0), &params);
        let root = Layout::<D, C>::create(txn, &Node { level: 0, entries: Vec::new() }, tree.form(0))?;
        let mut head_page = txn.alloc_page(HEAD_PAGE)?;
        let head = Head {
            dims: D as u8,
            coord: C::CODE,
            max: max as u16,
            min: min as u16,
            root: root.0,
            height: 1,
            len: 0,
            nodes: 1,
            points: options.points,
            leaf_max: leaf_max as u16,
            leaf_min: leaf_min as u16,
        };
        head.encode(&mut head_page);
        tree.head = head_page.id();
        drop(head_page);
        txn.create_structure(name, StructureKind::RTREE, &tree.params(), tree.head)?;
        Ok(tree)
    }

    fn from_params(head: PageId, p: &Params) -> Self {
        let (max, min) = (p.max, p.min);
        let (leaf_max, leaf_min) = if p.points { (p.leaf_max, p.leaf_min) } else { (max, min) };
        Core {
            head,
            max,
            min,
            leaf_max,
            leaf_min,
            points: p.points,
            root_seen: RootSeen::default(),
            _coord: PhantomData,
        }
    }

    /// The tree of a catalog entry whose parameters are those of `RTree<D, C>`, not
    /// checked against its head page (for the checker).
    pub(crate) fn from_entry(entry: &CatalogEntry, params: &Params) -> Self {
        Self::from_params(entry.root, params)
    }

    /// Opens the tree named `name`, checking its kind, dimensions and coordinate type.
    pub fn open(txn: &impl PageRead, name: &str) -> Result<Self> {
        let entry = txn
            .catalog_entry(name)?
            .ok_or_else(|| Error::Engine(quiredb_engine::Error::NoSuchStructure(name.to_owned())))?;
        let params = parse_params(&entry)?;
        if entry.kind != StructureKind::RTREE || params.dims != D || params.coord != C::CODE {
            return Err(Error::WrongKind {
                name: name.to_owned(),
                found: describe(&entry),
                expected: format!("rtree<{D}, {}>", C::NAME),
            });
        }
        let tree = Self::from_entry(&entry, &params);
        if let Some(found) = node::old_version(&txn.page(tree.head)?) {
            let expected = node::FORMAT_VERSION;
            return Err(Error::RTreeFormat { tree: name.to_owned(), found, expected });
        }
        let head = tree.head(txn)?;
        let same = usize::from(head.max) == tree.max
            && usize::from(head.min) == tree.min
            && head.points == tree.points
            && (!tree.points
                || (usize::from(head.leaf_max), usize::from(head.leaf_min)) == (tree.leaf_max, tree.leaf_min));
        if !same || head.dims as usize != D || tree.bounds_problem(txn.payload_size()).is_some() {
            return Err(node::corrupted(tree.head, "head page disagrees with the catalog".into()));
        }
        Ok(tree)
    }

    /// [`Core::open`] in the committed snapshot `token`, remembered per thread for it
    /// (`opened.rs`): a hit reads neither the catalog nor the head page, allocates
    /// nothing and touches nothing another thread writes. A tree remembered under
    /// `name` with other dimensions or coordinates is opened afresh, which refuses it.
    #[inline]
    pub(crate) fn open_in_snapshot(txn: &impl PageRead, token: SnapshotToken, name: &str) -> Result<Self> {
        let opened = crate::opened::remembered_last(&LAST_OPEN, &OPENED, token, name, || {
            let core = Self::open(txn, name)?;
            let (root, level) = Head::root(txn, core.head)?;
            Ok(Opened { params: core.shape(), head: core.head, root, level })
        })?;
        if opened.params.dims != D || opened.params.coord != C::CODE {
            return Self::open(txn, name);
        }
        let mut core = Self::from_params(opened.head, &opened.params);
        core.root_seen = RootSeen::new(token, opened.root, opened.level);
        Ok(core)
    }

    /// The tree's catalog parameters.
    fn shape(&self) -> Params {
        let (max, min, points, leaf_max, leaf_min) = (self.max, self.min, self.points, self.leaf_max, self.leaf_min);
        Params { dims: D, coord: C::CODE, max, min, points, leaf_max, leaf_min }
    }

    /// Most entries per node.
    pub fn max_entries(&self) -> usize {
        self.max
    }

    /// Fewest entries per non-root node.
    pub fn min_entries(&self) -> usize {
        self.min
    }

    /// Most entries per leaf (more than [`RTree::max_entries`] in a point tree).
    pub fn leaf_max_entries(&self) -> usize {
        self.leaf_max
    }

    /// True for a point tree (leaves hold points, boxes are refused).
    pub fn is_points(&self) -> bool {
        self.points
    }

    /// Tells the engine that node `id` at `level` will be read soon (its header and
    /// group boxes), so the memory latency overlaps the current node's scan.
    #[inline(always)]
    pub(crate) fn prefetch_node(&self, txn: &impl PageRead, id: u64, level: u16) {
        txn.prefetch(PageId(id), &node::Layout::<D, C>::head_ranges(self.form(level)));
    }

    /// The layout of the nodes at `level`.
    #[inline(always)]
    pub(crate) fn form(&self, level: u16) -> Form {
        if level == 0 && self.points {
            Form { max: self.leaf_max, point: true }
        } else {
            Form { max: self.max, point: false }
        }
    }

    /// Fewest entries of a non-root node at `level`.
    #[inline]
    pub(crate) fn fill(&self, level: u16) -> usize {
        if level == 0 { self.leaf_min } else { self.min }
    }

    /// Why the node bounds cannot be those of a tree on pages of `payload` bytes.
    pub(crate) fn bounds_problem(&self, payload: usize) -> Option<String> {
        let (fit, leaf_fit) =
            (Layout::<D, C>::capacity(payload, false), Layout::<D, C>::capacity(payload, self.points));
        let bad = |max: usize, min: usize, fit: usize| max > fit || min == 0 || 2 * min > max;
        if bad(self.max, self.min, fit) || bad(self.leaf_max, self.leaf_min, leaf_fit) {
            return Some(format!(
                "node bounds {}..={} (leaves {}..={}) are impossible for pages holding {fit} entries ({leaf_fit} per leaf)",
                self.min, self.max, self.leaf_min, self.leaf_max
            ));
        }
        None
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
        check::check_tree(txn, self)
    }

    /// Frees every page of the tree `name` and removes it from the catalog.
    pub fn drop_tree(self, txn: &WriteTxn<'_>, name: &str) -> Result<()> {
        let head = self.head(txn)?;
        self.free_subtree(txn, PageId(head.root), head.root_level())?;
        txn.free_page(self.head)?;
        txn.drop_structure(name)?;
        Ok(())
    }

    fn params(&self) -> Vec<u8> {
        let mut params = vec![D as u8, C::CODE];
        params.extend_from_slice(&(self.max as u16).to_le_bytes());
        params.extend_from_slice(&(self.min as u16).to_le_bytes());
        if self.points {
            params.push(1);
            params.extend_from_slice(&(self.leaf_max as u16).to_le_bytes());
            params.extend_from_slice(&(self.leaf_min as u16).to_le_bytes());
        }
        params
    }

    /// The box as it will be stored (validated, rounded to `C`); a point tree (named
    /// `name` in the error) refuses a box that is not a point and rounds points to the
    /// nearest `C`.
    pub(crate) fn stored(&self, name: &str, rect: &Rect<D>) -> Result<Rect<D>> {
        if !self.points {
            return coord::stored_rect::<C, D>(rect);
        }
        if rect.min != rect.max {
            return Err(Error::NotAPoint { tree: name.to_owned(), reason: format!("{rect:?} has min != max") });
        }
        coord::stored_point::<C, D>(&rect.min)
    }

    pub(crate) fn head(&self, txn: &impl PageRead) -> Result<Head> {
        Head::load(txn, self.head)
    }

    /// The root's page and level (the query paths' cheap head read).
    #[inline]
    pub(crate) fn root(&self, txn: &impl PageRead) -> Result<(u64, u16)> {
        let Some(token) = txn.snapshot_token() else {
            return Head::root(txn, self.head);
        };
        match self.root_seen.get(token) {
            Some(root) => Ok(root),
            None => Head::root(txn, self.head),
        }
    }

    pub(crate) fn store_head(&self, txn: &WriteTxn<'_>, head: &Head) -> Result<()> {
        head.store(txn, self.head)
    }

    /// Writes `node` to page `id`.
    pub(crate) fn store_node(&self, txn: &WriteTxn<'_>, id: PageId, node: &Node<D>) -> Result<()> {
        Layout::<D, C>::store(txn, id, node, self.form(node.level))
    }

    /// Allocates a page holding `node`.
    pub(crate) fn create_node(&self, txn: &WriteTxn<'_>, node: &Node<D>) -> Result<PageId> {
        Layout::<D, C>::create(txn, node, self.form(node.level))
    }

    /// Loads node `id`, which must be at `level` (so a damaged file cannot loop).
    pub(crate) fn load(&self, txn: &impl PageRead, id: PageId, level: u16) -> Result<Node<D>> {
        let node = Layout::<D, C>::load(txn, id, self.form(level))?;
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

/// The parameters of a catalog entry (6 bytes, or 11 for a point tree).
pub(crate) fn parse_params(entry: &CatalogEntry) -> Result<Params> {
    let p = &entry.params;
    let points = p.len() == 11 && p[6] == 1;
    if p.len() != 6 && !points {
        return Err(Error::WrongKind { name: entry.name.clone(), found: describe(entry), expected: "rtree".into() });
    }
    let (max, min) = (read_u16(p, 2) as usize, read_u16(p, 4) as usize);
    let (leaf_max, leaf_min) = if points { (read_u16(p, 7) as usize, read_u16(p, 9) as usize) } else { (max, min) };
    Ok(Params { dims: p[0] as usize, coord: p[1], max, min, points, leaf_max, leaf_min })
}

fn describe(entry: &CatalogEntry) -> String {
    match (entry.kind, entry.params.as_slice()) {
        (StructureKind::RTREE, [dims, coord, ..]) => {
            let points = if entry.params.len() == 11 { ", points" } else { "" };
            format!("rtree<{dims}, {}{points}>", if *coord == 4 { "f32" } else { "f64" })
        }
        (kind, _) => kind.name().to_owned(),
    }
}
