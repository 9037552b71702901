//! Corruption: a single flipped bit in any page makes reads of that page fail with
//! `Corrupted` naming it (or, for a meta page, makes open use the other meta) — never
//! wrong data, never a panic. Foreign, truncated, newer and mismatched files are named
//! errors.

use super::common::*;
use quiredb_engine::storage::MemStorage;
use quiredb_engine::{
    Database, DatabaseBuilder, Durability, Error, Options, PageId, PageKind, PageRead, StructureKind, check,
};
use rand::Rng;
use std::sync::Arc;

/// A database with every page kind: data pages, a two-level page map, a catalog, a
/// commit record with free runs. Returns its image and the model of both commits.
fn sample() -> (Vec<u8>, Model, Model) {
    let (storage, db) = memory_db(small_options());
    let txn = db.begin_write().unwrap();
    let mut model = Model::new();
    for value in 0..600u64 {
        let mut page = txn.alloc_page(PageKind::structure(16)).unwrap();
        fill(&mut page, value);
        model.insert(page.id().0, value);
    }
    txn.create_structure("tree", StructureKind::BTREE, b"params", PageId(1)).unwrap();
    txn.commit(Durability::Full).unwrap();
    let first = model.clone();
    let txn = db.begin_write().unwrap();
    for (&id, value) in model.iter_mut().step_by(7) {
        *value += 10_000;
        fill(&mut txn.page_mut(PageId(id)).unwrap(), *value);
    }
    txn.commit(Durability::Full).unwrap();
    drop(db);
    (storage.snapshot(), first, model)
}

/// Opens an image and reads everything; returns the first error, or which model the
/// data matched. Panics if any page holds data of neither model.
fn read_everything(image: Vec<u8>, first: &Model, second: &Model) -> Result<&'static str, Error> {
    let db = Database::open_storage(Arc::new(MemStorage::from_bytes(image)), small_options(), "flipped")?;
    let txn = db.begin_read()?;
    let expected = if txn.meta().txn.0 == 2 { second } else { first };
    for (&id, &value) in expected {
        let page = txn.page(PageId(id))?;
        assert_eq!(value_of(&page), Some(value), "wrong data in logical page {id}");
    }
    txn.catalog_list()?;
    drop(db.begin_write()?); // reads the commit record
    Ok(if std::ptr::eq(expected, second) { "newest" } else { "previous" })
}

#[test]
fn any_flipped_bit_is_caught_in_every_page() {
    // Proves: for every page of the file, a random bit flip yields Corrupted (naming that
    // page) or, in the newest meta, a fall back to the previous commit.
    let seed = seed("bit flips");
    let mut rng = rng(seed);
    let (image, first, second) = sample();
    let page_size = 4096;
    let pages = image.len() / page_size;
    let newest_meta = {
        let db = Database::open_storage(Arc::new(MemStorage::from_bytes(image.clone())), small_options(), "x").unwrap();
        assert!(check(&db).unwrap().is_clean());
        let slot = (0..2).find(|slot| {
            let at = slot * page_size + 48;
            u64::from_le_bytes(image[at..at + 8].try_into().unwrap()) == 2
        });
        slot.expect("one meta holds txn 2")
    };
    let mut outcomes = [0usize; 3];
    for page in 0..pages {
        let mut flipped = image.clone();
        let bit = rng.random_range(0..page_size * 8);
        flipped[page * page_size + bit / 8] ^= 1 << (bit % 8);
        match read_everything(flipped, &first, &second) {
            Ok("newest") => outcomes[0] += 1,
            Ok(_) => {
                assert_eq!(page, newest_meta, "only a bad newest meta falls back");
                outcomes[1] += 1;
            }
            Err(Error::Corrupted { page: bad, .. }) => {
                assert_eq!(bad.0 as usize, page, "the error names the flipped page");
                outcomes[2] += 1;
            }
            Err(other) => panic!("page {page}, bit {bit}: unexpected error {other}"),
        }
    }
    println!("bit flips: {outcomes:?} (unaffected: free/unused pages, fall back, corrupted)");
    assert_eq!(outcomes[1], 1, "the newest meta page falls back once");
    assert!(outcomes[2] > 600, "data, map, catalog and record pages are all verified");
}

#[test]
fn both_metas_bad_foreign_truncated_newer_and_mismatched_files_are_named_errors() {
    // Proves: each kind of unusable file gives its own error, never a panic.
    let (image, _, _) = sample();
    let open = |bytes: Vec<u8>, options: Options| {
        Database::open_storage(Arc::new(MemStorage::from_bytes(bytes)), options, "f").map(|_| ())
    };
    let mut both = image.clone();
    both[100] ^= 1;
    both[4096 + 100] ^= 1;
    assert!(matches!(open(both, small_options()), Err(Error::Corrupted { .. })));
    let foreign = b"SQLite format 3\0".repeat(1000);
    assert!(matches!(open(foreign, small_options()), Err(Error::NotADatabase { .. })));
    assert!(matches!(open(Vec::new(), small_options()), Err(Error::NotADatabase { .. })));
    assert!(matches!(open(image[..6000].to_vec(), small_options()), Err(Error::Truncated { .. })));
    assert!(matches!(open(image[..image.len() / 2].to_vec(), small_options()), Err(Error::Truncated { .. })));
    let mut newer = image.clone();
    for slot in 0..2 {
        let meta = &mut newer[slot * 4096..(slot + 1) * 4096];
        meta[40] = 99;
        quiredb_engine::page::reseal(meta);
    }
    assert!(matches!(open(newer, small_options()), Err(Error::FormatVersion { found: 99, .. })));
    let other_size = DatabaseBuilder::from(small_options()).page_size(8192).into_options();
    assert!(matches!(open(image.clone(), other_size), Err(Error::PageSizeMismatch { found: 4096, requested: 8192 })));
}

#[test]
fn a_second_handle_on_the_same_file_is_locked_out() {
    // Proves: a second open of a file in use is a clear "locked" error.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("locked.quire");
    let _db = Database::create(&path, Options::default()).unwrap();
    let error = Database::open(&path, Options::default()).unwrap_err();
    assert!(matches!(error, Error::Locked { .. }), "{error}");
    assert!(error.to_string().contains("locked"));
}

#[test]
fn opening_a_missing_file_says_so_and_creates_nothing() {
    // Proves: `open` of a path that does not exist is an I/O error that names the path
    // and says the file is missing (not the bare "entity not found"), and leaves no file.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing.quire");
    let error = Database::open(&path, Options::default()).map(|_| ()).unwrap_err();
    let text = error.to_string();
    assert!(matches!(&error, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound), "{text}");
    assert!(text.contains("missing.quire") && text.contains("no such file"), "{text}");
    assert!(!path.exists());
}
