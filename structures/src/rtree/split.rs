//! The R* split (Beckmann et al. 1990, §4.2): choose the axis whose sorted
//! distributions have the least total margin, then on that axis the distribution with
//! the least overlap (ties: least total area, then the more balanced one). Both groups
//! get at least `min` entries. Pure in-memory work on decoded entries.

use super::geom::Rect;
use super::group::{index_mask, sort_key};
use super::node::Entry;
use std::cmp::Ordering;

/// Splits `entries` (more than `2·min` of them) into two groups by the R* rules.
///
/// The sorts order integer keys that carry the index (`group::sort_key`), each order
/// is sorted once and kept for the distribution choice, and the axis choice sums
/// margins without keeping the prefix boxes. When every entry is a point, sorting by
/// the lower and by the upper corner gives the same order, so only one is tried.
pub(crate) fn rstar_split<const D: usize>(entries: Vec<Entry<D>>, min: usize) -> (Vec<Entry<D>>, Vec<Entry<D>>) {
    let n = entries.len();
    assert!(n >= 2 * min && min >= 1, "an overflowing node has at least 2·min entries");
    let ends: &[bool] = if entries.iter().all(|e| e.rect.min == e.rect.max) { &[false] } else { &[false, true] };
    let mut orders: Vec<Vec<u32>> = Vec::with_capacity(2 * D);
    let mut margins = Vec::with_capacity(n);
    let mut best_axis = (f64::INFINITY, 0);
    for axis in 0..D {
        let mut margin = 0.0;
        for &by_max in ends {
            let order = sort(&entries, axis, by_max);
            margin += margin_sum(&entries, &order, min, &mut margins);
            orders.push(order);
        }
        if margin < best_axis.0 {
            best_axis = (margin, axis);
        }
    }
    let axis = best_axis.1;
    let (mut prefix, mut suffix) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut best: Option<(f64, f64, usize, usize, usize)> = None;
    for (end, _) in ends.iter().enumerate() {
        let order = &orders[axis * ends.len() + end];
        sweep(&entries, order, &mut prefix, &mut suffix);
        for k in min..=n - min {
            let (first, second) = (&prefix[k - 1], &suffix[k]);
            let key = (first.overlap(second), first.area() + second.area(), k.abs_diff(n / 2), end, k);
            if best.is_none_or(|b| (key.0, key.1, key.2) < (b.0, b.1, b.2)) {
                best = Some(key);
            }
        }
    }
    let (_, _, _, end, k) = best.expect("at least one distribution exists");
    let order = &orders[axis * ends.len() + end];
    let first = order[..k].iter().map(|&i| entries[i as usize]).collect();
    let second = order[k..].iter().map(|&i| entries[i as usize]).collect();
    (first, second)
}

/// The indices of `entries` sorted along `axis` by the lower
/// (or upper) corner (ties broken by index).
fn sort<const D: usize>(entries: &[Entry<D>], axis: usize, by_max: bool) -> Vec<u32> {
    let mask = index_mask(entries.len());
    let mut keys: Vec<u64> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| sort_key(if by_max { e.rect.max[axis] } else { e.rect.min[axis] }, i as u64, mask))
        .collect();
    keys.sort_unstable();
    keys.iter().map(|k| (k & mask) as u32).collect()
}

/// Sum over the distributions (first `k` entries of `order` / the rest, for `k` in
/// `min..=n - min`) of the margins of both groups' boxes.
fn margin_sum<const D: usize>(entries: &[Entry<D>], order: &[u32], min: usize, margins: &mut Vec<f64>) -> f64 {
    let n = order.len();
    margins.clear();
    let mut acc = Rect::empty();
    for &i in order {
        acc.expand(&entries[i as usize].rect);
        margins.push(acc.margin());
    }
    let mut sum: f64 = (min..=n - min).map(|k| margins[k - 1]).sum();
    let mut acc = Rect::empty();
    for (k, &i) in order.iter().enumerate().rev() {
        acc.expand(&entries[i as usize].rect);
        if (min..=n - min).contains(&k) {
            sum += acc.margin();
        }
    }
    sum
}

/// `prefix[i]` = union of the first `i + 1` entries of `order`; `suffix[i]` = union
/// of those from `i` on.
fn sweep<const D: usize>(entries: &[Entry<D>], order: &[u32], prefix: &mut Vec<Rect<D>>, suffix: &mut Vec<Rect<D>>) {
    prefix.clear();
    let mut acc = Rect::empty();
    for &i in order {
        acc.expand(&entries[i as usize].rect);
        prefix.push(acc);
    }
    suffix.clear();
    suffix.resize(order.len(), Rect::empty());
    let mut acc = Rect::empty();
    for (k, &i) in order.iter().enumerate().rev() {
        acc.expand(&entries[i as usize].rect);
        suffix[k] = acc;
    }
}

/// Orders by a float, NaN-free by construction.
pub(crate) fn by_f64(a: f64, b: f64) -> Ordering {
    a.total_cmp(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_separates_two_clusters_and_respects_min() {
        let mut entries = Vec::new();
        for i in 0..10u64 {
            let x = if i < 5 { i as f64 } else { 100.0 + i as f64 };
            entries.push(Entry { rect: Rect::point([x, 0.0]), id: i });
        }
        let (a, b) = rstar_split(entries, 3);
        assert_eq!((a.len(), b.len()), (5, 5));
        assert!(a.iter().all(|e| e.id < 5) && b.iter().all(|e| e.id >= 5));
    }

    #[test]
    fn box_split_keeps_every_entry_and_cuts_along_the_long_axis() {
        let entries: Vec<Entry<2>> = (0..40u64)
            .map(|i| {
                let x = (i * 7 % 40) as f64;
                Entry { rect: Rect::new([x, 0.0], [x + 3.0, 1.0 + (i % 3) as f64]), id: i }
            })
            .collect();
        let (a, b) = rstar_split(entries, 12);
        assert!(a.len() >= 12 && b.len() >= 12, "{} / {}", a.len(), b.len());
        let mut ids: Vec<u64> = a.iter().chain(&b).map(|e| e.id).collect();
        ids.sort_unstable();
        assert_eq!(ids, (0..40).collect::<Vec<u64>>());
        let lows = |g: &[Entry<2>]| {
            g.iter().map(|e| e.rect.min[0]).fold((f64::MAX, f64::MIN), |(l, h), x| (l.min(x), h.max(x)))
        };
        let ((a_lo, a_hi), (b_lo, b_hi)) = (lows(&a), lows(&b));
        assert!(a_hi < b_lo || b_hi < a_lo, "cut along x: {a_lo}..{a_hi} / {b_lo}..{b_hi}");
    }
}
