//! `alloc_page_for_overwrite` against `alloc_page`: with a pool full of frames that
//! held other pages, `alloc_page` still hands out a zeroed payload, a page allocated
//! for overwrite and fully written reads back exactly after commit and reopen, and the
//! file checks clean.

use super::common::*;
use quiredb_engine::{Database, Durability, PageKind, PageRead};

#[test]
fn pages_for_overwrite_hold_what_was_written_and_plain_pages_stay_zeroed() {
    let (storage, db) = memory_db(small_options());
    // More committed pages than frames, read back so every frame has held a page.
    let old = committed_pages(&db, 200);
    let snapshot = db.begin_read().expect("reader");
    for id in &old {
        assert!(value_of(&snapshot.page(*id).expect("page")).is_some());
    }
    drop(snapshot);
    let txn = db.begin_write().expect("writer");
    let mut written = Vec::new();
    for value in 0..150u64 {
        let mut zeroed = txn.alloc_page(PageKind::structure(16)).expect("page");
        assert!(zeroed.iter().all(|&b| b == 0), "alloc_page {value}: payload not zeroed");
        zeroed[..8].copy_from_slice(&1u64.to_le_bytes());
        drop(zeroed);
        let mut page = txn.alloc_page_for_overwrite(PageKind::structure(16)).expect("page");
        fill(&mut page, 1000 + value);
        written.push((page.id(), 1000 + value));
    }
    txn.commit(Durability::Full).expect("commit");
    drop(db);
    let db = Database::with_storage(storage, small_options(), "memory").expect("reopen");
    let snapshot = db.begin_read().expect("reader");
    for (id, value) in &written {
        assert_eq!(value_of(&snapshot.page(*id).expect("page")), Some(*value), "page {id:?}");
    }
    let report = quiredb_engine::check(&db).expect("check");
    assert!(report.is_clean(), "{report:?}");
}
