//! The store's XPath engine on every generated collection kind: query sets drawn by the
//! QuickXDB method (`crate::queryset`) over a small generated document, every query
//! answered by the store (`XmlStore::prepare`) as the reference evaluator answers it —
//! the same count, and the same string values in the same order (compared through a
//! hash of them joined by newlines).
//!
//! A second test runs a seeded mix of full XPath 1.0 (every axis, positional
//! predicate and function; `quiredb_xml::mix`) on the same kinds.
//!
//! `QUIRE_SEED` replays a run: it seeds the documents and the query sets, and is
//! printed first and in every failure.
//!
//! Read next: `store_tests.rs` (the same collections read back node for node),
//! `../queryset/generate.rs` (how the queries are drawn), and quiredb-xml's
//! `store/query/random_tests.rs` (random queries beyond these shapes).

use super::{Kind, generate};
use crate::queryset::{GeneratorOptions, generate_sets};
use quiredb_engine::{Database, Durability, Options, PageRead};
use quiredb_xml::mix::{self, QueryMix, reference_answer};
use quiredb_xml::store::{self, LoadOptions, XmlStore};
use quiredb_xml::{collection, reference, xpath};

/// Size of each generated document (1 ≈ 116 MB, so about 460 KB).
const FACTOR: f64 = 0.004;
/// Queries per selectivity bucket, and candidates drawn to fill the buckets.
const PER_SET: usize = 20;
const MAX_ATTEMPTS: usize = 300;
/// Fewest queries a kind must yield for the check to mean something.
const MIN_QUERIES: usize = 10;

#[test]
fn every_generated_kind_answers_its_query_sets_as_the_reference_does() {
    println!("query sets on generated collections:");
    let seed = quiredb_test_support::random_seed();
    let mut failures = Vec::new();
    for kind in Kind::ALL {
        let checked = check_kind(kind, seed, &mut failures);
        assert!(checked >= MIN_QUERIES, "{}: QUIRE_SEED={seed}: only {checked} queries drawn", kind.name());
        println!("{}: {checked} queries as the reference", kind.name());
    }
    assert!(failures.is_empty(), "QUIRE_SEED={seed}: {} queries differ:\n{}", failures.len(), failures.join("\n"));
}

/// Full XPath 1.0 queries per generated kind (`quiredb_xml::mix`), over a smaller
/// document (about 35 KB): the reference walks the whole DOM for every context node of
/// a following or preceding step.
const MIX_QUERIES: usize = 100;
const MIX_FACTOR: f64 = 0.0003;

#[test]
fn every_generated_kind_answers_a_full_xpath_mix_as_the_reference_does() {
    println!("full XPath 1.0 mix on generated collections:");
    let seed = quiredb_test_support::random_seed();
    let mut failures = Vec::new();
    for kind in Kind::ALL {
        let dir = tempfile::tempdir().expect("temp dir");
        let (db, path) = load_kind(kind, MIX_FACTOR, seed, dir.path());
        let sources = collection::load(&path).expect("reads");
        let docs = collection::parse_all(&sources).expect("parses");
        let txn = db.begin_read().expect("read");
        let collection_store = XmlStore::open(&txn, "c").expect("open");
        let mut queries = QueryMix::new(&docs, seed);
        for _ in 0..MIX_QUERIES {
            let text = queries.query();
            let (expected, got) = (reference_answer(&docs, &text), mix::store_answer(&collection_store, &text));
            if expected != got {
                failures.push(format!("  {}: {text}: reference {expected:?}, store {got:?}", kind.name()));
            }
        }
    }
    assert!(failures.is_empty(), "QUIRE_SEED={seed}: {} queries differ:\n{}", failures.len(), failures.join("\n"));
}

/// Generates one document of `kind` in `dir` and loads it as collection `c`.
fn load_kind(kind: Kind, factor: f64, seed: u64, dir: &std::path::Path) -> (Database, std::path::PathBuf) {
    let path = dir.join(format!("{}.xml", kind.name()));
    generate(kind, factor, seed, std::fs::File::create(&path).expect("create")).expect("generates");
    let db = Database::create(dir.join("t.quire"), Options::default()).expect("create db");
    let txn = db.begin_write().expect("write");
    store::load(&txn, "c", std::slice::from_ref(&path), LoadOptions::default(), &mut |_| {}).expect("loads");
    txn.commit(Durability::Checksummed).expect("commit");
    (db, path)
}

/// Generates and loads one document of `kind`, draws its query sets and appends every
/// query the store answers differently to `failures`; returns the number of queries.
fn check_kind(kind: Kind, seed: u64, failures: &mut Vec<String>) -> usize {
    let dir = tempfile::tempdir().expect("temp dir");
    let (db, path) = load_kind(kind, FACTOR, seed, dir.path());
    let sources = collection::load(&path).expect("reads");
    let docs = collection::parse_all(&sources).expect("parses");
    // The BaseX bug's shapes are kept: the store has no reason to miss them.
    let options = GeneratorOptions { seed, per_set: PER_SET, max_attempts: MAX_ATTEMPTS, avoid_basex_bug: false };
    let sets = generate_sets(kind.name(), &docs, &options).expect("query sets");
    let txn = db.begin_read().expect("read");
    let collection_store = XmlStore::open(&txn, "c").expect("open");
    let mut checked = 0;
    for (count, text) in sets.iter().flat_map(|set| &set.queries) {
        let query = xpath::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let items = reference::evaluate(&query, &docs);
        assert_eq!(items.len(), *count, "{text}: the set's count is the reference's");
        let expected = (items.len(), hash_joined(items.iter().map(|i| i.string_value().into_bytes())));
        match store_answer(&collection_store, text) {
            Ok(got) if got == expected => {}
            Ok(got) => failures.push(format!("  {}: {text}: reference {expected:?}, store {got:?}", kind.name())),
            Err(reason) => failures.push(format!("  {}: {text}: {reason}", kind.name())),
        }
        checked += 1;
    }
    checked
}

/// The store's count and hash of string values, or why it has none.
fn store_answer<T: PageRead>(collection_store: &XmlStore<'_, T>, text: &str) -> Result<(usize, u64), String> {
    let mut prepared = collection_store.prepare(text).map_err(|e| format!("prepare: {e}"))?;
    let counted = prepared.count().map_err(|e| format!("count: {e}"))?;
    let pres: Vec<u64> = prepared.run().map_err(|e| format!("run: {e}"))?.iter().map(|l| l.pre).collect();
    if counted != pres.len() as u64 {
        return Err(format!("count() says {counted}, run() gives {} nodes", pres.len()));
    }
    let mut values = Vec::with_capacity(pres.len());
    for pre in pres {
        let mut value = Vec::new();
        prepared.string_value(pre, &mut value).map_err(|e| format!("string value of {pre}: {e}"))?;
        values.push(value);
    }
    Ok((values.len(), hash_joined(values)))
}

/// FNV-1a over the values joined by newlines.
fn hash_joined(values: impl IntoIterator<Item = Vec<u8>>) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for (i, value) in values.into_iter().enumerate() {
        let separator: &[u8] = if i > 0 { b"\n" } else { b"" };
        for &b in separator.iter().chain(&value) {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}
