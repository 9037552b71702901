//! Crafted files (issue 18, scenarios 9 and 10): counts, pointers and lists from disk
//! that lie. Opening, reading and `check` answer with errors or problems that name the
//! page — never a panic, an abort on a huge allocation, or an endless chain — and
//! `check` catches allocator state that would make the next `alloc_page` overwrite a
//! live page. Also the image-editing helpers the durability tests share.

use super::common::*;
use quiredb_engine::Meta;
use quiredb_engine::testing::{RECORD_BODY, Record, record_page_body};
use quiredb_engine::{Database, Durability, Error, PageId, PageKind, PageRead, StructureKind, check, page};
use std::sync::Arc;

/// Page size of the test databases (`small_options`).
pub const PAGE: usize = 4096;

/// The logical id in a page's header.
pub fn logical_of(page: &[u8]) -> u64 {
    page::read_u64(page, 8)
}

/// Commits `count` new pages holding `0..count` (`Full`); returns the model.
pub fn committed_model(db: &Database, count: u64) -> Model {
    committed_pages(db, count).into_iter().zip(0..).map(|(id, value)| (id.0, value)).collect()
}

fn page_at(image: &[u8], phys: u64) -> &[u8] {
    &image[phys as usize * PAGE..(phys as usize + 1) * PAGE]
}

fn page_at_mut(image: &mut [u8], phys: u64) -> &mut [u8] {
    &mut image[phys as usize * PAGE..(phys as usize + 1) * PAGE]
}

/// The newest valid meta of an image and its slot.
pub fn newest_slot(image: &[u8]) -> (Meta, u64) {
    (0..2)
        .filter_map(|slot| Meta::decode(slot, page_at(image, slot)).ok().map(|meta| (meta, slot)))
        .max_by_key(|(meta, _)| meta.txn)
        .expect("a valid meta")
}

/// The newest valid meta of an image.
pub fn newest_meta(image: &[u8]) -> Meta {
    newest_slot(image).0
}

/// Rewrites the newest meta through `edit`.
pub fn edit_meta(image: &mut [u8], edit: impl FnOnce(&mut Meta)) {
    let (mut meta, slot) = newest_slot(image);
    edit(&mut meta);
    meta.encode(slot, page_at_mut(image, slot));
}

/// The physical page the newest one-level page map gives `logical`.
pub fn map_entry(image: &[u8], logical: u64) -> u64 {
    let meta = newest_meta(image);
    assert_eq!(meta.map_depth, 1, "test databases have a one-level map");
    page::read_u64(page_at(image, meta.map_root.0), 32 + 8 * logical as usize)
}

/// Points `logical` at physical page `phys` in the newest map (resealed).
pub fn set_map_entry(image: &mut [u8], logical: u64, phys: u64) {
    let root = newest_meta(image).map_root.0;
    let map = page_at_mut(image, root);
    page::write_u64(map, 32 + 8 * logical as usize, phys);
    page::reseal(map);
}

/// Rewrites the newest commit record (one page) through `edit`, with the meta's CRC.
fn edit_record(image: &mut [u8], edit: impl FnOnce(&mut Record)) {
    let meta = newest_meta(image);
    let head = meta.record_head;
    let (next, stream) = record_page_body(page_at(image, head.0), head).unwrap();
    assert_eq!(next, 0, "a one-page record");
    let mut record = Record::decode(stream, head, meta.page_count).unwrap();
    edit(&mut record);
    let stream = record.encode();
    let body = page_at_mut(image, head.0);
    page::write_u32(body, 40, stream.len() as u32);
    body[RECORD_BODY..RECORD_BODY + stream.len()].copy_from_slice(&stream);
    page::reseal(body);
    edit_meta(image, |meta| {
        meta.record_crc = quiredb_engine::page::crc32c(&stream);
        meta.record_len = stream.len() as u32;
    });
}

/// Flips a payload byte of a data page that transaction `txn` wrote (checksum left stale).
pub fn damage_page_written_by(path: &std::path::Path, txn: u64) {
    let mut image = std::fs::read(path).unwrap();
    let pages = (image.len() / PAGE) as u64;
    let victim = (2..pages)
        .find(|&phys| {
            let bytes = page_at(&image, phys);
            let head = page::header(bytes);
            head.kind == PageKind::structure(16) && head.txn.0 == txn && page::verify(bytes, page::PhysId(phys)).is_ok()
        })
        .expect("a page of that transaction");
    page_at_mut(&mut image, victim)[100] ^= 0x10;
    std::fs::write(path, image).unwrap();
}

fn open(image: Vec<u8>) -> quiredb_engine::Result<Database> {
    Database::open_storage(Arc::new(quiredb_engine::storage::MemStorage::from_bytes(image)), small_options(), "crafted")
}

fn sample_image() -> Vec<u8> {
    let (storage, db) = memory_db(small_options());
    committed_model(&db, 10);
    drop(db);
    storage.snapshot()
}

#[test]
fn huge_page_counts_are_refused_without_allocating_them() {
    for count in [(1u64 << 51) + 3, (1 << 52) + 1, u64::MAX / 2, u64::MAX] {
        let mut image = sample_image();
        for slot in 0..2 {
            let mut meta = Meta::decode(slot, page_at(&image, slot)).unwrap();
            meta.page_count = count;
            meta.encode(slot, page_at_mut(&mut image, slot));
        }
        let error = open(image.clone()).err().unwrap_or_else(|| panic!("page count {count} opened"));
        assert!(matches!(error, Error::Corrupted { .. } | Error::Truncated { .. }), "{count}: {error}");
        // Only the newest slot crafted: the older meta serves (or the error names it).
        let mut image = sample_image();
        edit_meta(&mut image, |meta| meta.page_count = count);
        if let Ok(db) = open(image) {
            assert!(db.rollback().is_some(), "{count}");
            check(&db).unwrap();
        }
    }
}

#[test]
fn a_catalog_chain_that_loops_is_an_error_naming_its_page() {
    let (storage, db) = memory_db(small_options());
    let txn = db.begin_write().unwrap();
    txn.create_structure("s", StructureKind::QUEUE, b"", PageId(0)).unwrap();
    txn.commit(Durability::Full).unwrap();
    let root = db.meta().catalog_root.0;
    drop(db);
    let mut image = storage.snapshot();
    let phys = map_entry(&image, root);
    let catalog = page_at_mut(&mut image, phys);
    page::write_u64(catalog, 32, root); // next = itself
    page::reseal(catalog);
    let db = open(image).unwrap();
    let pins = |db: &Database| db.stats().hits + db.stats().misses;
    let before = pins(&db);
    let error = db.begin_read().unwrap().catalog_list().expect_err("a looping chain is refused");
    assert!(matches!(&error, Error::CorruptedLogical { page, .. } if page.0 == root), "{error}");
    let pinned = pins(&db) - before;
    assert!(pinned < 10, "the looping chain was followed {pinned} pages");
}

#[test]
fn check_catches_a_next_logical_id_below_a_mapped_one() {
    let (storage, db) = memory_db(in_place_options());
    committed_model(&db, 10);
    let txn = db.begin_write().unwrap();
    for id in 1..=5 {
        txn.free_page(PageId(id)).unwrap();
    }
    txn.commit(Durability::Full).unwrap();
    drop(db);
    let mut image = storage.snapshot();
    edit_meta(&mut image, |meta| meta.logical_next = 7);
    let report = check(&open(image).unwrap()).unwrap();
    assert!(report.problems.iter().any(|problem| problem.contains("logical page 10 is mapped")), "{:?}", report);
}

#[test]
fn check_catches_a_free_logical_id_that_is_mapped() {
    let (storage, db) = memory_db(in_place_options());
    committed_model(&db, 10);
    let txn = db.begin_write().unwrap();
    txn.free_page(PageId(3)).unwrap();
    txn.commit(Durability::Full).unwrap();
    drop(db);
    let mut image = storage.snapshot();
    edit_record(&mut image, |record| record.logical.push(4));
    let db = open(image).unwrap();
    let report = check(&db).unwrap();
    assert!(report.problems.iter().any(|problem| problem.contains("logical id 4 is listed free")), "{:?}", report);
}

#[test]
fn a_next_logical_id_beyond_the_map_is_an_error_not_an_endless_map() {
    // 4 KiB pages: 508 ids a map page, so 508^7 < 2^63 ids are addressable.
    for next in [u64::MAX, u64::MAX - 1, 1 << 63] {
        let mut image = sample_image();
        edit_meta(&mut image, |meta| meta.logical_next = next);
        let db = open(image).unwrap();
        let txn = db.begin_write().unwrap();
        let error = txn.alloc_page(PageKind::structure(16)).err().expect("refused");
        assert!(matches!(error, Error::CorruptedLogical { .. }), "{next}: {error}");
    }
}

#[test]
fn a_page_locked_twice_in_one_transaction_is_an_error_not_a_panic() {
    let (_, db) = memory_db(small_options());
    committed_model(&db, 3);
    let txn = db.begin_write().unwrap();
    let held = txn.page_mut(PageId(1)).unwrap();
    assert!(matches!(txn.page_mut(PageId(1)).err(), Some(Error::PageBusy(1))));
    assert!(matches!(txn.page(PageId(1)).err(), Some(Error::PageBusy(1))));
    assert!(matches!(txn.free_page(PageId(1)), Err(Error::PageBusy(1))));
    drop(held);
    txn.free_page(PageId(1)).unwrap();
    txn.commit(Durability::Full).unwrap();
    assert!(check(&db).unwrap().is_clean());
}
