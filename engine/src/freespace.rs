//! Free space: which physical pages and logical ids can be reused, and the commit
//! record that persists it.
//!
//! A physical page replaced or freed by transaction T is still reachable from every
//! snapshot older than T, so it waits in `pending` until (a) no live reader holds a
//! snapshot older than T and (b) T is durable (a sync completed at or after T) — the
//! second rule keeps a `Durability::None` commit from overwriting pages that the last
//! durable meta still needs. Logical ids have no such rule: old snapshots translate
//! them through their own, immutable, page map.
//!
//! Every commit made in place writes a fresh *commit record* (a logged commit writes
//! none: `txn/logged.rs`, `rebuild.rs`): a chain of `RECORD` pages holding the
//! free pages (as runs), the free logical ids and the pages written since the last
//! sync with the CRC of the version this commit wrote (checked at open when the newest
//! meta was not made with `Full`). The meta holds the CRC and length of the whole
//! stream, so a record page left over from an older commit cannot pass for this one. After a
//! restart no reader survives, so the record stores free and pending pages alike as
//! free. The record is read lazily by the first write transaction, so opening a
//! database costs two page reads, whatever its size.
//!
//! Record page layout (after the 32-byte page header; logical id = index in chain):
//!
//! | offset | size | field | meaning                                   |
//! |-------:|-----:|-------|-------------------------------------------|
//! | 32     | 8    | next  | physical page of the next record page, 0 = last |
//! | 40     | 4    | used  | bytes of the stream held by this page      |
//! | 44     | 4    | —     | zero                                      |
//! | 48     | used | bytes | a slice of the record stream               |
//!
//! The stream is LEB128 varints (7 bits a byte, low bits first, high bit = more):
//! `n_runs, n_runs × (gap, count)`, where a run starts `gap` pages after the end of
//! the previous one (the first after page 0); then `n_logical, n_logical × gap` and
//! `n_unsynced, n_unsynced × gap`, both lists ascending, each value `gap` after the
//! previous one (the first after 0). Scattered free pages cost 2–4 bytes each instead
//! of 16, which matters once a workload has freed pages all over the file: every
//! commit in place writes the whole record (encoding again only the buckets of pages that changed
//! since the last one: `runcache.rs`).
//! Persisting the record allocates pages for it, which changes the stream by a few
//! bytes a page (a run shortened or gone, one unsynced entry more), far less than a
//! page holds, so allocating until the stream fits ends after a round or two (see
//! `WriteTxn::write_record`).

use crate::error::{Error, Result};
use crate::page::{PhysId, TxnId, read_u32, read_u64};
use crate::runcache::{FreePages, RunsCache};
use std::collections::{HashSet, VecDeque};
use std::hash::BuildHasherDefault;

/// Most pages `FreeSpace::waiting` takes in or gives out one by one (a binary search
/// and a shift each) rather than by rebuilding it.
const FEW_PAGES: usize = 16;

/// Offset of the stream bytes inside a record page.
pub const RECORD_BODY: usize = 48;

/// The in-memory free-space state, owned by the database and used by the writer.
#[derive(Debug, Default)]
pub struct FreeSpace {
    /// Whether the commit record of the opened meta has been read.
    pub loaded: bool,
    /// Physical pages reusable now.
    pub free: FreePages,
    /// Physical pages freed by a transaction, waiting for readers and a sync.
    pub pending: VecDeque<(TxnId, Vec<u64>)>,
    /// Pages freed by logged commits that the log's epoch began with (written before
    /// its first record), in commit order: held until the checkpoint, since a later
    /// record's page delta may be read against one of them at recovery (`txn/delta.rs`);
    /// then they join `pending` ([`FreeSpace::end_epoch`]). Apart from `pending`, so that
    /// a commit's promotion and record do not pass over every entry held in the epoch
    /// (T7's writers: 4 % of the writer lock's time).
    held: VecDeque<(TxnId, Vec<u64>)>,
    /// Pages in `held`.
    held_pages: usize,
    /// Free logical ids.
    pub logical: Vec<u64>,
    /// Physical pages written since the last sync, with the CRC each was sealed with.
    pub unsynced: Vec<(u64, u32)>,
    /// Pages of the current commit record (freed by the next commit).
    pub record_pages: Vec<u64>,
    /// Pages written by the logged commits of the log's current epoch: freed, they
    /// wait for readers and the sync as usual, not for the checkpoint (a record's delta
    /// against one of them is replayed against the record that wrote it).
    pub epoch_written: HashSet<u64, BuildHasherDefault<crate::pool::IdHasher>>,
    /// Every page in `pending`, ascending: kept beside it (`push_pending`, `promote`),
    /// so a commit record is a merge, not a sort of every page waiting (a one-key
    /// commit sorted the ~2,000 pages held by the commit log twice: half its
    /// instructions). A commit adds and removes a few pages: those go in and out one
    /// by one by binary search; only many at once cost a merge or a pass over the
    /// whole vector (the merge and the pass every commit made were 36 k of a one-key
    /// logged commit's 116 k instructions with ~1,000 pages waiting, `commit_probe
    /// 20000 3000 full` with a 512-page log). A `BTreeSet` instead saved less: the
    /// record's merge then iterates it.
    waiting: Vec<u64>,
    /// The record's runs, encoded a bucket of pages at a time (`runcache.rs`).
    cache: RunsCache,
}

impl FreeSpace {
    /// Moves pending pages to `free` when no reader predates them and they are durable.
    pub fn promote(&mut self, oldest_reader: Option<TxnId>, last_synced: TxnId) {
        let mut promoted = Vec::new();
        while let Some(&(freed_by, _)) = self.pending.front() {
            let seen_by_reader = oldest_reader.is_some_and(|oldest| oldest < freed_by);
            if seen_by_reader || freed_by > last_synced {
                break;
            }
            let (_, pages) = self.pending.pop_front().expect("entry exists");
            promoted.extend_from_slice(&pages);
            self.free.extend(pages);
        }
        if promoted.len() <= FEW_PAGES {
            for page in promoted {
                self.free.touched.page(page);
                if let Ok(at) = self.waiting.binary_search(&page) {
                    self.waiting.remove(at);
                }
            }
        } else {
            promoted.sort_unstable();
            promoted.iter().for_each(|&page| self.free.touched.page(page));
            remove_ascending(&mut self.waiting, &promoted);
        }
    }

    /// Pages freed by transaction `txn`, pending until readers and a sync allow.
    pub fn push_pending(&mut self, txn: TxnId, mut pages: Vec<u64>) {
        self.note_waiting(&mut pages);
        self.pending.push_back((txn, pages));
    }

    /// Sorts `pages` (freed, not yet reusable) and adds them to `waiting`.
    fn note_waiting(&mut self, pages: &mut [u64]) {
        pages.sort_unstable();
        pages.iter().for_each(|&page| self.free.touched.page(page));
        if pages.len() <= FEW_PAGES {
            for &page in pages.iter() {
                let at = self.waiting.partition_point(|&other| other < page);
                self.waiting.insert(at, page);
            }
        } else {
            self.waiting = merge_ascending(self.waiting.iter().copied(), pages.iter().copied()).collect();
        }
    }

    /// Pages freed by commits after `txn`, pending or held (what a reader of snapshot
    /// `txn` keeps from reuse).
    pub fn freed_after(&self, txn: TxnId) -> usize {
        let after = |entries: &VecDeque<(TxnId, Vec<u64>)>| -> usize {
            entries.iter().rev().take_while(|(freed_by, _)| *freed_by > txn).map(|(_, pages)| pages.len()).sum()
        };
        after(&self.pending) + after(&self.held)
    }

    /// Every page freed and not yet reusable: pending or held.
    pub fn pending_pages(&self) -> impl Iterator<Item = u64> + '_ {
        self.pending.iter().chain(&self.held).flat_map(|(_, pages)| pages.iter().copied())
    }

    /// Every pending page, ascending.
    #[cfg(test)]
    pub fn waiting(&self) -> &[u64] {
        &self.waiting
    }

    /// The stream of the commit record that lists the free and pending pages, `now`
    /// (pages this commit frees: ascending, in neither), the free logical ids and
    /// `unsynced`: [`encode_record`] of them, the unchanged buckets of pages copied from
    /// the last record's (`runcache.rs`).
    pub fn encode_record(&mut self, now: &[u64], logical: &[u64], unsynced: &[(u64, u32)]) -> Vec<u8> {
        let pages = self.free.len() + self.waiting.len() + now.len();
        let mut runs = Runs::new(64 + 3 * pages + 3 * logical.len() + 7 * unsynced.len());
        let (free, touched) = self.free.parts();
        self.cache.encode(free, &self.waiting, now, touched, &mut runs);
        runs.finish(logical, unsynced)
    }

    /// Takes `page` out of `pending` (mutant `compact_trim_pending` only).
    pub fn forget_pending(&mut self, page: u64) {
        self.pending.iter_mut().for_each(|(_, pages)| pages.retain(|&other| other != page));
        self.held.iter_mut().for_each(|(_, pages)| pages.retain(|&other| other != page));
        self.held_pages = self.held.iter().map(|(_, pages)| pages.len()).sum();
        self.waiting.retain(|&other| other != page);
        self.free.touched.page(page);
    }

    /// Pages freed by logged commit `txn`: those written before the log's epoch began
    /// are held until the checkpoint, the others pending as usual.
    pub fn free_logged(&mut self, txn: TxnId, freed: Vec<u64>) {
        let (again, mut held): (Vec<u64>, Vec<u64>) = if cfg!(quire_mutant = "log_reuse_epoch") {
            (freed, Vec::new()) // mutant: a page a later record's delta is against may be reused
        } else {
            freed.into_iter().partition(|page| self.epoch_written.contains(page))
        };
        self.push_pending(txn, again);
        if !held.is_empty() {
            self.note_waiting(&mut held);
            self.held_pages += held.len();
            self.held.push_back((txn, held));
        }
    }

    /// The log's epoch ended at a durable meta (a checkpoint, or a meta written in
    /// place): held pages wait, like the others, for the readers that predate the
    /// commit that freed them (merged into `pending` in commit order).
    pub fn end_epoch(&mut self) {
        self.epoch_written.clear();
        if self.held.is_empty() {
            return;
        }
        self.held_pages = 0;
        self.pending.extend(std::mem::take(&mut self.held));
        // Both were in commit order; a stable sort of the two runs is their merge.
        self.pending.make_contiguous().sort_by_key(|(freed_by, _)| *freed_by);
    }

    /// Pages held until the log's next checkpoint.
    pub fn held(&self) -> usize {
        self.held_pages
    }
}

impl FreeSpace {
    /// Number of physical pages free or pending (`txn/compact.rs`: when to compact).
    pub fn free_and_pending(&self) -> usize {
        self.free.len() + self.waiting.len()
    }
}

/// The decoded commit record.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// Free physical pages (free and pending alike).
    pub free: Vec<u64>,
    /// Free logical ids.
    pub logical: Vec<u64>,
    /// Pages written since the last sync and the CRC each was sealed with.
    pub unsynced: Vec<(u64, u32)>,
}

/// Appends `value` as an LEB128 varint.
fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Appends a list as its length and the gaps between its values, ascending.
fn put_ascending(out: &mut Vec<u8>, values: &[u64]) {
    if values.is_sorted_by(|a, b| a < b) {
        return put_gaps(out, values); // no copy to sort (the usual case: few or none)
    }
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    put_gaps(out, &sorted);
}

/// Appends the length of `sorted` (ascending, distinct) and the gaps between its values.
fn put_gaps(out: &mut Vec<u8>, sorted: &[u64]) {
    put_varint(out, sorted.len() as u64);
    let mut previous = 0;
    for &value in sorted {
        put_varint(out, value - previous);
        previous = value;
    }
}

/// Writes `value` as an LEB128 varint at the start of `out`; returns its length.
fn put_varint_into(out: &mut [u8; MAX_VARINT], mut value: u64) -> usize {
    let mut length = 0;
    while value >= 0x80 {
        out[length] = value as u8 | 0x80;
        value >>= 7;
        length += 1;
    }
    out[length] = value as u8;
    length + 1
}

/// Appends pages and their CRCs as the length, then per page the gap and the CRC.
fn put_unsynced(out: &mut Vec<u8>, values: &[(u64, u32)]) {
    if values.is_empty() {
        return put_varint(out, 0); // a `Full` commit's record lists none
    }
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    sorted.dedup_by_key(|(phys, _)| *phys);
    put_varint(out, sorted.len() as u64);
    let mut previous = 0;
    for (phys, crc) in sorted {
        put_varint(out, phys - previous);
        out.extend_from_slice(&crc.to_le_bytes());
        previous = phys;
    }
}

/// Two ascending sequences of distinct page numbers, merged as they are read.
pub struct MergeAscending<L: Iterator<Item = u64>, R: Iterator<Item = u64>> {
    left: std::iter::Peekable<L>,
    right: std::iter::Peekable<R>,
}

impl<L: Iterator<Item = u64>, R: Iterator<Item = u64>> Iterator for MergeAscending<L, R> {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        match (self.left.peek(), self.right.peek()) {
            (Some(left), Some(right)) if right < left => self.right.next(),
            (Some(_), _) => self.left.next(),
            (None, _) => self.right.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let ((left, left_most), (right, right_most)) = (self.left.size_hint(), self.right.size_hint());
        (left + right, left_most.zip(right_most).and_then(|(left, right)| left.checked_add(right)))
    }
}

/// Merges two ascending sequences of distinct page numbers, lazily: a commit streams
/// its free pages, its pending ones and those it frees into its record without
/// collecting them (collected and encoded twice, they were a fifth of a one-key
/// commit's instructions with a few thousand pages waiting).
pub fn merge_ascending<L: Iterator<Item = u64>, R: Iterator<Item = u64>>(left: L, right: R) -> MergeAscending<L, R> {
    MergeAscending { left: left.peekable(), right: right.peekable() }
}

/// Removes the values of `gone` from `list` (both ascending, `gone` a subset).
fn remove_ascending(list: &mut Vec<u64>, gone: &[u64]) {
    let mut gone = gone.iter().copied().peekable();
    list.retain(|&value| {
        while gone.next_if(|&other| other < value).is_some() {}
        gone.next_if_eq(&value).is_none()
    });
}

/// Most bytes of an LEB128 varint of 64 bits.
const MAX_VARINT: usize = 10;

/// The stream of a record whose free pages come from `free`, ascending and distinct
/// (read once, never collected: see [`merge_ascending`]). The lists `logical` and
/// `unsynced` are stored ascending (order carries no meaning).
pub fn encode_record(free: impl Iterator<Item = u64>, logical: &[u64], unsynced: &[(u64, u32)]) -> Vec<u8> {
    let mut runs = Runs::new(64 + 3 * free.size_hint().0 + 3 * logical.len() + 7 * unsynced.len());
    free.for_each(|page| runs.push(page));
    runs.finish(logical, unsynced)
}

/// The free pages of a record being encoded, as runs: `first..end` is the run being
/// extended (empty at first), whose number is written in front once known.
pub(crate) struct Runs {
    out: Vec<u8>,
    count: u64,
    first: u64,
    end: u64,
    /// End of the last run written: the next one's gap is counted from it.
    written_end: u64,
}

impl Runs {
    pub(crate) fn new(capacity: usize) -> Self {
        let mut out = Vec::with_capacity(capacity);
        // The number of runs comes first but is known last: room for it is kept in front.
        out.resize(MAX_VARINT, 0);
        Runs { out, count: 0, first: 0, end: 0, written_end: 0 }
    }

    /// Adds the next page (ascending, distinct).
    #[inline]
    fn push(&mut self, page: u64) {
        if page == self.end {
            self.end += 1; // (an empty run at 0 becomes the run of page 0)
            return;
        }
        self.close();
        (self.first, self.end) = (page, page + 1);
    }

    /// Adds the run `start..end` (after every page and run added so far; it extends the
    /// run being built when it starts where that one ends).
    #[inline]
    pub(crate) fn push_run(&mut self, start: u64, end: u64) {
        if start == self.end {
            self.end = end;
            return;
        }
        self.close();
        (self.first, self.end) = (start, end);
    }

    /// Appends `count` runs already encoded (`bytes`, the first gap counted from the end
    /// of the run being built, which is closed first), the last ending at `end`.
    pub(crate) fn append_encoded(&mut self, bytes: &[u8], count: u64, end: u64) {
        self.close();
        self.out.extend_from_slice(bytes);
        self.count += count;
        (self.first, self.end, self.written_end) = (end, end, end);
    }

    /// Counts the next gap from `end`, as if a run had ended there.
    pub(crate) fn restart_at(&mut self, end: u64) {
        (self.first, self.end, self.written_end) = (end, end, end);
    }

    /// The runs encoded so far (the run being built closed), without the room for
    /// their number; their number and the end of the last.
    pub(crate) fn into_closed(mut self) -> (Vec<u8>, u64, u64) {
        self.close();
        self.out.drain(..MAX_VARINT);
        (self.out, self.count, self.written_end)
    }

    fn close(&mut self) {
        if self.end > self.first {
            put_varint(&mut self.out, self.first - self.written_end);
            put_varint(&mut self.out, self.end - self.first);
            self.written_end = self.end;
            self.count += 1;
        }
    }

    /// The stream: the runs, then the other two lists.
    pub(crate) fn finish(mut self, logical: &[u64], unsynced: &[(u64, u32)]) -> Vec<u8> {
        self.close();
        let mut count = [0u8; MAX_VARINT];
        let length = put_varint_into(&mut count, self.count);
        let start = MAX_VARINT - length;
        let mut out = self.out;
        out[start..MAX_VARINT].copy_from_slice(&count[..length]);
        out.drain(..start);
        put_ascending(&mut out, logical);
        put_unsynced(&mut out, unsynced);
        out
    }
}

impl Record {
    /// Serialises the record into its stream. `free` must be sorted and distinct.
    pub fn encode(&self) -> Vec<u8> {
        encode_record(self.free.iter().copied(), &self.logical, &self.unsynced)
    }

    /// Parses a record stream; `page` names the chain's head for errors.
    pub fn decode(stream: &[u8], page: PhysId, page_count: u64) -> Result<Record> {
        let mut cursor = Cursor { bytes: stream, at: 0, page };
        let mut record = Record::default();
        let mut end = 0u64;
        for _ in 0..cursor.count(2)? {
            let (gap, count) = (cursor.varint()?, cursor.varint()?);
            let first = end.saturating_add(gap);
            if first < crate::meta::META_PAGES || count == 0 || first.saturating_add(count) > page_count {
                return Err(Error::corrupted(page, format!("free run {first}+{count} outside the file")));
            }
            record.free.extend(first..first + count);
            end = first + count;
        }
        let mut value = 0u64;
        for _ in 0..cursor.count(1)? {
            value = cursor.next_ascending(value)?;
            record.logical.push(value);
        }
        let mut value = 0u64;
        for _ in 0..cursor.count(5)? {
            value = cursor.next_ascending(value)?;
            record.unsynced.push((value, cursor.crc()?));
        }
        if cursor.at != stream.len() {
            return Err(Error::corrupted(page, "commit record has bytes after its lists"));
        }
        Ok(record)
    }

    /// Stream bytes that fit in one record page.
    pub fn capacity_per_page(page_size: usize) -> usize {
        page_size - RECORD_BODY
    }
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    page: PhysId,
}

impl Cursor<'_> {
    /// Reads an LEB128 varint of at most 64 bits.
    fn varint(&mut self) -> Result<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&byte) = self.bytes.get(self.at) else {
                return Err(Error::corrupted(self.page, "commit record ends early"));
            };
            self.at += 1;
            let bits = u64::from(byte & 0x7f);
            if shift == 63 && bits > 1 {
                break;
            }
            value |= bits << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(Error::corrupted(self.page, "commit record varint longer than 64 bits"))
    }

    /// Reads the next value of an ascending list (a gap after `previous`).
    fn next_ascending(&mut self, previous: u64) -> Result<u64> {
        previous.checked_add(self.varint()?).ok_or_else(|| Error::corrupted(self.page, "commit record value overflows"))
    }

    /// Reads a 4-byte little-endian CRC.
    fn crc(&mut self) -> Result<u32> {
        let bytes = self
            .bytes
            .get(self.at..self.at + 4)
            .ok_or_else(|| Error::corrupted(self.page, "commit record ends early"))?;
        self.at += 4;
        Ok(read_u32(bytes, 0))
    }

    /// Reads an element count and checks that elements of at least `each` bytes fit.
    fn count(&mut self, each: usize) -> Result<u64> {
        let count = self.varint()?;
        let room = (self.bytes.len() - self.at) / each;
        if count > room as u64 {
            return Err(Error::corrupted(self.page, format!("commit record claims {count} entries, room for {room}")));
        }
        Ok(count)
    }
}

/// Fills `page` as page `index` of a record chain of commit `txn`: `chunk` of the
/// stream, the chain going on at page `next` (0: the last).
pub fn fill_record_page(page: &mut [u8], index: usize, next: u64, chunk: &[u8], txn: TxnId) {
    page.fill(0);
    crate::page::write_u64(page, 32, next);
    crate::page::write_u32(page, 40, chunk.len() as u32);
    page[RECORD_BODY..RECORD_BODY + chunk.len()].copy_from_slice(chunk);
    crate::page::seal(page, crate::page::PageKind::RECORD, index as u64, txn);
}

/// Decodes the body of one record page: `(next, stream slice)`.
pub fn record_page_body(page: &[u8], phys: PhysId) -> Result<(u64, &[u8])> {
    let next = read_u64(page, 32);
    let used = read_u32(page, 40) as usize;
    if RECORD_BODY + used > page.len() {
        return Err(Error::corrupted(phys, format!("record page claims {used} bytes")));
    }
    Ok((next, &page[RECORD_BODY..RECORD_BODY + used]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_round_trips_with_runs() {
        let record = Record {
            free: vec![2, 3, 4, 9, 11, 12, 300],
            logical: vec![1, 5],
            unsynced: vec![(40, 7), (1 << 40, u32::MAX)],
        };
        let stream = record.encode();
        // runs: n, (2,3), (4,1), (1,2), (287 in two bytes,1); logical: n, 1, 4;
        // unsynced: n, 40 + crc, 2^40 - 40 in 6 bytes + crc
        assert_eq!(stream.len(), 1 + 2 + 2 + 2 + 3 + 3 + 1 + 1 + 4 + 6 + 4);
        assert_eq!(Record::decode(&stream, PhysId(1), 400).unwrap(), record);
        assert!(Record::decode(&stream, PhysId(1), 100).is_err(), "run beyond page count");
        for cut in 0..stream.len() {
            assert!(Record::decode(&stream[..cut], PhysId(1), 400).is_err(), "stream cut at {cut}");
        }
        let unordered = Record { free: vec![], logical: vec![9, 2, 7], unsynced: vec![] };
        assert_eq!(Record::decode(&unordered.encode(), PhysId(1), 10).unwrap().logical, vec![2, 7, 9]);
        let mut endless = vec![1];
        endless.extend([0xff; 11]);
        assert!(Record::decode(&endless, PhysId(1), 10).is_err(), "varint over 64 bits");
        let mut trailing = record.encode();
        trailing.push(0);
        assert!(Record::decode(&trailing, PhysId(1), 400).is_err(), "bytes after the lists");
    }

    #[test]
    fn a_streamed_record_merged_from_its_sources_decodes_to_their_union() {
        let seed = quiredb_test_support::random_seed();
        println!("seed {seed}");
        let mut rng = quiredb_test_support::Rng::new(seed);
        for round in 0..200 {
            // Three disjoint ascending sources, with runs of adjacent pages across them.
            let (mut sources, mut page) = ([Vec::new(), Vec::new(), Vec::new()], 2u64);
            for _ in 0..rng.below(3000) {
                page += 1 + rng.below(4) * rng.below(2);
                sources[rng.below(3) as usize].push(page);
            }
            let [free, pending, now] = &sources;
            let merged =
                merge_ascending(free.iter().copied(), merge_ascending(pending.iter().copied(), now.iter().copied()));
            let logical = vec![9, 4];
            let unsynced = vec![(7, 1), (3, u32::MAX)];
            let stream = encode_record(merged, &logical, &unsynced);
            let mut union: Vec<u64> = sources.concat();
            union.sort_unstable();
            let decoded = Record::decode(&stream, PhysId(1), page + 1).unwrap();
            assert_eq!(decoded.free, union, "seed {seed} round {round}");
            assert_eq!(decoded.logical, vec![4, 9]);
            assert_eq!(decoded.unsynced, vec![(3, u32::MAX), (7, 1)]);
            // As long as the runs need: one varint for their number, two for each.
            let runs = union.chunk_by(|a, b| a + 1 == *b).count();
            assert!(stream[0] as usize == runs || runs >= 0x80, "seed {seed} round {round}: run count first");
        }
    }

    #[test]
    fn merge_keeps_order() {
        let left = [3u64, 8, 20];
        let merged: Vec<u64> = merge_ascending(left.iter().copied(), [1, 9, 30].into_iter()).collect();
        assert_eq!(merged, vec![1, 3, 8, 9, 20, 30]);
        assert_eq!(merge_ascending(std::iter::empty(), [4].into_iter()).collect::<Vec<_>>(), vec![4]);
        assert_eq!(merge_ascending([2, 5].into_iter(), std::iter::empty()).collect::<Vec<_>>(), vec![2, 5]);
    }

    #[test]
    fn waiting_is_every_pending_page_in_order() {
        let mut rng = quiredb_test_support::Rng::new(quiredb_test_support::random_seed());
        let mut space = FreeSpace::default();
        let mut next = 2;
        for txn in 1..400u64 {
            // Mostly a few pages (taken in one by one), sometimes many (merged).
            let count = if rng.below(8) == 0 { 17 + rng.below(30) } else { rng.below(6) };
            let pages: Vec<u64> = (0..count)
                .map(|_| {
                    next += 1 + rng.below(3);
                    next
                })
                .collect();
            let mut pages = pages;
            pages.reverse();
            match rng.below(4) {
                0 => space.free_logged(TxnId(txn), pages),
                1 => space.end_epoch(),
                _ => space.push_pending(TxnId(txn), pages),
            }
            let first = space.pending_pages().next();
            if let Some(page) = first.filter(|_| rng.below(20) == 0) {
                space.forget_pending(page);
            }
            space.promote(Some(TxnId(txn.saturating_sub(rng.below(30)))), TxnId(txn.saturating_sub(rng.below(10))));
            let mut model: Vec<u64> = space.pending_pages().collect();
            model.sort_unstable();
            assert_eq!(space.waiting(), model, "after txn {txn}");
        }
    }

    #[test]
    fn held_pages_wait_for_the_checkpoint_then_only_for_readers_older_than_their_commit() {
        let mut space = FreeSpace::default();
        space.epoch_written.insert(11);
        space.free_logged(TxnId(5), vec![10, 11]); // 10: of the epoch's state; 11: written by it
        space.push_pending(TxnId(6), vec![12]);
        space.promote(None, TxnId(6));
        assert_eq!(space.free.iter().copied().collect::<Vec<_>>(), [11, 12], "10 is held, the rest is free");
        assert_eq!(space.held(), 1);
        space.end_epoch();
        space.promote(Some(TxnId(4)), TxnId(8));
        assert!(!space.free.contains(&10), "a snapshot before commit 5 still reads page 10");
        space.promote(Some(TxnId(5)), TxnId(8));
        assert!(space.free.contains(&10), "a reader of snapshot 5 (begun before the checkpoint) does not hold it");
        assert_eq!(space.held(), 0);
    }

    #[test]
    fn a_reader_keeps_the_pages_freed_after_its_snapshot_pending_or_held() {
        let mut space = FreeSpace::default();
        space.push_pending(TxnId(4), vec![20]);
        space.free_logged(TxnId(5), vec![10, 11]); // both of the epoch's state: held
        space.push_pending(TxnId(6), vec![12, 13, 14]);
        assert_eq!(space.freed_after(TxnId(3)), 6);
        assert_eq!(space.freed_after(TxnId(4)), 5, "held pages count as any freed page");
        assert_eq!(space.freed_after(TxnId(5)), 3);
        assert_eq!(space.freed_after(TxnId(6)), 0);
        space.end_epoch();
        assert_eq!(space.freed_after(TxnId(4)), 5, "and so once the checkpoint released them");
    }

    #[test]
    fn pending_pages_wait_for_readers_and_sync() {
        let mut space = FreeSpace::default();
        space.push_pending(TxnId(5), vec![10]);
        space.promote(Some(TxnId(4)), TxnId(9));
        assert!(space.free.is_empty(), "reader of snapshot 4 still sees page 10");
        space.promote(None, TxnId(4));
        assert!(space.free.is_empty(), "transaction 5 is not durable yet");
        space.promote(Some(TxnId(5)), TxnId(5));
        assert!(space.free.contains(&10));
    }
}
