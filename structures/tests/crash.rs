//! Crash torture of the structures: a child process runs random transactions on a
//! B+tree (values crossing the blob threshold), a paged queue and a 2-D R*-tree in one
//! database file and reports each acknowledged commit; the parent SIGKILLs it at random
//! moments, reopens, runs the engine's check and every structure's checker, and
//! compares all three with a model replayed to the commit found — which must be at or
//! after the last acknowledged one.
//!
//! The child is this test binary (`--ignored --exact child`). Each transaction's
//! operations are a function of (seed, commit number, model state), so both processes
//! replay the same history. `QUIRE_CRASH_KILLS` sets the kills (default 60);
//! `QUIRE_SEED` replays a run.

use quiredb_engine::{Database, Durability, Options, WriteTxn};
use quiredb_structures::btree::BTree;
use quiredb_structures::queue::Queue;
use quiredb_structures::rtree::{RTree, Rect};
use quiredb_test_support::Rng as TestRng;
use rand::Rng;
use std::collections::{BTreeMap, VecDeque};
use std::ops::{Bound, ControlFlow};

#[path = "../../engine/tests/support/child.rs"]
mod child;
use child::{child_options, exe_args_for_kill, kill_mid_work, tell};

const KEYS: u64 = 300;
/// Key of the commit counter in the B+tree (9 bytes, unlike the 8-byte data keys).
const COUNTER: &[u8] = b"\xffcommit\xff\xff";

#[derive(Clone, Debug, Default, PartialEq)]
struct Model {
    commit: u64,
    tree: BTreeMap<Vec<u8>, Vec<u8>>,
    queue: VecDeque<Vec<u8>>,
    points: BTreeMap<u64, [f64; 2]>,
}

enum Op {
    Put(Vec<u8>, Vec<u8>),
    Del(Vec<u8>),
    Append(Vec<u8>),
    Consume,
    PointPut(u64, [f64; 2]),
    PointDel(u64, [f64; 2]),
}

fn bytes(rng: &mut TestRng, len: usize) -> Vec<u8> {
    (0..len).map(|_| rng.random()).collect()
}

/// The operations of the next commit, applied to `model` as they are drawn.
fn next_ops(seed: u64, model: &mut Model) -> Vec<Op> {
    model.commit += 1;
    let mut rng = TestRng::new(seed ^ model.commit.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut ops = Vec::new();
    for _ in 0..rng.random_range(1..16) {
        let key = rng.random_range(0..KEYS);
        match rng.random_range(0..12) {
            0..=3 => {
                let len =
                    if rng.random_ratio(1, 15) { rng.random_range(9_000..30_000) } else { rng.random_range(0..700) };
                let value = bytes(&mut rng, len);
                model.tree.insert(key.to_be_bytes().to_vec(), value.clone());
                ops.push(Op::Put(key.to_be_bytes().to_vec(), value));
            }
            4 | 5 => {
                model.tree.remove(&key.to_be_bytes()[..]);
                ops.push(Op::Del(key.to_be_bytes().to_vec()));
            }
            6 | 7 => {
                let len = rng.random_range(0..400);
                let record = bytes(&mut rng, len);
                model.queue.push_back(record.clone());
                ops.push(Op::Append(record));
            }
            8 if !model.queue.is_empty() => {
                model.queue.pop_front();
                ops.push(Op::Consume);
            }
            _ => match model.points.remove(&key) {
                Some(point) => ops.push(Op::PointDel(key, point)),
                None => {
                    let point = [rng.random_range(-1e3..1e3), rng.random_range(-1e3..1e3)];
                    model.points.insert(key, point);
                    ops.push(Op::PointPut(key, point));
                }
            },
        }
    }
    ops
}

fn durability(commit: u64) -> Durability {
    match commit % 3 {
        0 => Durability::Full,
        1 => Durability::Checksummed,
        _ => Durability::None,
    }
}

fn options() -> Options {
    Database::builder().page_size(4096).cache_bytes(512 * 4096).into_options()
}

/// Applies one commit's operations inside `txn`.
fn apply(txn: &WriteTxn<'_>, ops: &[Op], commit: u64) -> quiredb_structures::Result<()> {
    let mut tree = BTree::open_or_create(txn, "tree")?;
    let mut queue = Queue::open_or_create(txn, "queue")?;
    let mut rtree = match RTree::<_, 2>::open(txn, "points") {
        Ok(rtree) => rtree,
        Err(_) => RTree::<_, 2>::create(txn, "points")?,
    };
    for op in ops {
        match op {
            Op::Put(key, value) => drop(tree.insert(key, value)?),
            Op::Del(key) => drop(tree.remove(key)?),
            Op::Append(record) => drop(queue.append(record)?),
            Op::Consume => drop(queue.consume(&mut Vec::new())?),
            Op::PointPut(id, point) => rtree.insert_point(*point, *id)?,
            Op::PointDel(id, point) => assert!(rtree.remove(&Rect::point(*point), *id)?, "point {id} present"),
        }
    }
    tree.insert(COUNTER, &commit.to_le_bytes())?;
    Ok(())
}

/// Reads the whole state back from the database.
fn load(db: &Database) -> Model {
    let txn = db.begin_read().unwrap();
    let tree = BTree::open(&txn, "tree").unwrap();
    let mut model = Model::default();
    for entry in tree.range(Bound::Unbounded, Bound::Unbounded) {
        let (key, value) = entry.unwrap();
        if key == COUNTER {
            model.commit = u64::from_le_bytes(value.try_into().unwrap());
        } else {
            model.tree.insert(key, value);
        }
    }
    let queue = Queue::open(&txn, "queue").unwrap();
    queue
        .for_each(None, |_, record| {
            model.queue.push_back(record.to_vec());
            ControlFlow::Continue(())
        })
        .unwrap();
    let rtree = RTree::<_, 2>::open(&txn, "points").unwrap();
    for (rect, id) in rtree.entries().unwrap() {
        model.points.insert(id, rect.min);
    }
    model
}

fn create(path: &std::path::Path) {
    let db = Database::create(path, options()).unwrap();
    let txn = db.begin_write().unwrap();
    apply(&txn, &[], 0).unwrap();
    txn.commit(Durability::Full).unwrap();
}

#[test]
#[ignore = "child process of crash_torture_of_all_structures"]
fn child() {
    let Ok(path) = std::env::var("QUIRE_CRASH_DB") else { return };
    let seed: u64 = std::env::var("QUIRE_CRASH_SEED").unwrap().parse().unwrap();
    let db = Database::open(&path, child_options(options())).unwrap();
    // The state read back is the model at its commit (the parent checks that after
    // every kill), so the child goes on from it without replaying the history.
    let mut model = load(&db);
    tell("ready");
    loop {
        let ops = next_ops(seed, &mut model);
        let txn = db.begin_write().unwrap();
        apply(&txn, &ops, model.commit).unwrap();
        txn.commit(durability(model.commit)).unwrap();
        tell(&format!("ack {}", model.commit));
    }
}

#[test]
fn crash_torture_of_all_structures() {
    // Proves: after a SIGKILL at any moment the file checks clean (engine and every
    // structure) and the B+tree, queue and R*-tree hold exactly one commit's state, at or
    // after the last acknowledged commit.
    let seed = quiredb_test_support::random_seed();
    let kills: usize = std::env::var("QUIRE_CRASH_KILLS").ok().and_then(|s| s.parse().ok()).unwrap_or(60);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("structures.quire");
    create(&path);
    let mut model = Model::default();
    let mut rng = TestRng::new(seed);
    let mut productive = 0; // kills whose child acknowledged at least one commit
    for kill in 0..kills {
        let acked_now = kill_mid_work(
            &mut exe_args_for_kill("child", &path, seed, kill),
            dir.path(),
            kill,
            &mut rng,
            1_000..60_000,
        );
        productive += usize::from(acked_now.is_some());
        let acked = acked_now.unwrap_or(model.commit);
        let db = Database::open(&path, options()).unwrap();
        let report = quiredb_engine::check(&db).unwrap();
        assert!(report.is_clean(), "kill {kill}: {:?}", report.problems);
        let problems = quiredb_structures::check::check_all(&db.begin_read().unwrap()).unwrap();
        assert!(problems.is_empty(), "kill {kill}: {problems:?}");
        let found = load(&db);
        assert!(found.commit >= acked, "kill {kill}: acknowledged commit {acked} lost (found {})", found.commit);
        while model.commit < found.commit {
            next_ops(seed, &mut model);
        }
        assert!(found == model, "kill {kill}: state differs from the model at commit {}", found.commit);
    }
    // A floor on progress: a child that never commits (or a commit that does nothing
    // while acknowledging) must not pass as a crash that lost nothing.
    assert!(productive * 2 >= kills, "only {productive} of {kills} children acknowledged a commit");
    assert!(model.commit as usize >= kills, "{} commits in {kills} kills", model.commit);
    println!(
        "structures crash torture: {kills} kills ({productive} with acknowledged commits), last commit {}",
        model.commit
    );
}
