//! The two meta pages at the head of the file, written alternately.
//!
//! A meta page is a normal page (header kind `META`, logical id = slot 0 or 1) whose
//! body holds the roots of one committed snapshot:
//!
//! | offset | size | field           | meaning                                                    |
//! |-------:|-----:|-----------------|------------------------------------------------------------|
//! | 0      | 32   | page header     | see `page.rs`; checksum covers the whole page               |
//! | 32     | 8    | magic           | `b"QUIREDB\0"`                                              |
//! | 40     | 4    | format version  | [`FORMAT_VERSION`]                                          |
//! | 44     | 4    | page size       | bytes, a power of two in 4096..=65536                       |
//! | 48     | 8    | txn id          | the commit this meta describes                              |
//! | 56     | 8    | map root        | physical page of the page-map root (0 = empty map)         |
//! | 64     | 4    | map depth       | levels of the page map (0 = empty)                          |
//! | 68     | 1    | durability      | 0 Full, 1 Checksummed, 2 None (how this commit was made)   |
//! | 69     | 3    | reserved        | zero                                                        |
//! | 72     | 8    | page count      | physical pages in use or free: `[0, page_count)`            |
//! | 80     | 8    | logical next    | next never-used logical page id                              |
//! | 88     | 8    | record head     | first page of the commit record (free space; 0 = none)     |
//! | 96     | 8    | catalog root    | logical page of the catalog (0 = no catalog yet)           |
//! | 104    | 8    | live pages      | number of mapped logical pages                              |
//! | 112    | 8    | last synced txn | newest commit known durable when this one was written      |
//! | 120    | 4    | record CRC      | CRC-32C of this commit's whole record stream                |
//! | 124    | 4    | record bytes    | length of that stream                                      |
//! | 128    | 8    | log start       | first physical page of the commit log region (0 = none)    |
//! | 136    | 8    | log pages       | pages of the commit log region (0 = none)                  |
//!
//! A file without a commit log is written as format version 3 (bytes 128.. zero) and
//! one with a log as version 7 (records of page deltas in 4 KiB blocks whose metas name
//! no commit record: open rebuilds the free space from the page map), so an older
//! build refuses only files that use the log. Versions 4 (a log of whole-page records),
//! 5 (records of page deltas padded to whole pages) and 6 (each logged commit also
//! wrote a commit record) are read and replayed; the next meta written makes the file
//! version 7.
//!
//! Choosing a meta at open (`db.rs`, `open.rs`): both are read; the valid one with the
//! higher txn id wins, except that a meta written without `Full` durability is trusted
//! only if its commit record is exactly the one it names (length and CRC) and every
//! page the record lists as unsynced holds exactly the version the commit wrote (its
//! CRC); otherwise the other meta is used and the rollback is reported.

use crate::error::{Error, Result};
use crate::page::{self, PageId, PageKind, PhysId, TxnId, read_u32, read_u64, write_u32, write_u64};

/// Magic number at offset 32 of both meta pages.
pub const MAGIC: &[u8; 8] = b"QUIREDB\0";
/// The newest format version this build reads and writes (7: a commit log region whose
/// records carry page deltas in whole 4 KiB blocks, and whose commits write no commit
/// record; an older build would trust a record that does not describe them).
pub const FORMAT_VERSION: u32 = 7;
/// A file with a commit log whose logged commits each wrote a commit record (read and
/// replayed, not written).
pub const FORMAT_VERSION_LOG_RECORDS: u32 = 6;
/// A file with a commit log of records of page deltas padded to whole pages (read and
/// replayed, not written).
pub const FORMAT_VERSION_PAGE_LOG: u32 = 5;
/// A file with a commit log of whole-page records (read, and replayed, not written).
pub const FORMAT_VERSION_WHOLE_PAGE_LOG: u32 = 4;
/// The format version of a file without a commit log (read and written as before).
pub const FORMAT_VERSION_NO_LOG: u32 = 3;
/// Bytes of an encoded meta page that are not zero (the rest of the page is).
pub const META_BODY_BYTES: usize = 144;

/// Whether this build reads files of format `version`.
pub fn version_supported(version: u32) -> bool {
    [
        FORMAT_VERSION,
        FORMAT_VERSION_LOG_RECORDS,
        FORMAT_VERSION_PAGE_LOG,
        FORMAT_VERSION_WHOLE_PAGE_LOG,
        FORMAT_VERSION_NO_LOG,
    ]
    .contains(&version)
}
/// Physical pages reserved for the two meta pages.
pub const META_PAGES: u64 = 2;
/// Bytes of a meta page that must be present to learn the page size.
pub const META_PROBE_BYTES: usize = 128;

/// How a commit reaches the disk: what survives a process crash and a power cut once
/// `commit` has returned `Ok`.
///
/// | mode | writes and syncs | process crash (kill -9) | power cut |
/// |---|---|---|---|
/// | `Full` | pages, sync, meta, sync | the commit survives | the commit survives |
/// | `Checksummed` | pages, meta, one sync | the commit survives | the commit survives |
/// | `None` | pages, meta, no sync | the commit survives (the OS has the writes) | the commit may be lost, with any later ones, back to the last synced commit; the file opens at a consistent commit |
///
/// A crash *during* a commit (before it returned) leaves either the previous state or,
/// if every write of the commit reached the disk, the new one — never a mix.
///
/// Opening checks the newest meta page before trusting it. A `Full` meta needs only
/// its own checksum (its pages were synced before it was written). A `Checksummed` or
/// `None` meta is trusted only if its commit record and every page written since the
/// last sync hold exactly the bytes the commit wrote (CRCs kept in the record and the
/// meta). If not — the power failed before the commit's sync completed, or a page
/// written in that window was later damaged — the database opens at the previous
/// commit and says so: [`crate::Database::rollback`] describes it, `check` reports it as
/// a problem (`quire check` exits non-zero), and later commits take transaction ids
/// above the rejected one. An I/O error while checking is an error, never a rollback.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Durability {
    /// Data, sync, meta, sync: survives power loss; the meta needs no verification.
    Full,
    /// Data and meta, one sync: survives power loss; the meta is trusted only if the
    /// pages written since the last sync hold what the commit wrote.
    #[default]
    Checksummed,
    /// No sync: survives a process crash; after a power cut recent commits may be
    /// lost (back to the last synced one) and the file opens at a consistent commit.
    None,
}

impl Durability {
    pub(crate) fn code(self) -> u8 {
        match self {
            Durability::Full => 0,
            Durability::Checksummed => 1,
            Durability::None => 2,
        }
    }

    pub(crate) fn from_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(Durability::Full),
            1 => Some(Durability::Checksummed),
            2 => Some(Durability::None),
            _ => None,
        }
    }
}

/// The roots of one committed snapshot (the decoded body of a meta page).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    /// Page size of the file.
    pub page_size: u32,
    /// Commit id.
    pub txn: TxnId,
    /// Root of the page map (physical), 0 when empty.
    pub map_root: PhysId,
    /// Levels of the page map.
    pub map_depth: u32,
    /// How this commit was made durable.
    pub durability: Durability,
    /// Physical pages in use or free.
    pub page_count: u64,
    /// Next never-used logical id.
    pub logical_next: u64,
    /// First page of the commit record, 0 when none.
    pub record_head: PhysId,
    /// Logical page of the catalog, `PageId(0)` when none.
    pub catalog_root: PageId,
    /// Number of mapped logical pages.
    pub live_pages: u64,
    /// Newest commit known durable when this one was written.
    pub last_synced: TxnId,
    /// CRC-32C of the commit record stream (0 with no record).
    pub record_crc: u32,
    /// Bytes of the commit record stream.
    pub record_len: u32,
    /// First physical page of the commit log region, 0 when the file has none.
    pub log_start: u64,
    /// Pages of the commit log region, 0 when the file has none.
    pub log_pages: u64,
}

/// CRC-32C of `prefix` followed by `len` zero bytes, without reading the zeros. Over
/// zero bytes the CRC register changes linearly, so the change is a 32 × 32 bit matrix,
/// kept as four byte tables per length (built once from the images of the 32 basis
/// registers; `crc32c_combine` computes it anew each call and cost more than the CRC
/// of the zeros themselves).
fn crc_with_zeros(prefix: &[u8], len: usize) -> u32 {
    type Shift = (usize, Box<[[u32; 256]; 4]>);
    static SHIFTS: std::sync::Mutex<Vec<Shift>> = std::sync::Mutex::new(Vec::new());
    let register = !crate::page::crc32c(prefix);
    let mut shifts = SHIFTS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let at = match shifts.iter().position(|(n, _)| *n == len) {
        Some(at) => at,
        None => {
            shifts.push((len, zero_shift(len)));
            shifts.len() - 1
        }
    };
    let table = &shifts[at].1;
    let bytes = register.to_le_bytes();
    !(table[0][bytes[0] as usize]
        ^ table[1][bytes[1] as usize]
        ^ table[2][bytes[2] as usize]
        ^ table[3][bytes[3] as usize])
}

/// The byte tables of the register's change over `len` zero bytes.
fn zero_shift(len: usize) -> Box<[[u32; 256]; 4]> {
    let zeros = vec![0u8; len];
    let image = |register: u32| crate::page::crc32c_register(register, &zeros);
    let basis: Vec<u32> = (0..32).map(|bit| image(1 << bit)).collect();
    let mut table = Box::new([[0u32; 256]; 4]);
    for (lane, row) in table.iter_mut().enumerate() {
        for (byte, entry) in row.iter_mut().enumerate() {
            *entry = (0..8).filter(|bit| byte & (1 << bit) != 0).fold(0, |acc, bit| acc ^ basis[lane * 8 + bit]);
        }
    }
    table
}

impl Meta {
    /// The meta of a freshly created, empty database.
    pub fn empty(page_size: u32) -> Meta {
        Meta {
            page_size,
            txn: TxnId(0),
            map_root: PhysId(0),
            map_depth: 0,
            durability: Durability::Full,
            page_count: META_PAGES,
            logical_next: 1,
            record_head: PhysId(0),
            catalog_root: PageId(0),
            live_pages: 0,
            last_synced: TxnId(0),
            record_crc: 0,
            record_len: 0,
            log_start: 0,
            log_pages: 0,
        }
    }

    /// Serialises into a full page buffer for `slot` and seals it.
    pub fn encode(&self, slot: u64, page: &mut [u8]) {
        page[..META_BODY_BYTES].copy_from_slice(&self.encode_body(slot));
        page[META_BODY_BYTES..].fill(0);
    }

    /// The first `META_BODY_BYTES` (144) bytes of the sealed meta page for `slot` (the rest
    /// of the page is zeros; the checksum covers them, combined in without reading
    /// them: a logged commit carries this body, and encoding a whole page for it was a
    /// tenth of the commit's instructions).
    pub fn encode_body(&self, slot: u64) -> [u8; META_BODY_BYTES] {
        let mut body = [0u8; META_BODY_BYTES];
        body[32..40].copy_from_slice(MAGIC);
        let version = if self.log_pages == 0 { FORMAT_VERSION_NO_LOG } else { FORMAT_VERSION };
        write_u32(&mut body, 40, version);
        write_u32(&mut body, 44, self.page_size);
        write_u64(&mut body, 48, self.txn.0);
        write_u64(&mut body, 56, self.map_root.0);
        write_u32(&mut body, 64, self.map_depth);
        body[68] = self.durability.code();
        write_u64(&mut body, 72, self.page_count);
        write_u64(&mut body, 80, self.logical_next);
        write_u64(&mut body, 88, self.record_head.0);
        write_u64(&mut body, 96, self.catalog_root.0);
        write_u64(&mut body, 104, self.live_pages);
        write_u64(&mut body, 112, self.last_synced.0);
        write_u32(&mut body, 120, self.record_crc);
        write_u32(&mut body, 124, self.record_len);
        write_u64(&mut body, 128, self.log_start);
        write_u64(&mut body, 136, self.log_pages);
        page::set_header(&mut body, PageKind::META, slot, self.txn);
        let sum = crc_with_zeros(&body[4..], self.page_size as usize - META_BODY_BYTES);
        body[0..4].copy_from_slice(&sum.to_le_bytes());
        body
    }

    /// Decodes and verifies a meta page read from `slot`.
    pub fn decode(slot: u64, page: &[u8]) -> Result<Meta> {
        let phys = PhysId(slot);
        check_identity(page, page.len() as u32)?;
        let head = page::verify(page, phys)?;
        if head.kind != PageKind::META || head.logical != slot {
            return Err(Error::corrupted(phys, "meta page header does not name its slot"));
        }
        let durability = Durability::from_code(page[68])
            .ok_or_else(|| Error::corrupted(phys, format!("unknown durability code {}", page[68])))?;
        let meta = Meta {
            page_size: read_u32(page, 44),
            txn: TxnId(read_u64(page, 48)),
            map_root: PhysId(read_u64(page, 56)),
            map_depth: read_u32(page, 64),
            durability,
            page_count: read_u64(page, 72),
            logical_next: read_u64(page, 80),
            record_head: PhysId(read_u64(page, 88)),
            catalog_root: PageId(read_u64(page, 96)),
            live_pages: read_u64(page, 104),
            last_synced: TxnId(read_u64(page, 112)),
            record_crc: read_u32(page, 120),
            record_len: read_u32(page, 124),
            log_start: read_u64(page, 128),
            log_pages: read_u64(page, 136),
        };
        let log_end = meta.log_start.checked_add(meta.log_pages);
        let page_bytes = u64::from(meta.page_size);
        // Entries per map page; a map deeper than 64-bit logical ids need is corrupt
        // (and its index arithmetic would overflow).
        let fanout = (page_bytes.saturating_sub(page::HEADER_SIZE as u64) / 8).max(2);
        if meta.txn != head.txn
            || fanout.checked_pow(meta.map_depth).is_none()
            || meta.page_count < META_PAGES
            || meta.page_count.checked_mul(page_bytes).is_none()
            || meta.map_depth > 8
            || (meta.map_depth == 0) != (meta.map_root.0 == 0)
            || (meta.map_root.0 != 0 && (meta.map_root.0 < META_PAGES || meta.map_root.0 >= meta.page_count))
            || (meta.record_head.0 != 0 && (meta.record_head.0 < META_PAGES || meta.record_head.0 >= meta.page_count))
            || meta.logical_next == 0
            || meta.live_pages >= meta.logical_next
            || meta.last_synced > meta.txn
            || (meta.log_pages == 0) != (meta.log_start == 0)
            || (meta.log_pages != 0 && (meta.log_start < META_PAGES || log_end.is_none_or(|end| end > meta.page_count)))
            || (meta.log_pages != 0) != (read_u32(page, 40) != FORMAT_VERSION_NO_LOG)
        {
            return Err(Error::corrupted(phys, "inconsistent meta fields"));
        }
        Ok(meta)
    }
}

/// Checks magic, version and page size of the first bytes of a meta page.
/// Returns the page size the file says it uses.
pub fn check_identity(probe: &[u8], requested_page_size: u32) -> Result<u32> {
    if probe.len() < META_PROBE_BYTES || &probe[32..40] != MAGIC {
        return Err(Error::NotADatabase { path: String::new() });
    }
    let version = read_u32(probe, 40);
    if !version_supported(version) {
        return Err(Error::FormatVersion { found: version, supported: FORMAT_VERSION });
    }
    let found = read_u32(probe, 44);
    if found != requested_page_size {
        return Err(Error::PageSizeMismatch { found, requested: requested_page_size });
    }
    Ok(found)
}

/// Page size stored in a probe, if the probe looks like a meta page at all.
pub fn probe_page_size(probe: &[u8]) -> Option<u32> {
    (probe.len() >= META_PROBE_BYTES && &probe[32..40] == MAGIC).then(|| read_u32(probe, 44))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crc_over_zeros_it_does_not_read_is_the_crc_over_them() {
        let prefix: Vec<u8> = (0..140u32).map(|at| (at * 37 % 251) as u8).collect();
        for len in [0, 1, 7, 4096 - 144, 65536 - 144] {
            let mut whole = prefix.clone();
            whole.resize(prefix.len() + len, 0);
            assert_eq!(crc_with_zeros(&prefix, len), crate::page::crc32c(&whole), "{len} zeros");
        }
    }

    #[test]
    fn the_body_checksum_is_the_whole_pages_at_every_page_size() {
        for shift in 12..=16 {
            let size = 1u32 << shift;
            let meta = Meta { txn: TxnId(9), page_count: 12, ..Meta::empty(size) };
            let mut page = vec![0xAAu8; size as usize];
            meta.encode(0, &mut page);
            assert_eq!(read_u32(&page, 0), crate::page::crc32c(&page[4..]), "page size {size}");
            assert_eq!(Meta::decode(0, &page).unwrap(), meta);
        }
    }

    #[test]
    fn meta_round_trips_and_rejects_flips() {
        let mut meta = Meta::empty(4096);
        meta.txn = TxnId(7);
        meta.last_synced = TxnId(6);
        meta.durability = Durability::None;
        meta.record_crc = 0xDEAD_BEEF;
        meta.record_len = 77;
        let mut page = vec![0u8; 4096];
        meta.encode(1, &mut page);
        assert_eq!(read_u32(&page, 40), FORMAT_VERSION_NO_LOG, "a file without a log keeps version 3");
        assert!(page[META_BODY_BYTES..].iter().all(|&byte| byte == 0));
        assert_eq!(Meta::decode(1, &page).unwrap(), meta);
        meta.page_count = 100;
        meta.log_start = 90;
        meta.log_pages = 10;
        meta.encode(1, &mut page);
        assert_eq!(read_u32(&page, 40), FORMAT_VERSION);
        assert_eq!(Meta::decode(1, &page).unwrap(), meta);
        meta.log_pages = 11; // past the page count
        meta.encode(1, &mut page);
        assert!(Meta::decode(1, &page).is_err());
        meta.log_pages = 10;
        meta.encode(1, &mut page);
        assert!(Meta::decode(0, &page).is_err());
        page[100] ^= 4;
        assert!(Meta::decode(1, &page).is_err());
    }
}
