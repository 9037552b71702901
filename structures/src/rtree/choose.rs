//! The R* ChooseSubtree, read straight from a branch page's encoded entries (no
//! decoding of the node): the child whose box already contains the new box, least
//! area first; otherwise, at the level above the leaves, the least overlap
//! enlargement among the [`OVERLAP_CANDIDATES`] children of least area enlargement
//! (Beckmann et al. 1990, §4.1, with the paper's "nearly minimum overlap cost"
//! shortcut), and above that the least area enlargement.
//!
//! Ties are frequent when boxes are flat (real data such as the Beijing measures,
//! where RAIN is 0 in most rows, so most boxes have zero volume and every area and
//! overlap is 0): the margin (sum of the extents) and its enlargement break them, so
//! a flat box still goes to the child it stretches least.

use super::coord::{Coord, at};
use super::geom::Rect;
use super::node::{Form, GROUP, GroupCoord, Layout};
use super::scratch;
use std::cell::RefCell;
use std::cmp::Ordering;

/// Candidates (least area enlargement first) whose overlap enlargement is computed.
pub(crate) const OVERLAP_CANDIDATES: usize = 32;

/// One child's cost: area enlargement, margin enlargement, area, index.
type Score = (f64, f64, f64, u32);

thread_local! {
    /// The scores of [`choose_subtree`], kept between insertions.
    static SCORES: RefCell<Vec<Score>> = const { RefCell::new(Vec::new()) };
}

/// Orders scores by area enlargement, then margin enlargement, then area.
fn by_cost(a: &Score, b: &Score) -> Ordering {
    a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)).then(a.2.total_cmp(&b.2))
}

/// True when the encoded box `chunk` contains `rect`. Early exits: most children
/// fail in the first dimension or two.
#[inline(always)]
fn chunk_contains<C: Coord, const D: usize>(chunk: &[u8], rect: &Rect<D>) -> bool {
    let b = &chunk[..2 * D * C::BYTES];
    (0..D).all(|d| at::<C>(b, d) <= rect.min[d] && rect.max[d] <= at::<C>(b, D + d))
}

/// Volume of the intersection of `a` and the encoded box `chunk` (0 when disjoint).
#[inline(always)]
fn chunk_overlap<C: Coord, const D: usize>(a: &Rect<D>, chunk: &[u8]) -> f64 {
    let b = &chunk[..2 * D * C::BYTES];
    let mut volume = 1.0;
    for d in 0..D {
        let extent = a.max[d].min(at::<C>(b, D + d)) - a.min[d].max(at::<C>(b, d));
        if extent <= 0.0 {
            return 0.0;
        }
        volume *= extent;
    }
    volume
}

/// The index of the child to descend into for `rect`, among the encoded box entries
/// `bytes` of the branch node page `page` (of `form`) at `level`; `None` for a node
/// without entries.
pub(crate) fn choose_subtree<const D: usize, C: Coord>(
    page: &[u8],
    bytes: &[u8],
    form: Form,
    level: u16,
    rect: &Rect<D>,
) -> Option<usize> {
    if let Some(i) = least_containing::<D, C>(page, bytes, form, rect) {
        return Some(i);
    }
    let stride = Layout::<D, C>::ENTRY;
    let mut scores = scratch::take(&SCORES);
    for (i, chunk) in bytes.chunks_exact(stride).enumerate() {
        let r = Layout::<D, C>::rect(chunk);
        let grown = r.union(rect);
        let area = r.area();
        scores.push((grown.area() - area, grown.margin() - r.margin(), area, i as u32));
    }
    let cheapest = scores.iter().min_by(|a, b| by_cost(a, b)).map(|s| s.3 as usize)?;
    if level != 1 || scores.len() <= 1 {
        return Some(cheapest);
    }
    // Usually the child of least enlargement adds no overlap and wins at once.
    let added = added_overlap::<D, C>(bytes, cheapest, rect, f64::INFINITY);
    if added == 0.0 {
        return Some(cheapest);
    }
    if scores.len() > OVERLAP_CANDIDATES {
        scores.select_nth_unstable_by(OVERLAP_CANDIDATES - 1, by_cost);
        scores.truncate(OVERLAP_CANDIDATES);
    }
    scores.sort_unstable_by(by_cost);
    Some(least_overlap::<D, C>(bytes, &scores, rect, (added, cheapest)))
}

/// The child whose box contains `rect`, of least area (then margin). A group box
/// that does not contain `rect` rules out its 16 entries with one test.
#[inline]
fn least_containing<const D: usize, C: Coord>(page: &[u8], bytes: &[u8], form: Form, rect: &Rect<D>) -> Option<usize> {
    let mut containing: Option<(f64, f64, usize)> = None;
    for (g, (group, run)) in Layout::<D, C>::runs(page, bytes, form).enumerate() {
        if !chunk_contains::<GroupCoord, D>(group, rect) {
            continue;
        }
        for (k, chunk) in run.chunks_exact(Layout::<D, C>::ENTRY).enumerate() {
            if chunk_contains::<C, D>(chunk, rect) {
                let r = Layout::<D, C>::rect(chunk);
                let key = (r.area(), r.margin());
                if containing.is_none_or(|(a, m, _)| key.0 < a || (key.0 == a && key.1 < m)) {
                    containing = Some((key.0, key.1, g * GROUP + k));
                }
            }
        }
    }
    containing.map(|c| c.2)
}

/// The overlap that child `i` (of the encoded entries `bytes`) adds with its
/// siblings when grown to hold `rect`; stops counting once it reaches `bound`.
fn added_overlap<const D: usize, C: Coord>(bytes: &[u8], i: usize, rect: &Rect<D>, bound: f64) -> f64 {
    let stride = Layout::<D, C>::ENTRY;
    let own = Layout::<D, C>::rect(&bytes[i * stride..]);
    let grown = own.union(rect);
    let mut delta = 0.0;
    for (j, other) in bytes.chunks_exact(stride).enumerate() {
        let gained = chunk_overlap::<C, D>(&grown, other);
        if gained > 0.0 && j != i {
            delta += gained - chunk_overlap::<C, D>(&own, other);
            if delta >= bound {
                break;
            }
        }
    }
    delta
}

/// Among `candidates` (in cost order, starting with the already measured `first`),
/// the child whose box grown to hold `rect` adds the least overlap with its
/// siblings; one adding none ends the search.
fn least_overlap<const D: usize, C: Coord>(
    bytes: &[u8],
    candidates: &[Score],
    rect: &Rect<D>,
    first: (f64, usize),
) -> usize {
    let mut best = first;
    for &(_, _, _, i) in candidates {
        let i = i as usize;
        if i == first.1 {
            continue;
        }
        let delta = added_overlap::<D, C>(bytes, i, rect, best.0);
        // Candidates come in cost order, so a strict improvement in overlap is the
        // only way to win; zero added overlap cannot be beaten.
        if delta < best.0 {
            best = (delta, i);
            if delta == 0.0 {
                break;
            }
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rtree::node::{Entry, Form, Layout};

    const FORM: Form = Form { max: 64, point: false };

    /// A node page holding `rects` (ids 0, 1, …).
    fn encode(rects: &[Rect<2>]) -> Vec<u8> {
        let entries: Vec<Entry<2>> = rects.iter().enumerate().map(|(i, r)| Entry { rect: *r, id: i as u64 }).collect();
        let mut page = vec![0u8; 8192];
        Layout::<2, f64>::encode_entries(1, &entries, &mut page, FORM);
        page
    }

    fn choose(page: &[u8], level: u16, rect: &Rect<2>) -> Option<usize> {
        let (_, bytes) = Layout::<2, f64>::entries(page, quiredb_engine::PageId(1), FORM).expect("valid node");
        choose_subtree::<2, f64>(page, bytes, FORM, level, rect)
    }

    #[test]
    fn a_containing_child_of_least_area_wins() {
        let bytes = encode(&[
            Rect::new([0.0, 0.0], [10.0, 10.0]),
            Rect::new([1.0, 1.0], [3.0, 3.0]),
            Rect::new([20.0, 20.0], [30.0, 30.0]),
        ]);
        assert_eq!(choose(&bytes, 1, &Rect::point([2.0, 2.0])), Some(1));
        assert_eq!(choose(&bytes, 2, &Rect::point([5.0, 5.0])), Some(0));
        assert_eq!(choose(&encode(&[]), 1, &Rect::point([5.0, 5.0])), None);
    }

    #[test]
    fn flat_boxes_are_told_apart_by_margin() {
        // All boxes have zero area: the point goes to the box it stretches least.
        let bytes = encode(&[
            Rect::new([0.0, 0.0], [10.0, 0.0]),
            Rect::new([50.0, 0.0], [60.0, 0.0]),
            Rect::new([100.0, 0.0], [110.0, 0.0]),
        ]);
        assert_eq!(choose(&bytes, 1, &Rect::point([63.0, 0.0])), Some(1));
        assert_eq!(choose(&bytes, 2, &Rect::point([99.0, 0.0])), Some(2));
        // Containment ties on area: the smaller margin wins.
        let bytes = encode(&[Rect::new([0.0, 0.0], [10.0, 0.0]), Rect::new([4.0, 0.0], [6.0, 0.0])]);
        assert_eq!(choose(&bytes, 1, &Rect::point([5.0, 0.0])), Some(1));
    }

    #[test]
    fn least_overlap_enlargement_at_the_level_above_the_leaves() {
        // Growing child 0 (least area enlargement) to the point would overlap
        // child 2; child 1 grows a little more in area but overlaps nothing.
        let bytes = encode(&[
            Rect::new([0.0, 0.0], [4.9, 4.9]),
            Rect::new([5.0, 6.0], [6.0, 8.0]),
            Rect::new([4.95, 0.0], [9.0, 4.5]),
        ]);
        let p = Rect::point([5.0, 5.0]);
        assert_eq!(choose(&bytes, 1, &p), Some(1));
        assert_eq!(choose(&bytes, 2, &p), Some(0), "least area enlargement higher up");
    }
}
