//! T6 — SQLite's kvtest ("35 % faster than the filesystem"): random incompressible
//! blobs of 8,000–12,000 bytes; write all (commit every `BATCH`); read all in random
//! order warm, then cold (engine closed, files evicted from the page cache,
//! reopened); size on disk against the sum of blob sizes. Engines: the blob family.

use super::{Config, Outcome, evict_cache, remove_dir};
use crate::check::Checks;
use crate::data::{blob, blob_len, permutation};
use crate::error::{BenchError, Result};
use crate::family::BlobEngine;
use crate::measure::time;
use crate::registry;
use crate::results::{Collector, Unit};

/// Blobs per durable commit while writing.
const BATCH: usize = 1000;

/// Runs T6 for every selected blob engine.
pub fn run(cfg: &Config) -> Result<Outcome> {
    let n = cfg.count(500, 100_000, 100_000);
    let payload: u64 = (0..n as u64).map(|id| blob_len(id, cfg.seed) as u64).sum();
    let order = permutation(n, cfg.seed ^ 0x7236);
    let engines = cfg.select("T6", registry::blobs())?;
    let mut collector = Collector::default();
    let mut checks = Checks::new("T6");
    checks.expect("read found", n as u64)?;
    checks.expect("read bytes", payload)?;
    for repeat in 0..cfg.repeats {
        for entry in super::in_turn(&engines, repeat) {
            collector.set_settings(entry.id, entry.settings);
            let dir = cfg.scratch("T6", entry.id)?;
            let mut engine = (entry.open)(&dir)?;
            write_all(engine.as_mut(), n, cfg.seed, entry.id, &mut collector)?;
            read_all(engine.as_mut(), &order, entry.id, "read random warm", &mut collector, &mut checks)?;
            collector.add_bytes(entry.id, "size on disk", engine.size_bytes()?);
            collector.add_bytes(entry.id, "sum of blob sizes", payload);
            drop(engine);
            evict_cache(&dir)?;
            let mut engine = (entry.open)(&dir)?;
            read_all(engine.as_mut(), &order, entry.id, "read random cold", &mut collector, &mut checks)?;
            drop(engine);
            remove_dir(&dir)?;
        }
    }
    Ok(Outcome {
        collector,
        checks,
        dataset: format!("{n} random blobs of 8000-12000 bytes ({payload} bytes), commit every {BATCH}"),
    })
}

fn write_all(engine: &mut dyn BlobEngine, n: usize, seed: u64, id: &str, c: &mut Collector) -> Result<()> {
    let mut bufs: Vec<Vec<u8>> = vec![Vec::new(); BATCH];
    let mut total = crate::measure::Sample { wall_s: 0.0, cpu_s: 0.0, n: n as u64 };
    for start in (0..n).step_by(BATCH) {
        let ids: Vec<u64> = (start as u64..(start + BATCH).min(n) as u64).collect();
        for (buf, &bid) in bufs.iter_mut().zip(&ids) {
            blob(bid, seed, buf);
        }
        let batch: Vec<(u64, &[u8])> = ids.iter().zip(&bufs).map(|(&i, b)| (i, &b[..])).collect();
        // Only the engine's work is timed, not the generation of the blobs.
        let (_, s) = time(0, || engine.put_batch(&batch))?;
        total.wall_s += s.wall_s;
        total.cpu_s += s.cpu_s;
    }
    c.add(id, "write all", Unit::OpsPerSec, total);
    Ok(())
}

fn read_all(
    engine: &mut dyn BlobEngine,
    order: &[usize],
    id: &str,
    op: &str,
    c: &mut Collector,
    checks: &mut Checks,
) -> Result<()> {
    let mut out = Vec::new();
    let ((found, bytes, edge), s) = time(order.len() as u64, || {
        let (mut found, mut bytes, mut edge) = (0u64, 0u64, 0u64);
        for &i in order {
            if engine.read(i as u64, &mut out)? {
                found += 1;
                bytes += out.len() as u64;
                let head = u64::from_le_bytes(out[..8].try_into().expect("blobs exceed 8 bytes"));
                let tail = u64::from_le_bytes(out[out.len() - 8..].try_into().expect("blobs exceed 8 bytes"));
                edge = edge.wrapping_add(head ^ tail.rotate_left(17));
            }
        }
        Ok::<_, BenchError>((found, bytes, edge))
    })?;
    c.add(id, op, Unit::OpsPerSec, s);
    checks.record(id, "read found", found)?;
    checks.record(id, "read bytes", bytes)?;
    checks.record(id, "read head/tail hash", edge)?;
    Ok(())
}
