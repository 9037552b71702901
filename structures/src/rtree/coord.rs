//! How coordinates are stored on a node page: [`Coord`] is implemented by `f64`
//! (exact) and `f32` (half the bytes, so about twice the fan-out).
//!
//! An f32 tree stores every box rounded *outward* (min toward −∞, max toward +∞), so
//! the stored box always contains the box the caller gave; queries and the invariant
//! checker work on the stored (rounded) boxes. A point tree stores each point rounded
//! to the nearest f32 instead. A value beyond the f32 range is rejected as not finite. Read next: `node.rs`.

use super::geom::Rect;
use crate::error::{Error, Result};

mod sealed {
    pub trait Sealed {}
    impl Sealed for f64 {}
    impl Sealed for f32 {}
}

/// A stored coordinate type: `f64` or `f32`.
pub trait Coord: sealed::Sealed + Copy + Send + Sync + 'static {
    /// Bytes per stored coordinate.
    const BYTES: usize;
    /// Code kept in the catalog parameters and the head page.
    const CODE: u8;
    /// Name in messages.
    const NAME: &'static str;
    /// Reads the coordinate at the start of `bytes`.
    fn read(bytes: &[u8]) -> f64;
    /// Writes `value` rounded toward −∞.
    fn write_down(bytes: &mut [u8], value: f64);
    /// Writes `value` rounded toward +∞.
    fn write_up(bytes: &mut [u8], value: f64);
    /// `value` rounded toward −∞ to the stored precision.
    fn round_down(value: f64) -> f64;
    /// `value` rounded toward +∞ to the stored precision.
    fn round_up(value: f64) -> f64;
    /// `value` rounded to the nearest stored value (points of a point tree).
    fn round_near(value: f64) -> f64;
}

impl Coord for f64 {
    const BYTES: usize = 8;
    const CODE: u8 = 8;
    const NAME: &'static str = "f64";
    #[inline(always)]
    fn read(bytes: &[u8]) -> f64 {
        f64::from_le_bytes(bytes[..8].try_into().expect("slice of 8 bytes"))
    }
    #[inline(always)]
    fn write_down(bytes: &mut [u8], value: f64) {
        bytes[..8].copy_from_slice(&value.to_le_bytes());
    }
    #[inline(always)]
    fn write_up(bytes: &mut [u8], value: f64) {
        bytes[..8].copy_from_slice(&value.to_le_bytes());
    }
    #[inline(always)]
    fn round_down(value: f64) -> f64 {
        value
    }
    #[inline(always)]
    fn round_up(value: f64) -> f64 {
        value
    }
    #[inline(always)]
    fn round_near(value: f64) -> f64 {
        value
    }
}

impl Coord for f32 {
    const BYTES: usize = 4;
    const CODE: u8 = 4;
    const NAME: &'static str = "f32";
    #[inline(always)]
    fn read(bytes: &[u8]) -> f64 {
        f64::from(f32::from_le_bytes(bytes[..4].try_into().expect("slice of 4 bytes")))
    }
    #[inline(always)]
    fn write_down(bytes: &mut [u8], value: f64) {
        bytes[..4].copy_from_slice(&(Self::round_down(value) as f32).to_le_bytes());
    }
    #[inline(always)]
    fn write_up(bytes: &mut [u8], value: f64) {
        bytes[..4].copy_from_slice(&(Self::round_up(value) as f32).to_le_bytes());
    }
    #[inline(always)]
    fn round_down(value: f64) -> f64 {
        let near = value as f32;
        f64::from(if f64::from(near) > value { near.next_down() } else { near })
    }
    #[inline(always)]
    fn round_up(value: f64) -> f64 {
        let near = value as f32;
        f64::from(if f64::from(near) < value { near.next_up() } else { near })
    }
    #[inline(always)]
    fn round_near(value: f64) -> f64 {
        f64::from(value as f32)
    }
}

/// Coordinate `i` of the encoded coordinates `bytes` (already cut to their length,
/// so with constant `i` the bounds checks fold away).
#[inline(always)]
pub(crate) fn at<C: Coord>(bytes: &[u8], i: usize) -> f64 {
    C::read(&bytes[i * C::BYTES..(i + 1) * C::BYTES])
}

/// The box as it will be stored: validated, then rounded outward to `C`.
pub(crate) fn stored_rect<C: Coord, const D: usize>(rect: &Rect<D>) -> Result<Rect<D>> {
    rect.validate()?;
    let mut out = *rect;
    for d in 0..D {
        out.min[d] = C::round_down(rect.min[d]);
        out.max[d] = C::round_up(rect.max[d]);
    }
    if out.validate().is_err() {
        return Err(Error::InvalidBox { reason: format!("{rect:?} lies outside the range of {}", C::NAME) });
    }
    Ok(out)
}

/// The point as a point tree stores it: validated, rounded to the nearest `C`.
/// (The bulk loads call it per point: one branch-free finiteness test on the fast
/// path, the detailed checks only for a point that fails it.)
#[inline]
pub(crate) fn stored_point<C: Coord, const D: usize>(point: &[f64; D]) -> Result<Rect<D>> {
    let out: [f64; D] = std::array::from_fn(|d| C::round_near(point[d]));
    let finite = point.iter().chain(out.iter()).fold(true, |ok, x| ok & x.is_finite());
    if finite {
        return Ok(Rect::point(out));
    }
    Rect::point(*point).validate()?;
    Err(Error::InvalidBox { reason: format!("{point:?} lies outside the range of {}", C::NAME) })
}

/// The points of a point tree's bulk load (`D` coordinates each) as it will store
/// them: validated, and rounded to the nearest `C` (a copy only for f32).
pub(crate) fn stored_points<C: Coord, const D: usize>(coords: &[f64]) -> Result<std::borrow::Cow<'_, [f64]>> {
    if C::BYTES == 8 {
        if coords.iter().fold(true, |ok, x| ok & x.is_finite()) {
            return Ok(std::borrow::Cow::Borrowed(coords));
        }
        for c in coords.chunks_exact(D) {
            Rect::<D>::point(c.try_into().expect("chunks_exact gives D coordinates")).validate()?;
        }
    }
    let mut out = Vec::with_capacity(coords.len());
    for c in coords.chunks_exact(D) {
        out.extend_from_slice(&stored_point::<C, D>(&c.try_into().expect("chunks_exact gives D coordinates"))?.min);
    }
    Ok(std::borrow::Cow::Owned(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f32_rounds_outward_and_rejects_overflow() {
        let r = stored_rect::<f32, 1>(&Rect::new([0.1], [0.1])).expect("0.1 fits in f32");
        assert!(r.min[0] <= 0.1 && 0.1 <= r.max[0] && r.min[0] < r.max[0]);
        assert!(stored_rect::<f32, 1>(&Rect::new([1e300], [1e300])).is_err());
        let exact = stored_rect::<f32, 1>(&Rect::new([0.5], [0.75])).expect("exact in f32");
        assert_eq!(exact, Rect::new([0.5], [0.75]));
    }
}
