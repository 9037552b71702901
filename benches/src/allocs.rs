//! Counting global allocator (the `stats_alloc` crate, no unsafe code here): every
//! allocation of the process goes through `std::alloc::System` with atomic counters
//! kept beside it, so T8 can report allocator calls per query. The counters cost a
//! few relaxed atomic additions per allocation, paid equally by every engine of every
//! workload of this binary.

use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};
use std::alloc::System;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Allocator calls so far in the whole process: allocations plus reallocations
/// (a `Vec` growing in place or moving both count; frees do not).
pub fn calls() -> u64 {
    let stats = GLOBAL.stats();
    (stats.allocations + stats.reallocations) as u64
}

/// Bytes handed out by fresh allocations so far (reallocations not included).
pub fn bytes() -> u64 {
    GLOBAL.stats().bytes_allocated as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_a_vec_allocation() {
        // Proves the counter sees a heap allocation made by this thread (other test
        // threads may add more, never fewer).
        let before = calls();
        let v: Vec<u64> = std::hint::black_box(Vec::with_capacity(1000));
        assert!(calls() > before);
        assert!(bytes() >= 8000);
        drop(v);
    }
}
