//! Snapshot isolation: a reader keeps its view through many commits, its pages are not
//! reused while it lives, and readers never wait for the writer.

use super::common::*;
use quiredb_engine::{Durability, PageKind, PageRead};
use rand::Rng;

#[test]
fn old_reader_keeps_its_snapshot_and_its_pages_through_many_commits() {
    // Proves: the reader sees its snapshot after 50 commits that rewrite every page; the
    // file grows while it lives (its pages are not reused) and stops growing after.
    let (storage, db) = memory_db(small_options());
    let ids = committed_pages(&db, 100);
    let old: Model = ids.iter().zip(0u64..).map(|(id, value)| (id.0, value)).collect();
    let reader = db.begin_read().unwrap();
    let rewrite = |round: u64| {
        let txn = db.begin_write().unwrap();
        for (index, id) in ids.iter().enumerate() {
            fill(&mut txn.page_mut(*id).unwrap(), round * 1000 + index as u64);
        }
        txn.commit(Durability::Checksummed).unwrap();
    };
    for round in 1..=50 {
        rewrite(round);
    }
    assert_matches(&reader, &old);
    let pages_with_reader = db.meta().page_count;
    assert!(pages_with_reader > 50 * 100, "old versions were kept: {pages_with_reader} pages");
    drop(reader);
    for round in 51..=100 {
        rewrite(round);
    }
    let growth = db.meta().page_count - pages_with_reader;
    assert!(growth < 300, "pages are reused once the reader is gone (grew by {growth})");
    let new: Model = ids.iter().zip(0u64..).map(|(id, index)| (id.0, 100_000 + index)).collect();
    assert_matches(&db.begin_read().unwrap(), &new);
    drop(storage);
}

#[test]
fn readers_do_not_wait_for_an_open_writer() {
    // Proves: begin_read and page reads succeed on other threads while the writer holds
    // its transaction open, and they see the last committed state.
    let (_storage, db) = memory_db(small_options());
    let txn = db.begin_write().unwrap();
    let id = txn.alloc_page(PageKind::structure(19)).unwrap().id();
    fill(&mut txn.page_mut(id).unwrap(), 7);
    txn.commit(Durability::Full).unwrap();
    let writer = db.begin_write().unwrap();
    fill(&mut writer.page_mut(id).unwrap(), 8);
    assert!(db.try_begin_write().unwrap().is_none(), "one writer at a time");
    std::thread::scope(|scope| {
        let handles: Vec<_> =
            (0..4).map(|_| scope.spawn(|| value_of(&db.begin_read().unwrap().page(id).unwrap()))).collect();
        for handle in handles {
            assert_eq!(handle.join().unwrap(), Some(7));
        }
    });
    writer.commit(Durability::Full).unwrap();
    assert_eq!(value_of(&db.begin_read().unwrap().page(id).unwrap()), Some(8));
}

#[test]
fn a_page_read_unpinned_keeps_its_bytes_while_commits_rewrite_it_and_the_pool_evicts_it() {
    // Proves: a page that indexes others is read without a pin inside `with_page`
    // (`pool/grace.rs`), and the bytes the reader holds there stay its snapshot's while
    // 40 commits rewrite the page (the writer copies it instead of taking its frame) and
    // fill a 64-frame pool many times over (the frame is retired, not reused, until the
    // reader has moved on); the frame is then freed.
    let (_storage, db) = memory_db(small_options());
    let txn = db.begin_write().unwrap();
    let mut page = txn.alloc_page(kind_for(1)).unwrap();
    let id = page.id();
    fill(&mut page, 1);
    drop(page);
    txn.commit(Durability::Full).unwrap();
    assert!(kind_for(1).indexes_others());
    let reader = db.begin_read().unwrap();
    drop(reader.page(id).unwrap()); // translated: its frame is now seen by this snapshot
    let evictions = db.stats().evictions;
    let rewrite = |round: u64| {
        let txn = db.begin_write().unwrap();
        fill(&mut txn.page_mut(id).unwrap(), 100 + round);
        for other in 0..100 {
            fill(&mut txn.alloc_page(PageKind::structure(16)).unwrap(), round * 1000 + other);
        }
        txn.commit(Durability::Checksummed).unwrap();
    };
    let held = reader
        .with_page(id, |page| {
            for round in 0..40u64 {
                rewrite(round);
            }
            value_of(page)
        })
        .unwrap();
    assert_eq!(held, Some(1), "the bytes held are the snapshot's");
    assert!(db.stats().evictions > evictions + 1000, "the pool was churned");
    assert_eq!(value_of(&reader.page(id).unwrap()), Some(1));
    drop(reader);
    rewrite(40);
    assert_eq!(value_of(&db.begin_read().unwrap().page(id).unwrap()), Some(140));
}

#[test]
fn concurrent_readers_of_many_snapshots_see_exactly_their_snapshot() {
    // Proves: the shared translation table never gives a reader another snapshot's page.
    // A writer runs random transactions (allocate, rewrite, free: ids are remapped and
    // reused) while two readers keep up to three snapshots each alive and compare
    // random pages with the model of their snapshot. More live ids than table slots,
    // so slots are shared and evicted all the time.
    let seed = seed("concurrent_readers_of_many_snapshots_see_exactly_their_snapshot");
    let (_storage, db) = memory_db(small_options());
    let mut model: Model = committed_pages(&db, 1500).iter().zip(0u64..).map(|(id, value)| (id.0, value)).collect();
    let history = parking_lot::Mutex::new(std::collections::HashMap::new());
    history.lock().insert(db.meta().txn.0, std::sync::Arc::new(model.clone()));
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        for reader in 0..2u64 {
            let (db, history, done) = (&db, &history, &done);
            scope.spawn(move || {
                let mut rng = rng(seed ^ (reader + 1));
                let mut held = std::collections::VecDeque::new();
                while !done.load(std::sync::atomic::Ordering::Acquire) {
                    let txn = db.begin_read().unwrap();
                    let expected = history.lock()[&txn.meta().txn.0].clone();
                    held.push_back((txn, expected));
                    if held.len() > 3 {
                        held.pop_front();
                    }
                    for (txn, expected) in &held {
                        for _ in 0..20 {
                            let (&id, &value) = expected.iter().nth(rng.random_range(0..expected.len())).unwrap();
                            let page = txn.page(quiredb_engine::PageId(id)).unwrap();
                            assert_eq!(value_of(&page), Some(value), "page {id} in snapshot {}", txn.meta().txn.0);
                        }
                    }
                }
            });
        }
        // Stops the readers even if the writer panics (else the scope would wait forever).
        struct Done<'a>(&'a std::sync::atomic::AtomicBool);
        impl Drop for Done<'_> {
            fn drop(&mut self) {
                self.0.store(true, std::sync::atomic::Ordering::Release);
            }
        }
        let _done = Done(&done);
        let mut rng = rng(seed);
        for round in 1..=300u64 {
            let txn = db.begin_write().unwrap();
            random_txn(&txn, &mut rng, &mut model, round).unwrap();
            history.lock().insert(txn.txn_id().0, std::sync::Arc::new(model.clone()));
            txn.commit(random_durability(&mut rng)).unwrap();
        }
    });
    assert_matches(&db.begin_read().unwrap(), &model);
}

#[test]
fn prefetch_hints_change_nothing_a_reader_sees() {
    // Proves: prefetching cached, uncached, never-allocated and far-out ids, with ranges
    // inside, across and past the payload, neither fails nor changes any page read after.
    let (_storage, db) = memory_db(small_options());
    let ids = committed_pages(&db, 40);
    let model: Model = ids.iter().zip(0u64..).map(|(id, value)| (id.0, value)).collect();
    let reader = db.begin_read().unwrap();
    let payload = reader.payload_size();
    assert_matches(&reader, &model);
    let far = [quiredb_engine::PageId(u64::MAX), quiredb_engine::PageId(1 << 40)];
    for id in ids.iter().chain(&far) {
        reader.prefetch(*id, &[0..8, payload - 64..payload + 4096, usize::MAX - 1..usize::MAX]);
    }
    assert_matches(&reader, &model);
    let writer = db.begin_write().unwrap();
    writer.prefetch(ids[0], std::slice::from_ref(&(0..payload)));
    drop(writer);
    assert_matches(&db.begin_read().unwrap(), &model);
}

#[test]
fn an_owned_reader_moves_to_another_thread_and_outlives_the_callers_handle() {
    // Proves: `begin_read_owned` gives a snapshot that crosses into a spawned thread,
    // sees its own version while the main thread commits, and keeps the database open
    // after the caller dropped its `Arc`; dropping it withdraws the reader.
    let (_storage, db) = memory_db(small_options());
    let db = std::sync::Arc::new(db);
    let ids = committed_pages(&db, 20);
    let old: Model = ids.iter().zip(0u64..).map(|(id, value)| (id.0, value)).collect();
    let reader = db.begin_read_owned().unwrap();
    let txn = db.begin_write().unwrap();
    for id in &ids {
        fill(&mut txn.page_mut(*id).unwrap(), 7);
    }
    txn.commit(Durability::Checksummed).unwrap();
    assert_eq!(db.stats().oldest_reader_commits_behind, 1, "the owned reader is announced");
    let weak = std::sync::Arc::downgrade(&db);
    drop(db);
    let seen = std::thread::spawn(move || {
        assert_matches(&reader, &old);
        reader.meta().txn
    })
    .join()
    .expect("the reader thread does not panic");
    assert!(weak.upgrade().is_none(), "the last owned reader closed the database");
    assert!(seen.0 > 0);
}
