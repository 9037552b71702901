//! [`RTree`], an R*-tree opened in a transaction, and [`RTreeDef`], a tree declared as a
//! constant (dimensions and coordinate type in its type) and opened from a transaction
//! (`txn.open_rtree(DEF)?`, trait [`crate::Structures`]). A handle borrows its
//! transaction, like a [`crate::btree::BTree`] or a [`crate::table::Table`]; a second
//! handle to one tree in one write transaction is [`Error::AlreadyOpen`]. Dimensions and
//! coordinate type are stored in the catalog and checked on open (by [`RTree::open`]:
//! [`Error::WrongKind`]; by a def: [`Error::TypeMismatch`]).

use super::{BulkBuilder, BulkSorter};
use super::{Coord, Core, Nearest, RTreeOptions, Rect, WindowIter, WindowMode};
use crate::error::{Error, Result};
use crate::handles::{OpenMark, deletable};
use quiredb_engine::{PageRead, ResultSet, StructureKind, WriteTxn};
use std::borrow::Cow;
use std::marker::PhantomData;
use std::path::Path;

/// An R*-tree of `D` dimensions with coordinates stored as `C`, by name.
///
/// ```
/// use quiredb_structures::rtree::RTreeDef;
/// const STATIONS: RTreeDef<2, f32> = RTreeDef::points("stations");
/// assert_eq!(STATIONS.name(), "stations");
/// ```
pub struct RTreeDef<const D: usize, C: Coord = f64> {
    name: &'static str,
    points: bool,
    coord: PhantomData<fn() -> C>,
}

impl<const D: usize, C: Coord> RTreeDef<D, C> {
    /// A tree of boxes named `name`.
    pub const fn new(name: &'static str) -> Self {
        RTreeDef { name, points: false, coord: PhantomData }
    }

    /// A tree of points named `name` (smaller leaves, see [`RTree::create_points`]).
    pub const fn points(name: &'static str) -> Self {
        RTreeDef { name, points: true, coord: PhantomData }
    }

    /// Catalog name.
    pub const fn name(&self) -> &'static str {
        self.name
    }
}

impl<const D: usize, C: Coord> Clone for RTreeDef<D, C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<const D: usize, C: Coord> Copy for RTreeDef<D, C> {}

/// An R*-tree of `D` dimensions with coordinates stored as `C`, opened in a
/// transaction. Reads work in any transaction; writes need a write transaction, in
/// which the handle is the tree's only one (a second is [`Error::AlreadyOpen`]).
/// Opening in a read transaction is cheap: what it reads is remembered per thread for
/// the snapshot, so a loop of one-query read transactions reopens without reading the
/// catalog or allocating.
///
/// # Examples
///
/// ```
/// use quiredb_engine::{Database, Durability, storage::MemStorage};
/// use quiredb_structures::rtree::{RTree, Rect, WindowMode};
/// use std::sync::Arc;
///
/// let db = Database::builder().cache_bytes(4 << 20).with_storage(Arc::new(MemStorage::new()), "example")?;
/// let txn = db.begin_write()?;
/// let mut tree = RTree::<_, 2>::create(&txn, "places")?;
/// tree.insert(&Rect::new([0.0, 0.0], [1.0, 1.0]), 7)?;
/// tree.insert_point([5.0, 5.0], 8)?;
/// drop(tree);
/// txn.commit(Durability::Checksummed)?;
///
/// let snapshot = db.begin_read()?;
/// let tree = RTree::<_, 2>::open(&snapshot, "places")?;
/// let window = Rect::new([0.5, 0.5], [2.0, 2.0]);
/// let hits: Vec<u64> = tree.window(&window, WindowMode::Intersects)?.map(|hit| hit.map(|(_, payload)| payload)).collect::<Result<_, _>>()?;
/// assert_eq!(hits, [7]);
/// let nearest = tree.nearest([4.0, 4.0], None)?.next().transpose()?;
/// assert_eq!(nearest.map(|(_, payload)| payload), Some(8));
/// # Ok::<(), quiredb_structures::Error>(())
/// ```
pub struct RTree<'t, T: PageRead, const D: usize, C: Coord = f64> {
    txn: &'t T,
    /// Borrowed when the caller's name outlives the transaction (a literal, a def's).
    name: Cow<'t, str>,
    core: Core<D, C>,
    _mark: Option<OpenMark>,
}

/// Opens `def`'s tree; `TypeMismatch` when it has other dimensions or coordinates.
fn open_checked<'t, T: PageRead, const D: usize, C: Coord>(
    txn: &'t T,
    def: RTreeDef<D, C>,
) -> Result<RTree<'t, T, D, C>> {
    RTree::open(txn, def.name).map_err(|error| match error {
        Error::WrongKind { name, found, expected } if found.starts_with(StructureKind::RTREE.name()) => {
            Error::TypeMismatch { name, stored: found, requested: expected }
        }
        other => other,
    })
}

/// Opens an existing tree in a read transaction.
pub(crate) fn open_read<T: PageRead, const D: usize, C: Coord>(
    txn: &T,
    def: RTreeDef<D, C>,
) -> Result<RTree<'_, T, D, C>> {
    open_checked(txn, def)
}

/// Opens (creating when absent) a tree in a write transaction.
pub(crate) fn open_write<'t, 'db, const D: usize, C: Coord>(
    txn: &'t WriteTxn<'db>,
    def: RTreeDef<D, C>,
) -> Result<RTree<'t, WriteTxn<'db>, D, C>> {
    match txn.catalog_entry(def.name)? {
        Some(_) => open_checked(txn, def),
        None => RTree::create_with(txn, def.name, RTreeOptions { points: def.points, ..RTreeOptions::default() }),
    }
}

/// Deletes `def`'s tree; false when absent.
pub(crate) fn delete<const D: usize, C: Coord>(txn: &WriteTxn<'_>, def: RTreeDef<D, C>) -> Result<bool> {
    if !deletable(txn, def.name)? {
        return Ok(false);
    }
    open_checked(txn, def)?.drop_tree()?;
    Ok(true)
}

impl<'t, T: PageRead, const D: usize, C: Coord> RTree<'t, T, D, C> {
    /// Opens the tree named `name`, checking its kind, dimensions and coordinate type
    /// ([`Error::WrongKind`]); in a write transaction, [`Error::AlreadyOpen`] while
    /// another handle to it is open.
    pub fn open(txn: &'t T, name: impl Into<Cow<'t, str>>) -> Result<Self> {
        let name = name.into();
        let mark = claim(txn, &name)?;
        let core = match txn.snapshot_token() {
            Some(token) => Core::open_in_snapshot(txn, token, &name)?,
            None => Core::open(txn, &name)?,
        };
        Ok(RTree { txn, name, core, _mark: mark })
    }

    /// The transaction the tree was opened in.
    pub fn txn(&self) -> &'t T {
        self.txn
    }

    /// Catalog name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Most entries per node.
    pub fn max_entries(&self) -> usize {
        self.core.max_entries()
    }

    /// Fewest entries per non-root node.
    pub fn min_entries(&self) -> usize {
        self.core.min_entries()
    }

    /// Most entries per leaf (more than [`RTree::max_entries`] in a point tree).
    pub fn leaf_max_entries(&self) -> usize {
        self.core.leaf_max_entries()
    }

    /// True for a point tree (leaves hold points, boxes are refused).
    pub fn is_points(&self) -> bool {
        self.core.is_points()
    }

    /// Number of entries.
    pub fn len(&self) -> Result<u64> {
        self.core.len(self.txn)
    }

    /// True when the tree holds no entry.
    pub fn is_empty(&self) -> Result<bool> {
        self.core.is_empty(self.txn)
    }

    /// Levels of the tree (1 = the root is a leaf).
    pub fn height(&self) -> Result<u32> {
        self.core.height(self.txn)
    }

    /// Node pages of the tree (the head page not counted).
    pub fn node_pages(&self) -> Result<u64> {
        self.core.node_pages(self.txn)
    }

    /// Checks the invariants; returns the problems found as sentences.
    pub fn check(&self) -> Result<Vec<String>> {
        self.core.check(self.txn)
    }

    /// The entries meeting `query` as `mode` says, as an iterator of `(box, payload)`.
    pub fn window(&self, query: &Rect<D>, mode: WindowMode) -> Result<WindowIter<'t, T, D, C>> {
        self.core.window_iter(self.txn, query, mode)
    }

    /// Appends the payloads of the entries meeting `query` to `out`.
    pub fn window_into(&self, query: &Rect<D>, mode: WindowMode, out: &mut ResultSet) -> Result<()> {
        self.core.window(self.txn, query, mode, out)
    }

    /// Appends the payloads of the entries whose box contains `point`.
    pub fn point_query(&self, point: [f64; D], out: &mut ResultSet) -> Result<()> {
        self.core.point_query(self.txn, point, out)
    }

    /// Calls `visit(payload, box)` for each entry meeting `query`; returns the nodes read.
    pub fn visit_window(&self, query: &Rect<D>, mode: WindowMode, visit: impl FnMut(u64, &Rect<D>)) -> Result<u64> {
        self.core.visit_window(self.txn, query, mode, visit)
    }

    /// Entries by increasing distance from `point` (ties by payload), optionally only
    /// those within `max_distance`; yields `(distance, payload)`.
    pub fn nearest(&self, point: [f64; D], max_distance: Option<f64>) -> Result<Nearest<'t, T, D, C>> {
        self.core.nearest(self.txn, point, max_distance)
    }

    /// The `k` entries nearest to `point` (within `max_distance` if given) into `out`
    /// (payload, distance), nearest first, ties by payload: exactly
    /// `min(k, entries in range)` rows.
    pub fn nearest_k(&self, point: [f64; D], k: usize, max_distance: Option<f64>, out: &mut ResultSet) -> Result<()> {
        self.core.nearest_k(self.txn, point, k, max_distance, out)
    }

    /// Like [`RTree::nearest_k`], calling `visit(distance, payload)` for each of the
    /// `k` nearest entries in order instead of filling a `ResultSet`.
    pub fn visit_nearest_k(
        &self,
        point: [f64; D],
        k: usize,
        max_distance: Option<f64>,
        visit: impl FnMut(f64, u64),
    ) -> Result<()> {
        self.core.visit_nearest_k(self.txn, point, k, max_distance, visit)
    }

    /// Leaf entries of the whole tree as `(box, payload)` (for tests and tools).
    pub fn entries(&self) -> Result<Vec<(Rect<D>, u64)>> {
        self.core.entries(self.txn)
    }

    /// A sorter for a later [`BulkSorter::finish_into`] this tree (or another with the
    /// same node capacity), with the limits of [`RTree::bulk_builder`]; it holds no
    /// transaction, so the sorting can run before the write transaction starts.
    pub fn bulk_sorter(&self, tmp_dir: impl AsRef<Path>, mem_budget: usize) -> Result<BulkSorter<D, C>> {
        self.core.bulk_sorter(&self.name, tmp_dir, mem_budget)
    }
}

impl<T: PageRead, const D: usize, C: Coord> std::fmt::Debug for RTree<'_, T, D, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RTree").field("name", &self.name()).field("dims", &D).field("coord", &C::NAME).finish()
    }
}

/// In a write transaction, the mark that `name` has a handle open there.
fn claim(txn: &impl PageRead, name: &str) -> Result<Option<OpenMark>> {
    match txn.snapshot_token() {
        Some(_) => Ok(None),
        None => OpenMark::claim(txn, name).map(Some),
    }
}

impl<'t, 'db, const D: usize, C: Coord> RTree<'t, WriteTxn<'db>, D, C> {
    /// Creates an empty tree named `name` with default options.
    pub fn create(txn: &'t WriteTxn<'db>, name: &str) -> Result<Self> {
        Self::create_with(txn, name, RTreeOptions::default())
    }

    /// Creates an empty point tree named `name` (see [`RTreeOptions::points`]).
    pub fn create_points(txn: &'t WriteTxn<'db>, name: &str) -> Result<Self> {
        Self::create_with(txn, name, RTreeOptions { points: true, ..RTreeOptions::default() })
    }

    /// Creates an empty tree named `name`.
    pub fn create_with(txn: &'t WriteTxn<'db>, name: &str, options: RTreeOptions) -> Result<Self> {
        let mark = claim(txn, name)?;
        let core = Core::create_with(txn, name, options)?;
        Ok(RTree { txn, name: Cow::Owned(name.to_owned()), core, _mark: mark })
    }

    /// Opens `name`, creating it with `options` when absent.
    pub fn open_or_create(txn: &'t WriteTxn<'db>, name: &str, options: RTreeOptions) -> Result<Self> {
        match txn.catalog_entry(name)? {
            Some(_) => Self::open(txn, name.to_owned()),
            None => Self::create_with(txn, name, options),
        }
    }

    /// Frees every page of the tree and removes it from the catalog.
    pub fn drop_tree(self) -> Result<()> {
        self.core.drop_tree(self.txn, &self.name)
    }

    /// Inserts `rect` with `payload`. A box with a NaN or infinite coordinate (or
    /// `min > max`) is refused with [`Error::InvalidBox`], a box that is not a point in
    /// a point tree with [`Error::NotAPoint`], and the tree stays unchanged.
    pub fn insert(&mut self, rect: &Rect<D>, payload: u64) -> Result<()> {
        self.core.insert(self.txn, &self.name, rect, payload)
    }

    /// Inserts a point with `payload`.
    pub fn insert_point(&mut self, point: [f64; D], payload: u64) -> Result<()> {
        self.core.insert_point(self.txn, &self.name, point, payload)
    }

    /// Removes the entry (`rect`, `payload`); true when it was present.
    pub fn remove(&mut self, rect: &Rect<D>, payload: u64) -> Result<bool> {
        self.core.remove(self.txn, &self.name, rect, payload)
    }

    /// Moves the entry `(old, payload)` to box `new`. Returns false (and changes
    /// nothing) when the entry is absent; both boxes are validated first.
    pub fn update(&mut self, old: &Rect<D>, new: &Rect<D>, payload: u64) -> Result<bool> {
        self.core.update(self.txn, &self.name, old, new, payload)
    }

    /// Removes every entry (frees all node pages but one empty leaf root).
    pub fn clear(&mut self) -> Result<()> {
        self.core.clear(self.txn)
    }

    /// Loads `items` into the empty tree (STR packing).
    pub fn bulk_load(&mut self, items: &[(Rect<D>, u64)]) -> Result<()> {
        self.core.bulk_load(self.txn, &self.name, items)
    }

    /// Like [`RTree::bulk_load`] for points given as flat coordinates (`D` per id).
    pub fn bulk_load_points(&mut self, ids: &[u64], coords: &[f64]) -> Result<()> {
        self.core.bulk_load_points(self.txn, ids, coords)
    }

    /// Like [`RTree::bulk_load_points`], packing in Hilbert order (the order of the
    /// streaming [`RTree::bulk_builder`], sorted in memory).
    pub fn bulk_load_points_hilbert(&mut self, ids: &[u64], coords: &[f64]) -> Result<()> {
        self.core.bulk_load_points_hilbert(self.txn, ids, coords)
    }

    /// Starts a streaming bulk load that replaces the tree's contents at `finish`,
    /// sorting in at most about `mem_budget` bytes, with temporary files in `tmp_dir`.
    pub fn bulk_builder(&mut self, tmp_dir: impl AsRef<Path>, mem_budget: usize) -> Result<BulkBuilder<'_, 'db, D, C>> {
        self.core.bulk_builder(self.txn, &self.name, tmp_dir, mem_budget)
    }

    /// The tree underneath, for the sorter (see [`BulkSorter::finish_into`]).
    pub(crate) fn parts(&self) -> (&Core<D, C>, &'t WriteTxn<'db>) {
        (&self.core, self.txn)
    }
}
