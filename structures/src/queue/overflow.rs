//! Overflow records: a record too long to sit inline in a data page (over
//! `Slots::inline_max`, i.e. `P − 32 − w` bytes) is stored as a blob (`crate::blob`)
//! and the data page keeps its 16-byte [`BlobRef`] (root page id, length), marked by
//! the overflow bit of its slot. The blob keeps the record's tail inline in its root,
//! so a record of `P + 1` bytes takes two pages, not three.

use super::page::corrupted;
use crate::blob::{self, BlobRef};
use crate::error::Result;
use quiredb_engine::{PageRead, WriteTxn};

/// Decodes the reference stored in a data page.
fn decode(stub: &[u8], structure: &str, page: u64) -> Result<BlobRef> {
    BlobRef::from_bytes(stub).ok_or_else(|| corrupted(structure, page, "overflow reference is not 16 bytes"))
}

/// Stores `record` out of line and returns its reference.
pub fn write(txn: &WriteTxn<'_>, record: &[u8]) -> Result<[u8; BlobRef::SIZE]> {
    Ok(blob::write_bytes(txn, record)?.to_bytes())
}

/// Replaces `out` with the record behind `stub`; `page` names the data page for errors.
pub fn read(txn: &impl PageRead, stub: &[u8], out: &mut Vec<u8>, structure: &str, page: u64) -> Result<()> {
    blob::read_to_vec(txn, decode(stub, structure, page)?, out)
}

/// Frees the pages behind `stub`.
pub fn free(txn: &WriteTxn<'_>, stub: &[u8], structure: &str, page: u64) -> Result<()> {
    blob::free(txn, decode(stub, structure, page)?)
}

/// Checks the blob behind `stub`: its problems, and its pages appended to `pages`.
pub fn check(
    txn: &impl PageRead,
    stub: &[u8],
    structure: &str,
    page: u64,
    pages: &mut Vec<u64>,
) -> Result<Vec<String>> {
    blob::check(txn, decode(stub, structure, page)?, pages)
}
