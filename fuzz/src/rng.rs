//! A small seeded random generator (SplitMix64) for the mutators and the driver.
//!
//! Deterministic by construction: the same seed gives the same stream on every
//! machine, so an input is named by `(seed, index)` alone ([`Rng::for_input`]).
//! Not for cryptography. Read next: `havoc.rs`.

/// SplitMix64 (Steele, Lea, Flood 2014): one `u64` of state, full period 2^64.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator started at `seed`.
    pub fn new(seed: u64) -> Self {
        Rng { state: seed }
    }

    /// The generator of input `index` of a run seeded with `seed`: independent of
    /// every other input, so any input can be regenerated alone.
    pub fn for_input(seed: u64, index: u64) -> Self {
        let mut mixer = Rng::new(seed ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03));
        Rng::new(mixer.next_u64() ^ index)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (0 when `bound` is 0); the tiny modulo bias is harmless here.
    pub fn below(&mut self, bound: usize) -> usize {
        if bound == 0 { 0 } else { (self.next_u64() % bound as u64) as usize }
    }

    /// A number in `low..=high`.
    pub fn between(&mut self, low: usize, high: usize) -> usize {
        low + self.below(high - low + 1)
    }

    /// True with probability `numerator / denominator`.
    pub fn ratio(&mut self, numerator: usize, denominator: usize) -> bool {
        self.below(denominator) < numerator
    }

    /// One random byte.
    pub fn byte(&mut self) -> u8 {
        self.next_u64() as u8
    }

    /// A uniformly chosen element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// A length biased towards small values: 1, 2, 4, … up to `max` are equally likely
    /// as orders of magnitude.
    pub fn small_len(&mut self, max: usize) -> usize {
        let bits = usize::BITS - max.max(1).leading_zeros();
        let cap = 1usize << self.below(bits as usize + 1).min(usize::BITS as usize - 1);
        self.between(1, cap.min(max.max(1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stream is a pure function of the seed and inputs do not share streams.
    #[test]
    fn streams_are_replayable_and_distinct() {
        let draw = |mut rng: Rng| (0..4).map(|_| rng.next_u64()).collect::<Vec<_>>();
        assert_eq!(draw(Rng::new(7)), draw(Rng::new(7)));
        assert_ne!(draw(Rng::for_input(7, 0)), draw(Rng::for_input(7, 1)));
        let mut rng = Rng::new(1);
        assert!((0..1000).all(|_| rng.between(3, 5) <= 5 && rng.small_len(10) <= 10));
    }
}
