//! The run files of the streaming bulk load (`../stream.rs`) and their k-way merge.
//!
//! A record is a fixed number of native-endian `u64` words, the same for every record
//! of a sorter: `key` (runs only; a spill file has none), `id`, then the coordinates
//! as `f64` bits: `min[D]` for a point tree's sorter, `min[D]` and `max[D]` for a box
//! tree's (a 5-D point run record: 7 words, 56 bytes). Records are written and read as
//! whole blocks of words (`bytemuck` casts, no per-record encoding or tag byte); the
//! files are anonymous temporary files of one process, so the byte order is the
//! machine's.
//!
//! The merge reads every run through its own buffer of whole records and keeps the
//! runs' next `(key, run)` in a binary heap (the top is replaced in place: one sift per
//! record); it runs on a second thread and hands batches of entries to the packer on
//! the transaction's thread.

use crate::error::{Error, Result};
use crate::rtree::coord::Coord;
use crate::rtree::geom::Rect;
use crate::rtree::node::Entry;
use crate::rtree::packer::LevelPacker;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::collections::binary_heap::PeekMut;
use std::fs::File;
use std::io::{Read, Write};
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};

/// Entries per batch from the merge thread to the packer.
const MERGE_BATCH: usize = 8192;

/// Words of a record's coordinates: `D` for points, `2·D` for boxes.
pub(crate) fn coord_words<const D: usize>(boxed: bool) -> usize {
    D * (1 + usize::from(boxed))
}

/// Writes `words` to `out` as bytes.
pub(crate) fn write_words(out: &mut File, words: &[u64]) -> Result<()> {
    out.write_all(bytemuck::cast_slice(words)).map_err(Error::Spill)
}

/// The entry of a record's `id, coords…` words (`coords` of `coord_words` length).
#[inline]
pub(crate) fn entry_of<const D: usize>(words: &[u64], boxed: bool) -> Entry<D> {
    let min: [f64; D] = std::array::from_fn(|d| f64::from_bits(words[1 + d]));
    let max = if boxed { std::array::from_fn(|d| f64::from_bits(words[1 + D + d])) } else { min };
    Entry { rect: Rect::new(min, max), id: words[0] }
}

pub(crate) fn spill_corrupted(what: &str) -> Error {
    Error::Spill(std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned()))
}

/// Reads the fixed-width records of a run or spill file in order, a buffer at a time.
pub(crate) struct RunReader {
    file: File,
    width: usize,
    words: Vec<u64>,
    at: usize,
    end: usize,
}

impl RunReader {
    /// A reader of `width`-word records with about `buffer` bytes of buffer (at least
    /// one record).
    pub fn new(file: File, width: usize, buffer: usize) -> Self {
        let records = (buffer / (8 * width)).max(1);
        RunReader { file, width, words: vec![0; records * width], at: 0, end: 0 }
    }

    /// The current record, or `None` at the end of the file.
    #[inline]
    pub fn current(&mut self) -> Result<Option<&[u64]>> {
        if self.at == self.end && !self.refill()? {
            return Ok(None);
        }
        Ok(Some(&self.words[self.at..self.at + self.width]))
    }

    /// Moves past the current record.
    #[inline]
    pub fn advance(&mut self) {
        self.at += self.width;
    }

    /// Reads the next buffer of whole records; false at the end of the file.
    fn refill(&mut self) -> Result<bool> {
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut self.words);
        let mut filled = 0;
        while filled < bytes.len() {
            match self.file.read(&mut bytes[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::Spill(e)),
            }
        }
        if filled % (8 * self.width) != 0 {
            return Err(spill_corrupted("a run file ends inside a record"));
        }
        (self.at, self.end) = (0, filled / 8);
        Ok(filled > 0)
    }
}

/// K-way merge of the runs (`key, id, coords…` records) on a second thread, feeding
/// the packer in batches.
pub(crate) fn merge_into<const D: usize, C: Coord>(
    runs: Vec<File>,
    boxed: bool,
    read_buffer: usize,
    packer: &mut LevelPacker<'_, '_, D, C>,
) -> Result<()> {
    let (batches, received) = sync_channel::<Vec<Entry<D>>>(4);
    let (recycle, recycled) = channel::<Vec<Entry<D>>>();
    std::thread::scope(move |scope| {
        let merger = scope.spawn(move || merge_runs(runs, boxed, read_buffer, &batches, &recycled));
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

/// Merges `runs` by key, ties in run order (deterministic: a run keeps its push order
/// among equal keys); stops quietly when the packer side goes away.
fn merge_runs<const D: usize>(
    runs: Vec<File>,
    boxed: bool,
    read_buffer: usize,
    batches: &SyncSender<Vec<Entry<D>>>,
    recycled: &Receiver<Vec<Entry<D>>>,
) -> Result<()> {
    let width = 1 + 1 + coord_words::<D>(boxed);
    let mut inputs = Vec::with_capacity(runs.len());
    let mut heap = BinaryHeap::with_capacity(runs.len());
    for (i, run) in runs.into_iter().enumerate() {
        let mut input = RunReader::new(run, width, read_buffer);
        if let Some(first) = input.current()? {
            heap.push(Reverse((first[0], i)));
        }
        inputs.push(input);
    }
    let mut batch = Vec::with_capacity(MERGE_BATCH);
    while let Some(mut top) = heap.peek_mut() {
        let Reverse((_, i)) = *top;
        let input = &mut inputs[i];
        let record = input.current()?.ok_or_else(|| spill_corrupted("a run lost its head"))?;
        batch.push(entry_of::<D>(&record[1..], boxed));
        input.advance();
        match input.current()? {
            Some(next) => *top = Reverse((next[0], i)),
            None => drop(PeekMut::pop(top)),
        }
        if batch.len() == MERGE_BATCH {
            let next = recycled.try_recv().unwrap_or_else(|_| Vec::with_capacity(MERGE_BATCH));
            if batches.send(std::mem::replace(&mut batch, next)).is_err() {
                return Ok(());
            }
        }
    }
    if !batch.is_empty() {
        let _ = batches.send(batch);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Seek, SeekFrom};

    fn file_of(words: &[u64], extra: &[u8]) -> File {
        let mut file = tempfile::tempfile().expect("temporary file");
        write_words(&mut file, words).expect("write");
        file.write_all(extra).expect("write");
        file.seek(SeekFrom::Start(0)).expect("rewind");
        file
    }

    /// Records come back in order whatever the buffer size (one record, several, a
    /// part of the file); a file ending inside a record is an error, not a panic.
    #[test]
    fn records_round_trip_through_any_buffer_and_truncation_is_an_error() {
        let words: Vec<u64> = (0..3 * 1000).collect();
        for buffer in [1, 24, 48, 1000, 1 << 20] {
            let mut reader = RunReader::new(file_of(&words, &[]), 3, buffer);
            let mut back = Vec::new();
            while let Some(record) = reader.current().expect("read") {
                back.extend_from_slice(record);
                reader.advance();
            }
            assert_eq!(back, words, "buffer {buffer}");
        }
        let mut reader = RunReader::new(file_of(&words[..6], &[1, 2, 3]), 3, 1 << 10);
        assert!(matches!(reader.current(), Err(Error::Spill(_))));
    }

    /// A record's words decode to the point or box they hold.
    #[test]
    fn entries_decode_points_and_boxes() {
        let point = entry_of::<2>(&[7, 1.5f64.to_bits(), (-2.0f64).to_bits()], false);
        assert_eq!((point.id, point.rect), (7, Rect::point([1.5, -2.0])));
        let words = [9, 0f64.to_bits(), 1f64.to_bits(), 2f64.to_bits(), 3f64.to_bits()];
        let boxed = entry_of::<2>(&words, true);
        assert_eq!((boxed.id, boxed.rect), (9, Rect::new([0.0, 1.0], [2.0, 3.0])));
    }
}
