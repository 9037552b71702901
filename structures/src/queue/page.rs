//! The two page kinds of a queue, decoded and encoded: the queue head page
//! (`HEAD_PAGE`, the catalog root, never moves) and the data pages (`DATA_PAGE`).
//! The byte-offset tables are in the module docs of `queue/mod.rs`.
//!
//! Invariants a decoded data page satisfies (checked by [`DataHeader::decode`], so the
//! readers can index without further bounds checks):
//! - fixed mode: `DATA + count × fixed_len ≤ payload`;
//! - variable mode: `DATA + data_end + count × slot_width ≤ payload`, and every slot's
//!   end offset is checked when the slot is read (it must lie in `prev_end..=data_end`).

use crate::error::{Error, Result};

/// Offset of the first record byte in a data page payload.
pub const DATA: usize = 32;
/// Most records one data page holds (the count is a u16).
pub const MAX_COUNT: u32 = u16::MAX as u32;
/// Magic of a queue head page, "QUIREQ01" read as little-endian u64.
pub const HEAD_MAGIC: u64 = u64::from_le_bytes(*b"QUIREQ01");
/// Flag: the page is in variable mode (slot array at the end of the page).
pub const FLAG_VARIABLE: u16 = 1;
/// Flag: at least one record of the page is an overflow reference.
pub const FLAG_OVERFLOW: u16 = 2;

/// The decoded queue head page.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeadState {
    /// First data page (0 = the queue has no data page).
    pub head_page: u64,
    /// Last data page, where appends go (0 = none).
    pub tail_page: u64,
    /// Sequence number of the first live record.
    pub head_seq: u64,
    /// Sequence number the next appended record gets.
    pub next_seq: u64,
    /// Number of data pages in the chain.
    pub data_pages: u64,
}

impl HeadState {
    /// Decodes a head page payload.
    pub fn decode(page: &[u8], structure: &str, id: u64) -> Result<HeadState> {
        let bad = |reason: &str| corrupted(structure, id, reason);
        if page.len() < 48 || u64_at(page, 0) != HEAD_MAGIC {
            return Err(bad("not a queue head page (bad magic)"));
        }
        let state = HeadState {
            head_page: u64_at(page, 8),
            tail_page: u64_at(page, 16),
            head_seq: u64_at(page, 24),
            next_seq: u64_at(page, 32),
            data_pages: u64_at(page, 40),
        };
        if state.head_seq > state.next_seq || (state.head_page == 0) != (state.tail_page == 0) {
            return Err(bad("inconsistent head page fields"));
        }
        Ok(state)
    }

    /// Encodes into a head page payload.
    pub fn encode(&self, page: &mut [u8]) {
        put_u64(page, 0, HEAD_MAGIC);
        put_u64(page, 8, self.head_page);
        put_u64(page, 16, self.tail_page);
        put_u64(page, 24, self.head_seq);
        put_u64(page, 32, self.next_seq);
        put_u64(page, 40, self.data_pages);
    }

    /// Records in the queue.
    pub fn len(&self) -> u64 {
        self.next_seq - self.head_seq
    }
}

/// The decoded header of a data page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataHeader {
    /// Next data page (0 = last).
    pub next: u64,
    /// Sequence number of slot 0.
    pub first_seq: u64,
    /// Logical id of the owning queue's head page.
    pub owner: u64,
    /// Records in the page (consumed ones included).
    pub count: u32,
    /// `FLAG_*` bits.
    pub flags: u16,
    /// Fixed mode: the length of every record. Variable mode: bytes of record data.
    pub len_word: u32,
}

impl DataHeader {
    /// A fresh, empty fixed-mode header.
    pub fn new(first_seq: u64, owner: u64) -> DataHeader {
        DataHeader { next: 0, first_seq, owner, count: 0, flags: 0, len_word: 0 }
    }

    /// Decodes and bounds-checks the header of a data page payload.
    pub fn decode(page: &[u8], slot_width: usize, structure: &str, id: u64) -> Result<DataHeader> {
        let header = DataHeader {
            next: u64_at(page, 0),
            first_seq: u64_at(page, 8),
            owner: u64_at(page, 16),
            count: u32::from(u16_at(page, 24)),
            flags: u16_at(page, 26),
            len_word: u32_at(page, 28),
        };
        let count = header.count as usize;
        let used = if header.is_variable() {
            (header.len_word as usize).checked_add(count * slot_width)
        } else {
            count.checked_mul(header.len_word as usize)
        };
        if used.is_none_or(|used| DATA + used > page.len()) {
            return Err(corrupted(structure, id, "record area larger than the page"));
        }
        if header.flags & !(FLAG_VARIABLE | FLAG_OVERFLOW) != 0 {
            return Err(corrupted(structure, id, "unknown data page flags"));
        }
        Ok(header)
    }

    /// Encodes into a data page payload.
    pub fn encode(&self, page: &mut [u8]) {
        put_u64(page, 0, self.next);
        put_u64(page, 8, self.first_seq);
        put_u64(page, 16, self.owner);
        page[24..26].copy_from_slice(&(self.count as u16).to_le_bytes());
        page[26..28].copy_from_slice(&self.flags.to_le_bytes());
        page[28..32].copy_from_slice(&self.len_word.to_le_bytes());
    }

    /// True in variable mode.
    pub fn is_variable(&self) -> bool {
        self.flags & FLAG_VARIABLE != 0
    }

    /// Sequence number one past the page's last record.
    pub fn end_seq(&self) -> u64 {
        self.first_seq.wrapping_add(u64::from(self.count))
    }
}

/// Slot geometry of one page size: slots are `width` bytes, the top bit marks an
/// overflow record, the remaining bits are the record's end offset relative to `DATA`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slots {
    /// 2 for pages up to 32 KiB, 4 above.
    pub width: usize,
    /// Page payload size.
    pub payload: usize,
}

impl Slots {
    /// Geometry for a page payload of `payload` bytes.
    pub fn new(payload: usize) -> Slots {
        Slots { width: if payload - DATA < 1 << 15 { 2 } else { 4 }, payload }
    }

    fn overflow_bit(&self) -> u32 {
        if self.width == 2 { 1 << 15 } else { 1 << 31 }
    }

    fn at(&self, slot: usize) -> usize {
        self.payload - (slot + 1) * self.width
    }

    /// Reads slot `slot`: (end offset relative to `DATA`, is overflow).
    pub fn get(&self, page: &[u8], slot: usize) -> (usize, bool) {
        let at = self.at(slot);
        let raw = if self.width == 2 { u32::from(u16_at(page, at)) } else { u32_at(page, at) };
        let bit = self.overflow_bit();
        ((raw & !bit) as usize, raw & bit != 0)
    }

    /// Writes slot `slot`.
    pub fn set(&self, page: &mut [u8], slot: usize, end: usize, overflow: bool) {
        let at = self.at(slot);
        let raw = end as u32 | if overflow { self.overflow_bit() } else { 0 };
        if self.width == 2 {
            page[at..at + 2].copy_from_slice(&(raw as u16).to_le_bytes());
        } else {
            page[at..at + 4].copy_from_slice(&raw.to_le_bytes());
        }
    }

    /// Largest record stored inline (one record alone in a variable page).
    pub fn inline_max(&self) -> usize {
        self.payload - DATA - self.width
    }

    /// Byte range (relative to the payload) of record `slot` of a variable page, with
    /// its overflow bit; an error when the slot array is inconsistent.
    pub fn record(
        &self,
        page: &[u8],
        head: &DataHeader,
        slot: usize,
        structure: &str,
        id: u64,
    ) -> Result<(usize, usize, bool)> {
        let start = if slot == 0 { 0 } else { self.get(page, slot - 1).0 };
        let (end, overflow) = self.get(page, slot);
        if start > end || end > head.len_word as usize {
            return Err(corrupted(structure, id, &format!("slot {slot} has end offset {end} out of order")));
        }
        Ok((DATA + start, DATA + end, overflow))
    }
}

/// The crate error for a corrupt queue page.
pub fn corrupted(structure: &str, page: u64, reason: &str) -> Error {
    Error::Corrupted { structure: structure.to_owned(), page, reason: reason.to_owned() }
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(word)
}

fn u16_at(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([bytes[at], bytes[at + 1]])
}

fn put_u64(bytes: &mut [u8], at: usize, value: u64) {
    bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_and_rejects_oversized_record_areas() {
        let mut page = vec![0u8; 8160];
        let head = DataHeader { next: 7, first_seq: 99, owner: 3, count: 254, flags: 0, len_word: 32 };
        head.encode(&mut page);
        assert_eq!(DataHeader::decode(&page, 2, "q", 1).expect("valid header"), head);
        DataHeader { len_word: 33, ..head }.encode(&mut page);
        assert!(DataHeader::decode(&page, 2, "q", 1).is_err(), "254 × 33 bytes do not fit");
    }

    #[test]
    fn slots_keep_the_overflow_bit_apart_from_the_offset() {
        for payload in [4064, 65504] {
            let slots = Slots::new(payload);
            let mut page = vec![0u8; payload];
            slots.set(&mut page, 3, payload - DATA - 16, true);
            slots.set(&mut page, 4, 17, false);
            assert_eq!(slots.get(&page, 3), (payload - DATA - 16, true));
            assert_eq!(slots.get(&page, 4), (17, false));
        }
    }
}
