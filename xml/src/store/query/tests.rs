//! Tests of the query engine against the reference evaluator: the same nodes (count,
//! and the sequence of string values compared through a hash of them joined by
//! newlines) for hand-written queries over edge cases, multi-document collections and
//! the real samples, and for random queries from a seeded walk over the path summary.
//!
//! Read next: `random.rs` (the random query walk).

use crate::reference;
use crate::store::{LoadOptions, XmlStore, load};
use crate::xpath;
use quiredb_engine::{Database, Durability, Options, PageRead};
use std::path::{Path, PathBuf};

/// A loaded collection with its documents kept for the reference evaluator.
pub(super) struct Loaded {
    _dir: tempfile::TempDir,
    pub db: Database,
    pub texts: Vec<String>,
}

impl Loaded {
    /// The documents as DOMs, for the reference evaluator.
    pub fn doms(&self) -> Vec<roxmltree::Document<'_>> {
        self.texts
            .iter()
            .map(|t| crate::collection::parse_document(t, Path::new("t.xml")).expect("well-formed"))
            .collect()
    }
}

/// Loads `docs` (one file each) as collection `c`.
pub(super) fn load_docs(docs: &[Vec<u8>]) -> Loaded {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = Database::create(dir.path().join("q.qdb"), Options::default()).expect("create");
    let folder = dir.path().join("in");
    std::fs::create_dir_all(&folder).expect("folder");
    let paths: Vec<PathBuf> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let path = folder.join(format!("d{i:05}.xml"));
            std::fs::write(&path, d).expect("write");
            path
        })
        .collect();
    let txn = db.begin_write().expect("write txn");
    load(&txn, "c", &paths, LoadOptions::default(), &mut |_| {}).expect("loads");
    txn.commit(Durability::default()).expect("commit");
    let texts = docs
        .iter()
        .map(|d| crate::parse::decode(d.clone(), Path::new("t.xml")).expect("decodes"))
        .map(|t| crate::collection::Source::new("t.xml".into(), t).text)
        .collect();
    Loaded { _dir: dir, db, texts }
}

/// FNV-1a over the values joined by newlines.
fn hash_values<'a>(values: impl Iterator<Item = &'a [u8]>) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for (i, value) in values.enumerate() {
        for &b in (if i > 0 { &b"\n"[..] } else { &b""[..] }).iter().chain(value) {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

/// The reference's answer: count and hash of string values.
pub(super) fn reference_answer(docs: &[roxmltree::Document<'_>], query: &str) -> (usize, u64) {
    let parsed = xpath::parse(query).unwrap_or_else(|e| panic!("{query}: {e}"));
    let items = reference::evaluate(&parsed, docs);
    let values: Vec<String> = items.iter().map(reference::Item::string_value).collect();
    (items.len(), hash_values(values.iter().map(|v| v.as_bytes())))
}

/// The store's answer: count (through `count` and through `run`) and hash of values.
pub(super) fn store_answer<T: PageRead>(store: &XmlStore<'_, T>, query: &str) -> (usize, u64) {
    let mut prepared = store.prepare(query).unwrap_or_else(|e| panic!("{query}: {e}"));
    let counted = prepared.count().expect("count");
    let pres: Vec<u64> = prepared.run().expect("run").iter().map(|l| l.pre).collect();
    assert_eq!(counted, pres.len() as u64, "{query}: count() and run() disagree");
    assert!(pres.windows(2).all(|w| w[0] < w[1]), "{query}: not in document order");
    let mut values = Vec::new();
    for &pre in &pres {
        let mut v = Vec::new();
        prepared.string_value(pre, &mut v).expect("string value");
        values.push(v);
    }
    (pres.len(), hash_values(values.iter().map(Vec::as_slice)))
}

/// Asserts that every query gives the reference's answer on `docs`.
pub(super) fn assert_same(docs: &[Vec<u8>], queries: &[&str]) {
    let loaded = load_docs(docs);
    let doms = loaded.doms();
    let txn = loaded.db.begin_read().expect("read");
    let store = XmlStore::open(&txn, "c").expect("open");
    for query in queries {
        let expected = reference_answer(&doms, query);
        let got = store_answer(&store, query);
        assert_eq!(got, expected, "{query}: (count, value hash) differ from the reference");
    }
}

const DOC: &str = r#"<r xmlns:x="urn:x"><a id="1" k="x"><b>7</b><b> 8 </b><c>hi<d>there</d></c></a><a id="2"><c>no</c><!--note--><?pi data?></a><b>-1.5</b><x:b x:id="9">ns</x:b><a><a id="3"><b>7</b><a id="4"/></a></a></r>"#;

const QUERIES: &[&str] = &[
    "/",
    "/r",
    "r/a/c",
    "/r/a/@id",
    "//b",
    "//a/c",
    "//c/text()",
    "//@*",
    "//@id",
    "/r/*/node()",
    "//node()",
    "//.",
    "/r//.",
    "//a//.",
    "//a[b = 8]/@id",
    "//a[b = '8']/@id",
    "//a[b > 7.5]/@id",
    "//a[b != 7]/@id",
    "//a[not(b)]/@id",
    "//a[@k or c = 'no']/@id",
    "//b[. < -1]",
    "//a[c < 'x']",
    "//d | //c | //d",
    "//a//d | /r//d",
    "//a//a",
    "//a/a/a",
    "//a[.//a]/@id",
    "//a[./a/a]",
    "//a[a]",
    "//a[not(a)]",
    "//*[@id = 3]",
    "//*[@id >= 2]",
    "//@id[. = '2']",
    "//a[@id = '1' and b]",
    "//a[c and (b or d)]",
    "//a[c/d = 'there']",
    "//a[.//d = 'there']",
    "//c[text() = 'hi']",
    "//a/@*",
    "//a[@*]",
    "/r/b | /r/a/b",
    "//b[@id]",
    "//@id/text()",
    "//text()",
    "//a[b]/b",
    "//a[b][c]",
    "//a[not(@id) and a]",
    "/*",
    "/*/*",
    "//*",
    "//*[not(*)]",
    "//a[. = '7']",
    "//a[. = 7]",
    "//nothing",
    "//a[nothing]",
    "//a[not(nothing)]/@id",
];

#[test]
fn hand_written_queries_match_the_reference() {
    assert_same(&[DOC.as_bytes().to_vec()], QUERIES);
}

#[test]
fn multi_document_collections_are_one_label_space() {
    let docs: Vec<Vec<u8>> = (0..30)
        .map(|i| {
            format!("<r><a id=\"{i}\"><b>{}</b></a>{}</r>", i % 7, if i % 3 == 0 { "<c/>" } else { "" }).into_bytes()
        })
        .collect();
    assert_same(&docs, &["//a", "/r/a/b", "//a[b = 3]/@id", "/r[c]/a/@id", "//b[. > 4]", "/", "//r[not(c)]"]);
}

#[test]
fn an_empty_answer_and_a_missing_name_are_empty_not_errors() {
    assert_same(&[b"<r><a/></r>".to_vec()], &["//zzz", "/zzz/a", "//a[@zzz]", "//a[zzz = 1]", "//@zzz"]);
}

#[test]
fn declared_defaults_are_attributes_queries_see() {
    let doc = "<!DOCTYPE r [<!ATTLIST item status (open|closed) 'open' id ID #IMPLIED>]>\
               <r><item id=' i1 '/><item id='i2' status='closed'/><item/></r>";
    let queries = ["//item[@status = 'open']", "//item/@status", "//item[@id = 'i1']", "//@*"];
    assert_same(&[doc.as_bytes().to_vec()], &queries);
    let loaded = load_docs(&[doc.as_bytes().to_vec()]);
    let txn = loaded.db.begin_read().expect("read");
    let store = XmlStore::open(&txn, "c").expect("open");
    assert_eq!(store_answer(&store, "//item[@status = 'open']").0, 2);
    assert_eq!(store_answer(&store, "//item[@id = 'i1']").0, 1);
}

#[test]
fn refused_constructs_are_errors_naming_them() {
    let loaded = load_docs(&[b"<r/>".to_vec()]);
    let txn = loaded.db.begin_read().expect("read");
    let store = XmlStore::open(&txn, "c").expect("open");
    for (query, column) in [("//a[$v]", 5), ("//a/namespace::b", 5), ("//a/id('x')", 5), ("//a[", 5), ("count(1)", 7)] {
        let error = store.prepare(query).err().unwrap_or_else(|| panic!("{query} must fail")).to_string();
        assert!(error.contains(&format!("column {column}")), "{query}: {error}");
    }
    let error = XmlStore::open(&txn, "missing").err().expect("missing collection").to_string();
    assert!(error.contains("\"missing\""), "{error}");
}

#[test]
fn large_intermediate_results_with_a_small_answer() {
    let mut doc = String::from("<r>");
    for i in 0..20_000 {
        doc.push_str(&format!("<p><q>{i}</q>{}</p>", if i == 12_345 { "<rare/>" } else { "" }));
    }
    doc.push_str("</r>");
    assert_same(&[doc.into_bytes()], &["//p[rare]/q", "//q[. = 12345]", "//p[q > 19998]", "//p[q = '7' or rare]"]);
}

#[test]
fn real_samples_answer_as_the_reference_does() {
    let queries: &[(&str, &[&str])] = &[
        (
            "xmark_f0.1.xml.zst",
            &[
                "/site/regions/*/item",
                "//item[@featured]/name",
                "//person[address/city = 'Moscow']/name",
                "//open_auction[initial > 200]/@id",
                "//category//keyword",
                "/site/people/person[profile/@income > 50000 and not(phone)]/@id",
                "//listitem//bold | //listitem//emph",
                "//closed_auction[price >= 100]/buyer/@person",
                "//item[payment = 'Creditcard']/location",
                "//description//text()",
            ],
        ),
        (
            "dblp_sample.tar.zst",
            &["//article[year = 2001]/title", "/dblp/*[author]/@key", "//inproceedings[.//i]/title"],
        ),
        (
            "shakespeare_bosak.tar.zst",
            &["//SPEECH[SPEAKER = 'HAMLET']/LINE", "//ACT/TITLE", "//SCENE[.//STAGEDIR]/TITLE"],
        ),
        (
            "swissprot_uniprot_samples.tar.zst",
            &["//entry/accession", "//*[@type = 'primary']", "//feature[@type]/location"],
        ),
    ];
    for (sample, qs) in queries {
        let Some(documents) = crate::parse::tests::samples::documents(sample) else { return };
        let bytes: Vec<Vec<u8>> = documents.into_iter().map(|(_, b)| b).collect();
        assert_same(&bytes, qs);
    }
}

#[test]
fn a_parallel_run_gives_the_sequential_answer() {
    let mut doc = String::from("<r>");
    for i in 0..12_000 {
        doc.push_str(&format!(
            "<p n=\"{i}\"><q>{}</q>{}<s><q>x</q></s></p>",
            i % 100,
            if i % 7 == 0 { "<t/>" } else { "" }
        ));
    }
    doc.push_str("</r>");
    let loaded = load_docs(&[doc.into_bytes()]);
    let txn = loaded.db.begin_read().expect("read");
    let store = XmlStore::open(&txn, "c").expect("open");
    for query in ["//p[t]/q", "/r/p[q > 50]//q", "//p/s/q", "//p[not(t)]/@n", "/r/p/q | //s"] {
        let mut prepared = store.prepare(query).expect("prepares");
        let sequential = prepared.run().expect("runs").to_vec();
        for threads in [1, 2, 3] {
            let parallel = prepared.run_parallel(threads, || Ok(loaded.db.begin_read()?)).expect("runs in parallel");
            assert_eq!(parallel, sequential.as_slice(), "{query} with {threads} threads");
        }
    }
}

#[test]
fn comparisons_answered_by_the_value_index_match_the_reference() {
    // Many candidates, so the value index answers (`value.rs`), with values that
    // test its rules: numbers with spaces, number-looking strings, negatives, text.
    let values = ["7", " 7 ", "07", "7.0", "-2.5", "abc", "ABC", "1e3", "x y", "100", "99.99"];
    let mut doc = String::from("<r>");
    for i in 0..3_000 {
        let v = values[i % values.len()];
        doc.push_str(&format!("<e a=\"{v}\" n=\"{}\"><v>{v}</v><w>{}</w></e>", i % 50, i % 13));
    }
    doc.push_str("</r>");
    let mut queries = Vec::new();
    for op in ["=", "!=", "<", "<=", ">", ">="] {
        for literal in ["7", "'7'", "'07'", "-2.5", "'abc'", "''", "100", "'1e3'", "'x y'", "6.5"] {
            queries.push(format!("//e[v {op} {literal}]/@n"));
            queries.push(format!("//e[@a {op} {literal}]/w"));
        }
    }
    let queries: Vec<&str> = queries.iter().map(String::as_str).collect();
    assert_same(&[doc.into_bytes()], &queries);
}
