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
//! Every commit writes a fresh *commit record*: a chain of `RECORD` pages holding the
//! free pages (as runs), the free logical ids and the pages written since the last
//! sync (checked at open when the newest meta was not made with `Full`). After a
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
//! The stream: `u64 n_runs, n_runs × (u64 first, u64 count)`, then `u64 n_logical,
//! n_logical × u64`, then `u64 n_unsynced, n_unsynced × u64` (all little-endian).
//! Persisting the record allocates pages for it; the recursion ends because taking the
//! lowest free pages never makes the stream longer (see `WriteTxn::write_record`).

use crate::error::{Error, Result};
use crate::page::{PhysId, TxnId, read_u32, read_u64};
use std::collections::{BTreeSet, VecDeque};

/// Offset of the stream bytes inside a record page.
pub const RECORD_BODY: usize = 48;

/// The in-memory free-space state, owned by the database and used by the writer.
#[derive(Debug, Default)]
pub struct FreeSpace {
    /// Whether the commit record of the opened meta has been read.
    pub loaded: bool,
    /// Physical pages reusable now.
    pub free: BTreeSet<u64>,
    /// Physical pages freed by a transaction, waiting for readers and a sync.
    pub pending: VecDeque<(TxnId, Vec<u64>)>,
    /// Free logical ids.
    pub logical: Vec<u64>,
    /// Physical pages written since the last sync.
    pub unsynced: Vec<u64>,
    /// Pages of the current commit record (freed by the next commit).
    pub record_pages: Vec<u64>,
}

impl FreeSpace {
    /// Moves pending pages to `free` when no reader predates them and they are durable.
    pub fn promote(&mut self, oldest_reader: Option<TxnId>, last_synced: TxnId) {
        while let Some((freed_by, _)) = self.pending.front() {
            let seen_by_reader = oldest_reader.is_some_and(|oldest| oldest < *freed_by);
            if seen_by_reader || *freed_by > last_synced {
                break;
            }
            let (_, pages) = self.pending.pop_front().expect("front exists");
            self.free.extend(pages);
        }
    }

    /// Number of physical pages free or pending.
    pub fn free_and_pending(&self) -> usize {
        self.free.len() + self.pending.iter().map(|(_, pages)| pages.len()).sum::<usize>()
    }
}

/// The decoded commit record.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// Free physical pages (free and pending alike).
    pub free: Vec<u64>,
    /// Free logical ids.
    pub logical: Vec<u64>,
    /// Pages written since the last sync.
    pub unsynced: Vec<u64>,
}

/// Compresses a sorted list of page numbers into runs.
fn runs(sorted: &[u64]) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for &page in sorted {
        match out.last_mut() {
            Some((first, count)) if *first + *count == page => *count += 1,
            _ => out.push((page, 1)),
        }
    }
    out
}

impl Record {
    /// Serialises the record into its stream. `free` must be sorted and distinct.
    pub fn encode(&self) -> Vec<u8> {
        let runs = runs(&self.free);
        let mut out = Vec::with_capacity(24 + 16 * runs.len() + 8 * (self.logical.len() + self.unsynced.len()));
        out.extend_from_slice(&(runs.len() as u64).to_le_bytes());
        for (first, count) in runs {
            out.extend_from_slice(&first.to_le_bytes());
            out.extend_from_slice(&count.to_le_bytes());
        }
        for list in [&self.logical, &self.unsynced] {
            out.extend_from_slice(&(list.len() as u64).to_le_bytes());
            for value in list.iter() {
                out.extend_from_slice(&value.to_le_bytes());
            }
        }
        out
    }

    /// Parses a record stream; `page` names the chain's head for errors.
    pub fn decode(stream: &[u8], page: PhysId, page_count: u64) -> Result<Record> {
        let mut cursor = Cursor { bytes: stream, at: 0, page };
        let mut record = Record::default();
        for _ in 0..cursor.count(16)? {
            let (first, count) = (cursor.u64()?, cursor.u64()?);
            if first < crate::meta::META_PAGES || first.saturating_add(count) > page_count {
                return Err(Error::corrupted(page, format!("free run {first}+{count} outside the file")));
            }
            record.free.extend(first..first + count);
        }
        for list in [&mut record.logical, &mut record.unsynced] {
            for _ in 0..cursor.count(8)? {
                list.push(cursor.u64()?);
            }
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
    fn u64(&mut self) -> Result<u64> {
        if self.at + 8 > self.bytes.len() {
            return Err(Error::corrupted(self.page, "commit record ends early"));
        }
        let value = read_u64(self.bytes, self.at);
        self.at += 8;
        Ok(value)
    }

    /// Reads an element count and checks that `each`-byte elements fit.
    fn count(&mut self, each: usize) -> Result<u64> {
        let count = self.u64()?;
        let room = (self.bytes.len() - self.at) / each;
        if count > room as u64 {
            return Err(Error::corrupted(self.page, format!("commit record claims {count} entries, room for {room}")));
        }
        Ok(count)
    }
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
        let record = Record { free: vec![2, 3, 4, 9, 11, 12], logical: vec![5, 1], unsynced: vec![40] };
        let stream = record.encode();
        assert_eq!(stream.len(), 8 + 3 * 16 + 8 + 16 + 8 + 8);
        assert_eq!(Record::decode(&stream, PhysId(1), 100).unwrap(), record);
        assert!(Record::decode(&stream, PhysId(1), 10).is_err(), "run beyond page count");
        assert!(Record::decode(&stream[..20], PhysId(1), 100).is_err(), "short stream");
    }

    #[test]
    fn pending_pages_wait_for_readers_and_sync() {
        let mut space = FreeSpace::default();
        space.pending.push_back((TxnId(5), vec![10]));
        space.promote(Some(TxnId(4)), TxnId(9));
        assert!(space.free.is_empty(), "reader of snapshot 4 still sees page 10");
        space.promote(None, TxnId(4));
        assert!(space.free.is_empty(), "transaction 5 is not durable yet");
        space.promote(Some(TxnId(5)), TxnId(5));
        assert!(space.free.contains(&10));
    }
}
