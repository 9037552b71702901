//! A load on two threads: [`load_parallel`] parses on the calling thread and builds
//! the indexes (the layout of `store.rs`) on a second one, with bounded memory.
//!
//! ```text
//! calling thread: ObservationReader ─► load() ─► ChunkSender (fills a Chunk)
//!                        ── bounded channel of CHUNK_ROWS-row chunks (QUEUE_CHUNKS) ──►
//! index thread:   queue append + sorted B+tree batch + R-tree points ─► commit
//!                        ◄── emptied chunks come back for reuse ──
//! ```
//!
//! While the R*-tree is empty at the start of a transaction, its points go, a batch per
//! chunk, to a third thread (in a rayon pool of its own, `sort_pool`) that feeds the
//! streaming bulk sorter
//! (`quiredb_structures::rtree::BulkSorter`: Hilbert key bounds from the first batch,
//! runs sorted while loading in `rtree_budget` bytes, temporary files in `tmp_dir`);
//! the index thread merges the runs into the tree just before the commit; otherwise (later batches of a `--batch` load, or a database loaded
//! before) they are inserted one by one. So memory stays at the buffer pool, the sort
//! budget and a few chunks, whatever the input size.
//!
//! A fourth thread drops the database file's written pages from the page cache every
//! quarter second (`page_cache.rs`).
//!
//! Errors: an index-thread error stops that thread (its transaction is dropped, the
//! database unchanged since the last commit); the parse side notices at its next
//! chunk and the load stops with the index thread's error. A parse error aborts the
//! open transaction the same way as with [`super::IndexSink`].

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};

use quiredb_engine::{Database, Durability, WriteTxn};
use quiredb_structures::queue::{Queue, RecordId};
use quiredb_structures::rtree::{BulkSorter, Rect};

use super::Observation;
use super::pipeline::{LoadOptions, LoadSummary, ObservationSink, load};
use super::reader::ObservationReader;
use super::record::RecordEncoding;
use super::store::{
    Chunk, DIMENSIONS, KeyWriter, MeasureTree, SinkStats, open_layout, pack_record_id, record_encoding, sink_error,
    write_meta, write_records,
};
use crate::error::{Error, Result};

/// Chunks in flight between the two threads (besides the one being filled and the
/// one being written).
pub const QUEUE_CHUNKS: usize = 2;
/// Default sort budget of the R*-tree's streaming bulk load.
pub const DEFAULT_RTREE_BUDGET: usize = 96 << 20;

/// Where and how [`load_parallel`] writes.
#[derive(Debug, Clone)]
pub struct ParallelConfig {
    /// Durability of the commit(s).
    pub durability: Durability,
    /// Measure names recorded in `meteo.meta`.
    pub measure_names: Vec<String>,
    /// Directory of the R*-tree bulk load's temporary files (must exist).
    pub tmp_dir: PathBuf,
    /// Bytes of the R*-tree bulk load's in-memory sort.
    pub rtree_budget: usize,
    /// The database's file, if it has one: its written pages are dropped from the page
    /// cache while the load runs (`page_cache.rs`).
    pub db_file: Option<PathBuf>,
}

/// A message to the index thread.
enum Message {
    Chunk(Chunk),
    EndBatch,
    Finish(Sender<Result<()>>),
    Abort,
}

/// How one transaction of the index thread ended.
enum Ending {
    Commit,
    CommitAndStop(Sender<Result<()>>),
    Abort,
}

/// Loads `reader` into `db` on two threads (see the module docs); returns the load
/// summary and what the index thread wrote.
pub fn load_parallel<R: std::io::Read>(
    db: &Database,
    config: &ParallelConfig,
    reader: &mut ObservationReader<R>,
    options: LoadOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(LoadSummary, SinkStats)> {
    let encoding = record_encoding(&db.begin_read().map_err(sink_error)?)?;
    let (to_index, from_parser) = sync_channel(QUEUE_CHUNKS);
    let (recycle, recycled) = channel();
    std::thread::scope(|scope| {
        let releaser = super::page_cache::spawn_releaser(scope, config.db_file.as_deref());
        let indexer = scope.spawn(move || index_thread(db, (config, encoding), &from_parser, &recycle));
        let mut sender = ChunkSender { to_index, recycled, chunk: Chunk::default(), encoding };
        let loaded = load(reader, &mut sender, options, progress);
        drop(sender);
        let indexed = indexer.join().unwrap_or_else(|_| Err(Error::Argument("the index thread panicked".into())));
        drop(releaser);
        match (loaded, indexed) {
            (Ok(summary), Ok(stats)) => Ok((summary, stats)),
            (_, Err(error)) | (Err(error), Ok(_)) => Err(error),
        }
    })
}

/// The parse side: fills chunks and hands them over.
struct ChunkSender {
    to_index: SyncSender<Message>,
    recycled: Receiver<Chunk>,
    chunk: Chunk,
    encoding: RecordEncoding,
}

impl ChunkSender {
    fn send(&self, message: Message) -> Result<()> {
        self.to_index.send(message).map_err(|_| Error::Argument("the index thread stopped".into()))
    }

    fn send_chunk(&mut self) -> Result<()> {
        if self.chunk.len() == 0 {
            return Ok(());
        }
        let next = self.recycled.try_recv().unwrap_or_default();
        let full = std::mem::replace(&mut self.chunk, next);
        self.send(Message::Chunk(full))
    }
}

impl ObservationSink for ChunkSender {
    fn push(&mut self, observation: &Observation, raw: &[u8]) -> Result<()> {
        if self.chunk.push(observation, raw, self.encoding) {
            self.send_chunk()?;
        }
        Ok(())
    }

    fn end_batch(&mut self) -> Result<()> {
        self.send_chunk()?;
        self.send(Message::EndBatch)
    }

    fn finish(&mut self) -> Result<()> {
        self.send_chunk()?;
        let (reply, answer) = channel();
        self.send(Message::Finish(reply))?;
        answer.recv().map_err(|_| Error::Argument("the index thread stopped".into()))?
    }

    fn abort(&mut self) {
        self.chunk.clear();
        let _ = self.to_index.send(Message::Abort);
    }
}

/// The index side: one transaction after another until the parse side finishes,
/// aborts or goes away.
fn index_thread(
    db: &Database,
    config: Config<'_>,
    messages: &Receiver<Message>,
    recycle: &Sender<Chunk>,
) -> Result<SinkStats> {
    let mut stats = SinkStats::default();
    loop {
        let txn = db.begin_write().map_err(sink_error)?;
        match one_transaction(&txn, config, messages, recycle, &mut stats)? {
            Ending::Abort => {
                txn.abort();
                return Ok(stats);
            }
            Ending::Commit => {
                let started = std::time::Instant::now();
                txn.commit(config.0.durability).map_err(sink_error)?;
                stats.commits += 1;
                stats.commit_time += started.elapsed();
            }
            Ending::CommitAndStop(reply) => {
                let started = std::time::Instant::now();
                let committed = txn.commit(config.0.durability).map_err(sink_error);
                stats.commits += u64::from(committed.is_ok());
                stats.commit_time += started.elapsed();
                let _ = reply.send(committed.as_ref().map(|_| ()).map_err(|e| Error::Argument(e.to_string())));
                return committed.map(|()| stats);
            }
        }
    }
}

/// The load's configuration and its queue's record encoding.
type Config<'a> = (&'a ParallelConfig, RecordEncoding);

/// Writes chunks into `txn` until a batch end, the finish or an abort. Into an empty
/// R*-tree the points go through a sort thread (see [`sort_thread`]).
fn one_transaction(
    txn: &WriteTxn<'_>,
    config: Config<'_>,
    messages: &Receiver<Message>,
    recycle: &Sender<Chunk>,
    stats: &mut SinkStats,
) -> Result<Ending> {
    let (mut queue, rtree) = open_layout(txn)?;
    let mut keys = KeyWriter::default();
    if !rtree.is_empty(txn).map_err(sink_error)? {
        let layout = (&mut queue, &mut keys);
        let ending = receive(txn, messages, recycle, stats, layout, &mut Points::Insert(&rtree))?;
        return finish_meta(txn, config, (ending, &mut keys), stats, std::time::Instant::now());
    }
    let sorter = rtree.bulk_sorter(&config.0.tmp_dir, config.0.rtree_budget).map_err(sink_error)?;
    std::thread::scope(|scope| {
        let (to_sorter, batches) = sync_channel(QUEUE_CHUNKS);
        let (recycle_batch, recycled) = channel();
        let pool = sort_pool()?;
        let sorting = scope.spawn(move || pool.install(move || sort_thread(sorter, &batches, &recycle_batch)));
        let mut points = Points::Sort { to_sorter, recycled };
        let ending = receive(txn, messages, recycle, stats, (&mut queue, &mut keys), &mut points);
        let started = std::time::Instant::now();
        drop(points);
        let sorter =
            sorting.join().unwrap_or_else(|_| Err(Error::Argument("the R-tree sort thread panicked".into())))?;
        let ending = ending?;
        if !matches!(ending, Ending::Abort) {
            sorter.finish_into(&rtree, txn).map_err(sink_error)?;
        }
        finish_meta(txn, config, (ending, &mut keys), stats, started)
    })
}

/// Receives chunks and writes them until a batch end, the finish or an abort.
fn receive(
    txn: &WriteTxn<'_>,
    messages: &Receiver<Message>,
    recycle: &Sender<Chunk>,
    stats: &mut SinkStats,
    (queue, keys): (&mut Queue, &mut KeyWriter),
    points: &mut Points<'_>,
) -> Result<Ending> {
    let mut ids = Vec::new();
    Ok(loop {
        let Ok(message) = messages.recv() else { break Ending::Abort };
        match message {
            Message::Chunk(mut chunk) => {
                write_chunk(txn, (&mut *queue, &mut *keys), points, &chunk, &mut ids, stats)?;
                chunk.clear();
                let _ = recycle.send(chunk);
            }
            Message::EndBatch => break Ending::Commit,
            Message::Finish(reply) => break Ending::CommitAndStop(reply),
            Message::Abort => break Ending::Abort,
        }
    })
}

/// Finishes the keys' bulk load and writes the metadata unless the transaction aborts;
/// counts the tail since `started`.
fn finish_meta(
    txn: &WriteTxn<'_>,
    (config, encoding): Config<'_>,
    (ending, keys): (Ending, &mut KeyWriter),
    stats: &mut SinkStats,
    started: std::time::Instant,
) -> Result<Ending> {
    if !matches!(ending, Ending::Abort) {
        keys.finish(txn)?;
        write_meta(txn, &config.measure_names, encoding)?;
        stats.finish_time += started.elapsed();
    }
    Ok(ending)
}

/// A batch of R-tree points with their payloads.
type PointBatch = Vec<([f64; DIMENSIONS], u64)>;

/// Where a transaction's R-tree points go.
enum Points<'a> {
    /// To the sort thread, one batch per chunk.
    Sort { to_sorter: SyncSender<PointBatch>, recycled: Receiver<PointBatch> },
    /// Into a non-empty tree, one by one.
    Insert(&'a MeasureTree),
}

/// The rayon pool the sort thread runs in: as many threads as cores beyond the two the
/// parse and index threads keep busy, at least one. On 2 cores the runs are then
/// sorted on the sort thread alone: the global pool's extra workers only competed
/// with the other two threads for the same cores (10 M rows: ≈ 5–10 % less CPU). The
/// finish (on the index thread, when the parse thread is idle) still uses the global
/// pool.
fn sort_pool() -> Result<rayon::ThreadPool> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    rayon::ThreadPoolBuilder::new()
        .num_threads(cores.saturating_sub(2).max(1))
        .thread_name(|i| format!("meteo-sort-{i}"))
        .build()
        .map_err(|error| Error::Argument(format!("cannot start the R-tree sort threads: {error}")))
}

/// The sort thread: keys and sorts the points into runs (`BulkSorter`), off the index
/// thread. The Hilbert key bounds are those of the first batch widened by its span (at
/// least 1) on each side; points outside are clamped for the key only.
fn sort_thread(
    mut sorter: BulkSorter<DIMENSIONS, f64>,
    batches: &Receiver<PointBatch>,
    recycle: &Sender<PointBatch>,
) -> Result<BulkSorter<DIMENSIONS, f64>> {
    for mut batch in batches.iter() {
        if sorter.is_empty() && !batch.is_empty() {
            sorter = sorter.with_key_bounds(&widened_bounds(&batch)).map_err(sink_error)?;
        }
        for (point, payload) in batch.drain(..) {
            sorter.push_point(point, payload).map_err(sink_error)?;
        }
        let _ = recycle.send(batch);
    }
    Ok(sorter)
}

/// The bounds of `batch` widened by their span (at least 1) on each side; a
/// non-finite coordinate is left for `push_point` to refuse.
fn widened_bounds(batch: &PointBatch) -> Rect<DIMENSIONS> {
    let mut bounds = Rect::new([f64::MAX; DIMENSIONS], [f64::MIN; DIMENSIONS]);
    for (point, _) in batch.iter().filter(|(p, _)| p.iter().all(|v| v.is_finite())) {
        bounds.expand(&Rect::point(*point));
    }
    for d in 0..DIMENSIONS {
        if bounds.min[d] > bounds.max[d] {
            (bounds.min[d], bounds.max[d]) = (0.0, 0.0);
        }
        let margin = (bounds.max[d] - bounds.min[d]).max(1.0);
        (bounds.min[d], bounds.max[d]) = (bounds.min[d] - margin, bounds.max[d] + margin);
    }
    bounds
}

fn write_chunk(
    txn: &WriteTxn<'_>,
    layout: (&mut Queue, &mut KeyWriter),
    points: &mut Points<'_>,
    chunk: &Chunk,
    ids: &mut Vec<RecordId>,
    stats: &mut SinkStats,
) -> Result<()> {
    write_records(txn, layout, chunk, ids, stats)?;
    match points {
        Points::Sort { to_sorter, recycled } => {
            let mut batch = recycled.try_recv().unwrap_or_default();
            for (point, id) in chunk.points(ids) {
                batch.push((point, pack_record_id(id)?));
            }
            stats.points += batch.len() as u64;
            to_sorter.send(batch).map_err(|_| Error::Argument("the R-tree sort thread stopped".into()))?;
        }
        Points::Insert(tree) => {
            for (point, id) in chunk.points(ids) {
                tree.insert_point(txn, point, pack_record_id(id)?).map_err(sink_error)?;
                stats.points += 1;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key bounds contain the first batch with a margin of its span (at least 1),
    /// and skip non-finite points (left for `push_point` to refuse).
    #[test]
    fn key_bounds_widen_the_first_batch() {
        let batch: PointBatch = vec![
            ([0.0, 1000.0, -5.0, 0.0, 1.0], 1),
            ([10.0, 1010.0, 5.0, 0.0, 3.0], 2),
            ([f64::NAN, 1e9, 0.0, 0.0, 0.0], 3),
        ];
        let bounds = widened_bounds(&batch);
        assert_eq!(bounds.min, [-10.0, 990.0, -15.0, -1.0, -1.0]);
        assert_eq!(bounds.max, [20.0, 1020.0, 15.0, 1.0, 5.0]);
        let empty = widened_bounds(&vec![([f64::INFINITY; DIMENSIONS], 1)]);
        assert_eq!((empty.min, empty.max), ([-1.0; DIMENSIONS], [1.0; DIMENSIONS]));
    }
}
