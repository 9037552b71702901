//! Reads that bypass the buffer pool: a snapshot's [`read_payloads`](super::PageRead::read_payloads)
//! (copies) and [`visit_payload`](super::PageRead::visit_payload) (no copy: the caller's
//! closure sees the page where it lies). A page in the pool is served from its frame,
//! pinned; a page that is not is served from a run of consecutive physical pages read
//! from the file with one `pread` into a per-thread buffer — the pages asked for plus a
//! read-ahead the caller names; read-ahead beyond one run is passed to the OS as a hint
//! (`will_need`), so a scan's next run is on its way while this one is visited. With
//! the file's memory map (`mmap_reads`, the default) a page the pool does not hold is
//! visited in place in the map instead, checksummed the first time, with the pages
//! ahead hinted the same way — when the OS has it: a read that goes on for a run or more
//! (a scan, a large blob) asks once a run whether the run is in the page cache, and
//! reads a run that is not with the run's `pread`, as it does when the map cannot
//! serve. No frame is taken, so reading a blob or scanning a queue larger than the pool
//! evicts nothing, and a blob whose root and data pages lie together costs one read.
//!
//! Invariants:
//! - a page is verified in the run buffer as a pool load verifies it (checksum, logical
//!   id, not newer than the snapshot: `page::verify_expect`) before a byte of it is
//!   copied or visited; pages read ahead are verified only when asked for, so garbage behind the
//!   last page of a structure is never an error unless someone reads it;
//! - the run buffer is tagged with the snapshot it was read for ([`SnapshotToken`]:
//!   equal tokens mean equal, unchanging contents), so another snapshot never sees it;
//!   while a visitor runs, the buffer is out of its thread-local slot, so a read the
//!   visitor makes uses a buffer of its own;
//! - an I/O error is an error and poisons the handle, as for a pool load (`read_raw`).
//!
//! Read next: `read.rs` (the snapshot that calls this).

use super::SnapshotToken;
use crate::core::{Core, SnapshotMap};
use crate::error::{Error, Result};
use crate::meta::{META_PAGES, Meta};
use crate::page::{self, HEADER_SIZE, PageId, PageKind, PhysId};
use std::cell::RefCell;

/// Most pages one read fetches (at most 64, one bit each in [`Run::verified`]).
const MAX_RUN_PAGES: usize = 32;
const _: () = assert!(MAX_RUN_PAGES <= 64);
/// Most pages beyond a run hinted to the OS (four runs: a scan keeps that much I/O in
/// flight while it visits the run it holds).
const MAX_HINT_PAGES: usize = 4 * MAX_RUN_PAGES;

/// The last run of pages read for a snapshot on this thread.
#[derive(Default)]
struct Run {
    /// The snapshot the pages were read for; `None`: the buffer holds nothing.
    token: Option<SnapshotToken>,
    /// Physical id of the first page.
    first: u64,
    /// Pages held.
    count: usize,
    /// Bit `i`: page `first + i` passed `verify_expect`.
    verified: u64,
    /// Physical page after the last one hinted to the OS for this snapshot (a scan's
    /// next run hints only what the previous runs did not).
    hinted_end: u64,
    /// `count` whole pages, headers included (grown to the largest run, then reused).
    bytes: Vec<u8>,
    /// Physical pages last asked about in the OS page cache for this snapshot
    /// ([`run_resident`]), and whether all of them were in it.
    asked: std::ops::Range<u64>,
    resident: bool,
}

impl Run {
    /// Tags the (emptied) run for snapshot `token` if it holds another's, keeping its buffer.
    fn retag(&mut self, token: SnapshotToken) {
        if self.token != Some(token) {
            *self = Run { token: Some(token), bytes: std::mem::take(&mut self.bytes), ..Run::default() };
        }
    }
}

thread_local! {
    static RUN: RefCell<Run> = RefCell::new(Run::default());
}

/// The snapshot a direct read is for: its meta, its token, and its memory map of the
/// file (taken at its first read in place, `core.rs`).
pub(super) struct Snap<'a> {
    pub meta: &'a Meta,
    pub token: SnapshotToken,
    pub map: &'a SnapshotMap,
}

/// What [`read_payloads`] reads: pages `ids` of `kind`, the bytes `skip..skip +
/// out.len()` of their payloads laid end to end, and `ahead` pages to read beyond the last.
pub(super) struct Request<'a> {
    pub ids: &'a [PageId],
    pub kind: PageKind,
    pub skip: usize,
    pub ahead: usize,
}

/// See the module docs. Panics if the byte range reaches past the pages (a caller's bug).
pub(super) fn read_payloads(core: &Core, snap: &Snap<'_>, request: &Request<'_>, out: &mut [u8]) -> Result<()> {
    let payload = core.page_size - HEADER_SIZE;
    assert!(request.skip + out.len() <= request.ids.len() * payload, "read past the pages given");
    let (mut done, mut index, mut within) = (0, request.skip / payload, request.skip % payload);
    while done < out.len() {
        let take = (out.len() - done).min(payload - within);
        let page = locate(core, snap.meta, request.ids[index], request.kind)?;
        let wanted = request.ids.len() - index + request.ahead;
        let target = &mut out[done..done + take];
        let start = HEADER_SIZE + within;
        with_page(core, snap, &page, wanted, &mut |bytes| target.copy_from_slice(&bytes[start..start + take]))?;
        (done, index, within) = (done + take, index + 1, 0);
    }
    Ok(())
}

/// Calls `visit` with the payload of page `id` of `kind`, verified, where it lies: in
/// its pool frame (pinned while `visit` runs) or in this thread's run buffer (read with
/// `ahead` pages behind it, as [`read_payloads`] reads) — no copy.
pub(super) fn visit_payload(
    core: &Core,
    snap: &Snap<'_>,
    (id, kind): (PageId, PageKind),
    ahead: usize,
    visit: &mut dyn FnMut(&[u8]),
) -> Result<()> {
    let page = locate(core, snap.meta, id, kind)?;
    with_page(core, snap, &page, 1 + ahead, &mut |bytes| visit(&bytes[HEADER_SIZE..]))
}

/// One page of a request: where it is, what it is.
struct Page {
    phys: PhysId,
    id: PageId,
    kind: PageKind,
}

/// Where logical page `id` of `kind` lies in the snapshot of `meta`.
fn locate(core: &Core, meta: &Meta, id: PageId, kind: PageKind) -> Result<Page> {
    let phys = core.translate(meta, id)?.ok_or(Error::UnmappedPage(id.0))?;
    if phys.0 < META_PAGES {
        return Err(Error::corrupted(phys, format!("reference to meta page {phys} from logical {}", id.0)));
    }
    Ok(Page { phys, id, kind })
}

/// Calls `visit` with the whole verified page (header included): from this thread's run
/// buffer if it holds the page (a scan's next page), else from its pool frame, else from
/// a run of up to `wanted` pages read into the buffer. The buffer is taken out of the
/// thread-local while `visit` runs, so a visitor may read pages itself (an overflow
/// record's blob, a nested scan): such a read fills a buffer of its own, and this one is
/// put back afterwards.
fn with_page(core: &Core, snap: &Snap<'_>, page: &Page, wanted: usize, visit: &mut dyn FnMut(&[u8])) -> Result<()> {
    let mut run = RUN.take();
    let result = visit_held(core, snap, page, wanted, &mut run, visit);
    RUN.set(run);
    result
}

/// [`with_page`] with the run buffer in hand.
fn visit_held(
    core: &Core,
    snap: &Snap<'_>,
    page: &Page,
    wanted: usize,
    run: &mut Run,
    visit: &mut dyn FnMut(&[u8]),
) -> Result<()> {
    let token = snap.token;
    let held = run.token == Some(token) && page.phys.0 >= run.first && page.phys.0 < run.first + run.count as u64;
    if !held {
        if visit_cached(core, page, visit)? || visit_mapped(core, snap, page, wanted, run, visit)? {
            return Ok(());
        }
        fill(core, snap.meta, token, page.phys, wanted, run)?;
    }
    let slot = verify_in_run(core, snap.meta, page, run)?;
    visit(&run.bytes[slot * core.page_size..(slot + 1) * core.page_size]);
    Ok(())
}

/// Visits the pool's frame of the page, pinned, if it has one; false if not.
fn visit_cached(core: &Core, &Page { phys, id, kind }: &Page, visit: &mut dyn FnMut(&[u8])) -> Result<bool> {
    let hinted = core.translations.frame_hint(id).and_then(|frame| core.pool.lookup_frame(frame, phys));
    let guard = match hinted {
        Some(guard) => guard,
        None => match core.pool.lookup(phys) {
            Some((guard, frame)) => {
                core.translations.remember_frame(id, frame);
                guard
            }
            None => return Ok(false),
        },
    };
    page::verify_identity(&guard.bytes, phys, Some(kind), id.0)?;
    visit(&guard.bytes);
    Ok(true)
}

/// Visits the page in place in the snapshot's memory map of the file
/// ([`crate::Options::mmap_reads`]), checksummed the first time as `read.rs` does
/// (`pool::Verified`), after hinting to the OS the pages `wanted` reaches that this
/// snapshot has not hinted; false without a map, or when the map faulted (the run's
/// `pread` then reports the error; the core maps the file afresh for later snapshots).
fn visit_mapped(
    core: &Core,
    snap: &Snap<'_>,
    &Page { phys, id, kind }: &Page,
    wanted: usize,
    run: &mut Run,
    visit: &mut dyn FnMut(&[u8]),
) -> Result<bool> {
    let Some(map) = snap.map.get(core, snap.meta) else { return Ok(false) };
    let page_size = core.page_size;
    let start = phys.0 as usize * page_size;
    if wanted >= MAX_RUN_PAGES && !run_resident(map, snap.token, phys.0, page_size, run) {
        return Ok(false); // the run's `pread` reads it
    }
    hint_ahead(core, snap.token, phys.0, wanted, run);
    let Some(bytes) = map.page(start..start + page_size) else { return Ok(false) };
    core.verify_mapped(bytes, phys, Some(kind), id.0, snap.meta.txn)?;
    visit(bytes);
    Ok(true)
}

/// For a read that goes on for a run or more: whether the run of [`MAX_RUN_PAGES`] pages
/// from `phys` is in the OS page cache: asked of the map once a run
/// ([`FileMap::resident`]), the answer kept in `run` for the run's other pages. A run
/// that is not is read with one `pread`, whose copy the kernel's read-ahead keeps fed:
/// touching freshly read pages through the map cost T3's cold scan of 5.9 GB 5.7 s of
/// CPU against 3.7–4.4 s this way (reports/READ-PATH.md, "A cold scan reads what the page
/// cache lacks with `pread`"). A shorter read (a small blob) does not ask: the system
/// call cost T6's warm blob reads a quarter of their rate.
///
/// [`FileMap::resident`]: crate::storage::FileMap::resident
fn run_resident(
    map: &crate::storage::FileMap,
    token: SnapshotToken,
    phys: u64,
    page_size: usize,
    run: &mut Run,
) -> bool {
    if run.token != Some(token) || !run.asked.contains(&phys) {
        let start = phys as usize * page_size;
        let resident = map.resident(start..start + MAX_RUN_PAGES * page_size);
        run.retag(token);
        (run.asked, run.resident) = (phys..phys + MAX_RUN_PAGES as u64, resident);
    }
    run.resident
}

/// Hints to the OS the pages from `phys` that `wanted` reaches (at most
/// [`MAX_HINT_PAGES`]) once fewer than a run of them is left hinted for `token`; `run`
/// keeps where the hints end (and holds no pages after it is retagged).
fn hint_ahead(core: &Core, token: SnapshotToken, phys: u64, wanted: usize, run: &mut Run) {
    let hinted_end = if run.token == Some(token) { run.hinted_end } else { 0 };
    if wanted <= 1 || hinted_end >= phys + wanted.min(MAX_RUN_PAGES) as u64 {
        return;
    }
    let (start, end) = (hinted_end.max(phys + 1), phys + wanted.min(MAX_HINT_PAGES) as u64);
    if start < end {
        let page_size = core.page_size as u64;
        core.storage.will_need(start * page_size, (end - start) * page_size);
    }
    run.retag(token);
    run.hinted_end = end.max(hinted_end);
}

/// Reads a run of up to `wanted` pages from `phys` into `run` for `token`, and hints to
/// the OS the pages after it that no earlier run of this snapshot hinted.
fn fill(core: &Core, meta: &Meta, token: SnapshotToken, phys: PhysId, wanted: usize, run: &mut Run) -> Result<()> {
    let page_size = core.page_size;
    let count = wanted.clamp(1, MAX_RUN_PAGES).min(meta.page_count.saturating_sub(phys.0).max(1) as usize);
    let hinted_end = if run.token == Some(token) { run.hinted_end } else { 0 };
    run.token = None;
    if run.bytes.len() < count * page_size {
        run.bytes.resize(count * page_size, 0);
    }
    core.read_raw(phys, &mut run.bytes[..count * page_size])?;
    let end = phys.0 + count as u64;
    let hint_end = end + (wanted - count).min(MAX_HINT_PAGES) as u64;
    let hint_start = if (end..hint_end).contains(&hinted_end) { hinted_end } else { end };
    if hint_start < hint_end {
        let bytes = (hint_end - hint_start) * page_size as u64;
        core.storage.will_need(hint_start * page_size as u64, bytes);
    }
    let bytes = std::mem::take(&mut run.bytes);
    // The pages past the run are asked about afresh (`run_resident`).
    *run = Run { token: Some(token), first: phys.0, count, hinted_end: hint_end.max(end), bytes, ..Run::default() };
    Ok(())
}

/// Verifies page `page` held in `run` (fully the first time, its identity after) and
/// returns its slot in the run.
fn verify_in_run(core: &Core, meta: &Meta, &Page { phys, id, kind }: &Page, run: &mut Run) -> Result<usize> {
    let page_size = core.page_size;
    let slot = (phys.0 - run.first) as usize;
    let bytes = &run.bytes[slot * page_size..(slot + 1) * page_size];
    if run.verified & (1 << slot) == 0 {
        page::verify_expect(bytes, phys, Some(kind), id.0, meta.txn)?;
        run.verified |= 1 << slot;
        core.pool.counters.miss();
    } else {
        page::verify_identity(bytes, phys, Some(kind), id.0)?;
    }
    Ok(slot)
}
