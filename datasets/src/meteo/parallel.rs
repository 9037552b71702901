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
//! While the R*-tree is empty at the start of a transaction, its points go to the
//! streaming bulk builder (`quiredb_structures::rtree::BulkBuilder`: external Hilbert
//! sort in `rtree_budget` bytes, temporary files in `tmp_dir`), finished just before
//! the commit; otherwise (later batches of a `--batch` load, or a database loaded
//! before) they are inserted one by one. So memory stays at the buffer pool, the sort
//! budget and a few chunks, whatever the input size.
//!
//! Errors: an index-thread error stops that thread (its transaction is dropped, the
//! database unchanged since the last commit); the parse side notices at its next
//! chunk and the load stops with the index thread's error. A parse error aborts the
//! open transaction the same way as with [`super::IndexSink`].

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};

use quiredb_engine::{Database, Durability, WriteTxn};
use quiredb_structures::queue::{Queue, RecordId};

use super::Observation;
use super::pipeline::{LoadOptions, LoadSummary, ObservationSink, load};
use super::reader::ObservationReader;
use super::store::{Chunk, MeasureTree, SinkStats, open_layout, pack_record_id, sink_error, write_meta, write_records};
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
    let (to_index, from_parser) = sync_channel(QUEUE_CHUNKS);
    let (recycle, recycled) = channel();
    std::thread::scope(|scope| {
        let indexer = scope.spawn(move || index_thread(db, config, &from_parser, &recycle));
        let mut sender = ChunkSender { to_index, recycled, chunk: Chunk::default() };
        let loaded = load(reader, &mut sender, options, progress);
        drop(sender);
        let indexed = indexer.join().unwrap_or_else(|_| Err(Error::Argument("the index thread panicked".into())));
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
        if self.chunk.push(observation, raw) {
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
    config: &ParallelConfig,
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
                txn.commit(config.durability).map_err(sink_error)?;
                stats.commits += 1;
                stats.commit_time += started.elapsed();
            }
            Ending::CommitAndStop(reply) => {
                let started = std::time::Instant::now();
                let committed = txn.commit(config.durability).map_err(sink_error);
                stats.commits += u64::from(committed.is_ok());
                stats.commit_time += started.elapsed();
                let _ = reply.send(committed.as_ref().map(|_| ()).map_err(|e| Error::Argument(e.to_string())));
                return committed.map(|()| stats);
            }
        }
    }
}

/// Writes chunks into `txn` until a batch end, the finish or an abort.
fn one_transaction(
    txn: &WriteTxn<'_>,
    config: &ParallelConfig,
    messages: &Receiver<Message>,
    recycle: &Sender<Chunk>,
    stats: &mut SinkStats,
) -> Result<Ending> {
    let (mut queue, rtree) = open_layout(txn)?;
    let mut points = if rtree.is_empty(txn).map_err(sink_error)? {
        Points::Bulk(rtree.bulk_builder(txn, &config.tmp_dir, config.rtree_budget).map_err(sink_error)?)
    } else {
        Points::Insert(&rtree)
    };
    let mut ids = Vec::new();
    let ending = loop {
        let Ok(message) = messages.recv() else { break Ending::Abort };
        match message {
            Message::Chunk(mut chunk) => {
                write_chunk(txn, &mut queue, &mut points, &chunk, &mut ids, stats)?;
                chunk.clear();
                let _ = recycle.send(chunk);
            }
            Message::EndBatch => break Ending::Commit,
            Message::Finish(reply) => break Ending::CommitAndStop(reply),
            Message::Abort => break Ending::Abort,
        }
    };
    if !matches!(ending, Ending::Abort) {
        let started = std::time::Instant::now();
        if let Points::Bulk(builder) = points {
            builder.finish().map_err(sink_error)?;
        }
        write_meta(txn, &config.measure_names)?;
        stats.finish_time += started.elapsed();
    }
    Ok(ending)
}

/// Where a transaction's R-tree points go.
enum Points<'a, 't> {
    Bulk(quiredb_structures::rtree::BulkBuilder<'a, 't, { super::store::DIMENSIONS }, f64>),
    Insert(&'a MeasureTree),
}

fn write_chunk(
    txn: &WriteTxn<'_>,
    queue: &mut Queue,
    points: &mut Points<'_, '_>,
    chunk: &Chunk,
    ids: &mut Vec<RecordId>,
    stats: &mut SinkStats,
) -> Result<()> {
    write_records(txn, queue, chunk, ids, stats)?;
    for (point, id) in chunk.points(ids) {
        let payload = pack_record_id(id)?;
        match points {
            Points::Bulk(builder) => builder.push_point(point, payload).map_err(sink_error)?,
            Points::Insert(tree) => tree.insert_point(txn, point, payload).map_err(sink_error)?,
        }
        stats.points += 1;
    }
    Ok(())
}
