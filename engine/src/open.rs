//! Choosing the meta page to open at, and proving it describes a complete commit.
//!
//! Both meta slots are read. The valid one with the higher transaction id is trusted
//! if it was written with `Full` durability (its pages were synced before it), or if
//! its commit is provably whole: the commit record it names, byte for byte (length and
//! CRC in the meta, every record page written by this very transaction), and every
//! page the record lists as written since the last sync holding exactly the version the
//! commit wrote (its CRC is in the record). Otherwise the other slot is tried and the
//! open is a [`Rollback`], reported to the caller — never silent.
//!
//! Two things are never a rollback: an I/O error while reading (an error: the disk
//! may be fine a moment later, and rolling back past a commit whose sync completed
//! would make the loss permanent), and a file too short for a `Full` meta (its
//! growth was synced, so the file was cut afterwards: [`Error::Truncated`]).
//!
//! Opening reads the two meta pages and, unless the newest is `Full`, the pages of
//! its last sync window; nothing else, whatever the size of the file. Commits after a
//! rollback take transaction ids above every meta seen here ([`Opened::txn_floor`]),
//! so the rejected meta, still on disk until the next commit overwrites its slot, can
//! never be mistaken for a newer commit.

use crate::error::{Error, Result};
use crate::meta::{self, Durability, META_PAGES, META_PROBE_BYTES, Meta};
use crate::page::{self, PhysId, TxnId};
use crate::storage::Storage;
use std::fmt;

/// Legal page sizes, smallest first.
const PAGE_SIZES: [u32; 5] = [4096, 8192, 16384, 32768, 65536];

/// Why opening used the older meta page instead of the newer one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rollback {
    /// The slot (0 or 1) that was not used.
    pub rejected_slot: u64,
    /// The transaction the rejected meta describes, if it could be decoded at all.
    pub rejected_txn: Option<TxnId>,
    /// The transaction the database opened at.
    pub opened_txn: TxnId,
    /// What failed.
    pub reason: String,
}

impl fmt::Display for Rollback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.rejected_txn {
            Some(txn) => write!(
                f,
                "opened at transaction {} instead of {txn} (meta slot {}): {}",
                self.opened_txn, self.rejected_slot, self.reason
            ),
            None => write!(
                f,
                "opened at transaction {}; meta slot {} is unreadable: {}",
                self.opened_txn, self.rejected_slot, self.reason
            ),
        }
    }
}

/// What opening chose.
#[derive(Debug)]
pub(crate) struct Opened {
    /// The meta to open at.
    pub meta: Meta,
    /// Its slot.
    pub slot: u64,
    /// Set when the newer meta was rejected.
    pub rollback: Option<Rollback>,
    /// The highest transaction id of any decodable meta (the next commit goes above).
    pub txn_floor: TxnId,
}

/// What one slot holds.
enum Slot {
    /// Nothing readable as a meta page at this page size.
    Empty(String),
    /// A meta page of another format version.
    OtherVersion(u32),
    /// A meta page whose checksum or fields are wrong.
    Invalid(Error),
    /// A valid meta page.
    Valid(Meta),
}

/// Reads slot `slot` as a meta page of `page_size` bytes in a file of `len` bytes.
fn read_slot(storage: &dyn Storage, len: u64, slot: u64, page_size: u32) -> Result<Slot> {
    let offset = slot * u64::from(page_size);
    if offset + u64::from(page_size) > len {
        return Ok(Slot::Empty(format!("the file ends before meta slot {slot}")));
    }
    let mut page = vec![0u8; page_size as usize];
    storage.read_at(offset, &mut page).map_err(|error| Error::io(format!("reading meta slot {slot}"), error))?;
    if meta::probe_page_size(&page[..META_PROBE_BYTES]).is_none() {
        return Ok(Slot::Empty(format!("meta slot {slot} has no magic number")));
    }
    let version = page::read_u32(&page, 40);
    if !meta::version_supported(version) {
        return Ok(Slot::OtherVersion(version));
    }
    if meta::probe_page_size(&page) != Some(page_size) {
        return Ok(Slot::Empty(format!("meta slot {slot} names another page size")));
    }
    Ok(match Meta::decode(slot, &page) {
        Ok(meta) => Slot::Valid(meta),
        Err(error) => Slot::Invalid(error),
    })
}

/// Reads both slots at the page size the file names (slot 0's probe), or, if slot 0
/// is damaged, at each legal size until a valid meta turns up.
fn read_slots(storage: &dyn Storage, len: u64) -> Result<(u32, [Slot; 2])> {
    let mut probe = [0u8; META_PROBE_BYTES];
    if len >= META_PROBE_BYTES as u64 {
        storage.read_at(0, &mut probe).map_err(|error| Error::io("reading the meta page", error))?;
    }
    let claimed = meta::probe_page_size(&probe).filter(|size| PAGE_SIZES.contains(size));
    let mut first = None;
    for page_size in claimed.into_iter().chain(PAGE_SIZES) {
        let slots = [read_slot(storage, len, 0, page_size)?, read_slot(storage, len, 1, page_size)?];
        if slots.iter().any(|slot| matches!(slot, Slot::Valid(_))) {
            return Ok((page_size, slots));
        }
        first.get_or_insert((page_size, slots));
    }
    Ok(first.expect("at least one page size was tried"))
}

/// The error for a file with no valid meta page.
fn no_meta(slots: [Slot; 2], name: &str) -> Error {
    let mut magic = false;
    let mut invalid = None;
    for slot in slots {
        match slot {
            Slot::OtherVersion(found) => return Error::FormatVersion { found, supported: meta::FORMAT_VERSION },
            Slot::Invalid(error) => {
                magic = true;
                invalid = invalid.or(Some(error));
            }
            Slot::Empty(_) | Slot::Valid(_) => {}
        }
    }
    match (magic, invalid) {
        (true, Some(error)) => error,
        _ => Error::NotADatabase { path: name.to_owned() },
    }
}

/// Picks the meta to open at (see the module docs).
pub(crate) fn choose_meta(storage: &dyn Storage, requested: Option<u32>, name: &str) -> Result<Opened> {
    let len = storage.len().map_err(|error| Error::io("reading the file length", error))?;
    let (page_size, slots) = read_slots(storage, len)?;
    if !slots.iter().any(|slot| matches!(slot, Slot::Valid(_))) {
        return Err(no_meta(slots, name));
    }
    if let Some(requested) = requested
        && requested != page_size
    {
        return Err(Error::PageSizeMismatch { found: page_size, requested });
    }
    let min_len = META_PAGES * u64::from(page_size);
    if len < min_len {
        return Err(Error::Truncated { found: len, expected: min_len });
    }
    let mut candidates: Vec<(Meta, u64)> = Vec::new();
    let mut rejected: Option<Rollback> = None;
    for (slot, found) in slots.into_iter().enumerate() {
        let slot = slot as u64;
        let reason = match found {
            Slot::Valid(meta) => {
                candidates.push((meta, slot));
                continue;
            }
            Slot::Empty(reason) => reason,
            Slot::OtherVersion(version) => format!("meta slot {slot} has format version {version}"),
            Slot::Invalid(error) => error.to_string(),
        };
        rejected = Some(Rollback { rejected_slot: slot, rejected_txn: None, opened_txn: TxnId(0), reason });
    }
    candidates.sort_by_key(|(meta, slot)| (std::cmp::Reverse(meta.txn), *slot));
    let txn_floor = candidates[0].0.txn;
    for (meta, slot) in &candidates {
        match commit_is_whole(storage, meta, len)? {
            None => {
                let rollback = rejected.map(|rollback| Rollback { opened_txn: meta.txn, ..rollback });
                return Ok(Opened { meta: *meta, slot: *slot, rollback, txn_floor });
            }
            Some(reason) => {
                let older_reason = rejected.take().map(|earlier| format!("; {}", earlier.reason)).unwrap_or_default();
                rejected = Some(Rollback {
                    rejected_slot: *slot,
                    rejected_txn: Some(meta.txn),
                    opened_txn: TxnId(0),
                    reason: format!("{reason}{older_reason}"),
                });
            }
        }
    }
    let reason = rejected.map(|rollback| rollback.reason).unwrap_or_default();
    Err(Error::corrupted(PhysId(0), format!("no meta page describes a complete commit: {reason}")))
}

/// `None` if `meta` describes a complete commit in a file of `len` bytes, else why
/// not. I/O errors are errors; a `Full` meta whose pages are cut off is
/// [`Error::Truncated`].
fn commit_is_whole(storage: &dyn Storage, meta: &Meta, len: u64) -> Result<Option<String>> {
    let page_size = u64::from(meta.page_size);
    let expected = meta.page_count * page_size; // no overflow: `Meta::decode` checked it
    if meta.durability == Durability::Full || cfg!(quire_mutant = "no_verify") {
        if len < expected {
            return Err(Error::Truncated { found: len, expected });
        }
        return Ok(None);
    }
    if len < expected {
        return Ok(Some(format!("the file holds {len} bytes, the commit needs {expected}")));
    }
    let read = |phys: PhysId, buf: &mut [u8]| {
        storage
            .read_at(phys.0 * page_size, buf)
            .map_err(|error| Error::io(format!("verifying commit {}: read of page {phys}", meta.txn), error))
    };
    let record = match crate::commit_record::read_record_with(meta, meta.page_size as usize, read) {
        Ok((record, _)) => record,
        Err(error @ Error::Io { .. }) => return Err(error),
        Err(error) => return Ok(Some(error.to_string())),
    };
    let mut buf = vec![0u8; meta.page_size as usize];
    for (phys, crc) in record.unsynced {
        if phys < META_PAGES || phys >= meta.page_count {
            return Ok(Some(format!("commit record lists page {phys} outside the file")));
        }
        read(PhysId(phys), &mut buf)?;
        if let Some(reason) = unsynced_page_problem(&buf, PhysId(phys), crc, meta) {
            return Ok(Some(reason));
        }
    }
    Ok(None)
}

/// Why a page written since the last sync is not the version `meta`'s commit wrote.
fn unsynced_page_problem(buf: &[u8], phys: PhysId, crc: u32, meta: &Meta) -> Option<String> {
    let head = match page::verify(buf, phys) {
        Ok(head) => head,
        Err(error) => return Some(format!("{error} (written since the last sync)")),
    };
    if page::read_u32(buf, 0) != crc && !cfg!(quire_mutant = "any_version") {
        return Some(format!("page {phys} holds another version than commit {} wrote", meta.txn));
    }
    if head.txn <= meta.last_synced || head.txn > meta.txn {
        return Some(format!("page {phys} was written by transaction {}, not after {}", head.txn, meta.last_synced));
    }
    None
}
