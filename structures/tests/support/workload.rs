//! The power-cut simulator's workload: a model of the three structures in one file (a
//! B+tree whose values sometimes become blobs, a paged queue, a 2-D R*-tree), random
//! operations drawn against it, their application inside a write transaction, and the
//! read-back of a database into a model with a diff that names the structure that
//! differs.
//!
//! The commit counter lives in the B+tree under [`COUNTER`] and every commit rewrites
//! it, so a recovered file says which commit it holds without trusting engine
//! transaction ids (which may repeat after a rollback at open).

use quiredb_engine::{PageRead, WriteTxn};
use quiredb_structures::btree::BTree;
use quiredb_structures::queue::Queue;
use quiredb_structures::rtree::{RTree, Rect};
use quiredb_test_support::Rng as TestRng;
use rand::{Rng, RngCore};
use std::collections::{BTreeMap, VecDeque};
use std::ops::{Bound, ControlFlow};

/// Data keys of the B+tree (8-byte big-endian numbers below this).
const KEYS: u64 = 400;
/// Point ids of the R*-tree (below this).
const POINTS: u64 = 1_500;
/// Key of the commit counter (9 bytes, unlike the 8-byte data keys).
pub const COUNTER: &[u8] = b"\xffcommit\xff\xff";
/// Names of the structures.
const TREE: &str = "tree";
const QUEUE: &str = "queue";
const RTREE: &str = "points";

/// The contents of the database after one commit.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Model {
    /// Value of the commit counter.
    pub commit: u64,
    tree: BTreeMap<Vec<u8>, Vec<u8>>,
    queue: VecDeque<Vec<u8>>,
    points: BTreeMap<u64, [f64; 2]>,
}

/// One operation of a transaction.
#[derive(Clone, Debug)]
pub enum Op {
    Put(Vec<u8>, Vec<u8>),
    Del(Vec<u8>),
    Append(Vec<u8>),
    Consume,
    PointPut(u64, [f64; 2]),
    PointDel(u64, [f64; 2]),
}

fn bytes(rng: &mut TestRng, len: usize) -> Vec<u8> {
    let mut out = vec![0; len];
    rng.fill_bytes(&mut out);
    out
}

/// A B+tree value: mostly inline, some around the blob threshold (a quarter of a 4 KiB
/// node), some blobs of several pages.
fn value(rng: &mut TestRng) -> Vec<u8> {
    let len = match rng.random_range(0..100) {
        0..80 => rng.random_range(0..300),
        80..92 => rng.random_range(300..1_200),
        _ => rng.random_range(4_000..20_000),
    };
    bytes(rng, len)
}

/// A queue record: mostly small, a few out of line (longer than a page).
fn record(rng: &mut TestRng) -> Vec<u8> {
    let len = if rng.random_ratio(1, 30) { rng.random_range(4_100..7_000) } else { rng.random_range(0..400) };
    bytes(rng, len)
}

/// Draws one operation and applies it to `model`. Appends pause while the queue holds
/// over 150 records (consumes take their turn), so the file stays small.
fn draw_op(rng: &mut TestRng, model: &mut Model) -> Op {
    let key = rng.random_range(0..KEYS).to_be_bytes().to_vec();
    let long_queue = model.queue.len() > 150;
    match rng.random_range(0..16) {
        0..6 => {
            let value = value(rng);
            model.tree.insert(key.clone(), value.clone());
            Op::Put(key, value)
        }
        6..8 => {
            model.tree.remove(&key);
            Op::Del(key)
        }
        8..10 if !long_queue => {
            let record = record(rng);
            model.queue.push_back(record.clone());
            Op::Append(record)
        }
        8..12 if !model.queue.is_empty() => {
            model.queue.pop_front();
            Op::Consume
        }
        _ => {
            let id = rng.random_range(0..POINTS);
            match model.points.remove(&id) {
                Some(point) => Op::PointDel(id, point),
                None => {
                    let point = [rng.random_range(-1e3..1e3), rng.random_range(-1e3..1e3)];
                    model.points.insert(id, point);
                    Op::PointPut(id, point)
                }
            }
        }
    }
}

/// The operations of one transaction on top of `base`, and the model they make
/// (counter included). One transaction in ten is large enough to spill a small pool.
pub fn draw_txn(rng: &mut TestRng, base: &Model) -> (Vec<Op>, Model) {
    let mut model = base.clone();
    model.commit += 1;
    let count = if rng.random_ratio(1, 10) { rng.random_range(80..400) } else { rng.random_range(1..16) };
    let ops = (0..count).map(|_| draw_op(rng, &mut model)).collect();
    (ops, model)
}

/// Creates the three structures and the counter (commit 0).
pub fn create_all(txn: &WriteTxn<'_>) -> quiredb_structures::Result<()> {
    let mut tree = BTree::create(txn, TREE)?;
    Queue::create(txn, QUEUE)?;
    RTree::<_, 2>::create_points(txn, RTREE)?;
    tree.insert(COUNTER, &0u64.to_le_bytes())?;
    Ok(())
}

/// Applies `ops` inside `txn` and sets the counter to `commit`.
pub fn apply(txn: &WriteTxn<'_>, ops: &[Op], commit: u64) -> quiredb_structures::Result<()> {
    let mut tree = BTree::open(txn, TREE)?;
    let mut queue = Queue::open(txn, QUEUE)?;
    let mut rtree = RTree::<_, 2>::open(txn, RTREE)?;
    for op in ops {
        match op {
            Op::Put(key, value) => drop(tree.insert(key, value)?),
            Op::Del(key) => drop(tree.remove(key)?),
            Op::Append(record) => drop(queue.append(record)?),
            Op::Consume => assert!(queue.consume(&mut Vec::new())?.is_some(), "the model's queue is not empty"),
            Op::PointPut(id, point) => rtree.insert_point(*point, *id)?,
            Op::PointDel(id, point) => assert!(rtree.remove(&Rect::point(*point), *id)?, "point {id} present"),
        }
    }
    tree.insert(COUNTER, &commit.to_le_bytes())?;
    Ok(())
}

/// Reads the whole state of the database seen by `txn`.
pub fn load(txn: &impl PageRead) -> quiredb_structures::Result<Model> {
    let mut model = Model::default();
    let tree = BTree::open(txn, TREE)?;
    for entry in tree.range(Bound::Unbounded, Bound::Unbounded) {
        let (key, value) = entry?;
        if key == COUNTER {
            let counter: [u8; 8] = value.as_slice().try_into().unwrap_or_default();
            model.commit = u64::from_le_bytes(counter);
        } else {
            model.tree.insert(key, value);
        }
    }
    Queue::open(txn, QUEUE)?.for_each(None, |_, record| {
        model.queue.push_back(record.to_vec());
        ControlFlow::Continue(())
    })?;
    for (rect, id) in RTree::<_, 2>::open(txn, RTREE)?.entries()? {
        model.points.insert(id, rect.min);
    }
    Ok(model)
}

/// `None` when `found` equals `expected`, else which structure differs and where.
pub fn diff(expected: &Model, found: &Model) -> Option<String> {
    let mut out = Vec::new();
    if expected.tree != found.tree {
        out.push(format!("B+tree differs: {}", first_difference(&expected.tree, &found.tree)));
    }
    if expected.queue != found.queue {
        let at = expected.queue.iter().zip(&found.queue).take_while(|(a, b)| a == b).count();
        let (want, got) = (expected.queue.len(), found.queue.len());
        out.push(format!("queue differs: {want} records expected, {got} found, first difference at {at}"));
    }
    if expected.points != found.points {
        out.push(format!("R*-tree differs: {}", first_difference(&expected.points, &found.points)));
    }
    (!out.is_empty()).then(|| out.join("; "))
}

/// The first key whose entry differs between two maps, described.
fn first_difference<K: Ord + std::fmt::Debug, V: PartialEq>(a: &BTreeMap<K, V>, b: &BTreeMap<K, V>) -> String {
    let sizes = format!("{} entries expected, {} found", a.len(), b.len());
    let missing = a.iter().find(|(key, value)| b.get(key) != Some(value));
    let extra = b.keys().find(|key| !a.contains_key(key));
    match (missing, extra) {
        (Some((key, _)), _) if b.contains_key(key) => format!("{sizes}, value of {key:?} differs"),
        (Some((key, _)), _) => format!("{sizes}, {key:?} missing"),
        (None, Some(key)) => format!("{sizes}, {key:?} unexpected"),
        (None, None) => sizes,
    }
}
