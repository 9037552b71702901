//! Reading: [`Queue::get`](crate::queue::Queue::get) by [`RecordId`] (one data page, plus the head page to know
//! whether the record was consumed), [`Queue::for_each`](crate::queue::Queue::for_each) — the fast forward scan, a
//! tight loop per page (`chunks_exact` in fixed mode) — and [`Cursor`], a pull-style
//! forward scan. Both scans start at the head or at any live record and follow the
//! `next` links (pages in logical order); the cursor pins one page at a time,
//! `for_each` copies each page after the first past the pool, reading ahead.
//!
//! A scan inside a write transaction must not overlap a write to the same queue
//! (a pinned page cannot be locked for writing).

use super::overflow;
use super::page::{DATA, DataHeader, HeadState, Slots, corrupted};
use super::{Core, RecordId};
use crate::error::{Error, Result};
use quiredb_engine::{PageId, PageRead, PageRef};
use std::ops::ControlFlow;

/// Pages [`Core::for_each`] asks to read ahead of the one it visits: the engine's
/// longest run (32 pages, 256 KiB of 8 KiB pages) and a hint for the next four.
const SCAN_AHEAD: usize = 159;

/// Where a scan starts: a data page, its header and the first slot to return.
struct Start<'t> {
    page: PageRef<'t>,
    header: DataHeader,
    slot: usize,
}

/// Repeated reads by [`RecordId`] in one snapshot ([`Queue::lookup`](super::Queue::lookup)): the head state
/// is read once and the last data page stays pinned, so records read in append order
/// (an index scanned in key order over records loaded in that order) pin each page
/// once, and a record on one page is handed out in place, not copied.
///
/// While a `Lookup` lives, a page of its queue stays pinned: inside a write
/// transaction, do not write to the queue before dropping it.
pub struct Lookup<'q, 't, T: PageRead> {
    queue: &'q Core,
    txn: &'t T,
    state: HeadState,
    slots: Slots,
    page: Option<Start<'t>>,
    /// A record spread over overflow pages, gathered.
    spread: Vec<u8>,
}

impl<'t, T: PageRead> Lookup<'_, 't, T> {
    /// Record `id`, or `None` when it is not live in this queue (consumed, truncated,
    /// or never existed), as [`Queue::get`](crate::queue::Queue::get)(super::Queue::get) but borrowed.
    pub fn get(&mut self, id: RecordId) -> Result<Option<&[u8]>> {
        if id.seq < self.state.head_seq || id.seq >= self.state.next_seq {
            return Ok(None);
        }
        let held = self.page.as_ref().is_some_and(|at| at.page.id() == id.page);
        if !held {
            self.page = None; // unpinned before the next page is pinned
            self.page = self.queue.locate(self.txn, id)?;
        }
        let Some(at) = &self.page else { return Ok(None) };
        if id.seq < at.header.first_seq || id.seq >= at.header.end_seq() {
            return Ok(None);
        }
        let slot = (id.seq - at.header.first_seq) as usize;
        let (bytes, overflow) = record(&self.slots, (&at.page, at.page.id()), &at.header, slot, self.queue)?;
        if !overflow {
            return Ok(Some(bytes));
        }
        overflow::read(self.txn, bytes, &mut self.spread, &self.queue.name, at.page.id().0)?;
        Ok(Some(&self.spread))
    }
}

impl Core {
    /// A [`Lookup`] of this queue in `txn`.
    pub fn lookup<'q, 't, T: PageRead>(&'q self, txn: &'t T) -> Result<Lookup<'q, 't, T>> {
        let state = self.state(txn)?;
        Ok(Lookup { queue: self, txn, state, slots: Slots::new(txn.payload_size()), page: None, spread: Vec::new() })
    }

    /// Copies record `id` into `out` (replacing its contents); false when the record
    /// is not live in this queue (consumed, truncated, or never existed).
    pub fn get(&self, txn: &impl PageRead, id: RecordId, out: &mut Vec<u8>) -> Result<bool> {
        let state = self.state(txn)?;
        out.clear();
        if id.seq < state.head_seq || id.seq >= state.next_seq {
            return Ok(false);
        }
        let Some(start) = self.locate(txn, id)? else { return Ok(false) };
        let slots = Slots::new(txn.payload_size());
        let (bytes, overflow) = record(&slots, (&start.page, start.page.id()), &start.header, start.slot, self)?;
        if overflow {
            overflow::read(txn, bytes, out, &self.name, start.page.id().0)?;
        } else {
            out.extend_from_slice(bytes);
        }
        Ok(true)
    }

    /// Visits records in append order from the head (`from = None`) or from record
    /// `from` (an id already consumed starts at the head); `visit` returns
    /// `ControlFlow::Break(())` to stop. Returns how many records were visited.
    ///
    /// Pages after the first are visited with [`PageRead::visit_payload`], reading 159
    /// pages ahead: in a snapshot, a page the pool holds is visited in its frame, any
    /// other in the buffer the file was read into, in runs of 32 pages with the next
    /// four runs hinted to the OS; no page is copied and no pool frame is taken, so a
    /// queue larger than the pool evicts nothing.
    pub fn for_each(
        &self,
        txn: &impl PageRead,
        from: Option<RecordId>,
        mut visit: impl FnMut(RecordId, &[u8]) -> ControlFlow<()>,
    ) -> Result<u64> {
        let slots = Slots::new(txn.payload_size());
        let Some(at) = self.start(txn, from)? else { return Ok(0) };
        let mut buf = Vec::new();
        let first = Visit { page: &at.page, id: at.page.id(), header: &at.header, slot: at.slot };
        let (mut visited, mut flow) = visit_page(self, txn, &slots, &first, &mut buf, &mut visit)?;
        let (mut next, mut end_seq) = (at.header.next, at.header.end_seq());
        drop(at);
        while flow.is_continue() && next != 0 {
            let id = PageId(next);
            let mut outcome = None;
            txn.visit_payload(id, super::DATA_PAGE, SCAN_AHEAD, &mut |page| {
                let visited = self.next_header(page, id, end_seq, &slots).and_then(|header| {
                    let at = Visit { page, id, header: &header, slot: 0 };
                    visit_page(self, txn, &slots, &at, &mut buf, &mut visit).map(|done| (done, header))
                });
                outcome = Some(visited);
            })?;
            let ((done, page_flow), header) = outcome.expect("visit_payload calls the visitor when it succeeds")?;
            (visited, flow) = (visited + done, page_flow);
            (next, end_seq) = (header.next, header.end_seq());
        }
        Ok(visited)
    }

    /// A pull-style cursor from the head or from record `from` (see [`Queue::for_each`](crate::queue::Queue::for_each)).
    pub fn cursor<'q, 't, T: PageRead>(&'q self, txn: &'t T, from: Option<RecordId>) -> Result<Cursor<'q, 't, T>> {
        let start = self.start(txn, from)?;
        Ok(Cursor { txn, queue: self, slots: Slots::new(txn.payload_size()), at: start, buf: Vec::new() })
    }

    /// The data page, header and slot of live record `id`; `None` when the id does not
    /// name a record of this queue.
    fn locate<'t>(&self, txn: &'t impl PageRead, id: RecordId) -> Result<Option<Start<'t>>> {
        let page = match txn.page(id.page) {
            Ok(page) => page,
            Err(quiredb_engine::Error::UnmappedPage(_)) => return Ok(None),
            Err(error) => return Err(error.into()),
        };
        if page.kind() != super::DATA_PAGE {
            return Ok(None);
        }
        let header = DataHeader::decode(&page, Slots::new(txn.payload_size()).width, &self.name, id.page.0)?;
        if header.owner != self.root.0 || id.seq < header.first_seq || id.seq >= header.end_seq() {
            return Ok(None);
        }
        Ok(Some(Start { page, header, slot: (id.seq - header.first_seq) as usize }))
    }

    /// Where a scan from `from` starts; `None` when there is nothing to visit.
    fn start<'t>(&self, txn: &'t impl PageRead, from: Option<RecordId>) -> Result<Option<Start<'t>>> {
        let state = self.state(txn)?;
        let from = from.filter(|id| id.seq > state.head_seq);
        match from {
            Some(id) if id.seq >= state.next_seq => Ok(None),
            Some(id) => match self.locate(txn, id)? {
                Some(start) => Ok(Some(start)),
                None => Err(Error::InvalidRecordId { structure: self.name.clone(), seq: id.seq, page: id.page.0 }),
            },
            None if state.len() == 0 => Ok(None),
            None => self.head_start(txn, &state).map(Some),
        }
    }

    /// The first live record.
    fn head_start<'t>(&self, txn: &'t impl PageRead, state: &HeadState) -> Result<Start<'t>> {
        let mut start = self.data_page(txn, PageId(state.head_page), &Slots::new(txn.payload_size()))?;
        let header = start.header;
        if state.head_seq < header.first_seq || state.head_seq >= header.end_seq() {
            return Err(corrupted(&self.name, state.head_page, "head page does not hold the head record"));
        }
        start.slot = (state.head_seq - header.first_seq) as usize;
        Ok(start)
    }

    /// Pins data page `id` that follows a page ending at `end_seq`: sequence numbers
    /// must continue (which also rules out cycles: every page holds a record).
    fn next_page<'t>(&self, txn: &'t impl PageRead, id: PageId, end_seq: u64, slots: &Slots) -> Result<Start<'t>> {
        let start = self.data_page(txn, id, slots)?;
        self.check_continues(&start.header, id, end_seq)?;
        Ok(start)
    }

    /// The header of data page `id` (its payload `page`, its kind checked by the engine)
    /// that follows a page ending at `end_seq`, checked as [`Core::next_page`] checks it.
    fn next_header(&self, page: &[u8], id: PageId, end_seq: u64, slots: &Slots) -> Result<DataHeader> {
        let header = DataHeader::decode(page, slots.width, &self.name, id.0)?;
        if header.owner != self.root.0 {
            return Err(corrupted(&self.name, id.0, "chain reaches a page that is not one of this queue's data pages"));
        }
        self.check_continues(&header, id, end_seq)?;
        Ok(header)
    }

    /// Sequence numbers must continue from the previous page (which also rules out
    /// cycles: every page holds a record).
    fn check_continues(&self, header: &DataHeader, id: PageId, end_seq: u64) -> Result<()> {
        if header.first_seq != end_seq || header.count == 0 {
            return Err(corrupted(&self.name, id.0, "sequence numbers do not continue from the previous page"));
        }
        Ok(())
    }

    /// Pins data page `id`, checking kind and owner.
    fn data_page<'t>(&self, txn: &'t impl PageRead, id: PageId, slots: &Slots) -> Result<Start<'t>> {
        let page = txn.page(id)?;
        let header = DataHeader::decode(&page, slots.width, &self.name, id.0)?;
        if page.kind() != super::DATA_PAGE || header.owner != self.root.0 {
            return Err(corrupted(&self.name, id.0, "chain reaches a page that is not one of this queue's data pages"));
        }
        Ok(Start { page, header, slot: 0 })
    }
}

/// Record `slot` of a data page: its stored bytes and its overflow bit.
fn record<'p>(
    slots: &Slots,
    (page, id): (&'p [u8], PageId),
    header: &DataHeader,
    slot: usize,
    queue: &Core,
) -> Result<(&'p [u8], bool)> {
    if !header.is_variable() {
        let len = header.len_word as usize;
        return Ok((&page[DATA + slot * len..DATA + (slot + 1) * len], false));
    }
    let (start, end, overflow) = slots.record(page, header, slot, &queue.name, id.0)?;
    Ok((&page[start..end], overflow))
}

/// A data page being visited: its payload (pinned or copied), id and header, and the
/// first slot to visit.
struct Visit<'a> {
    page: &'a [u8],
    id: PageId,
    header: &'a DataHeader,
    slot: usize,
}

/// Visits the records of one page from `at.slot`; returns (visited, flow).
fn visit_page(
    queue: &Core,
    txn: &impl PageRead,
    slots: &Slots,
    at: &Visit<'_>,
    buf: &mut Vec<u8>,
    visit: &mut impl FnMut(RecordId, &[u8]) -> ControlFlow<()>,
) -> Result<(u64, ControlFlow<()>)> {
    let (header, page, id) = (at.header, at.page, at.id);
    let mut seq = header.first_seq.wrapping_add(at.slot as u64);
    let count = header.count as usize;
    if !header.is_variable() && header.len_word > 0 {
        let len = header.len_word as usize;
        for bytes in page[DATA + at.slot * len..DATA + count * len].chunks_exact(len) {
            let flow = visit(RecordId { seq, page: id }, bytes);
            seq = seq.wrapping_add(1);
            if flow.is_break() {
                return Ok((seq.wrapping_sub(header.first_seq).wrapping_sub(at.slot as u64), flow));
            }
        }
        return Ok(((count - at.slot) as u64, ControlFlow::Continue(())));
    }
    for slot in at.slot..count {
        let (bytes, overflow) = record(slots, (page, id), header, slot, queue)?;
        let bytes = if overflow {
            buf.clear();
            overflow::read(txn, bytes, buf, &queue.name, id.0)?;
            &buf[..]
        } else {
            bytes
        };
        if visit(RecordId { seq, page: id }, bytes).is_break() {
            return Ok(((slot - at.slot + 1) as u64, ControlFlow::Break(())));
        }
        seq = seq.wrapping_add(1);
    }
    Ok(((count - at.slot) as u64, ControlFlow::Continue(())))
}

/// A forward cursor over a queue (see [`Queue::cursor`](super::Queue::cursor)); pins one page at a time.
pub struct Cursor<'q, 't, T: PageRead> {
    txn: &'t T,
    queue: &'q Core,
    slots: Slots,
    at: Option<Start<'t>>,
    buf: Vec<u8>,
}

impl<T: PageRead> Cursor<'_, '_, T> {
    /// The next record, or `None` at the end of the queue.
    pub fn next_record(&mut self) -> Result<Option<(RecordId, &[u8])>> {
        loop {
            let Some(at) = &mut self.at else { return Ok(None) };
            if at.slot < at.header.count as usize {
                let slot = at.slot;
                at.slot += 1;
                let id = RecordId { seq: at.header.first_seq.wrapping_add(slot as u64), page: at.page.id() };
                let at = self.at.as_ref().expect("checked above");
                let (bytes, overflow) = record(&self.slots, (&at.page, at.page.id()), &at.header, slot, self.queue)?;
                if !overflow {
                    return Ok(Some((id, bytes)));
                }
                self.buf.clear();
                overflow::read(self.txn, bytes, &mut self.buf, &self.queue.name, id.page.0)?;
                return Ok(Some((id, &self.buf)));
            }
            let (next, end_seq) = (at.header.next, at.header.end_seq());
            self.at = None;
            if next != 0 {
                self.at = Some(self.queue.next_page(self.txn, PageId(next), end_seq, &self.slots)?);
            }
        }
    }
}
