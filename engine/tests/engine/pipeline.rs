//! Group commit with two appends in flight (`txn/group.rs`): a later append may land
//! while an earlier one is still being written, but no commit is acknowledged before
//! every record ahead of it is durable, a power cut in between keeps neither, and the
//! epoch's first record is always written alone.
//!
//! The storage here holds one durable write in flight on request ([`GatedStorage`]),
//! so the order in which appends land is the test's, not the scheduler's.

use super::common::*;
use parking_lot::{Condvar, Mutex};
use quiredb_engine::storage::{CrashMode, FaultyStorage, MemStorage, Storage};
use quiredb_engine::{Database, Durability, Options, PageId, PageRead};
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Longest wait for something the engine must do without being asked again; running
/// out is a failure (the engine never did it), not a measure of its speed.
const PATIENCE: Duration = Duration::from_secs(60);
/// How long a commit that must not return yet is given to return wrongly.
const GRACE: Duration = Duration::from_millis(50);

fn options() -> Options {
    Database::builder().page_size(4096).cache_bytes(64 * 4096).commit_log_pages(64).group_commit(true).into_options()
}

#[derive(Default)]
struct Gate {
    /// The next durable write waits until it is released.
    armed: bool,
    /// A durable write is waiting.
    holding: bool,
    released: bool,
    started: u64,
    landed: u64,
}

/// A [`FaultyStorage`] whose next durable write (a commit log append) can be held in
/// flight, not yet written, while others go on.
struct GatedStorage {
    inner: Arc<FaultyStorage>,
    gate: Mutex<Gate>,
    changed: Condvar,
}

impl GatedStorage {
    fn new() -> Arc<Self> {
        Arc::new(GatedStorage {
            inner: Arc::new(FaultyStorage::new(Vec::new(), None)),
            gate: Mutex::new(Gate::default()),
            changed: Condvar::new(),
        })
    }

    /// Holds the next durable write until [`GatedStorage::release`].
    fn arm(&self) {
        *self.gate.lock() = Gate { armed: true, ..Gate::default() };
    }

    fn release(&self) {
        self.gate.lock().released = true;
        self.changed.notify_all();
    }

    /// Releases the gate when dropped, so that a failed assertion ends the test rather
    /// than leaving a writer held for ever.
    fn released_on_drop(&self) -> impl Drop + '_ {
        struct Release<'a>(&'a GatedStorage);
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                self.0.release();
            }
        }
        Release(self)
    }

    /// Waits until `ready` holds of the gate; panics with `what` after [`PATIENCE`].
    fn wait_for(&self, what: &str, ready: impl Fn(&Gate) -> bool) {
        let deadline = Instant::now() + PATIENCE;
        let mut gate = self.gate.lock();
        while !ready(&gate) {
            assert!(!self.changed.wait_until(&mut gate, deadline).timed_out(), "never happened: {what}");
        }
    }

    fn counts(&self) -> (u64, u64) {
        let gate = self.gate.lock();
        (gate.started, gate.landed)
    }
}

impl Storage for GatedStorage {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.inner.read_at(offset, buf)
    }
    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.inner.write_at(offset, buf)
    }
    fn sync(&self) -> io::Result<()> {
        self.inner.sync()
    }
    fn write_durable(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        {
            let mut gate = self.gate.lock();
            gate.started += 1;
            if std::mem::take(&mut gate.armed) {
                gate.holding = true;
                self.changed.notify_all();
                while !gate.released {
                    self.changed.wait(&mut gate);
                }
            }
        }
        let result = self.inner.write_durable(offset, buf);
        self.gate.lock().landed += 1;
        self.changed.notify_all();
        result
    }
    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }
    fn grow_to(&self, len: u64) -> io::Result<()> {
        self.inner.grow_to(len)
    }
    fn truncate(&self, len: u64) -> io::Result<()> {
        self.inner.truncate(len)
    }
}

/// Commits `value` into page `id` (one logged commit).
fn commit_value(db: &Database, id: PageId, value: u64) {
    let txn = db.begin_write().expect("writer");
    fill(&mut txn.page_mut(id).expect("page"), value);
    txn.commit(Durability::Checksummed).expect("commit");
}

/// Waits until a write transaction starts from a commit that wrote `value` into page
/// `id` (made, its record queued: the writer lock is free again), then aborts it.
fn wait_until_made(db: &Database, id: PageId, value: u64) {
    let deadline = Instant::now() + PATIENCE;
    while value_of(&db.begin_write().expect("writer").page(id).expect("page")) != Some(value) {
        assert!(Instant::now() < deadline, "the commit was never made");
        std::thread::yield_now();
    }
}

/// The value of page `id` a reader starting now sees.
fn seen_by_reader(db: &Database, id: PageId) -> Option<u64> {
    value_of(&db.begin_read().expect("reader").page(id).expect("page"))
}

/// The values of `ids` in what a power cut now would leave (every durable write, no
/// other).
fn after_power_cut(storage: &GatedStorage, ids: &[PageId]) -> Vec<Option<u64>> {
    let image = storage.inner.crash_image(CrashMode::DropUnsynced);
    let db = Database::open_storage(Arc::new(MemStorage::from_bytes(image)), options(), "cut").expect("reopens");
    assert!(quiredb_engine::check(&db).expect("check").is_clean());
    let txn = db.begin_read().expect("reader");
    ids.iter().map(|id| value_of(&txn.page(*id).expect("page"))).collect()
}

#[test]
fn a_later_append_lands_beside_an_earlier_one_and_waits_for_it_to_be_acknowledged() {
    // Proves: while one append is in flight, the next commit's append is written (two
    // in flight), yet that commit does not return before the first is durable, and a
    // power cut with the later record on disk and the earlier one not keeps neither.
    let storage = GatedStorage::new();
    let db = Database::with_storage(storage.clone(), options(), "gated").expect("create");
    let ids = committed_pages(&db, 2);
    commit_value(&db, ids[0], 10); // the epoch's first record, written alone
    commit_value(&db, ids[1], 11);
    storage.arm();
    let second_returned = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let _release = storage.released_on_drop();
        let first = scope.spawn(|| commit_value(&db, ids[0], 20));
        storage.wait_for("the first append is in flight", |gate| gate.holding);
        let (started, _) = storage.counts();
        let second = scope.spawn(|| {
            commit_value(&db, ids[1], 21);
            second_returned.store(true, Ordering::SeqCst);
        });
        storage.wait_for("a second append lands while the first is in flight", |gate| gate.landed >= started);
        std::thread::sleep(GRACE);
        assert!(!second_returned.load(Ordering::SeqCst), "acknowledged before the append ahead of it is durable");
        assert_eq!(after_power_cut(&storage, &ids), [Some(10), Some(11)], "a record past a hole is replayed");
        storage.release();
        first.join().expect("first writer");
        second.join().expect("second writer");
    });
    assert_eq!(after_power_cut(&storage, &ids), [Some(20), Some(21)]);
}

#[test]
fn the_epochs_first_record_is_written_alone() {
    // Proves: while the first record of a log epoch is in flight, no other append
    // starts (recovery that replays no record keeps the epoch, so a record past a hole
    // at its start could later pass for a continuation); the commits queued meanwhile
    // are written once it lands.
    let storage = GatedStorage::new();
    let db = Database::with_storage(storage.clone(), options(), "gated").expect("create");
    let ids = committed_pages(&db, 2); // a `Full` meta in place: the log's epoch begins
    storage.arm();
    let (started, _) = storage.counts();
    std::thread::scope(|scope| {
        let _release = storage.released_on_drop();
        let first = scope.spawn(|| commit_value(&db, ids[0], 20));
        storage.wait_for("the epoch's first append is in flight", |gate| gate.holding);
        let second = scope.spawn(|| commit_value(&db, ids[1], 21));
        wait_until_made(&db, ids[1], 21);
        std::thread::sleep(GRACE);
        assert_eq!(storage.counts().0, started + 1, "an append started beside the epoch's first");
        assert_eq!(after_power_cut(&storage, &ids), [Some(0), Some(1)]);
        storage.release();
        first.join().expect("first writer");
        second.join().expect("second writer");
    });
    assert_eq!(after_power_cut(&storage, &ids), [Some(20), Some(21)]);
}

#[test]
fn a_reader_sees_a_commit_once_its_append_is_durable() {
    // Proves: a commit whose append is in flight is already the next writer's base, but
    // no reader sees it until the append is durable, so no reader acts on a commit a
    // power cut could still take back; and its `commit` returns only after readers see it.
    let storage = GatedStorage::new();
    let db = Database::with_storage(storage.clone(), options(), "gated").expect("create");
    let ids = committed_pages(&db, 1);
    commit_value(&db, ids[0], 10); // the epoch's first record, written alone
    storage.arm();
    std::thread::scope(|scope| {
        let _release = storage.released_on_drop();
        let first = scope.spawn(|| commit_value(&db, ids[0], 20));
        storage.wait_for("the append is in flight", |gate| gate.holding);
        wait_until_made(&db, ids[0], 20);
        assert_eq!(seen_by_reader(&db, ids[0]), Some(10), "a reader sees a commit whose append is in flight");
        assert_eq!(db.meta().txn, db.begin_read().expect("reader").meta().txn, "meta() is what readers see");
        storage.release();
        first.join().expect("first writer");
    });
    assert_eq!(seen_by_reader(&db, ids[0]), Some(20), "a commit that returned is seen");
    assert_eq!(after_power_cut(&storage, &ids), [Some(20)]);
}
