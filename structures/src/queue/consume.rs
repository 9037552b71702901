//! Removing records at the head: [`Queue::consume`](crate::queue::Queue::consume) (get-and-delete of the head
//! record, like BDB's `DB_CONSUME`), [`Queue::truncate_before`](crate::queue::Queue::truncate_before) and [`Queue::clear`](crate::queue::Queue::clear).
//!
//! Consuming writes only the queue head page (`head_seq` moves); the data page is read,
//! never rewritten: the records before `head_seq` in the head data page are dead. A
//! data page whose last record is consumed is freed at once — the last one too, so an
//! empty queue owns no data page — and overflow records free their pages when they
//! are consumed or truncated.

use super::overflow;
use super::page::{DataHeader, FLAG_OVERFLOW, HeadState, Slots, corrupted};
use super::{Core, RecordId};
use crate::error::{Error, Result};
use quiredb_engine::{PageId, PageRead, WriteTxn};

impl Core {
    /// Removes the head record, copying it into `out` (replacing its contents);
    /// `None` when the queue is empty.
    pub fn consume(&self, txn: &WriteTxn<'_>, out: &mut Vec<u8>) -> Result<Option<RecordId>> {
        let mut state = self.state(txn)?;
        out.clear();
        if state.len() == 0 {
            return Ok(None);
        }
        let id = RecordId { seq: state.head_seq, page: PageId(state.head_page) };
        if !self.get(txn, id, out)? {
            return Err(corrupted(&self.name, state.head_page, "head page does not hold the head record"));
        }
        self.drop_range(txn, &mut state, id.seq + 1)?;
        self.save(txn, &state)?;
        Ok(Some(id))
    }

    /// Removes every record before `first_kept` (which stays and becomes the head).
    /// `first_kept` must be a live record of this queue; ids at or before the head
    /// remove nothing. Returns the number of records removed.
    pub fn truncate_before(&self, txn: &WriteTxn<'_>, first_kept: RecordId) -> Result<u64> {
        let mut state = self.state(txn)?;
        if first_kept.seq <= state.head_seq {
            return Ok(0);
        }
        let mut probe = Vec::new();
        if !self.get(txn, first_kept, &mut probe)? {
            return Err(Error::InvalidRecordId {
                structure: self.name.clone(),
                seq: first_kept.seq,
                page: first_kept.page.0,
            });
        }
        let removed = first_kept.seq - state.head_seq;
        self.drop_range(txn, &mut state, first_kept.seq)?;
        self.save(txn, &state)?;
        Ok(removed)
    }

    /// Removes every record; returns how many there were.
    pub fn clear(&self, txn: &WriteTxn<'_>) -> Result<u64> {
        let mut state = self.state(txn)?;
        let (removed, end) = (state.len(), state.next_seq);
        self.drop_range(txn, &mut state, end)?;
        self.save(txn, &state)?;
        Ok(removed)
    }

    /// Moves the head to `new_head`, freeing overflow records before it and every data
    /// page left without a live record.
    fn drop_range(&self, txn: &WriteTxn<'_>, state: &mut HeadState, new_head: u64) -> Result<()> {
        let slots = Slots::new(txn.payload_size());
        let mut guard = state.data_pages;
        while state.head_page != 0 && state.head_seq < new_head {
            guard = guard
                .checked_sub(1)
                .ok_or_else(|| corrupted(&self.name, state.head_page, "chain longer than data_pages"))?;
            let page_id = state.head_page;
            let header = self.head_header(txn, page_id, &slots)?;
            let upto = new_head.min(header.end_seq());
            if header.flags & FLAG_OVERFLOW != 0 {
                self.free_overflow(txn, page_id, &header, &slots, state.head_seq, upto)?;
            }
            state.head_seq = upto;
            if upto < header.end_seq() {
                break;
            }
            txn.free_page(PageId(page_id))?;
            state.data_pages -= 1;
            state.head_page = header.next;
            if header.next == 0 {
                state.tail_page = 0;
            }
        }
        state.head_seq = new_head;
        Ok(())
    }

    /// Reads and checks the header of the data page at the head.
    fn head_header(&self, txn: &WriteTxn<'_>, id: u64, slots: &Slots) -> Result<DataHeader> {
        let page = txn.page(PageId(id))?;
        let header = DataHeader::decode(&page, slots.width, &self.name, id)?;
        if page.kind() != super::DATA_PAGE || header.owner != self.root.0 {
            return Err(corrupted(&self.name, id, "head chain reaches a page that is not this queue's"));
        }
        Ok(header)
    }

    /// Frees the out-of-line pages of the overflow records with seq in `from..upto`.
    fn free_overflow(
        &self,
        txn: &WriteTxn<'_>,
        id: u64,
        header: &DataHeader,
        slots: &Slots,
        from: u64,
        upto: u64,
    ) -> Result<()> {
        let mut stubs = Vec::new();
        {
            let page = txn.page(PageId(id))?;
            for seq in from.max(header.first_seq)..upto {
                let (start, end, overflow) =
                    slots.record(&page, header, (seq - header.first_seq) as usize, &self.name, id)?;
                if overflow {
                    stubs.push(page[start..end].to_vec());
                }
            }
        }
        for stub in stubs {
            overflow::free(txn, &stub, &self.name, id)?;
        }
        Ok(())
    }

    /// Writes the head page.
    fn save(&self, txn: &WriteTxn<'_>, state: &HeadState) -> Result<()> {
        state.encode(&mut txn.page_mut(self.root)?);
        Ok(())
    }
}
