//! Appending: [`Appender`] keeps the queue head page and the tail data page locked
//! for writing while it lives, so a run of appends in one write transaction touches
//! each page once (one `page_mut` or `alloc_page` per page) and a record costs one
//! copy plus, in variable mode, one slot store. The head page fields and the tail
//! page's header are written back when the tail page is closed or the appender is
//! dropped (or by [`Appender::finish`]); writing into a locked page cannot fail, so no
//! record is ever lost between the two. A record of the tail's fixed length takes a
//! short path (a bounds check and a copy). Pages are allocated without zeroing; the
//! bytes no record covers are zeroed once, when the appender lets the page go.
//!
//! Page filling rules (see the module docs of `queue`): a page starts in fixed mode
//! with the length of its first record; a record of another length converts it to
//! variable mode in place when the slot array fits, else the page is closed; a record
//! that does not fit starts a new page; records over `Slots::inline_max` go out of
//! line through `overflow.rs`.

use super::overflow;
use super::page::{DATA, DataHeader, FLAG_OVERFLOW, FLAG_VARIABLE, HeadState, MAX_COUNT, Slots};
use super::{Core, RecordId};
use crate::error::Result;
use quiredb_engine::{PageId, PageMut, PageRead, WriteTxn};

/// The tail page being filled, with its decoded header cached (written to the page
/// when the tail is let go: [`Tail::close`]).
struct Tail<'t> {
    page: PageMut<'t>,
    header: DataHeader,
    /// Allocated by this appender without zeroing: the bytes no record covers still
    /// hold what the pool frame held, until `close` zeroes them.
    fresh: bool,
    /// In fixed mode, records of `header.len_word` bytes the page holds in all.
    capacity: u32,
}

/// Appends records to one queue inside one write transaction ([`super::Queue::appender`]).
/// It borrows the queue's handle mutably, and a queue has one handle per write
/// transaction, so nothing else touches the queue's locked head and tail pages while
/// it lives.
pub struct Appender<'q, 't, 'db> {
    txn: &'t WriteTxn<'db>,
    queue: &'q mut Core,
    head: PageMut<'t>,
    state: HeadState,
    tail: Option<Tail<'t>>,
    slots: Slots,
}

impl Core {
    /// Starts appending (see [`Appender`]).
    pub(crate) fn appender<'q, 't, 'db>(&'q mut self, txn: &'t WriteTxn<'db>) -> Result<Appender<'q, 't, 'db>> {
        let state = self.state(txn)?;
        let head = txn.page_mut(self.root)?;
        let slots = Slots::new(txn.payload_size());
        Ok(Appender { txn, queue: self, head, state, tail: None, slots })
    }
}

impl Appender<'_, '_, '_> {
    /// Appends `record` and returns its id.
    #[inline]
    pub fn append(&mut self, record: &[u8]) -> Result<RecordId> {
        if let Some(tail) = &mut self.tail
            && tail.push_fixed(record)
        {
            let id = RecordId { seq: self.state.next_seq, page: tail.page.id() };
            self.state.next_seq += 1;
            return Ok(id);
        }
        if record.len() > self.slots.inline_max() {
            let stub = overflow::write(self.txn, record)?;
            return self.place(&stub, true);
        }
        self.place(record, false)
    }

    /// Writes the head page fields back and ends the appender (dropping does the same).
    pub fn finish(self) {}

    /// Puts `bytes` (a record or an overflow reference) into the tail page.
    fn place(&mut self, bytes: &[u8], overflow: bool) -> Result<RecordId> {
        if self.tail.is_none() && self.state.tail_page != 0 {
            self.load_tail()?;
        }
        let fits = match &mut self.tail {
            Some(tail) => fit(&self.slots, tail, bytes.len(), overflow),
            None => false,
        };
        if !fits {
            self.new_tail()?;
        }
        let tail = self.tail.as_mut().expect("a tail page exists after new_tail");
        if !fits {
            let room = fit(&self.slots, tail, bytes.len(), overflow);
            assert!(room, "a record of at most inline_max bytes fits an empty page");
        }
        let slot = tail.header.count as usize;
        if tail.header.is_variable() {
            let start = DATA + tail.header.len_word as usize;
            tail.page[start..start + bytes.len()].copy_from_slice(bytes);
            tail.header.len_word += bytes.len() as u32;
            self.slots.set(&mut tail.page, slot, tail.header.len_word as usize, overflow);
            if overflow {
                tail.header.flags |= FLAG_OVERFLOW;
            }
        } else {
            let start = DATA + slot * bytes.len();
            tail.page[start..start + bytes.len()].copy_from_slice(bytes);
        }
        tail.header.count += 1;
        let id = RecordId { seq: self.state.next_seq, page: tail.page.id() };
        self.state.next_seq += 1;
        Ok(id)
    }

    /// Locks the existing tail page for writing.
    fn load_tail(&mut self) -> Result<()> {
        let page = self.txn.page_mut(PageId(self.state.tail_page))?;
        let header = DataHeader::decode(&page, self.slots.width, &self.queue.name, self.state.tail_page)?;
        self.tail = Some(Tail::new(page, header, false, &self.slots));
        Ok(())
    }

    /// Allocates a new tail page after the current one, closing that one.
    fn new_tail(&mut self) -> Result<()> {
        let page = self.txn.alloc_page_for_overwrite(super::DATA_PAGE)?;
        let header = DataHeader::new(self.state.next_seq, self.queue.root.0);
        let id = page.id().0;
        match self.tail.take() {
            Some(mut old) => {
                old.header.next = id;
                let full = old.page.id();
                old.close(&self.slots);
                // A full page is final: appends go to the new tail from here on.
                self.txn.write_behind(full)?;
            }
            None => self.state.head_page = id,
        }
        self.state.tail_page = id;
        self.state.data_pages += 1;
        self.tail = Some(Tail::new(page, header, true, &self.slots));
        Ok(())
    }
}

impl Drop for Appender<'_, '_, '_> {
    fn drop(&mut self) {
        if let Some(tail) = self.tail.take() {
            tail.close(&self.slots);
        }
        self.state.encode(&mut self.head);
    }
}

impl<'t> Tail<'t> {
    fn new(page: PageMut<'t>, header: DataHeader, fresh: bool, slots: &Slots) -> Self {
        let mut tail = Tail { page, header, fresh, capacity: 0 };
        tail.set_capacity(slots);
        tail
    }

    /// Recomputes [`Tail::capacity`] after the header's mode or length changed.
    fn set_capacity(&mut self, slots: &Slots) {
        let len = self.header.len_word as usize;
        self.capacity = match (self.header.is_variable(), len) {
            (true, _) => 0,
            (false, 0) => MAX_COUNT,
            (false, len) => ((slots.payload - DATA) / len).min(MAX_COUNT as usize) as u32,
        };
    }

    /// The short path: appends `record` if the page is in fixed mode with records of
    /// its length, has records already (so the length is set) and has room.
    #[inline]
    fn push_fixed(&mut self, record: &[u8]) -> bool {
        let header = &mut self.header;
        let len = header.len_word as usize;
        if header.is_variable() || header.count == 0 || record.len() != len || header.count >= self.capacity {
            return false;
        }
        let start = DATA + header.count as usize * len;
        self.page[start..start + len].copy_from_slice(record);
        header.count += 1;
        true
    }

    /// Writes the header into the page and, for a page allocated without zeroing,
    /// zeroes the bytes no record or slot covers.
    fn close(mut self, slots: &Slots) {
        self.header.encode(&mut self.page);
        if self.fresh {
            let count = self.header.count as usize;
            let (used, slot_bytes) = if self.header.is_variable() {
                (self.header.len_word as usize, count * slots.width)
            } else {
                (count * self.header.len_word as usize, 0)
            };
            self.page[DATA + used..slots.payload - slot_bytes].fill(0);
        }
    }
}

/// Makes room for a record of `len` bytes in `tail` (converting a fixed page to
/// variable mode if needed); false when it does not fit.
fn fit(slots: &Slots, tail: &mut Tail<'_>, len: usize, overflow: bool) -> bool {
    let header = &mut tail.header;
    let room = slots.payload - DATA;
    if header.count >= MAX_COUNT {
        return false;
    }
    let count = header.count as usize;
    if !header.is_variable() {
        if count == 0 && !overflow {
            header.len_word = len as u32;
            tail.set_capacity(slots);
            return true; // an inline record always fits an empty page
        }
        if !overflow && len == header.len_word as usize {
            return (count + 1) * len <= room;
        }
        let used = count * header.len_word as usize;
        if used + len + (count + 1) * slots.width > room {
            return false;
        }
        to_variable(slots, tail);
        return true;
    }
    header.len_word as usize + len + (count + 1) * slots.width <= room
}

/// Converts a fixed-mode page to variable mode: writes a slot per record.
fn to_variable(slots: &Slots, tail: &mut Tail<'_>) {
    let header = &mut tail.header;
    let len = header.len_word as usize;
    for slot in 0..header.count as usize {
        slots.set(&mut tail.page, slot, (slot + 1) * len, false);
    }
    header.len_word = (header.count as usize * len) as u32;
    header.flags |= FLAG_VARIABLE;
    tail.set_capacity(slots);
}
