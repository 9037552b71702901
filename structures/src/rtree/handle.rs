//! [`RTreeDef`] and [`RTreeHandle`]: an R*-tree declared as a constant (dimensions and
//! coordinate type in its type) and opened from a transaction
//! (`txn.open_rtree(DEF)?`, trait [`crate::Structures`]). The handle borrows its
//! transaction, like a [`crate::table::Table`]; a second handle to one tree in one
//! write transaction is [`Error::AlreadyOpen`]. Dimensions and coordinate type are
//! stored in the catalog and checked on open ([`Error::TypeMismatch`]).

use super::{Coord, Nearest, RTree, RTreeOptions, Rect, WindowIter, WindowMode};
use crate::error::{Error, Result};
use crate::handles::{OpenMark, deletable};
use quiredb_engine::{PageRead, ResultSet, StructureKind, WriteTxn};
use std::marker::PhantomData;

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

/// An R*-tree opened in a transaction. Reads work in any transaction; writes need a
/// write transaction.
pub struct RTreeHandle<'t, T: PageRead, const D: usize, C: Coord = f64> {
    txn: &'t T,
    tree: RTree<D, C>,
    _mark: Option<OpenMark>,
}

/// Opens `def`'s tree; `TypeMismatch` when it has other dimensions or coordinates.
fn open_checked<const D: usize, C: Coord>(txn: &impl PageRead, def: RTreeDef<D, C>) -> Result<RTree<D, C>> {
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
) -> Result<RTreeHandle<'_, T, D, C>> {
    Ok(RTreeHandle { txn, tree: open_checked(txn, def)?, _mark: None })
}

/// Opens (creating when absent) a tree in a write transaction.
pub(crate) fn open_write<'t, 'db, const D: usize, C: Coord>(
    txn: &'t WriteTxn<'db>,
    def: RTreeDef<D, C>,
) -> Result<RTreeHandle<'t, WriteTxn<'db>, D, C>> {
    let mark = OpenMark::claim(txn, def.name)?;
    let tree = match txn.catalog_entry(def.name)? {
        Some(_) => open_checked(txn, def)?,
        None => RTree::create_with(txn, def.name, RTreeOptions { points: def.points, ..RTreeOptions::default() })?,
    };
    Ok(RTreeHandle { txn, tree, _mark: Some(mark) })
}

/// Deletes `def`'s tree; false when absent.
pub(crate) fn delete<const D: usize, C: Coord>(txn: &WriteTxn<'_>, def: RTreeDef<D, C>) -> Result<bool> {
    if !deletable(txn, def.name)? {
        return Ok(false);
    }
    open_checked(txn, def)?.drop_tree(txn)?;
    Ok(true)
}

impl<'t, T: PageRead, const D: usize, C: Coord> RTreeHandle<'t, T, D, C> {
    /// The tree underneath, taking the transaction on every call.
    pub fn raw(&self) -> &RTree<D, C> {
        &self.tree
    }

    /// Catalog name.
    pub fn name(&self) -> &str {
        self.tree.name()
    }

    /// Number of entries.
    pub fn len(&self) -> Result<u64> {
        self.tree.len(self.txn)
    }

    /// True when the tree holds no entry.
    pub fn is_empty(&self) -> Result<bool> {
        self.tree.is_empty(self.txn)
    }

    /// The entries meeting `query` as `mode` says, as an iterator of payloads.
    pub fn window(&self, query: &Rect<D>, mode: WindowMode) -> Result<WindowIter<'t, T, D, C>> {
        self.tree.window_iter(self.txn, query, mode)
    }

    /// Entries by increasing distance from `point` (up to `max_distance`).
    pub fn nearest(&self, point: [f64; D], max_distance: Option<f64>) -> Result<Nearest<'t, T, D, C>> {
        self.tree.nearest(self.txn, point, max_distance)
    }

    /// The `k` entries nearest to `point`, into `out` (payload, distance).
    pub fn nearest_k(&self, point: [f64; D], k: usize, max_distance: Option<f64>, out: &mut ResultSet) -> Result<()> {
        self.tree.nearest_k(self.txn, point, k, max_distance, out)
    }
}

impl<const D: usize, C: Coord> RTreeHandle<'_, WriteTxn<'_>, D, C> {
    /// Inserts `rect` with `payload`.
    pub fn insert(&mut self, rect: &Rect<D>, payload: u64) -> Result<()> {
        self.tree.insert(self.txn, rect, payload)
    }

    /// Inserts a point with `payload`.
    pub fn insert_point(&mut self, point: [f64; D], payload: u64) -> Result<()> {
        self.tree.insert_point(self.txn, point, payload)
    }

    /// Removes the entry (`rect`, `payload`); true when it was present.
    pub fn remove(&mut self, rect: &Rect<D>, payload: u64) -> Result<bool> {
        self.tree.remove(self.txn, rect, payload)
    }

    /// Loads `items` into the empty tree (STR packing, see [`RTree::bulk_load`]).
    pub fn bulk_load(&mut self, items: &[(Rect<D>, u64)]) -> Result<()> {
        self.tree.bulk_load(self.txn, items)
    }
}
