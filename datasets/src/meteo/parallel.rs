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
//! chunk, to a third thread (`sort_feed.rs`) that feeds the streaming bulk sorter
//! (`quiredb_structures::rtree::BulkSorter`: Hilbert key bounds from the first batch,
//! runs sorted while loading in `rtree_budget` bytes, temporary files in `tmp_dir`);
//! the index thread merges the runs into the tree just before the commit; otherwise
//! (later batches of a `--batch` load, or a database loaded before) they are inserted
//! one by one. So memory stays at the buffer pool, the sort budget and a few chunks
//! and point batches, whatever the input size. Each thread's CPU (by the caller's
//! [`ParallelConfig::cpu_clock`]) and waits are counted in [`SinkStats::times`]
//! (`load_times.rs`).
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
use super::aggregate::RecordLayout;
use super::load_times::{CpuClock, timed};
use super::pipeline::{LoadOptions, LoadSummary, ObservationSink, load};
use super::reader::{ObservationReader, RawRow};
use super::record::RecordEncoding;
use super::sort_feed::{Points, SORT_BATCHES, sort_pool, sort_thread};
use super::store::{
    Chunk, KeyWriter, SinkStats, index_dimensions, open_layout, open_without_tree, record_encoding, with_dimensions,
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
    /// The clocks of the per-thread CPU times in [`SinkStats::times`] (the default
    /// reads zero).
    pub cpu_clock: CpuClock,
    /// Where the measures are in the raw records, recorded in `meteo.meta` for `agg`.
    pub record_layout: Option<RecordLayout>,
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
    let encoding = record_encoding(&db.begin_read()?)?;
    let (to_index, from_parser) = sync_channel(QUEUE_CHUNKS);
    let (recycle, recycled) = channel();
    std::thread::scope(|scope| {
        let chosen = config.record_layout.as_ref().and_then(|layout| layout.index_measures.as_deref());
        let dims = index_dimensions(config.measure_names.len(), chosen);
        let config = Config { load: config, encoding, dims };
        let indexer = scope.spawn(move || index_thread(db, config, &from_parser, Some(recycle)));
        let thread_cpu = config.load.cpu_clock.thread;
        let started_cpu = thread_cpu();
        let wait = std::time::Duration::ZERO;
        let mut sender = ChunkSender { to_index, recycled, chunk: Chunk::default(), encoding, wait };
        let loaded = load(reader, &mut sender, options, progress);
        let (parse_cpu, parse_wait) = (thread_cpu().saturating_sub(started_cpu), sender.wait);
        drop(sender);
        let indexed = indexer.join().unwrap_or_else(|_| Err(Error::Worker("the index thread panicked".into())));
        match (loaded, indexed) {
            (Ok(summary), Ok(mut stats)) => {
                (stats.times.parse_cpu, stats.times.parse_wait) = (parse_cpu, parse_wait);
                Ok((summary, stats))
            }
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
    /// Time blocked handing chunks over.
    wait: std::time::Duration,
}

impl ChunkSender {
    fn send(&mut self, message: Message) -> Result<()> {
        let sent = timed(&mut self.wait, || self.to_index.send(message).is_ok());
        sent.then_some(()).ok_or_else(|| Error::Worker("the index thread stopped".into()))
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
        if self.chunk.push_raw(observation, raw, self.encoding) {
            self.send_chunk()?;
        }
        Ok(())
    }

    fn push_row(&mut self, observation: &Observation, raw: &mut RawRow<'_>) -> Result<()> {
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
        self.chunk = Chunk::default();
        let (reply, answer) = channel();
        self.send(Message::Finish(reply))?;
        // The index thread lets go of the chunks at the finish: free them for the
        // R-tree's merge (until the index thread drops its end of the channel).
        while self.recycled.recv().is_ok() {}
        answer.recv().map_err(|_| Error::Worker("the index thread stopped".into()))?
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
    mut recycle: Option<Sender<Chunk>>,
) -> Result<SinkStats> {
    let mut stats = SinkStats::default();
    loop {
        let txn = db.begin_write()?;
        let ended = match config.dims {
            0 => one_transaction_without_tree(&txn, config, messages, &mut recycle, &mut stats)?,
            dims => {
                with_dimensions!(dims, D => one_transaction::<D>(&txn, config, messages, &mut recycle, &mut stats))?
            }
        };
        match ended {
            Ending::Abort => {
                txn.abort();
                return Ok(stats);
            }
            Ending::Commit => {
                let thread_cpu = config.load.cpu_clock.thread;
                let (started, cpu) = (std::time::Instant::now(), thread_cpu());
                txn.commit(config.load.durability)?;
                stats.commits += 1;
                stats.commit_time += started.elapsed();
                stats.times.commit_cpu += thread_cpu().saturating_sub(cpu);
            }
            Ending::CommitAndStop(reply) => {
                let thread_cpu = config.load.cpu_clock.thread;
                let (started, cpu) = (std::time::Instant::now(), thread_cpu());
                let committed = txn.commit(config.load.durability).map_err(Error::from);
                stats.commits += u64::from(committed.is_ok());
                stats.commit_time += started.elapsed();
                stats.times.commit_cpu += thread_cpu().saturating_sub(cpu);
                let _ = reply.send(
                    committed
                        .as_ref()
                        .map(|_| ())
                        .map_err(|error| Error::Worker(format!("the index thread's commit failed: {error}"))),
                );
                return committed.map(|()| stats);
            }
        }
    }
}

/// The load's configuration and its queue's record encoding.
#[derive(Clone, Copy)]
struct Config<'a> {
    load: &'a ParallelConfig,
    encoding: RecordEncoding,
    /// The R*-tree's dimensions ([`index_dimensions`]).
    dims: usize,
}

/// Writes chunks into `txn` until a batch end, the finish or an abort. Into an empty
/// R*-tree the points go through a sort thread (see [`sort_thread`]).
fn one_transaction<const D: usize>(
    txn: &WriteTxn<'_>,
    config: Config<'_>,
    messages: &Receiver<Message>,
    recycle: &mut Option<Sender<Chunk>>,
    stats: &mut SinkStats,
) -> Result<Ending> {
    let clock = config.load.cpu_clock;
    let started = Mark::now(clock);
    let (mut queue, rtree) = open_layout::<D>(txn)?;
    let mut keys = KeyWriter::default();
    if !rtree.is_empty()? {
        let layout = (&mut queue, &mut keys);
        let ending = receive(txn, messages, recycle, stats, layout, &mut Points::Insert(rtree))?;
        let tail = started.tail(clock, stats);
        return finish_meta(txn, config, (ending, &mut keys), stats, tail);
    }
    let sorter = rtree.bulk_sorter(&config.load.tmp_dir, config.load.rtree_budget)?;
    std::thread::scope(|scope| {
        let (to_sorter, batches) = sync_channel(SORT_BATCHES);
        let (recycle_batch, recycled) = channel();
        let pool = sort_pool()?;
        let sorting =
            scope.spawn(move || pool.install(move || sort_thread(sorter, &batches, &recycle_batch, clock.thread)));
        let mut points = Points::Sort { to_sorter, recycled };
        let ending = receive(txn, messages, recycle, stats, (&mut queue, &mut keys), &mut points);
        let tail = started.tail(clock, stats);
        drop(points);
        let (sorter, sort_cpu, sort_wait) =
            sorting.join().unwrap_or_else(|_| Err(Error::Worker("the R-tree sort thread panicked".into())))?;
        stats.times.sort_cpu += sort_cpu;
        stats.times.sort_wait += sort_wait;
        let ending = ending?;
        if !matches!(ending, Ending::Abort) {
            sorter.finish_into(&rtree)?;
        }
        finish_meta(txn, config, (ending, &mut keys), stats, tail)
    })
}

/// [`one_transaction`] of a load without R*-tree (`--index-measures none`).
fn one_transaction_without_tree(
    txn: &WriteTxn<'_>,
    config: Config<'_>,
    messages: &Receiver<Message>,
    recycle: &mut Option<Sender<Chunk>>,
    stats: &mut SinkStats,
) -> Result<Ending> {
    let clock = config.load.cpu_clock;
    let started = Mark::now(clock);
    let mut queue = open_without_tree(txn)?;
    let mut keys = KeyWriter::default();
    // No points are written: the dimension count of `Points::Skip` is immaterial.
    let ending = receive::<1>(txn, messages, recycle, stats, (&mut queue, &mut keys), &mut Points::Skip)?;
    let tail = started.tail(clock, stats);
    finish_meta(txn, config, (ending, &mut keys), stats, tail)
}

/// A point in time on the index thread: wall clock, its CPU, the process's CPU.
#[derive(Clone, Copy)]
struct Mark {
    wall: std::time::Instant,
    cpu: std::time::Duration,
    process: std::time::Duration,
}

impl Mark {
    fn now(clock: CpuClock) -> Self {
        Mark { wall: std::time::Instant::now(), cpu: (clock.thread)(), process: (clock.process)() }
    }

    /// The start of the tail (the last chunk is written): counts the index thread's
    /// CPU since `self`.
    fn tail(self, clock: CpuClock, stats: &mut SinkStats) -> Mark {
        let now = Mark::now(clock);
        stats.times.index_cpu += now.cpu.saturating_sub(self.cpu);
        now
    }
}

/// Receives chunks and writes them until a batch end, the finish or an abort.
fn receive<const D: usize>(
    txn: &WriteTxn<'_>,
    messages: &Receiver<Message>,
    recycle: &mut Option<Sender<Chunk>>,
    stats: &mut SinkStats,
    (queue, keys): (&mut Queue<'_, WriteTxn<'_>>, &mut KeyWriter),
    points: &mut Points<'_, '_, D>,
) -> Result<Ending> {
    let mut ids = Vec::new();
    Ok(loop {
        let Ok(message) = timed(&mut stats.times.index_wait, || messages.recv()) else { break Ending::Abort };
        match message {
            Message::Chunk(mut chunk) => {
                write_chunk(txn, (&mut *queue, &mut *keys), points, &chunk, &mut ids, stats)?;
                chunk.clear();
                if let Some(recycle) = recycle {
                    let _ = recycle.send(chunk);
                }
            }
            Message::EndBatch => break Ending::Commit,
            Message::Finish(reply) => {
                // No more chunks: the parse side frees the spare ones.
                *recycle = None;
                break Ending::CommitAndStop(reply);
            }
            Message::Abort => break Ending::Abort,
        }
    })
}

/// Finishes the keys' bulk load and writes the metadata unless the transaction aborts;
/// counts the tail since `tail`.
fn finish_meta(
    txn: &WriteTxn<'_>,
    Config { load: config, encoding, .. }: Config<'_>,
    (ending, keys): (Ending, &mut KeyWriter),
    stats: &mut SinkStats,
    tail: Mark,
) -> Result<Ending> {
    if !matches!(ending, Ending::Abort) {
        keys.finish(txn)?;
        write_meta(txn, &config.measure_names, encoding, config.record_layout.as_ref())?;
        let now = Mark::now(config.cpu_clock);
        stats.finish_time += now.wall.duration_since(tail.wall);
        stats.times.tail_index_cpu += now.cpu.saturating_sub(tail.cpu);
        stats.times.tail_process_cpu += now.process.saturating_sub(tail.process);
    }
    Ok(ending)
}

fn write_chunk<const D: usize>(
    txn: &WriteTxn<'_>,
    layout: (&mut Queue<'_, WriteTxn<'_>>, &mut KeyWriter),
    points: &mut Points<'_, '_, D>,
    chunk: &Chunk,
    ids: &mut Vec<RecordId>,
    stats: &mut SinkStats,
) -> Result<()> {
    write_records(txn, layout, chunk, ids, stats)?;
    points.write(chunk, ids, stats)
}
