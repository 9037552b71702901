//! Timing: wall clock and process CPU time (getrusage, user + system, all threads)
//! around one operation, and the median/min/max summary over repeats.
//! CPU time is the figure robust to noisy neighbours on a shared machine.

use std::time::Instant;

/// One timed execution of an operation over `n` items.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    pub wall_s: f64,
    pub cpu_s: f64,
    pub n: u64,
}

/// Process CPU time (user + system) in seconds.
pub fn cpu_seconds() -> f64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a complete rusage into the pointed-to, properly sized
    // and aligned buffer; RUSAGE_SELF is always a valid `who`.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
    assert_eq!(rc, 0, "getrusage(RUSAGE_SELF) cannot fail with valid arguments");
    // SAFETY: the call above returned 0, so the buffer is initialised.
    let usage = unsafe { usage.assume_init() };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// Runs `f` once and measures it; `n` is the number of operations it performs.
pub fn time<T, E>(n: u64, f: impl FnOnce() -> Result<T, E>) -> Result<(T, Sample), E> {
    let cpu0 = cpu_seconds();
    let t0 = Instant::now();
    let out = f()?;
    let wall_s = t0.elapsed().as_secs_f64();
    let cpu_s = cpu_seconds() - cpu0;
    Ok((out, Sample { wall_s, cpu_s, n }))
}

/// Times passes of `pass` (each one pass over a set of `len` queries) until at least
/// `min_s` of wall time has gone by, so that a set whose one pass takes a millisecond is
/// still timed over enough work for the clock and CPU accounting to mean something.
/// Every pass after the first is compared with it by `same` (a query set answers the
/// same way each time); the first pass's answer is returned, `n` counts every query.
pub fn time_passes<T, E>(
    len: u64,
    min_s: f64,
    mut pass: impl FnMut() -> Result<T, E>,
    mut same: impl FnMut(&T, &T, u64) -> Result<(), E>,
) -> Result<(T, Sample), E> {
    let cpu0 = cpu_seconds();
    let t0 = Instant::now();
    let first = pass()?;
    let mut passes = 1;
    while t0.elapsed().as_secs_f64() < min_s {
        let again = pass()?;
        passes += 1;
        same(&first, &again, passes)?;
    }
    let wall_s = t0.elapsed().as_secs_f64();
    let cpu_s = cpu_seconds() - cpu0;
    Ok((first, Sample { wall_s, cpu_s, n: len * passes }))
}

/// Median, minimum and maximum of a non-empty list.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Summary {
    /// Summarises `values`; the median of an even count is the mean of the middle two.
    pub fn of(values: &[f64]) -> Summary {
        assert!(!values.is_empty(), "a summary needs at least one value");
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let mid = v.len() / 2;
        let median = if v.len() % 2 == 1 { v[mid] } else { (v[mid - 1] + v[mid]) / 2.0 };
        Summary { median, min: v[0], max: v[v.len() - 1] }
    }
}

/// The p-th percentile (0..=100) of latencies, nearest-rank.
pub fn percentile(values: &mut [f64], p: f64) -> f64 {
    assert!(!values.is_empty(), "a percentile needs at least one value");
    values.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * values.len() as f64).ceil() as usize;
    values[rank.clamp(1, values.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_median_min_max() {
        // Proves odd and even medians and the extremes.
        let s = Summary::of(&[3.0, 1.0, 2.0]);
        assert_eq!((s.median, s.min, s.max), (2.0, 1.0, 3.0));
        let s = Summary::of(&[4.0, 1.0, 2.0, 3.0]);
        assert_eq!((s.median, s.min, s.max), (2.5, 1.0, 4.0));
    }

    #[test]
    fn passes_repeat_until_the_minimum_time_and_compare_answers() {
        // Proves a zero minimum runs one pass, a positive one several, each counted,
        // and that a pass answering differently stops the timing with the error.
        let (a, s) = time_passes(10, 0.0, || Ok::<_, String>(7), |_, _, _| Ok(())).unwrap();
        assert_eq!((a, s.n), (7, 10));
        let (_, s) = time_passes(10, 0.002, || Ok::<_, String>(7), |_, _, _| Ok(())).unwrap();
        assert!(s.n > 10 && s.n % 10 == 0);
        let mut k = 0;
        let changing = || {
            k += 1;
            Ok::<_, String>(k)
        };
        let differ = |a: &i32, b: &i32, pass: u64| if a == b { Ok(()) } else { Err(format!("pass {pass}")) };
        assert_eq!(time_passes(1, 1.0, changing, differ).unwrap_err(), "pass 2");
    }

    #[test]
    fn percentile_nearest_rank() {
        // Proves p99 of 1..=100 is 99 and p100 the maximum.
        let mut v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&mut v, 99.0), 99.0);
        assert_eq!(percentile(&mut v, 100.0), 100.0);
    }

    #[test]
    fn cpu_time_is_monotonic() {
        // Proves the CPU clock never goes backwards across busy work.
        let a = cpu_seconds();
        let mut x = 0u64;
        for i in 0..1_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        assert!(cpu_seconds() >= a);
    }
}
