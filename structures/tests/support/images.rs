//! Crash images of the power-cut simulator: opening one as a restarted process would,
//! and verifying it — the engine's check, every structure's checker, and the contents
//! against the model at the commit counter found, which must lie in the bounds the
//! driver's bookkeeping allows ([`Bounds`]). Verification of the images of one crash
//! point runs on several threads; results come back in image order, so a run is the
//! same whatever the thread count.

use super::book::Bounds;
use super::workload::{Model, diff, load};
use quiredb_engine::storage::{CrashMode, FaultyStorage, Storage};
use quiredb_engine::{Database, Options};
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

/// How a crash image is made from the storage.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cut {
    /// One of the storage's crash modes. `KeepUnsynced` (a process crash) also keeps
    /// the file's length: the OS holds it like the unsynced writes.
    Mode(CrashMode),
    /// A power cut that loses one page write and keeps every other one: the newest
    /// version of a page written twice since the last sync if there is one (its older
    /// version then survives whole), else any page write; chosen by the seed.
    LoseOne(u64),
}

/// Bytes of one page: the unit in which `Cut::LoseOne` keeps or loses writes.
const PAGE_BYTES: usize = 4096;

/// The image of `storage` after a crash now.
pub fn crash_image(storage: &FaultyStorage, cut: Cut) -> Vec<u8> {
    match cut {
        Cut::Mode(mode) => {
            let mut image = storage.crash_image(mode);
            if mode == CrashMode::KeepUnsynced {
                let live = storage.len().expect("an in-memory file has a length") as usize;
                image.resize(image.len().max(live), 0);
            }
            image
        }
        Cut::LoseOne(seed) => {
            let mut offsets = Vec::new();
            storage.crash_image_filtered(PAGE_BYTES, |at, _| {
                offsets.push(at);
                true
            });
            let lost = pick_lost(&offsets, seed);
            let mut index = 0;
            storage.crash_image_filtered(PAGE_BYTES, |_, _| {
                index += 1;
                Some(index - 1) != lost
            })
        }
    }
}

/// Which page write (by issue order) `Cut::LoseOne(seed)` loses.
fn pick_lost(offsets: &[u64], seed: u64) -> Option<usize> {
    let rewrites: Vec<usize> = (0..offsets.len()).filter(|&i| offsets[..i].contains(&offsets[i])).collect();
    let from = if rewrites.is_empty() { (0..offsets.len()).collect() } else { rewrites };
    (!from.is_empty()).then(|| from[(seed % from.len() as u64) as usize])
}

/// What verifying one image found.
#[derive(Clone, Copy, Debug)]
pub struct Recovered {
    /// The commit counter of the recovered state.
    pub counter: u64,
    /// Opening had to fall back to the older meta page.
    pub fell_back: bool,
}

/// Options of a process with a pool of `frames` 4 KiB pages.
pub fn options(frames: usize) -> Options {
    Database::builder().page_size(4096).cache_bytes(frames * 4096).into_options()
}

/// Opens `image` as a restarted process would: every byte of it is durable.
pub fn open_image(image: Vec<u8>, frames: usize) -> quiredb_engine::Result<(Arc<FaultyStorage>, Database)> {
    let storage = Arc::new(FaultyStorage::new(image, None));
    let db = Database::open_storage(storage.clone(), options(frames), "image")?;
    Ok((storage, db))
}

/// Checks `db` and compares its contents with the model of the counter it holds, which
/// must be in `low..=high`.
pub fn verify(db: &Database, history: &BTreeMap<u64, Model>, low: u64, high: u64) -> Result<Recovered, String> {
    let meta = db.meta();
    let rollback = db.rollback().map(|rollback| format!(", {rollback}")).unwrap_or_default();
    let opened =
        format!("opened txn {} ({:?}, last synced {}{rollback})", meta.txn.0, meta.durability, meta.last_synced.0);
    verify_contents(db, history, low, high).map_err(|failure| format!("{opened}: {failure}"))
}

fn verify_contents(db: &Database, history: &BTreeMap<u64, Model>, low: u64, high: u64) -> Result<Recovered, String> {
    let report = quiredb_engine::check(db).map_err(|error| format!("engine check failed: {error}"))?;
    if !report.problems.is_empty() {
        return Err(format!("engine check: {:?}", report.problems));
    }
    let txn = db.begin_read().map_err(|error| format!("begin_read: {error}"))?;
    let problems = quiredb_structures::check::check_all(&txn).map_err(|error| format!("structure check: {error}"))?;
    if !problems.is_empty() {
        return Err(format!("structure check: {problems:?}"));
    }
    let found = load(&txn).map_err(|error| format!("reading the structures: {error}"))?;
    let counter = found.commit;
    if counter < low {
        return Err(format!("acknowledged commit {low} lost: found commit {counter} (allowed {low}..={high})"));
    }
    if counter > high {
        return Err(format!("found commit {counter}, never attempted (allowed {low}..={high})"));
    }
    let model = history.get(&counter).unwrap_or_else(|| panic!("the history keeps commits {low}..={high}"));
    if let Some(difference) = diff(model, &found) {
        let same_as: Vec<u64> = history.values().filter(|m| diff(m, &found).is_none()).map(|m| m.commit).collect();
        return Err(format!(
            "commit {counter} (allowed {low}..={high}): {difference}; equal to the models of {same_as:?}"
        ));
    }
    Ok(Recovered { counter, fell_back: report.rollback.is_some() })
}

/// Opens and verifies one image; a panic becomes a failure naming it.
fn verify_image(image: &[u8], history: &BTreeMap<u64, Model>, low: u64, high: u64) -> Result<Recovered, String> {
    let run = || {
        let (_, db) = open_image(image.to_vec(), 64).map_err(|error| format!("open failed: {error}"))?;
        verify(&db, history, low, high)
    };
    catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|payload| {
        let text =
            payload.downcast_ref::<String>().cloned().or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).into()));
        Err(format!("panicked: {}", text.unwrap_or_default()))
    })
}

/// Verifies every image on up to `threads` threads; results in image order.
pub fn verify_all(
    images: &[(Cut, Vec<u8>)],
    history: &BTreeMap<u64, Model>,
    bounds: Bounds,
    threads: usize,
) -> Vec<Result<Recovered, String>> {
    let threads = threads.clamp(1, images.len().max(1));
    let mut results: Vec<(usize, Result<Recovered, String>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|worker| {
                scope.spawn(move || {
                    let mine = images.iter().enumerate().skip(worker).step_by(threads);
                    mine.map(|(index, (cut, image))| {
                        (index, verify_image(image, history, bounds.low(*cut), bounds.attempted))
                    })
                    .collect::<Vec<_>>()
                })
            })
            .collect();
        workers.into_iter().flat_map(|worker| worker.join().expect("verify_image catches panics")).collect()
    });
    results.sort_by_key(|(index, _)| *index);
    results.into_iter().map(|(_, result)| result).collect()
}
