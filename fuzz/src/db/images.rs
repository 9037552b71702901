//! The seed database images of the `db` target, built in memory at run time through
//! the public API (`Database::with_storage` on a `MemStorage`), so they always have
//! the format of the engine being fuzzed — no binary image is committed.
//!
//! Each image holds structures of every kind after several commits (so the commit
//! record lists freed pages), with 4 KiB pages and a pool smaller than some images
//! (so reads evict). The last image has a commit log whose records have not been
//! checkpointed (opening it replays them); a program picks it with first byte
//! [`LOGGED_SELECTOR`]. Read next: `program.rs`.

use std::sync::{Arc, OnceLock};

use quiredb_engine::storage::MemStorage;
use quiredb_engine::{Database, Durability, Options, WriteTxn};
use quiredb_structures::btree::BTree;
use quiredb_structures::queue::Queue;
use quiredb_structures::rtree::{RTree, Rect};
use quiredb_structures::{Result, blob};

use crate::rng::Rng;

/// Page size of every image.
pub const PAGE_SIZE: usize = 4096;

/// The options every image is created and opened with: 4 KiB pages, a 64-page pool.
pub fn options() -> Options {
    Database::builder().page_size(PAGE_SIZE as u32).cache_bytes(64 * PAGE_SIZE).into_options()
}

/// Pages of the commit log of the logged image (and of a database opened from it).
pub const LOG_PAGES: u64 = 64;
/// Images a first program byte picks modulo this number (the images before the log).
pub const PLAIN_IMAGES: usize = 4;
/// First program byte that picks the logged image (no saved program starts with it;
/// any other byte picks one of the first four images, as before the log existed).
pub const LOGGED_SELECTOR: u8 = 249;

/// The options of an image with a commit log (format version 7; 4 to 6 in older corpus files).
pub fn logged_options() -> Options {
    quiredb_engine::DatabaseBuilder::from(options()).commit_log_pages(LOG_PAGES).into_options()
}

/// The seed images, built on first use.
pub fn images() -> &'static [Vec<u8>] {
    static IMAGES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    IMAGES.get_or_init(|| {
        let plain = [small as Recipe, larger, points_5d].map(|recipe| build(&recipe, options()));
        let mut images = vec![build(&|_| Ok(()), options())];
        images.extend(plain);
        images.push(build(&logged, logged_options()));
        images
    })
}

type Recipe = fn(&Database) -> Result<()>;

/// Runs `recipe` on a fresh in-memory database and returns its file.
fn build(recipe: &dyn Fn(&Database) -> Result<()>, options: Options) -> Vec<u8> {
    let storage = Arc::new(MemStorage::new());
    let db = Database::with_storage(storage.clone(), options, "seed").expect("a new in-memory database opens");
    recipe(&db).expect("building a seed image through the public API succeeds");
    drop(db);
    storage.snapshot()
}

fn bytes(rng: &mut Rng, len: usize) -> Vec<u8> {
    (0..len).map(|_| rng.byte()).collect()
}

/// A B+tree with blob-sized values, a queue with an overflow record, a 2-D R*-tree
/// and a named blob; a second commit deletes part of each.
fn small(db: &Database) -> Result<()> {
    let mut rng = Rng::new(1);
    let txn = db.begin_write()?;
    fill(&txn, &mut rng, 24, 30, 30)?;
    let data = bytes(&mut rng, 10_000);
    blob::put_named(&txn, "blob", &mut &data[..])?;
    txn.commit(Durability::Full)?;
    let txn = db.begin_write()?;
    thin(&txn, 8, 10, 10)?;
    txn.commit(Durability::Checksummed)?;
    Ok(())
}

/// Trees of height two and a queue over several pages; the last commit unsynced.
fn larger(db: &Database) -> Result<()> {
    let mut rng = Rng::new(2);
    for round in 0..3 {
        let txn = db.begin_write()?;
        fill(&txn, &mut rng, 150, 200, 120)?;
        thin(&txn, 40, 50, 30)?;
        let durability = if round == 2 { Durability::None } else { Durability::Full };
        txn.commit(durability)?;
    }
    Ok(())
}

/// The structures of `small`, then small commits that go to the commit log (past one
/// checkpoint), the last ones not checkpointed.
fn logged(db: &Database) -> Result<()> {
    small(db)?;
    let mut rng = Rng::new(4);
    for round in 0..12u64 {
        let txn = db.begin_write()?;
        let mut tree = BTree::open_or_create(&txn, "tree")?;
        tree.insert(&(1000 + round).to_be_bytes(), &bytes(&mut rng, 40))?;
        drop(tree);
        txn.commit(Durability::Checksummed)?;
    }
    Ok(())
}

/// A 5-D point R*-tree (the meteo layout) beside a small B+tree.
fn points_5d(db: &Database) -> Result<()> {
    let mut rng = Rng::new(3);
    let txn = db.begin_write()?;
    let mut tree = RTree::<_, 5>::create_points(&txn, "meteo")?;
    for id in 0..150u64 {
        let point = [0; 5].map(|_| (rng.below(2000) as f64 - 1000.0) / 10.0);
        tree.insert_point(point, id)?;
    }
    let mut index = BTree::open_or_create(&txn, "by_time")?;
    for id in 0..40u64 {
        index.insert(&id.to_be_bytes(), &(id * 3600).to_le_bytes())?;
    }
    drop(index);
    txn.commit(Durability::Checksummed)?;
    Ok(())
}

/// Adds `keys` B+tree entries (every eighth value blob-sized), `records` queue
/// records (one long enough to go out of line) and `points` 2-D points.
fn fill(txn: &WriteTxn<'_>, rng: &mut Rng, keys: u64, records: usize, points: u64) -> Result<()> {
    let mut tree = BTree::open_or_create(txn, "tree")?;
    for key in 0..keys {
        let len = if key % 8 == 7 { rng.between(9_000, 12_000) } else { rng.below(60) };
        tree.insert(&(key * 7 + rng.below(3) as u64).to_be_bytes(), &bytes(rng, len))?;
    }
    drop(tree);
    let mut queue = Queue::open_or_create(txn, "queue")?;
    for index in 0..records {
        let len = if index == records / 2 { 5_000 } else { rng.below(80) };
        queue.append(&bytes(rng, len))?;
    }
    let mut rtree = match RTree::<_, 2>::open(txn, "points") {
        Ok(rtree) => rtree,
        Err(_) => RTree::<_, 2>::create(txn, "points")?,
    };
    let base = rng.next_u64() % 1_000_000;
    for id in base..base + points {
        let point = [rng.below(1000) as f64, rng.below(1000) as f64 / 7.0];
        rtree.insert(&Rect::new(point, [point[0] + 1.0, point[1] + 0.5]), id)?;
    }
    Ok(())
}

/// Removes B+tree keys, consumes queue records and deletes points.
fn thin(txn: &WriteTxn<'_>, keys: usize, records: usize, points: usize) -> Result<()> {
    let mut tree = BTree::open_or_create(txn, "tree")?;
    let doomed: Vec<Vec<u8>> = tree
        .range(std::ops::Bound::Unbounded, std::ops::Bound::Unbounded)
        .step_by(3)
        .take(keys)
        .map(|entry| entry.map(|(key, _)| key))
        .collect::<Result<_>>()?;
    for key in doomed {
        tree.remove(&key)?;
    }
    drop(tree);
    let mut queue = Queue::open(txn, "queue")?;
    let mut out = Vec::new();
    for _ in 0..records {
        queue.consume(&mut out)?;
    }
    let mut rtree = RTree::<_, 2>::open(txn, "points")?;
    for (rect, id) in rtree.entries()?.into_iter().take(points) {
        rtree.remove(&rect, id)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every seed image opens and checks clean: the mutations start from valid files.
    #[test]
    fn seed_images_open_and_check_clean() {
        for (index, image) in images().iter().enumerate() {
            assert_eq!(image.len() % PAGE_SIZE, 0, "image {index}");
            let storage = Arc::new(MemStorage::from_bytes(image.clone()));
            let db = Database::open_storage(storage, options(), "seed").expect("a seed image opens");
            if index == images().len() - 1 {
                let txn = db.begin_read().expect("read");
                let tree = BTree::open(&txn, "tree").expect("the tree");
                let found = tree.get(&1011u64.to_be_bytes(), &mut Vec::new()).expect("get");
                assert!(found, "the log was replayed");
            }
            let report = quiredb_engine::check(&db).expect("a seed image checks");
            assert!(report.is_clean(), "image {index}: {:?}", report.problems);
            let problems = quiredb_structures::check::check_all(&db.begin_read().expect("read")).expect("check_all");
            assert!(problems.is_empty(), "image {index}: {problems:?}");
        }
    }
}
