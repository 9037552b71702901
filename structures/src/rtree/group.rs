//! STR cuts on integer keys: slabs along each dimension in turn, by selection on the
//! box centres, down to compact runs. The keys carry the entry's index in their low
//! bits (see [`sort_key`]), so the selections move plain `u64`s instead of whole
//! entries (88 bytes in 5-D), and the order is applied once at the end.
//!
//! - [`regroup`] orders a node's entries so that its runs of [`GROUP`] entries (each
//!   run has a group box on the page, see `node.rs`) are compact;
//! - [`arranged`] orders a whole level of the bulk load into runs of the node
//!   capacity, in parallel with rayon for large slabs. Moving entries in the
//!   selections took half of a 2-D bulk load (perf, 2.5 M points).

use super::node::{Entry, GROUP};

/// Below this many keys a slab is cut on the calling thread.
const PARALLEL_MIN: usize = 16_384;

/// `entries` ordered so that consecutive runs of `run` entries are compact (STR cuts
/// along each dimension in turn, as [`regroup`] does within a node).
pub(crate) fn arranged<const D: usize>(entries: &[Entry<D>], run: usize) -> Vec<Entry<D>> {
    let n = entries.len();
    if n <= run || D == 0 {
        return entries.to_vec();
    }
    let mask = index_mask(n);
    let mut order: Vec<u64> = (0..n as u64).collect();
    let centre = |i: usize, d: usize| entries[i].rect.min[d] + entries[i].rect.max[d];
    cut_dims(&mut order, &centre, mask, 0, run, D);
    order.iter().map(|key| entries[(key & mask) as usize]).collect()
}

/// Cuts `order` (the indices below `mask + 1`, as keys) into slabs along `dim` (keys
/// set from `centre(index, dim)`), then each slab along the next dimension, down to
/// runs of `run` along the last of `dims`; leaves each key's index in its low bits.
pub(crate) fn cut_dims<F: Fn(usize, usize) -> f64 + Sync>(
    order: &mut [u64],
    centre: &F,
    mask: u64,
    dim: usize,
    run: usize,
    dims: usize,
) {
    let n = order.len();
    if n <= run {
        return;
    }
    for key in order.iter_mut() {
        let i = *key & mask;
        *key = sort_key(centre(i as usize, dim), i, mask);
    }
    if dim + 1 >= dims {
        cut(order, run);
        return;
    }
    let runs = n.div_ceil(run);
    let slabs = ((runs as f64).powf(1.0 / (dims - dim) as f64).ceil() as usize).max(1);
    let slab = runs.div_ceil(slabs) * run;
    cut(order, slab);
    if n >= PARALLEL_MIN {
        use rayon::prelude::*;
        order.par_chunks_mut(slab).for_each(|s| cut_dims(s, centre, mask, dim + 1, run, dims));
    } else {
        order.chunks_mut(slab).for_each(|s| cut_dims(s, centre, mask, dim + 1, run, dims));
    }
}

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
    cut_dims(&mut order, &|i: usize, d: usize| centres[i][d], mask, 0, GROUP, D);
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

/// Partitions the keys `order` into runs of `slab` (unsorted inside).
fn cut(order: &mut [u64], slab: usize) {
    let n = order.len();
    if n <= slab {
        return;
    }
    let mid = n.div_ceil(slab) / 2 * slab;
    order.select_nth_unstable(mid);
    let (low, high) = order.split_at_mut(mid);
    if n >= PARALLEL_MIN {
        rayon::join(|| cut(low, slab), || cut(high, slab));
    } else {
        cut(low, slab);
        cut(high, slab);
    }
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
    fn a_level_is_arranged_into_square_runs() {
        // A 40 x 40 grid in a scrambled order, runs of 100: 4 slabs of 10 columns,
        // each cut into 4 runs of 10 x 10 points.
        let entries: Vec<Entry<2>> = (0..1600u64)
            .map(|i| {
                let j = (i * 977) % 1600;
                Entry { rect: Rect::point([(j % 40) as f64, (j / 40) as f64]), id: j }
            })
            .collect();
        let out = arranged(&entries, 100);
        for run in out.chunks(100) {
            let b = bbox(run);
            assert_eq!((b.max[0] - b.min[0], b.max[1] - b.min[1]), (9.0, 9.0), "{b:?}");
        }
        let mut ids: Vec<u64> = out.iter().map(|e| e.id).collect();
        ids.sort_unstable();
        assert_eq!(ids, (0..1600).collect::<Vec<u64>>());
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
