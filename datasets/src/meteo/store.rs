//! The meteorological database layout and its writer, [`IndexSink`].
//!
//! Three named structures per database:
//!
//! | name                     | kind    | content                                              |
//! |--------------------------|---------|------------------------------------------------------|
//! | `meteo.records`          | queue   | every loaded row: its CSV line (no terminator) packed 4 bits a character (`record.rs`) |
//! | `meteo.by_station_time`  | B+tree  | key `(station: String, time: i64)` in the order-preserving encoding of `quiredb_structures::table::Key`; value the record id, [`pack_record_id`] as u64 LE (8 bytes; the 16-byte `seq, page` of earlier files still reads) |
//! | `meteo.by_measures`      | R*-tree | D-dimensional points (f64, 1 ≤ D ≤ [`MAX_DIMENSIONS`], chosen at load: the `--index-measures`, else the first eight measures at most) of the rows with all of them present, a point tree (leaves hold points, 8·D + 8 B an entry; files of earlier versions have box leaves and still read); payload [`pack_record_id`]. D is the tree's own (its catalog entry; [`tree_dimensions`]), the measures it stands for are `record_layout`'s `index_measures` (absent: the first D). With `--index-measures none` there is no R*-tree (`index_measures` empty; window and kNN refuse) |
//! | `meteo.meta`             | B+tree  | `measures` → measure names, comma-separated; `record_encoding` → `nibble1` (absent in files of earlier versions, whose queue holds the raw lines) |
//!
//! A row missing a measure is in the queue and the B+tree but not in the R-tree. A
//! repeated (station, time) keeps both rows in the queue; the B+tree points to the
//! later one (counted in [`SinkStats::replaced_keys`]).
//!
//! Transactions: everything a load writes, structure creation included, happens in one
//! write transaction committed by [`ObservationSink::finish`] (or one per batch with
//! [`ObservationSink::end_batch`]); [`ObservationSink::abort`] or a drop without
//! finish leaves the database as it was (the engine's shadow paging).
//!
//! Throughput: rows are buffered in chunks of [`CHUNK_ROWS`] (`chunk.rs`); a chunk is
//! appended to the queue with one appender and its keys, sorted, go to the B+tree in
//! one `insert_batch` (ascending keys reuse the previous leaf: no descent per key, and
//! a full last leaf is not copied when it splits). This single-thread sink holds the
//! R-tree's points in memory for one STR bulk load (up to [`BULK_POINTS_LIMIT`], 48
//! bytes each) and inserts the rest one by one; `parallel.rs` is the two-thread,
//! bounded-memory version that `quire load-csv` uses.
//!
//! Measured: the 57,852,305 generated rows (2.65 GB CSV) load on one core in 35 s
//! of CPU into a 6.97 GB file (b118eb9); the run log with per-thread figures is
//! `reports/METEO-LOAD-LOG.md`.

use quiredb_engine::{Database, Durability, PageId, PageRead, WriteTxn};
use quiredb_structures::btree::{BTree, BulkAppender};
use quiredb_structures::queue::{Queue, RecordId};
use quiredb_structures::rtree::RTree;
use quiredb_structures::table::Key;

use super::Observation;
use super::aggregate::{LAYOUT_KEY, RecordLayout};
pub(crate) use super::chunk::Chunk;
use super::pipeline::ObservationSink;
use super::reader::{NO_INDEX, RawRow};
use super::record::{ENCODING_KEY, NIBBLE_V1, RecordEncoding};
use crate::error::{Error, Result};

/// Name of the queue of raw records.
pub const QUEUE_NAME: &str = "meteo.records";
/// Name of the B+tree (station, time) → record id.
pub const BTREE_NAME: &str = "meteo.by_station_time";
/// Name of the R*-tree over the measures.
pub const RTREE_NAME: &str = "meteo.by_measures";
/// Name of the B+tree of metadata.
pub const META_NAME: &str = "meteo.meta";
/// Dimensions of the R*-tree of the default schema (its five measures).
pub const DEFAULT_DIMENSIONS: usize = 5;
/// Most dimensions of the R*-tree (`--index-measures` takes 1 to this many measures).
pub const MAX_DIMENSIONS: usize = 8;
/// Rows buffered before they are written into the transaction.
pub const CHUNK_ROWS: usize = 65_536;
/// Most points held for a bulk load (48 bytes each: 192 MiB); beyond, the points
/// collected so far are bulk-loaded and the rest inserted one by one.
pub const BULK_POINTS_LIMIT: usize = 4 << 20;

/// The R*-tree type of the layout, of `D` dimensions.
pub type MeasureTree<'t, T, const D: usize> = RTree<'t, T, D, f64>;

/// Runs `$body` with the const `$d` bound to the run-time dimension count `$dims`
/// (1 to [`MAX_DIMENSIONS`]): the one place where the R*-tree's dimensions go from a
/// value to a type. The body's type is a `Result`; another count is an
/// [`Error::Argument`].
macro_rules! with_dimensions {
    ($dims:expr, $d:ident => $body:expr) => {
        match $dims {
            1 => {
                const $d: usize = 1;
                $body
            }
            2 => {
                const $d: usize = 2;
                $body
            }
            3 => {
                const $d: usize = 3;
                $body
            }
            4 => {
                const $d: usize = 4;
                $body
            }
            5 => {
                const $d: usize = 5;
                $body
            }
            6 => {
                const $d: usize = 6;
                $body
            }
            7 => {
                const $d: usize = 7;
                $body
            }
            8 => {
                const $d: usize = 8;
                $body
            }
            other => Err($crate::meteo::store::dimension_error(other)),
        }
    };
}
pub(crate) use with_dimensions;

/// The error of an R*-tree dimension count outside 1..=[`MAX_DIMENSIONS`].
pub(crate) fn dimension_error(dims: usize) -> Error {
    Error::Argument(format!("the R*-tree takes 1 to {MAX_DIMENSIONS} measures as its dimensions, not {dims}"))
}

/// The dimensions of the R*-tree of a load: `index_measures` when chosen, else the
/// first [`MAX_DIMENSIONS`] of `measures` at most.
pub fn index_dimensions(measures: usize, index_measures: Option<&[usize]>) -> usize {
    index_measures.map_or(measures.min(MAX_DIMENSIONS), <[usize]>::len)
}

/// The dimensions of the stored R*-tree; `None` when the database has none.
pub fn tree_dimensions(txn: &impl PageRead) -> Result<Option<usize>> {
    if txn.catalog_entry(RTREE_NAME)?.is_none() {
        return Ok(None);
    }
    for dims in 1..=MAX_DIMENSIONS {
        if with_dimensions!(dims, D => Ok(MeasureTree::<_, D>::open(txn, RTREE_NAME).is_ok()))? {
            return Ok(Some(dims));
        }
    }
    // Not an R*-tree of 1 to 8 dimensions: let the open of 5 say why.
    MeasureTree::<_, DEFAULT_DIMENSIONS>::open(txn, RTREE_NAME)?;
    Ok(Some(DEFAULT_DIMENSIONS))
}

/// Packs a record id into the R-tree's u64 payload: page in the high 32 bits, sequence
/// number in the low 32. Fails past 2^32 pages or records.
pub fn pack_record_id(id: RecordId) -> Result<u64> {
    if id.page.0 >> 32 != 0 || id.seq >> 32 != 0 {
        return Err(Error::Argument(format!("record id {id:?} does not fit the R-tree payload (32 + 32 bits)")));
    }
    Ok(id.page.0 << 32 | id.seq)
}

/// Inverse of [`pack_record_id`].
pub fn unpack_record_id(payload: u64) -> RecordId {
    RecordId { seq: payload & 0xFFFF_FFFF, page: PageId(payload >> 32) }
}

/// The B+tree value of a record id: [`pack_record_id`] as 8 bytes little-endian.
pub fn encode_record_id(id: RecordId) -> Result<[u8; 8]> {
    Ok(pack_record_id(id)?.to_le_bytes())
}

/// Inverse of [`encode_record_id`]; also reads the 16-byte form of earlier versions
/// (`seq u64 LE, page u64 LE`). `None` for a value of another length.
pub fn decode_record_id(value: &[u8]) -> Option<RecordId> {
    match value.len() {
        8 => Some(unpack_record_id(u64::from_le_bytes(value.try_into().ok()?))),
        16 => {
            let seq = u64::from_le_bytes(value[..8].try_into().ok()?);
            let page = u64::from_le_bytes(value[8..].try_into().ok()?);
            Some(RecordId { seq, page: PageId(page) })
        }
        _ => None,
    }
}

/// Appends the B+tree key of (station, time) to `out`.
pub fn encode_key(station: &String, time: i64, out: &mut Vec<u8>) {
    encode_station(station, out);
    encode_time(time, out);
}

/// Appends the station member of a key (escaped and ended, see `encode_key`).
pub(crate) fn encode_station(station: &String, out: &mut Vec<u8>) {
    String::encode_key(station, false, out).expect("an owned string always has a key encoding");
}

/// Appends the time member of a key (the last member).
pub(crate) fn encode_time(time: i64, out: &mut Vec<u8>) {
    i64::encode_key(&time, true, out).expect("an i64 always has a key encoding");
}

/// What an [`IndexSink`] wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SinkStats {
    /// Records appended to the queue.
    pub records: u64,
    /// Points put into the R*-tree.
    pub points: u64,
    /// (station, time) keys that were already present (the later row wins).
    pub replaced_keys: u64,
    /// Transactions committed.
    pub commits: u64,
    /// Time spent finishing R-tree bulk loads (the serial tail of a load, after the
    /// last row, before the commit).
    pub finish_time: std::time::Duration,
    /// Time spent in commits.
    pub commit_time: std::time::Duration,
    /// Per-thread CPU and waits (`load_parallel` only).
    pub times: super::LoadTimes,
}

/// How one transaction writes the (station, time) keys: into a B+tree empty at its
/// start they are streamed by the tree's bulk appender (full leaves written once, no
/// descent or page lookup per key) for as long as every chunk's keys come after the
/// previous chunk's (the usual order of meteo files: station by station, time
/// ascending); at the first chunk that does not, the bulk load is finished and the
/// keys are inserted from then on. [`KeyWriter::finish`] before the commit.
#[derive(Debug, Default)]
pub(crate) struct KeyWriter {
    /// Whether this transaction's first chunk was seen.
    started: bool,
    bulk: Option<BulkAppender>,
    /// The last key appended.
    last: Vec<u8>,
}

impl KeyWriter {
    /// Appends the chunk's keys, `order` sorting them (ties in row order), if the bulk
    /// load goes on; false if they must be inserted instead.
    fn append(&mut self, btree: &mut BTree<'_, WriteTxn<'_>>, keys: Keys<'_>, stats: &mut SinkStats) -> Result<bool> {
        if !self.started {
            self.started = true;
            if btree.is_empty() {
                self.bulk = Some(btree.bulk_appender()?);
            }
        }
        let Some(run) = self.bulk.as_mut() else { return Ok(false) };
        let (key, order, ids) = keys;
        let (Some(&first), Some(&last)) = (order.first(), order.last()) else { return Ok(true) };
        if !run.is_empty() && key(first) <= self.last.as_slice() {
            let run = self.bulk.take().expect("checked above");
            btree.bulk_finish(run)?;
            return Ok(false);
        }
        let mut added = 0;
        for (j, &i) in order.iter().enumerate() {
            // Of equal keys (adjacent, in row order) the last row wins.
            if order.get(j + 1).is_some_and(|&next| key(next) == key(i)) {
                continue;
            }
            btree.bulk_append(run, key(i), &encode_record_id(ids[i])?)?;
            added += 1;
        }
        self.last.clear();
        self.last.extend_from_slice(key(last));
        stats.replaced_keys += order.len() as u64 - added;
        Ok(true)
    }

    /// Finishes a bulk load still going (writes its last leaf, branches and head) and
    /// readies the writer for the next transaction.
    pub(crate) fn finish(&mut self, txn: &WriteTxn<'_>) -> Result<()> {
        if let Some(run) = self.bulk.take() {
            BTree::open(txn, BTREE_NAME).and_then(|mut btree| btree.bulk_finish(run))?;
        }
        *self = KeyWriter::default();
        Ok(())
    }
}

/// A chunk's key of a row, the rows in key order, and their record ids.
type Keys<'a> = (&'a dyn Fn(usize) -> &'a [u8], &'a [usize], &'a [RecordId]);

/// Appends the chunk's raw records to the queue (their ids into `ids`) and writes its
/// keys, sorted, into the B+tree: streamed by `keys` (see [`KeyWriter`]) or in one
/// `insert_batch` (an ascending run of keys reuses the leaf of the previous key).
pub(crate) fn write_records(
    txn: &WriteTxn<'_>,
    (queue, keys): (&mut Queue<'_, WriteTxn<'_>>, &mut KeyWriter),
    chunk: &Chunk,
    ids: &mut Vec<RecordId>,
    stats: &mut SinkStats,
) -> Result<()> {
    ids.clear();
    let mut appender = queue.appender()?;
    for i in 0..chunk.len() {
        ids.push(appender.append(chunk.record(i))?);
    }
    appender.finish();
    let key = |i: usize| chunk.key(i);
    let mut order: Vec<usize> = (0..chunk.len()).collect();
    order.sort_by(|&a, &b| key(a).cmp(key(b)));
    let mut btree = BTree::open(txn, BTREE_NAME)?;
    stats.records += chunk.len() as u64;
    if keys.append(&mut btree, (&key, &order, ids), stats)? {
        return Ok(());
    }
    let values = order.iter().map(|&i| encode_record_id(ids[i])).collect::<Result<Vec<_>>>()?;
    let pairs = order.iter().zip(&values).map(|(&i, value)| (key(i), value));
    let added = btree.insert_batch(pairs)?;
    stats.replaced_keys += chunk.len() as u64 - added;
    Ok(())
}

/// Separates the measure names in `meteo.meta`'s `measures` entry, and starts it: names
/// may hold commas (an Onset HOBO logger's `Temp, °F (LGR S/N: …)`). An entry that does
/// not start with it was written before, names joined with commas.
pub const NAME_SEPARATOR: u8 = 0x1F;

/// The `measures` entry of `meteo.meta` for `names` ([`NAME_SEPARATOR`]).
pub fn encode_measure_names(names: &[String]) -> Vec<u8> {
    let mut entry = Vec::new();
    for name in names {
        entry.push(NAME_SEPARATOR);
        entry.extend_from_slice(name.as_bytes());
    }
    entry
}

/// The measure names of a `measures` entry, in either form ([`NAME_SEPARATOR`]).
pub fn decode_measure_names(entry: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(entry);
    match text.strip_prefix(char::from(NAME_SEPARATOR)) {
        Some(names) => names.split(char::from(NAME_SEPARATOR)).map(str::to_owned).collect(),
        None => text.split(',').filter(|name| !name.is_empty()).map(str::to_owned).collect(),
    }
}

/// Records `measure_names`, the record encoding and the record layout in `meteo.meta`.
pub(crate) fn write_meta(
    txn: &WriteTxn<'_>,
    measure_names: &[String],
    encoding: RecordEncoding,
    layout: Option<&RecordLayout>,
) -> Result<()> {
    let mut meta = BTree::open_or_create(txn, META_NAME)?;
    meta.insert(b"measures", &encode_measure_names(measure_names))?;
    if let Some(layout) = layout {
        let stored = meta.get_vec(LAYOUT_KEY)?.map(|bytes| RecordLayout::decode(&bytes)).transpose()?;
        let layout = match stored {
            Some(stored) if stored != *layout => layout.over(&stored)?,
            _ => layout.clone(),
        };
        meta.insert(LAYOUT_KEY, &layout.encode())?;
    }
    if encoding == RecordEncoding::Nibble {
        meta.insert(ENCODING_KEY, NIBBLE_V1)?;
    }
    Ok(())
}

/// The record encoding of the queue in `txn`'s snapshot (`meteo.meta`, see
/// `record.rs`): packed for a new or empty queue, else what the queue already holds.
pub fn record_encoding(txn: &impl PageRead) -> Result<RecordEncoding> {
    let Ok(queue) = Queue::open(txn, QUEUE_NAME) else { return Ok(RecordEncoding::Nibble) };
    if queue.len()? == 0 {
        return Ok(RecordEncoding::Nibble);
    }
    stored_encoding(txn)
}

/// The record encoding named in `meteo.meta` (raw without an entry).
pub fn stored_encoding(txn: &impl PageRead) -> Result<RecordEncoding> {
    let value = match BTree::open(txn, META_NAME) {
        Ok(meta) => meta.get_vec(ENCODING_KEY)?,
        Err(_) => None,
    };
    RecordEncoding::from_meta(value.as_deref())
}

/// Opens or creates the queue, the B+tree and the `D`-dimensional R*-tree in `txn`;
/// an error if the database's R*-tree has other dimensions, or if it was loaded
/// without one ([`open_without_tree`]).
pub(crate) fn open_layout<'t, 'db, const D: usize>(
    txn: &'t WriteTxn<'db>,
) -> Result<(Queue<'t, WriteTxn<'db>>, MeasureTree<'t, WriteTxn<'db>, D>)> {
    let queue = Queue::open_or_create(txn, QUEUE_NAME)?;
    BTree::open_or_create(txn, BTREE_NAME)?;
    let rtree = match tree_dimensions(txn)? {
        None if queue.len()? > 0 && loaded_without_tree(txn)? => {
            return Err(Error::Argument(format!(
                "the database was loaded with --index-measures {NO_INDEX} (no R*-tree); this load indexes {D} \
                 measures: load into it with --index-measures {NO_INDEX} too"
            )));
        }
        None => MeasureTree::<_, D>::create_points(txn, RTREE_NAME)?,
        Some(dims) if dims == D => MeasureTree::<_, D>::open(txn, RTREE_NAME)?,
        Some(dims) => {
            return Err(Error::Argument(format!(
                "the database's R*-tree has {dims} dimensions, this load indexes {D} \
                 (--index-measures must name as many measures as the first load did)"
            )));
        }
    };
    Ok((queue, rtree))
}

/// Opens or creates the queue and the B+tree in `txn`, for a load without R*-tree
/// (`--index-measures none`); an error if the database has an R*-tree (its points
/// would miss this load's rows).
pub(crate) fn open_without_tree<'t, 'db>(txn: &'t WriteTxn<'db>) -> Result<Queue<'t, WriteTxn<'db>>> {
    let queue = Queue::open_or_create(txn, QUEUE_NAME)?;
    BTree::open_or_create(txn, BTREE_NAME)?;
    if let Some(dims) = tree_dimensions(txn)? {
        return Err(Error::Argument(format!(
            "the database's R*-tree has {dims} dimensions, this load builds none (--index-measures {NO_INDEX}): \
             --index-measures must name as many measures as the first load did"
        )));
    }
    Ok(queue)
}

/// True when the stored record layout says the database has no R*-tree by choice
/// (`--index-measures none`).
fn loaded_without_tree(txn: &impl PageRead) -> Result<bool> {
    let layout = super::aggregate::stored_layout(txn)?;
    Ok(layout.and_then(|layout| layout.index_measures).is_some_and(|chosen| chosen.is_empty()))
}

/// The error of a window or kNN query on a database without R*-tree.
pub(crate) fn no_tree_error() -> Error {
    Error::Argument(format!(
        "this database has no R*-tree (it was loaded with --index-measures {NO_INDEX}): window and knn need one; \
         range, agg and stats work without it, or reload with --index-measures M1,…"
    ))
}

/// Builds the layout from loaded observations (see the module docs).
pub struct IndexSink<'db> {
    db: &'db Database,
    durability: Durability,
    txn: Option<WriteTxn<'db>>,
    keys: KeyWriter,
    /// The R*-tree's dimensions ([`index_dimensions`]).
    dims: usize,
    /// Whether this transaction opened (or created) the R*-tree yet: done at its first
    /// chunk, once the record layout (and its dimensions) is known.
    tree_ready: bool,
    chunk: Chunk,
    encoding: RecordEncoding,
    bulk: Option<(Vec<u64>, Vec<f64>)>,
    measure_names: Vec<String>,
    record_layout: Option<RecordLayout>,
    bulk_limit: usize,
    stats: SinkStats,
}

impl<'db> IndexSink<'db> {
    /// Opens a write transaction on `db` and opens or creates the queue and the
    /// B+tree. `measure_names` are recorded in `meteo.meta`; the R*-tree indexes the
    /// first eight of them at most, or the record layout's `index_measures`
    /// ([`IndexSink::with_record_layout`]).
    pub fn new(db: &'db Database, durability: Durability, measure_names: Vec<String>) -> Result<Self> {
        let txn = db.begin_write()?;
        Queue::open_or_create(&txn, QUEUE_NAME)?;
        BTree::open_or_create(&txn, BTREE_NAME)?;
        let encoding = record_encoding(&txn)?;
        Ok(IndexSink {
            db,
            durability,
            txn: Some(txn),
            keys: KeyWriter::default(),
            dims: index_dimensions(measure_names.len(), None),
            tree_ready: false,
            chunk: Chunk::default(),
            encoding,
            bulk: Some((Vec::new(), Vec::new())),
            measure_names,
            record_layout: None,
            bulk_limit: BULK_POINTS_LIMIT,
            stats: SinkStats::default(),
        })
    }

    /// Records `layout` in `meteo.meta` at commit (what `agg` reads measures with).
    pub fn with_record_layout(mut self, layout: RecordLayout) -> Self {
        self.dims = index_dimensions(self.measure_names.len(), layout.index_measures.as_deref());
        self.record_layout = Some(layout);
        self
    }

    /// Sets how many points are held for the R-tree's bulk load (default
    /// [`BULK_POINTS_LIMIT`]; 48 bytes each; 0 = insert every point one by one).
    pub fn with_bulk_limit(mut self, points: usize) -> Self {
        self.bulk_limit = points;
        if points == 0 {
            self.bulk = None;
        }
        self
    }

    /// What was written so far.
    pub fn stats(&self) -> SinkStats {
        self.stats
    }

    fn txn(&self) -> Result<&WriteTxn<'db>> {
        self.txn.as_ref().ok_or_else(|| Error::Argument("the load was already finished or aborted".into()))
    }

    /// Opens or creates the R*-tree at the transaction's first chunk; a tree not empty
    /// takes its points one by one.
    fn ready_tree(&mut self) -> Result<()> {
        if !self.tree_ready && self.dims == 0 {
            let txn = self.txn.as_ref().ok_or_else(|| Error::Argument("no open transaction".into()))?;
            open_without_tree(txn)?;
            self.bulk = None;
            self.tree_ready = true;
        }
        if !self.tree_ready {
            let txn = self.txn.as_ref().ok_or_else(|| Error::Argument("no open transaction".into()))?;
            let empty = with_dimensions!(self.dims, D => open_layout::<D>(txn).and_then(|(_, tree)| tree.is_empty().map_err(Error::from)))?;
            if !empty {
                self.bulk = None;
            }
            self.tree_ready = true;
        }
        Ok(())
    }

    /// Writes the buffered chunk into the open transaction.
    fn flush_chunk(&mut self) -> Result<()> {
        self.ready_tree()?;
        if self.chunk.len() == 0 {
            return Ok(());
        }
        let txn = self.txn.as_ref().ok_or_else(|| Error::Argument("no open transaction".into()))?;
        let mut ids = Vec::with_capacity(self.chunk.len());
        let mut queue = Queue::open(txn, QUEUE_NAME)?;
        write_records(txn, (&mut queue, &mut self.keys), &self.chunk, &mut ids, &mut self.stats)?;
        drop(queue);
        if self.dims > 0 {
            with_dimensions!(self.dims, D => self.write_points::<D>(&ids))?;
        }
        self.chunk.clear();
        if self.bulk.as_ref().is_some_and(|(payloads, _)| payloads.len() >= self.bulk_limit) {
            self.flush_bulk()?;
        }
        Ok(())
    }

    /// Collects the chunk's points for the bulk load, or inserts them.
    fn write_points<const D: usize>(&mut self, ids: &[RecordId]) -> Result<()> {
        let txn = self.txn.as_ref().ok_or_else(|| Error::Argument("no open transaction".into()))?;
        let points = self.chunk.points::<D>(ids)?;
        match self.bulk.as_mut() {
            Some((payloads, coords)) => {
                for (point, id) in points {
                    payloads.push(pack_record_id(id)?);
                    coords.extend_from_slice(&point);
                    self.stats.points += 1;
                }
            }
            None => {
                let mut tree = MeasureTree::<_, D>::open(txn, RTREE_NAME)?;
                for (point, id) in points {
                    tree.insert_point(point, pack_record_id(id)?)?;
                    self.stats.points += 1;
                }
            }
        }
        Ok(())
    }

    /// Bulk-loads the collected points into the (empty) R-tree; later points are
    /// inserted one by one.
    fn flush_bulk(&mut self) -> Result<()> {
        let Some((payloads, coords)) = self.bulk.take() else { return Ok(()) };
        if !payloads.is_empty() {
            let txn = self.txn()?;
            with_dimensions!(self.dims, D => MeasureTree::<_, D>::open(txn, RTREE_NAME)?.bulk_load_points(&payloads, &coords).map_err(Error::from))?;
        }
        Ok(())
    }

    fn commit(&mut self) -> Result<()> {
        self.flush_chunk()?;
        let started = std::time::Instant::now();
        self.flush_bulk()?;
        let txn = self.txn.as_ref().ok_or_else(|| Error::Argument("no open transaction".into()))?;
        self.keys.finish(txn)?;
        write_meta(txn, &self.measure_names, self.encoding, self.record_layout.as_ref())?;
        self.stats.finish_time += started.elapsed();
        let started = std::time::Instant::now();
        let txn = self.txn.take().ok_or_else(|| Error::Argument("no open transaction".into()))?;
        txn.commit(self.durability)?;
        self.stats.commits += 1;
        self.stats.commit_time += started.elapsed();
        Ok(())
    }
}

impl ObservationSink for IndexSink<'_> {
    fn push(&mut self, observation: &Observation, raw: &[u8]) -> Result<()> {
        self.chunk.push_raw(observation, raw, self.encoding);
        if self.chunk.len() >= CHUNK_ROWS {
            self.flush_chunk()?;
        }
        Ok(())
    }

    fn push_row(&mut self, observation: &Observation, raw: &mut RawRow<'_>) -> Result<()> {
        if self.chunk.push(observation, raw, self.encoding) {
            self.flush_chunk()?;
        }
        Ok(())
    }

    fn end_batch(&mut self) -> Result<()> {
        self.commit()?;
        self.txn = Some(self.db.begin_write()?);
        self.tree_ready = false;
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        self.commit()
    }

    fn abort(&mut self) {
        self.chunk.clear();
        self.bulk = None;
        if let Some(txn) = self.txn.take() {
            txn.abort();
        }
    }
}
