//! The Hilbert sort key of the Hilbert bulk loads (`stream.rs`, `bulk.rs`): the centre
//! of a box, scaled into the bounding box of all centres and quantised to
//! `min(32, 64 / D)` bits per dimension, mapped to its index on the D-dimensional
//! Hilbert curve (Skilling, "Programming the Hilbert curve", AIP Conf. Proc. 707,
//! 2004: axes to transposed index, then bit interleaving). Consecutive keys are
//! neighbours in space, so cutting the sorted sequence into runs of `max` entries
//! gives compact nodes, and the order can be produced by a streaming external sort.

use super::geom::Rect;

/// Maps box centres to Hilbert indices within fixed bounds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HilbertKey<const D: usize> {
    lo: [f64; D],
    scale: [f64; D],
    bits: u32,
    /// `spread[b]`: the 8 bits of `b` moved to bits `0, D, 2D, …` (the interleave).
    spread: [u64; 256],
}

impl<const D: usize> HilbertKey<D> {
    /// A key for centres inside `bounds` (centres outside are clamped to it).
    pub fn new(bounds: &Rect<D>) -> Self {
        let bits = (64 / D.max(1)).min(32) as u32;
        let top = ((1u64 << bits) - 1) as f64;
        let mut scale = [0.0; D];
        let mut lo = [0.0; D];
        for d in 0..D {
            // Halves keep the span finite even for boxes near ±f64::MAX.
            lo[d] = bounds.min[d] / 2.0;
            let span = bounds.max[d] / 2.0 - lo[d];
            scale[d] = if span > 0.0 && span.is_finite() { top / span } else { 0.0 };
        }
        let spread =
            std::array::from_fn(|b| (0..8).filter(|j| j * D < 64 && b >> j & 1 == 1).map(|j| 1u64 << (j * D)).sum());
        HilbertKey { lo, scale, bits, spread }
    }

    /// The centre of `rect` (computed without overflow) in every dimension.
    #[inline]
    pub fn centre(rect: &Rect<D>) -> [f64; D] {
        std::array::from_fn(|d| rect.min[d] / 2.0 + rect.max[d] / 2.0)
    }

    /// The Hilbert index of the centre of `rect`.
    #[inline]
    pub fn key(&self, rect: &Rect<D>) -> u64 {
        let top = ((1u64 << self.bits) - 1) as f64;
        let mut axes = [0u32; D];
        for (d, axis) in axes.iter_mut().enumerate() {
            let half_centre = rect.min[d] / 4.0 + rect.max[d] / 4.0;
            let scaled = (half_centre - self.lo[d]) * self.scale[d];
            *axis = scaled.clamp(0.0, top) as u32;
        }
        self.index(&mut axes)
    }

    /// [`hilbert_index`] of `axes`, interleaving by table. Scratches `axes`.
    #[inline]
    fn index(&self, axes: &mut [u32; D]) -> u64 {
        if self.bits == 0 || D == 0 {
            return 0;
        }
        transform(axes, self.bits);
        let mut key = 0u64;
        for (a, &axis) in axes.iter().enumerate() {
            let mut spread = 0u64;
            for byte in 0..self.bits.div_ceil(8) {
                let part = self.spread[(axis >> (8 * byte)) as usize & 0xFF];
                spread |= part << (8 * byte as usize * D);
            }
            key |= spread << (D - 1 - a);
        }
        key
    }
}

/// The Hilbert index of `axes` (each `bits` wide; `D · bits ≤ 64`). Scratches `axes`.
/// Branch-free form of Skilling's transform (the data-dependent branches of the
/// textbook loop mispredict about half the time); equal to `reference_index`.
#[cfg(test)]
pub(crate) fn hilbert_index<const D: usize>(axes: &mut [u32; D], bits: u32) -> u64 {
    if bits == 0 || D == 0 {
        return 0;
    }
    transform(axes, bits);
    interleave(axes, bits)
}

/// Skilling's axes-to-transposed-index step, in place (`bits ≥ 1`).
#[inline]
fn transform<const D: usize>(axes: &mut [u32; D], bits: u32) {
    // Inverse undo of the excess work.
    let mut q = 1u32 << (bits - 1);
    while q > 1 {
        let p = q - 1;
        for i in 0..D {
            let set = 0u32.wrapping_sub((axes[i] & q != 0) as u32);
            let t = (axes[0] ^ axes[i]) & p & !set;
            axes[0] ^= (p & set) | t;
            axes[i] ^= t;
        }
        q >>= 1;
    }
    // Gray encode.
    for i in 1..D {
        axes[i] ^= axes[i - 1];
    }
    let mut t = 0;
    let last = axes[D - 1];
    for j in 1..bits {
        // Bit j of the last axis set: flip bits below j.
        t ^= ((1u32 << j) - 1) & 0u32.wrapping_sub((last >> j) & 1);
    }
    for axis in axes.iter_mut() {
        *axis ^= t;
    }
}

/// The bits of `axes`, most significant bit of every axis first.
#[cfg(test)]
fn interleave<const D: usize>(axes: &[u32; D], bits: u32) -> u64 {
    let mut key = 0u64;
    for j in (0..bits).rev() {
        for axis in axes.iter() {
            key = (key << 1) | u64::from((axis >> j) & 1);
        }
    }
    key
}

/// The textbook form of [`hilbert_index`] (Skilling 2004), kept as the test oracle.
#[cfg(test)]
fn reference_index<const D: usize>(axes: &mut [u32; D], bits: u32) -> u64 {
    if bits == 0 || D == 0 {
        return 0;
    }
    let m = 1u32 << (bits - 1);
    let mut q = m;
    while q > 1 {
        let p = q - 1;
        for i in 0..D {
            if axes[i] & q != 0 {
                axes[0] ^= p;
            } else {
                let t = (axes[0] ^ axes[i]) & p;
                axes[0] ^= t;
                axes[i] ^= t;
            }
        }
        q >>= 1;
    }
    for i in 1..D {
        axes[i] ^= axes[i - 1];
    }
    let mut t = 0;
    q = m;
    while q > 1 {
        if axes[D - 1] & q != 0 {
            t ^= q - 1;
        }
        q >>= 1;
    }
    for axis in axes.iter_mut() {
        *axis ^= t;
    }
    interleave(axes, bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Walking the keys 0, 1, 2, … of a 2-D curve visits every cell once, each a
    /// unit step from the one before (the defining property of the Hilbert curve).
    #[test]
    fn consecutive_keys_are_adjacent_cells() {
        for (bits, dims) in [(4u32, 2usize), (3, 3)] {
            let side = 1u32 << bits;
            let cells = (side as usize).pow(dims as u32);
            let mut by_key = vec![None; cells];
            for c in 0..cells {
                let mut axes = [0u32; 3];
                let mut rest = c as u32;
                for axis in axes.iter_mut().take(dims) {
                    *axis = rest % side;
                    rest /= side;
                }
                let key = if dims == 2 {
                    hilbert_index(&mut [axes[0], axes[1]], bits)
                } else {
                    let mut scratch = axes;
                    hilbert_index(&mut scratch, bits)
                };
                assert!(by_key[key as usize].is_none(), "key {key} given twice");
                by_key[key as usize] = Some(axes);
            }
            for pair in by_key.windows(2) {
                let (a, b) = (pair[0].expect("every key"), pair[1].expect("every key"));
                let step: u32 = a.iter().zip(&b).map(|(x, y)| x.abs_diff(*y)).sum();
                assert_eq!(step, 1, "{a:?} -> {b:?} in {dims}-D");
            }
        }
    }

    /// The branch-free transform equals the textbook one on random axes of every width.
    #[test]
    fn branch_free_index_equals_the_reference() {
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        fn check<const D: usize>(next: &mut dyn FnMut() -> u64) {
            for bits in 1..=(64 / D as u32).min(32) {
                for _ in 0..2000 {
                    let axes: [u32; D] = std::array::from_fn(|_| (next() as u32) & (u32::MAX >> (32 - bits)));
                    let (mut a, mut b) = (axes, axes);
                    assert_eq!(hilbert_index(&mut a, bits), reference_index(&mut b, bits), "{axes:?} {bits} bits");
                }
            }
        }
        let key5 = HilbertKey::<5>::new(&Rect::new([0.0; 5], [1.0; 5]));
        for _ in 0..5000 {
            let axes: [u32; 5] = std::array::from_fn(|_| (next() as u32) & 0xFFF);
            let (mut a, mut b) = (axes, axes);
            assert_eq!(key5.index(&mut a), reference_index(&mut b, 12), "{axes:?} by table");
        }
        let key3 = HilbertKey::<3>::new(&Rect::new([0.0; 3], [1.0; 3]));
        for _ in 0..5000 {
            let axes: [u32; 3] = std::array::from_fn(|_| (next() as u32) & 0x1F_FFFF);
            let (mut a, mut b) = (axes, axes);
            assert_eq!(key3.index(&mut a), reference_index(&mut b, 21), "{axes:?} by table");
        }
        check::<1>(&mut next);
        check::<2>(&mut next);
        check::<3>(&mut next);
        check::<5>(&mut next);
        check::<8>(&mut next);
    }

    #[test]
    fn keys_clamp_outside_the_bounds_and_survive_huge_values() {
        let key = HilbertKey::new(&Rect::new([0.0, 0.0], [1.0, 1.0]));
        assert_eq!(key.key(&Rect::point([-5.0, -5.0])), key.key(&Rect::point([0.0, 0.0])));
        let huge = HilbertKey::new(&Rect::new([-f64::MAX; 2], [f64::MAX; 2]));
        let _ = huge.key(&Rect::point([f64::MAX, -f64::MAX]));
    }
}
