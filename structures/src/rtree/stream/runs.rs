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
//! Every buffer read is released from the file at once (a punched hole), so the run
//! files' page cache is recycled while the merge goes.
//!
//! The merge reads every run through its own buffer of whole records and keeps the
//! runs' next `(key, run)` in a tree of losers (one comparison a level per record); it
//! runs on a second thread and hands batches of entries to the packer on the
//! transaction's thread.

use crate::error::{Error, Result};
use crate::rtree::coord::Coord;
use crate::rtree::geom::Rect;
use crate::rtree::node::Entry;
use crate::rtree::packer::LevelPacker;
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
    /// Bytes read so far (and released, see [`release`]).
    offset: u64,
}

impl RunReader {
    /// A reader of `width`-word records with about `buffer` bytes of buffer (at least
    /// one record).
    pub fn new(file: File, width: usize, buffer: usize) -> Self {
        let records = (buffer / (8 * width)).max(1);
        RunReader { file, width, words: vec![0; records * width], at: 0, end: 0, offset: 0 }
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
        release(&self.file, self.offset, filled as u64);
        self.offset += filled as u64;
        (self.at, self.end) = (0, filled / 8);
        Ok(filled > 0)
    }
}

/// Frees the file's pages of `len` bytes at `offset`, already copied out (a hole is
/// punched; best effort: ignored where the file system cannot). The page cache pages
/// go back to the kernel at once and are reused, hot, by the tree's pages written in
/// the same merge: on a VM that hands free memory back to its host, a page that stays
/// free costs a host fault when touched again (about 1 s of CPU a GB measured here).
fn release(file: &File, offset: u64, len: u64) {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{FallocateFlags, fallocate};
        let _ = fallocate(file, FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE, offset, len);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, offset, len);
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
    let mut heads = Vec::with_capacity(runs.len());
    for (i, run) in runs.into_iter().enumerate() {
        let mut input = RunReader::new(run, width, read_buffer);
        heads.push(head(input.current()?, i));
        inputs.push(input);
    }
    let mut tree = LoserTree::new(heads);
    let mut batch = Vec::with_capacity(MERGE_BATCH);
    while let Some(i) = tree.winner() {
        let input = &mut inputs[i];
        let record = input.current()?.ok_or_else(|| spill_corrupted("a run lost its head"))?;
        batch.push(entry_of::<D>(&record[1..], boxed));
        input.advance();
        tree.replace(head(input.current()?, i));
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

/// The merge order of run `run`'s next record: its key, then the run; `u128::MAX`
/// for an exhausted run.
#[inline]
fn head(record: Option<&[u64]>, run: usize) -> u128 {
    record.map_or(u128::MAX, |r| u128::from(r[0]) << 64 | run as u128)
}

/// A tournament tree of losers over the runs' heads: the smallest head is found again
/// after a replacement with one comparison a level (a binary heap's sift takes two).
struct LoserTree {
    /// `nodes[0]`: the winner; `nodes[n]`, `1 ≤ n < k`: the run that lost the match at
    /// internal node `n` (the runs are the leaves `k .. 2k`, parent `n / 2`).
    nodes: Vec<usize>,
    heads: Vec<u128>,
}

impl LoserTree {
    fn new(heads: Vec<u128>) -> Self {
        let k = heads.len();
        let mut tree = LoserTree { nodes: vec![usize::MAX; k.max(1)], heads };
        // Every internal node gets one arrival from each child: the first waits there,
        // the second plays it and the winner goes on up.
        for run in 0..k {
            let mut winner = run;
            let mut node = (run + k) / 2;
            while node > 0 {
                if tree.nodes[node] == usize::MAX {
                    tree.nodes[node] = winner;
                    break;
                }
                if tree.heads[tree.nodes[node]] < tree.heads[winner] {
                    std::mem::swap(&mut tree.nodes[node], &mut winner);
                }
                node /= 2;
            }
            if node == 0 {
                tree.nodes[0] = winner;
            }
        }
        tree
    }

    /// The run with the smallest head, `None` when every run is exhausted.
    #[inline]
    fn winner(&self) -> Option<usize> {
        let run = *self.nodes.first()?;
        (run != usize::MAX && self.heads[run] != u128::MAX).then_some(run)
    }

    /// Gives the winner a new head and replays its path.
    #[inline]
    fn replace(&mut self, head: u128) {
        let k = self.heads.len();
        let mut winner = self.nodes[0];
        self.heads[winner] = head;
        let mut node = (winner + k) / 2;
        while node > 0 {
            let other = self.nodes[node];
            if self.heads[other] < self.heads[winner] {
                self.nodes[node] = winner;
                winner = other;
            }
            node /= 2;
        }
        self.nodes[0] = winner;
    }
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

    /// The loser tree gives the heads in order for any number of runs, equal keys in
    /// run order, exhausted runs last.
    #[test]
    fn the_loser_tree_merges_in_order() {
        for k in [1usize, 2, 3, 5, 8, 13] {
            // Run r holds the keys r, r + 3, r + 6, … (k + r) times; some keys repeat.
            let runs: Vec<Vec<u64>> =
                (0..k).map(|r| (0..(k + r) as u64).map(|j| r as u64 % 3 + 3 * j).collect()).collect();
            let mut at = vec![0; k];
            let first = |r: usize, at: &[usize]| runs[r].get(at[r]).map(|&key| [key]);
            let mut tree = LoserTree::new((0..k).map(|r| head(first(r, &at).as_ref().map(|w| &w[..]), r)).collect());
            let mut merged = Vec::new();
            while let Some(r) = tree.winner() {
                merged.push((runs[r][at[r]], r));
                at[r] += 1;
                tree.replace(head(first(r, &at).as_ref().map(|w| &w[..]), r));
            }
            let mut expected: Vec<(u64, usize)> =
                runs.iter().enumerate().flat_map(|(r, keys)| keys.iter().map(move |&key| (key, r))).collect();
            expected.sort_unstable();
            assert_eq!(merged, expected, "{k} runs");
        }
        assert_eq!(LoserTree::new(Vec::new()).winner(), None);
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
