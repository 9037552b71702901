//! R* insertion on pages: descend with ChooseSubtree (overlap-minimising at the level
//! above the leaves, least area enlargement above), add the entry, then walk back up:
//! an overflowing node first sheds 30 % of its entries for forced reinsertion (once
//! per level per inserted entry, never at the root), else it is split (`split.rs`).
//! Nodes are decoded along the path. An entry that fits is written in place into its
//! node's page and the ancestors' boxes (and their group boxes) are widened in place
//! until one already contains it; an overflowing node is changed in memory and
//! written back, the walk stopping as soon as a parent's box does not change. Nodes
//! rewritten by a split or a forced reinsert are ordered like the bulk load's, so
//! their groups of 16 entries are compact.

use super::RTree;
use super::bulk::partition;
use super::coord::Coord;
use super::geom::Rect;
use super::node::{Entry, GROUP, Head, Layout, Node, corrupted};
use super::split::{by_f64, rstar_split};
use crate::error::Result;
use quiredb_engine::{PageId, WriteTxn};

/// Candidates (least area enlargement first) whose overlap enlargement is computed.
const OVERLAP_CANDIDATES: usize = 32;

/// A node reached by an in-place append is rewritten in the bulk load's order when
/// its entry count becomes a multiple of this. Callgrind, 200k 2-D points inserted
/// one by one into a point tree, then 5000 windows of 0.001 % and 5000 kNN (k=10):
/// never 19.8 M / 84.7 M query instructions, 8.95 G for the inserts; every 32
/// entries 16.7 M / 74.2 M, 10.6 G; every 16 entries 15.6 M / 69.5 M, 12.3 G.
const REORDER_EVERY: usize = 32;

/// Entries waiting for (re)insertion, each with the level of the node it belongs in.
pub(crate) type Pending<const D: usize> = Vec<(Entry<D>, u16)>;

impl<const D: usize, C: Coord> RTree<D, C> {
    /// Inserts `rect` with `payload`. A box with a NaN or infinite coordinate (or
    /// `min > max`) is refused with `Error::InvalidBox`, a box that is not a point in
    /// a point tree with `Error::NotAPoint`, and the tree stays unchanged.
    pub fn insert(&self, txn: &WriteTxn<'_>, rect: &Rect<D>, payload: u64) -> Result<()> {
        let rect = self.stored(rect)?;
        let mut head = self.head(txn)?;
        self.insert_pending(txn, &mut head, vec![(Entry { rect, id: payload }, 0)])?;
        head.len += 1;
        self.store_head(txn, &head)
    }

    /// Inserts a point.
    pub fn insert_point(&self, txn: &WriteTxn<'_>, point: [f64; D], payload: u64) -> Result<()> {
        self.insert(txn, &Rect::point(point), payload)
    }

    /// Inserts every pending entry at its level (forced reinsertions join the list).
    pub(crate) fn insert_pending(&self, txn: &WriteTxn<'_>, head: &mut Head, mut pending: Pending<D>) -> Result<()> {
        let mut reinserted = 0u64;
        while let Some((entry, level)) = pending.pop() {
            self.insert_one(txn, head, entry, level, &mut reinserted, &mut pending)?;
        }
        Ok(())
    }

    fn insert_one(
        &self,
        txn: &WriteTxn<'_>,
        head: &mut Head,
        entry: Entry<D>,
        level: u16,
        reinserted: &mut u64,
        pending: &mut Pending<D>,
    ) -> Result<()> {
        let mut path = self.descend(txn, head, &entry.rect, level)?;
        let (mut id, mut node, _) = path.pop().expect("descend returns at least the root");
        if node.entries.len() < self.form(level).max {
            if (node.entries.len() + 1).is_multiple_of(REORDER_EVERY) {
                // Appended entries land in the node's last groups in arrival order, so
                // those groups' boxes grow towards the node's: reorder every so often.
                node.entries.push(entry);
                partition(&mut node.entries, 0, GROUP);
                self.store_node(txn, id, &node)?;
                return self.widen_ancestors(txn, entry.rect, path);
            }
            return self.append_in_place(txn, (id, level), node.entries.len(), &entry, path);
        }
        node.entries.push(entry);
        loop {
            let sibling = self.treat_overflow(txn, head, &mut node, path.is_empty(), reinserted, pending)?;
            self.store_node(txn, id, &node)?;
            let Some((parent_id, mut parent, index)) = path.pop() else {
                if let Some(sibling) = sibling {
                    self.grow_root(txn, head, id, &node, sibling)?;
                }
                return Ok(());
            };
            let rect = node.bbox();
            if parent.entries[index].rect == rect && sibling.is_none() {
                return Ok(());
            }
            parent.entries[index].rect = rect;
            parent.entries.extend(sibling);
            (id, node) = (parent_id, parent);
        }
    }

    /// The common case of an insertion: `entry` fits in `node` (id, level; holding
    /// `count` entries), so it is written in place, and each ancestor's box on `path`
    /// is widened in place until one already contains it — no node is re-encoded.
    fn append_in_place(
        &self,
        txn: &WriteTxn<'_>,
        node: (PageId, u16),
        count: usize,
        entry: &Entry<D>,
        path: Vec<(PageId, Node<D>, usize)>,
    ) -> Result<()> {
        let (id, level) = node;
        Layout::<D, C>::put_entry(&mut txn.page_mut(id)?, count, entry, true, self.form(level));
        self.widen_ancestors(txn, entry.rect, path)
    }

    /// Widens each ancestor's box on `path` in place to hold `rect`, up to the first
    /// one that already contains it.
    fn widen_ancestors(
        &self,
        txn: &WriteTxn<'_>,
        mut rect: Rect<D>,
        mut path: Vec<(PageId, Node<D>, usize)>,
    ) -> Result<()> {
        while let Some((parent_id, parent, index)) = path.pop() {
            let child = parent.entries[index];
            let grown = child.rect.union(&rect);
            if grown == child.rect {
                break;
            }
            let widened = Entry { rect: grown, id: child.id };
            Layout::<D, C>::put_entry(&mut txn.page_mut(parent_id)?, index, &widened, false, self.form(parent.level));
            rect = grown;
        }
        Ok(())
    }

    /// The nodes from the root down to the node of `level` chosen for `rect`, each
    /// with the index of the child taken.
    fn descend(
        &self,
        txn: &WriteTxn<'_>,
        head: &Head,
        rect: &Rect<D>,
        level: u16,
    ) -> Result<Vec<(PageId, Node<D>, usize)>> {
        let mut path = Vec::with_capacity(head.height as usize);
        let mut id = PageId(head.root);
        let mut expected = head.root_level();
        loop {
            let node = self.load(txn, id, expected)?;
            if node.level == level {
                path.push((id, node, usize::MAX));
                return Ok(path);
            }
            if node.level < level || node.entries.is_empty() {
                return Err(corrupted(id, format!("no way down to level {level} from level {}", node.level)));
            }
            let index = choose_subtree(&node, rect);
            let child = PageId(node.entries[index].id);
            path.push((id, node, index));
            id = child;
            expected -= 1;
        }
    }

    /// Handles an overflowing node: forced reinsert or split. Returns the new
    /// sibling's entry after a split.
    fn treat_overflow(
        &self,
        txn: &WriteTxn<'_>,
        head: &mut Head,
        node: &mut Node<D>,
        is_root: bool,
        reinserted: &mut u64,
        pending: &mut Pending<D>,
    ) -> Result<Option<Entry<D>>> {
        let (max, min) = (self.form(node.level).max, self.fill(node.level));
        if node.entries.len() <= max {
            return Ok(None);
        }
        let bit = 1u64 << node.level.min(63);
        if !is_root && *reinserted & bit == 0 {
            *reinserted |= bit;
            let count = (max * 3 / 10).max(1);
            for entry in take_farthest(node, count) {
                pending.push((entry, node.level));
            }
            // Rewritten anyway: order it so its groups of 16 are compact.
            partition(&mut node.entries, 0, GROUP);
            return Ok(None);
        }
        let (mut keep, mut moved) = rstar_split(std::mem::take(&mut node.entries), min);
        partition(&mut keep, 0, GROUP);
        partition(&mut moved, 0, GROUP);
        node.entries = keep;
        let sibling = Node { level: node.level, entries: moved };
        let sibling_id = self.create_node(txn, &sibling)?;
        head.nodes += 1;
        Ok(Some(Entry { rect: sibling.bbox(), id: sibling_id.0 }))
    }

    /// A new root above the split old root.
    fn grow_root(
        &self,
        txn: &WriteTxn<'_>,
        head: &mut Head,
        old: PageId,
        node: &Node<D>,
        sibling: Entry<D>,
    ) -> Result<()> {
        let root = Node { level: node.level + 1, entries: vec![Entry { rect: node.bbox(), id: old.0 }, sibling] };
        head.root = self.create_node(txn, &root)?.0;
        head.nodes += 1;
        head.height += 1;
        Ok(())
    }
}

/// Removes the `count` entries whose centres lie farthest from the node's centre;
/// returns them farthest first (so the closest is reinserted first from a stack).
fn take_farthest<const D: usize>(node: &mut Node<D>, count: usize) -> Vec<Entry<D>> {
    let bbox = node.bbox();
    let dist = |e: &Entry<D>| (0..D).map(|d| (e.rect.center(d) - bbox.center(d)).powi(2)).sum::<f64>();
    node.entries.sort_by(|a, b| by_f64(dist(a), dist(b)).then(a.id.cmp(&b.id)));
    let keep = node.entries.len() - count;
    let mut far = node.entries.split_off(keep);
    far.reverse();
    far
}

/// The R* ChooseSubtree: the index of the child of `node` to descend into for `rect`.
pub(crate) fn choose_subtree<const D: usize>(node: &Node<D>, rect: &Rect<D>) -> usize {
    let entries = &node.entries;
    let mut best_containing: Option<(f64, usize)> = None;
    for (i, e) in entries.iter().enumerate() {
        if e.rect.contains(rect) {
            let area = e.rect.area();
            if best_containing.is_none_or(|(a, _)| area < a) {
                best_containing = Some((area, i));
            }
        }
    }
    if let Some((_, i)) = best_containing {
        return i;
    }
    let mut scored: Vec<(f64, f64, usize)> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let area = e.rect.area();
            (e.rect.union(rect).area() - area, area, i)
        })
        .collect();
    let by_enlargement = |a: &(f64, f64, usize), b: &(f64, f64, usize)| by_f64(a.0, b.0).then(by_f64(a.1, b.1));
    if node.level != 1 || scored.len() <= 1 {
        return scored.iter().min_by(|a, b| by_enlargement(a, b)).expect("a branch has entries").2;
    }
    if scored.len() > OVERLAP_CANDIDATES {
        scored.select_nth_unstable_by(OVERLAP_CANDIDATES - 1, by_enlargement);
        scored.truncate(OVERLAP_CANDIDATES);
    }
    scored.sort_unstable_by(by_enlargement);
    let mut best = (f64::INFINITY, usize::MAX);
    for &(_, _, i) in &scored {
        let (own, grown) = (&entries[i].rect, entries[i].rect.union(rect));
        let mut delta = 0.0;
        for (j, other) in entries.iter().enumerate() {
            let gained = grown.overlap(&other.rect);
            if gained > 0.0 && j != i {
                delta += gained - own.overlap(&other.rect);
                if delta >= best.0 {
                    break;
                }
            }
        }
        // Candidates come in (enlargement, area) order, so a strict improvement in
        // overlap is the only way to win; zero added overlap cannot be beaten.
        if delta < best.0 {
            best = (delta, i);
            if delta == 0.0 {
                break;
            }
        }
    }
    best.1
}
