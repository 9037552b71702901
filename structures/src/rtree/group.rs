//! Orders a node's entries so that its runs of [`GROUP`] entries (each run has a group
//! box on the page, see `node.rs`) are compact: the bulk load's STR cuts
//! (`bulk::partition`: slabs along each dimension in turn, by selection, on the box
//! centres), done on integer keys that carry the entry's index in their low bits
//! (see [`sort_key`]), with the centres computed once, and then applied: within a
//! page-sized node this selects plain `u64`s instead of moving whole entries.

use super::node::{Entry, GROUP};

/// Reorders `entries` into compact runs of [`GROUP`].
pub(crate) fn regroup<const D: usize>(entries: &mut [Entry<D>]) {
    let n = entries.len();
    if n <= GROUP || D == 0 {
        return;
    }
    let centres: Vec<[f64; D]> =
        entries.iter().map(|e| std::array::from_fn(|d| e.rect.min[d] + e.rect.max[d])).collect();
    let mask = index_mask(n);
    let mut order: Vec<u64> = (0..n as u64).collect();
    partition(&mut order, &centres, mask, 0);
    let old = entries.to_vec();
    for (slot, &key) in entries.iter_mut().zip(&order) {
        *slot = old[(key & mask) as usize];
    }
}

/// The low bits that hold an index below `n` in a sort key.
pub(crate) fn index_mask(n: usize) -> u64 {
    (1u64 << (usize::BITS - n.saturating_sub(1).leading_zeros()).max(1)) - 1
}

/// A sort key: the bits of `x` in the order of `f64::total_cmp`, its lowest bits
/// (below `mask`, a few ulps) replaced by `index`, so that sorting plain integers
/// sorts by `x` (ties within those ulps broken by index).
#[inline(always)]
pub(crate) fn sort_key(x: f64, index: u64, mask: u64) -> u64 {
    let bits = x.to_bits();
    let ordered = if bits >> 63 == 1 { !bits } else { bits | 1 << 63 };
    (ordered & !mask) | index
}

/// Cuts `order` into slabs along `dim`, then each slab along the next dimension,
/// down to runs of [`GROUP`] along the last.
fn partition<const D: usize>(order: &mut [u64], centres: &[[f64; D]], mask: u64, dim: usize) {
    let n = order.len();
    if n <= GROUP {
        return;
    }
    for key in order.iter_mut() {
        let i = *key & mask;
        *key = sort_key(centres[i as usize][dim], i, mask);
    }
    if dim + 1 >= D {
        cut(order, GROUP);
        return;
    }
    let runs = n.div_ceil(GROUP);
    let slabs = ((runs as f64).powf(1.0 / (D - dim) as f64).ceil() as usize).max(1);
    let slab = runs.div_ceil(slabs) * GROUP;
    cut(order, slab);
    for s in order.chunks_mut(slab) {
        partition(s, centres, mask, dim + 1);
    }
}

/// Partitions the keys `order` into runs of `slab` (unsorted inside).
fn cut(order: &mut [u64], slab: usize) {
    let n = order.len();
    if n <= slab {
        return;
    }
    let mid = n.div_ceil(slab) / 2 * slab;
    order.select_nth_unstable(mid);
    let (low, high) = order.split_at_mut(mid);
    cut(low, slab);
    cut(high, slab);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rtree::geom::Rect;
    use crate::rtree::node::bbox;

    #[test]
    fn runs_are_compact_and_entries_kept() {
        // 64 points on a line in arrival order 0, 63, 1, 62, ...: after regrouping
        // each run of 16 spans 15 units.
        let mut entries: Vec<Entry<2>> = (0..64u64)
            .map(|i| {
                let x = if i % 2 == 0 { i / 2 } else { 63 - i / 2 } as f64;
                Entry { rect: Rect::point([x, 0.0]), id: i }
            })
            .collect();
        let mut ids: Vec<u64> = entries.iter().map(|e| e.id).collect();
        regroup(&mut entries);
        for run in entries.chunks(GROUP) {
            let b = bbox(run);
            assert_eq!(b.max[0] - b.min[0], 15.0, "{run:?}");
        }
        let mut after: Vec<u64> = entries.iter().map(|e| e.id).collect();
        ids.sort_unstable();
        after.sort_unstable();
        assert_eq!(ids, after);
    }

    #[test]
    fn sort_keys_order_like_total_cmp() {
        let mask = index_mask(300);
        assert_eq!(mask, 511);
        assert_eq!((index_mask(1), index_mask(2), index_mask(256), index_mask(257)), (1, 1, 255, 511));
        let xs = [-1e300, -2.5, -0.0, 0.0, 1e-300, 0.5, 3.0, 1e300];
        let keys: Vec<u64> = xs.iter().enumerate().map(|(i, &x)| sort_key(x, i as u64, mask)).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "{keys:?}");
        assert!(keys.iter().enumerate().all(|(i, k)| k & mask == i as u64));
    }
}
