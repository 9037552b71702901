//! The R*-tree side of a parallel load (`parallel.rs`): where a transaction's points
//! go. Into a tree empty at the transaction's start they go, a batch per chunk, to a
//! sort thread feeding the streaming bulk sorter (`BulkSorter`, in a rayon pool of its
//! own); otherwise they are inserted one by one on the index thread.
//!
//! Bounded memory: at most [`SORT_BATCHES`] batches wait for the sort thread (48 bytes
//! a point, at most `CHUNK_ROWS` points a batch: 36 MiB), freed before the R-tree's
//! merge. The slack lets the parse and index threads run on while the sort thread
//! sorts and writes a run (≈ 0.16 s of CPU for the 1.57 M points of the default
//! budget); with two batches of slack the whole pipeline stalled behind every run
//! (`reports/METEO-LOAD-LOG.md` has the model that chose the number). Drawback, seen on
//! one core: the sort thread may end the load up to this many batches (and one run)
//! behind, which then falls into the tail after the last row.

use std::sync::mpsc::{Receiver, Sender, SyncSender};
use std::time::Duration;

use quiredb_engine::WriteTxn;
use quiredb_structures::queue::RecordId;
use quiredb_structures::rtree::{BulkSorter, Rect};

use super::load_times::timed;
use super::store::{CHUNK_ROWS, Chunk, MeasureTree, SinkStats, pack_record_id};
use crate::error::{Error, Result};

/// Point batches in flight to the sort thread (besides the one it works on).
pub const SORT_BATCHES: usize = 12;

/// A batch of R-tree points with their payloads.
pub(crate) type PointBatch<const D: usize> = Vec<([f64; D], u64)>;

/// Where a transaction's R-tree points go.
pub(crate) enum Points<'t, 'db, const D: usize> {
    /// To the sort thread, one batch per chunk.
    Sort { to_sorter: SyncSender<PointBatch<D>>, recycled: Receiver<PointBatch<D>> },
    /// Into a non-empty tree, one by one.
    Insert(MeasureTree<'t, WriteTxn<'db>, D>),
    /// Nowhere: the load builds no R*-tree (`--index-measures none`).
    Skip,
}

impl<const D: usize> Points<'_, '_, D> {
    /// Hands the chunk's complete points, with the record ids `ids` they got, to the
    /// sort thread or inserts them.
    pub(crate) fn write(&mut self, chunk: &Chunk, ids: &[RecordId], stats: &mut SinkStats) -> Result<()> {
        match self {
            Points::Sort { to_sorter, recycled } => {
                let mut batch = recycled.try_recv().unwrap_or_else(|_| Vec::with_capacity(CHUNK_ROWS));
                for (point, id) in chunk.points::<D>(ids)? {
                    batch.push((point, pack_record_id(id)?));
                }
                stats.points += batch.len() as u64;
                let sent = timed(&mut stats.times.index_sort_wait, || to_sorter.send(batch));
                sent.map_err(|_| Error::Worker("the R-tree sort thread stopped".into()))?;
            }
            Points::Insert(tree) => {
                for (point, id) in chunk.points::<D>(ids)? {
                    tree.insert_point(point, pack_record_id(id)?)?;
                    stats.points += 1;
                }
            }
            Points::Skip => {}
        }
        Ok(())
    }
}

/// The rayon pool the sort thread runs in: as many threads as cores beyond the two the
/// parse and index threads keep busy, at least one. On 2 cores the runs are then
/// sorted on the sort thread alone: the global pool's extra workers only competed
/// with the other two threads for the same cores (10 M rows: ≈ 5–10 % less CPU). The
/// finish (on the index thread, when the parse thread is idle) still uses the global
/// pool.
pub(crate) fn sort_pool() -> Result<rayon::ThreadPool> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    rayon::ThreadPoolBuilder::new()
        .num_threads(cores.saturating_sub(2).max(1))
        .thread_name(|i| format!("meteo-sort-{i}"))
        .build()
        .map_err(|error| Error::Worker(format!("cannot start the R-tree sort threads: {error}")))
}

/// The sort thread: keys and sorts the points into runs (`BulkSorter`), off the index
/// thread. The Hilbert key bounds are those of the first batch widened by its span (at
/// least 1) on each side; points outside are clamped for the key only. Returns the
/// sorter, the thread's CPU (by `thread_cpu`) and its wait for batches.
pub(crate) fn sort_thread<const D: usize>(
    mut sorter: BulkSorter<D, f64>,
    batches: &Receiver<PointBatch<D>>,
    recycle: &Sender<PointBatch<D>>,
    thread_cpu: fn() -> Duration,
) -> Result<(BulkSorter<D, f64>, Duration, Duration)> {
    let started = thread_cpu();
    let mut wait = Duration::ZERO;
    while let Ok(mut batch) = timed(&mut wait, || batches.recv()) {
        if sorter.is_empty() && !batch.is_empty() {
            sorter = sorter.with_key_bounds(&widened_bounds(&batch))?;
        }
        for (point, payload) in batch.drain(..) {
            sorter.push_point(point, payload)?;
        }
        let _ = recycle.send(batch);
    }
    Ok((sorter, thread_cpu().saturating_sub(started), wait))
}

/// The bounds of `batch` widened by their span (at least 1) on each side; a
/// non-finite coordinate is left for `push_point` to refuse.
fn widened_bounds<const D: usize>(batch: &PointBatch<D>) -> Rect<D> {
    let mut bounds = Rect::new([f64::MAX; D], [f64::MIN; D]);
    for (point, _) in batch.iter().filter(|(p, _)| p.iter().all(|v| v.is_finite())) {
        bounds.expand(&Rect::point(*point));
    }
    for d in 0..D {
        if bounds.min[d] > bounds.max[d] {
            (bounds.min[d], bounds.max[d]) = (0.0, 0.0);
        }
        let margin = (bounds.max[d] - bounds.min[d]).max(1.0);
        (bounds.min[d], bounds.max[d]) = (bounds.min[d] - margin, bounds.max[d] + margin);
    }
    bounds
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key bounds contain the first batch with a margin of its span (at least 1),
    /// and skip non-finite points (left for `push_point` to refuse).
    #[test]
    fn key_bounds_widen_the_first_batch() {
        let batch: PointBatch<5> = vec![
            ([0.0, 1000.0, -5.0, 0.0, 1.0], 1),
            ([10.0, 1010.0, 5.0, 0.0, 3.0], 2),
            ([f64::NAN, 1e9, 0.0, 0.0, 0.0], 3),
        ];
        let bounds = widened_bounds(&batch);
        assert_eq!(bounds.min, [-10.0, 990.0, -15.0, -1.0, -1.0]);
        assert_eq!(bounds.max, [20.0, 1020.0, 15.0, 1.0, 5.0]);
        let empty = widened_bounds(&vec![([f64::INFINITY; 3], 1)]);
        assert_eq!((empty.min, empty.max), ([-1.0; 3], [1.0; 3]));
    }
}
