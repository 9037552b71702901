//! The memory-mapped read path when the kernel cannot read a mapped page: the reader
//! gets `Error::Io`, not a `SIGBUS` that ends the process (`storage/mapped.rs`).
//!
//! A page cut off the file's end by another descriptor faults exactly as a failed disk
//! read does; the scenarios run in child processes, so that an engine without the
//! fault handler fails the test instead of killing the test binary. A fault outside the
//! database's maps still ends the process: the handler passes it on.

use super::child;
use super::common::*;
use quiredb_engine::{Database, Error, PageRead};

#[test]
fn a_mapped_page_the_kernel_cannot_read_is_an_io_error_not_a_sigbus() {
    // Proves: with `mmap_reads`, a mapped page that cannot be read is an I/O error for
    // the reader, whether it was checksummed before or is read for the first time;
    // the pages the file still holds read back intact, in the same snapshot and in
    // new ones.
    let (status, stdout, stderr) = run_child("mapped::mapped_fault_child");
    assert!(status.success() && stdout.contains("faults were errors"), "child {status:?}\n{stdout}\n{stderr}");
}

/// Runs the ignored test `child_test` of this binary in a child process on a database
/// in a fresh directory: its exit status, stdout and stderr.
fn run_child(child_test: &str) -> (std::process::ExitStatus, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let output = child::exe_args(child_test, &dir.path().join("child.quire"), 0).output().unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (output.status, text(&output.stdout), text(&output.stderr))
}

/// The child of the test above: reads pages through the map after the file lost its
/// upper half.
#[test]
#[ignore = "run by a_mapped_page_the_kernel_cannot_read_is_an_io_error_not_a_sigbus"]
fn mapped_fault_child() {
    let Some(path) = std::env::var_os("QUIRE_CRASH_DB") else { return };
    let options = Database::builder().page_size(4096).cache_bytes(64 * 4096).mmap_reads(true).into_options();
    let db = Database::create(&path, options).unwrap();
    let ids = committed_pages(&db, 2000);
    let reader = db.begin_read().unwrap();
    // Every other page is read (and checksummed) before the cut.
    for (value, id) in ids.iter().enumerate().step_by(2) {
        assert_eq!(value_of(&reader.page(*id).unwrap()), Some(value as u64));
    }
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(file.metadata().unwrap().len() / 2).unwrap();
    let (mut verified_errors, mut fresh_errors) = (0, 0);
    for (value, id) in ids.iter().enumerate() {
        match reader.page(*id) {
            Ok(page) => assert_eq!(value_of(&page), Some(value as u64), "page {id:?}"),
            Err(Error::Io { .. }) if value % 2 == 0 => verified_errors += 1,
            Err(Error::Io { .. }) => fresh_errors += 1,
            Err(error) => panic!("page {id:?}: {error}"),
        }
    }
    assert!(verified_errors > 0 && fresh_errors > 0, "{verified_errors} {fresh_errors}");
    drop(reader);
    let reader = db.begin_read().unwrap();
    let intact = ids.iter().enumerate().filter(|(value, id)| match reader.page(**id) {
        Ok(page) => value_of(&page) == Some(*value as u64) || panic!("page {id:?} read wrong"),
        Err(Error::Io { .. }) => false,
        Err(error) => panic!("page {id:?}: {error}"),
    });
    assert!(intact.count() > 500, "the pages below the cut read back");
    println!("faults were errors: {verified_errors} checksummed before, {fresh_errors} read first");
}

#[test]
fn a_fault_outside_the_databases_maps_still_ends_the_process() {
    // Proves: the handler passes on what is not its own: a program's own mapping of
    // another file that faults dies of SIGBUS as it would without the engine.
    use std::os::unix::process::ExitStatusExt;
    let (status, stdout, stderr) = run_child("mapped::foreign_fault_child");
    assert!(stdout.contains("database mapped"), "the child got as far as its own fault: {stdout}\n{stderr}");
    assert_eq!(status.signal(), Some(libc::SIGBUS), "{status:?}\n{stdout}");
}

/// The child of the test above: maps the database (installing the handler), then
/// faults in a map of its own.
#[test]
#[ignore = "run by a_fault_outside_the_databases_maps_still_ends_the_process"]
fn foreign_fault_child() {
    let Some(path) = std::env::var_os("QUIRE_CRASH_DB") else { return };
    let path = std::path::PathBuf::from(path);
    let options = Database::builder().page_size(4096).cache_bytes(64 * 4096).mmap_reads(true).into_options();
    let db = Database::create(&path, options).unwrap();
    let ids = committed_pages(&db, 300);
    let reader = db.begin_read().unwrap();
    for (value, id) in ids.iter().enumerate() {
        assert_eq!(value_of(&reader.page(*id).unwrap()), Some(value as u64));
    }
    println!("database mapped");
    let other = path.with_extension("other");
    let file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&other).unwrap();
    file.set_len(64 * 1024).unwrap();
    // SAFETY: the file is this test's own; cutting it under the map is the point.
    let map = unsafe { memmap2::Mmap::map(&file) }.unwrap();
    file.set_len(0).unwrap();
    let byte = std::hint::black_box(map[8192]);
    println!("survived a fault in a map of its own, read {byte}");
}
