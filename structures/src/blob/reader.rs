//! Reading blobs: [`read_at`] (positional, `height` page reads per data page),
//! [`BlobReader`] (`Read + Seek` over `read_at`), [`len`] and the checker [`check`].

use super::{BLOB_PAGE, BlobRef, ROOT_HEADER};
use crate::error::{Error, Result};
use quiredb_engine::{PageId, PageRead};
use std::io::{self, Read, Seek, SeekFrom};

/// The decoded header of a root page.
pub(crate) struct Root {
    pub len: u64,
    pub tail_len: usize,
    pub height: u8,
    pub children: Vec<u64>,
}

fn corrupted(page: u64, reason: impl Into<String>) -> Error {
    Error::Corrupted { structure: "blob".to_owned(), page, reason: reason.into() }
}

fn id_at(page: &[u8], slot: usize) -> u64 {
    u64::from_le_bytes(page[8 * slot..8 * slot + 8].try_into().expect("8 bytes"))
}

/// Header fields of a root, validated against the reference.
struct Header {
    tail_len: usize,
    count: usize,
    height: u8,
}

/// Decodes and validates the root header `fields` (its first [`ROOT_HEADER`] bytes) of
/// a root page with `payload` bytes of payload.
fn header(fields: &[u8], payload: usize, blob: BlobRef) -> Result<Header> {
    let len = u64::from_le_bytes(fields[0..8].try_into().expect("8 bytes"));
    let tail_len = u32::from_le_bytes(fields[8..12].try_into().expect("4 bytes")) as usize;
    let count = u16::from_le_bytes(fields[12..14].try_into().expect("2 bytes")) as usize;
    let height = fields[14];
    if len != blob.len {
        return Err(corrupted(blob.root.0, format!("root says {len} bytes, reference says {}", blob.len)));
    }
    if ROOT_HEADER + 8 * count + tail_len > payload
        || tail_len as u64 > len
        || (height == 0) != (count == 0)
        || !covers(payload, count, height, len - tail_len as u64)
    {
        return Err(corrupted(
            blob.root.0,
            format!("bad root header: {count} children, tail {tail_len}, height {height} for {len} bytes"),
        ));
    }
    Ok(Header { tail_len, count, height })
}

/// Whether `count` children at `height` can hold `tree_len` bytes (each data page
/// `payload` bytes, each index page `payload / 8` children).
fn covers(payload: usize, count: usize, height: u8, tree_len: u64) -> bool {
    if height == 0 {
        return tree_len == 0;
    }
    let fanout = (payload / 8) as u64;
    fanout
        .checked_pow(u32::from(height) - 1)
        .and_then(|span| span.checked_mul(count as u64))
        .and_then(|pages| pages.checked_mul(payload as u64))
        .is_none_or(|capacity| tree_len <= capacity)
}

impl Root {
    pub(crate) fn load(txn: &impl PageRead, blob: BlobRef) -> Result<Root> {
        let page = txn.page(blob.root)?;
        let head = header(&page[..ROOT_HEADER], page.len(), blob)?;
        let children = (0..head.count).map(|slot| id_at(&page[ROOT_HEADER..], slot)).collect();
        Ok(Root { len: blob.len, tail_len: head.tail_len, height: head.height, children })
    }
}

/// Length of `blob`, verified against its root page.
pub fn len(txn: &impl PageRead, blob: BlobRef) -> Result<u64> {
    if blob.len > 0 {
        let page = txn.page(blob.root)?;
        header(&page[..ROOT_HEADER], page.len(), blob)?;
    }
    Ok(blob.len)
}

/// Copies blob bytes from `offset` into `buf`; returns how many (0 at or past the end).
///
/// Pages go through [`PageRead::read_payloads`]: in a snapshot, pages not in the pool
/// are read past it, and the root's read brings the data pages the writer put behind
/// it, so an uncached blob costs one storage read and evicts nothing.
pub fn read_at(txn: &impl PageRead, blob: BlobRef, offset: u64, buf: &mut [u8]) -> Result<usize> {
    if offset >= blob.len || buf.is_empty() {
        return Ok(0);
    }
    let want = buf.len().min((blob.len - offset) as usize);
    let payload = txn.payload_size();
    // The data pages the blob has unless its last one is partly used (not the tail).
    let data_pages = (blob.len / payload as u64).min(CHUNK_PAGES as u64) as usize;
    let mut fields = [0u8; ROOT_HEADER];
    txn.read_payloads(&[blob.root], BLOB_PAGE, 0, data_pages, &mut fields)?;
    let head = header(&fields, payload, blob)?;
    let tree_len = blob.len - head.tail_len as u64;
    let mut done = 0;
    if offset < tree_len {
        done = (want as u64).min(tree_len - offset) as usize;
        read_tree(txn, &head, blob, offset, &mut buf[..done])?;
    }
    if done < want {
        let start = ROOT_HEADER + 8 * head.count + (offset + done as u64 - tree_len) as usize;
        txn.read_payloads(&[blob.root], BLOB_PAGE, start, 0, &mut buf[done..want])?;
    }
    Ok(want)
}

/// Data page ids looked up (and copied from) at a time.
const CHUNK_PAGES: usize = 64;

/// Copies the blob bytes `offset..offset + out.len()`, all held by data pages (none
/// in the root's tail), a chunk of pages at a time.
fn read_tree(txn: &impl PageRead, head: &Header, blob: BlobRef, offset: u64, out: &mut [u8]) -> Result<()> {
    let payload = txn.payload_size();
    let mut done = 0;
    while done < out.len() {
        let at = offset + done as u64;
        let within = (at % payload as u64) as usize;
        let pages = (within + out.len() - done).div_ceil(payload).min(CHUNK_PAGES);
        let ids = data_ids(txn, head, blob, at / payload as u64, pages)?;
        let take = (pages * payload - within).min(out.len() - done);
        let ahead = (out.len() - done - take).div_ceil(payload);
        txn.read_payloads(&ids, BLOB_PAGE, within, ahead, &mut out[done..done + take])?;
        done += take;
    }
    Ok(())
}

/// The ids of data pages `first..first + count`, found from the root's children (and
/// the index pages under them, for a tree of height > 1).
fn data_ids(txn: &impl PageRead, head: &Header, blob: BlobRef, first: u64, count: usize) -> Result<Vec<PageId>> {
    let fanout = (txn.payload_size() / 8) as u64;
    let span =
        fanout.checked_pow(u32::from(head.height) - 1).ok_or_else(|| corrupted(blob.root.0, "height too large"))?;
    let last = first + count as u64 - 1;
    let (low, high) = ((first / span) as usize, (last / span) as usize);
    if high >= head.count {
        return Err(corrupted(blob.root.0, format!("data page {last} is beyond the root's {} children", head.count)));
    }
    let mut slots = vec![0u8; 8 * (high + 1 - low)];
    txn.read_payloads(&[blob.root], BLOB_PAGE, ROOT_HEADER + 8 * low, 0, &mut slots)?;
    (first..=last)
        .map(|index| {
            let child = id_at(&slots, (index / span) as usize - low);
            descend(txn, child, index % span, span, head.height)
        })
        .collect()
}

/// The data page `rest` pages into the subtree of root child `id`, which spans `span`
/// data pages at `height` (1: `id` is the data page).
fn descend(txn: &impl PageRead, mut id: u64, mut rest: u64, mut span: u64, height: u8) -> Result<PageId> {
    let fanout = (txn.payload_size() / 8) as u64;
    for _ in 1..height {
        let page = txn.page(PageId(id))?;
        span /= fanout;
        let child = id_at(&page, (rest / span) as usize);
        if child == 0 {
            return Err(corrupted(id, "index page lacks the child of a data page"));
        }
        rest %= span;
        id = child;
    }
    Ok(PageId(id))
}

/// Longest blob [`read_to_vec`] allocates for on the word of its reference and root.
const TRUSTED_LEN: u64 = 64 << 20;

/// The whole blob as a vector. A blob over `TRUSTED_LEN` is checked first (its
/// index pages: O(len / P²) page reads), so that a corrupt tree naming one data page
/// many times cannot make it allocate more than the file holds.
pub fn read_to_vec(txn: &impl PageRead, blob: BlobRef, out: &mut Vec<u8>) -> Result<()> {
    out.clear();
    if blob.len > TRUSTED_LEN {
        let mut pages = Vec::new();
        let problems = check(txn, blob, &mut pages)?;
        let distinct: std::collections::HashSet<u64> = pages.iter().copied().collect();
        if let Some(problem) = problems.first() {
            return Err(corrupted(blob.root.0, problem.clone()));
        }
        if distinct.len() != pages.len() {
            return Err(corrupted(blob.root.0, "a page of the blob is reachable more than once"));
        }
    }
    let len = usize::try_from(blob.len).map_err(|_| corrupted(blob.root.0, "blob larger than memory"))?;
    out.resize(len, 0);
    read_at(txn, blob, 0, out)?;
    Ok(())
}

/// A streaming reader over a blob (`Read + Seek`).
pub struct BlobReader<'t, T: PageRead> {
    txn: &'t T,
    blob: BlobRef,
    position: u64,
}

/// A reader positioned at the start of `blob`.
pub fn reader<T: PageRead>(txn: &T, blob: BlobRef) -> BlobReader<'_, T> {
    BlobReader { txn, blob, position: 0 }
}

impl<T: PageRead> Read for BlobReader<'_, T> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let got = read_at(self.txn, self.blob, self.position, buf).map_err(io::Error::other)?;
        self.position += got as u64;
        Ok(got)
    }
}

impl<T: PageRead> Seek for BlobReader<'_, T> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(at) => Some(at),
            SeekFrom::End(delta) => self.blob.len.checked_add_signed(delta),
            SeekFrom::Current(delta) => self.position.checked_add_signed(delta),
        };
        let target = target.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start"))?;
        self.position = target;
        Ok(target)
    }
}

/// Checks the invariants of `blob` (module docs); appends every page id it owns to
/// `pages` and returns the problems found.
pub fn check(txn: &impl PageRead, blob: BlobRef, pages: &mut Vec<u64>) -> Result<Vec<String>> {
    if blob.len == 0 {
        return Ok(Vec::new());
    }
    let mut problems = Vec::new();
    let root = match Root::load(txn, blob) {
        Ok(root) => root,
        Err(Error::Corrupted { reason, .. }) => {
            return Ok(vec![format!("blob root {}: {reason}", blob.root.0)]);
        }
        Err(error) => return Err(error),
    };
    pages.push(blob.root.0);
    let payload = txn.payload_size() as u64;
    let tree_len = root.len - root.tail_len as u64;
    let data_pages = tree_len.div_ceil(payload);
    let mut walk = Walk { pages, seen: std::collections::HashSet::new(), leaves: 0, limit: data_pages };
    for &child in &root.children {
        count_subtree(txn, child, root.height, &mut walk)?;
    }
    let leaves = walk.leaves;
    if leaves != data_pages {
        problems.push(format!("blob root {}: {leaves} data pages for {tree_len} bytes", blob.root.0));
    }
    Ok(problems)
}

/// The state of [`check`]'s walk.
struct Walk<'p> {
    pages: &'p mut Vec<u64>,
    /// Index pages entered: one named twice is recorded, not entered again.
    seen: std::collections::HashSet<u64>,
    leaves: u64,
    /// Data pages the length needs: the walk stops counting past it.
    limit: u64,
}

/// Counts the data pages under page `id` of `height`, recording every page. Each
/// index page is entered once and the walk stops past the data pages the length
/// needs, so a corrupt tree (cycles, shared subtrees, a height of 255) costs at most
/// the pages it really has.
fn count_subtree(txn: &impl PageRead, id: u64, height: u8, walk: &mut Walk<'_>) -> Result<()> {
    walk.pages.push(id);
    if height <= 1 {
        walk.leaves += 1;
        return Ok(());
    }
    if !walk.seen.insert(id) || walk.leaves > walk.limit {
        return Ok(());
    }
    let children: Vec<u64> = {
        let page = txn.page(PageId(id))?;
        (0..page.len() / 8).map(|slot| id_at(&page, slot)).take_while(|&c| c != 0).collect()
    };
    for child in children {
        count_subtree(txn, child, height - 1, walk)?;
        if walk.leaves > walk.limit {
            break;
        }
    }
    Ok(())
}
