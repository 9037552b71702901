//! The CPU clocks `quire load-csv` hands a parallel load
//! (`quiredb_datasets::meteo::CpuClock`) and how it prints the per-thread times it
//! gets back (the `threads:` line).
//!
//! Sources (Linux): a thread's CPU from `/proc/thread-self/schedstat` (nanoseconds on
//! the CPU), the process's from `/proc/self/stat` (user + system, 1/100 s ticks, with
//! the threads that already ended). Elsewhere both read as zero.

use quiredb_datasets::meteo::{CpuClock, LoadTimes};
use std::time::Duration;

/// The `/proc` clocks.
pub fn proc_clock() -> CpuClock {
    CpuClock { thread: thread_cpu, process: || process_cpu().unwrap_or_default() }
}

/// CPU time of the calling thread so far (zero when unknown).
fn thread_cpu() -> Duration {
    let Ok(text) = std::fs::read_to_string("/proc/thread-self/schedstat") else { return Duration::ZERO };
    let nanos = text.split_whitespace().next().and_then(|field| field.parse().ok()).unwrap_or(0);
    Duration::from_nanos(nanos)
}

/// User + system CPU time of this process so far, if known.
pub fn process_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // After the command name (which may hold spaces): state is field 3, utime and
    // stime are fields 14 and 15.
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i)?.parse::<u64>().ok();
    Some(Duration::from_millis((ticks(11)? + ticks(12)?) * 10))
}

/// Seconds with two decimals.
fn secs(duration: Duration) -> String {
    format!("{:.2}", duration.as_secs_f64())
}

/// The `threads:` line of `load-csv`.
pub fn describe(times: &LoadTimes) -> String {
    let tail_other = times.tail_process_cpu.saturating_sub(times.tail_index_cpu);
    format!(
        "parse thread {} s CPU ({} s blocked handing chunks over); index thread {} s CPU \
         ({} s waiting for chunks, {} s blocked handing points over); sort thread {} s CPU \
         ({} s waiting); after the last row: index thread {} s CPU, other threads {} s CPU \
         (merge, last run, page-cache releaser); commit {} s CPU",
        secs(times.parse_cpu),
        secs(times.parse_wait),
        secs(times.index_cpu),
        secs(times.index_wait),
        secs(times.index_sort_wait),
        secs(times.sort_cpu),
        secs(times.sort_wait),
        secs(times.tail_index_cpu),
        secs(tail_other),
        secs(times.commit_cpu),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_move_forward() {
        // Proves: thread and process CPU grow with work done and never go backwards.
        let clock = proc_clock();
        let (thread, process) = ((clock.thread)(), (clock.process)());
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        assert!((clock.thread)() >= thread && (clock.process)() >= process);
        #[cfg(target_os = "linux")]
        assert!((clock.thread)() > thread, "the loop took CPU time");
    }

    #[test]
    fn the_threads_line_names_each_time() {
        // Proves: each field lands in its place, and the tail's other threads are the
        // process's tail CPU less the index thread's.
        let ms = Duration::from_millis;
        let times = LoadTimes {
            parse_cpu: ms(1_000),
            tail_index_cpu: ms(500),
            tail_process_cpu: ms(2_250),
            commit_cpu: ms(30),
            ..LoadTimes::default()
        };
        let line = describe(&times);
        assert!(line.starts_with("parse thread 1.00 s CPU (0.00 s blocked"), "{line}");
        assert!(line.contains("index thread 0.50 s CPU, other threads 1.75 s CPU"), "{line}");
        assert!(line.ends_with("commit 0.03 s CPU"), "{line}");
    }
}
