//! The commit log: a region of the file where a small durable commit appends the pages
//! it would write, in one sequential write made durable on its own (`write_durable`),
//! instead of writing them in place and syncing the whole file.
//!
//! A log commit is today's shadow commit with other destinations: the same fresh pages
//! (data, page-map copies, commit record) are built, then (1) appended to the log as one
//! record and made durable — the commit is acknowledged after this alone — and (2)
//! written in place without a sync. The meta pages are not written. A *checkpoint*
//! (when the region is full) syncs the file and writes the newest meta as `Full` in the
//! other slot: the log is then empty. Opening replays the records that extend the
//! chosen meta, writes their pages in place, syncs and writes a `Full` meta (a
//! read-only open serves them from memory instead): recovery reads at most one region.
//!
//! Record (`(1 + n) × page_size` bytes at a page boundary of the region; LE):
//!
//! | offset | size | field |
//! |-------:|-----:|-------|
//! | 0      | 4    | CRC-32C of bytes 4.. of the whole record |
//! | 4      | 4    | magic `QLOG` |
//! | 8      | 8    | epoch: txn id of the `Full` meta the log extends |
//! | 16     | 8    | txn id of this commit |
//! | 24     | 4    | n, pages in the record |
//! | 28     | 4    | zero |
//! | 32     | 144  | the commit's meta (bytes 0..144 of its page encoded for slot 0) |
//! | 176    | 8n   | physical ids of the pages, ascending |
//! | page_size × (1 + i) | page_size | page i, sealed as it is written in place |
//!
//! Invariants: records of one epoch lie back to back from offset 0 with rising txn
//! ids, and each is written only after the previous one is durable, so the records that
//! extend a meta are the longest prefix that verifies; an epoch is the txn id of a
//! meta that was durable before its first record was written, and txn ids only rise
//! over durable metas, so a record of another epoch (left over from before a
//! checkpoint) never extends the chosen meta. Log commits happen only while the meta in
//! the synced slot is `Full` (no page it needs is verified at open). Read next:
//! `logged.rs` (the writer's side), `open.rs`.

use crate::error::{Error, Result};
use crate::meta::{Durability, META_BODY_BYTES, META_PAGES, Meta};
use crate::open::Opened;
use crate::page::{self, PhysId, TxnId};
use crate::storage::{OverlayStorage, Storage};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Magic number of a log record.
const MAGIC: &[u8; 4] = b"QLOG";
/// Offset of the meta image in a record's header page.
const META_AT: usize = 32;
/// Offset of the page ids in a record's header page.
const IDS_AT: usize = META_AT + META_BODY_BYTES;

/// Where the writer appends (under `Core::log`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LogState {
    /// The `Full` meta in the synced slot that the log extends; `None` when the synced
    /// meta is not `Full` (then no commit goes to the log until one is written).
    pub epoch: Option<TxnId>,
    /// Bytes of the region holding this epoch's records.
    pub offset: u64,
}

/// Most pages one record can hold at `page_size`.
pub(crate) fn max_pages(page_size: usize) -> usize {
    (page_size - IDS_AT) / 8
}

/// Builds the record of commit `meta` in epoch `epoch` holding `pages` (ascending ids).
pub(crate) fn encode(epoch: TxnId, meta: &Meta, pages: &[(u64, &[u8])], page_size: usize) -> Vec<u8> {
    assert!(pages.len() <= max_pages(page_size), "a log record holds at most {} pages", max_pages(page_size));
    let mut record = vec![0u8; (1 + pages.len()) * page_size];
    let mut meta_page = vec![0u8; page_size];
    meta.encode(0, &mut meta_page);
    record[4..8].copy_from_slice(MAGIC);
    page::write_u64(&mut record, 8, epoch.0);
    page::write_u64(&mut record, 16, meta.txn.0);
    page::write_u32(&mut record, 24, pages.len() as u32);
    record[META_AT..IDS_AT].copy_from_slice(&meta_page[..META_BODY_BYTES]);
    for (index, (phys, bytes)) in pages.iter().enumerate() {
        page::write_u64(&mut record, IDS_AT + 8 * index, *phys);
        record[(1 + index) * page_size..(2 + index) * page_size].copy_from_slice(bytes);
    }
    let crc = crc32c::crc32c(&record[4..]);
    page::write_u32(&mut record, 0, crc);
    record
}

/// One record read back: the commit's meta and its pages.
pub(crate) struct Replayed {
    pub meta: Meta,
    pub pages: Vec<(u64, Vec<u8>)>,
}

/// Reads the records that extend `home` (a meta with a log region), in order. A record
/// that is torn, missing, of another epoch or out of sequence ends the log; a whole
/// record (its CRC holds) with impossible contents is corruption; I/O errors are errors.
pub(crate) fn scan(storage: &dyn Storage, home: &Meta) -> Result<Vec<Replayed>> {
    let page_size = home.page_size as usize;
    let region = home.log_start * page_size as u64;
    let region_bytes = home.log_pages * page_size as u64;
    let mut records = Vec::new();
    let (mut offset, mut previous) = (0u64, home.txn);
    let mut header = vec![0u8; page_size];
    while offset + page_size as u64 <= region_bytes {
        let at = region + offset;
        read(storage, at, &mut header)?;
        let count = page::read_u32(&header, 24) as usize;
        let txn = TxnId(page::read_u64(&header, 16));
        let length = (1 + count as u64) * page_size as u64;
        if &header[4..8] != MAGIC
            || page::read_u64(&header, 8) != home.txn.0
            || txn <= previous
            || count > max_pages(page_size)
            || offset + length > region_bytes
        {
            break;
        }
        let mut record = vec![0u8; length as usize];
        read(storage, at, &mut record)?;
        let whole = crc32c::crc32c(&record[4..]) == page::read_u32(&record, 0);
        if !whole && !cfg!(quire_mutant = "log_no_crc") {
            break; // torn, or never written: the commit was not acknowledged
        }
        records.push(decode(&record, home, PhysId(at / page_size as u64))?);
        (offset, previous) = (offset + length, txn);
    }
    if cfg!(quire_mutant = "log_skip_last") {
        records.pop(); // mutant: the newest record is not replayed
    }
    Ok(records)
}

fn read(storage: &dyn Storage, at: u64, buf: &mut [u8]) -> Result<()> {
    storage.read_at(at, buf).map_err(|error| Error::io(format!("reading the commit log at byte {at}"), error))
}

/// Decodes a whole record (its CRC verified) of the log of `home`, found at `phys`.
fn decode(record: &[u8], home: &Meta, phys: PhysId) -> Result<Replayed> {
    let page_size = home.page_size as usize;
    let mut meta_page = vec![0u8; page_size];
    meta_page[..META_BODY_BYTES].copy_from_slice(&record[META_AT..IDS_AT]);
    let meta = Meta::decode(0, &meta_page)?;
    if meta.txn.0 != page::read_u64(record, 16)
        || meta.log_start != home.log_start
        || meta.log_pages != home.log_pages
        || meta.page_size != home.page_size
    {
        return Err(Error::corrupted(phys, "a commit log record's meta does not match its header or the file"));
    }
    let count = page::read_u32(record, 24) as usize;
    let mut pages = Vec::with_capacity(count);
    for index in 0..count {
        let id = page::read_u64(record, IDS_AT + 8 * index);
        let in_log = (meta.log_start..meta.log_start + meta.log_pages).contains(&id);
        let after_previous = pages.last().is_none_or(|(last, _): &(u64, Vec<u8>)| id > *last);
        if id < META_PAGES || id >= meta.page_count || in_log || !after_previous {
            return Err(Error::corrupted(phys, format!("a commit log record names page {id}")));
        }
        let bytes = record[(1 + index) * page_size..(2 + index) * page_size].to_vec();
        page::verify(&bytes, PhysId(id))?;
        pages.push((id, bytes));
    }
    Ok(Replayed { meta, pages })
}

/// What opening does with the log: the storage to read through, the meta to open at
/// and where the writer appends next.
pub(crate) struct Recovered {
    pub storage: Arc<dyn Storage>,
    pub opened: Opened,
    pub log: LogState,
}

/// Replays the log of the chosen meta (module docs). Read-write: the pages are written
/// in place, synced, and a `Full` meta of the last record goes to the other slot, then
/// synced. Read-only: nothing is written; the pages are served from memory.
pub(crate) fn recover(storage: Arc<dyn Storage>, mut opened: Opened, read_only: bool) -> Result<Recovered> {
    let home = opened.meta;
    let records = if home.log_pages == 0 { Vec::new() } else { scan(storage.as_ref(), &home)? };
    let Some(last) = records.last().map(|record| record.meta) else {
        let epoch = (home.durability == Durability::Full).then_some(home.txn);
        return Ok(Recovered { storage, opened, log: LogState { epoch, offset: 0 } });
    };
    let last = Meta { durability: Durability::Full, last_synced: last.txn, ..last };
    opened.meta = last;
    opened.txn_floor = opened.txn_floor.max(last.txn);
    let page_size = home.page_size as usize;
    let pages: BTreeMap<u64, Vec<u8>> = records.into_iter().flat_map(|record| record.pages).collect();
    if read_only {
        let storage: Arc<dyn Storage> = Arc::new(OverlayStorage::new(storage, page_size, pages));
        return Ok(Recovered { storage, opened, log: LogState::default() });
    }
    let io = |what: &str, error| Error::io(format!("replaying the commit log: {what}"), error);
    for (phys, bytes) in &pages {
        storage.write_at(phys * page_size as u64, bytes).map_err(|error| io("write", error))?;
    }
    storage.sync().map_err(|error| io("sync", error))?;
    let slot = 1 - opened.slot;
    let mut meta_page = vec![0u8; page_size];
    last.encode(slot, &mut meta_page);
    storage.write_at(slot * page_size as u64, &meta_page).map_err(|error| io("meta write", error))?;
    storage.sync().map_err(|error| io("sync", error))?;
    opened.slot = slot;
    Ok(Recovered { storage, opened, log: LogState { epoch: Some(last.txn), offset: 0 } })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::PageKind;
    use crate::storage::MemStorage;

    fn home() -> Meta {
        Meta { txn: TxnId(5), page_count: 40, log_start: 20, log_pages: 20, ..Meta::empty(4096) }
    }

    fn page(phys: u64, fill: u8, txn: u64) -> Vec<u8> {
        let mut bytes = vec![fill; 4096];
        page::seal(&mut bytes, PageKind::structure(16), phys, TxnId(txn));
        bytes
    }

    /// A region holding records for txns 6 and 7 of epoch 5, and the storage.
    fn two_records() -> (MemStorage, Vec<Vec<u8>>) {
        let storage = MemStorage::from_bytes(vec![0; 40 * 4096]);
        let mut at = 20 * 4096;
        let mut written = Vec::new();
        for (txn, phys) in [(6u64, 3u64), (7, 4)] {
            let meta = Meta { txn: TxnId(txn), ..home() };
            let image = page(phys, txn as u8, txn);
            let record = encode(TxnId(5), &meta, &[(phys, &image)], 4096);
            storage.write_at(at, &record).unwrap();
            at += record.len() as u64;
            written.push(record);
        }
        (storage, written)
    }

    #[test]
    fn records_of_the_epoch_replay_in_order_and_a_torn_one_ends_the_log() {
        let (storage, records) = two_records();
        let found = scan(&storage, &home()).unwrap();
        assert_eq!(found.iter().map(|record| record.meta.txn.0).collect::<Vec<_>>(), [6, 7]);
        assert_eq!(found[1].pages[0].0, 4);
        // Tear the second record: one sector of its page image is old.
        storage.write_at(20 * 4096 + records[0].len() as u64 + 4096 + 512, &[0; 512]).unwrap();
        assert_eq!(scan(&storage, &home()).unwrap().len(), 1);
        // Another epoch's records never extend this meta.
        assert!(scan(&storage, &Meta { txn: TxnId(4), ..home() }).unwrap().is_empty());
    }

    #[test]
    fn a_whole_record_naming_a_page_outside_the_file_is_corruption() {
        let storage = MemStorage::from_bytes(vec![0; 40 * 4096]);
        let image = page(25, 1, 6);
        let record = encode(TxnId(5), &Meta { txn: TxnId(6), ..home() }, &[(25, &image)], 4096);
        storage.write_at(20 * 4096, &record).unwrap();
        assert!(matches!(scan(&storage, &home()), Err(Error::Corrupted { .. })), "page 25 is in the log region");
    }
}
