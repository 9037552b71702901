//! Boxes in D dimensions ([`Rect`]) and the geometry the R*-tree needs: union, area,
//! margin, overlap, intersection and containment tests, and the minimum distance from
//! a point to a box. All arithmetic is in f64, whatever the stored coordinate type.
//!
//! Invariant: every `Rect` that reaches a page is valid ([`Rect::validate`]): finite
//! coordinates and `min[d] <= max[d]` in every dimension. Read next: `coord.rs`.

use crate::error::{Error, Result};

/// An axis-aligned box; a point is a box with `min == max`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rect<const D: usize> {
    /// Lower corner.
    pub min: [f64; D],
    /// Upper corner.
    pub max: [f64; D],
}

impl<const D: usize> Rect<D> {
    /// The box `[min, max]`.
    pub fn new(min: [f64; D], max: [f64; D]) -> Self {
        Rect { min, max }
    }

    /// The degenerate box of one point.
    pub fn point(p: [f64; D]) -> Self {
        Rect { min: p, max: p }
    }

    /// The identity of [`Rect::union`]: contains nothing.
    pub(crate) fn empty() -> Self {
        Rect { min: [f64::INFINITY; D], max: [f64::NEG_INFINITY; D] }
    }

    /// Checks that the box can be stored: finite coordinates, `min <= max`.
    pub fn validate(&self) -> Result<()> {
        for d in 0..D {
            let (lo, hi) = (self.min[d], self.max[d]);
            if !lo.is_finite() || !hi.is_finite() {
                return Err(Error::InvalidBox {
                    reason: format!("coordinate of dimension {d} is not finite ([{lo}, {hi}])"),
                });
            }
            if lo > hi {
                return Err(Error::InvalidBox { reason: format!("min {lo} > max {hi} in dimension {d}") });
            }
        }
        Ok(())
    }

    /// The smallest box holding both.
    pub fn union(&self, other: &Self) -> Self {
        let mut out = *self;
        out.expand(other);
        out
    }

    /// Grows `self` to hold `other`.
    pub fn expand(&mut self, other: &Self) {
        for d in 0..D {
            self.min[d] = self.min[d].min(other.min[d]);
            self.max[d] = self.max[d].max(other.max[d]);
        }
    }

    /// Product of the extents (0 for a degenerate box).
    pub fn area(&self) -> f64 {
        (0..D).map(|d| self.max[d] - self.min[d]).product()
    }

    /// Sum of the extents (the R* "margin", up to a constant factor).
    pub fn margin(&self) -> f64 {
        (0..D).map(|d| self.max[d] - self.min[d]).sum()
    }

    /// Volume of the intersection (0 when disjoint).
    pub fn overlap(&self, other: &Self) -> f64 {
        let mut volume = 1.0;
        for d in 0..D {
            let extent = self.max[d].min(other.max[d]) - self.min[d].max(other.min[d]);
            if extent <= 0.0 {
                return 0.0;
            }
            volume *= extent;
        }
        volume
    }

    /// True when the closed boxes share a point.
    pub fn intersects(&self, other: &Self) -> bool {
        (0..D).all(|d| self.min[d] <= other.max[d] && other.min[d] <= self.max[d])
    }

    /// True when `other` lies inside `self` (closed boxes).
    pub fn contains(&self, other: &Self) -> bool {
        (0..D).all(|d| self.min[d] <= other.min[d] && other.max[d] <= self.max[d])
    }

    /// Centre along dimension `d`.
    pub fn center(&self, d: usize) -> f64 {
        0.5 * (self.min[d] + self.max[d])
    }

    /// Squared Euclidean distance from `p` to the nearest point of the box.
    pub fn min_dist2(&self, p: &[f64; D]) -> f64 {
        let mut sum = 0.0;
        for (d, x) in p.iter().enumerate() {
            let gap = (self.min[d] - x).max(x - self.max[d]).max(0.0);
            sum += gap * gap;
        }
        sum
    }
}

/// Checks that a query point is finite.
pub(crate) fn validate_point<const D: usize>(p: &[f64; D]) -> Result<()> {
    Rect::point(*p).validate()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_of_two_boxes() {
        let a = Rect::new([0.0, 0.0], [2.0, 2.0]);
        let b = Rect::new([1.0, 1.0], [3.0, 4.0]);
        assert_eq!(a.union(&b), Rect::new([0.0, 0.0], [3.0, 4.0]));
        assert_eq!(a.overlap(&b), 1.0);
        assert_eq!(a.area(), 4.0);
        assert_eq!(b.margin(), 5.0);
        assert!(a.intersects(&b) && !a.contains(&b));
        assert_eq!(b.min_dist2(&[0.0, 0.0]), 2.0);
        assert_eq!(a.min_dist2(&[1.0, 1.0]), 0.0);
    }

    #[test]
    fn invalid_boxes_are_rejected() {
        assert!(Rect::new([f64::NAN], [1.0]).validate().is_err());
        assert!(Rect::new([0.0], [f64::INFINITY]).validate().is_err());
        assert!(Rect::new([2.0], [1.0]).validate().is_err());
        assert!(Rect::new([1.0], [1.0]).validate().is_ok());
    }
}
