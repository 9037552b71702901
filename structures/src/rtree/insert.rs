//! R* insertion on pages: descend with ChooseSubtree (overlap-minimising at the level
//! above the leaves, least area enlargement above), add the entry, then walk back up:
//! an overflowing node first sheds 10 % of its entries for forced reinsertion (once
//! per level per inserted entry, never at the root), else it is split (`split.rs`).
//! The descent reads the branch pages without decoding them (`choose.rs`). An entry
//! that fits is written in place into its node's page and the ancestors' boxes (and
//! their group boxes) are widened in place until one already contains it; only an
//! overflowing node (and, going up, its parents) is decoded, changed in memory and
//! written back, the walk stopping as soon as a parent's box does not change. Nodes
//! rewritten by a split or a forced reinsert are ordered like the bulk load's, so
//! their groups of 16 entries are compact (`group.rs`).

use super::Core;
use super::choose::choose_subtree;
use super::coord::Coord;
use super::geom::Rect;
use super::group::regroup;
use super::node::{Entry, Head, Layout, Node, corrupted};
use super::split::{by_f64, rstar_split};
use crate::error::Result;
use quiredb_engine::{PageId, WriteTxn};

/// A node reached by an in-place append is rewritten in the bulk load's order when
/// its entry count becomes a multiple of this. Callgrind, 200k 2-D points inserted
/// one by one into a point tree, then 5000 windows of 0.001 % and 5000 kNN (k=10):
/// never 19.8 M / 84.7 M query instructions, 8.95 G for the inserts; every 32
/// entries 16.7 M / 74.2 M, 10.6 G; every 16 entries 15.6 M / 69.5 M, 12.3 G. Again
/// after the cheaper insert path (windows only, reinsert 10 %): never 17.8 M, every
/// 32 entries 14.7 M (2-D); 5-D 57.2 M / 52.9 M. Every 64 instead of 32 (insert /
/// 2000 windows of 0.01 % / 2000 kNN): 2-D 2.18 G -> 1.82 G, 8.15 M -> 8.50 M, 29.5 M
/// -> 30.4 M; 5-D 2.83 G -> 2.70 G, 55.8 M -> 58.2 M, 166.5 M -> 170.9 M: kept at 32.
const REORDER_EVERY: usize = 32;

/// Share (in %) of an overflowing node's entries that a forced reinsert moves. The
/// R* paper's 30 % was tuned for nodes of 50 entries; our leaves hold 150 (5-D) to
/// 340 (2-D) points. Callgrind, 200k points inserted one by one into a point tree,
/// then 5000 windows of 0.001 % (instructions, insert / windows): 2-D 30 % 4.65 G /
/// 14.6 M, 10 % 2.57 G / 14.7 M, none 1.69 G / 14.7 M; 5-D 30 % 4.74 G / 52.9 M,
/// 10 % 3.26 G / 52.9 M, none 2.42 G / 58.2 M.
const REINSERT_PERCENT: usize = 10;

/// Entries waiting for (re)insertion, each with the level of the node it belongs in.
pub(crate) type Pending<const D: usize> = Vec<(Entry<D>, u16)>;

/// One branch node on the way down: its page and level, the index of the child
/// taken and that child's entry as read.
struct Step<const D: usize> {
    id: PageId,
    level: u16,
    index: usize,
    child: Entry<D>,
}

impl<const D: usize, C: Coord> Core<D, C> {
    /// Inserts `rect` with `payload`. A box with a NaN or infinite coordinate (or
    /// `min > max`) is refused with `Error::InvalidBox`, a box that is not a point in
    /// a point tree with `Error::NotAPoint` (naming the tree `name`), and the tree stays
    /// unchanged.
    pub fn insert(&self, txn: &WriteTxn<'_>, name: &str, rect: &Rect<D>, payload: u64) -> Result<()> {
        let rect = self.stored(name, rect)?;
        // The head page stays pinned for writing: one page access instead of two.
        let mut head_page = txn.page_mut(self.head)?;
        let mut head = Head::parse(&head_page, head_page.kind(), self.head)?;
        let (mut reinserted, mut pending) = (0u64, Pending::new());
        self.insert_one(txn, &mut head, Entry { rect, id: payload }, 0, &mut reinserted, &mut pending)?;
        self.drain(txn, &mut head, &mut reinserted, pending)?;
        head.len += 1;
        head.encode(&mut head_page);
        Ok(())
    }

    /// Inserts a point.
    pub fn insert_point(&self, txn: &WriteTxn<'_>, name: &str, point: [f64; D], payload: u64) -> Result<()> {
        self.insert(txn, name, &Rect::point(point), payload)
    }

    /// Inserts every pending entry at its level (forced reinsertions join the list).
    pub(crate) fn insert_pending(&self, txn: &WriteTxn<'_>, head: &mut Head, pending: Pending<D>) -> Result<()> {
        self.drain(txn, head, &mut 0, pending)
    }

    fn drain(&self, txn: &WriteTxn<'_>, head: &mut Head, reinserted: &mut u64, mut pending: Pending<D>) -> Result<()> {
        while let Some((entry, level)) = pending.pop() {
            self.insert_one(txn, head, entry, level, reinserted, &mut pending)?;
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
        let (mut path, mut id) = self.descend(txn, head, &entry.rect, level)?;
        let form = self.form(level);
        let count = {
            let mut page = txn.page_mut(id)?;
            let (found, bytes) = Layout::<D, C>::entries(&page, id, form)?;
            if found != level {
                return Err(corrupted(id, format!("node has level {found}, expected {level}")));
            }
            let count = bytes.len() / Layout::<D, C>::stride(form.point);
            if count < form.max && !(count + 1).is_multiple_of(REORDER_EVERY) {
                // The common case: written in place, no node decoded or re-encoded.
                Layout::<D, C>::put_entry(&mut page, count, &entry, true, form);
                drop(page);
                return self.widen_ancestors(txn, entry.rect, path);
            }
            count
        };
        let mut node = self.load(txn, id, level)?;
        node.entries.push(entry);
        if count < form.max {
            // Appended entries land in the node's last groups in arrival order, so
            // those groups' boxes grow towards the node's: reorder every so often.
            regroup(&mut node.entries);
            self.store_node(txn, id, &node)?;
            return self.widen_ancestors(txn, entry.rect, path);
        }
        loop {
            let sibling = self.treat_overflow(txn, head, &mut node, path.is_empty(), reinserted, pending)?;
            self.store_node(txn, id, &node)?;
            let Some(step) = path.pop() else {
                if let Some(sibling) = sibling {
                    self.grow_root(txn, head, id, &node, sibling)?;
                }
                return Ok(());
            };
            let rect = node.bbox();
            if step.child.rect == rect && sibling.is_none() {
                return Ok(());
            }
            let mut parent = self.load(txn, step.id, step.level)?;
            let slot = parent.entries.get_mut(step.index).ok_or_else(|| corrupted(step.id, "child vanished".into()))?;
            slot.rect = rect;
            parent.entries.extend(sibling);
            (id, node) = (step.id, parent);
        }
    }

    /// Widens each ancestor's box on `path` in place to hold `rect`, up to the first
    /// one that already contains it.
    fn widen_ancestors(&self, txn: &WriteTxn<'_>, mut rect: Rect<D>, mut path: Vec<Step<D>>) -> Result<()> {
        while let Some(step) = path.pop() {
            let grown = step.child.rect.union(&rect);
            if grown == step.child.rect {
                break;
            }
            let widened = Entry { rect: grown, id: step.child.id };
            Layout::<D, C>::put_entry(&mut txn.page_mut(step.id)?, step.index, &widened, false, self.form(step.level));
            rect = grown;
        }
        Ok(())
    }

    /// The branch nodes from the root down to the node of `level` chosen for `rect`
    /// (read from their pages, not decoded), and that node's page.
    fn descend(&self, txn: &WriteTxn<'_>, head: &Head, rect: &Rect<D>, level: u16) -> Result<(Vec<Step<D>>, PageId)> {
        let mut path = Vec::with_capacity(head.height as usize);
        let mut id = PageId(head.root);
        let mut at = head.root_level();
        while at > level {
            let page = self.node_page(txn, id.0, at)?;
            let form = self.form(at);
            let (_, bytes) = Layout::<D, C>::entries(&page, id, form)?;
            let Some(index) = choose_subtree::<D, C>(&page, bytes, form, at, rect) else {
                return Err(corrupted(id, format!("a branch of level {at} without entries")));
            };
            let chunk = &bytes[index * Layout::<D, C>::ENTRY..];
            let child = Entry { rect: Layout::<D, C>::rect(chunk), id: Layout::<D, C>::id(chunk) };
            path.push(Step { id, level: at, index, child });
            id = PageId(child.id);
            at -= 1;
        }
        if at < level {
            return Err(corrupted(id, format!("no way down to level {level} from level {at}")));
        }
        Ok((path, id))
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
            let count = (max * REINSERT_PERCENT / 100).max(1);
            for entry in take_farthest(node, count) {
                pending.push((entry, node.level));
            }
            // Rewritten anyway: order it so its groups of 16 are compact.
            regroup(&mut node.entries);
            return Ok(None);
        }
        let (mut keep, mut moved) = rstar_split(std::mem::take(&mut node.entries), min);
        regroup(&mut keep);
        regroup(&mut moved);
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
/// Distances are computed once; only the `count` farthest are sorted.
fn take_farthest<const D: usize>(node: &mut Node<D>, count: usize) -> Vec<Entry<D>> {
    let bbox = node.bbox();
    let centre: [f64; D] = std::array::from_fn(|d| bbox.center(d));
    let dist = |e: &Entry<D>| (0..D).map(|d| (e.rect.center(d) - centre[d]).powi(2)).sum::<f64>();
    let mut order: Vec<(f64, u64, u32)> =
        node.entries.iter().enumerate().map(|(i, e)| (dist(e), e.id, i as u32)).collect();
    let by_distance = |a: &(f64, u64, u32), b: &(f64, u64, u32)| by_f64(a.0, b.0).then(a.1.cmp(&b.1));
    let keep = node.entries.len() - count;
    order.select_nth_unstable_by(keep, by_distance);
    order[keep..].sort_unstable_by(by_distance);
    let far: Vec<Entry<D>> = order[keep..].iter().rev().map(|k| node.entries[k.2 as usize]).collect();
    let mut taken = vec![false; node.entries.len()];
    for k in &order[keep..] {
        taken[k.2 as usize] = true;
    }
    let mut at = 0;
    node.entries.retain(|_| {
        at += 1;
        !taken[at - 1]
    });
    far
}
