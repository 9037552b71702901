//! KV — the redb-style workload of the B+tree issue: random 24-byte keys with 150-byte
//! values; bulk load in one transaction; 1,000 individual durable writes (mean and
//! median); 100 batches of 1,000 writes; random reads (two passes); 500,000 range reads
//! of 10 pairs; random reads with a cache of 25 %, 50 %, 80 % and 100 % of the data's
//! raw bytes (the engine reopened with that budget, a warm-up of half the keys, then a
//! pass over all of them; LMDB, which has no cache knob, reads through its mapping each
//! time); the bulk load again with a cache of 25 % of the data (speed, bytes written,
//! file size); removal of half the keys in one transaction; file size before and after;
//! then, for engines with online compaction, compaction steps until done beside a
//! thread reading random keys (time, the longest single read, file size after).
//! Engines: the ordered key-value family (range reads where the adapter has them).

use super::{Config, Outcome, remove_dir};
use crate::check::{Checks, fnv};
use crate::error::{BenchError, Result};
use crate::family::{Entry, KvEngine, KvOpen, KvOptions};
use crate::measure::{Sample, percentile, time};
use crate::registry;
use crate::results::{Collector, Unit};

const KEY_LEN: usize = 24;
const VALUE_LEN: usize = 150;

/// xorshift64*: the same data for every engine from the seed.
fn random_bytes(state: &mut u64, out: &mut [u8]) {
    for chunk in out.chunks_mut(8) {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        let word = state.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes();
        chunk.copy_from_slice(&word[..chunk.len()]);
    }
}

/// `n` random pairs (keys distinct with overwhelming probability; duplicates dropped).
fn pairs(n: usize, state: &mut u64) -> Vec<([u8; KEY_LEN], [u8; VALUE_LEN])> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let (mut key, mut value) = ([0u8; KEY_LEN], [0u8; VALUE_LEN]);
        random_bytes(state, &mut key);
        random_bytes(state, &mut value);
        out.push((key, value));
    }
    out
}

/// Sizes of one run.
struct Sizes {
    singles: usize,
    batches: usize,
    batch: usize,
    ranges: usize,
}

/// Runs KV on every selected key-value engine.
pub fn run(cfg: &Config) -> Result<Outcome> {
    let n = cfg.count(2_000, 1_000_000, 5_000_000);
    let smoke = cfg.size == super::Size::Smoke;
    let pick = |small: usize, normal: usize| if smoke { small } else { normal };
    let sizes =
        Sizes { singles: pick(20, 1000), batches: pick(5, 100), batch: pick(20, 1000), ranges: pick(1000, 500_000) };
    let mut state = cfg.seed | 1;
    let load = pairs(n, &mut state);
    let singles = pairs(sizes.singles, &mut state);
    let batched = pairs(sizes.batches * sizes.batch, &mut state);
    let mut order: Vec<usize> = (0..n).collect();
    let mut shuffle = cfg.seed ^ 0x4b56;
    for i in (1..n).rev() {
        let mut word = [0u8; 8];
        random_bytes(&mut shuffle, &mut word);
        order.swap(i, (u64::from_le_bytes(word) % (i as u64 + 1)) as usize);
    }
    let engines = cfg.select("KV", registry::kv())?;
    let mut collector = Collector::default();
    let mut checks = Checks::new("KV");
    checks.expect("read found", n as u64)?;
    checks.expect("removed", (n / 2) as u64)?;
    for repeat in 0..cfg.repeats {
        for entry in super::in_turn(&engines, repeat) {
            collector.set_settings(entry.id, entry.settings);
            let dir = cfg.scratch("KV", entry.id)?;
            let mut engine = (entry.open)(&dir, &KvOptions { cache_bytes: None })?;
            let data = Data { load: &load, singles: &singles, batched: &batched, order: &order };
            phases(engine.as_mut(), entry.id, &data, &sizes, &mut collector, &mut checks)?;
            drop(engine);
            pool_phases(entry, &dir, &data, &mut collector, &mut checks)?;
            small_pool_load(entry, &cfg.scratch("KV", &format!("{}-small-pool", entry.id))?, &data, &mut collector)?;
            let mut engine = (entry.open)(&dir, &KvOptions { cache_bytes: None })?;
            removal(engine.as_mut(), entry.id, &data, &mut collector, &mut checks)?;
            drop(engine);
            remove_dir(&dir)?;
        }
    }
    Ok(Outcome {
        collector,
        checks,
        dataset: format!(
            "{n} random {KEY_LEN} B keys / {VALUE_LEN} B values; {} single writes; {}×{} batched; {} ranges of 10",
            sizes.singles, sizes.batches, sizes.batch, sizes.ranges
        ),
    })
}

struct Data<'a> {
    load: &'a [([u8; KEY_LEN], [u8; VALUE_LEN])],
    singles: &'a [([u8; KEY_LEN], [u8; VALUE_LEN])],
    batched: &'a [([u8; KEY_LEN], [u8; VALUE_LEN])],
    order: &'a [usize],
}

fn as_refs(pairs: &[([u8; KEY_LEN], [u8; VALUE_LEN])]) -> Vec<(&[u8], &[u8])> {
    pairs.iter().map(|(k, v)| (&k[..], &v[..])).collect()
}

fn phases(
    engine: &mut dyn KvEngine,
    id: &str,
    data: &Data<'_>,
    sizes: &Sizes,
    c: &mut Collector,
    checks: &mut Checks,
) -> Result<()> {
    let all = as_refs(data.load);
    let (_, s) = time(all.len() as u64, || engine.put_batch(&all))?;
    c.add(id, "bulk load (1 txn)", Unit::OpsPerSec, s);
    drop(all);

    let mut latencies = Vec::with_capacity(data.singles.len());
    let (_, s) = time(data.singles.len() as u64, || {
        data.singles.iter().try_for_each(|(k, v)| {
            let started = std::time::Instant::now();
            engine.put_batch(&[(&k[..], &v[..])])?;
            latencies.push(started.elapsed().as_secs_f64());
            Ok::<_, BenchError>(())
        })
    })?;
    c.add(id, "individual writes (commit each)", Unit::MsPerOp, s);
    // The goal for single durable writes is the median latency: a checkpoint
    // or a journal rotation now and then moves the mean, not the median.
    let p50 = if latencies.is_empty() { 0.0 } else { percentile(&mut latencies, 50.0) };
    c.add(id, "individual writes p50 (commit each)", Unit::MsPerOp, Sample { wall_s: p50, cpu_s: p50, n: 1 });

    let batched = as_refs(data.batched);
    let (_, s) =
        time(batched.len() as u64, || batched.chunks(sizes.batch).try_for_each(|chunk| engine.put_batch(chunk)))?;
    c.add(id, "batch writes", Unit::OpsPerSec, s);

    for pass in ["random reads (pass 1)", "random reads (pass 2)"] {
        let mut out = Vec::new();
        let ((found, hash), s) = time(data.order.len() as u64, || {
            let (mut found, mut hash) = (0u64, 0u64);
            for &i in data.order {
                if engine.get(&data.load[i].0, &mut out)? {
                    found += 1;
                    hash = hash.wrapping_add(fnv(&out));
                }
            }
            Ok::<_, BenchError>((found, hash))
        })?;
        c.add(id, pass, Unit::OpsPerSec, s);
        checks.record(id, "read found", found)?;
        checks.record(id, "read hash", hash)?;
    }

    let starts = data.order.iter().cycle().take(sizes.ranges);
    let (seen, s) = time(sizes.ranges as u64, || {
        let mut seen = Some(0u64);
        for &i in starts {
            let mut visit = |_: &[u8], v: &[u8]| {
                std::hint::black_box(v);
            };
            match engine.range(&data.load[i].0, 10, &mut visit)? {
                Some(count) => seen = seen.map(|total| total + count as u64),
                None => return Ok::<_, BenchError>(None),
            }
        }
        Ok(seen)
    })?;
    if let Some(seen) = seen {
        c.add(id, "range reads (10 pairs)", Unit::OpsPerSec, s);
        checks.record(id, "range pairs seen", seen)?;
    }

    c.add_bytes(id, "size before removal", engine.size_bytes()?);
    Ok(())
}

/// Smallest cache budget given (QuireDB needs 64 pages; only smoke sizes reach it).
const MIN_CACHE_BYTES: u64 = 1 << 20;

/// Caches tried by [`pool_phases`], in percent of the data's raw bytes.
const POOL_PERCENTS: [u64; 4] = [25, 50, 80, 100];

/// Random reads with caches smaller than the data: for each of [`POOL_PERCENTS`], the
/// engine reopened with that budget, a warm-up over half the keys, then a timed pass.
fn pool_phases(
    entry: &Entry<KvOpen>,
    dir: &std::path::Path,
    data: &Data<'_>,
    c: &mut Collector,
    checks: &mut Checks,
) -> Result<()> {
    let raw = (data.load.len() * (KEY_LEN + VALUE_LEN)) as u64;
    for percent in POOL_PERCENTS {
        let budget = (raw * percent / 100).max(MIN_CACHE_BYTES);
        let mut engine = (entry.open)(dir, &KvOptions { cache_bytes: Some(budget) })?;
        let mut out = Vec::new();
        for &i in &data.order[..data.order.len() / 2] {
            engine.get(&data.load[i].0, &mut out)?;
        }
        let (found, s) = time(data.order.len() as u64, || {
            let mut found = 0u64;
            for &i in data.order.iter().rev() {
                found += u64::from(engine.get(&data.load[i].0, &mut out)?);
            }
            Ok::<_, BenchError>(found)
        })?;
        c.add(entry.id, &format!("random reads (cache {percent} % of data)"), Unit::OpsPerSec, s);
        checks.record(entry.id, "read found", found)?;
    }
    Ok(())
}

/// The cache budget of the small-pool bulk load, in percent of the raw data.
const SMALL_POOL_PERCENT: u64 = 25;

/// The bulk load again into an empty database opened with a cache of
/// [`SMALL_POOL_PERCENT`] of the data: its speed, the bytes the process handed to write
/// calls meanwhile (`wchar` of `/proc/self/io`: spills, logs and compactions included;
/// an engine writing through a shared mapping would show 0, none of the peers does by
/// default) and the file size after, which together show how often each page was written.
fn small_pool_load(entry: &Entry<KvOpen>, dir: &std::path::Path, data: &Data<'_>, c: &mut Collector) -> Result<()> {
    let raw = (data.load.len() * (KEY_LEN + VALUE_LEN)) as u64;
    let budget = (raw * SMALL_POOL_PERCENT / 100).max(MIN_CACHE_BYTES);
    let mut engine = (entry.open)(dir, &KvOptions { cache_bytes: Some(budget) })?;
    let all = as_refs(data.load);
    let before = written_bytes()?;
    let (_, s) = time(all.len() as u64, || engine.put_batch(&all))?;
    let written = written_bytes()? - before;
    let op = format!("bulk load (1 txn, cache {SMALL_POOL_PERCENT} % of data)");
    c.add(entry.id, &op, Unit::OpsPerSec, s);
    c.add_bytes(entry.id, &format!("bytes written by {op}"), written);
    c.add_bytes(entry.id, &format!("size after {op}"), engine.size_bytes()?);
    drop(engine);
    remove_dir(dir)
}

/// Bytes this process has passed to write calls so far (`wchar` in `/proc/self/io`).
fn written_bytes() -> Result<u64> {
    let path = std::path::Path::new("/proc/self/io");
    let text = std::fs::read_to_string(path).map_err(|e| BenchError::io(path, e))?;
    let field = text.lines().find_map(|line| line.strip_prefix("wchar:"));
    Ok(field.and_then(|v| v.trim().parse().ok()).unwrap_or(0))
}

/// Removal of half the keys in one transaction, and the file size after.
fn removal(engine: &mut dyn KvEngine, id: &str, data: &Data<'_>, c: &mut Collector, checks: &mut Checks) -> Result<()> {
    let half: Vec<&[u8]> = data.load[..data.load.len() / 2].iter().map(|(k, _)| &k[..]).collect();
    let (removed, s) = time(half.len() as u64, || engine.delete_batch(&half))?;
    c.add(id, "remove half (1 txn)", Unit::OpsPerSec, s);
    checks.record(id, "removed", removed)?;
    c.add_bytes(id, "size after removal", engine.size_bytes()?);
    compaction(engine, id, data, c)
}

/// Online compaction after the removal, for engines that have it: steps until done
/// while another thread keeps reading random keys; the file size after, the time the
/// steps took, and the reads' p99 and longest latency meanwhile (a reader's pause).
fn compaction(engine: &mut dyn KvEngine, id: &str, data: &Data<'_>, c: &mut Collector) -> Result<()> {
    if !engine.compacts_online() {
        return Ok(());
    }
    let mut reader = engine.reader()?;
    let stop = std::sync::atomic::AtomicBool::new(false);
    let keys: Vec<[u8; KEY_LEN]> = data.order.iter().map(|&i| data.load[i].0).collect();
    let (steps, pause) = std::thread::scope(|scope| {
        let ticker = scope.spawn(|| {
            let (mut out, mut latencies) = (Vec::new(), Vec::new());
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let started = std::time::Instant::now();
                reader.get(&keys[latencies.len() % keys.len()], &mut out)?;
                latencies.push(started.elapsed().as_secs_f64());
            }
            latencies.sort_by(f64::total_cmp);
            let at = |q: f64| latencies.get(((latencies.len() as f64 * q) as usize).min(latencies.len().max(1) - 1));
            Ok::<_, BenchError>((at(0.99).copied().unwrap_or(0.0), latencies.last().copied().unwrap_or(0.0)))
        });
        let steps = time(1, || {
            while !engine.compact_step()? {}
            Ok::<_, BenchError>(())
        });
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        (steps, ticker.join().expect("the reader thread does not panic"))
    });
    let ((), s) = steps?;
    let (p99, longest) = pause?;
    c.add(id, "compaction after removal (online)", Unit::Seconds, s);
    c.add(id, "read p99 during compaction", Unit::MsPerOp, Sample { wall_s: p99, cpu_s: p99, n: 1 });
    c.add(id, "longest read during compaction", Unit::MsPerOp, Sample { wall_s: longest, cpu_s: longest, n: 1 });
    c.add_bytes(id, "size after removal and compaction", engine.size_bytes()?);
    Ok(())
}
