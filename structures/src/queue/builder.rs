//! Appending: [`Appender`] keeps the queue head page and the tail data page locked
//! for writing while it lives, so a run of appends in one write transaction touches
//! each page once (one `page_mut` or `alloc_page` per page) and a record costs one
//! copy plus, in variable mode, one slot store. The head page fields are written back
//! when the appender is dropped (or by [`Appender::finish`]); writing into a locked
//! page cannot fail, so no record is ever lost between the two.
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

/// The tail page being filled, with its decoded header cached.
struct Tail<'t> {
    page: PageMut<'t>,
    header: DataHeader,
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
    pub fn append(&mut self, record: &[u8]) -> Result<RecordId> {
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
        tail.header.encode(&mut tail.page);
        let id = RecordId { seq: self.state.next_seq, page: tail.page.id() };
        self.state.next_seq += 1;
        Ok(id)
    }

    /// Locks the existing tail page for writing.
    fn load_tail(&mut self) -> Result<()> {
        let page = self.txn.page_mut(PageId(self.state.tail_page))?;
        let header = DataHeader::decode(&page, self.slots.width, &self.queue.name, self.state.tail_page)?;
        self.tail = Some(Tail { page, header });
        Ok(())
    }

    /// Allocates a new tail page after the current one.
    fn new_tail(&mut self) -> Result<()> {
        let mut page = self.txn.alloc_page(super::DATA_PAGE)?;
        let header = DataHeader::new(self.state.next_seq, self.queue.root.0);
        header.encode(&mut page);
        let id = page.id().0;
        match self.tail.take() {
            Some(mut old) => {
                old.header.next = id;
                old.header.encode(&mut old.page);
            }
            None => self.state.head_page = id,
        }
        self.state.tail_page = id;
        self.state.data_pages += 1;
        self.tail = Some(Tail { page, header });
        Ok(())
    }
}

impl Drop for Appender<'_, '_, '_> {
    fn drop(&mut self) {
        self.state.encode(&mut self.head);
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
    header.encode(&mut tail.page);
}
