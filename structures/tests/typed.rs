//! Typed structures opened from a transaction (`Structures`): tables, queues and
//! R*-trees have their stored types checked on open and one handle per structure per
//! write transaction; tables' std-named reads and writes and ranges from both ends;
//! a property test of every key type's order against a `BTreeMap`.
//! `QUIRE_SEED` replays the property test (it prints its seed).

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use quiredb_engine::storage::MemStorage;
use quiredb_engine::{Database, Durability};
use quiredb_structures::btree::BTree;
use quiredb_structures::queue::{Queue, QueueDef};
use quiredb_structures::rtree::{RTree, RTreeDef, Rect, WindowMode};
use quiredb_structures::table::{Key, TableDef};
use quiredb_structures::{Error, Structures, StructuresMut};
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::Arc;

fn memdb() -> Database {
    Database::builder()
        .cache_bytes(8 << 20)
        .with_storage(Arc::new(MemStorage::new()), "mem")
        .expect("in-memory database")
}

const COUNTS: TableDef<u64, u64> = TableDef::new("counts");

/// Opening a table with other types than it was created with names both.
#[test]
fn type_mismatch_names_both_types() {
    let db = memdb();
    let txn = db.begin_write().expect("writer");
    txn.open_table(COUNTS).expect("create").insert(1, 2).expect("insert");
    txn.commit(Durability::Checksummed).expect("commit");
    let snapshot = db.begin_read().expect("reader");
    const AS_NAMES: TableDef<&str, u64> = TableDef::new("counts");
    match snapshot.open_table(AS_NAMES) {
        Err(Error::TypeMismatch { name, stored, requested }) => {
            assert_eq!(name, "counts");
            assert!(stored.contains("keys u64 to values u64"), "stored: {stored}");
            assert!(requested.contains("keys str to values u64"), "requested: {requested}");
        }
        other => panic!("expected TypeMismatch, got {other:?}"),
    }
    assert_eq!(snapshot.open_table(COUNTS).expect("right types").get(1).expect("get").map(|v| v.value()), Some(2));
}

/// An untyped B+tree opens as a table of bytes, and as nothing else; borrowed and
/// owned strings share their encoding.
#[test]
fn untyped_trees_are_byte_tables() {
    let db = memdb();
    let txn = db.begin_write().expect("writer");
    BTree::create(&txn, "raw").expect("create").insert(b"k", b"v").expect("insert");
    const BYTES: TableDef<&[u8], &[u8]> = TableDef::new("raw");
    const OWNED: TableDef<Vec<u8>, Vec<u8>> = TableDef::new("raw");
    assert_eq!(
        txn.open_table(BYTES).expect("bytes").get(&b"k"[..]).expect("get").map(|v| v.value().to_vec()),
        Some(b"v".to_vec())
    );
    assert_eq!(
        txn.open_table(OWNED).expect("owned").get(b"k".to_vec()).expect("get").map(|v| v.value()),
        Some(b"v".to_vec())
    );
    const WRONG: TableDef<u64, &[u8]> = TableDef::new("raw");
    assert!(matches!(txn.open_table(WRONG), Err(Error::TypeMismatch { .. })));
}

/// A second handle to one table in one write transaction is refused, as is deleting
/// an open table; dropping the handle frees the name.
#[test]
fn second_handle_is_already_open() {
    let db = memdb();
    let txn = db.begin_write().expect("writer");
    let mut first = txn.open_table(COUNTS).expect("first handle");
    assert!(matches!(txn.open_table(COUNTS), Err(Error::AlreadyOpen { name }) if name == "counts"));
    let refused = txn.delete_table(COUNTS);
    assert!(matches!(refused, Err(Error::AlreadyOpen { .. })), "{refused:?}");
    first.insert(7, 70).expect("insert");
    drop(first);
    assert_eq!(txn.open_table(COUNTS).expect("reopened").len(), 1);
    assert!(txn.delete_table(COUNTS).expect("delete"));
    assert!(!txn.delete_table(COUNTS).expect("delete again"));
    assert!(txn.open_table(COUNTS).expect("created afresh").is_empty());
    txn.commit(Durability::Checksummed).expect("commit");
    let txn = db.begin_write().expect("next writer");
    let _handle = txn.open_table(COUNTS).expect("a new transaction starts with no handle open");
}

/// The untyped queue and R*-tree follow the same handle model as the typed ones and
/// the B+tree: a handle borrows its transaction, a second one on the same structure in
/// a write transaction is `AlreadyOpen` (typed or not), dropping the first frees the
/// name, and read transactions open as many as they like.
#[test]
fn raw_queue_and_rtree_handles_are_one_per_write_transaction() {
    let db = memdb();
    let txn = db.begin_write().expect("writer");
    let mut queue = Queue::create(&txn, "raw_q").expect("queue");
    let mut tree = RTree::<_, 2>::create(&txn, "raw_r").expect("rtree");
    assert!(matches!(Queue::open(&txn, "raw_q"), Err(Error::AlreadyOpen { name }) if name == "raw_q"));
    assert!(matches!(RTree::<_, 2>::open(&txn, "raw_r"), Err(Error::AlreadyOpen { name }) if name == "raw_r"));
    const TYPED: RTreeDef<2> = RTreeDef::new("raw_r");
    assert!(matches!(txn.open_rtree(TYPED), Err(Error::AlreadyOpen { .. })), "typed and raw share the mark");
    queue.append(b"one").expect("append");
    tree.insert_point([1.0, 2.0], 9).expect("insert");
    drop((queue, tree));
    assert_eq!(Queue::open(&txn, "raw_q").expect("reopened").len().expect("len"), 1);
    assert_eq!(txn.open_rtree(TYPED).expect("reopened typed").len().expect("len"), 1);
    txn.commit(Durability::Checksummed).expect("commit");
    let snapshot = db.begin_read().expect("reader");
    let (a, b) = (Queue::open(&snapshot, "raw_q").expect("a"), Queue::open(&snapshot, "raw_q").expect("b"));
    assert_eq!((a.len().expect("a"), b.len().expect("b")), (1, 1));
    let (c, d) =
        (RTree::<_, 2>::open(&snapshot, "raw_r").expect("c"), RTree::<_, 2>::open(&snapshot, "raw_r").expect("d"));
    assert_eq!((c.len().expect("c"), d.entries().expect("d")), (1, vec![(Rect::point([1.0, 2.0]), 9)]));
}

/// A borrowed string before the last key member cannot hold NUL; as the last it can.
#[test]
fn nul_in_borrowed_member_is_refused() {
    let db = memdb();
    let txn = db.begin_write().expect("writer");
    const PAIRS: TableDef<(&str, &str), ()> = TableDef::new("pairs");
    let mut table = txn.open_table(PAIRS).expect("create");
    assert!(matches!(table.insert(("a\0b", "c"), ()), Err(Error::KeyEncoding { .. })));
    table.insert(("ab", "c\0d"), ()).expect("NUL in the last member");
    assert_eq!(table.first_key_value().expect("first").map(|(k, _)| k.key().1.to_owned()), Some("c\0d".to_owned()));
}

/// A typed queue keeps its record type: records round-trip, another type is refused,
/// the raw queue still reads it, one handle per write transaction.
#[test]
fn typed_queues() {
    const EVENTS: QueueDef<(&str, u32)> = QueueDef::new("events");
    let db = memdb();
    let txn = db.begin_write().expect("writer");
    let mut queue = txn.open_queue(EVENTS).expect("create");
    let first = queue.push_back(("up", 1)).expect("push");
    queue.push_back(("down", 2)).expect("push");
    assert!(matches!(txn.open_queue(EVENTS), Err(Error::AlreadyOpen { .. })));
    assert!(matches!(txn.delete_queue(EVENTS), Err(Error::AlreadyOpen { .. })));
    assert_eq!(queue.get(first).expect("get").map(|r| r.value().0.to_owned()), Some("up".to_owned()));
    let popped = queue.pop_front().expect("pop").expect("a record");
    assert_eq!((popped.0, popped.1.value()), (first, ("up", 1)));
    drop(queue);
    txn.commit(Durability::Checksummed).expect("commit");
    let snapshot = db.begin_read().expect("reader");
    assert_eq!(txn_len(&snapshot), 1);
    const AS_NUMBERS: QueueDef<u64> = QueueDef::new("events");
    match snapshot.open_queue(AS_NUMBERS) {
        Err(Error::TypeMismatch { stored, requested, .. }) => {
            assert!(stored.contains("(str, u32)") && requested.contains("u64"), "{stored} / {requested}");
        }
        other => panic!("expected TypeMismatch, got {:?}", other.map(|_| ())),
    }
    let txn = db.begin_write().expect("writer");
    assert!(txn.delete_queue(EVENTS).expect("delete"));
    Queue::create(&txn, "raw").expect("untyped queue").append(b"bytes").expect("append");
    const RAW: QueueDef<&[u8]> = QueueDef::new("raw");
    let raw = txn.open_queue(RAW).expect("an untyped queue holds bytes");
    assert_eq!(raw.len().expect("len"), 1);
}

fn txn_len(snapshot: &quiredb_engine::ReadTxn<'_>) -> u64 {
    Queue::open(snapshot, "events").expect("the raw queue opens a typed one").len().expect("len")
}

/// A typed R*-tree keeps its dimensions and coordinate type, and one handle per write
/// transaction.
#[test]
fn typed_rtrees() {
    const PLACES: RTreeDef<2, f32> = RTreeDef::points("places");
    let db = memdb();
    let txn = db.begin_write().expect("writer");
    let mut tree = txn.open_rtree(PLACES).expect("create");
    for i in 0..100u64 {
        tree.insert_point([i as f64, (i % 10) as f64], i).expect("insert");
    }
    assert!(matches!(txn.open_rtree(PLACES), Err(Error::AlreadyOpen { .. })));
    let mut hits: Vec<u64> = tree
        .window(&Rect::new([10.0, 0.0], [20.0, 3.0]), WindowMode::Intersects)
        .expect("window")
        .map(|hit| hit.map(|(_, id)| id))
        .collect::<Result<_, _>>()
        .expect("hits");
    hits.sort_unstable();
    assert_eq!(hits, [10, 11, 12, 13, 20]);
    let nearest = tree.nearest([50.2, 0.1], None).expect("nearest").next().transpose().expect("first");
    assert_eq!(nearest.map(|(_, id)| id), Some(50));
    drop(tree);
    txn.commit(Durability::Checksummed).expect("commit");
    let snapshot = db.begin_read().expect("reader");
    assert_eq!(snapshot.open_rtree(PLACES).expect("open").len().expect("len"), 100);
    const WRONG: RTreeDef<3, f32> = RTreeDef::points("places");
    assert!(matches!(snapshot.open_rtree(WRONG), Err(Error::TypeMismatch { .. })));
    let txn = db.begin_write().expect("writer");
    assert!(txn.delete_rtree(PLACES).expect("delete"));
    assert!(!txn.delete_rtree(PLACES).expect("gone"));
}

/// std-named reads and writes agree with a BTreeMap on a table of many leaves;
/// ranges walked from both ends alternately meet without repeating an entry.
#[test]
fn std_names_and_double_ended_ranges() {
    let db = memdb();
    let txn = db.begin_write().expect("writer");
    let mut table = txn.open_table(COUNTS).expect("create");
    let mut model = BTreeMap::new();
    for i in 0..5000u64 {
        let key = i * 7919 % 10007;
        table.insert(key, i).expect("insert");
        model.insert(key, i);
    }
    assert_eq!(table.len(), model.len() as u64);
    assert!(table.contains_key(7919).expect("contains") && !table.contains_key(10008).expect("contains"));
    let first = table.first_key_value().expect("first").map(|(k, v)| (k.key(), v.value()));
    assert_eq!(first, model.first_key_value().map(|(k, v)| (*k, *v)));
    let last = table.last_key_value().expect("last").map(|(k, v)| (k.key(), v.value()));
    assert_eq!(last, model.last_key_value().map(|(k, v)| (*k, *v)));
    for (low, high) in [(0, 10007), (100, 101), (500, 9000), (9000, 500), (3, 3)] {
        let mut range = table.range(low..high).expect("range");
        let mut expected = model.range(low..high.max(low));
        let mut front = true;
        loop {
            let (got, want) =
                if front { (range.next(), expected.next()) } else { (range.next_back(), expected.next_back()) };
            let got = got.map(|entry| entry.map(|(k, v)| (k.key(), v.value())).expect("entry"));
            assert_eq!(got, want.map(|(k, v)| (*k, *v)), "range {low}..{high}");
            if got.is_none() {
                break;
            }
            front = !front;
        }
    }
    assert_eq!(table.pop_first().expect("pop").map(|(k, _)| k.key()), model.pop_first().map(|(k, _)| k));
    assert_eq!(table.pop_last().expect("pop").map(|(k, v)| (k.key(), v.value())), model.pop_last());
    table.retain(|key, _| key % 3 == 0).expect("retain");
    model.retain(|key, _| key % 3 == 0);
    let all: Vec<(u64, u64)> =
        table.iter().expect("iter").map(|e| e.map(|(k, v)| (k.key(), v.value())).expect("entry")).collect();
    assert_eq!(all, model.into_iter().collect::<Vec<_>>());
    assert!(quiredb_structures::btree::check(table.untyped()).expect("check").is_empty());
}

/// `f64` ordered as `total_cmp` orders it (the model's order for float keys).
#[derive(Clone, Copy, Debug)]
struct Total(f64);
impl PartialEq for Total {
    fn eq(&self, other: &Self) -> bool {
        self.0.total_cmp(&other.0).is_eq()
    }
}
impl Eq for Total {}
impl PartialOrd for Total {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Total {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// Inserts `entries` (model key → value) into a fresh table of key type `K` and
/// checks iteration both ways, point reads and one sub-range against a `BTreeMap`.
fn round_trip<K: Key + 'static, M: Ord + Clone + Debug>(
    def: TableDef<K, (String, u64)>,
    entries: &[(M, String)],
    to_key: impl for<'a> Fn(&'a M) -> K::SelfType<'a>,
    from_key: impl for<'a> Fn(K::SelfType<'a>) -> M,
) -> Result<(), TestCaseError> {
    let db = memdb();
    let txn = db.begin_write().expect("writer");
    let mut table = txn.open_table(def).expect("create");
    let mut model = BTreeMap::new();
    for (i, (key, text)) in entries.iter().enumerate() {
        table.insert(to_key(key), (text.clone(), i as u64)).expect("insert");
        model.insert(key.clone(), (text.clone(), i as u64));
    }
    let decode = |entry: quiredb_structures::Result<(_, _)>| {
        let (key, value): (
            quiredb_structures::table::KeyGuard<'_, K>,
            quiredb_structures::table::ValueGuard<'_, (String, u64)>,
        ) = entry.expect("entry");
        (from_key(key.key()), value.value())
    };
    let forward: Vec<_> = table.iter().expect("iter").map(decode).collect();
    let expected: Vec<_> = model.clone().into_iter().collect();
    prop_assert_eq!(&forward, &expected);
    let mut backward: Vec<_> = table.iter().expect("iter").rev().map(decode).collect();
    backward.reverse();
    prop_assert_eq!(&backward, &expected);
    for (key, value) in &model {
        let stored = table.get(to_key(key)).expect("get").map(|v| v.value());
        prop_assert_eq!(stored.as_ref(), Some(value));
    }
    if let (Some(low), Some(high)) = (expected.get(expected.len() / 4), expected.get(expected.len() * 3 / 4)) {
        let (low_key, high_key) = (to_key(&low.0), to_key(&high.0));
        let got: Vec<_> = table
            .range((std::ops::Bound::Excluded(low_key), std::ops::Bound::Included(high_key)))
            .expect("range")
            .map(decode)
            .collect();
        let want: Vec<_> = model
            .range((std::ops::Bound::Excluded(&low.0), std::ops::Bound::Included(&high.0)))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        prop_assert_eq!(got, want);
    }
    prop_assert_eq!(table.len(), model.len() as u64);
    Ok(())
}

/// The seed to run with: `QUIRE_SEED`, else a random one; printed for replay.
fn runner(test: &str) -> TestRunner {
    println!("{test}:");
    let seed = quiredb_test_support::random_seed();
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRunner::new_with_rng(
        Config { cases: 24, ..Config::default() },
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    )
}

fn entries<M: Debug>(key: impl Strategy<Value = M>) -> impl Strategy<Value = Vec<(M, String)>> {
    prop::collection::vec((key, "[a-z\\x00]{0,6}"), 0..300)
}

/// Runs `round_trip` for key type `$def` over keys from `$strategy`.
macro_rules! case {
    ($name:literal, $type:ty, $strategy:expr, |$m:ident| $to:expr, |$k:ident| $from:expr) => {{
        const DEF: TableDef<$type, (String, u64)> = TableDef::new($name);
        runner(concat!("typed_keys_round_trip_in_order/", $name))
            .run(&entries($strategy), |entries| round_trip(DEF, &entries, |$m| $to, |$k| $from))
            .expect(concat!("key type ", $name));
    }};
}

/// Typed tables of every supported key type keep keys in the order of their decoded
/// values (floats in `total_cmp` order) and give back what was stored.
#[test]
fn typed_keys_round_trip_in_order() {
    case!("u8", u8, any::<u8>(), |m| *m, |k| k);
    case!("u16", u16, any::<u16>(), |m| *m, |k| k);
    case!("u32", u32, any::<u32>(), |m| *m, |k| k);
    case!("u64", u64, any::<u64>(), |m| *m, |k| k);
    case!("i8", i8, any::<i8>(), |m| *m, |k| k);
    case!("i16", i16, any::<i16>(), |m| *m, |k| k);
    case!("i32", i32, any::<i32>(), |m| *m, |k| k);
    case!("i64", i64, any::<i64>(), |m| *m, |k| k);
    case!("f32", f32, any::<f32>().prop_map(|f| Total(f64::from(f))), |m| m.0 as f32, |k| Total(f64::from(k)));
    case!("f64", f64, any::<f64>().prop_map(Total), |m| m.0, |k| Total(k));
    case!("bool", bool, any::<bool>(), |m| *m, |k| k);
    case!("str", &str, "[a-c\\x00é]{0,5}", |m| m.as_str(), |k| k.to_owned());
    case!("string", String, "[a-c\\x00é]{0,5}", |m| m.clone(), |k| k);
    case!("bytes", &[u8], prop::collection::vec(any::<u8>(), 0..6), |m| m.as_slice(), |k| k.to_vec());
    case!("vec", Vec<u8>, prop::collection::vec(0u8..3, 0..6), |m| m.clone(), |k| k);
    case!("array", [u8; 3], any::<[u8; 3]>(), |m| *m, |k| k);
    case!("pair", (String, i64), ("[ab\\x00]{0,3}", any::<i64>()), |m| m.clone(), |k| k);
    case!(
        "triple",
        (Vec<u8>, &str, u16),
        (prop::collection::vec(0u8..2, 0..3), "[ab]{0,3}", any::<u16>()),
        |m| (m.0.clone(), m.1.as_str(), m.2),
        |k| (k.0, k.1.to_owned(), k.2)
    );
    case!(
        "quad",
        (i8, String, f64, &[u8]),
        (any::<i8>(), "[a\\x00]{0,2}", any::<f64>().prop_map(Total), prop::collection::vec(any::<u8>(), 0..3)),
        |m| (m.0, m.1.clone(), m.2.0, m.3.as_slice()),
        |k| (k.0, k.1, Total(k.2), k.3.to_vec())
    );
}
