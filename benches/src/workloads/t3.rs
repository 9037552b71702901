//! T3 — QuickDB Table 3, heap table / paged queue: append all meteo records (durable
//! commit every `BATCH`), sequential scan warm, sequential scan cold (the engine
//! closed, its files evicted from the page cache with POSIX_FADV_DONTNEED, reopened),
//! file size — with the meteo records and again with 100-byte fixed records. Engines:
//! the queue family; the flat file is the sequential-I/O limit.

use super::{Config, Outcome, evict_cache, remove_dir};
use crate::check::{Checks, word_hash};
use crate::data::{METEO_RECORD_LEN, meteo};
use crate::error::{BenchError, Result};
use crate::family::QueueEngine;
use crate::measure::time;
use crate::registry;
use crate::results::{Collector, Unit};

/// Records per durable commit while appending.
const BATCH: usize = 100_000;

/// Record lengths T3 runs: the meteo record, and QuickDB's 100-byte fixed records so
/// that BDB Queue (fixed-length by design) compares like for like.
const LENGTHS: [usize; 2] = [METEO_RECORD_LEN, 100];

/// Runs T3 for every selected queue engine, once per record length.
pub fn run(cfg: &Config) -> Result<Outcome> {
    let n = cfg.count(20_000, 5_000_000, 57_852_305);
    let meteo_records: Vec<[u8; METEO_RECORD_LEN]> = meteo(n, cfg.seed)?.iter().map(|m| m.record()).collect();
    let engines = cfg.select("T3", registry::queue())?;
    let mut collector = Collector::default();
    let mut checks = Checks::new("T3");
    for len in LENGTHS {
        // Longer records repeat the meteo record's bytes: deterministic, same data.
        let records: Vec<Vec<u8>> =
            meteo_records.iter().map(|r| r.iter().copied().cycle().take(len).collect()).collect();
        let op = |name: &str| if len == METEO_RECORD_LEN { name.to_string() } else { format!("{len} B {name}") };
        checks.expect(&op("scan count"), n as u64)?;
        checks.expect(&op("scan hash"), records.iter().fold(0u64, |h, r| h.wrapping_add(word_hash(r))))?;
        for repeat in 0..cfg.repeats {
            for entry in super::in_turn(&engines, repeat) {
                collector.set_settings(entry.id, entry.settings);
                let dir = cfg.scratch("T3", entry.id)?;
                let mut engine = (entry.open)(&dir, len)?;
                let (_, s) = time(n as u64, || {
                    records.chunks(BATCH).try_for_each(|chunk| {
                        let refs: Vec<&[u8]> = chunk.iter().map(|r| &r[..]).collect();
                        engine.append_batch(&refs)
                    })
                })?;
                collector.add(entry.id, &op("append"), Unit::OpsPerSec, s);
                scan(engine.as_mut(), entry.id, &op("scan warm"), &op, &mut collector, &mut checks)?;
                collector.add_bytes(entry.id, &op("file size"), engine.size_bytes()?);
                drop(engine);
                evict_cache(&dir)?;
                let mut engine = (entry.open)(&dir, len)?;
                scan(engine.as_mut(), entry.id, &op("scan cold"), &op, &mut collector, &mut checks)?;
                drop(engine);
                remove_dir(&dir)?;
            }
        }
    }
    Ok(Outcome {
        collector,
        checks,
        dataset: format!(
            "{n} calibrated meteo records (quiredb-datasets generator) of {METEO_RECORD_LEN} bytes and the same padded to 100 bytes, commit every {BATCH}"
        ),
    })
}

fn scan(
    engine: &mut dyn QueueEngine,
    id: &str,
    op: &str,
    name: &dyn Fn(&str) -> String,
    c: &mut Collector,
    checks: &mut Checks,
) -> Result<()> {
    let ((count, hash), s) = time(0, || {
        let (mut count, mut hash) = (0u64, 0u64);
        engine.scan(&mut |r| {
            count += 1;
            hash = hash.wrapping_add(word_hash(r));
        })?;
        Ok::<_, BenchError>((count, hash))
    })?;
    c.add(id, op, Unit::OpsPerSec, crate::measure::Sample { n: count, ..s });
    checks.record(id, &name("scan count"), count)?;
    checks.record(id, &name("scan hash"), hash)?;
    Ok(())
}
