//! Bulk load by recursive slab partitioning (STR with OMT-style slab sizes, as rstar
//! does): along dimension 0 the entries are cut into slabs whose sizes are multiples
//! of the node capacity, each slab along dimension 1, …, and along the last dimension
//! cut into runs of `max`. Every node is therefore full except the last
//! two of each level, which are balanced so both keep at least `min` entries. The
//! levels above are packed the same way from the node boxes. Slabs are found with
//! `select_nth_unstable` (no full sorts above the last dimension) and processed in
//! parallel with rayon; pages are written by the one write transaction.
//!
//! Hilbert packing ([`RTree::bulk_load_points_hilbert`]; the order of the streaming
//! [`RTree::bulk_builder`]) was measured against it with `quire-bench T4 --engines
//! quiredb,quiredb-hilbert,boost --n 1000000 --repeats 1` (1 M uniform points, 8 KiB
//! pages, 500 queries per kind, load average 1.9, 2026-11-29), Hilbert / STR-OMT:
//!
//! | set | bulk load | window 0.001 % | 0.01 % | 0.1 % | 1 % | kNN k=10 |
//! |-----|----------:|---------------:|-------:|------:|----:|---------:|
//! | 5-D | 0.81×     | 0.74×          | 0.76×  | 0.80× | 0.94× | 0.85×  |
//! | 2-D | 0.97×     | 0.98×          | 0.98×  | 1.17× | 1.32× | 0.92×  |
//!
//! In 5-D a Hilbert leaf of ~90 points spans long thin stretches of the curve (12 bits
//! per dimension), while STR slabs give near-cubic leaves; in 2-D the two are level
//! for small windows and kNN. So `bulk_load` stays STR/OMT, and Hilbert order is used
//! only where it is needed: the bounded-memory streaming build, whose input cannot
//! be partitioned in memory.

use super::RTree;
use super::coord::{Coord, stored_point};
use super::geom::Rect;
use super::hilbert::HilbertKey;
use super::node::{Entry, GROUP, Layout, bbox};
use super::packer::LevelPacker;
use super::stream::sort_chunk;
use crate::error::Result;
use quiredb_engine::{PageId, PageKind, WriteTxn};

/// Below this many entries a slab is partitioned on the calling thread.
const PARALLEL_MIN: usize = 16_384;

impl<const D: usize, C: Coord> RTree<D, C> {
    /// Replaces the contents of the tree with `items`, packed into full nodes. Every
    /// box is validated before the tree is touched.
    pub fn bulk_load(&self, txn: &WriteTxn<'_>, items: &[(Rect<D>, u64)]) -> Result<()> {
        let entries = items
            .iter()
            .map(|(rect, id)| Ok(Entry { rect: self.stored(rect)?, id: *id }))
            .collect::<Result<Vec<_>>>()?;
        self.bulk_load_entries(txn, entries)
    }

    /// Like [`RTree::bulk_load`] for points given as flat coordinates (`D` per id).
    pub fn bulk_load_points(&self, txn: &WriteTxn<'_>, ids: &[u64], coords: &[f64]) -> Result<()> {
        self.bulk_load_entries(txn, self.point_entries(ids, coords)?)
    }

    /// Like [`RTree::bulk_load_points`], packing in Hilbert order (the order of the
    /// streaming [`RTree::bulk_builder`], sorted in memory).
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
                let rect = if self.points { stored_point::<C, D>(&point)? } else { self.stored(&Rect::point(point))? };
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

    fn bulk_load_entries(&self, txn: &WriteTxn<'_>, mut entries: Vec<Entry<D>>) -> Result<()> {
        let mut head = self.head(txn)?;
        self.free_subtree(txn, PageId(head.root), head.root_level())?;
        let len = entries.len() as u64;
        let (mut level, mut nodes) = (0u16, 0u64);
        loop {
            let form = self.form(level);
            let groups = pack(&mut entries, form.max, self.fill(level));
            let mut parents = Vec::with_capacity(groups.len());
            for (start, end) in groups {
                // Order the node's entries so its group boxes (runs of 16) are compact.
                partition(&mut entries[start..end], 0, GROUP);
                let mut page = txn.alloc_page(PageKind::RTREE_NODE)?;
                Layout::<D, C>::encode_entries(level, &entries[start..end], &mut page, form);
                parents.push(Entry { rect: bbox(&entries[start..end]), id: page.id().0 });
                nodes += 1;
            }
            if parents.len() == 1 {
                head.root = parents[0].id;
                break;
            }
            entries = parents;
            level += 1;
        }
        (head.height, head.len, head.nodes) = (u32::from(level) + 1, len, nodes);
        self.store_head(txn, &head)
    }
}

/// Arranges `entries` for packing; returns the `(start, end)` of each node.
fn pack<const D: usize>(entries: &mut [Entry<D>], max: usize, min: usize) -> Vec<(usize, usize)> {
    let n = entries.len();
    if n <= max {
        return vec![(0, n)];
    }
    partition(entries, 0, max);
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

/// Twice the centre of the entry's box along `dim`: orders like the centre, one
/// multiplication less per comparison.
#[inline(always)]
fn twice_centre<const D: usize>(entry: &Entry<D>, dim: usize) -> f64 {
    entry.rect.min[dim] + entry.rect.max[dim]
}

/// Orders `slice` so that consecutive runs of `max` entries form compact nodes.
pub(crate) fn partition<const D: usize>(slice: &mut [Entry<D>], dim: usize, max: usize) {
    let n = slice.len();
    if n <= max {
        return;
    }
    if dim + 1 >= D {
        // Only the cuts between runs matter: selections instead of a full sort.
        cut_slabs(slice, max, dim);
        return;
    }
    let pages = n.div_ceil(max);
    let slabs = ((pages as f64).powf(1.0 / (D - dim) as f64).ceil() as usize).max(1);
    let slab = pages.div_ceil(slabs) * max;
    cut_slabs(slice, slab, dim);
    if n >= PARALLEL_MIN {
        use rayon::prelude::*;
        slice.par_chunks_mut(slab).for_each(|s| partition(s, dim + 1, max));
    } else {
        slice.chunks_mut(slab).for_each(|s| partition(s, dim + 1, max));
    }
}

/// Partitions `slice` along `dim` into runs of `slab` entries (unsorted inside).
fn cut_slabs<const D: usize>(slice: &mut [Entry<D>], slab: usize, dim: usize) {
    let n = slice.len();
    if n <= slab {
        return;
    }
    let mid = n.div_ceil(slab) / 2 * slab;
    slice.select_nth_unstable_by(mid, |a, b| twice_centre(a, dim).total_cmp(&twice_centre(b, dim)));
    let (low, high) = slice.split_at_mut(mid);
    if n >= PARALLEL_MIN {
        rayon::join(|| cut_slabs(low, slab, dim), || cut_slabs(high, slab, dim));
    } else {
        cut_slabs(low, slab, dim);
        cut_slabs(high, slab, dim);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_fills_nodes_and_balances_the_tail() {
        let mut entries: Vec<Entry<2>> =
            (0..1001u64).map(|i| Entry { rect: Rect::point([(i % 37) as f64, (i / 37) as f64]), id: i }).collect();
        let groups = pack(&mut entries, 100, 40);
        assert_eq!(groups.len(), 11);
        assert!(groups[..9].iter().all(|(s, e)| e - s == 100));
        assert!(groups[9..].iter().all(|(s, e)| e - s >= 40));
        assert_eq!(groups.last().map(|g| g.1), Some(1001));
    }
}
