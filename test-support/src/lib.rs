//! quiredb-test-support: the scaffolding every randomised test of the workspace shares
//! (a dev-dependency only, never published). One seed variable, [`SEED_VAR`]
//! (`QUIRE_SEED`), read by [`seed`] and printed with the line that replays the run; the
//! per-crate names tests used before are still read as aliases ([`SEED_ALIASES`]). One
//! generator, [`Rng`] (splitmix64: a 64-bit state, every seed a good stream, no
//! dependency on how `rand` seeds its generators), which also implements `rand`'s
//! `RngCore` so tests can draw from `rand::Rng`'s methods. And the clock the probes in
//! `structures/examples` read their CPU time from, [`thread_cpu_ns`].
//!
//! ```
//! use quiredb_test_support::{Rng, seed};
//! let mut rng = Rng::new(seed(0x5eed));
//! assert!(rng.below(10) < 10);
//! ```
#![forbid(unsafe_code)]

/// The environment variable that fixes the seed of every randomised test.
pub const SEED_VAR: &str = "QUIRE_SEED";

/// Names the tests read before [`SEED_VAR`] existed, still honoured (after it).
pub const SEED_ALIASES: [&str; 6] =
    ["QUIREDB_TEST_SEED", "QUIRE_TEST_SEED", "RTREE_SEED", "QUEUE_SEED", "RECORD_SEED", "BLOB_SEED"];

/// The seed of this run: [`SEED_VAR`] (or an alias) when set to a number, else
/// `default`. Prints the seed and how to replay it (shown when a test fails).
pub fn seed(default: u64) -> u64 {
    let seed = configured().unwrap_or(default);
    println!("seed {seed} (replay: {SEED_VAR}={seed})");
    seed
}

/// Like [`seed`], but a fresh random seed when none is set, so that every run tries a
/// new case (the printed seed replays a failure).
pub fn random_seed() -> u64 {
    seed(rand::random())
}

/// The seed set in the environment, if any.
fn configured() -> Option<u64> {
    std::iter::once(SEED_VAR)
        .chain(SEED_ALIASES)
        .find_map(|name| std::env::var(name).ok().and_then(|value| value.trim().parse().ok()))
}

/// splitmix64, replayable from its seed.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// The generator whose stream `seed` names.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// An index into a slice of `len` items (0 when `len` is 0).
    pub fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }

    /// A float in `[0, 1)` (53 random bits).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// `len` bytes, each below `alphabet` (a small alphabet makes shared prefixes).
    pub fn bytes(&mut self, len: usize, alphabet: u8) -> Vec<u8> {
        (0..len).map(|_| self.below(u64::from(alphabet)) as u8).collect()
    }
}

impl rand::RngCore for Rng {
    fn next_u32(&mut self) -> u32 {
        (self.next() >> 32) as u32
    }

    fn next_u64(&mut self) -> u64 {
        self.next()
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        for chunk in dest.chunks_mut(8) {
            chunk.copy_from_slice(&self.next().to_le_bytes()[..chunk.len()]);
        }
    }
}

/// CPU time of the calling thread so far, in nanoseconds, from
/// `/proc/thread-self/schedstat` (0 where the kernel does not offer it): the probes
/// print it beside a phase's wall time, which on a shared machine says less.
pub fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|stat| stat.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_seed_gives_one_stream_and_bounds_hold() {
        // Proves replay: equal seeds, equal streams; and the helpers' ranges.
        let (mut a, mut b) = (Rng::new(42), Rng::new(42));
        let first: Vec<u64> = (0..8).map(|_| a.next()).collect();
        assert_eq!(first, (0..8).map(|_| b.next()).collect::<Vec<_>>());
        assert_ne!(first[0], Rng::new(43).next(), "neighbouring seeds differ");
        for _ in 0..1000 {
            assert!(a.below(7) < 7 && a.index(3) < 3);
            assert!((0.0..1.0).contains(&a.unit()));
            assert!(a.bytes(3, 4).iter().all(|&byte| byte < 4));
        }
        assert_eq!(a.below(0), 0);
    }
}
