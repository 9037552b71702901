//! T1 — the Ada persistent B-tree against SQLite: random string keys and values;
//! insert each in its own durable transaction; search all; update each value to one
//! twice as long (own transaction each); delete half (own transaction each).
//! Milliseconds per operation. Engines: the ordered key-value family.

use super::{Config, Outcome, remove_dir};
use crate::check::{Checks, fnv};
use crate::data::string_pairs;
use crate::error::Result;
use crate::family::{KvEngine, KvOptions};
use crate::measure::time;
use crate::registry;
use crate::results::{Collector, Unit};

/// Runs T1 on every selected key-value engine, alternating engines per repeat.
pub fn run(cfg: &Config) -> Result<Outcome> {
    let n = cfg.count(20, 1000, 1000);
    let pairs = string_pairs(n, cfg.seed);
    let engines = cfg.select("T1", registry::kv())?;
    let mut collector = Collector::default();
    let mut checks = Checks::new("T1");
    checks.expect("search found", n as u64)?;
    checks.expect("deleted", (n / 2) as u64)?;
    checks.expect("remaining", (n - n / 2) as u64)?;
    for repeat in 0..cfg.repeats {
        for entry in super::in_turn(&engines, repeat) {
            collector.set_settings(entry.id, entry.settings);
            let dir = cfg.scratch("T1", entry.id)?;
            let mut engine = (entry.open)(&dir, &KvOptions { cache_bytes: None })?;
            phases(engine.as_mut(), entry.id, &pairs, &mut collector, &mut checks)?;
            drop(engine);
            remove_dir(&dir)?;
        }
    }
    Ok(Outcome {
        collector,
        checks,
        dataset: format!("{n} random 16-char keys, 32-char values (64-char after update)"),
    })
}

fn phases(
    engine: &mut dyn KvEngine,
    id: &str,
    pairs: &[(String, String)],
    collector: &mut Collector,
    checks: &mut Checks,
) -> Result<()> {
    let n = pairs.len() as u64;
    let (_, s) = time(n, || pairs.iter().try_for_each(|(k, v)| engine.put_batch(&[(k.as_bytes(), v.as_bytes())])))?;
    collector.add(id, "insert (commit each)", Unit::MsPerOp, s);

    let mut out = Vec::new();
    let ((found, hash), s) = time(n, || {
        let (mut found, mut hash) = (0u64, 0u64);
        for (k, _) in pairs {
            if engine.get(k.as_bytes(), &mut out)? {
                found += 1;
                hash = hash.wrapping_add(fnv(&out));
            }
        }
        Ok::<_, crate::error::BenchError>((found, hash))
    })?;
    collector.add(id, "search", Unit::MsPerOp, s);
    checks.record(id, "search found", found)?;
    checks.record(id, "search value hash", hash)?;

    let longer: Vec<String> = pairs.iter().map(|(_, v)| v.repeat(2)).collect();
    let (_, s) = time(n, || {
        pairs.iter().zip(&longer).try_for_each(|((k, _), v)| engine.put_batch(&[(k.as_bytes(), v.as_bytes())]))
    })?;
    collector.add(id, "update (commit each)", Unit::MsPerOp, s);

    let half = &pairs[..pairs.len() / 2];
    let (deleted, s) = time(half.len() as u64, || {
        half.iter().try_fold(0u64, |acc, (k, _)| {
            Ok::<_, crate::error::BenchError>(acc + engine.delete_batch(&[k.as_bytes()])?)
        })
    })?;
    collector.add(id, "delete (commit each)", Unit::MsPerOp, s);
    checks.record(id, "deleted", deleted)?;

    let (mut remaining, mut hash) = (0u64, 0u64);
    engine.scan(&mut |k, v| {
        remaining += 1;
        hash = hash.wrapping_add(fnv(k) ^ fnv(v));
    })?;
    checks.record(id, "remaining", remaining)?;
    checks.record(id, "remaining hash", hash)?;
    Ok(())
}
