//! T7 (writers) — group commit: 1, 2, 4 and 8 threads, each with its own handle,
//! doing one-operation durable commits (upserts of keys of their own) for a fixed
//! time: durable commits/s in all and p50/p99 commit latency per writer count. Peers
//! serialise their writers (SQLite WAL waits on its lock, LMDB and redb on their
//! single writer); `quiredb` (group commit, the default) shares appends between
//! threads, `quiredb-solo` is the same without.

use crate::check::Checks;
use crate::error::{BenchError, Result};
use crate::family::KvEngine;
use crate::measure::{Sample, cpu_seconds, percentile};
use crate::results::{Collector, Unit};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Writer thread counts.
pub const WRITERS: [usize; 4] = [1, 2, 4, 8];

/// One writer's run: commits made and the latency of each, in seconds.
type Run = (u64, Vec<f64>);

/// Runs every writer count on `engine` for `seconds` each and records the figures.
pub fn writers(
    engine: &dyn KvEngine,
    id: &str,
    pairs: &[([u8; 12], [u8; 20])],
    seconds: f64,
    c: &mut Collector,
    checks: &mut Checks,
) -> Result<()> {
    for threads in WRITERS {
        let stop = Arc::new(AtomicBool::new(false));
        let (cpu0, t0) = (cpu_seconds(), Instant::now());
        let handles = (0..threads)
            .map(|thread| {
                let mut handle = engine.reader()?;
                let stop = Arc::clone(&stop);
                let own: Vec<([u8; 12], [u8; 20])> =
                    pairs.iter().skip(thread).step_by(threads).take(1000).copied().collect();
                Ok(std::thread::spawn(move || write_loop(handle.as_mut(), &own, &stop)))
            })
            .collect::<Result<Vec<_>>>()?;
        std::thread::sleep(std::time::Duration::from_secs_f64(seconds));
        stop.store(true, Ordering::Relaxed);
        let mut latencies = Vec::new();
        let mut commits = 0;
        for handle in handles {
            let (made, mut lat) = handle.join().map_err(|_| BenchError::engine(id, "writer thread panicked"))??;
            commits += made;
            latencies.append(&mut lat);
        }
        let sample = Sample { wall_s: t0.elapsed().as_secs_f64(), cpu_s: cpu_seconds() - cpu0, n: commits };
        checks.record(id, &format!("{threads} writers committed"), u64::from(commits > 0))?;
        checks.expect(&format!("{threads} writers committed"), 1)?;
        c.add(id, &format!("durable commits/s, {threads} writers"), Unit::OpsPerSec, sample);
        for (p, name) in [(50.0, "p50"), (99.0, "p99")] {
            let ms = percentile(&mut latencies, p);
            c.add(
                id,
                &format!("commit {name}, {threads} writers"),
                Unit::MsPerOp,
                Sample { wall_s: ms, cpu_s: ms, n: 1 },
            );
        }
    }
    Ok(())
}

fn write_loop(handle: &mut dyn KvEngine, own: &[([u8; 12], [u8; 20])], stop: &AtomicBool) -> Result<Run> {
    let mut latencies = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let (key, value) = &own[latencies.len() % own.len()];
        let start = Instant::now();
        handle.put_batch(&[(key, value)])?;
        latencies.push(start.elapsed().as_secs_f64());
    }
    Ok((latencies.len() as u64, latencies))
}
