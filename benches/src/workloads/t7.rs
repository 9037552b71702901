//! T7 — Ruby DBI exec vs async_exec, for an embedded engine: a counter thread ticks
//! every 10 ms while the main thread runs 1,000 durable inserts, then a long query
//! (full scans for at least `LONG_QUERY_S`); ticks/s reached (ideal 100) shows
//! whether the engine stalls other threads. Then reader throughput and p99 latency of
//! random point reads, alone and while a writer thread commits continuously. Then the
//! group-commit phase (`t7_writers.rs`): 1, 2, 4, 8 writer threads.
//! Engines: the key-value family; Berkeley DB (not a T7 engine in BENCHMARKS.md) runs
//! the writers phase only (it has group commit; its readers lock pages).

use super::{Config, Outcome, remove_dir};
use crate::check::Checks;
use crate::data::{meteo, permutation};
use crate::error::{BenchError, Result};
use crate::family::{KvEngine, KvOptions};
use crate::measure::{Sample, percentile, time};
use crate::registry;
use crate::results::{Collector, Unit};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const TICK: Duration = Duration::from_millis(10);
/// Durable inserts of the tick test (fewer in smoke mode).
const INSERTS: usize = 1000;

/// Runs T7 for every selected key-value engine that supports concurrent handles.
pub fn run(cfg: &Config) -> Result<Outcome> {
    let n = cfg.count(20_000, 1_000_000, 5_000_000);
    let phase_s = if cfg.size == super::Size::Smoke { 0.5 } else { 3.0 };
    let inserts = cfg.sized(100, INSERTS, INSERTS);
    let records = meteo(n, cfg.seed)?;
    let pairs: Vec<([u8; 12], [u8; 20])> = records.iter().map(|r| (r.key(), r.value())).collect();
    let engines = cfg.select("T7", registry::kv())?;
    let mut collector = Collector::default();
    let mut checks = Checks::new("T7");
    checks.expect("rows after load", (n + inserts) as u64)?;
    for repeat in 0..cfg.repeats {
        for entry in super::in_turn(&engines, repeat) {
            collector.set_settings(entry.id, entry.settings);
            let dir = cfg.scratch("T7", entry.id)?;
            let mut engine = (entry.open)(&dir, &KvOptions { cache_bytes: None })?;
            for chunk in pairs.chunks(100_000) {
                let refs: Vec<(&[u8], &[u8])> = chunk.iter().map(|(k, v)| (&k[..], &v[..])).collect();
                engine.put_batch(&refs)?;
            }
            if !entry.id.starts_with("bdb") {
                ticks(engine.as_mut(), entry.id, inserts, phase_s, &mut collector, &mut checks)?;
                readers(engine.as_ref(), entry.id, &pairs, phase_s, cfg.seed, &mut collector, &mut checks)?;
            }
            let writers_s = phase_s / 2.0;
            super::t7_writers::writers(engine.as_ref(), entry.id, &pairs, writers_s, &mut collector, &mut checks)?;
            drop(engine);
            remove_dir(&dir)?;
        }
    }
    Ok(Outcome {
        collector,
        checks,
        dataset: format!(
            "{n} calibrated meteo rows preloaded; {inserts} durable inserts; reader phases of {phase_s} s"
        ),
    })
}

/// Runs `body` while a thread ticks every 10 ms; returns the body's value and
/// the ticks as a Sample (ticks over wall seconds).
fn with_ticker<T>(body: impl FnOnce() -> Result<T>) -> Result<(T, Sample)> {
    let stop = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicU64::new(0));
    let ticker = {
        let (stop, count) = (Arc::clone(&stop), Arc::clone(&count));
        std::thread::spawn(move || {
            let start = Instant::now();
            let mut next = start + TICK;
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(next.saturating_duration_since(Instant::now()));
                count.fetch_add(1, Ordering::Relaxed);
                next += TICK;
            }
        })
    };
    let (t0, cpu0) = (Instant::now(), crate::measure::cpu_seconds());
    let out = body();
    let wall_s = t0.elapsed().as_secs_f64();
    let cpu_s = crate::measure::cpu_seconds() - cpu0;
    stop.store(true, Ordering::Relaxed);
    ticker.join().expect("the ticker thread does not panic");
    let ticks = count.load(Ordering::Relaxed);
    Ok((out?, Sample { wall_s, cpu_s, n: ticks }))
}

fn ticks(
    engine: &mut dyn KvEngine,
    id: &str,
    inserts: usize,
    long_s: f64,
    c: &mut Collector,
    checks: &mut Checks,
) -> Result<()> {
    let (_, s) = with_ticker(|| {
        for i in 0..inserts as u32 {
            let key = [b'~', b'~', b'~', b'~', 0, 0, 0, 0, 0, 0, 0, 0];
            let mut k = key;
            k[8..].copy_from_slice(&i.to_be_bytes());
            engine.put_batch(&[(&k, &[7u8; 20])])?;
        }
        Ok(())
    })?;
    c.add(id, &format!("ticks/s during {inserts} durable inserts (ideal 100)"), Unit::OpsPerSec, s);
    let (rows, s) = with_ticker(|| {
        let start = Instant::now();
        let mut rows = 0u64;
        while rows == 0 || start.elapsed().as_secs_f64() < long_s {
            let mut count = 0u64;
            engine.scan(&mut |_, _| count += 1)?;
            rows = count;
        }
        Ok(rows)
    })?;
    c.add(id, "ticks/s during long query (ideal 100)", Unit::OpsPerSec, s);
    checks.record(id, "rows after load", rows)
}

/// Random reads on a reader handle for `seconds`; latencies in seconds.
fn read_loop(reader: &mut dyn KvEngine, keys: &[[u8; 12]], order: &[usize], seconds: f64) -> Result<(u64, Vec<f64>)> {
    let mut out = Vec::new();
    let mut lat = Vec::new();
    let mut found = 0;
    let start = Instant::now();
    for &i in order.iter().cycle() {
        let t = Instant::now();
        found += u64::from(reader.get(&keys[i], &mut out)?);
        let now = Instant::now();
        lat.push((now - t).as_secs_f64());
        if (now - start).as_secs_f64() >= seconds {
            break;
        }
    }
    Ok((found, lat))
}

fn readers(
    engine: &dyn KvEngine,
    id: &str,
    pairs: &[([u8; 12], [u8; 20])],
    seconds: f64,
    seed: u64,
    c: &mut Collector,
    checks: &mut Checks,
) -> Result<()> {
    let keys: Vec<[u8; 12]> = pairs.iter().map(|p| p.0).collect();
    let order = permutation(keys.len(), seed ^ 0x7007);
    let mut reader = engine.reader()?;
    let ((found, mut lat), s) = time(0, || read_loop(reader.as_mut(), &keys, &order, seconds))?;
    checks.record(id, "reads alone all found", u64::from(found == lat.len() as u64))?;
    c.add(id, "reads alone", Unit::OpsPerSec, Sample { n: lat.len() as u64, ..s });
    let p99 = percentile(&mut lat, 99.0);
    c.add(id, "read p99 alone", Unit::MsPerOp, Sample { wall_s: p99, cpu_s: p99, n: 1 });

    let stop = Arc::new(AtomicBool::new(false));
    let mut writer = engine.reader()?;
    let writer_thread = {
        let stop = Arc::clone(&stop);
        let pairs: Vec<([u8; 12], [u8; 20])> = pairs.iter().take(10_000).copied().collect();
        std::thread::spawn(move || -> Result<(u64, f64)> {
            let t0 = Instant::now();
            let mut commits = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let (k, v) = &pairs[commits as usize % pairs.len()];
                writer.put_batch(&[(k, v)])?;
                commits += 1;
            }
            Ok((commits, t0.elapsed().as_secs_f64()))
        })
    };
    let result = time(0, || read_loop(reader.as_mut(), &keys, &order, seconds));
    stop.store(true, Ordering::Relaxed);
    let (commits, writer_s) = writer_thread.join().map_err(|_| BenchError::engine(id, "writer thread panicked"))??;
    let ((found, mut lat), s) = result?;
    checks.record(id, "reads with writer all found", u64::from(found == lat.len() as u64))?;
    checks.expect("reads alone all found", 1)?;
    checks.expect("reads with writer all found", 1)?;
    c.add(id, "reads with writer", Unit::OpsPerSec, Sample { n: lat.len() as u64, ..s });
    let p99 = percentile(&mut lat, 99.0);
    c.add(id, "read p99 with writer", Unit::MsPerOp, Sample { wall_s: p99, cpu_s: p99, n: 1 });
    c.add(
        id,
        "writer commits/s during reads",
        Unit::OpsPerSec,
        Sample { wall_s: writer_s, cpu_s: s.cpu_s, n: commits },
    );
    Ok(())
}
