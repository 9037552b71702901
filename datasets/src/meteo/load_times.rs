//! Where a parallel load's time goes, per thread: CPU time and time spent blocked on
//! the hand-over channels ([`LoadTimes`], filled by `parallel.rs` and `sort_feed.rs`).
//! The load's wall time on two cores is bounded below by its busiest thread and by
//! half its CPU; waits show where the pipeline stalls.
//!
//! The CPU clocks are the caller's ([`CpuClock`]): the library reads no
//! system-specific source; `quire load-csv` passes Linux's `/proc` readers and prints
//! the times. Without clocks only the waits are counted.

use std::time::{Duration, Instant};

/// Per-thread times of one `load_parallel` (CPU times zero without a [`CpuClock`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadTimes {
    /// Calling thread: CPU while loading (CSV parsing, validation, chunk filling).
    pub parse_cpu: Duration,
    /// Calling thread: blocked handing full chunks to the index thread.
    pub parse_wait: Duration,
    /// Index thread: CPU up to the last chunk (queue, B+tree, points to the sorter).
    pub index_cpu: Duration,
    /// Index thread: waiting for chunks.
    pub index_wait: Duration,
    /// Index thread: blocked handing points to the sort thread.
    pub index_sort_wait: Duration,
    /// Sort thread: CPU (Hilbert keys, run sorting and writing).
    pub sort_cpu: Duration,
    /// Sort thread: waiting for points.
    pub sort_wait: Duration,
    /// Index thread: CPU after the last chunk, before the commit (R-tree finish: last
    /// run, packing of the merged entries; B+tree branches; metadata).
    pub tail_index_cpu: Duration,
    /// The whole process's CPU over the same span (adds the merge thread, the last
    /// run's sort workers and any thread of the caller's).
    pub tail_process_cpu: Duration,
    /// Index thread: CPU of the commit(s).
    pub commit_cpu: Duration,
}

/// The CPU clocks a load reads for its [`LoadTimes`]; the default reads zero.
#[derive(Debug, Clone, Copy)]
pub struct CpuClock {
    /// CPU time of the calling thread so far.
    pub thread: fn() -> Duration,
    /// CPU time of the whole process so far.
    pub process: fn() -> Duration,
}

impl Default for CpuClock {
    fn default() -> Self {
        CpuClock { thread: || Duration::ZERO, process: || Duration::ZERO }
    }
}

/// Runs `blocking` and adds the wall time it took to `waited`.
pub(crate) fn timed<T>(waited: &mut Duration, blocking: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let result = blocking();
    *waited += started.elapsed();
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `timed` adds what the closure took and returns its result; the default clock
    /// reads zero.
    #[test]
    fn timed_adds_the_wait_and_the_default_clock_reads_zero() {
        let mut waited = Duration::from_millis(1);
        assert_eq!(timed(&mut waited, || std::thread::sleep(Duration::from_millis(5))), ());
        assert!(waited >= Duration::from_millis(6));
        let clock = CpuClock::default();
        assert_eq!(((clock.thread)(), (clock.process)()), (Duration::ZERO, Duration::ZERO));
    }
}
