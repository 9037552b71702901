//! The commit log: a region of the file where a small durable commit appends what it
//! changed, in one sequential write made durable on its own (`write_durable`), instead
//! of writing its pages in place and syncing the whole file.
//!
//! A log commit is the shadow commit with other destinations and no commit record: the
//! same fresh pages (data, page-map copies) are built, then (1) appended to the log as
//! one record — each page as its delta against the committed page it was copied from
//! (`delta.rs`) — and made durable: the commit is acknowledged after this alone; (2)
//! left in the pool and written in place later without a sync (`writeback.rs`). The
//! meta pages are not written. A *checkpoint* (the next commit, made in place, when the
//! region has no room for its record, or the pages held for the log reach the region's
//! size or a sixteenth of the file's) writes those pages back, syncs the file and writes
//! its meta as `Full` with a commit record in the other slot: the log is then empty.
//! Opening replays the records that extend the chosen meta, writes their pages in place,
//! rebuilds the free space of the last one from its page map (`rebuild.rs`: its meta
//! names no record) and writes it as a commit record past the file's end, syncs and
//! writes a `Full` meta naming it (a read-only open serves the pages from memory
//! instead): recovery reads at most one region and the map.
//!
//! Record (a whole number of [`LOG_BLOCK`]s at a block boundary of the region; LE):
//!
//! | offset | size | field |
//! |-------:|-----:|-------|
//! | 0      | 4    | CRC-32C of bytes 4.. of the whole record |
//! | 4      | 4    | magic `QLGB` (`QLGD`: padded to pages, version 5; `QLOG`: whole pages, version 4) |
//! | 8      | 8    | epoch: txn id of the `Full` meta the log extends |
//! | 16     | 8    | txn id of this commit |
//! | 24     | 4    | n, pages in the record |
//! | 28     | 4    | bytes used (header and deltas) |
//! | 32     | 144  | the commit's meta (bytes 0..144 of its page encoded for slot 0) |
//! | 176    | …    | n page deltas (`delta.rs`), ascending by page id |
//!
//! Invariants: records of one epoch lie back to back from offset 0 with rising txn
//! ids, and no commit is acknowledged before every record ahead of it is durable, so the
//! records that extend a meta are the longest prefix that verifies (group commit may
//! have a later record land before an earlier one: `group.rs` says why what lies past
//! a hole never extends a later meta); an epoch is the txn id of a
//! meta that was durable before its first record was written, and txn ids only rise
//! over durable metas, so a record of another epoch (left over from before a
//! checkpoint) never extends the chosen meta. A delta's base is the newest version an
//! earlier record of the epoch wrote, else the page as the epoch's meta left it on
//! disk: pages of that state freed since are held from reuse until the checkpoint
//! (`FreeSpace::end_epoch`), and every rebuilt page must verify. Log commits happen only
//! while the meta in the synced slot was made durable by a sync that returned: a `Full`
//! one, or a `Checksummed` one written in place (open verifies that commit's pages
//! before it replays the records that extend it; they are intact, since the pages a
//! logged commit frees are held until the next meta in place is durable).
//! Read next: `logged.rs` (the writer's side), `open.rs`.

use super::delta;
use crate::error::{Error, Result};
use crate::freespace::{Record, fill_record_page};
use crate::meta::{Durability, META_BODY_BYTES, META_PAGES, Meta};
use crate::open::Opened;
use crate::page::{self, PhysId, TxnId};
use crate::storage::{OverlayStorage, Storage};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// Magic number of a record of whole pages (written before page deltas; still replayed).
const MAGIC_PAGES: &[u8; 4] = b"QLOG";
/// Magic number of a record of page deltas padded to whole pages (format version 5;
/// still replayed).
const MAGIC_DELTAS: &[u8; 4] = b"QLGD";
/// Magic number of a record of page deltas padded to whole [`LOG_BLOCK`]s.
const MAGIC_BLOCKS: &[u8; 4] = b"QLGB";
/// Unit of a record's length (and so of its offset in the region): the file system's
/// block, not the page. A one-key commit's record is about 1–2 KiB; padded to an 8 KiB
/// page, its durable write moved twice the bytes (T1: 0.107 → 0.103 ms a commit). Page
/// sizes are multiples of it (4,096..=65,536).
pub(crate) const LOG_BLOCK: usize = 4096;
/// Offset of the meta image in a record's header.
const META_AT: usize = 32;
/// Offset of the page ids (whole pages) or of the page deltas in a record.
const IDS_AT: usize = META_AT + META_BODY_BYTES;

/// Where the writer appends (under `Core::log`), and the buffers its commits reuse.
#[derive(Debug, Default)]
pub struct LogState {
    /// The `Full` meta in the synced slot that the log extends; `None` when the synced
    /// meta is not `Full` (then no commit goes to the log until one is written).
    pub epoch: Option<TxnId>,
    /// Bytes of the region holding this epoch's records.
    pub offset: u64,
    /// The last record's buffer, kept for the next (`logged.rs`): a record built at a
    /// block-aligned place in it goes to the direct append without a copy.
    pub(crate) record: Vec<u8>,
    /// Page buffers the writer copies bases into (`WriteState::bases`), given back at
    /// commit: a one-key commit allocated and freed three 8 KiB buffers.
    pub(crate) spare_pages: Vec<Vec<u8>>,
}

/// Largest record buffer kept between commits; a larger one (a big logged commit) is
/// freed after its append.
pub(crate) const RECORD_BUFFER_KEPT: usize = 256 << 10;
/// Most page buffers kept for bases between commits.
pub(crate) const SPARE_PAGES_KEPT: usize = 64;

impl LogState {
    /// A log empty from its start, extending meta `epoch` (`None`: no log commits until
    /// a `Full` meta is written).
    pub(crate) fn new(epoch: Option<TxnId>) -> Self {
        LogState { epoch, ..LogState::default() }
    }

    /// Empties the log (a checkpoint, a meta written in place): it now extends `epoch`.
    pub(crate) fn restart(&mut self, epoch: Option<TxnId>) {
        self.epoch = epoch;
        self.offset = 0;
    }

    /// A page buffer of `page_size` bytes to copy a base into (contents undefined).
    pub(crate) fn take_page(&mut self, page_size: usize) -> Vec<u8> {
        match self.spare_pages.pop() {
            Some(page) if page.len() == page_size => page,
            _ => vec![0u8; page_size],
        }
    }

    /// Keeps `page` (a base's buffer no longer needed) for a later commit.
    pub(crate) fn give_page(&mut self, page: Vec<u8>) {
        if self.spare_pages.len() < SPARE_PAGES_KEPT {
            self.spare_pages.push(page);
        }
    }
}

/// One page of a logged commit: its id, its bytes as written in place, and the
/// version it was copied from (`(phys, bytes)`), if the writer kept it.
pub(crate) struct LoggedPage<'a> {
    pub phys: u64,
    pub bytes: &'a [u8],
    pub base: Option<(u64, &'a [u8])>,
}

/// Most bytes the record of `pages` pages can take at `page_size` (whatever their deltas).
pub(crate) fn max_record_bytes(pages: usize, page_size: usize) -> u64 {
    (IDS_AT + pages * delta::max_encoded(page_size)).next_multiple_of(page_size) as u64
}

/// Builds the record of commit `meta` in epoch `epoch` holding `pages` (ascending ids,
/// each as a delta against its base): a whole number of [`LOG_BLOCK`]s, zero-padded.
#[cfg(test)]
pub(crate) fn encode(epoch: TxnId, meta: &Meta, pages: &[LoggedPage<'_>], page_size: usize) -> Vec<u8> {
    let mut record = Vec::with_capacity(2 * page_size);
    encode_at(&mut record, 0, epoch, meta, pages);
    record
}

/// Builds the record of commit `meta` in epoch `epoch` holding `pages` (ascending ids,
/// each as a delta against its base) into `out` from byte `start` on (the bytes before
/// it stay; `out` is cut to `start` first): the record is `out[start..]`, a whole number
/// of [`LOG_BLOCK`]s, zero-padded. The writer reuses one buffer and picks `start` so
/// that the record begins at a block-aligned address.
pub(crate) fn encode_at(out: &mut Vec<u8>, start: usize, epoch: TxnId, meta: &Meta, pages: &[LoggedPage<'_>]) {
    out.truncate(start);
    out.resize(start + IDS_AT, 0);
    let record = &mut out[start..];
    record[..4].fill(0);
    record[4..8].copy_from_slice(MAGIC_BLOCKS);
    page::write_u64(record, 8, epoch.0);
    page::write_u64(record, 16, meta.txn.0);
    page::write_u32(record, 24, pages.len() as u32);
    page::write_u32(record, 28, 0);
    record[META_AT..IDS_AT].copy_from_slice(&meta.encode_body(0));
    let mut scratch = delta::Scratch::default();
    for page in pages {
        delta::encode(out, &mut scratch, page.phys, page.bytes, page.base);
    }
    let used = out.len() - start;
    page::write_u32(&mut out[start..], 28, used as u32);
    out.resize(start + used.next_multiple_of(LOG_BLOCK), 0);
    let crc = page::crc32c(&out[start + 4..]);
    page::write_u32(&mut out[start..], 0, crc);
}

/// Makes `record` (built by [`encode`]) one of epoch `epoch`.
#[cfg(test)]
pub(crate) fn set_epoch(record: &mut [u8], epoch: TxnId) {
    page::write_u64(record, 8, epoch.0);
    let crc = page::crc32c(&record[4..]);
    page::write_u32(record, 0, crc);
}

/// One record read back: the commit's meta and its pages, whole (a version a later record
/// of the scan rewrote is left empty: only the newest version of a page is kept).
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
    // Where the newest version of each page written so far is: (record, page) in `records`.
    let mut newest: HashMap<u64, (usize, usize)> = HashMap::new();
    let mut spare: Vec<Vec<u8>> = Vec::new();
    let mut window = Window { region, end: region + region_bytes, start: 0, bytes: Vec::new() };
    let (mut offset, mut previous) = (0u64, home.txn);
    while offset + LOG_BLOCK as u64 <= region_bytes {
        let at = region + offset;
        let header = window.read(storage, at, LOG_BLOCK)?;
        let count = page::read_u32(header, 24) as usize;
        let txn = TxnId(page::read_u64(header, 16));
        let magic = &header[4..8];
        let deltas = magic == MAGIC_BLOCKS || magic == MAGIC_DELTAS;
        let unit = if magic == MAGIC_BLOCKS { LOG_BLOCK } else { page_size } as u64;
        let length = if deltas {
            (page::read_u32(header, 28) as u64).next_multiple_of(unit)
        } else {
            (1 + count as u64) * page_size as u64
        };
        if !(deltas || magic == MAGIC_PAGES)
            || page::read_u64(header, 8) != home.txn.0
            || txn <= previous
            || (!deltas && count > max_pages(page_size))
            || length < unit
            || offset + length > region_bytes
        {
            break;
        }
        let record = window.read(storage, at, length as usize)?;
        let whole = page::crc32c(&record[4..]) == page::read_u32(record, 0);
        if !whole && !cfg!(quire_mutant = "log_no_crc") {
            break; // torn, or never written: the commit was not acknowledged
        }
        let phys = PhysId(at / page_size as u64);
        let meta = decode_meta(record, home, phys)?;
        let pages = if deltas {
            let earlier = Earlier { records: &records, newest: &newest };
            decode_deltas(record, &meta, phys, earlier, storage, &mut spare)?
        } else {
            decode_pages(record, &meta, phys)?
        };
        // A version a later record rewrote is never a base again (a base is the newest
        // version): its buffer is reused for the pages still to come.
        for (index, (id, _)) in pages.iter().enumerate() {
            if let Some((record, at)) = newest.insert(*id, (records.len(), index)) {
                spare.push(std::mem::take(&mut records[record].pages[at].1));
            }
        }
        records.push(Replayed { meta, pages });
        (offset, previous) = (offset + length, txn);
    }
    if cfg!(quire_mutant = "log_skip_last") {
        records.pop(); // mutant: the newest record is not replayed
    }
    Ok(records)
}

/// Bytes of the region read at once by [`Window`]: a replay reads it front to back, and
/// a read a record (3,000 of them fill the default region) cost more than the rest of
/// the replay (`open_probe`, 1.3 GB file: 108 of 181 ms).
const WINDOW_BYTES: usize = 1 << 20;

/// The part of the log region last read, so that records are read a window at a time.
struct Window {
    region: u64,
    end: u64,
    start: u64,
    bytes: Vec<u8>,
}

impl Window {
    /// The `length` bytes of the region at byte `at` of the file.
    fn read(&mut self, storage: &dyn Storage, at: u64, length: usize) -> Result<&[u8]> {
        let held = self.start..self.start + self.bytes.len() as u64;
        if !(held.contains(&at) && at + length as u64 <= held.end) {
            debug_assert!(at >= self.region && at + length as u64 <= self.end, "a read inside the region");
            let wanted = length.max(WINDOW_BYTES).min((self.end - at) as usize).max(length);
            self.bytes.resize(wanted, 0);
            self.start = at;
            read(storage, at, &mut self.bytes)?;
        }
        let from = (at - self.start) as usize;
        Ok(&self.bytes[from..from + length])
    }
}

/// The records replayed before the one being decoded, and where the newest version of
/// each page they wrote is.
#[derive(Clone, Copy)]
struct Earlier<'a> {
    records: &'a [Replayed],
    newest: &'a HashMap<u64, (usize, usize)>,
}

impl<'a> Earlier<'a> {
    /// The newest version of page `phys` an earlier record wrote.
    fn version(self, phys: u64) -> Option<&'a [u8]> {
        self.newest.get(&phys).map(|&(record, index)| &self.records[record].pages[index].1[..])
    }
}

/// Most pages a record of whole pages can hold at `page_size`.
fn max_pages(page_size: usize) -> usize {
    (page_size - IDS_AT) / 8
}

/// The meta of a whole record (its CRC verified) of the log of `home`, found at `phys`.
fn decode_meta(record: &[u8], home: &Meta, phys: PhysId) -> Result<Meta> {
    let mut meta_page = vec![0u8; home.page_size as usize];
    meta_page[..META_BODY_BYTES].copy_from_slice(&record[META_AT..IDS_AT]);
    let meta = Meta::decode(0, &meta_page)?;
    if meta.txn.0 != page::read_u64(record, 16)
        || meta.log_start != home.log_start
        || meta.log_pages != home.log_pages
        || meta.page_size != home.page_size
    {
        return Err(Error::corrupted(phys, "a commit log record's meta does not match its header or the file"));
    }
    Ok(meta)
}

/// Whether a record of commit `meta` may name page `id` (in the file, outside the meta
/// pages and the log region).
fn page_allowed(meta: &Meta, id: u64) -> bool {
    let in_log = (meta.log_start..meta.log_start + meta.log_pages).contains(&id);
    (META_PAGES..meta.page_count).contains(&id) && !in_log
}

/// The pages of a record of page deltas. A base is the newest version an earlier record
/// of this log wrote, else the page on disk (pages freed while the log holds records
/// are not reused before a checkpoint, so a base is still as it was committed); each
/// page rebuilt must verify, so a wrong base is corruption, never a wrong page.
fn decode_deltas(
    record: &[u8],
    meta: &Meta,
    phys: PhysId,
    earlier: Earlier<'_>,
    storage: &dyn Storage,
    spare: &mut Vec<Vec<u8>>,
) -> Result<Vec<(u64, Vec<u8>)>> {
    let page_size = meta.page_size as usize;
    let count = page::read_u32(record, 24) as usize;
    let used = page::read_u32(record, 28) as usize;
    let body = record
        .get(..used)
        .filter(|_| used >= IDS_AT)
        .ok_or_else(|| Error::corrupted(phys, "a commit log record's length is shorter than its header"))?;
    let (mut at, mut pages) = (IDS_AT, Vec::<(u64, Vec<u8>)>::with_capacity(count.min(used / delta::PAGE_HEADER)));
    let mut base_bytes = vec![0u8; page_size];
    for _ in 0..count {
        let found = delta::decode(body, &mut at, page_size, phys)?;
        let after_previous = pages.last().is_none_or(|(last, _)| found.phys > *last);
        if !page_allowed(meta, found.phys) || !after_previous || (found.base != 0 && !page_allowed(meta, found.base)) {
            return Err(Error::corrupted(
                phys,
                format!("a commit log record names page {} (base {})", found.phys, found.base),
            ));
        }
        let base = if found.base == 0 {
            None
        } else if let Some(bytes) = earlier.version(found.base) {
            Some(bytes)
        } else {
            read(storage, found.base * page_size as u64, &mut base_bytes)?;
            Some(&base_bytes[..])
        };
        let mut bytes = spare.pop().unwrap_or_default();
        found.apply_into(base, page_size, &mut bytes);
        page::verify(&bytes, PhysId(found.phys)).map_err(|_| {
            Error::corrupted(phys, format!("page {} rebuilt from a commit log record does not verify", found.phys))
        })?;
        pages.push((found.phys, bytes));
    }
    if at != used {
        return Err(Error::corrupted(phys, "a commit log record's pages do not fill its length"));
    }
    Ok(pages)
}

/// The pages of a record of whole pages (the format before page deltas).
fn decode_pages(record: &[u8], meta: &Meta, phys: PhysId) -> Result<Vec<(u64, Vec<u8>)>> {
    let page_size = meta.page_size as usize;
    let count = page::read_u32(record, 24) as usize;
    let mut pages = Vec::with_capacity(count);
    for index in 0..count {
        let id = page::read_u64(record, IDS_AT + 8 * index);
        let after_previous = pages.last().is_none_or(|(last, _): &(u64, Vec<u8>)| id > *last);
        if !page_allowed(meta, id) || !after_previous {
            return Err(Error::corrupted(phys, format!("a commit log record names page {id}")));
        }
        let bytes = record[(1 + index) * page_size..(2 + index) * page_size].to_vec();
        page::verify(&bytes, PhysId(id))?;
        pages.push((id, bytes));
    }
    Ok(pages)
}

fn read(storage: &dyn Storage, at: u64, buf: &mut [u8]) -> Result<()> {
    storage.read_at(at, buf).map_err(|error| Error::io(format!("reading the commit log at byte {at}"), error))
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
        return Ok(Recovered { storage, opened, log: LogState::new(epoch) });
    };
    let last = Meta { durability: Durability::Full, last_synced: last.txn, ..last };
    opened.meta = last;
    opened.txn_floor = opened.txn_floor.max(last.txn);
    let page_size = home.page_size as usize;
    let pages: BTreeMap<u64, Vec<u8>> =
        records.into_iter().flat_map(|record| record.pages).filter(|(_, bytes)| !bytes.is_empty()).collect();
    if read_only {
        let storage: Arc<dyn Storage> = Arc::new(OverlayStorage::new(storage, page_size, pages));
        return Ok(Recovered { storage, opened, log: LogState::default() });
    }
    let io = |what: &str, error| Error::io(format!("replaying the commit log: {what}"), error);
    write_in_runs(storage.as_ref(), &pages, page_size).map_err(|error| io("write", error))?;
    let last = write_rebuilt_record(storage.as_ref(), last)?;
    opened.meta = last;
    storage.sync().map_err(|error| io("sync", error))?;
    let slot = 1 - opened.slot;
    let mut meta_page = vec![0u8; page_size];
    last.encode(slot, &mut meta_page);
    storage.write_at(slot * page_size as u64, &meta_page).map_err(|error| io("meta write", error))?;
    storage.sync().map_err(|error| io("sync", error))?;
    opened.slot = slot;
    Ok(Recovered { storage, opened, log: LogState::new(Some(last.txn)) })
}

/// Most pages of one write at replay.
const RUN_PAGES: usize = 128;

/// Writes `pages` in place, runs of adjacent pages in one vectored write each (a commit's
/// fresh pages come off the free list lowest first, so a log's pages are often adjacent:
/// 5,581 single writes were 21 ms of a 1.3 GB file's replay).
fn write_in_runs(storage: &dyn Storage, pages: &BTreeMap<u64, Vec<u8>>, page_size: usize) -> std::io::Result<()> {
    let mut run: Vec<&[u8]> = Vec::with_capacity(RUN_PAGES);
    let mut first = 0u64;
    for (&phys, bytes) in pages {
        if !run.is_empty() && (first + run.len() as u64 != phys || run.len() == RUN_PAGES) {
            storage.write_pages_at(first * page_size as u64, &run)?;
            run.clear();
        }
        if run.is_empty() {
            first = phys;
        }
        run.push(bytes);
    }
    if !run.is_empty() {
        storage.write_pages_at(first * page_size as u64, &run)?;
    }
    Ok(())
}

/// Writes the commit record of `last` (the last replayed commit's meta, which names
/// none: logged commits write no record) rebuilt from its page map (`rebuild.rs`), at
/// pages past its end, and returns `last` naming it. Past the end, so that a crash before
/// the new meta is durable leaves every page the log's replay reads as it was.
fn write_rebuilt_record(storage: &dyn Storage, last: Meta) -> Result<Meta> {
    let page_size = last.page_size as usize;
    let mut record = crate::rebuild::free_space(&last, |phys, buf| read(storage, phys.0 * page_size as u64, buf))?;
    let mut stream = record.encode();
    let per_page = Record::capacity_per_page(page_size);
    let count = stream.len().div_ceil(per_page).max(1);
    let pages: Vec<u64> = if cfg!(quire_mutant = "rebuilt_record_low") && record.free.len() >= count {
        // mutant: the record goes to the lowest free pages, which a second replay may read
        let taken: Vec<u64> = record.free.drain(..count).collect();
        stream = record.encode();
        taken
    } else {
        (last.page_count..last.page_count + count as u64).collect()
    };
    let mut page = vec![0u8; page_size];
    for (index, &phys) in pages.iter().enumerate() {
        let chunk = stream.get(index * per_page..).unwrap_or(&[]);
        let next = pages.get(index + 1).copied().unwrap_or(0);
        fill_record_page(&mut page, index, next, &chunk[..chunk.len().min(per_page)], last.txn);
        storage
            .write_at(phys * page_size as u64, &page)
            .map_err(|error| Error::io("replaying the commit log: write of the rebuilt commit record", error))?;
    }
    Ok(Meta {
        page_count: last.page_count.max(pages[pages.len() - 1] + 1),
        record_head: PhysId(pages[0]),
        record_len: stream.len() as u32,
        record_crc: page::crc32c(&stream),
        ..last
    })
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
            let record = encode(TxnId(5), &meta, &[LoggedPage { phys, bytes: &image, base: None }], 4096);
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
        // Tear the second record: one sector inside its page delta holds other bytes.
        assert!(records[1].len() >= 2048, "the second record holds a whole page");
        storage.write_at(20 * 4096 + records[0].len() as u64 + 1024, &[0xAA; 512]).unwrap();
        assert_eq!(scan(&storage, &home()).unwrap().len(), 1);
        // Another epoch's records never extend this meta.
        assert!(scan(&storage, &Meta { txn: TxnId(4), ..home() }).unwrap().is_empty());
    }

    /// A record of whole pages as version 4 wrote it (`QLOG`).
    fn whole_page_record(epoch: u64, meta: &Meta, pages: &[(u64, &[u8])]) -> Vec<u8> {
        let mut record = vec![0u8; (1 + pages.len()) * 4096];
        let mut meta_page = vec![0u8; 4096];
        meta.encode(0, &mut meta_page);
        record[4..8].copy_from_slice(MAGIC_PAGES);
        page::write_u64(&mut record, 8, epoch);
        page::write_u64(&mut record, 16, meta.txn.0);
        page::write_u32(&mut record, 24, pages.len() as u32);
        record[META_AT..IDS_AT].copy_from_slice(&meta_page[..META_BODY_BYTES]);
        for (index, (phys, bytes)) in pages.iter().enumerate() {
            page::write_u64(&mut record, IDS_AT + 8 * index, *phys);
            record[(1 + index) * 4096..(2 + index) * 4096].copy_from_slice(bytes);
        }
        let crc = page::crc32c(&record[4..]);
        page::write_u32(&mut record, 0, crc);
        record
    }

    #[test]
    fn a_version_4_log_of_whole_pages_is_replayed_and_a_delta_record_may_follow() {
        let storage = MemStorage::from_bytes(vec![0; 40 * 4096]);
        let first = page(3, 6, 6);
        let old = whole_page_record(5, &Meta { txn: TxnId(6), ..home() }, &[(3, &first)]);
        storage.write_at(20 * 4096, &old).unwrap();
        // Txn 7 copies page 3 to page 4: its delta is against the version txn 6 logged.
        let mut second = first.clone();
        second[100..108].copy_from_slice(&[9; 8]);
        page::seal(&mut second, PageKind::structure(16), 4, TxnId(7));
        let pages = [LoggedPage { phys: 4, bytes: &second, base: Some((3, &first)) }];
        let new = encode(TxnId(5), &Meta { txn: TxnId(7), ..home() }, &pages, 4096);
        assert_eq!(new.len(), 4096, "a small change is a one-page record");
        storage.write_at(20 * 4096 + old.len() as u64, &new).unwrap();
        let found = scan(&storage, &home()).unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].pages, [(3, first)]);
        assert_eq!(found[1].pages, [(4, second)]);
    }

    #[test]
    fn records_take_whole_blocks_not_pages_and_a_version_5_record_still_replays() {
        // Proves: with 8 KiB pages a small record is one 4 KiB block, records lie back to
        // back on block boundaries up to the region's very end, and a record of
        // version 5 (`QLGD`, padded to a whole page) is still read, by its own length.
        let home = Meta { txn: TxnId(5), page_count: 40, log_start: 30, log_pages: 3, ..Meta::empty(8192) };
        let storage = MemStorage::from_bytes(vec![0; 40 * 8192]);
        let image = |phys: u64, txn: u64| {
            let mut bytes = vec![txn as u8; 8192];
            page::seal(&mut bytes, PageKind::structure(16), phys, TxnId(txn));
            bytes
        };
        let bases: Vec<Vec<u8>> = (0..5).map(|index| image(3 + index, 4)).collect();
        let mut at = 30 * 8192;
        for (index, txn) in (6u64..11).enumerate() {
            let mut bytes = bases[index].clone();
            bytes[300..308].copy_from_slice(&txn.to_le_bytes());
            page::seal(&mut bytes, PageKind::structure(16), 10 + index as u64, TxnId(txn));
            let pages =
                [LoggedPage { phys: 10 + index as u64, bytes: &bytes, base: Some((3 + index as u64, &bases[index])) }];
            let mut record = encode(TxnId(5), &Meta { txn: TxnId(txn), ..home }, &pages, 8192);
            assert_eq!(record.len(), LOG_BLOCK, "a small change is one block");
            if txn == 6 {
                // The first as version 5 wrote it: magic QLGD, padded to the page.
                record[4..8].copy_from_slice(MAGIC_DELTAS);
                record.resize(8192, 0);
                set_epoch(&mut record, TxnId(5));
            }
            storage.write_at(at, &record).unwrap();
            at += record.len() as u64;
            storage.write_at((3 + index as u64) * 8192, &bases[index]).unwrap();
        }
        assert_eq!(at, 33 * 8192, "the last record ends at the region's end");
        let found = scan(&storage, &home).unwrap();
        assert_eq!(found.iter().map(|record| record.meta.txn.0).collect::<Vec<_>>(), [6, 7, 8, 9, 10]);
        assert_eq!(&found[4].pages[0].1[300..308], &10u64.to_le_bytes());
    }

    #[test]
    fn a_delta_against_a_base_that_changed_is_corruption_not_a_wrong_page() {
        let storage = MemStorage::from_bytes(vec![0; 40 * 4096]);
        let base = page(3, 1, 4);
        let mut changed = base.clone();
        changed[200] = 2;
        page::seal(&mut changed, PageKind::structure(16), 5, TxnId(6));
        let pages = [LoggedPage { phys: 5, bytes: &changed, base: Some((3, &base)) }];
        let record = encode(TxnId(5), &Meta { txn: TxnId(6), ..home() }, &pages, 4096);
        storage.write_at(20 * 4096, &record).unwrap();
        storage.write_at(3 * 4096, &base).unwrap();
        assert_eq!(scan(&storage, &home()).unwrap()[0].pages, [(5, changed)]);
        storage.write_at(3 * 4096, &page(3, 7, 4)).unwrap(); // the base overwritten
        assert!(matches!(scan(&storage, &home()), Err(Error::Corrupted { .. })));
    }

    #[test]
    fn a_whole_record_naming_a_page_outside_the_file_is_corruption() {
        let storage = MemStorage::from_bytes(vec![0; 40 * 4096]);
        let image = page(25, 1, 6);
        let pages = [LoggedPage { phys: 25, bytes: &image, base: None }];
        let record = encode(TxnId(5), &Meta { txn: TxnId(6), ..home() }, &pages, 4096);
        storage.write_at(20 * 4096, &record).unwrap();
        assert!(matches!(scan(&storage, &home()), Err(Error::Corrupted { .. })), "page 25 is in the log region");
    }
}
