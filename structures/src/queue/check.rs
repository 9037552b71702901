//! The queue's invariant checker (called by `crate::check` for every `QUEUE` catalog
//! entry and by the tests): walks the whole chain and returns each broken invariant of
//! the module docs as a sentence. A page that cannot even be decoded ends the walk.

use super::Core;
use super::overflow;
use super::page::{DataHeader, HeadState, Slots, corrupted};
use crate::error::{Error, Result};
use quiredb_engine::{CatalogEntry, PageId, PageRead};

/// Checks the queue of catalog entry `entry`; an empty list means it is sound.
pub fn check(txn: &impl PageRead, entry: &CatalogEntry) -> Result<Vec<String>> {
    let queue = Core { name: entry.name.clone(), root: entry.root };
    let mut problems = Vec::new();
    match walk(&queue, txn, &mut problems) {
        Ok(()) => {}
        Err(Error::Corrupted { page, reason, .. }) => problems.push(format!("page {page}: {reason}")),
        Err(Error::Engine(error)) => problems.push(error.to_string()),
        Err(error) => return Err(error),
    }
    Ok(problems)
}

fn walk(queue: &Core, txn: &impl PageRead, problems: &mut Vec<String>) -> Result<()> {
    let state = queue.state(txn)?;
    let slots = Slots::new(txn.payload_size());
    let (mut id, mut pages, mut last, mut expect_seq) = (state.head_page, 0u64, 0u64, None);
    while id != 0 {
        pages += 1;
        if pages > state.data_pages {
            problems.push(format!("chain has more than data_pages = {} pages", state.data_pages));
            return Ok(());
        }
        let page = txn.page(PageId(id))?;
        let header = DataHeader::decode(&page, slots.width, &queue.name, id)?;
        if page.kind() != super::DATA_PAGE || header.owner != queue.root.0 {
            return Err(corrupted(&queue.name, id, "not a data page of this queue"));
        }
        if header.count == 0 {
            problems.push(format!("data page {id} is empty"));
        }
        if let Some(seq) = expect_seq
            && header.first_seq != seq
        {
            problems.push(format!("data page {id} starts at seq {} instead of {seq}", header.first_seq));
        }
        if pages == 1 && !(header.first_seq..header.end_seq()).contains(&state.head_seq) {
            problems.push(format!("head seq {} is not in head data page {id}", state.head_seq));
        }
        check_records(queue, txn, (id, &page), &header, &slots, state.head_seq, problems)?;
        expect_seq = Some(header.end_seq());
        last = id;
        id = header.next;
    }
    check_ends(&state, pages, last, expect_seq, problems);
    Ok(())
}

/// Slot offsets in order and inside the page; live overflow references readable.
fn check_records(
    queue: &Core,
    txn: &impl PageRead,
    (id, page): (u64, &[u8]),
    header: &DataHeader,
    slots: &Slots,
    live_from: u64,
    problems: &mut Vec<String>,
) -> Result<()> {
    if !header.is_variable() {
        return Ok(());
    }
    for slot in 0..header.count as usize {
        let (start, end, overflow) = slots.record(page, header, slot, &queue.name, id)?;
        if overflow && header.first_seq.wrapping_add(slot as u64) >= live_from {
            let mut pages = Vec::new();
            for problem in overflow::check(txn, &page[start..end], &queue.name, id, &mut pages)? {
                let seq = header.first_seq.wrapping_add(slot as u64);
                problems.push(format!("overflow record {seq} in page {id}: {problem}"));
            }
        }
    }
    Ok(())
}

fn check_ends(state: &HeadState, pages: u64, last: u64, end_seq: Option<u64>, problems: &mut Vec<String>) {
    if pages != state.data_pages {
        problems.push(format!("chain has {pages} pages, head page says {}", state.data_pages));
    }
    if last != state.tail_page {
        problems.push(format!("chain ends at page {last}, head page says tail {}", state.tail_page));
    }
    match end_seq {
        Some(seq) if seq != state.next_seq => {
            let last = seq.wrapping_sub(1);
            problems.push(format!("last record has seq {last}, head page says next_seq {}", state.next_seq));
        }
        None if state.len() != 0 => problems.push(format!("no data page but {} records", state.len())),
        _ => {}
    }
}
