//! Window and point queries, read straight from the node pages (no decoding of whole
//! nodes): a depth-first walk with an explicit stack, one page pinned at a time.
//! Results go into a recycled `ResultSet` (id = payload, score 0), to a visitor, or
//! come out of [`WindowIter`]. A child whose level is not its parent's − 1 is
//! reported as corruption, so a damaged file cannot make a query loop.

use super::RTree;
use super::coord::{Coord, at};
use super::geom::Rect;
use super::node::{Form, Layout, corrupted};
use super::scratch;
use crate::error::{Error, Result};
use quiredb_engine::{PageId, PageRead, ResultSet};
use std::cell::RefCell;

thread_local! {
    /// The depth-first stack of [`RTree::visit_window`]: (node id, expected level).
    static WINDOW_STACK: RefCell<Vec<(u64, u16)>> = const { RefCell::new(Vec::new()) };
}

/// Which entries a window query returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowMode {
    /// Entries whose box shares a point with the window.
    Intersects,
    /// Entries whose box lies inside the window.
    Contained,
}

/// Checks a query window: no NaN and `min <= max` (infinite bounds are allowed).
pub(crate) fn validate_query<const D: usize>(query: &Rect<D>) -> Result<()> {
    for d in 0..D {
        if query.min[d].is_nan() || query.max[d].is_nan() || query.min[d] > query.max[d] {
            return Err(Error::InvalidBox {
                reason: format!("query window [{}, {}] in dimension {d} is empty or NaN", query.min[d], query.max[d]),
            });
        }
    }
    Ok(())
}

#[inline(always)]
fn chunk_intersects<C: Coord, const D: usize>(chunk: &[u8], q: &Rect<D>) -> bool {
    let b = &chunk[..2 * D * C::BYTES];
    let mut meets = true;
    for d in 0..D {
        meets &= (at::<C>(b, d) <= q.max[d]) & (at::<C>(b, D + d) >= q.min[d]);
    }
    meets
}

/// True when the encoded point `chunk` lies in the closed box `q` (the same test for
/// both window modes).
#[inline(always)]
fn point_inside<C: Coord, const D: usize>(chunk: &[u8], q: &Rect<D>) -> bool {
    // Without early exits: in a large window each test passes unpredictably, and
    // D comparisons cost less than the mispredicted branches.
    let coords = &chunk[..D * C::BYTES];
    let mut inside = true;
    for d in 0..D {
        let x = at::<C>(coords, d);
        inside &= (x >= q.min[d]) & (x <= q.max[d]);
    }
    inside
}

/// Calls `visit(payload, point)` for the entries of a point leaf inside `q`.
#[inline(always)]
fn scan_point_leaf<C: Coord, const D: usize>(
    page: &[u8],
    bytes: &[u8],
    form: Form,
    q: &Rect<D>,
    mut visit: impl FnMut(u64, &[u8]),
) {
    for (group, run) in Layout::<D, C>::runs(page, bytes, form) {
        if !chunk_intersects::<C, D>(group, q) {
            continue;
        }
        for chunk in run.chunks_exact(Layout::<D, C>::POINT) {
            if point_inside::<C, D>(chunk, q) {
                visit(Layout::<D, C>::point_id(chunk), chunk);
            }
        }
    }
}

#[inline(always)]
fn chunk_within<C: Coord, const D: usize>(chunk: &[u8], q: &Rect<D>) -> bool {
    let b = &chunk[..2 * D * C::BYTES];
    for d in 0..D {
        if at::<C>(b, d) < q.min[d] || at::<C>(b, D + d) > q.max[d] {
            return false;
        }
    }
    true
}

impl<const D: usize, C: Coord> RTree<D, C> {
    /// Appends the payloads of the entries matching `query` to `out`.
    pub fn window(&self, txn: &impl PageRead, query: &Rect<D>, mode: WindowMode, out: &mut ResultSet) -> Result<()> {
        self.visit_window(txn, query, mode, |payload, _| out.push(payload, 0.0))?;
        Ok(())
    }

    /// Appends the payloads of the entries whose box contains `point`.
    pub fn point_query(&self, txn: &impl PageRead, point: [f64; D], out: &mut ResultSet) -> Result<()> {
        self.window(txn, &Rect::point(point), WindowMode::Intersects, out)
    }

    /// Calls `visit(payload, box)` for each matching entry; returns the nodes read.
    pub fn visit_window(
        &self,
        txn: &impl PageRead,
        query: &Rect<D>,
        mode: WindowMode,
        mut visit: impl FnMut(u64, &Rect<D>),
    ) -> Result<u64> {
        validate_query(query)?;
        let root = self.root(txn)?;
        let mut stack = scratch::take(&WINDOW_STACK);
        stack.push(root);
        let mut nodes = 0;
        while let Some((id, expected)) = stack.pop() {
            nodes += 1;
            let page = self.node_page(txn, id, expected)?;
            let form = self.form(expected);
            let (level, bytes) = Layout::<D, C>::entries(&page, PageId(id), form)?;
            if form.point {
                scan_point_leaf::<C, D>(&page, bytes, form, query, |id, chunk| {
                    visit(id, &Rect::point(Layout::<D, C>::point(chunk)));
                });
                continue;
            }
            for (group, run) in Layout::<D, C>::runs(&page, bytes, form) {
                if !chunk_intersects::<C, D>(group, query) {
                    continue;
                }
                for chunk in run.chunks_exact(Layout::<D, C>::ENTRY) {
                    if level > 0 {
                        if chunk_intersects::<C, D>(chunk, query) {
                            stack.push((Layout::<D, C>::id(chunk), level - 1));
                        }
                    } else if matches_mode::<C, D>(chunk, query, mode) {
                        visit(Layout::<D, C>::id(chunk), &Layout::<D, C>::rect(chunk));
                    }
                }
            }
        }
        Ok(nodes)
    }

    /// An iterator over the `(box, payload)` of the entries matching `query`.
    pub fn window_iter<'t, T: PageRead>(
        &self,
        txn: &'t T,
        query: &Rect<D>,
        mode: WindowMode,
    ) -> Result<WindowIter<'t, T, D, C>> {
        validate_query(query)?;
        let root = self.root(txn)?;
        Ok(WindowIter { tree: self.clone(), txn, query: *query, mode, stack: vec![root], ready: Vec::new() })
    }

    /// Pins node page `id`, checking its level (the kind is checked by `check` and
    /// on every decode; the hot read path relies on the level and count checks).
    #[inline]
    pub(crate) fn node_page<'t>(
        &self,
        txn: &'t impl PageRead,
        id: u64,
        level: u16,
    ) -> Result<quiredb_engine::PageRef<'t>> {
        let page = txn.page(PageId(id))?;
        let bytes: &[u8] = &page;
        let found = u16::from_le_bytes([bytes[0], bytes[1]]);
        if found != level {
            return Err(corrupted(PageId(id), format!("expected a node of level {level}, found level {found}")));
        }
        Ok(page)
    }
}

#[inline(always)]
fn matches_mode<C: Coord, const D: usize>(chunk: &[u8], query: &Rect<D>, mode: WindowMode) -> bool {
    match mode {
        WindowMode::Intersects => chunk_intersects::<C, D>(chunk, query),
        WindowMode::Contained => chunk_within::<C, D>(chunk, query),
    }
}

/// Iterator of a window query; yields `(box, payload)`, or one error and then ends.
pub struct WindowIter<'t, T: PageRead, const D: usize, C: Coord> {
    tree: RTree<D, C>,
    txn: &'t T,
    query: Rect<D>,
    mode: WindowMode,
    stack: Vec<(u64, u16)>,
    ready: Vec<(Rect<D>, u64)>,
}

impl<T: PageRead, const D: usize, C: Coord> WindowIter<'_, T, D, C> {
    /// Reads the next node of the stack into `ready` / the stack.
    fn expand(&mut self, id: u64, expected: u16) -> Result<()> {
        let page = self.tree.node_page(self.txn, id, expected)?;
        let form = self.tree.form(expected);
        let (level, bytes) = Layout::<D, C>::entries(&page, PageId(id), form)?;
        if form.point {
            let ready = &mut self.ready;
            scan_point_leaf::<C, D>(&page, bytes, form, &self.query, |id, chunk| {
                ready.push((Rect::point(Layout::<D, C>::point(chunk)), id));
            });
            return Ok(());
        }
        for (group, run) in Layout::<D, C>::runs(&page, bytes, form) {
            if !chunk_intersects::<C, D>(group, &self.query) {
                continue;
            }
            for chunk in run.chunks_exact(Layout::<D, C>::ENTRY) {
                if level > 0 {
                    if chunk_intersects::<C, D>(chunk, &self.query) {
                        self.stack.push((Layout::<D, C>::id(chunk), level - 1));
                    }
                } else if matches_mode::<C, D>(chunk, &self.query, self.mode) {
                    self.ready.push((Layout::<D, C>::rect(chunk), Layout::<D, C>::id(chunk)));
                }
            }
        }
        Ok(())
    }
}

impl<T: PageRead, const D: usize, C: Coord> Iterator for WindowIter<'_, T, D, C> {
    type Item = Result<(Rect<D>, u64)>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(item) = self.ready.pop() {
                return Some(Ok(item));
            }
            let (id, level) = self.stack.pop()?;
            if let Err(error) = self.expand(id, level) {
                self.stack.clear();
                return Some(Err(error));
            }
        }
    }
}
