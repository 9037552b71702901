//! Bounded-memory bulk load for inputs larger than memory: [`BulkBuilder`] takes the
//! entries one at a time, sorts them into Hilbert order with an external merge sort
//! and packs full leaves bottom-up as they come out of the merge (`packer.rs`).
//!
//! 1. `push` validates the box (NaN, infinity, `min > max` are a typed error and the
//!    entry is not taken) and appends it to a buffer of `mem_budget` bytes, tracking
//!    the bounds of the box centres. A full buffer is appended unsorted to a spill
//!    file in the caller's directory (the Hilbert key needs the final bounds).
//! 2. `finish`, when nothing was spilled, sorts the buffer in memory (rayon) and packs.
//!    Otherwise it cuts the spill file back into buffer-sized chunks, sorts each by
//!    (key, id) into a run file, and merges the runs with a heap, each leaf written as
//!    soon as it is full. The levels above take `1/max` of the entries in memory.
//! 3. Only `finish` touches the tree: it frees the old contents and writes the new.
//!
//! Memory: the buffer (`mem_budget`), 64 KiB of read buffer per run, `2·max` pending
//! entries, and the boxes of the leaves (≈ `n / max` entries) for the upper levels.
//! Temporary files are anonymous (`tempfile_in`), removed when dropped, even on error.
//!
//! Spill record (little-endian): `tag u8` (0 = point, 1 = box), `key u64` (runs
//! only), `id u64`, `min [f64; D]`, and `max [f64; D]` for boxes.

use super::RTree;
use super::coord::{Coord, stored_rect};
use super::geom::Rect;
use super::hilbert::HilbertKey;
use super::node::Entry;
use super::packer::LevelPacker;
use crate::error::{Error, Result};
use quiredb_engine::WriteTxn;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Bytes of read buffer per run in the merge.
const RUN_BUFFER: usize = 64 << 10;

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

/// Streaming bulk loader of an [`RTree`]; see the module docs.
pub struct BulkBuilder<'a, 't, const D: usize, C: Coord> {
    tree: &'a RTree<D, C>,
    txn: &'a WriteTxn<'t>,
    dir: PathBuf,
    capacity: usize,
    buffer: Vec<Entry<D>>,
    bounds: Rect<D>,
    spill: Option<BufWriter<File>>,
    len: u64,
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
        // Sorting holds a chunk and its keyed copy at once.
        let capacity = mem_budget / (std::mem::size_of::<Entry<D>>() + std::mem::size_of::<(u64, Entry<D>)>());
        if capacity < 2 * self.max {
            return Err(Error::InvalidParameter {
                reason: format!("a bulk build budget of {mem_budget} bytes holds fewer than two nodes of entries"),
            });
        }
        let dir = tmp_dir.as_ref().to_path_buf();
        if !dir.is_dir() {
            return Err(Error::InvalidParameter { reason: format!("{} is not a directory", dir.display()) });
        }
        Ok(BulkBuilder {
            tree: self,
            txn,
            dir,
            capacity,
            buffer: Vec::new(),
            bounds: Rect::empty(),
            spill: None,
            len: 0,
        })
    }
}

impl<'a, 't, const D: usize, C: Coord> BulkBuilder<'a, 't, D, C> {
    /// Adds a box with its payload. A NaN or infinite coordinate or `min > max` is
    /// [`Error::InvalidBox`] and the entry is not taken (the builder stays usable).
    pub fn push(&mut self, rect: &Rect<D>, id: u64) -> Result<()> {
        let rect = stored_rect::<C, D>(rect)?;
        let centre = HilbertKey::centre(&rect);
        self.bounds.expand(&Rect::new(centre, centre));
        if self.buffer.len() == self.capacity {
            self.spill_buffer()?;
        }
        if self.buffer.capacity() == 0 {
            self.buffer.reserve_exact(self.capacity.min(1 << 16));
        }
        self.buffer.push(Entry { rect, id });
        self.len += 1;
        Ok(())
    }

    /// Adds a point with its payload (see [`BulkBuilder::push`]).
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

    /// Replaces the tree's contents with the entries pushed; returns what it did.
    pub fn finish(mut self) -> Result<BulkStats> {
        let key = HilbertKey::new(&self.bounds);
        self.tree.clear_for_bulk(self.txn)?;
        let mut packer = LevelPacker::new(self.tree, self.txn, 0);
        let runs = match self.spill.take() {
            None => {
                for (_, entry) in sort_chunk(&key, std::mem::take(&mut self.buffer)) {
                    packer.push(entry)?;
                }
                0
            }
            Some(spill) => {
                let runs = self.make_runs(&key, spill)?;
                let count = runs.len();
                merge_runs(runs, &mut packer)?;
                count
            }
        };
        let (leaves, nodes) = packer.finish()?;
        let height = self.tree.finish_levels(self.txn, leaves, nodes, self.len)?;
        Ok(BulkStats { entries: self.len, runs, height })
    }

    fn spill_buffer(&mut self) -> Result<()> {
        if self.spill.is_none() {
            let file = tempfile::tempfile_in(&self.dir).map_err(Error::Spill)?;
            self.spill = Some(BufWriter::with_capacity(RUN_BUFFER, file));
        }
        let out = self.spill.as_mut().expect("spill file just made");
        for entry in &self.buffer {
            write_record(out, None, entry).map_err(Error::Spill)?;
        }
        self.buffer.clear();
        Ok(())
    }

    /// Sorts the spilled chunks and the buffer into run files.
    fn make_runs(&mut self, key: &HilbertKey<D>, spill: BufWriter<File>) -> Result<Vec<File>> {
        let buffer = std::mem::take(&mut self.buffer);
        let mut runs = vec![self.write_run(key, buffer)?];
        let mut file = spill.into_inner().map_err(|e| Error::Spill(e.into_error()))?;
        file.seek(SeekFrom::Start(0)).map_err(Error::Spill)?;
        let mut input = BufReader::with_capacity(RUN_BUFFER, file);
        let mut chunk = Vec::with_capacity(self.capacity);
        while let Some((_, entry)) = read_record::<D>(&mut input, false).map_err(Error::Spill)? {
            chunk.push(entry);
            if chunk.len() == self.capacity {
                runs.push(self.write_run(key, std::mem::take(&mut chunk))?);
                chunk = Vec::with_capacity(self.capacity);
            }
        }
        if !chunk.is_empty() {
            runs.push(self.write_run(key, chunk)?);
        }
        Ok(runs)
    }

    fn write_run(&self, key: &HilbertKey<D>, chunk: Vec<Entry<D>>) -> Result<File> {
        let file = tempfile::tempfile_in(&self.dir).map_err(Error::Spill)?;
        let mut out = BufWriter::with_capacity(RUN_BUFFER, file);
        for (k, entry) in sort_chunk(key, chunk) {
            write_record(&mut out, Some(k), &entry).map_err(Error::Spill)?;
        }
        let mut file = out.into_inner().map_err(|e| Error::Spill(e.into_error()))?;
        file.seek(SeekFrom::Start(0)).map_err(Error::Spill)?;
        Ok(file)
    }
}

/// `chunk` with keys, sorted by (key, id).
pub(crate) fn sort_chunk<const D: usize>(key: &HilbertKey<D>, chunk: Vec<Entry<D>>) -> Vec<(u64, Entry<D>)> {
    use rayon::prelude::*;
    let mut keyed: Vec<(u64, Entry<D>)> = chunk.into_par_iter().map(|e| (key.key(&e.rect), e)).collect();
    keyed.par_sort_unstable_by_key(|(k, e)| (*k, e.id));
    keyed
}

/// K-way merge of the sorted runs into the packer.
fn merge_runs<const D: usize, C: Coord>(runs: Vec<File>, packer: &mut LevelPacker<'_, '_, D, C>) -> Result<()> {
    let mut inputs = Vec::with_capacity(runs.len());
    let mut heap = BinaryHeap::with_capacity(runs.len());
    let mut heads = Vec::with_capacity(runs.len());
    for (i, run) in runs.into_iter().enumerate() {
        let mut input = BufReader::with_capacity(RUN_BUFFER, run);
        let first = read_record::<D>(&mut input, true).map_err(Error::Spill)?;
        if let Some((k, entry)) = first {
            heap.push(Reverse((k, entry.id, i)));
        }
        heads.push(first.map(|(_, e)| e));
        inputs.push(input);
    }
    while let Some(Reverse((_, _, i))) = heap.pop() {
        let entry = heads[i].take().ok_or_else(|| spill_corrupted("a run lost its head"))?;
        packer.push(entry)?;
        if let Some((k, next)) = read_record::<D>(&mut inputs[i], true).map_err(Error::Spill)? {
            heap.push(Reverse((k, next.id, i)));
            heads[i] = Some(next);
        }
    }
    Ok(())
}

fn spill_corrupted(what: &str) -> Error {
    Error::Spill(std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned()))
}

fn write_record<const D: usize>(out: &mut impl Write, key: Option<u64>, entry: &Entry<D>) -> std::io::Result<()> {
    let point = entry.rect.min == entry.rect.max;
    out.write_all(&[u8::from(!point)])?;
    if let Some(k) = key {
        out.write_all(&k.to_le_bytes())?;
    }
    out.write_all(&entry.id.to_le_bytes())?;
    for v in entry.rect.min {
        out.write_all(&v.to_le_bytes())?;
    }
    if !point {
        for v in entry.rect.max {
            out.write_all(&v.to_le_bytes())?;
        }
    }
    Ok(())
}

/// Reads one record, or `None` at the end of the file.
fn read_record<const D: usize>(input: &mut impl Read, keyed: bool) -> std::io::Result<Option<(u64, Entry<D>)>> {
    let mut tag = [0u8; 1];
    match input.read_exact(&mut tag) {
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        other => other?,
    }
    let mut word = [0u8; 8];
    let mut next = |input: &mut dyn Read| -> std::io::Result<u64> {
        input.read_exact(&mut word)?;
        Ok(u64::from_le_bytes(word))
    };
    let key = if keyed { next(input)? } else { 0 };
    let id = next(input)?;
    let mut rect = Rect::point([0.0; D]);
    for d in 0..D {
        rect.min[d] = f64::from_bits(next(input)?);
    }
    rect.max = rect.min;
    if tag[0] == 1 {
        for d in 0..D {
            rect.max[d] = f64::from_bits(next(input)?);
        }
    }
    Ok(Some((key, Entry { rect, id })))
}
