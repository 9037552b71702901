//! `quire demo`, queue part: appends a million 32-byte meteo-sized records and some
//! variable-length and overflow ones to a paged queue, scans it, reads records by id,
//! consumes and truncates at the head, and prints timings and page fill.

use anyhow::{Result, ensure};
use quiredb_engine::{Database, Durability};
use quiredb_structures::queue::{Queue, RecordId};
use std::ops::ControlFlow;
use std::time::Instant;

const FIXED: u64 = 1_000_000;
const RECORD_BYTES: usize = 32;

/// Runs the queue tour on `db`.
pub fn tour(db: &Database) -> Result<()> {
    let ids = append(db)?;
    scan(db)?;
    let txn = db.begin_write()?;
    let mut queue = Queue::open(&txn, "demo_queue")?;
    let mut out = Vec::new();
    ensure!(queue.get(ids[1], &mut out)? && out.len() == 100_000, "the overflow record reads back");
    let start = Instant::now();
    for _ in 0..100_000 {
        queue.consume(&mut out)?;
    }
    let consumed = start.elapsed();
    let truncated = queue.truncate_before(ids[0])?;
    let stats = queue.stats()?;
    txn.commit(Durability::Full)?;
    outln!(
        "queue: consumed 100000 records in {:.1} ms, truncated {truncated} more; {} records left in {} data pages",
        consumed.as_secs_f64() * 1e3,
        stats.records,
        stats.data_pages
    )?;
    Ok(())
}

/// Appends the fixed records in one transaction, then a few special ones; returns the
/// id of the 500,000th fixed record and of a 100 kB overflow record.
fn append(db: &Database) -> Result<[RecordId; 2]> {
    let start = Instant::now();
    let txn = db.begin_write()?;
    let mut queue = Queue::create(&txn, "demo_queue")?;
    let mut appender = queue.appender()?;
    let mut middle = None;
    let mut record = [0u8; RECORD_BYTES];
    for n in 0..FIXED {
        record[..8].copy_from_slice(&n.to_le_bytes());
        let id = appender.append(&record)?;
        if n == FIXED / 2 {
            middle = Some(id);
        }
    }
    drop(appender);
    let pages = queue.stats()?.data_pages;
    txn.commit(Durability::Full)?;
    let elapsed = start.elapsed().as_secs_f64();
    let payload = pages * (db.page_size() as u64 - 32);
    outln!(
        "queue: appended {FIXED} records of {RECORD_BYTES} bytes in {:.1} ms ({:.2} M/s), {pages} pages, fill {:.2} %",
        elapsed * 1e3,
        FIXED as f64 / elapsed / 1e6,
        100.0 * (FIXED as f64 * RECORD_BYTES as f64) / payload as f64
    )?;
    let txn = db.begin_write()?;
    let mut queue = Queue::open(&txn, "demo_queue")?;
    let mut appender = queue.appender()?;
    appender.append(b"a short variable-length record")?;
    let big = appender.append(&vec![7u8; 100_000])?;
    appender.append(b"")?;
    drop(appender);
    txn.commit(Durability::Full)?;
    Ok([middle.expect("FIXED / 2 < FIXED"), big])
}

/// Scans the whole queue once, summing the first word of each fixed record.
fn scan(db: &Database) -> Result<()> {
    let txn = db.begin_read()?;
    let queue = Queue::open(&txn, "demo_queue")?;
    let start = Instant::now();
    let mut sum = 0u64;
    let count = queue.for_each(None, |_, bytes| {
        if bytes.len() == RECORD_BYTES {
            sum += u64::from_le_bytes(bytes[..8].try_into().expect("32-byte record"));
        }
        ControlFlow::Continue(())
    })?;
    let elapsed = start.elapsed().as_secs_f64();
    ensure!(sum == FIXED * (FIXED - 1) / 2, "scan sum {sum} is wrong");
    outln!(
        "queue: scanned {count} records in {:.1} ms ({:.1} M/s, {:.0} MB/s of payload), {} records in the snapshot",
        elapsed * 1e3,
        count as f64 / elapsed / 1e6,
        (FIXED as f64 * RECORD_BYTES as f64) / elapsed / 1e6,
        queue.len()?
    )?;
    Ok(())
}
