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
//!    (a tree of losers) on a second thread, handing batches of entries to the packer
//!    on the transaction's thread. The levels above take `1/max` of the entries in
//!    memory. Only the finish touches the tree: it frees the old contents and writes
//!    the new.
//!
//! Memory: the buffer (`mem_budget`, reused in the merge as read buffers of the runs:
//! at least `RUN_BUFFER` each), a few merge batches, `2·max` pending entries, and the
//! boxes of the leaves (≈ `n / max` entries) for the upper levels. Temporary files are
//! anonymous (`tempfile_in`), removed when dropped, even on error; the merge punches
//! holes into them as it reads, so their page cache is recycled at once.
//!
//! The buffer holds records of `u64` words, the id then the coordinates (a point
//! tree's sorter keeps `D` coordinates an entry, not a degenerate box's `2·D`). The
//! sort is of one `u128` an entry: the Hilbert key (full resolution: a coarser key that
//! left room for the index in a `u64` cost 3–9 % more pages per query for no measurable
//! speed) above the entry's index in the buffer; equal keys keep their push order, and
//! the merge keeps run order among equal keys. So a 5-D point takes 64 bytes of budget
//! (1.57 M a 96 MiB run). Run and spill files hold fixed-width records of `u64` words
//! written in blocks: see `stream/runs.rs`.
//!
//! Cost: in the full meteo load (57.6 M 5-D points) the sort thread takes 21 % of the
//! load's CPU and the merge thread 8 % (`reports/METEO-LOAD-LOG.md` has the profile).

mod runs;

use super::coord::{Coord, stored_point, stored_rect};
use super::geom::Rect;
use super::hilbert::HilbertKey;
use super::node::Entry;
use super::packer::LevelPacker;
use super::{Core, RTree};
use crate::error::{Error, Result};
use quiredb_engine::WriteTxn;
use rayon::prelude::*;
use runs::{RunReader, coord_words, entry_of, merge_into, write_words};
use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

/// Bytes of read buffer per file when cutting a spill file into runs; in the merge,
/// the sort budget (free by then) is shared among the runs, between this and
/// `MAX_RUN_BUFFER` each (long reads matter once the runs have left the page cache).
const RUN_BUFFER: usize = 128 << 10;
/// Most bytes of read buffer per run in the merge.
const MAX_RUN_BUFFER: usize = 8 << 20;
/// Words gathered before a write to a temporary file (1 MiB).
const WRITE_WORDS: usize = 1 << 17;

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
    /// Buffered records, [`BulkSorter::width`] words each: the id, then the
    /// coordinates as `f64` bits (`min`, then `max` for a box tree), the layout of a
    /// spill record: one place to read per entry when the sorted run is gathered.
    records: Vec<u64>,
    /// Sort words: `key << 64 | index in the buffer`.
    order: Vec<u128>,
    key: Option<HilbertKey<D>>,
    bounds: Rect<D>,
    spill: Option<File>,
    runs: Vec<File>,
    /// Records gathered for a write.
    block: Vec<u64>,
    len: u64,
    /// The point tree's name when only points are taken.
    points: Option<String>,
    _coord: PhantomData<fn() -> C>,
}

/// Streaming bulk loader of an [`RTree`] in a transaction; see the module docs.
pub struct BulkBuilder<'a, 't, const D: usize, C: Coord> {
    tree: &'a Core<D, C>,
    name: &'a str,
    txn: &'a WriteTxn<'t>,
    sorter: BulkSorter<D, C>,
}

/// Bytes of sort buffer an entry takes: id, coordinates and sort word.
fn entry_bytes<const D: usize>(boxed: bool) -> usize {
    8 * (1 + coord_words::<D>(boxed)) + std::mem::size_of::<u128>()
}

impl<const D: usize, C: Coord> Core<D, C> {
    /// Starts a streaming bulk load that replaces the contents of the tree `name` at
    /// `finish`, sorting in at most about `mem_budget` bytes, with temporary files in
    /// `tmp_dir`.
    pub fn bulk_builder<'a, 't>(
        &'a self,
        txn: &'a WriteTxn<'t>,
        name: &'a str,
        tmp_dir: impl AsRef<Path>,
        mem_budget: usize,
    ) -> Result<BulkBuilder<'a, 't, D, C>> {
        Ok(BulkBuilder { tree: self, name, txn, sorter: self.bulk_sorter(name, tmp_dir, mem_budget)? })
    }

    /// A sorter for a later [`BulkSorter::finish_into`] this tree, named `name` (or
    /// another with the same node capacity), with the limits of [`RTree::bulk_builder`].
    pub fn bulk_sorter(&self, name: &str, tmp_dir: impl AsRef<Path>, mem_budget: usize) -> Result<BulkSorter<D, C>> {
        let capacity = (mem_budget / entry_bytes::<D>(!self.points)).min(u32::MAX as usize);
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
            records: Vec::new(),
            order: Vec::new(),
            key: None,
            bounds: Rect::empty(),
            spill: None,
            runs: Vec::new(),
            block: Vec::new(),
            len: 0,
            points: self.points.then(|| name.to_owned()),
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
        self.take(&rect, id)
    }

    /// Adds a point with its payload (see [`BulkSorter::push`]).
    pub fn push_point(&mut self, point: [f64; D], id: u64) -> Result<()> {
        match self.points {
            Some(_) => self.take(&stored_point::<C, D>(&point)?, id),
            None => self.push(&Rect::point(point), id),
        }
    }

    /// Buffers a validated entry, writing a run (or spilling) when the buffer is full.
    #[inline]
    fn take(&mut self, rect: &Rect<D>, id: u64) -> Result<()> {
        let width = self.width();
        if self.records.len() == self.capacity * width {
            self.spill_buffer()?;
        }
        if self.key.is_none() {
            let centre = HilbertKey::centre(rect);
            self.bounds.expand(&Rect::new(centre, centre));
        }
        if self.records.len() + width > self.records.capacity() {
            self.grow();
        }
        self.records.push(id);
        self.records.extend(rect.min.iter().map(|c| c.to_bits()));
        if self.points.is_none() {
            self.records.extend(rect.max.iter().map(|c| c.to_bits()));
        }
        self.len += 1;
        Ok(())
    }

    /// Doubles the buffer (at least 16 k entries, at most `capacity`).
    fn grow(&mut self) {
        let width = self.width();
        let want = (2 * self.records.capacity() / width).max(1 << 14).min(self.capacity);
        self.records.reserve_exact((want * width).saturating_sub(self.records.len()));
    }

    /// Words of a buffered (or spilled) record: id and coordinates.
    fn width(&self) -> usize {
        1 + coord_words::<D>(self.boxed())
    }

    /// Entries in the buffer.
    fn buffered(&self) -> usize {
        self.records.len() / self.width()
    }

    /// True for a box tree's sorter (records hold `min` and `max`).
    fn boxed(&self) -> bool {
        self.points.is_none()
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
    pub fn finish_into(self, tree: &RTree<'_, WriteTxn<'_>, D, C>) -> Result<BulkStats> {
        let (core, txn) = tree.parts();
        self.finish_core(core, tree.name(), txn)
    }

    /// [`BulkSorter::finish_into`] the tree `tree`, named `name`, in `txn`.
    pub(crate) fn finish_core(mut self, tree: &Core<D, C>, name: &str, txn: &WriteTxn<'_>) -> Result<BulkStats> {
        if tree.points && self.points.is_none() {
            return Err(Error::InvalidParameter {
                reason: format!("a sorter of a box tree cannot fill the point tree {name:?}"),
            });
        }
        let key = self.key.take().unwrap_or_else(|| HilbertKey::new(&self.bounds));
        if self.spill.is_some() {
            self.make_runs(&key)?;
        } else if !self.runs.is_empty() && !self.records.is_empty() {
            let run = self.write_run(&key)?;
            self.runs.push(run);
        }
        tree.clear_for_bulk(txn)?;
        let mut packer = LevelPacker::new(tree, txn, 0);
        let runs = self.runs.len();
        let boxed = self.boxed();
        match (self.capacity * entry_bytes::<D>(boxed)).checked_div(runs) {
            None => {
                self.sort_order(&key);
                let width = self.width();
                for &word in &self.order {
                    packer.push(entry_of::<D>(&self.records[word as u64 as usize * width..][..width], boxed))?;
                }
            }
            Some(share) => {
                (self.records, self.order) = (Vec::new(), Vec::new());
                let read_buffer = share.clamp(RUN_BUFFER, MAX_RUN_BUFFER);
                merge_into(std::mem::take(&mut self.runs), boxed, read_buffer, &mut packer)?;
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
            self.runs.push(run?);
            return Ok(());
        }
        if self.spill.is_none() {
            self.spill = Some(tempfile::tempfile_in(&self.dir).map_err(Error::Spill)?);
        }
        let out = self.spill.as_mut().expect("spill file just made");
        write_words(out, &self.records)?;
        self.records.clear();
        Ok(())
    }

    /// Sorts the buffer and the spilled chunks into run files.
    fn make_runs(&mut self, key: &HilbertKey<D>) -> Result<()> {
        let run = self.write_run(key)?;
        self.runs.push(run);
        let mut file = self.spill.take().expect("make_runs needs a spill file");
        file.seek(SeekFrom::Start(0)).map_err(Error::Spill)?;
        let mut input = RunReader::new(file, self.width(), RUN_BUFFER);
        while let Some(record) = input.current()? {
            self.records.extend_from_slice(record);
            input.advance();
            if self.buffered() == self.capacity {
                let run = self.write_run(key)?;
                self.runs.push(run);
            }
        }
        if !self.records.is_empty() {
            let run = self.write_run(key)?;
            self.runs.push(run);
        }
        Ok(())
    }

    /// Sorts the buffer into a new run file (rewound) and empties it.
    fn write_run(&mut self, key: &HilbertKey<D>) -> Result<File> {
        self.sort_order(key);
        let mut file = tempfile::tempfile_in(&self.dir).map_err(Error::Spill)?;
        let width = self.width();
        self.block.clear();
        for &word in &self.order {
            self.block.push((word >> 64) as u64);
            self.block.extend_from_slice(&self.records[word as u64 as usize * width..][..width]);
            if self.block.len() >= WRITE_WORDS {
                write_words(&mut file, &self.block)?;
                self.block.clear();
            }
        }
        write_words(&mut file, &self.block)?;
        file.seek(SeekFrom::Start(0)).map_err(Error::Spill)?;
        self.records.clear();
        Ok(file)
    }

    /// The buffer's order by key (ties in push order) into `order`, in parallel:
    /// `u128` sort words, the key above the buffer index.
    fn sort_order(&mut self, key: &HilbertKey<D>) {
        let boxed = self.boxed();
        let key_of = |record: &[u64]| {
            let min: [f64; D] = std::array::from_fn(|d| f64::from_bits(record[1 + d]));
            match boxed {
                false => key.point_key(&min),
                true => key.key(&Rect::new(min, std::array::from_fn(|d| f64::from_bits(record[1 + D + d])))),
            }
        };
        self.order.clear();
        self.records
            .par_chunks_exact(self.width())
            .enumerate()
            .map(|(i, record)| u128::from(key_of(record)) << 64 | i as u128)
            .collect_into_vec(&mut self.order);
        self.order.par_sort_unstable();
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
        self.sorter.finish_core(self.tree, self.name, self.txn)
    }
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
