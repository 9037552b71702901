//! Bounded-memory bulk load for inputs larger than memory: entries are sorted into
//! Hilbert order with an external merge sort and packed into full leaves bottom-up as
//! they come out of the merge (`packer.rs`). Two handles share the work:
//!
//! - [`BulkSorter`] (no transaction, `Send`: it can run on its own thread) takes the
//!   entries; `finish_into(&tree, &txn)` builds the tree;
//! - [`BulkBuilder`] is a sorter bound to a tree and a transaction (`finish()`).
//!
//! 1. `push` validates the box (NaN, infinity, `min > max` are a typed error and the
//!    entry is not taken) and appends it to one buffer of `mem_budget` bytes, reused
//!    for every run (no allocation per run).
//! 2. With key bounds given up front ([`BulkSorter::with_key_bounds`]; a centre outside
//!    is clamped onto them for the key only, the order degrades gracefully), a full
//!    buffer is keyed and sorted (rayon) and written as a sorted run at once: one pass
//!    over the temporary files, and the sorting overlaps the caller's pushing. Without
//!    bounds the key needs the final bounds of the centres: full buffers are appended
//!    unsorted to a spill file, cut back into runs at the finish.
//! 3. The finish sorts in memory when nothing was spilled; otherwise it merges the runs
//!    with a heap on a second thread, handing batches of entries to the packer on the
//!    transaction's thread. The levels above take `1/max` of the entries in memory.
//!    Only the finish touches the tree: it frees the old contents and writes the new.
//!
//! Memory: the buffer (`mem_budget`, reused in the merge as read buffers of the runs:
//! at least `RUN_BUFFER` each), a few merge batches, `2·max` pending entries, and the boxes of the leaves (≈ `n / max` entries)
//! for the upper levels. Temporary files are anonymous (`tempfile_in`), removed when
//! dropped, even on error.
//!
//! Records (little-endian): `tag u8` (0 = point, 1 = box), `key u64` (runs only),
//! `id u64`, `min [f64; D]`, and `max [f64; D]` for boxes (a 5-D point run record is
//! 57 bytes).

use super::RTree;
use super::coord::{Coord, stored_point, stored_rect};
use super::geom::Rect;
use super::hilbert::HilbertKey;
use super::node::Entry;
use super::packer::LevelPacker;
use crate::error::{Error, Result};
use quiredb_engine::WriteTxn;
use rayon::prelude::*;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};

/// Bytes of read buffer per file when cutting a spill file into runs; in the merge,
/// the sort budget (free by then) is shared among the runs, between this and
/// `MAX_RUN_BUFFER` each (long reads matter once the runs have left the page cache).
const RUN_BUFFER: usize = 128 << 10;
/// Most bytes of read buffer per run in the merge.
const MAX_RUN_BUFFER: usize = 8 << 20;
/// Bytes encoded before a write to a temporary file.
const WRITE_BLOCK: usize = 1 << 20;
/// Entries per batch from the merge thread to the packer.
const MERGE_BATCH: usize = 8192;

/// What a finished bulk build did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BulkStats {
    /// Entries in the tree.
    pub entries: u64,
    /// Sorted runs merged (0 = sorted in memory).
    pub runs: usize,
    /// Levels of the tree.
    pub height: u32,
}

/// The sorting half of a streaming bulk load; holds no transaction. See the module docs.
pub struct BulkSorter<const D: usize, C: Coord = f64> {
    dir: PathBuf,
    capacity: usize,
    buffer: Vec<Entry<D>>,
    order: Vec<Sorted>,
    key: Option<HilbertKey<D>>,
    bounds: Rect<D>,
    spill: Option<File>,
    runs: Vec<File>,
    bytes: Vec<u8>,
    len: u64,
    /// The point tree's name when only points are taken.
    points: Option<String>,
    _coord: PhantomData<fn() -> C>,
}

/// Streaming bulk loader of an [`RTree`] in a transaction; see the module docs.
pub struct BulkBuilder<'a, 't, const D: usize, C: Coord> {
    tree: &'a RTree<D, C>,
    txn: &'a WriteTxn<'t>,
    sorter: BulkSorter<D, C>,
}

impl<const D: usize, C: Coord> RTree<D, C> {
    /// Starts a streaming bulk load that replaces the tree's contents at `finish`,
    /// sorting in at most about `mem_budget` bytes, with temporary files in `tmp_dir`.
    pub fn bulk_builder<'a, 't>(
        &'a self,
        txn: &'a WriteTxn<'t>,
        tmp_dir: impl AsRef<Path>,
        mem_budget: usize,
    ) -> Result<BulkBuilder<'a, 't, D, C>> {
        Ok(BulkBuilder { tree: self, txn, sorter: self.bulk_sorter(tmp_dir, mem_budget)? })
    }

    /// A sorter for a later [`BulkSorter::finish_into`] this tree (or another with the
    /// same node capacity), with the limits of [`RTree::bulk_builder`].
    pub fn bulk_sorter(&self, tmp_dir: impl AsRef<Path>, mem_budget: usize) -> Result<BulkSorter<D, C>> {
        let each = std::mem::size_of::<Entry<D>>() + std::mem::size_of::<Sorted>();
        let capacity = (mem_budget / each).min(u32::MAX as usize);
        if capacity < 2 * self.max.max(self.leaf_max) {
            return Err(Error::InvalidParameter {
                reason: format!("a bulk build budget of {mem_budget} bytes holds fewer than two nodes of entries"),
            });
        }
        let dir = tmp_dir.as_ref().to_path_buf();
        if !dir.is_dir() {
            return Err(Error::InvalidParameter { reason: format!("{} is not a directory", dir.display()) });
        }
        Ok(BulkSorter {
            dir,
            capacity,
            buffer: Vec::new(),
            order: Vec::new(),
            key: None,
            bounds: Rect::empty(),
            spill: None,
            runs: Vec::new(),
            bytes: Vec::new(),
            len: 0,
            points: self.points.then(|| self.name.clone()),
            _coord: PhantomData,
        })
    }
}

impl<const D: usize, C: Coord> BulkSorter<D, C> {
    /// Fixes the bounds of the Hilbert key before the first entry, so full buffers are
    /// sorted into runs at once. Centres outside are clamped for the key only. Bad or
    /// late bounds are an error.
    pub fn with_key_bounds(mut self, bounds: &Rect<D>) -> Result<Self> {
        bounds.validate()?;
        if self.len > 0 {
            return Err(Error::InvalidParameter { reason: "key bounds are given before the first entry".into() });
        }
        self.key = Some(HilbertKey::new(bounds));
        Ok(self)
    }

    /// Adds a box with its payload. A NaN or infinite coordinate or `min > max` is
    /// [`Error::InvalidBox`], a box that is not a point for a point tree
    /// [`Error::NotAPoint`], and the entry is not taken (the sorter stays usable).
    pub fn push(&mut self, rect: &Rect<D>, id: u64) -> Result<()> {
        let rect = match &self.points {
            None => stored_rect::<C, D>(rect)?,
            Some(_) if rect.min == rect.max => stored_point::<C, D>(&rect.min)?,
            Some(tree) => {
                return Err(Error::NotAPoint { tree: tree.clone(), reason: format!("{rect:?} has min != max") });
            }
        };
        if self.buffer.len() == self.capacity {
            self.spill_buffer()?;
        }
        if self.key.is_none() {
            let centre = HilbertKey::centre(&rect);
            self.bounds.expand(&Rect::new(centre, centre));
        }
        if self.buffer.len() == self.buffer.capacity() {
            let want = (2 * self.buffer.capacity()).max(1 << 14).min(self.capacity);
            self.buffer.reserve_exact(want - self.buffer.len());
        }
        self.buffer.push(Entry { rect, id });
        self.len += 1;
        Ok(())
    }

    /// Adds a point with its payload (see [`BulkSorter::push`]).
    pub fn push_point(&mut self, point: [f64; D], id: u64) -> Result<()> {
        self.push(&Rect::point(point), id)
    }

    /// Entries taken so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when no entry was taken.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Replaces the contents of `tree` with the entries pushed; returns what it did.
    pub fn finish_into(mut self, tree: &RTree<D, C>, txn: &WriteTxn<'_>) -> Result<BulkStats> {
        if tree.points && self.points.is_none() {
            return Err(Error::InvalidParameter {
                reason: format!("a sorter of a box tree cannot fill the point tree {:?}", tree.name),
            });
        }
        let key = self.key.take().unwrap_or_else(|| HilbertKey::new(&self.bounds));
        if self.spill.is_some() {
            self.make_runs(&key)?;
        } else if !self.runs.is_empty() && !self.buffer.is_empty() {
            let run = self.write_run(&key)?;
            self.runs.push(run);
        }
        tree.clear_for_bulk(txn)?;
        let mut packer = LevelPacker::new(tree, txn, 0);
        let runs = self.runs.len();
        let each = std::mem::size_of::<Entry<D>>() + std::mem::size_of::<Sorted>();
        match (self.capacity * each).checked_div(runs) {
            None => {
                sort_order(&key, &self.buffer, &mut self.order);
                for sorted in &self.order {
                    packer.push(self.buffer[sorted.2 as usize])?;
                }
            }
            Some(share) => {
                (self.buffer, self.order) = (Vec::new(), Vec::new());
                let read_buffer = share.clamp(RUN_BUFFER, MAX_RUN_BUFFER);
                merge_into(std::mem::take(&mut self.runs), read_buffer, &mut packer)?;
            }
        }
        let (leaves, nodes) = packer.finish()?;
        let height = tree.finish_levels(txn, leaves, nodes, self.len)?;
        Ok(BulkStats { entries: self.len, runs, height })
    }

    fn spill_buffer(&mut self) -> Result<()> {
        if let Some(key) = self.key.take() {
            let run = self.write_run(&key);
            self.key = Some(key);
            let run = run?;
            self.runs.push(run);
            return Ok(());
        }
        if self.spill.is_none() {
            self.spill = Some(tempfile::tempfile_in(&self.dir).map_err(Error::Spill)?);
        }
        let out = self.spill.as_mut().expect("spill file just made");
        write_records(out, &mut self.bytes, self.buffer.iter().map(|e| (None, e)))?;
        self.buffer.clear();
        Ok(())
    }

    /// Sorts the buffer and the spilled chunks into run files.
    fn make_runs(&mut self, key: &HilbertKey<D>) -> Result<()> {
        let run = self.write_run(key)?;
        self.runs.push(run);
        let mut file = self.spill.take().expect("make_runs needs a spill file");
        file.seek(SeekFrom::Start(0)).map_err(Error::Spill)?;
        let mut input = RunReader::new(file, false, RUN_BUFFER);
        while let Some((_, entry)) = input.next::<D>()? {
            self.buffer.push(entry);
            if self.buffer.len() == self.capacity {
                let run = self.write_run(key)?;
                self.runs.push(run);
            }
        }
        if !self.buffer.is_empty() {
            let run = self.write_run(key)?;
            self.runs.push(run);
        }
        Ok(())
    }

    /// Sorts the buffer into a new run file (rewound) and empties it.
    fn write_run(&mut self, key: &HilbertKey<D>) -> Result<File> {
        sort_order(key, &self.buffer, &mut self.order);
        let mut file = tempfile::tempfile_in(&self.dir).map_err(Error::Spill)?;
        let records = self.order.iter().map(|&(k, _, i)| (Some(k), &self.buffer[i as usize]));
        write_records(&mut file, &mut self.bytes, records)?;
        file.seek(SeekFrom::Start(0)).map_err(Error::Spill)?;
        self.buffer.clear();
        Ok(file)
    }
}

impl<'a, 't, const D: usize, C: Coord> BulkBuilder<'a, 't, D, C> {
    /// See [`BulkSorter::with_key_bounds`].
    pub fn with_key_bounds(mut self, bounds: &Rect<D>) -> Result<Self> {
        self.sorter = self.sorter.with_key_bounds(bounds)?;
        Ok(self)
    }

    /// Adds a box with its payload (see [`BulkSorter::push`]).
    pub fn push(&mut self, rect: &Rect<D>, id: u64) -> Result<()> {
        self.sorter.push(rect, id)
    }

    /// Adds a point with its payload (see [`BulkSorter::push`]).
    pub fn push_point(&mut self, point: [f64; D], id: u64) -> Result<()> {
        self.sorter.push_point(point, id)
    }

    /// Entries taken so far.
    pub fn len(&self) -> u64 {
        self.sorter.len()
    }

    /// True when no entry was taken.
    pub fn is_empty(&self) -> bool {
        self.sorter.is_empty()
    }

    /// Replaces the tree's contents with the entries pushed; returns what it did.
    pub fn finish(self) -> Result<BulkStats> {
        self.sorter.finish_into(self.tree, self.txn)
    }
}

/// `(key, id, index in the buffer)` of one buffered entry.
type Sorted = (u64, u64, u32);

/// The buffer's order by (key, id) into `order` (reused), in parallel: sorting
/// 24-byte triples moves far less than sorting the entries.
fn sort_order<const D: usize>(key: &HilbertKey<D>, buffer: &[Entry<D>], order: &mut Vec<Sorted>) {
    order.clear();
    let key_of = |e: &Entry<D>| if e.rect.min == e.rect.max { key.point_key(&e.rect.min) } else { key.key(&e.rect) };
    buffer.par_iter().enumerate().map(|(i, e)| (key_of(e), e.id, i as u32)).collect_into_vec(order);
    order.par_sort_unstable();
}

/// Keys every entry and sorts by (key, id), in parallel.
fn sort_keyed<const D: usize>(key: &HilbertKey<D>, keyed: &mut [(u64, Entry<D>)]) {
    keyed.par_iter_mut().with_min_len(4096).for_each(|(k, e)| *k = key.key(&e.rect));
    keyed.par_sort_unstable_by_key(|(k, e)| (*k, e.id));
}

/// `chunk` with keys, sorted by (key, id).
pub(crate) fn sort_chunk<const D: usize>(key: &HilbertKey<D>, chunk: Vec<Entry<D>>) -> Vec<(u64, Entry<D>)> {
    let mut keyed: Vec<(u64, Entry<D>)> = chunk.into_iter().map(|e| (0, e)).collect();
    sort_keyed(key, &mut keyed);
    keyed
}

/// K-way merge of the runs on a second thread, feeding the packer in batches.
fn merge_into<const D: usize, C: Coord>(
    runs: Vec<File>,
    read_buffer: usize,
    packer: &mut LevelPacker<'_, '_, D, C>,
) -> Result<()> {
    let (batches, received) = sync_channel::<Vec<Entry<D>>>(4);
    let (recycle, recycled) = channel::<Vec<Entry<D>>>();
    std::thread::scope(move |scope| {
        let merger = scope.spawn(move || merge_runs(runs, read_buffer, &batches, &recycled));
        let packed = pack_batches(&received, &recycle, packer);
        drop(received);
        let merged = merger.join().unwrap_or_else(|_| Err(spill_corrupted("the merge thread panicked")));
        packed.and(merged)
    })
}

fn pack_batches<const D: usize, C: Coord>(
    received: &Receiver<Vec<Entry<D>>>,
    recycle: &Sender<Vec<Entry<D>>>,
    packer: &mut LevelPacker<'_, '_, D, C>,
) -> Result<()> {
    for mut batch in received.iter() {
        for entry in batch.drain(..) {
            packer.push(entry)?;
        }
        let _ = recycle.send(batch);
    }
    Ok(())
}

/// Merges `runs` by (key, id); stops quietly when the packer side goes away.
fn merge_runs<const D: usize>(
    runs: Vec<File>,
    read_buffer: usize,
    batches: &SyncSender<Vec<Entry<D>>>,
    recycled: &Receiver<Vec<Entry<D>>>,
) -> Result<()> {
    let mut inputs = Vec::with_capacity(runs.len());
    let mut heap = BinaryHeap::with_capacity(runs.len());
    let mut heads = Vec::with_capacity(runs.len());
    for (i, run) in runs.into_iter().enumerate() {
        let mut input = RunReader::new(run, true, read_buffer);
        let first = input.next::<D>()?;
        if let Some((k, entry)) = first {
            heap.push(Reverse((k, entry.id, i)));
        }
        heads.push(first.map(|(_, e)| e));
        inputs.push(input);
    }
    let mut batch = Vec::with_capacity(MERGE_BATCH);
    while let Some(Reverse((_, _, i))) = heap.pop() {
        let entry = heads[i].take().ok_or_else(|| spill_corrupted("a run lost its head"))?;
        batch.push(entry);
        if batch.len() == MERGE_BATCH {
            let next = recycled.try_recv().unwrap_or_else(|_| Vec::with_capacity(MERGE_BATCH));
            if batches.send(std::mem::replace(&mut batch, next)).is_err() {
                return Ok(());
            }
        }
        if let Some((k, next)) = inputs[i].next::<D>()? {
            heap.push(Reverse((k, next.id, i)));
            heads[i] = Some(next);
        }
    }
    if !batch.is_empty() {
        let _ = batches.send(batch);
    }
    Ok(())
}

fn spill_corrupted(what: &str) -> Error {
    Error::Spill(std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned()))
}

/// Encodes `records` into `bytes` and writes them to `out` in blocks.
fn write_records<'e, const D: usize>(
    out: &mut File,
    bytes: &mut Vec<u8>,
    records: impl Iterator<Item = (Option<u64>, &'e Entry<D>)>,
) -> Result<()> {
    bytes.clear();
    for (key, entry) in records {
        encode_record(bytes, key, entry);
        if bytes.len() >= WRITE_BLOCK {
            out.write_all(bytes).map_err(Error::Spill)?;
            bytes.clear();
        }
    }
    out.write_all(bytes).map_err(Error::Spill)?;
    bytes.clear();
    Ok(())
}

fn encode_record<const D: usize>(out: &mut Vec<u8>, key: Option<u64>, entry: &Entry<D>) {
    let point = entry.rect.min == entry.rect.max;
    out.push(u8::from(!point));
    if let Some(k) = key {
        out.extend_from_slice(&k.to_le_bytes());
    }
    out.extend_from_slice(&entry.id.to_le_bytes());
    for v in entry.rect.min {
        out.extend_from_slice(&v.to_le_bytes());
    }
    if !point {
        for v in entry.rect.max {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

/// Reads the records of a run or spill file in order.
struct RunReader {
    input: BufReader<File>,
    keyed: bool,
    scratch: Vec<u8>,
}

impl RunReader {
    fn new(file: File, keyed: bool, buffer: usize) -> Self {
        RunReader { input: BufReader::with_capacity(buffer, file), keyed, scratch: Vec::new() }
    }

    /// The next record, or `None` at the end of the file.
    fn next<const D: usize>(&mut self) -> Result<Option<(u64, Entry<D>)>> {
        let mut tag = [0u8; 1];
        match self.input.read_exact(&mut tag) {
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            other => other.map_err(Error::Spill)?,
        }
        let boxed = match tag[0] {
            0 => false,
            1 => true,
            _ => return Err(spill_corrupted("bad record tag")),
        };
        let words = usize::from(self.keyed) + 1 + D * (1 + usize::from(boxed));
        self.scratch.resize(words * 8, 0);
        self.input.read_exact(&mut self.scratch).map_err(Error::Spill)?;
        let mut words = self.scratch.chunks_exact(8).map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")));
        let mut next = || words.next().unwrap_or(0);
        let key = if self.keyed { next() } else { 0 };
        let id = next();
        let min: [f64; D] = std::array::from_fn(|_| f64::from_bits(next()));
        let max = if boxed { std::array::from_fn(|_| f64::from_bits(next())) } else { min };
        Ok(Some((key, Entry { rect: Rect::new(min, max), id })))
    }
}
