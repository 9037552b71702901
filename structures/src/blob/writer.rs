//! Building and freeing blob trees (layout in `mod.rs`).
//!
//! [`write()`] streams: it holds two page-sized buffers and the list of data page ids
//! (8 bytes per 8 KiB of blob), never the blob itself. Data pages are written full as
//! the input arrives; the last chunk becomes the root's inline tail when it fits in
//! half a page, else a last (partly used) data page. Index levels are then built bottom
//! up until the remaining ids fit in the root beside the tail.
//!
//! The root page is allocated before the first data page, so that in a fresh region of
//! the file the pages lie in the order a read visits them (root, data 0, data 1, …):
//! a cold read then goes forward through the file and the kernel's readahead fetches
//! the data pages behind the root in one request. With the root last, T6's cold reads
//! of 10 KB blobs (4 KiB pages) took three storage reads per blob instead of two
//! (`examples/blob_probe.rs`).

use super::{BlobRef, ROOT_HEADER};
use crate::error::Result;
use quiredb_engine::{PageId, PageRead, WriteTxn};
use std::io::Read;

/// Writes the bytes of `data` (read to its end) as a new blob.
pub fn write(txn: &WriteTxn<'_>, data: &mut impl Read) -> Result<BlobRef> {
    let payload = txn.payload_size();
    let mut pending = vec![0u8; payload];
    let mut next = vec![0u8; payload];
    let mut pending_len = fill(data, &mut pending)?;
    let mut data_pages = Vec::new();
    let mut root = None;
    let mut total = 0u64;
    loop {
        let got = fill(data, &mut next)?;
        if got == 0 {
            break;
        }
        if root.is_none() {
            root = Some(txn.alloc_page(super::BLOB_PAGE)?.id());
        }
        data_pages.push(write_data_page(txn, &pending[..pending_len])?);
        total += pending_len as u64;
        std::mem::swap(&mut pending, &mut next);
        pending_len = got;
    }
    finish(txn, root, data_pages, &pending[..pending_len], total + pending_len as u64)
}

/// Writes `bytes` as a new blob.
pub fn write_bytes(txn: &WriteTxn<'_>, bytes: &[u8]) -> Result<BlobRef> {
    write(txn, &mut &bytes[..])
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn fill(data: &mut impl Read, buf: &mut [u8]) -> Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match data.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return Err(crate::error::Error::Input(error)),
        }
    }
    Ok(got)
}

/// Writes one data page, final at once: the engine may write it before the commit
/// (`WriteTxn::write_behind`), so a large blob goes to the device while it streams in.
fn write_data_page(txn: &WriteTxn<'_>, bytes: &[u8]) -> Result<u64> {
    let mut page = txn.alloc_page(super::BLOB_PAGE)?;
    page[..bytes.len()].copy_from_slice(bytes);
    let id = page.id();
    drop(page);
    txn.write_behind(id)?;
    Ok(id.0)
}

/// Places the tail, builds the index levels and writes the root (into `root` when the
/// blob has data pages: allocated before them, still zero-filled).
fn finish(txn: &WriteTxn<'_>, root: Option<PageId>, mut ids: Vec<u64>, tail: &[u8], len: u64) -> Result<BlobRef> {
    if len == 0 {
        return Ok(BlobRef { root: PageId(0), len: 0 });
    }
    let payload = txn.payload_size();
    let mut tail = tail;
    let fits_beside_ids = ROOT_HEADER + 8 * ids.len() + tail.len() <= payload;
    if !fits_beside_ids && tail.len() > payload / 2 {
        ids.push(write_data_page(txn, tail)?);
        tail = &[];
    }
    let mut height = u8::from(!ids.is_empty());
    let root_capacity = (payload - ROOT_HEADER - tail.len()) / 8;
    while ids.len() > root_capacity {
        ids = write_index_level(txn, &ids)?;
        height += 1;
    }
    let mut root = match root {
        Some(id) => txn.page_mut(id)?,
        None => txn.alloc_page(super::BLOB_PAGE)?,
    };
    root[0..8].copy_from_slice(&len.to_le_bytes());
    root[8..12].copy_from_slice(&(tail.len() as u32).to_le_bytes());
    root[12..14].copy_from_slice(&(ids.len() as u16).to_le_bytes());
    root[14] = height;
    for (slot, id) in ids.iter().enumerate() {
        root[ROOT_HEADER + 8 * slot..ROOT_HEADER + 8 * slot + 8].copy_from_slice(&id.to_le_bytes());
    }
    let at = ROOT_HEADER + 8 * ids.len();
    root[at..at + tail.len()].copy_from_slice(tail);
    let root = root.id();
    // A blob never changes once written: its root is final too, and written behind
    // with its data pages it keeps their runs of adjacent pages whole (T6's 10 KB
    // blobs: root, data, data, root, …; without it every run was cut at each root).
    txn.write_behind(root)?;
    Ok(BlobRef { root, len })
}

/// Groups `ids` into index pages of `P/8` ids; returns the index page ids.
fn write_index_level(txn: &WriteTxn<'_>, ids: &[u64]) -> Result<Vec<u64>> {
    let fanout = txn.payload_size() / 8;
    let mut level = Vec::with_capacity(ids.len().div_ceil(fanout));
    for group in ids.chunks(fanout) {
        let mut page = txn.alloc_page(super::BLOB_PAGE)?;
        for (slot, id) in group.iter().enumerate() {
            page[8 * slot..8 * slot + 8].copy_from_slice(&id.to_le_bytes());
        }
        let id = page.id();
        drop(page);
        txn.write_behind(id)?;
        level.push(id.0);
    }
    Ok(level)
}

/// Frees every page of `blob`. The reference must not be used afterwards.
pub fn free(txn: &WriteTxn<'_>, blob: BlobRef) -> Result<()> {
    if blob.len == 0 {
        return Ok(());
    }
    let root = super::reader::Root::load(txn, blob)?;
    for &child in &root.children {
        free_subtree(txn, child, root.height)?;
    }
    txn.free_page(blob.root)?;
    Ok(())
}

/// Frees the subtree of `id`, a page at `height` (1 = data page).
fn free_subtree(txn: &WriteTxn<'_>, id: u64, height: u8) -> Result<()> {
    if height > 1 {
        let children: Vec<u64> = {
            let page = txn.page(PageId(id))?;
            page.chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                .take_while(|&c| c != 0)
                .collect()
        };
        for child in children {
            free_subtree(txn, child, height - 1)?;
        }
    }
    txn.free_page(PageId(id))?;
    Ok(())
}
