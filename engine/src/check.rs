//! Integrity check: verifies every page reachable from the newest meta and accounts for
//! every physical page.
//!
//! Each physical page in `[2, page_count)` must be exactly one of: a page-map page, a
//! mapped data page, a page of the commit record, a page of the commit log region, or
//! listed free by the record. Every
//! page is read from the file (not the pool) and its checksum and header verified.
//! The allocator's state is checked too: every mapped logical id is below the meta's
//! `logical_next`, and every free logical id is below it, unmapped and listed once —
//! else the next `alloc_page` would hand out a live page. A rollback at open (the
//! newest meta rejected) makes the report unclean as well: it may have cost a commit.
//! Problems are collected, not returned early, so one run names all of them. Mapped
//! pages are counted by kind ([`KindCount`]); the engine names only its own kinds, the
//! caller the structures' (`quire check` asks each crate for its list).

use crate::commit_record;
use crate::db::Database;
use crate::error::Result;
use crate::freespace::Record;
use crate::meta::{META_PAGES, Meta};
use crate::page::{self, PageKind, PhysId};
use crate::txn::ReadTxn;

/// What `check` found.
#[derive(Debug, Default, Clone)]
pub struct CheckReport {
    /// The meta that was checked.
    pub txn: u64,
    /// Physical pages in the file's accounting.
    pub page_count: u64,
    /// Page-map pages.
    pub map_pages: u64,
    /// Mapped (logical) pages.
    pub data_pages: u64,
    /// Pages of the commit record.
    pub record_pages: u64,
    /// Free pages.
    pub free_pages: u64,
    /// Mapped pages by kind, in code order: the engine names its own kinds, the
    /// structures theirs (`quire check` asks each crate).
    pub kinds: Vec<KindCount>,
    /// Every problem found, as sentences.
    pub problems: Vec<String>,
    /// What opening rejected, when it fell back.
    pub rollback: Option<crate::Rollback>,
}

impl CheckReport {
    /// True when nothing is wrong: no problem found and no rollback at open.
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty() && self.rollback.is_none()
    }
}

/// How many mapped pages are of one kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindCount {
    /// The kind (its code and, as read from the first page counted, its flags).
    pub kind: PageKind,
    /// Pages of the kind.
    pub pages: u64,
}

struct Walk<'a> {
    txn: &'a ReadTxn<'a>,
    meta: Meta,
    seen: Vec<u8>,
    buf: Vec<u8>,
    /// Logical ids found mapped (in ascending order: the map is walked in order).
    mapped: Vec<u64>,
    /// Mapped pages found of each kind, by code.
    kinds: Vec<Option<KindCount>>,
    report: CheckReport,
}

impl Walk<'_> {
    fn claim(&mut self, phys: u64, what: &str) -> bool {
        if phys < META_PAGES || phys >= self.meta.page_count {
            self.report.problems.push(format!("{what} refers to page {phys} outside 2..{}", self.meta.page_count));
            return false;
        }
        let slot = &mut self.seen[phys as usize];
        *slot += 1;
        if *slot > 1 {
            self.report.problems.push(format!("page {phys} is used twice (second time as {what})"));
            return false;
        }
        true
    }

    fn read(&mut self, phys: u64, kind: Option<PageKind>, logical: u64) -> Option<page::Header> {
        let core = self.txn.core();
        let result = core
            .read_raw(PhysId(phys), &mut self.buf)
            .and_then(|()| page::verify_expect(&self.buf, PhysId(phys), kind, logical, self.meta.txn));
        match result {
            Ok(header) => Some(header),
            Err(error) => {
                self.report.problems.push(error.to_string());
                None
            }
        }
    }

    /// Counts a mapped page of `kind`.
    fn count_kind(&mut self, kind: PageKind) {
        let count = self.kinds[usize::from(kind.code())].get_or_insert(KindCount { kind, pages: 0 });
        count.pages += 1;
    }

    fn map_level(&mut self, phys: u64, level: u32, first_logical: u64) {
        if !self.claim(phys, "a page-map page") || self.read(phys, Some(PageKind::MAP), u64::from(level)).is_none() {
            return;
        }
        self.report.map_pages += 1;
        let core = self.txn.core();
        let fanout = core.fanout;
        let entries: Vec<u64> = (0..fanout).map(|index| crate::core::Core::map_entry(&self.buf, index)).collect();
        let span = fanout.pow(level - 1);
        for (index, entry) in entries.into_iter().enumerate() {
            let logical = first_logical + index as u64 * span;
            if entry == 0 {
                continue;
            }
            if level > 1 {
                self.map_level(entry, level - 1, logical);
            } else if self.claim(entry, &format!("logical page {logical}"))
                && let Some(header) = self.read(entry, None, logical)
            {
                self.report.data_pages += 1;
                self.mapped.push(logical);
                self.count_kind(header.kind);
            }
        }
    }
}

/// The free space `check` accounts for, and the pages of the commit record holding it.
struct Accounted {
    record: Record,
    record_pages: Vec<u64>,
}

/// The newest snapshot of `db` and its free space: the commit record its meta names; for
/// a logged commit's meta (it names none, `txn/logged.rs`) the writer's free space,
/// taken with the writer lock held so that it is the snapshot's; for that of a
/// read-only open that replayed the log, rebuilt from the map (`rebuild.rs`).
fn newest_with_free_space(db: &Database) -> Result<(crate::txn::ReadTxn<'_>, Accounted)> {
    let txn = db.begin_read()?;
    let meta = *txn.meta();
    let core = txn.core();
    let logged = meta.record_head.0 == 0 && meta.page_count > META_PAGES;
    if !logged {
        let (record, record_pages) = commit_record::read_record(core, &meta)?;
        return Ok((txn, Accounted { record, record_pages }));
    }
    if core.read_only {
        let record = crate::rebuild::free_space(&meta, |phys, buf| core.read_raw(phys, buf))?;
        return Ok((txn, Accounted { record, record_pages: Vec::new() }));
    }
    drop(txn);
    let writer = core.lock_writer();
    let txn = db.begin_read()?;
    let free = core.free.lock();
    let mut pages: Vec<u64> = free.free.iter().copied().chain(free.pending_pages()).collect();
    pages.sort_unstable();
    let record = Record { free: pages, logical: free.logical.clone(), unsynced: Vec::new() };
    let record_pages = free.record_pages.clone();
    drop((free, writer));
    Ok((txn, Accounted { record, record_pages }))
}

/// Runs the check on the newest committed snapshot of `db`. When that is a logged commit
/// it takes the writer lock for a moment (to read the writer's free space): do not call
/// it from a thread that holds a write transaction of `db`.
pub fn check(db: &Database) -> Result<CheckReport> {
    let (txn, accounted) = match newest_with_free_space(db) {
        Ok((txn, accounted)) => (txn, Ok(accounted)),
        Err(error @ crate::Error::Io { .. }) => return Err(error),
        Err(error) => (db.begin_read()?, Err(error)),
    };
    let meta = *txn.meta();
    let mut walk = Walk {
        txn: &txn,
        meta,
        seen: vec![0; meta.page_count as usize],
        buf: vec![0; db.page_size()],
        mapped: Vec::new(),
        kinds: vec![None; 256],
        report: CheckReport {
            txn: meta.txn.0,
            page_count: meta.page_count,
            rollback: db.rollback().cloned(),
            ..CheckReport::default()
        },
    };
    if meta.map_depth > 0 {
        walk.map_level(meta.map_root.0, meta.map_depth, 0);
    }
    for phys in meta.log_start..meta.log_start + meta.log_pages {
        walk.claim(phys, "a commit-log page");
    }
    match accounted {
        Ok(Accounted { record, record_pages }) => {
            for phys in record_pages {
                walk.claim(phys, "a commit-record page");
                walk.report.record_pages += 1;
            }
            for phys in record.free {
                walk.claim(phys, "a free page");
                walk.report.free_pages += 1;
            }
            check_logical_ids(&walk.mapped, &record.logical, &meta, &mut walk.report.problems);
        }
        Err(error) => walk.report.problems.push(format!("commit record: {error}")),
    }
    walk.report.kinds = walk.kinds.iter().flatten().copied().collect();
    if walk.report.data_pages != meta.live_pages {
        walk.report
            .problems
            .push(format!("{} mapped pages, the meta says {}", walk.report.data_pages, meta.live_pages));
    }
    if let Some(&largest) = walk.mapped.last()
        && largest >= meta.logical_next
    {
        walk.report
            .problems
            .push(format!("logical page {largest} is mapped, but the next new id is {}", meta.logical_next));
    }
    let lost: Vec<u64> = (META_PAGES..meta.page_count).filter(|&phys| walk.seen[phys as usize] == 0).collect();
    if !lost.is_empty() {
        let shown: Vec<String> = lost.iter().take(10).map(u64::to_string).collect();
        walk.report.problems.push(format!("{} pages are neither used nor free: {}", lost.len(), shown.join(", ")));
    }
    Ok(walk.report)
}

/// The free logical ids must be distinct, in `1..logical_next` and unmapped.
fn check_logical_ids(mapped: &[u64], free: &[u64], meta: &Meta, problems: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::with_capacity(free.len());
    for &id in free {
        if id == 0 || id >= meta.logical_next {
            problems.push(format!("free logical id {id} is outside 1..{}", meta.logical_next));
        } else if !seen.insert(id) {
            problems.push(format!("logical id {id} is listed free twice"));
        } else if mapped.binary_search(&id).is_ok() {
            problems.push(format!("logical id {id} is listed free but is mapped"));
        }
    }
}
