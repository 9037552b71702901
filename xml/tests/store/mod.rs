//! Crash safety of the XML store: a load killed midway leaves no trace, an
//! acknowledged one survives whole.
//!
//! - `crash`: a child process loads generated collections (new ones and appends) and
//!   is SIGKILLed at random moments; the parent checks what the reopened file holds.
//! - `faults`: a load and its commit on a [`FaultyStorage`] failing at a chosen I/O
//!   operation; every crash image of it is checked.
//!
//! Both replay a workload of *steps* fixed by a seed (this file): step `k` loads a few
//! generated documents into a new collection `c{k}` (odd `k`) or appends them to the
//! collection of step `k - 1` (even `k`), and sets a commit counter in a B+tree in the
//! same transaction. Verification compares every collection with roxmltree DOMs of
//! the documents it should hold and runs the store's, the structures' and the engine's
//! checkers.
//!
//! [`FaultyStorage`]: quiredb_engine::storage::FaultyStorage

#[path = "../../../engine/tests/support/child.rs"]
mod child;
mod crash;
mod faults;

use quiredb_engine::{Database, Durability, Options, PageRead, WriteTxn};
use quiredb_structures::btree::BTree;
use quiredb_test_support::Rng as TestRng;
use quiredb_xml::store::{self, LoadOptions, XmlStore};
use rand::Rng;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The B+tree holding the commit counter, and its key.
const PROGRESS: &str = "progress";
const STEP_KEY: &[u8] = b"step";

/// One step of the workload: `docs` loaded into `collection`.
pub struct Step {
    pub number: u64,
    pub collection: String,
    pub docs: Vec<String>,
}

/// Step `number` (from 1) of the workload of `seed`; documents of about `doc_bytes`.
pub fn step(seed: u64, number: u64, doc_bytes: usize) -> Step {
    assert!(number >= 1, "steps count from 1");
    let first = if number % 2 == 1 { number } else { number - 1 };
    let mut rng = TestRng::new(seed ^ number.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let docs = (0..rng.random_range(2..6)).map(|_| document(&mut rng, number, doc_bytes)).collect();
    Step { number, collection: format!("c{first}"), docs }
}

/// Collections and their documents after steps `1..=steps`.
pub fn expected(seed: u64, steps: u64, doc_bytes: usize) -> BTreeMap<String, Vec<String>> {
    let mut collections: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for number in 1..=steps {
        let step = step(seed, number, doc_bytes);
        collections.entry(step.collection).or_default().extend(step.docs);
    }
    collections
}

const NAMES: [&str; 8] = ["item", "name", "qty", "note", "list", "entry", "p", "b"];
const WORDS: [&str; 10] = ["alpha", "beta", "&amp;", "&lt;gamma&gt;", "δέλτα", "tab\there", "42", "-1.5", "x", " "];

/// A generated document of about `bytes`: elements, attributes, mixed content, long
/// and numeric values, comments, processing instructions, CDATA, character and entity
/// references, and a name only this step uses (so appends grow the dictionary).
fn document(rng: &mut TestRng, number: u64, bytes: usize) -> String {
    let mut out = String::from("<?xml version=\"1.0\"?>\n<!-- generated -->\n<catalog step=\"");
    write!(out, "{number}\">").expect("writing to a String");
    let mut items = 0;
    while out.len() < bytes {
        items += 1;
        write!(out, "\n  <item id=\"i{items}\" price=\"{:.2}\">", rng.random_range(0.0..500.0)).expect("String");
        for _ in 0..rng.random_range(1..6) {
            child(rng, number, &mut out, 0);
        }
        out.push_str("</item>");
    }
    out.push_str("\n</catalog>\n<?end done?>");
    out
}

/// One random child element (or other node) of an item, nested up to three deep.
fn child(rng: &mut TestRng, number: u64, out: &mut String, depth: usize) {
    match rng.random_range(0..10) {
        0 => write!(out, "<!--c{}-->", rng.random::<u16>()).expect("String"),
        1 => write!(out, "<?pi{} data {}?>", depth, rng.random::<u8>()).expect("String"),
        2 => write!(out, "<step{number} n=\"{}\"/>", rng.random::<u32>()).expect("String"),
        3 if depth < 3 => {
            let name = NAMES[rng.random_range(0..NAMES.len())];
            out.push_str(&format!("<{name}>"));
            for _ in 0..rng.random_range(0..4) {
                child(rng, number, out, depth + 1);
                text(rng, out, 3);
            }
            out.push_str(&format!("</{name}>"));
        }
        4 => {
            out.push_str("<desc><![CDATA[<raw> & ");
            text(rng, out, 12);
            out.push_str("]]>");
            text(rng, out, 40); // over the inline limit: the value stream
            out.push_str("</desc>");
        }
        5 => write!(out, "<qty>{}</qty>", rng.random_range(-1000..1000)).expect("String"),
        _ => {
            let name = NAMES[rng.random_range(0..NAMES.len())];
            write!(out, "<{name} k=\"&#65;{}\">", rng.random_range(0..50)).expect("String");
            text(rng, out, 6);
            writeln!(out, "</{name}>").expect("String");
        }
    }
}

/// Up to `words` random words (escaped where needed).
fn text(rng: &mut TestRng, out: &mut String, words: usize) {
    for _ in 0..rng.random_range(0..=words) {
        let word = WORDS[rng.random_range(0..WORDS.len())];
        // Inside CDATA an escape is literal text, which is fine too.
        out.push_str(word);
        out.push(' ');
    }
}

/// Pages of 4 KiB and a small pool, so a load spills pages before it commits.
pub fn options() -> Options {
    Database::builder().page_size(4096).cache_bytes(96 * 4096).into_options()
}

/// Durability of step `number`'s commit: each level in turn.
pub fn durability(number: u64) -> Durability {
    match number % 3 {
        0 => Durability::Full,
        1 => Durability::Checksummed,
        _ => Durability::None,
    }
}

/// The last step committed (0 before the first: the counter's tree is created by the
/// first step, so a file that lost every commit reads as step 0, not as an error).
pub fn progress(txn: &impl PageRead) -> quiredb_structures::Result<u64> {
    if txn.catalog_entry(PROGRESS)?.is_none() {
        return Ok(0);
    }
    let tree = BTree::open(txn, PROGRESS)?;
    let mut value = Vec::new();
    assert!(tree.get(STEP_KEY, &mut value)?, "the progress tree holds the step counter");
    Ok(u64::from_le_bytes(value.try_into().expect("an 8-byte counter")))
}

/// Writes `step`'s documents as files under `dir` (replacing any left by a killed
/// process) and returns their paths in load order.
pub fn write_inputs(dir: &Path, step: &Step) -> Vec<PathBuf> {
    let folder = dir.join(format!("step-{}", step.number));
    std::fs::create_dir_all(&folder).expect("an input folder");
    let paths: Vec<PathBuf> = (0..step.docs.len()).map(|i| folder.join(format!("d{i:02}.xml"))).collect();
    for (path, doc) in paths.iter().zip(&step.docs) {
        std::fs::write(path, doc).expect("an input file");
    }
    paths
}

/// Runs step `step` in `txn`: the load, then the counter.
pub fn apply(txn: &WriteTxn<'_>, step: &Step, paths: &[PathBuf]) -> quiredb_xml::Result<()> {
    store::load(txn, &step.collection, paths, LoadOptions::default(), &mut |_| {})?;
    let mut tree = BTree::open_or_create(txn, PROGRESS)?;
    tree.insert(STEP_KEY, &step.number.to_le_bytes())?;
    Ok(())
}

/// Checks `db` (engine, structures, every collection) and compares its collections
/// with `want`; returns the problems as sentences. A rollback at open (the engine
/// refusing the newest commit) is one unless `rollback_allowed`.
pub fn verify(db: &Database, want: &BTreeMap<String, Vec<String>>, rollback_allowed: bool) -> Vec<String> {
    let mut problems = Vec::new();
    let report = quiredb_engine::check(db).expect("the engine check runs");
    if !report.problems.is_empty() {
        problems.push(format!("engine check: {:?}", report.problems));
    }
    if let Some(rollback) = report.rollback.filter(|_| !rollback_allowed) {
        problems.push(format!("opening rolled back: {rollback}"));
    }
    let txn = db.begin_read().expect("a reader");
    let structures = quiredb_structures::check::check_all(&txn).expect("the structure checks run");
    problems.extend(structures.into_iter().map(|(name, problem)| format!("structure {name}: {problem}")));
    let found = store::collections(&txn).expect("the catalog reads");
    let names: Vec<&String> = want.keys().collect();
    if found.iter().collect::<Vec<_>>() != names {
        problems.push(format!("collections {found:?}, expected {names:?}"));
    }
    for (name, docs) in want.iter().filter(|(name, _)| found.contains(name)) {
        problems.extend(compare(&txn, name, docs).into_iter().map(|p| format!("collection {name}: {p}")));
    }
    problems
}

/// Checks collection `name` and compares it with roxmltree DOMs of `docs`.
pub fn compare(txn: &impl PageRead, name: &str, docs: &[String]) -> Vec<String> {
    let mut problems = store::check(txn, name).expect("the store check runs");
    let doms: Vec<_> = docs
        .iter()
        .map(|doc| quiredb_xml::collection::parse_document(doc, Path::new("generated.xml")).expect("well-formed"))
        .collect();
    let store = XmlStore::open(txn, name).expect("the collection opens");
    problems.extend(store::oracle::compare_with_dom(&store, &doms).expect("the comparison reads"));
    problems
}

/// A count from environment variable `name`, else `default`.
pub fn count_from_env(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

#[test]
fn generated_steps_load_and_read_back() {
    // Proves the workload is sound before anything is broken: the steps of a seed load,
    // commit, reopen and compare clean with their DOMs (new collections and appends).
    println!("xml store steps:");
    let seed = quiredb_test_support::random_seed();
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("steps.quire");
    {
        let db = Database::create(&path, options()).expect("create");
        for number in 1..=3 {
            let step = step(seed, number, 6_000);
            let paths = write_inputs(dir.path(), &step);
            let txn = db.begin_write().expect("writer");
            apply(&txn, &step, &paths).expect("load");
            txn.commit(durability(number)).expect("commit");
        }
    }
    let db = Database::open(&path, options()).expect("reopen");
    assert_eq!(progress(&db.begin_read().expect("reader")).expect("counter"), 3);
    let problems = verify(&db, &expected(seed, 3, 6_000), false);
    assert!(problems.is_empty(), "seed {seed}: {problems:#?}");
}
