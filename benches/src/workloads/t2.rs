//! T2 — QuickDB Table 2: calibrated meteo records (key = station + time, value = 5 measures)
//! inserted in sorted and in random order, (a) with a cache that holds all the data
//! and (b) with one that holds 80% of it; point queries after each load; index size.
//! Inserts are committed every `BATCH` records (durable commits). The 80% budget is
//! 0.8 × the raw bytes (key + value) of the data; LMDB has no cache knob, so its
//! 80%-fits rows are marked not comparable, with the reason no cgroup v2 `memory.max`
//! could cap it (on this machine kind the v2 hierarchy has no memory controller).

use super::{Config, Outcome, remove_dir};
use crate::check::{Checks, fnv};
use crate::data::{Meteo, meteo, permutation};
use crate::error::{BenchError, Result};
use crate::family::{KvEngine, KvOptions};
use crate::measure::time;
use crate::registry;
use crate::results::{Collector, Unit};

/// Records per durable commit while loading.
const BATCH: usize = 100_000;

/// Runs T2 for every selected key-value engine.
pub fn run(cfg: &Config) -> Result<Outcome> {
    // Smoke size keeps the 80% budget above 64 pages of 8 KiB (engines refuse smaller pools).
    let n = cfg.count(40_000, 5_000_000, 57_852_305);
    let t0 = std::time::Instant::now();
    let records = meteo(n, cfg.seed)?;
    println!("T2: generated {n} meteo records in {:.1} s", t0.elapsed().as_secs_f64());
    let queries = cfg.sized(5_000, 200_000, 1_000_000).min(n);
    let query_idx = permutation(n, cfg.seed ^ 0x51)[..queries].to_vec();
    let raw_bytes = (n * (crate::data::METEO_KEY_LEN + crate::data::METEO_VALUE_LEN)) as u64;
    let caches = [("all fits", raw_bytes * 4 + (64 << 20)), ("80% fits", raw_bytes * 8 / 10)];
    let engines = cfg.select("T2", registry::kv())?;
    let mut collector = Collector::default();
    let mut checks = Checks::new("T2");
    checks.expect("query found", queries as u64)?;
    let random = permutation(n, cfg.seed);
    for repeat in 0..cfg.repeats {
        for (cache_name, cache_bytes) in
            caches.into_iter().filter(|(name, _)| cache_wanted(cfg.t2_cache.as_deref(), name))
        {
            for (order, perm) in [("sorted", None), ("random", Some(&random))] {
                for entry in super::in_turn(&engines, repeat) {
                    collector.set_settings(entry.id, entry.settings);
                    if entry.id == "lmdb" {
                        collector.set_note(entry.id, &lmdb_note());
                    }
                    let dir = cfg.scratch("T2", entry.id)?;
                    let mut engine = (entry.open)(&dir, &KvOptions { cache_bytes: Some(cache_bytes) })?;
                    let ctx = Phase { id: entry.id, order, cache: cache_name };
                    load(engine.as_mut(), &ctx, &records, perm.map(Vec::as_slice), &mut collector)?;
                    query(engine.as_mut(), &ctx, &records, &query_idx, &mut collector, &mut checks)?;
                    if cache_name == "all fits" {
                        collector.add_bytes(entry.id, &format!("size after {order} insert"), engine.size_bytes()?);
                    }
                    drop(engine);
                    remove_dir(&dir)?;
                }
            }
        }
    }
    Ok(Outcome {
        collector,
        checks,
        dataset: format!(
            "{n} calibrated meteo records (quiredb-datasets generator; 12 B key = station id + time, 20 B value = 5 f32 measures), {queries} point queries, commit every {BATCH}, caches {} / {} bytes",
            caches[0].1, caches[1].1
        ),
    })
}

/// Whether `--cache` (all / 80) selects the budget named `name` ("all fits", "80% fits").
fn cache_wanted(wanted: Option<&str>, name: &str) -> bool {
    wanted.is_none_or(|wanted| name.starts_with(wanted))
}

/// Where the v2 hierarchy's controllers are listed (pure v2 mount, or hybrid).
const CGROUP2_CONTROLLERS: [&str; 2] =
    ["/sys/fs/cgroup/cgroup.controllers", "/sys/fs/cgroup/unified/cgroup.controllers"];

/// LMDB's note: it reads through mmap and has no cache knob, so an 80%-fits run needs a
/// cgroup v2 `memory.max` on its process; says why there is none.
fn lmdb_note() -> String {
    let controllers = CGROUP2_CONTROLLERS.iter().find_map(|p| std::fs::read_to_string(p).ok());
    let why = match controllers {
        None => "no cgroup v2 hierarchy".to_string(),
        Some(c) if c.split_whitespace().any(|w| w == "memory") => {
            "a cgroup v2 memory controller exists but the harness does not cap a child process yet".to_string()
        }
        Some(c) => format!(
            "the cgroup v2 hierarchy has no memory controller (controllers: {}); the memory controller is \
             bound to the v1 hierarchy of the machine's process supervisor",
            if c.trim().is_empty() { "none" } else { c.trim() }
        ),
    };
    format!("no cache knob (mmap): 80%-fits rows NOT comparable, no memory cap applied: {why}")
}

struct Phase<'a> {
    id: &'a str,
    order: &'a str,
    cache: &'a str,
}

fn load(
    engine: &mut dyn KvEngine,
    p: &Phase,
    records: &[Meteo],
    perm: Option<&[usize]>,
    c: &mut Collector,
) -> Result<()> {
    let (_, s) = time(records.len() as u64, || {
        let mut keys = Vec::with_capacity(BATCH);
        let mut values = Vec::with_capacity(BATCH);
        for chunk_start in (0..records.len()).step_by(BATCH) {
            keys.clear();
            values.clear();
            for i in chunk_start..(chunk_start + BATCH).min(records.len()) {
                let r = &records[perm.map_or(i, |p| p[i])];
                keys.push(r.key());
                values.push(r.value());
            }
            let pairs: Vec<(&[u8], &[u8])> = keys.iter().zip(&values).map(|(k, v)| (&k[..], &v[..])).collect();
            engine.put_batch(&pairs)?;
        }
        Ok::<_, BenchError>(())
    })?;
    c.add(p.id, &format!("insert {} ({})", p.order, p.cache), Unit::OpsPerSec, s);
    Ok(())
}

fn query(
    engine: &mut dyn KvEngine,
    p: &Phase,
    records: &[Meteo],
    idx: &[usize],
    c: &mut Collector,
    checks: &mut Checks,
) -> Result<()> {
    let mut out = Vec::new();
    let ((found, hash), s) = time(idx.len() as u64, || {
        let (mut found, mut hash) = (0u64, 0u64);
        for &i in idx {
            if engine.get(&records[i].key(), &mut out)? {
                found += 1;
                hash = hash.wrapping_add(fnv(&out));
            }
        }
        Ok::<_, BenchError>((found, hash))
    })?;
    c.add(p.id, &format!("point query after {} insert ({})", p.order, p.cache), Unit::OpsPerSec, s);
    checks.record(p.id, "query found", found)?;
    checks.record(p.id, "query value hash", hash)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::cache_wanted;

    #[test]
    fn cache_option_selects_one_budget_or_both() {
        // Proves `--cache all` / `--cache 80` keep exactly their own phases.
        for name in ["all fits", "80% fits"] {
            assert!(cache_wanted(None, name));
        }
        assert!(cache_wanted(Some("all"), "all fits") && !cache_wanted(Some("all"), "80% fits"));
        assert!(cache_wanted(Some("80"), "80% fits") && !cache_wanted(Some("80"), "all fits"));
    }
}
