//! Integration tests of the paged queue (`quiredb_structures::queue`): random
//! operation sequences against a `VecDeque` model (seed printed; replay with
//! `QUIRE_SEED=<seed>`, scale up with `QUEUE_SCALE=<n>`), scans across page boundaries
//! and reopen, edge record sizes, freeing of emptied pages, and fault injection at
//! every storage operation of a commit.

use quiredb_engine::storage::{CrashMode, Fault, FaultKind, FaultyStorage, MemStorage, Storage};
use quiredb_engine::{Database, Durability, Options, PageRead};
use quiredb_structures::queue::{Queue, RecordId};
use quiredb_test_support::Rng;
use std::collections::VecDeque;
use std::ops::ControlFlow;
use std::sync::Arc;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn seed() -> u64 {
    quiredb_test_support::seed(0x5EED_0005)
}

fn options(page_size: u32) -> Options {
    Database::builder().page_size(page_size).cache_bytes(4 << 20).into_options()
}

fn mem_db(storage: &Arc<MemStorage>, page_size: u32) -> Database {
    Database::with_storage(storage.clone(), options(page_size), "mem").expect("open in-memory database")
}

/// A record whose bytes are derived from (n, len), so any mix-up shows.
fn record(n: u64, len: usize) -> Vec<u8> {
    (0..len).map(|i| (n.wrapping_mul(31).wrapping_add(i as u64 * 7) % 251) as u8).collect()
}

/// A length mix: runs of fixed lengths, small variable ones, empties, overflow.
fn random_len(rng: &mut Rng, payload: usize) -> usize {
    match rng.below(20) {
        0 => 0,
        1 => payload - 40 + rng.below(80) as usize,
        2 => payload * (1 + rng.below(3) as usize) + rng.below(100) as usize,
        3..=9 => 32,
        _ => rng.below(300) as usize,
    }
}

/// Everything in the queue, in order, through `for_each`.
fn scan_all<T: PageRead>(queue: &Queue<'_, T>, from: Option<RecordId>) -> Vec<(RecordId, Vec<u8>)> {
    let mut out = Vec::new();
    queue
        .for_each(from, |id, bytes| {
            out.push((id, bytes.to_vec()));
            ControlFlow::Continue(())
        })
        .expect("scan");
    out
}

fn assert_matches<T: PageRead>(queue: &Queue<'_, T>, model: &VecDeque<(RecordId, Vec<u8>)>, seed: u64) {
    let scanned = scan_all(queue, None);
    assert_eq!(scanned.len(), model.len(), "scan length, seed {seed}");
    assert!(scanned.iter().zip(model).all(|(a, b)| a == b), "scan contents, seed {seed}");
    assert_eq!(queue.len().expect("len"), model.len() as u64, "len, seed {seed}");
    let mut cursor = queue.cursor(None).expect("cursor");
    for (id, bytes) in model {
        let (got_id, got) = cursor.next_record().expect("cursor step").expect("cursor not at end");
        assert_eq!((got_id, got), (*id, &bytes[..]), "cursor, seed {seed}");
    }
    assert!(cursor.next_record().expect("cursor end").is_none(), "cursor ends, seed {seed}");
    assert_lookups_match(queue, model, seed);
}

/// A `Lookup` answers as `get` does: every live record in order and backwards (its
/// pinned page held and replaced), ids just before the head and past the tail none.
fn assert_lookups_match<T: PageRead>(queue: &Queue<'_, T>, model: &VecDeque<(RecordId, Vec<u8>)>, seed: u64) {
    let mut lookup = queue.lookup().expect("lookup");
    for (id, bytes) in model.iter().chain(model.iter().rev()) {
        assert_eq!(lookup.get(*id).expect("lookup get"), Some(&bytes[..]), "lookup of {id:?}, seed {seed}");
    }
    let (Some((first, _)), Some((last, _))) = (model.front(), model.back()) else { return };
    let before = RecordId { seq: first.seq.wrapping_sub(1), page: first.page };
    let after = RecordId { seq: last.seq + 1, page: last.page };
    for gone in [before, after] {
        assert_eq!(lookup.get(gone).expect("lookup get"), None, "lookup of {gone:?}, seed {seed}");
        assert!(!queue.get(gone, &mut Vec::new()).expect("get"), "get of {gone:?}, seed {seed}");
    }
}

fn assert_sound(db: &Database, seed: u64) {
    let txn = db.begin_read().expect("read txn");
    let problems = quiredb_structures::check::check_all(&txn).expect("check runs");
    assert!(problems.is_empty(), "invariants broken, seed {seed}: {problems:?}");
}

/// One random step inside a write transaction; mutates `model`.
fn random_step(
    rng: &mut Rng,
    queue: &mut Queue<'_, quiredb_engine::WriteTxn<'_>>,
    model: &mut VecDeque<(RecordId, Vec<u8>)>,
    counter: &mut u64,
) {
    let payload = queue.txn().payload_size();
    let mut out = Vec::new();
    match rng.below(10) {
        0..=4 => {
            let mut appender = queue.appender().expect("appender");
            for _ in 0..rng.below(200) {
                *counter += 1;
                let bytes = record(*counter, random_len(rng, payload));
                let id = appender.append(&bytes).expect("append");
                model.push_back((id, bytes));
            }
        }
        5 | 6 => {
            for _ in 0..rng.below(60) {
                let got = queue.consume(&mut out).expect("consume");
                let expected = model.pop_front();
                assert_eq!(got, expected.as_ref().map(|e| e.0));
                if let Some((_, bytes)) = expected {
                    assert_eq!(out, bytes);
                }
            }
        }
        7 if !model.is_empty() => {
            let keep = rng.below(model.len() as u64) as usize;
            let removed = queue.truncate_before(model[keep].0).expect("truncate");
            assert_eq!(removed, keep as u64);
            model.drain(..keep);
        }
        _ => {
            for (id, bytes) in model.iter().step_by(1 + rng.below(40) as usize) {
                assert!(queue.get(*id, &mut out).expect("get"));
                assert_eq!(&out, bytes);
            }
            if let Some(at) = (!model.is_empty()).then(|| rng.below(model.len() as u64) as usize) {
                let tail = scan_all(queue, Some(model[at].0));
                assert!(tail.iter().eq(model.range(at..)), "scan from a record");
            }
        }
    }
}

#[test]
fn random_sequences_match_a_vecdeque_model() {
    // Proves append/consume/truncate/get/scan agree with VecDeque through commits,
    // aborts and reopens, and that the checker finds nothing after each commit.
    let seed = seed();
    let rounds = 60 * env_u64("QUEUE_SCALE", 1);
    let mut rng = Rng::new(seed);
    let storage = Arc::new(MemStorage::new());
    let mut db = mem_db(&storage, 4096);
    let (mut model, mut counter) = (VecDeque::new(), 0u64);
    let txn = db.begin_write().expect("write");
    Queue::create(&txn, "q").expect("create");
    txn.commit(Durability::Full).expect("commit");
    for round in 0..rounds {
        let txn = db.begin_write().expect("write");
        let mut queue = Queue::open(&txn, "q").expect("open");
        let mut next_model = model.clone();
        for _ in 0..1 + rng.below(4) {
            random_step(&mut rng, &mut queue, &mut next_model, &mut counter);
        }
        assert_matches(&queue, &next_model, seed);
        drop(queue);
        if rng.below(6) == 0 {
            drop(txn); // abort: the model stays as it was
        } else {
            txn.commit(Durability::Checksummed).expect("commit");
            model = next_model;
        }
        if round % 10 == 9 {
            drop(db);
            db = mem_db(&storage, 4096);
        }
        let read = db.begin_read().expect("read");
        assert_matches(&Queue::open(&read, "q").expect("open"), &model, seed);
        assert_sound(&db, seed);
    }
}

#[test]
fn scans_cross_page_boundaries_and_survive_reopen_of_a_file() {
    // Proves a queue of many pages (fixed and variable pages mixed) reads back the same
    // through get, for_each from every page boundary, and after reopening the file;
    // the transaction is large enough for its full pages to be written behind (before
    // the commit, `WriteTxn::write_behind`).
    let path = std::env::temp_dir().join(format!("quiredb-queue-test-{}.quire", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let mut expected = Vec::new();
    {
        let db = Database::create(&path, options(8192)).expect("create file");
        let txn = db.begin_write().expect("write");
        let mut queue = Queue::create(&txn, "log").expect("create");
        let mut appender = queue.appender().expect("appender");
        for n in 0..100_000u64 {
            let len = if (n / 3000) % 2 == 0 { 32 } else { (n % 97) as usize };
            let bytes = record(n, len);
            expected.push((appender.append(&bytes).expect("append"), bytes));
        }
        drop(appender);
        txn.commit(Durability::Full).expect("commit");
        assert!(db.stats().written_behind > 100, "full pages were written behind: {:?}", db.stats());
    }
    let db = Database::open(&path, options(8192)).expect("reopen");
    let txn = db.begin_read().expect("read");
    let queue = Queue::open(&txn, "log").expect("open");
    assert!(queue.stats().expect("stats").data_pages > 20, "several pages");
    assert_eq!(scan_all(&queue, None), expected);
    let boundaries: Vec<usize> =
        (1..expected.len()).filter(|&i| expected[i].0.page != expected[i - 1].0.page).collect();
    for &i in boundaries.iter().step_by(37) {
        for at in [i - 1, i] {
            let tail = scan_all(&queue, Some(expected[at].0));
            assert!(tail.iter().eq(expected[at..].iter()), "scan from record {at} at a page boundary");
        }
    }
    let mut out = Vec::new();
    for (id, bytes) in expected.iter().step_by(7) {
        assert!(queue.get(*id, &mut out).expect("get") && &out == bytes);
    }
    drop(txn);
    drop(db);
    std::fs::remove_file(&path).expect("remove test file");
}

#[test]
fn edge_record_sizes_round_trip_and_free_their_pages() {
    // Proves records of 0 bytes, around the inline limit, page size ± 1 and several
    // pages round-trip through get, scan and consume, and that consuming everything
    // returns every data and overflow page (live page count back to the start).
    for page_size in [4096u32, 8192, 65536] {
        let storage = Arc::new(MemStorage::new());
        let db = mem_db(&storage, page_size);
        let ps = page_size as usize;
        let payload = ps - 32;
        let lens = [0, 0, 1, payload - 34, payload - 33, payload - 32, ps - 1, ps, ps + 1, 3 * ps + 5, 0, 17, 5 * ps];
        let txn = db.begin_write().expect("write");
        Queue::create(&txn, "edge").expect("create");
        txn.commit(Durability::Full).expect("commit");
        let live_before = db.meta().live_pages;
        let txn = db.begin_write().expect("write");
        let mut queue = Queue::open(&txn, "edge").expect("open");
        let ids: Vec<RecordId> =
            lens.iter().enumerate().map(|(n, &len)| queue.append(&record(n as u64, len)).expect("append")).collect();
        drop(queue);
        txn.commit(Durability::Full).expect("commit");
        assert_sound(&db, 0);
        let txn = db.begin_write().expect("write");
        let mut queue = Queue::open(&txn, "edge").expect("open");
        let model: VecDeque<_> =
            ids.iter().zip(lens).enumerate().map(|(n, (id, len))| (*id, record(n as u64, len))).collect();
        assert_matches(&queue, &model, 0);
        let mut out = Vec::new();
        for (id, bytes) in &model {
            assert_eq!(queue.consume(&mut out).expect("consume"), Some(*id));
            assert_eq!(&out, bytes, "page size {page_size}, record of {} bytes", bytes.len());
        }
        assert_eq!(queue.consume(&mut out).expect("consume empty"), None);
        assert!(!queue.get(ids[3], &mut out).expect("get consumed"), "consumed records are gone");
        drop(queue);
        txn.commit(Durability::Full).expect("commit");
        assert_eq!(db.meta().live_pages, live_before, "every data and overflow page freed (page size {page_size})");
        assert_sound(&db, 0);
    }
}

#[test]
fn fixed_records_fill_pages_completely() {
    // Proves the file-size design: 32-byte records fill 8 KiB pages exactly (254 per
    // page, no per-record bytes), 100-byte records 81 per page.
    let storage = Arc::new(MemStorage::new());
    let db = mem_db(&storage, 8192);
    let txn = db.begin_write().expect("write");
    for (name, len, per_page) in [("r32", 32usize, 254u64), ("r100", 100, 81)] {
        let mut queue = Queue::create(&txn, name).expect("create");
        let mut appender = queue.appender().expect("appender");
        for n in 0..per_page * 10 {
            appender.append(&record(n, len)).expect("append");
        }
        drop(appender);
        assert_eq!(queue.stats().expect("stats").data_pages, 10, "{len}-byte records");
    }
    txn.commit(Durability::Full).expect("commit");
}

#[test]
fn ids_of_other_queues_and_truncated_records_are_rejected() {
    // Proves a RecordId only works on its own queue and only while the record lives.
    let storage = Arc::new(MemStorage::new());
    let db = mem_db(&storage, 4096);
    let txn = db.begin_write().expect("write");
    let mut a = Queue::create(&txn, "a").expect("create a");
    let mut b = Queue::create(&txn, "b").expect("create b");
    let ids: Vec<RecordId> = (0..500).map(|n| a.append(&record(n, 40)).expect("append")).collect();
    let other = (0..5).map(|_| b.append(b"in b").expect("append b")).last().expect("five ids");
    let mut out = Vec::new();
    assert!(!a.get(other, &mut out).expect("get foreign"));
    assert!(a.truncate_before(other).is_err(), "a foreign id cannot truncate");
    assert_eq!(a.truncate_before(ids[300]).expect("truncate"), 300);
    assert!(!a.get(ids[10], &mut out).expect("get truncated"));
    assert_eq!(scan_all(&a, Some(ids[10]))[0].0, ids[300], "scan from a dead id starts at the head");
    assert_eq!(a.clear().expect("clear"), 200);
    a.drop_queue().expect("drop");
    assert!(Queue::open(&txn, "a").is_err());
    txn.commit(Durability::Full).expect("commit");
}

/// The committed image with a queue of `n` records; the model of its contents.
fn base_image(n: u64) -> (Vec<u8>, Vec<Vec<u8>>) {
    let storage = Arc::new(MemStorage::new());
    let db = mem_db(&storage, 4096);
    let txn = db.begin_write().expect("write");
    let mut queue = Queue::create(&txn, "q").expect("create");
    let records: Vec<Vec<u8>> =
        (0..n).map(|i| record(i, if i % 50 == 7 { 9000 } else { 24 + (i % 40) as usize })).collect();
    for r in &records {
        queue.append(r).expect("append");
    }
    txn.commit(Durability::Full).expect("commit");
    drop(db);
    (storage.snapshot(), records)
}

/// Contents of queue "q" in a crash image (None if the image does not open).
fn contents(image: Vec<u8>) -> Vec<Vec<u8>> {
    let storage: Arc<dyn Storage> = Arc::new(MemStorage::from_bytes(image));
    let db = Database::open_storage(storage, options(4096), "crash").expect("crash image opens");
    assert_sound(&db, 0);
    let txn = db.begin_read().expect("read");
    let queue = Queue::open(&txn, "q").expect("queue survives");
    scan_all(&queue, None).into_iter().map(|(_, bytes)| bytes).collect()
}

#[test]
fn a_fault_at_any_storage_operation_commits_fully_or_not_at_all() {
    // Proves atomicity of a queue transaction (appends with overflow records, consumes
    // freeing pages) under EIO, torn writes and power cuts at every operation index.
    let (base, old) = base_image(400);
    let mut new: Vec<Vec<u8>> = old[150..].to_vec();
    new.extend((0..300).map(|i| record(10_000 + i, if i % 60 == 1 { 5000 } else { 32 })));
    let kinds = [
        (FaultKind::PowerCut, CrashMode::DropUnsynced),
        (FaultKind::TornWrite, CrashMode::RandomSectors(7)),
        (FaultKind::Eio, CrashMode::KeepUnsynced),
    ];
    for (kind, mode) in kinds {
        for at_op in 0.. {
            let storage = Arc::new(FaultyStorage::new(base.clone(), Some(Fault { at_op, kind })));
            let outcome = (|| -> quiredb_structures::Result<()> {
                let db = Database::open_storage(storage.clone(), options(4096), "faulty")?;
                let txn = db.begin_write()?;
                let mut queue = Queue::open(&txn, "q")?;
                let mut out = Vec::new();
                for _ in 0..150 {
                    queue.consume(&mut out)?;
                }
                let mut appender = queue.appender()?;
                for r in &new[old.len() - 150..] {
                    appender.append(r)?;
                }
                drop(appender);
                txn.commit(Durability::Full)?;
                Ok(())
            })();
            let fired = storage.fault_fired();
            let after = contents(storage.crash_image(mode));
            assert!(after == old || after == new, "{kind:?} at op {at_op}: neither the old nor the new state");
            if !fired {
                assert!(outcome.is_ok() && after == new, "no fault: the commit is complete");
                println!("{kind:?}: faults at ops 0..{at_op} tried");
                assert!(at_op > 20, "the transaction performs storage operations");
                break;
            }
        }
    }
}

/// Options with the smallest pool (64 pages of 4 KiB), so most of a queue of a few
/// hundred pages is scanned past the pool.
fn small_pool() -> Options {
    Database::builder().page_size(4096).cache_bytes(64 * 4096).into_options()
}

/// The records of `model` from index `at` visited by `for_each` from there, stopping
/// after `stop` records; `nested` runs another full scan inside the visitor of the
/// first record (so a scan's page buffer meets a second scan on the same thread).
fn scan_some<T: PageRead>(
    queue: &Queue<'_, T>,
    model: &VecDeque<(RecordId, Vec<u8>)>,
    (at, stop): (usize, usize),
    nested: bool,
) -> (u64, Vec<(RecordId, Vec<u8>)>) {
    let mut out = Vec::new();
    let visited = queue
        .for_each(Some(model[at].0), |id, bytes| {
            if nested && out.is_empty() {
                assert!(scan_all(queue, None).iter().eq(model.iter()), "a scan nested in a scan's visitor");
            }
            out.push((id, bytes.to_vec()));
            if out.len() == stop { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        })
        .expect("scan");
    (visited, out)
}

/// Four scans of `queue` from random records, stopped after random counts, some with a
/// scan nested in their visitor, equal `model`.
fn assert_random_scans<T: PageRead>(
    queue: &Queue<'_, T>,
    model: &VecDeque<(RecordId, Vec<u8>)>,
    rng: &mut Rng,
    seed: u64,
) {
    for _ in 0..4 {
        let (at, stop) = (rng.index(model.len()), 1 + rng.index(model.len()));
        let nested = rng.below(4) == 0;
        let (visited, got) = scan_some(queue, model, (at, stop), nested);
        let expected: Vec<_> = model.range(at..).take(stop).cloned().collect();
        assert_eq!(visited, expected.len() as u64, "count of a scan from {at} stopped at {stop}, seed {seed}");
        assert!(got == expected, "scan from {at} stopped at {stop} (nested: {nested}), seed {seed}");
    }
}

#[test]
fn scans_past_a_small_pool_match_a_vecdeque_model() {
    // Proves for_each visiting pages where the engine holds them (pool frames, or the
    // run buffer of a read past the pool, no copy) returns what a VecDeque model holds:
    // from random records, stopped after random counts, with a scan nested in the
    // visitor, overflow records (blob reads inside a scan) and a chain whose pages are
    // scattered by consumes and truncations; in snapshots and in a write transaction.
    let seed = seed();
    let mut rng = Rng::new(seed);
    let db = Database::with_storage(Arc::new(MemStorage::new()), small_pool(), "mem").expect("open");
    let (mut model, mut counter, mut most_pages) = (VecDeque::new(), 0u64, 0);
    let txn = db.begin_write().expect("write");
    Queue::create(&txn, "q").expect("create");
    txn.commit(Durability::Full).expect("commit");
    for _ in 0..30 {
        let txn = db.begin_write().expect("write");
        let mut queue = Queue::open(&txn, "q").expect("open");
        for _ in 0..8 {
            random_step(&mut rng, &mut queue, &mut model, &mut counter);
        }
        let mut appender = queue.appender().expect("appender");
        for _ in 0..1000 {
            counter += 1;
            let bytes = record(counter, if rng.below(50) == 0 { 5000 } else { 40 + rng.index(60) });
            model.push_back((appender.append(&bytes).expect("append"), bytes));
        }
        drop(appender);
        drop(queue);
        txn.commit(Durability::Checksummed).expect("commit");
        if model.is_empty() {
            continue;
        }
        let read = db.begin_read().expect("read");
        let queue = Queue::open(&read, "q").expect("open");
        most_pages = most_pages.max(queue.stats().expect("stats").data_pages);
        assert_random_scans(&queue, &model, &mut rng, seed);
        let write = db.begin_write().expect("write");
        assert_random_scans(&Queue::open(&write, "q").expect("open"), &model, &mut rng, seed);
    }
    assert!(most_pages > 64, "the queue ({most_pages} pages at most) outgrew the pool (64 pages), seed {seed}");
}

/// A file image with queue "q" of 3,000 records of 40 bytes on 4 KiB pages, its
/// records' ids, and the physical page holding the middle record.
fn scan_image() -> (Vec<u8>, Vec<RecordId>, u64) {
    let storage = Arc::new(MemStorage::new());
    let db = Database::with_storage(storage.clone(), small_pool(), "mem").expect("open");
    let txn = db.begin_write().expect("write");
    let mut queue = Queue::create(&txn, "q").expect("create");
    let ids: Vec<RecordId> = (0..3000).map(|n| queue.append(&record(n, 40)).expect("append")).collect();
    drop(queue);
    txn.commit(Durability::Full).expect("commit");
    drop(db);
    let image = storage.snapshot();
    let middle = ids[1500].page.0;
    let phys = (0..image.len() / 4096)
        .filter(|&at| {
            let header = quiredb_engine::page::header(&image[at * 4096..(at + 1) * 4096]);
            header.kind == quiredb_structures::queue::DATA_PAGE && header.logical == middle
        })
        .max_by_key(|&at| quiredb_engine::page::header(&image[at * 4096..(at + 1) * 4096]).txn)
        .expect("the middle record's page is in the image");
    (image, ids, phys as u64)
}

#[test]
fn a_damaged_page_met_by_a_scan_is_corrupted_naming_it() {
    // Proves a page whose checksum fails, met by for_each past the pool (verified in the
    // run buffer, not copied), is Corrupted naming its physical page, and that the
    // records before it were visited from intact pages.
    let (mut image, ids, phys) = scan_image();
    image[phys as usize * 4096 + 2000] ^= 0x10;
    let db = Database::open_storage(Arc::new(MemStorage::from_bytes(image)), small_pool(), "m").expect("reopen");
    let txn = db.begin_read().expect("read");
    let queue = Queue::open(&txn, "q").expect("open");
    let mut seen = 0usize;
    let result = queue.for_each(None, |id, bytes| {
        assert_eq!((id, bytes), (ids[seen], &record(seen as u64, 40)[..]), "record {seen} before the damage");
        seen += 1;
        ControlFlow::Continue(())
    });
    match result {
        Err(quiredb_structures::Error::Engine(quiredb_engine::Error::Corrupted { page, .. })) => {
            assert_eq!(page.0, phys, "the error names the damaged page");
        }
        other => panic!("a damaged page gave {other:?}"),
    }
    assert!(seen > 0 && seen <= 1500, "records before the damaged page were visited ({seen})");
}

#[test]
fn an_io_error_during_a_scan_is_an_error() {
    // Proves a failed read (EIO) at any of the storage operations of a scan past the
    // pool is Error::Io, not a panic or a short scan reported as complete, and that a
    // scan the fault did not reach visits every record.
    let (image, ids, _) = scan_image();
    for after in 0.. {
        let storage = Arc::new(FaultyStorage::new(image.clone(), None));
        let db = Database::open_storage(storage.clone(), small_pool(), "faulty").expect("reopen");
        let txn = db.begin_read().expect("read");
        let queue = Queue::open(&txn, "q").expect("open");
        assert_eq!(queue.len().expect("len"), ids.len() as u64, "head page read before the fault is armed");
        storage.arm(Some(Fault { at_op: storage.ops() + after, kind: FaultKind::Eio }));
        let result = queue.for_each(None, |_, _| ControlFlow::Continue(()));
        if !storage.fault_fired() {
            assert_eq!(result.expect("a scan without a fault"), ids.len() as u64, "every record visited");
            assert!(after > 1, "the scan reads the file");
            break;
        }
        assert!(
            matches!(result, Err(quiredb_structures::Error::Engine(quiredb_engine::Error::Io { .. }))),
            "a failed read at operation {after} of the scan gave {result:?}"
        );
    }
}

/// The payload bytes of data page `page` that no record or slot covers.
fn unused_bytes(page: &[u8]) -> &[u8] {
    let u16_at = |at: usize| usize::from(u16::from_le_bytes([page[at], page[at + 1]]));
    let (count, variable) = (u16_at(24), u16_at(26) & 1 == 1);
    let len_word = u32::from_le_bytes(page[28..32].try_into().expect("4 bytes")) as usize;
    let (used, slots) = if variable { (len_word, 2 * count) } else { (count * len_word, 0) };
    &page[32 + used..page.len() - slots]
}

#[test]
fn appended_pages_hold_zeros_where_no_record_is() {
    // Proves pages the appender allocates without zeroing (over pool frames that held
    // other pages' bytes) reach the file with every byte no record covers zeroed: fixed
    // pages with a remainder, variable pages, a tail page left by one appender and
    // filled by the next.
    let seed = seed();
    let mut rng = Rng::new(seed);
    let db = Database::with_storage(Arc::new(MemStorage::new()), small_pool(), "mem").expect("open");
    let txn = db.begin_write().expect("write");
    let mut junk = Queue::create(&txn, "junk").expect("create");
    for _ in 0..20_000 {
        junk.append(&[0xAB; 40]).expect("append junk");
    }
    junk.drop_queue().expect("drop junk");
    Queue::create(&txn, "q").expect("create");
    txn.commit(Durability::Full).expect("commit");
    for _ in 0..6 {
        let txn = db.begin_write().expect("write");
        let mut queue = Queue::open(&txn, "q").expect("open");
        let mut appender = queue.appender().expect("appender");
        for n in 0..1 + rng.below(3000) {
            let len = if rng.below(3) == 0 { 1 + rng.index(120) } else { 100 };
            appender.append(&record(n, len)).expect("append");
        }
        drop(appender);
        drop(queue);
        txn.commit(Durability::Full).expect("commit");
    }
    let read = db.begin_read().expect("read");
    let head = read.page(read.catalog_entry("q").expect("catalog").expect("q exists").root).expect("head page");
    let mut next = u64::from_le_bytes(head[8..16].try_into().expect("8 bytes"));
    let mut pages = 0;
    while next != 0 {
        let page = read.page(quiredb_engine::PageId(next)).expect("data page");
        assert!(unused_bytes(&page).iter().all(|&b| b == 0), "page {next}: unused bytes not zero, seed {seed}");
        next = u64::from_le_bytes(page[0..8].try_into().expect("8 bytes"));
        pages += 1;
    }
    assert!(pages > 64, "more pages ({pages}) than the pool has frames, seed {seed}");
}
