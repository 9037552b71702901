//! Bulk load by recursive slab partitioning (STR with OMT-style slab sizes, as rstar
//! does): along dimension 0 the entries are cut into slabs whose sizes are multiples
//! of the node capacity, each slab along dimension 1, …, and along the last dimension
//! cut into runs of `max`. Every node is therefore full except the last
//! two of each level, which are balanced so both keep at least `min` entries. The
//! levels above are packed the same way from the node boxes. Slabs are found with
//! `select_nth_unstable` (no full sorts above the last dimension) on `u64` keys that
//! carry the entry's index (`group.rs`), processed in parallel with rayon; pages are
//! written by the one write transaction.
//!
//! Hilbert packing ([`RTree::bulk_load_points_hilbert`](crate::rtree::RTree::bulk_load_points_hilbert), the order of the streaming
//! [`RTree::bulk_builder`](crate::rtree::RTree::bulk_builder)) answers 5-D windows of 0.001 % at 0.74× the speed of
//! STR/OMT's (T4, 1 M uniform points; the table is in `reports/T4.md`): a Hilbert leaf
//! spans long thin stretches of the curve where STR slabs give near-cubic leaves. So
//! `bulk_load` stays STR/OMT, and Hilbert order is used only where it is needed: the
//! bounded-memory streaming build, whose input cannot be partitioned in memory.

use super::Core;
use super::coord::{Coord, stored_point, stored_points, stored_rect};
use super::geom::Rect;
use super::group::{arranged, cut_dims, index_mask, regroup};
use super::hilbert::HilbertKey;
use super::node::{Entry, GROUP, Layout, bbox};
use super::packer::LevelPacker;
use super::stream::sort_chunk;
use crate::error::Result;
use quiredb_engine::{PageId, WriteTxn};

impl<const D: usize, C: Coord> Core<D, C> {
    /// Replaces the contents of the tree with `items`, packed into full nodes. Every
    /// box is validated before the tree is touched.
    pub fn bulk_load(&self, txn: &WriteTxn<'_>, name: &str, items: &[(Rect<D>, u64)]) -> Result<()> {
        let entries = items
            .iter()
            .map(|(rect, id)| Ok(Entry { rect: self.stored(name, rect)?, id: *id }))
            .collect::<Result<Vec<_>>>()?;
        self.bulk_load_entries(txn, entries)
    }

    /// Like [`RTree::bulk_load`](crate::rtree::RTree::bulk_load) for points given as flat coordinates (`D` per id).
    /// A point tree packs its leaves straight from `coords` (see `point_leaves`).
    pub fn bulk_load_points(&self, txn: &WriteTxn<'_>, ids: &[u64], coords: &[f64]) -> Result<()> {
        if !self.points {
            return self.bulk_load_entries(txn, self.point_entries(ids, coords)?);
        }
        let n = ids.len().min(coords.len() / D);
        let points = stored_points::<C, D>(&coords[..n * D])?;
        let mut head = self.head(txn)?;
        self.free_subtree(txn, PageId(head.root), head.root_level())?;
        let (parents, level, nodes) = self.point_leaves(txn, &ids[..n], &points)?;
        self.pack_levels(txn, &mut head, parents, level, nodes, n as u64)
    }

    /// Writes the leaves of a point tree holding `points` (validated and rounded, `D`
    /// per id), and above more than one branch's worth also the branches; returns the
    /// parent entries of the top level written, its level and the pages written.
    ///
    /// The STR cuts select `u64` keys that carry the point's index (`group.rs`), with
    /// the coordinates read from `points`: no entry is built or moved until its leaf is
    /// written (perf, 2.5 M 2-D points: moving 40-byte entries in the selections and
    /// their allocation took over half of the bulk load). The points are first cut
    /// into blocks of one full branch (`max` full leaves), then each block into leaves,
    /// so that every branch covers exactly its block: packing the leaf boxes again
    /// (their slabs do not line up with the branches' slabs) gave overlapping branches.
    fn point_leaves(&self, txn: &WriteTxn<'_>, ids: &[u64], points: &[f64]) -> Result<(Vec<Entry<D>>, u16, u64)> {
        let (n, leaf_max) = (ids.len(), self.form(0).max);
        let mask = index_mask(n);
        let mut order: Vec<u64> = (0..n as u64).collect();
        let coordinate = |i: usize, d: usize| points[i * D + d];
        let block = self.max * leaf_max;
        if n <= block {
            cut_dims(&mut order, &coordinate, mask, 0, leaf_max, D);
            let leaves = self.write_leaves(txn, ids, points, &mut order, mask)?;
            let nodes = leaves.len() as u64;
            return Ok((leaves, 0, nodes));
        }
        cut_dims(&mut order, &coordinate, mask, 0, block, D);
        let blocks = node_ranges(n, block, self.fill(1) * leaf_max);
        if let [.., (a, b), (_, c)] = blocks[..]
            && b - a != block
        {
            // The last two blocks were balanced: cut them apart again (on the keys of
            // the dimension that separated them).
            order[a..c].select_nth_unstable(b - a);
        }
        let (mut branches, mut nodes) = (Vec::with_capacity(blocks.len()), 0);
        for (start, end) in blocks {
            let keys = &mut order[start..end];
            cut_dims(keys, &coordinate, mask, 0, leaf_max, D);
            let mut leaves = self.write_leaves(txn, ids, points, keys, mask)?;
            regroup(&mut leaves);
            branches.push(self.write_node(txn, 1, &leaves)?);
            nodes += leaves.len() as u64 + 1;
        }
        Ok((branches, 1, nodes))
    }

    /// Writes the leaves of the arranged keys `order` (runs of the leaf capacity, the
    /// last two balanced); returns their parent entries.
    fn write_leaves(
        &self,
        txn: &WriteTxn<'_>,
        ids: &[u64],
        points: &[f64],
        order: &mut [u64],
        mask: u64,
    ) -> Result<Vec<Entry<D>>> {
        let form = self.form(0);
        let coordinate = |i: usize, d: usize| points[i * D + d];
        let ranges = node_ranges(order.len(), form.max, self.fill(0));
        let mut parents = Vec::with_capacity(ranges.len());
        let mut node = Vec::with_capacity(form.max);
        for (start, end) in ranges {
            // The node's runs of 16 (its group boxes) made compact on the keys too.
            cut_dims(&mut order[start..end], &coordinate, mask, 0, GROUP, D);
            node.clear();
            node.extend(order[start..end].iter().map(|key| {
                let i = (key & mask) as usize;
                Entry { rect: Rect::point(std::array::from_fn(|d| points[i * D + d])), id: ids[i] }
            }));
            parents.push(self.write_node(txn, 0, &node)?);
        }
        Ok(parents)
    }

    /// Writes `entries` (grouped) as one node of `level`; returns the parent entry.
    fn write_node(&self, txn: &WriteTxn<'_>, level: u16, entries: &[Entry<D>]) -> Result<Entry<D>> {
        let mut page = txn.alloc_page(super::NODE_PAGE)?;
        Layout::<D, C>::encode_entries(level, entries, &mut page, self.form(level));
        Ok(Entry { rect: bbox(entries), id: page.id().0 })
    }

    /// Like [`RTree::bulk_load_points`](crate::rtree::RTree::bulk_load_points), packing in Hilbert order (the order of the
    /// streaming [`RTree::bulk_builder`](crate::rtree::RTree::bulk_builder), sorted in memory).
    pub fn bulk_load_points_hilbert(&self, txn: &WriteTxn<'_>, ids: &[u64], coords: &[f64]) -> Result<()> {
        self.bulk_load_hilbert_entries(txn, self.point_entries(ids, coords)?)
    }

    /// Validated leaf entries of points given as flat coordinates (`D` per id).
    fn point_entries(&self, ids: &[u64], coords: &[f64]) -> Result<Vec<Entry<D>>> {
        ids.iter()
            .zip(coords.chunks_exact(D))
            .map(|(id, c)| {
                let point: [f64; D] = c.try_into().expect("chunks_exact gives D coordinates");
                // A point is always one for a point tree: skip `stored`'s min == max test.
                let rect =
                    if self.points { stored_point::<C, D>(&point)? } else { stored_rect::<C, D>(&Rect::point(point))? };
                Ok(Entry { rect, id: *id })
            })
            .collect()
    }

    fn bulk_load_hilbert_entries(&self, txn: &WriteTxn<'_>, entries: Vec<Entry<D>>) -> Result<()> {
        let mut bounds = Rect::empty();
        for e in &entries {
            let centre = HilbertKey::centre(&e.rect);
            bounds.expand(&Rect::new(centre, centre));
        }
        let len = entries.len() as u64;
        self.clear_for_bulk(txn)?;
        let mut packer = LevelPacker::new(self, txn, 0);
        for (_, entry) in sort_chunk(&HilbertKey::new(&bounds), entries) {
            packer.push(entry)?;
        }
        let (leaves, nodes) = packer.finish()?;
        self.finish_levels(txn, leaves, nodes, len)?;
        Ok(())
    }

    fn bulk_load_entries(&self, txn: &WriteTxn<'_>, entries: Vec<Entry<D>>) -> Result<()> {
        let mut head = self.head(txn)?;
        self.free_subtree(txn, PageId(head.root), head.root_level())?;
        let len = entries.len() as u64;
        let (mut level, mut nodes) = (0u16, 0u64);
        let mut entries = self.write_level(txn, level, entries, &mut nodes)?;
        while entries.len() > 1 {
            level += 1;
            entries = self.write_level(txn, level, entries, &mut nodes)?;
        }
        (head.root, head.height, head.len, head.nodes) = (entries[0].id, u32::from(level) + 1, len, nodes);
        self.store_head(txn, &head)
    }

    /// Packs the levels above `level` from its node entries `parents` (`nodes` pages
    /// written so far) and points the head at the root.
    fn pack_levels(
        &self,
        txn: &WriteTxn<'_>,
        head: &mut super::node::Head,
        mut parents: Vec<Entry<D>>,
        mut level: u16,
        mut nodes: u64,
        len: u64,
    ) -> Result<()> {
        while parents.len() > 1 {
            level += 1;
            parents = self.write_level(txn, level, parents, &mut nodes)?;
        }
        (head.root, head.height, head.len, head.nodes) = (parents[0].id, u32::from(level) + 1, len, nodes);
        self.store_head(txn, head)
    }

    /// Packs `entries` into the nodes of one level (at least one node, maybe empty);
    /// returns their parent entries and counts the pages in `nodes`.
    fn write_level(
        &self,
        txn: &WriteTxn<'_>,
        level: u16,
        entries: Vec<Entry<D>>,
        nodes: &mut u64,
    ) -> Result<Vec<Entry<D>>> {
        let form = self.form(level);
        let mut entries = arranged(&entries, form.max);
        let ranges = node_ranges(entries.len(), form.max, self.fill(level));
        let mut parents = Vec::with_capacity(ranges.len());
        for (start, end) in ranges {
            // Order the node's entries so its group boxes (runs of 16) are compact.
            regroup(&mut entries[start..end]);
            parents.push(self.write_node(txn, level, &entries[start..end])?);
            *nodes += 1;
        }
        Ok(parents)
    }
}

/// The `(start, end)` of each node when `n` arranged entries are packed into nodes
/// of `max`: all full but the last two, balanced so both keep at least `min`.
fn node_ranges(n: usize, max: usize, min: usize) -> Vec<(usize, usize)> {
    if n <= max {
        return vec![(0, n)];
    }
    let mut groups: Vec<(usize, usize)> = (0..n).step_by(max).map(|s| (s, (s + max).min(n))).collect();
    let last = groups.len() - 1;
    let short = groups[last].1 - groups[last].0;
    if short < min {
        let total = max + short;
        let cut = groups[last - 1].0 + (total - total / 2);
        groups[last - 1].1 = cut;
        groups[last].0 = cut;
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_fills_nodes_and_balances_the_tail() {
        let groups = node_ranges(1001, 100, 40);
        assert_eq!(groups.len(), 11);
        assert!(groups[..9].iter().all(|(s, e)| e - s == 100));
        assert!(groups[9..].iter().all(|(s, e)| e - s >= 40));
        assert_eq!(groups.last().map(|g| g.1), Some(1001));
    }
}
