//! Where a parallel load's time goes, per thread: CPU time and time spent blocked on
//! the hand-over channels ([`LoadTimes`], filled by `parallel.rs`, printed by
//! `quire load-csv`). The load's wall time on two cores is bounded below by its
//! busiest thread and by half its CPU; waits show where the pipeline stalls.
//!
//! Sources (Linux): a thread's CPU from `/proc/thread-self/schedstat` (nanoseconds on
//! the CPU), the process's from `/proc/self/stat` (user + system, 1/100 s ticks, with
//! the threads that already ended). Elsewhere both read as zero.

use std::time::{Duration, Instant};

/// Per-thread times of one `load_parallel` (all zero on systems without `/proc`).
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
    /// run's sort workers and the page-cache releaser).
    pub tail_process_cpu: Duration,
    /// Index thread: CPU of the commit(s).
    pub commit_cpu: Duration,
}

/// CPU time of the calling thread so far (zero when unknown).
pub fn thread_cpu() -> Duration {
    let Ok(text) = std::fs::read_to_string("/proc/thread-self/schedstat") else { return Duration::ZERO };
    let nanos = text.split_whitespace().next().and_then(|field| field.parse().ok()).unwrap_or(0);
    Duration::from_nanos(nanos)
}

/// User + system CPU time of this process so far (zero when unknown).
pub fn process_cpu() -> Duration {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else { return Duration::ZERO };
    // After the command name (which may hold spaces): state is field 3, utime and
    // stime are fields 14 and 15.
    let Some(rest) = stat.rfind(')').and_then(|at| stat.get(at + 2..)) else { return Duration::ZERO };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|field| field.parse::<u64>().ok()).unwrap_or(0);
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

/// Runs `blocking` and adds the wall time it took to `waited`.
pub fn timed<T>(waited: &mut Duration, blocking: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let result = blocking();
    *waited += started.elapsed();
    result
}

/// Seconds with two decimals.
fn secs(duration: Duration) -> String {
    format!("{:.2}", duration.as_secs_f64())
}

impl std::fmt::Display for LoadTimes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tail_other = self.tail_process_cpu.saturating_sub(self.tail_index_cpu);
        write!(
            f,
            "parse thread {} s CPU ({} s blocked handing chunks over); index thread {} s CPU \
             ({} s waiting for chunks, {} s blocked handing points over); sort thread {} s CPU \
             ({} s waiting); after the last row: index thread {} s CPU, other threads {} s CPU \
             (merge, last run, releaser); commit {} s CPU",
            secs(self.parse_cpu),
            secs(self.parse_wait),
            secs(self.index_cpu),
            secs(self.index_wait),
            secs(self.index_sort_wait),
            secs(self.sort_cpu),
            secs(self.sort_wait),
            secs(self.tail_index_cpu),
            secs(tail_other),
            secs(self.commit_cpu),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Thread and process CPU grow with work done and never go backwards; `timed`
    /// adds what the closure took.
    #[test]
    fn clocks_move_forward() {
        let (thread, process) = (thread_cpu(), process_cpu());
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        assert!(thread_cpu() >= thread && process_cpu() >= process);
        let mut waited = Duration::ZERO;
        assert_eq!(timed(&mut waited, || std::thread::sleep(Duration::from_millis(5))), ());
        assert!(waited >= Duration::from_millis(5));
    }
}
