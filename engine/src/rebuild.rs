//! The free space of a meta that names no commit record, rebuilt from its page map.
//!
//! A logged commit writes no commit record (`txn/logged.rs`): its meta, kept in its log
//! record, names none, and what it freed and took lives in the writer's memory until the
//! next meta written in place, which writes a whole record. So when opening replays the
//! log, the last record's meta has no record to read: its free space is what its page
//! map does not use. Every physical page in use is a page-map page, a page the map
//! translates a logical id to, a page of the log region or a meta page (commit-record
//! pages belong to metas written in place); every logical id below `logical_next` that
//! the map leaves unmapped is free (a logical id is mapped when it is allocated and
//! unmapped when it is freed, `WriteTxn::alloc_page` / `free_page`).
//!
//! Only the map is read: one page in ~1,000 of the file (a 1 GB file of 8 KiB pages has
//! ~130 map pages), each verified. Read next: `txn/log.rs` (`recover`).

use crate::error::{Error, Result};
use crate::freespace::Record;
use crate::meta::{META_PAGES, Meta};
use crate::page::{self, HEADER_SIZE, PageKind, PhysId};

/// The record of `meta`'s free space, read through `read` (pages of `meta`'s file as
/// it is after the replay): every page in `[META_PAGES, page_count)` outside the map,
/// the mapped pages and the log region is free, and so is every unmapped logical id in
/// `1..logical_next`. A map page that does not verify, or an entry outside the file or
/// used twice, is [`Error::Corrupted`].
pub(crate) fn free_space(meta: &Meta, mut read: impl FnMut(PhysId, &mut [u8]) -> Result<()>) -> Result<Record> {
    let mut used = vec![false; meta.page_count as usize];
    used[..META_PAGES as usize].fill(true);
    let region = meta.log_start as usize..(meta.log_start + meta.log_pages) as usize;
    let region = used
        .get_mut(region)
        .ok_or_else(|| Error::corrupted(PhysId(meta.log_start), "the commit log region leaves the file"))?;
    // mutant: the log region is taken for free space (allocations would overwrite it)
    region.fill(!cfg!(quire_mutant = "rebuild_log_free"));
    let mut mapped = Vec::new();
    if meta.map_depth > 0 {
        let mut walk = Walk { meta, read: &mut read, used: &mut used, mapped: &mut mapped };
        walk.level(meta.map_root.0, meta.map_depth, 0)?;
    }
    let free = (META_PAGES..meta.page_count).filter(|&phys| !used[phys as usize]).collect();
    let mut logical = Vec::new();
    let mut mapped = mapped.into_iter().peekable();
    for id in 1..meta.logical_next {
        while mapped.next_if(|&other| other < id).is_some() {}
        if mapped.next_if_eq(&id).is_none() {
            logical.push(id);
        }
    }
    Ok(Record { free, logical, unsynced: Vec::new() })
}

struct Walk<'a, R> {
    meta: &'a Meta,
    read: &'a mut R,
    used: &'a mut Vec<bool>,
    /// Mapped logical ids, ascending (the map is walked in order).
    mapped: &'a mut Vec<u64>,
}

impl<R: FnMut(PhysId, &mut [u8]) -> Result<()>> Walk<'_, R> {
    fn claim(&mut self, phys: u64, what: &str) -> Result<()> {
        match self.used.get_mut(phys as usize) {
            Some(used) if !*used => {
                *used = true;
                Ok(())
            }
            _ => Err(Error::corrupted(PhysId(phys), format!("{what} is outside the file or used twice"))),
        }
    }

    /// Claims map page `phys` of `level` (its entries cover ids from `first`) and all
    /// it maps.
    fn level(&mut self, phys: u64, level: u32, first: u64) -> Result<()> {
        self.claim(phys, "a page-map page")?;
        let page_size = self.meta.page_size as usize;
        let mut page = vec![0u8; page_size];
        (self.read)(PhysId(phys), &mut page)?;
        page::verify_expect(&page, PhysId(phys), Some(PageKind::MAP), u64::from(level), self.meta.txn)?;
        let fanout = ((page_size - HEADER_SIZE) / 8) as u64;
        let span = fanout.saturating_pow(level - 1);
        for index in 0..fanout {
            let entry = page::read_u64(&page, HEADER_SIZE + 8 * index as usize);
            let logical = first + index * span;
            if entry == 0 {
                continue;
            }
            if level > 1 {
                self.level(entry, level - 1, logical)?;
            } else {
                self.claim(entry, &format!("the page of logical id {logical}"))?;
                self.mapped.push(logical);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::TxnId;

    /// A file of 4 KiB pages: meta pages, a two-level map at 2 (root) and 3, data pages
    /// at 5 and 7 for logical ids 1 and 3, a log region at 9..11, page count 12.
    fn file() -> (Meta, Vec<Vec<u8>>) {
        let meta = Meta {
            txn: TxnId(9),
            page_count: 12,
            map_root: PhysId(2),
            map_depth: 2,
            logical_next: 5,
            log_start: 9,
            log_pages: 2,
            ..Meta::empty(4096)
        };
        let mut pages = vec![vec![0u8; 4096]; 12];
        page::write_u64(&mut pages[2], HEADER_SIZE, 3);
        page::seal(&mut pages[2], PageKind::MAP, 2, TxnId(9));
        page::write_u64(&mut pages[3], HEADER_SIZE + 8, 5);
        page::write_u64(&mut pages[3], HEADER_SIZE + 24, 7);
        page::seal(&mut pages[3], PageKind::MAP, 1, TxnId(9));
        (meta, pages)
    }

    #[test]
    fn what_the_map_leaves_unused_is_free() {
        let (meta, pages) = file();
        let read = |phys: PhysId, buf: &mut [u8]| {
            buf.copy_from_slice(&pages[phys.0 as usize]);
            Ok(())
        };
        let record = free_space(&meta, read).unwrap();
        assert_eq!(record.free, [4, 6, 8, 11]);
        assert_eq!(record.logical, [2, 4]);
        assert!(record.unsynced.is_empty());
    }

    #[test]
    fn a_map_that_does_not_verify_or_maps_a_page_twice_is_corruption() {
        let (meta, mut pages) = file();
        pages[3][100] ^= 1;
        let read = |phys: PhysId, buf: &mut [u8]| {
            buf.copy_from_slice(&pages[phys.0 as usize]);
            Ok(())
        };
        assert!(matches!(free_space(&meta, read), Err(Error::Corrupted { .. })), "a torn map page");
        let (meta, mut pages) = file();
        page::write_u64(&mut pages[3], HEADER_SIZE + 24, 9); // logical 3 in the log region
        page::seal(&mut pages[3], PageKind::MAP, 1, TxnId(9));
        let read = |phys: PhysId, buf: &mut [u8]| {
            buf.copy_from_slice(&pages[phys.0 as usize]);
            Ok(())
        };
        assert!(matches!(free_space(&meta, read), Err(Error::Corrupted { .. })), "a page used twice");
    }
}
