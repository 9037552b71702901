//! Shared helpers: seeds, page patterns, a small workload and its model.

use quiredb_engine::storage::MemStorage;
use quiredb_engine::{Database, Durability, Options, PageId, PageKind, PageRead, WriteTxn};
use rand::Rng;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The workspace's test generator (`quiredb-test-support`).
pub type TestRng = quiredb_test_support::Rng;

/// The seed from `QUIRE_SEED`, else a fresh one; printed so a failure can be replayed.
pub fn seed(test: &str) -> u64 {
    println!("{test}:");
    quiredb_test_support::random_seed()
}

/// A number from an environment variable, else `default`.
pub fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

/// Options with a small pool so eviction and spilling happen in small tests.
pub fn small_options() -> Options {
    Database::builder().page_size(4096).cache_bytes(64 * 4096).into_options()
}

/// [`small_options`] without a commit log: every commit is written in place and its
/// meta says how it is verified at open (the scenarios of `durability.rs`, crafted
/// images whose metas and records are edited on disk, the version-3 format).
pub fn in_place_options() -> Options {
    Database::builder().page_size(4096).cache_bytes(64 * 4096).commit_log_pages(0).into_options()
}

/// Fills a page payload with a pattern that names the value it stands for.
pub fn fill(page: &mut [u8], value: u64) {
    for (index, chunk) in page.chunks_mut(8).enumerate() {
        let word = value.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ index as u64;
        chunk.copy_from_slice(&word.to_le_bytes()[..chunk.len()]);
    }
    page[..8].copy_from_slice(&value.to_le_bytes());
}

/// The value a page holds, checking the whole pattern.
pub fn value_of(page: &[u8]) -> Option<u64> {
    let value = u64::from_le_bytes(page[..8].try_into().ok()?);
    let mut expected = vec![0u8; page.len()];
    fill(&mut expected, value);
    (expected == page).then_some(value)
}

/// A fresh in-memory database.
pub fn memory_db(options: Options) -> (Arc<MemStorage>, Database) {
    let storage = Arc::new(MemStorage::new());
    let db = Database::with_storage(storage.clone(), options, "memory").expect("create in memory");
    (storage, db)
}

/// The kind of a test page that holds `value`: every other one indexes others (as a
/// B+tree branch does), so readers read it unpinned (`pool/grace.rs`), the rest pinned.
pub fn kind_for(value: u64) -> PageKind {
    if value % 2 == 1 { PageKind::structure(17).indexing() } else { PageKind::structure(16) }
}

/// Commits `count` new pages holding the values `0..count`; returns their ids in order.
pub fn committed_pages(db: &Database, count: u64) -> Vec<PageId> {
    let txn = db.begin_write().expect("writer");
    let ids = (0..count)
        .map(|value| {
            let mut page = txn.alloc_page(PageKind::structure(16)).expect("page");
            fill(&mut page, value);
            page.id()
        })
        .collect();
    txn.commit(Durability::Full).expect("commit");
    ids
}

/// Model of a database: logical page → value.
pub type Model = BTreeMap<u64, u64>;

/// Reads every page of the model through `txn` and compares.
pub fn assert_matches(txn: &impl PageRead, model: &Model) {
    for (&id, &value) in model {
        let page = txn.page(PageId(id)).unwrap_or_else(|error| panic!("page {id}: {error}"));
        assert_eq!(value_of(&page), Some(value), "logical page {id}");
    }
}

/// One random transaction: allocate (pages of both kinds, [`kind_for`]), rewrite and
/// free pages; mirrors it in `model`.
pub fn random_txn(txn: &WriteTxn<'_>, rng: &mut TestRng, model: &mut Model, value: u64) -> quiredb_engine::Result<()> {
    random_txn_of(txn, rng, model, value, kind_for)
}

/// [`random_txn`] allocating pages of the kind `kind` gives for their first value.
pub fn random_txn_of(
    txn: &WriteTxn<'_>,
    rng: &mut TestRng,
    model: &mut Model,
    value: u64,
    kind: fn(u64) -> PageKind,
) -> quiredb_engine::Result<()> {
    let ops = rng.random_range(1..40);
    for op in 0..ops {
        let value = value * 1000 + op;
        let roll = rng.random_range(0..10);
        if roll < 4 || model.is_empty() {
            let mut page = txn.alloc_page(kind(value))?;
            fill(&mut page, value);
            model.insert(page.id().0, value);
        } else if roll < 8 {
            let id = *model.keys().nth(rng.random_range(0..model.len())).expect("non-empty");
            let mut page = txn.page_mut(PageId(id))?;
            fill(&mut page, value);
            model.insert(id, value);
        } else {
            let id = *model.keys().nth(rng.random_range(0..model.len())).expect("non-empty");
            txn.free_page(PageId(id))?;
            model.remove(&id);
        }
    }
    Ok(())
}

/// One round of the model workload: a random transaction, aborted one time in five,
/// else committed with a random durability (and then `model` follows it).
pub fn model_round(db: &Database, rng: &mut TestRng, model: &mut Model, round: u64) {
    model_round_of(db, rng, model, round, kind_for);
}

/// [`model_round`] with [`random_txn_of`]`(…, kind)`.
pub fn model_round_of(db: &Database, rng: &mut TestRng, model: &mut Model, round: u64, kind: fn(u64) -> PageKind) {
    let mut next = model.clone();
    let txn = db.begin_write().unwrap();
    random_txn_of(&txn, rng, &mut next, round, kind).unwrap();
    if rng.random_bool(0.2) {
        drop(txn);
    } else {
        txn.commit(random_durability(rng)).unwrap();
        *model = next;
    }
}

/// A durability level picked by `rng`.
pub fn random_durability(rng: &mut TestRng) -> Durability {
    match rng.random_range(0..3) {
        0 => Durability::Full,
        1 => Durability::Checksummed,
        _ => Durability::None,
    }
}

/// A seeded generator.
pub fn rng(seed: u64) -> TestRng {
    TestRng::new(seed)
}

/// A base image made with `options` (three committed pages) and its model.
pub fn base_image(options: Options) -> (Vec<u8>, Model) {
    let storage = Arc::new(MemStorage::new());
    let db = Database::with_storage(storage.clone(), options, "base").unwrap();
    let ids = committed_pages(&db, 3);
    drop(db);
    (storage.snapshot(), ids.iter().enumerate().map(|(value, id)| (id.0, value as u64)).collect())
}

/// What a faulted run attempted: the base's model, then (model, durability) of each
/// attempted commit, and which of them must survive: `floor <= c <= acked + 1` (the
/// one in flight may survive whole).
pub struct Attempts<'a> {
    pub base: &'a Model,
    pub commits: &'a [(Model, Durability)],
    pub floor: usize,
    pub acked: usize,
}

/// Opens `image` with `options` and checks it is clean and holds one commit of
/// `attempts` whole, one it may hold (see [`Attempts`]).
pub fn verify_recovered(image: Vec<u8>, options: Options, attempts: &Attempts<'_>, what: &str) {
    let db = Database::open_storage(Arc::new(MemStorage::from_bytes(image)), options, "recovered")
        .unwrap_or_else(|error| panic!("{what}: reopen failed: {error}"));
    let report = quiredb_engine::check(&db).unwrap();
    assert!(report.problems.is_empty(), "{what}: {:?}", report.problems);
    let txn = db.begin_read().unwrap();
    let holds = |model: &Model| {
        model.iter().all(|(&id, &value)| txn.page(PageId(id)).ok().and_then(|page| value_of(&page)) == Some(value))
    };
    let found = (0..=attempts.commits.len().min(attempts.acked + 1))
        .rev()
        .find(|&c| holds(if c == 0 { attempts.base } else { &attempts.commits[c - 1].0 }))
        .unwrap_or_else(|| panic!("{what}: the image matches no commit"));
    assert!(
        found >= attempts.floor,
        "{what}: recovered commit {found}, but {} was acknowledged and durable",
        attempts.floor
    );
}
