//! The R* split (Beckmann et al. 1990, §4.2): choose the axis whose sorted
//! distributions have the least total margin, then on that axis the distribution with
//! the least overlap (ties: least total area, then the more balanced one). Both groups
//! get at least `min` entries. Pure in-memory work on decoded entries.

use super::geom::Rect;
use super::node::Entry;
use std::cmp::Ordering;

/// Splits `entries` (more than `2·min` of them) into two groups by the R* rules.
pub(crate) fn rstar_split<const D: usize>(mut entries: Vec<Entry<D>>, min: usize) -> (Vec<Entry<D>>, Vec<Entry<D>>) {
    let n = entries.len();
    assert!(n >= 2 * min && min >= 1, "an overflowing node has at least 2·min entries");
    let mut prefix = Vec::with_capacity(n);
    let mut suffix = Vec::with_capacity(n);
    let mut best_axis = (f64::INFINITY, 0);
    for axis in 0..D {
        let mut margin = 0.0;
        for by_max in [false, true] {
            sort(&mut entries, axis, by_max);
            sweep(&entries, &mut prefix, &mut suffix);
            margin += (min..=n - min).map(|k| prefix[k - 1].margin() + suffix[k].margin()).sum::<f64>();
        }
        if margin < best_axis.0 {
            best_axis = (margin, axis);
        }
    }
    let axis = best_axis.1;
    let mut best: Option<(f64, f64, usize, bool, usize)> = None;
    for by_max in [false, true] {
        sort(&mut entries, axis, by_max);
        sweep(&entries, &mut prefix, &mut suffix);
        for k in min..=n - min {
            let (first, second) = (&prefix[k - 1], &suffix[k]);
            let key = (first.overlap(second), first.area() + second.area(), k.abs_diff(n / 2), by_max, k);
            if best.is_none_or(|b| (key.0, key.1, key.2) < (b.0, b.1, b.2)) {
                best = Some(key);
            }
        }
    }
    let (_, _, _, by_max, k) = best.expect("at least one distribution exists");
    sort(&mut entries, axis, by_max);
    let second = entries.split_off(k);
    (entries, second)
}

fn sort<const D: usize>(entries: &mut [Entry<D>], axis: usize, by_max: bool) {
    let key = |e: &Entry<D>| {
        if by_max { (e.rect.max[axis], e.rect.min[axis]) } else { (e.rect.min[axis], e.rect.max[axis]) }
    };
    entries.sort_unstable_by(|a, b| {
        let (ka, kb) = (key(a), key(b));
        ka.0.total_cmp(&kb.0).then(ka.1.total_cmp(&kb.1)).then(a.id.cmp(&b.id))
    });
}

/// `prefix[i]` = union of `entries[..=i]`; `suffix[i]` = union of `entries[i..]`.
fn sweep<const D: usize>(entries: &[Entry<D>], prefix: &mut Vec<Rect<D>>, suffix: &mut Vec<Rect<D>>) {
    prefix.clear();
    let mut acc = Rect::empty();
    for e in entries {
        acc.expand(&e.rect);
        prefix.push(acc);
    }
    suffix.clear();
    suffix.resize(entries.len(), Rect::empty());
    let mut acc = Rect::empty();
    for (i, e) in entries.iter().enumerate().rev() {
        acc.expand(&e.rect);
        suffix[i] = acc;
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
}
