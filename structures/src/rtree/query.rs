//! Window and point queries, read straight from the node pages (no decoding of whole
//! nodes): a depth-first walk with an explicit stack, one page pinned at a time.
//! Results go into a recycled `ResultSet` (id = payload, score 0), to a visitor, or
//! come out of [`WindowIter`]. A child whose level is not its parent's − 1 is
//! reported as corruption, so a damaged file cannot make a query loop.
//!
//! A group box (16 entries) or a child box that lies inside the window matches
//! whole: its entries are reported, or its subtree walked, without testing each
//! entry. The group boxes of a node, and the entries of a hit group, are tested into
//! bit masks without branches, then the set bits are visited: each test of a small
//! window passes or fails unpredictably, and with early-exit tests the branch
//! predictor missed ~60 times a query (callgrind branch simulation, 200 k 2-D points
//! bulk loaded, 0.001 % windows: 59.5 → 8.1 mispredicts and 2.8 k → 3.0 k
//! instructions a query; `rtree_probe`, 20,000 windows on core 0 beside other work:
//! 2-D 0.001 % 796 k → 1,089 k windows/s, 1 % 70 k → 80 k; 5-D 0.001 % 96 k → 132 k,
//! 0.1 % 15.3 k → 21.0 k, 1 % 3.9 k → 6.1 k). The containment shortcut alone took
//! 2-D 1 % windows from 54.7 k to 23.9 k instructions.

use super::Core;
use super::coord::{Coord, at};
use super::geom::Rect;
use super::node::{Form, GROUP, GroupCoord, Layout, corrupted};
use super::scratch;
use crate::error::{Error, Result};
use quiredb_engine::{PageId, PageRead, ResultSet};
use std::cell::RefCell;

thread_local! {
    /// The depth-first stack of [`RTree::visit_window`].
    static WINDOW_STACK: RefCell<Vec<Pending>> = const { RefCell::new(Vec::new()) };
}

/// A node still to visit: (page, expected level, its box lies inside the window).
type Pending = (u64, u16, bool);

thread_local! {}

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

/// Bit `i` set for each encoded entry `i` of `run` (at most 64, `stride` bytes each)
/// that `test` accepts. Computed without branches: each test of a query passes or
/// fails unpredictably, and a mispredicted branch costs more than the tests.
#[inline(always)]
fn mask_of(run: &[u8], stride: usize, test: impl Fn(&[u8]) -> bool) -> u64 {
    let mut mask = 0u64;
    for (i, chunk) in run.chunks_exact(stride).enumerate() {
        mask |= u64::from(test(chunk)) << i;
    }
    mask
}

/// Calls `f(i)` for each bit `i` set in `mask`, lowest first.
#[inline(always)]
fn for_bits(mut mask: u64, mut f: impl FnMut(usize)) {
    while mask != 0 {
        f(mask.trailing_zeros() as usize);
        mask &= mask - 1;
    }
}

/// A query window rounded to f32 once per query, for the tests on the f32 group boxes
/// without converting their coordinates: rounded outward (`meet_*`) the intersection
/// test has no false negatives, rounded inward (`in_*`) the containment test has no
/// false positives.
pub(crate) struct GroupWindow<const D: usize> {
    meet_lo: [f32; D],
    meet_hi: [f32; D],
    in_lo: [f32; D],
    in_hi: [f32; D],
}

impl<const D: usize> GroupWindow<D> {
    pub(crate) fn new(q: &Rect<D>) -> Self {
        let (down, up) = (|x: f64| GroupCoord::round_down(x) as f32, |x: f64| GroupCoord::round_up(x) as f32);
        GroupWindow { meet_lo: q.min.map(down), meet_hi: q.max.map(up), in_lo: q.min.map(up), in_hi: q.max.map(down) }
    }

    /// The encoded group box `chunk` may meet the window (it does if it really meets it).
    #[inline(always)]
    fn meets(&self, chunk: &[u8]) -> bool {
        let b = &chunk[..2 * D * 4];
        let mut meets = true;
        for d in 0..D {
            meets &= (f32_at(b, d) <= self.meet_hi[d]) & (f32_at(b, D + d) >= self.meet_lo[d]);
        }
        meets
    }

    /// The encoded group box `chunk` lies in the window (only if it really does).
    #[inline(always)]
    fn holds(&self, chunk: &[u8]) -> bool {
        let b = &chunk[..2 * D * 4];
        let mut inside = true;
        for d in 0..D {
            inside &= (f32_at(b, d) >= self.in_lo[d]) & (f32_at(b, D + d) <= self.in_hi[d]);
        }
        inside
    }
}

/// The f32 at index `i` of `bytes`.
#[inline(always)]
fn f32_at(bytes: &[u8], i: usize) -> f32 {
    f32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().expect("slice of 4 bytes"))
}

/// Calls `run(entries, inside)` with the encoded entries of each group of a node
/// whose group box meets the window (the group boxes are tested 64 at a time into a
/// mask); `inside` tells that the group box lies in it, so every entry does.
#[inline(always)]
fn hit_runs<C: Coord, const D: usize, F: FnMut(&[u8], bool)>(
    page: &[u8],
    bytes: &[u8],
    form: Form,
    q: &GroupWindow<D>,
    mut run: F,
) {
    let (stride, size) = (Layout::<D, C>::stride(form.point), Layout::<D, C>::GROUP_BOX);
    let span = GROUP * stride;
    let groups = Layout::<D, C>::groups(page, form, bytes.len() / stride);
    for (block, boxes) in groups.chunks(64 * size).enumerate() {
        let mask = mask_of(boxes, size, |b| q.meets(b));
        for_bits(mask, |g| {
            let inside = q.holds(&boxes[g * size..]);
            let start = (block * 64 + g) * span;
            // A full group has a constant length (no division to count its entries).
            match bytes.get(start..start + span) {
                Some(full) => run(full, inside),
                None => run(&bytes[start.min(bytes.len())..], inside),
            }
        });
    }
}

/// Calls `f(entry)` for each encoded entry of `run` whose bit is set in `mask` (or
/// for every entry with `all`).
#[inline(always)]
fn each_of(run: &[u8], stride: usize, all: bool, test: impl Fn(&[u8]) -> bool, mut f: impl FnMut(&[u8])) {
    if all {
        run.chunks_exact(stride).for_each(f);
        return;
    }
    for_bits(mask_of(run, stride, test), |i| f(&run[i * stride..(i + 1) * stride]));
}

/// Scans one node for a window query: `child(page, inside)` for each child of a
/// branch whose box meets `q` (`inside`: the child's box lies in `q`),
/// `hit(payload, entry)` for each matching leaf entry (`entry` is the encoded point
/// or box). With `inside` the node's own box lies in `q`: everything matches untested.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn scan_node<C: Coord, const D: usize>(
    page: &[u8],
    bytes: &[u8],
    (level, inside): (u16, bool),
    form: Form,
    (q, gq): (&Rect<D>, &GroupWindow<D>),
    mode: WindowMode,
    mut child: impl FnMut(u64, bool),
    mut hit: impl FnMut(u64, &[u8]),
) {
    type L<const D: usize, C> = Layout<D, C>;
    if inside {
        for chunk in bytes.chunks_exact(L::<D, C>::stride(form.point)) {
            if level > 0 {
                child(L::<D, C>::id(chunk), true);
            } else {
                hit(L::<D, C>::entry_id(chunk, form.point), chunk);
            }
        }
    } else if form.point {
        hit_runs::<C, D, _>(page, bytes, form, gq, |run, all| {
            let test = |c: &[u8]| point_inside::<C, D>(c, q);
            each_of(run, L::<D, C>::POINT, all, test, |c| hit(L::<D, C>::point_id(c), c));
        });
    } else if level > 0 {
        hit_runs::<C, D, _>(page, bytes, form, gq, |run, all| {
            let test = |c: &[u8]| chunk_intersects::<C, D>(c, q);
            each_of(run, L::<D, C>::ENTRY, all, test, |c| {
                child(L::<D, C>::id(c), all || chunk_within::<C, D>(c, q));
            });
        });
    } else {
        hit_runs::<C, D, _>(page, bytes, form, gq, |run, all| {
            let test = |c: &[u8]| matches_mode::<C, D>(c, q, mode);
            each_of(run, L::<D, C>::ENTRY, all, test, |c| hit(L::<D, C>::id(c), c));
        });
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

impl<const D: usize, C: Coord> Core<D, C> {
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
        let (root, root_level) = self.root(txn)?;
        let groups = GroupWindow::new(query);
        let mut stack = scratch::take(&WINDOW_STACK);
        stack.push((root, root_level, false));
        let mut nodes = 0;
        while let Some((id, expected, inside)) = stack.pop() {
            nodes += 1;
            let page = self.node_page(txn, id, expected)?;
            let form = self.form(expected);
            let (level, bytes) = Layout::<D, C>::entries(&page, PageId(id), form)?;
            let below = level.wrapping_sub(1);
            scan_node::<C, D>(
                &page,
                bytes,
                (level, inside),
                form,
                (query, &groups),
                mode,
                |child, all| {
                    self.prefetch_node(txn, child, below);
                    stack.push((child, below, all));
                },
                |payload, chunk| visit(payload, &Layout::<D, C>::entry_rect(chunk, form.point)),
            );
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
        let (root, level) = self.root(txn)?;
        let stack = vec![(root, level, false)];
        let groups = GroupWindow::new(query);
        Ok(WindowIter { tree: *self, txn, query: *query, groups, mode, stack, ready: Vec::new() })
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
            return Err(wrong_level(id, level, found));
        }
        Ok(page)
    }
}

#[cold]
#[inline(never)]
fn wrong_level(id: u64, level: u16, found: u16) -> Error {
    corrupted(PageId(id), format!("expected a node of level {level}, found level {found}"))
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
    tree: Core<D, C>,
    txn: &'t T,
    query: Rect<D>,
    groups: GroupWindow<D>,
    mode: WindowMode,
    stack: Vec<Pending>,
    ready: Vec<(Rect<D>, u64)>,
}

impl<T: PageRead, const D: usize, C: Coord> WindowIter<'_, T, D, C> {
    /// Reads the next node of the stack into `ready` / the stack.
    fn expand(&mut self, (id, expected, inside): Pending) -> Result<()> {
        let page = self.tree.node_page(self.txn, id, expected)?;
        let form = self.tree.form(expected);
        let (level, bytes) = Layout::<D, C>::entries(&page, PageId(id), form)?;
        let (stack, ready, below) = (&mut self.stack, &mut self.ready, level.wrapping_sub(1));
        scan_node::<C, D>(
            &page,
            bytes,
            (level, inside),
            form,
            (&self.query, &self.groups),
            self.mode,
            |child, all| stack.push((child, below, all)),
            |payload, chunk| ready.push((Layout::<D, C>::entry_rect(chunk, form.point), payload)),
        );
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
            let next = self.stack.pop()?;
            if let Err(error) = self.expand(next) {
                self.stack.clear();
                return Some(Err(error));
            }
        }
    }
}
