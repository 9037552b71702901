//! k nearest neighbours, best first (Hjaltason & Samet): a priority queue of nodes and
//! entries ordered by (squared minimum distance, nodes before entries, payload), so
//! entries come out by increasing Euclidean distance with ties broken by payload.
//! [`Nearest`] is the incremental iterator; `nearest_k` is the bounded variant that
//! keeps only the k best candidates and prunes nodes farther than the k-th (it gives
//! the same k entries: a node at exactly the k-th distance is still opened).
//!
//! `nearest_k` computes the distances of a group's 16 entries and the mask of those
//! within the bound without branches, then visits the set bits, and picks the next
//! group by a branch-free minimum of keys that carry the group's index: whether an
//! entry is near enough is unpredictable (callgrind branch simulation, 200 k points
//! bulk loaded, k = 10: 2-D 174 → 117 mispredicts a query, 5-D 1,094 → 471; 2-D
//! 11.4 k → 13.1 k instructions, 5-D 71.7 k → 77.8 k).
//!
//! A group farther than the nearest queued item is not opened with its node but
//! queued itself (the page is read again when it comes up, and it is skipped if the
//! k-th distance has shrunk below it by then): best-first over groups, not only over
//! nodes. Callgrind with cache simulation, 1 M uniform 5-D points bulk loaded,
//! k = 10: 95.0 k → 95.4 k instructions a query, 1,093 → 872 D1 misses.

use super::Core;
use super::coord::Coord;
use super::dist::{chunk_dist2, chunk_max_dist2, entry_dist2, run_dists};
use super::geom::validate_point;
use super::node::{GROUP, GroupCoord, Layout, corrupted};
use super::scratch;
use crate::error::Result;
use quiredb_engine::{PageId, PageRead, PageRef, ResultSet};
use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

thread_local! {
    /// `nearest_k`'s buffers: the k best so far, the queued nodes, a node's groups by
    /// distance, and the answer in order.
    static BEST: RefCell<BinaryHeap<Candidate>> = const { RefCell::new(BinaryHeap::new()) };
    static NODES: RefCell<BinaryHeap<Queued>> = const { RefCell::new(BinaryHeap::new()) };
    static GROUPS: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
    static SORTED: RefCell<Vec<Candidate>> = const { RefCell::new(Vec::new()) };
}

/// A queued node (`level > 0` child or root) or leaf entry.
#[derive(Clone, Copy, Debug)]
struct Item {
    dist2: f64,
    /// 0 = node, 1 = entry: nodes first at equal distance.
    kind: u8,
    id: u64,
    level: u16,
}

impl Item {
    #[inline(always)]
    fn key(&self) -> (u64, u8, u64) {
        (order_bits(self.dist2), self.kind, self.id)
    }
}

/// A squared distance as an integer of the same order: every distance here is a sum
/// of squares starting from +0.0 (never −0.0 or NaN, at most +∞), and the bits of
/// non-negative floats order like the floats.
#[inline(always)]
fn order_bits(dist2: f64) -> u64 {
    debug_assert!(dist2.is_sign_positive() && !dist2.is_nan(), "distances are non-negative");
    dist2.to_bits()
}

impl PartialEq for Item {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Item {}
impl PartialOrd for Item {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Item {
    /// Reversed: `BinaryHeap` pops the nearest first.
    #[inline(always)]
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

/// A node, or one group of a node, queued by `nearest_k`, ordered by distance only: the
/// order among items at equal distance does not change the answer (each is opened
/// unless strictly farther than the k-th best, and the k best are ranked by distance
/// and payload).
#[derive(Clone, Copy, Debug)]
struct Queued {
    /// [`order_bits`] of the squared distance.
    key: u64,
    id: u64,
    level: u16,
    /// [`WHOLE`], or the one group of the node to open (deferred).
    group: u16,
}

/// [`Queued::group`] of a whole node.
const WHOLE: u16 = u16::MAX;

/// Pages `nearest_k` keeps pinned.
const PINNED: usize = 8;

/// The pages of the last [`PINNED`] nodes `nearest_k` opened, kept pinned so that a
/// deferred group's page is not looked up in the pool again (~160 instructions).
struct Pinned<'t> {
    ids: [u64; PINNED],
    pages: [Option<PageRef<'t>>; PINNED],
    next: usize,
}

impl<'t> Pinned<'t> {
    fn new() -> Self {
        Pinned { ids: [0; PINNED], pages: std::array::from_fn(|_| None), next: 0 }
    }

    /// The slot holding page `id`.
    #[inline(always)]
    fn slot(&self, id: u64) -> Option<usize> {
        (0..PINNED).find(|&s| self.ids[s] == id && self.pages[s].is_some())
    }

    /// Keeps `page` (page `id`) in the oldest slot; returns the slot.
    fn put(&mut self, id: u64, page: PageRef<'t>) -> usize {
        let slot = self.next;
        self.next = (slot + 1) % PINNED;
        (self.ids[slot], self.pages[slot]) = (id, Some(page));
        slot
    }

    /// The payload in `slot` (filled by [`Pinned::put`]).
    #[inline(always)]
    fn bytes(&self, slot: usize) -> &[u8] {
        self.pages[slot].as_deref().unwrap_or(&[])
    }
}

/// The encoded entries of one group of a node at `level`.
struct Group<'p> {
    run: &'p [u8],
    level: u16,
    point: bool,
}

/// `nearest_k`'s k best so far, queue, and pruning limit.
type State<'a> = (&'a mut BinaryHeap<Candidate>, &'a mut BinaryHeap<Queued>, &'a mut f64);

/// Opens one group for `nearest_k`: queues the children within the k-th distance
/// (a branch; with `subtree_has_k` each child's farthest corner also bounds the k-th
/// distance), or offers the entries to the k best (a leaf).
#[inline(always)]
fn open_group<C: Coord, const D: usize>(
    group: Group<'_>,
    point: &[f64; D],
    k: usize,
    (best, nodes, limit): State<'_>,
    subtree_has_k: bool,
) {
    let stride = Layout::<D, C>::stride(group.point);
    // The bound is re-read only when a candidate is taken.
    let mut bound = kth(best, k, *limit);
    let (dists, mask) = run_dists::<C, D>(group.run, group.point, point, bound);
    let entry = |i: usize| &group.run[i * stride..(i + 1) * stride];
    if group.level > 0 {
        for_bits(mask, |i| {
            let chunk = entry(i);
            if dists[i] <= kth(best, k, *limit) {
                let (id, level) = (Layout::<D, C>::id(chunk), group.level - 1);
                nodes.push(Queued { key: order_bits(dists[i]), id, level, group: WHOLE });
                if subtree_has_k {
                    // The child holds ≥ k entries within its farthest corner.
                    *limit = limit.min(chunk_max_dist2::<C, D>(chunk, point));
                }
            }
        });
        return;
    }
    // A plain loop: as a closure given to `for_bits` this was not inlined.
    let mut mask = mask;
    while mask != 0 {
        let i = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        if dists[i] <= bound {
            offer(best, k, Candidate(dists[i], Layout::<D, C>::entry_id(entry(i), group.point)));
            bound = kth(best, k, *limit);
        }
    }
}

impl PartialEq for Queued {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Queued {
    /// Reversed: `BinaryHeap` pops the nearest first.
    #[inline(always)]
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// Most groups chosen by repeated minimum search; a node with more is sorted.
const SELECT_MAX: usize = 32;

/// The nearest group key not taken yet (taken ones are `u64::MAX`; a real key is a
/// finite or infinite distance, below that), marking it taken; `cursor` walks a
/// sorted `keys` instead when there are more than [`SELECT_MAX`]. Few groups of a
/// node are usually opened, so a minimum search each beats sorting them all.
#[inline(always)]
fn next_group(keys: &mut [u64], cursor: &mut usize) -> Option<u64> {
    if keys.len() > SELECT_MAX {
        let key = keys.get(*cursor).copied();
        *cursor += 1;
        return key;
    }
    // A group's key carries its index (`group_key`): a branch-free minimum suffices.
    let min = keys.iter().fold(u64::MAX, |min, &key| min.min(key));
    if min == u64::MAX {
        return None;
    }
    keys[group_of(min).1] = u64::MAX;
    Some(min)
}

/// A k-best candidate; the heap's top is the worst.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Candidate(f64, u64);
impl Eq for Candidate {}
impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Candidate {
    #[inline(always)]
    fn cmp(&self, other: &Self) -> Ordering {
        (order_bits(self.0), self.1).cmp(&(order_bits(other.0), other.1))
    }
}

/// Calls `f(i)` for each bit `i` set in `mask`, lowest first.
#[inline(always)]
fn for_bits(mut mask: u32, mut f: impl FnMut(usize)) {
    while mask != 0 {
        f(mask.trailing_zeros() as usize);
        mask &= mask - 1;
    }
}

/// Offers `candidate` to the k best.
#[inline(always)]
fn offer(best: &mut BinaryHeap<Candidate>, k: usize, candidate: Candidate) {
    if best.len() < k {
        best.push(candidate);
    } else if let Some(mut worst) = best.peek_mut()
        && candidate < *worst
    {
        // Replaced in place: one sift-down instead of a pop and a push.
        *worst = candidate;
    }
}

/// Bits of a group index in a [`group_key`] (a node holds at most `u16::MAX` entries,
/// so at most 4096 groups of 16).
const GROUP_BITS: u32 = 12;

/// A group's distance and index as one integer that sorts by distance: the distance
/// with its lowest mantissa bits replaced by the index. The distance read back is a
/// little *lower* than the true one, so pruning with it stays exact.
#[inline(always)]
fn group_key(dist2: f64, g: usize) -> u64 {
    (order_bits(dist2) & !((1 << GROUP_BITS) - 1)) | g as u64
}

/// `(lower bound of the distance, group index)` of a [`group_key`].
#[inline(always)]
fn group_of(key: u64) -> (f64, usize) {
    let mask = (1u64 << GROUP_BITS) - 1;
    (f64::from_bits(key & !mask), (key & mask) as usize)
}

/// The current pruning bound: the k-th best distance found, or `limit` if tighter.
#[inline(always)]
fn kth(best: &BinaryHeap<Candidate>, k: usize, limit: f64) -> f64 {
    if best.len() == k { best.peek().map_or(limit, |c| c.0.min(limit)) } else { limit }
}

fn max_dist2(max_distance: Option<f64>) -> f64 {
    max_distance.map_or(f64::INFINITY, |m| if m.is_nan() { -1.0 } else { m * m.abs() })
}

impl<const D: usize, C: Coord> Core<D, C> {
    /// Entries by increasing distance from `point` (ties by payload), optionally only
    /// those within `max_distance`; yields `(distance, payload)`.
    pub fn nearest<'t, T: PageRead>(
        &self,
        txn: &'t T,
        point: [f64; D],
        max_distance: Option<f64>,
    ) -> Result<Nearest<'t, T, D, C>> {
        validate_point(&point)?;
        let (root, level) = self.root(txn)?;
        let mut heap = BinaryHeap::new();
        heap.push(Item { dist2: 0.0, kind: 0, id: root, level });
        Ok(Nearest { tree: *self, txn, point, max_dist2: max_dist2(max_distance), heap })
    }

    /// The `k` entries nearest to `point` (within `max_distance` if given) into `out`,
    /// nearest first, ties by payload; score = Euclidean distance. Exactly
    /// `min(k, entries in range)` rows.
    pub fn nearest_k(
        &self,
        txn: &impl PageRead,
        point: [f64; D],
        k: usize,
        max_distance: Option<f64>,
        out: &mut ResultSet,
    ) -> Result<()> {
        self.visit_nearest_k(txn, point, k, max_distance, |distance, id| out.push(id, distance))
    }

    /// Like [`RTree::nearest_k`](crate::rtree::RTree::nearest_k), calling `visit(distance, payload)` for each of the
    /// `k` nearest entries in order instead of filling a `ResultSet` (callgrind, 2-D
    /// k = 10: the result set's pushes cost ~500 of ~13 k instructions a query).
    pub fn visit_nearest_k(
        &self,
        txn: &impl PageRead,
        point: [f64; D],
        k: usize,
        max_distance: Option<f64>,
        mut visit: impl FnMut(f64, u64),
    ) -> Result<()> {
        validate_point(&point)?;
        if k == 0 {
            return Ok(());
        }
        let mut limit = max_dist2(max_distance);
        // Every non-root node has at least `min` leaf entries below it: when that is
        // at least k, the k-th nearest lies no farther than any child's farthest corner.
        let subtree_has_k = self.min.min(self.leaf_min) >= k;
        let (root, level) = self.root(txn)?;
        let (mut best, mut nodes, mut groups) = (scratch::take(&BEST), scratch::take(&NODES), scratch::take(&GROUPS));
        nodes.push(Queued { key: order_bits(0.0), id: root, level, group: WHOLE });
        let mut pinned = Pinned::new();
        while let Some(node) = nodes.pop() {
            if f64::from_bits(node.key) > kth(&best, k, limit) {
                break;
            }
            if let Some(next) = nodes.peek() {
                // Probably the node opened after this one.
                self.prefetch_node(txn, next.id, next.level);
            }
            let slot = match pinned.slot(node.id) {
                Some(slot) => slot,
                None => pinned.put(node.id, self.node_page(txn, node.id, node.level)?),
            };
            let form = self.form(node.level);
            let (level, bytes) = Layout::<D, C>::entries(pinned.bytes(slot), PageId(node.id), form)?;
            if level != node.level {
                return Err(corrupted(PageId(node.id), format!("node has level {level}, expected {}", node.level)));
            }
            let span = GROUP * Layout::<D, C>::stride(form.point);
            let run = |g: usize| bytes.get(g * span..).map_or(&[][..], |r| &r[..span.min(r.len())]);
            if node.group != WHOLE {
                // A group deferred when its node was opened.
                let group = Group { run: run(usize::from(node.group)), level, point: form.point };
                open_group::<C, D>(group, &point, k, (&mut best, &mut nodes, &mut limit), subtree_has_k);
                continue;
            }
            // Groups nearest first, so the k-th distance shrinks early and far groups
            // are skipped.
            groups.clear();
            for (g, (group, _)) in Layout::<D, C>::runs(pinned.bytes(slot), bytes, form).enumerate() {
                groups.push(group_key(chunk_dist2::<GroupCoord, D>(group, &point), g));
            }
            if groups.len() > SELECT_MAX {
                groups.sort_unstable();
            }
            let mut cursor = 0;
            while let Some(key) = next_group(&mut groups, &mut cursor) {
                let (group_dist2, g) = group_of(key);
                if group_dist2 > kth(&best, k, limit) {
                    break;
                }
                if nodes.peek().is_some_and(|next| next.key < order_bits(group_dist2)) {
                    // A queued node or group is nearer: this group waits its turn (it
                    // is opened only if still within the k-th distance then).
                    let (id, level, group) = (node.id, node.level, g as u16);
                    nodes.push(Queued { key: order_bits(group_dist2), id, level, group });
                    continue;
                }
                let group = Group { run: run(g), level, point: form.point };
                open_group::<C, D>(group, &point, k, (&mut best, &mut nodes, &mut limit), subtree_has_k);
            }
        }
        let mut sorted = scratch::take(&SORTED);
        sorted.extend(best.drain());
        sorted.sort_unstable();
        for &Candidate(dist2, id) in sorted.iter() {
            visit(dist2.sqrt(), id);
        }
        Ok(())
    }
}

/// Incremental nearest-neighbour iterator; yields `(distance, payload)`, or one error
/// and then ends.
pub struct Nearest<'t, T: PageRead, const D: usize, C: Coord> {
    tree: Core<D, C>,
    txn: &'t T,
    point: [f64; D],
    max_dist2: f64,
    heap: BinaryHeap<Item>,
}

impl<T: PageRead, const D: usize, C: Coord> Nearest<'_, T, D, C> {
    fn expand(&mut self, id: u64, expected: u16) -> Result<()> {
        let page = self.tree.node_page(self.txn, id, expected)?;
        let form = self.tree.form(expected);
        let (level, bytes) = Layout::<D, C>::entries(&page, PageId(id), form)?;
        for (group, run) in Layout::<D, C>::runs(&page, bytes, form) {
            if chunk_dist2::<GroupCoord, D>(group, &self.point) > self.max_dist2 {
                continue;
            }
            for chunk in run.chunks_exact(Layout::<D, C>::stride(form.point)) {
                let dist2 = entry_dist2::<C, D>(chunk, &self.point, form.point);
                if dist2 <= self.max_dist2 {
                    let (kind, id) = (u8::from(level == 0), Layout::<D, C>::entry_id(chunk, form.point));
                    self.heap.push(Item { dist2, kind, id, level: level.saturating_sub(1) });
                }
            }
        }
        Ok(())
    }
}

impl<T: PageRead, const D: usize, C: Coord> Iterator for Nearest<'_, T, D, C> {
    type Item = Result<(f64, u64)>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let item = self.heap.pop()?;
            if item.kind == 1 {
                return Some(Ok((item.dist2.sqrt(), item.id)));
            }
            if let Err(error) = self.expand(item.id, item.level) {
                self.heap.clear();
                return Some(Err(error));
            }
        }
    }
}
