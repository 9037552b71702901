//! Squared distances from a query point to encoded boxes and points (the k nearest
//! neighbours' arithmetic, `knn.rs`), read straight from the page bytes.

use super::coord::{Coord, at};
use super::node::{GROUP, Layout};

/// Squared distance from `p` to the farthest corner of the encoded box `chunk`.
#[inline(always)]
pub(super) fn chunk_max_dist2<C: Coord, const D: usize>(chunk: &[u8], p: &[f64; D]) -> f64 {
    let (b, mut sum) = (&chunk[..2 * D * C::BYTES], 0.0);
    for (d, &x) in p.iter().enumerate() {
        let (lo, hi) = (at::<C>(b, d), at::<C>(b, D + d));
        let far = fmax((x - lo).abs(), (hi - x).abs());
        sum += far * far;
    }
    sum
}

/// The larger of `a` and `b` for operands that are never NaN (stored coordinates and
/// query points are finite): one `maxsd`, where `f64::max` adds the NaN handling.
#[inline(always)]
pub(super) fn fmax(a: f64, b: f64) -> f64 {
    if a > b { a } else { b }
}

/// Squared distance from `p` to the encoded box `chunk`.
#[inline(always)]
pub(super) fn chunk_dist2<C: Coord, const D: usize>(chunk: &[u8], p: &[f64; D]) -> f64 {
    let (b, mut sum) = (&chunk[..2 * D * C::BYTES], 0.0);
    for (d, &x) in p.iter().enumerate() {
        let (lo, hi) = (at::<C>(b, d), at::<C>(b, D + d));
        // `f64::max` for the clamp: with `fmax` the compiler branches on the sign.
        let gap = fmax(lo - x, x - hi).max(0.0);
        sum += gap * gap;
    }
    sum
}

/// Squared distance from `p` to the encoded point `chunk`.
#[inline(always)]
pub(super) fn point_dist2<C: Coord, const D: usize>(chunk: &[u8], p: &[f64; D]) -> f64 {
    let coords = &chunk[..D * C::BYTES];
    let mut sum = 0.0;
    for (d, &x) in p.iter().enumerate() {
        let gap = at::<C>(coords, d) - x;
        sum += gap * gap;
    }
    sum
}

/// Distance of an encoded entry of either form.
#[inline(always)]
pub(super) fn entry_dist2<C: Coord, const D: usize>(chunk: &[u8], p: &[f64; D], point: bool) -> f64 {
    if point { point_dist2::<C, D>(chunk, p) } else { chunk_dist2::<C, D>(chunk, p) }
}

/// The squared distances from `p` of the (at most [`GROUP`]) encoded entries of
/// `run`, and the mask of those within `bound`: computed without branches (whether an
/// entry is near enough is unpredictable; a mispredicted branch costs more than the
/// arithmetic).
#[inline(always)]
pub(super) fn run_dists<C: Coord, const D: usize>(
    run: &[u8],
    point: bool,
    p: &[f64; D],
    bound: f64,
) -> ([f64; GROUP], u32) {
    let (mut dists, mut mask) = ([0.0; GROUP], 0u32);
    let stride = Layout::<D, C>::stride(point);
    for (i, chunk) in run.chunks_exact(stride).take(GROUP).enumerate() {
        let dist2 = entry_dist2::<C, D>(chunk, p, point);
        dists[i] = dist2;
        mask |= u32::from(dist2 <= bound) << i;
    }
    (dists, mask)
}
