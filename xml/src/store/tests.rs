//! Tests of the XML store: every data-model edge case and every real sample loaded,
//! read back node for node against roxmltree's DOM (`oracle.rs`) and checked
//! (`check.rs`); appends, reopening, dropping, malformed input, serialisation, the
//! value index against a brute-force scan, and deep nesting.
//!
//! Read next: `oracle.rs`, `check.rs`.

use super::{Kind, LoadOptions, XmlStore, check, drop_collection, load, oracle::compare_with_dom};
use crate::error::Error;
use quiredb_engine::{Database, Durability, Options, PageRead};
use std::ops::Bound;
use std::path::{Path, PathBuf};

/// A database in a temporary folder.
struct Fixture {
    dir: tempfile::TempDir,
    db: Database,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = Database::create(dir.path().join("t.qdb"), Options::default()).expect("create");
    Fixture { dir, db }
}

impl Fixture {
    /// Writes documents as files `d000.xml`, … and returns their paths.
    fn files(&self, docs: &[&[u8]]) -> Vec<PathBuf> {
        let folder = self.dir.path().join(format!("in{}", std::fs::read_dir(self.dir.path()).expect("dir").count()));
        std::fs::create_dir_all(&folder).expect("folder");
        docs.iter()
            .enumerate()
            .map(|(i, doc)| {
                let path = folder.join(format!("d{i:03}.xml"));
                std::fs::write(&path, doc).expect("write");
                path
            })
            .collect()
    }

    /// Loads `paths` into `name` in one committed transaction.
    fn load(&self, name: &str, paths: &[PathBuf]) -> Result<super::LoadSummary, Error> {
        let txn = self.db.begin_write()?;
        let summary = load(&txn, name, paths, LoadOptions::default(), &mut |_| {})?;
        txn.commit(Durability::default())?;
        Ok(summary)
    }

    fn reopen(self) -> Fixture {
        let path = self.dir.path().join("t.qdb");
        drop(self.db);
        Fixture { db: Database::open(path, Options::default()).expect("reopen"), dir: self.dir }
    }
}

/// Asserts that collection `name` equals the roxmltree DOMs of `docs` and is clean.
fn assert_matches(db: &Database, name: &str, docs: &[Vec<u8>]) {
    let texts: Vec<String> = docs
        .iter()
        .map(|d| crate::parse::decode(d.clone(), Path::new("t.xml")).expect("decodes"))
        .map(|t| crate::collection::Source::new("t.xml".into(), t).text)
        .collect();
    let doms: Vec<_> =
        texts.iter().map(|t| crate::collection::parse_document(t, Path::new("t.xml")).expect("well-formed")).collect();
    let txn = db.begin_read().expect("read");
    let store = XmlStore::open(&txn, name).expect("open");
    let differences = compare_with_dom(&store, &doms).expect("compare");
    assert!(differences.is_empty(), "{differences:#?}");
    let problems = check(&txn, name).expect("check");
    assert!(problems.is_empty(), "{problems:#?}");
    let structures = quiredb_structures::check::check_all(&txn).expect("structures");
    assert!(structures.is_empty(), "{structures:#?}");
}

fn round_trip(docs: &[&[u8]]) {
    let f = fixture();
    let paths = f.files(docs);
    f.load("c", &paths).expect("loads");
    assert_matches(&f.db, "c", &docs.iter().map(|d| d.to_vec()).collect::<Vec<_>>());
}

#[test]
fn every_data_model_edge_case_reads_back_as_roxmltree_has_it() {
    let cases: &[&[u8]] = &[
        b"<a/>",
        b"<a>x<![CDATA[<y>]]>&#65;&amp;z</a>",
        b"<a>\r\nline\rend\r\n</a>",
        b"<a k=' x\ty\nz\r\n' j=\"&#10;&#9;\"/>",
        b"<?xml version='1.0'?><!--c1--><?pi  value ?><a><?nov?><!--in--></a><!--after-->",
        b"<!DOCTYPE a [<!ENTITY e 'ent<b>bold</b>'>]><a>x&e;y</a>",
        b"<?xml version='1.0' encoding='ISO-8859-1'?><a k='\xe9'>caf\xe9</a>",
        b"<!DOCTYPE dblp SYSTEM 'dblp.dtd'><a>&eacute;t&eacute;</a>",
        b"<!DOCTYPE a [<!ATTLIST b k CDATA 'd' t NMTOKENS ' 1  2 '><!ATTLIST a xmlns:p CDATA 'urn:p'>]><a><b/><b k='x' t=' 3 '/><p:c/></a>",
        b"<p:a xmlns:p='urn:p' xmlns='urn:d' p:k='1'><b/><p:c>t</p:c></p:a>",
        b"<a>  <b> </b>\n<c>\t</c><![CDATA[]]></a>",
        b"<r><n>40</n><n> 40.0 </n><n>-1.5</n><n>x</n><n/></r>",
        "<a t='タ'>日本語のテキストはここにあります。もっと長いテキストで値の流れを使います。</a>".as_bytes(),
    ];
    for case in cases {
        round_trip(&[case]);
    }
}

#[test]
fn long_values_stream_through_chunks_and_blobs() {
    let big = "word ".repeat(40_000);
    let doc = format!(
        "<a><b k='{}'>{big}</b><c>{}</c><d>short</d><!--{}--></a>",
        "v".repeat(300),
        "y".repeat(9000),
        "z".repeat(30)
    );
    round_trip(&[doc.as_bytes(), b"<e>next document</e>"]);
}

#[test]
fn a_collection_of_many_documents_is_one_label_space() {
    let docs: Vec<String> =
        (0..300).map(|i| format!("<doc n='{i}'><t>title {i}</t>{}</doc>", "<p>x</p>".repeat(i % 7))).collect();
    let refs: Vec<&[u8]> = docs.iter().map(|d| d.as_bytes()).collect();
    round_trip(&refs);
}

#[test]
fn appends_reopens_and_drops() {
    let f = fixture();
    let first: Vec<Vec<u8>> = vec![b"<a><b>1</b></a>".to_vec(), b"<a><b>2</b><c k='v'/></a>".to_vec()];
    let second: Vec<Vec<u8>> = vec![b"<z><b>3</b>text</z>".to_vec()];
    f.load("c", &f.files(&first.iter().map(Vec::as_slice).collect::<Vec<_>>())).expect("first load");
    f.load("c", &f.files(&second.iter().map(Vec::as_slice).collect::<Vec<_>>())).expect("second load");
    let all: Vec<Vec<u8>> = first.iter().chain(&second).cloned().collect();
    assert_matches(&f.db, "c", &all);
    let f = f.reopen();
    assert_matches(&f.db, "c", &all);
    {
        let txn = f.db.begin_read().expect("read");
        let store = XmlStore::open(&txn, "c").expect("open");
        assert_eq!(store.documents().expect("documents").len(), 3);
        assert_eq!(store.lookup_string(store.name_id("b").unwrap().unwrap(), Kind::Element, "3").unwrap(), [12]);
    }
    let pages_before = f.db.meta().live_pages;
    let txn = f.db.begin_write().expect("write");
    drop_collection(&txn, "c").expect("drop");
    txn.commit(Durability::default()).expect("commit");
    let txn = f.db.begin_read().expect("read");
    assert!(matches!(XmlStore::open(&txn, "c"), Err(Error::NoSuchCollection(_))));
    assert!(txn.catalog_list().expect("catalog").is_empty(), "every component is gone");
    assert!(f.db.meta().live_pages < pages_before);
    let report = quiredb_engine::check(&f.db).expect("check");
    assert!(report.is_clean(), "{report:?}");
}

#[test]
fn a_malformed_document_fails_the_load_and_skip_bad_skips_it() {
    let f = fixture();
    let paths = f.files(&[b"<a>ok</a>", b"<a>\n<b></a>", b"<c/>"]);
    let txn = f.db.begin_write().expect("write");
    let err = load(&txn, "c", &paths, LoadOptions::default(), &mut |_| {}).expect_err("malformed");
    assert!(matches!(&err, Error::Xml { line: 2, file, .. } if file == &paths[1]), "{err}");
    drop(txn);
    let txn = f.db.begin_read().expect("read");
    assert!(txn.catalog_list().expect("catalog").is_empty(), "the aborted load left nothing");
    drop(txn);
    let txn = f.db.begin_write().expect("write");
    let summary = load(&txn, "c", &paths, LoadOptions { skip_bad: true }, &mut |_| {}).expect("skips");
    txn.commit(Durability::default()).expect("commit");
    assert_eq!(summary.documents, 2);
    assert_eq!(summary.skipped.len(), 1);
    assert_eq!(summary.skipped[0].0, paths[1]);
    assert_matches(&f.db, "c", &[b"<a>ok</a>".to_vec(), b"<c/>".to_vec()]);
}

/// roxmltree's view of `text`, a line per node in document order (kind, expanded
/// name, text, attributes with their namespaces), for comparing serialisations.
fn outline(text: &str) -> Vec<String> {
    let d = roxmltree::Document::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    d.descendants()
        .map(|n| {
            let attributes: Vec<_> = n
                .attributes()
                .map(|a| (a.namespace().map(str::to_owned), a.name().to_owned(), a.value().to_owned()))
                .collect();
            format!("{:?} {:?} {:?} {attributes:?}", n.node_type(), n.tag_name(), n.text())
        })
        .collect()
}

#[test]
fn serialised_nodes_parse_back_to_the_same_tree() {
    let doc = "<r a='1 &amp; &quot;2&quot;' b='x&#10;y'><!--c--><?p v?><?q?><e/><t>a &lt; b &amp; c\r</t>\
               <m>mixed <i>in</i> text</m><e k='v'/><![CDATA[]]><t><![CDATA[]]></t></r>";
    let f = fixture();
    f.load("c", &f.files(&[doc.as_bytes()])).expect("loads");
    let txn = f.db.begin_read().expect("read");
    let store = XmlStore::open(&txn, "c").expect("open");
    let mut xml = Vec::new();
    store.write_xml(0, &mut xml).expect("serialises");
    let text = String::from_utf8(xml).expect("UTF-8");
    assert_eq!(outline(&text), outline(doc), "{text}");
    let mut one = Vec::new();
    let m =
        (0..store.len()).find(|&p| store.node(p).unwrap().name == store.name_id("m").unwrap().unwrap_or(0)).expect("m");
    store.write_xml(m, &mut one).expect("subtree");
    assert_eq!(String::from_utf8(one).unwrap(), "<m>mixed <i>in</i> text</m>");
    let mut value = Vec::new();
    store.string_value(m, &mut value).expect("string value");
    assert_eq!(value, b"mixed in text");
}

#[test]
fn value_lookups_equal_a_brute_force_scan() {
    let mut doc = String::from("<r>");
    for i in 0..2_000 {
        doc += &format!(
            "<p id='p{i}' g='{}'><v>{}</v><w>{}</w></p>",
            i % 13,
            i % 50,
            if i % 3 == 0 { format!("{}.5", i % 7) } else { format!("t{}", i % 11) }
        );
    }
    doc += "</r>";
    let f = fixture();
    f.load("c", &f.files(&[doc.as_bytes()])).expect("loads");
    let txn = f.db.begin_read().expect("read");
    let store = XmlStore::open(&txn, "c").expect("open");
    let mut nodes = Vec::new();
    let mut cursor = store.nodes(0, u64::MAX).unwrap();
    while let Some(n) = cursor.next_node().unwrap() {
        nodes.push(n);
    }
    let value_of = |pre: u64| {
        let mut v = Vec::new();
        store.string_value(pre, &mut v).unwrap();
        String::from_utf8(v).unwrap()
    };
    for (kind, name, literal) in [
        (Kind::Attribute, "id", "p17"),
        (Kind::Attribute, "g", "4"),
        (Kind::Element, "v", "7"),
        (Kind::Element, "w", "3.5"),
        (Kind::Element, "w", "t4"),
        (Kind::Element, "v", "x"),
    ] {
        let id = store.name_id(name).unwrap().unwrap();
        let want: Vec<u64> = nodes
            .iter()
            .filter(|n| n.kind == kind && n.name == id && value_of(n.pre) == literal)
            .map(|n| n.pre)
            .collect();
        assert_eq!(store.lookup_string(id, kind, literal).unwrap(), want, "{name} = {literal}");
        assert!(store.value_index_complete(kind, id));
    }
    let v = store.name_id("v").unwrap().unwrap();
    let want: Vec<u64> = nodes
        .iter()
        .filter(|n| n.kind == Kind::Element && n.name == v)
        .filter(|n| {
            (10.0..=20.0).contains(&crate::reference::xpath_number(&value_of(n.pre)))
                && crate::reference::xpath_number(&value_of(n.pre)) != 10.0
        })
        .map(|n| n.pre)
        .collect();
    assert_eq!(store.lookup_number(v, Kind::Element, Bound::Excluded(10.0), Bound::Included(20.0)).unwrap(), want);
}

#[test]
fn deep_nesting_loads_without_recursion() {
    let depth = 100_000;
    let doc = format!("{}x{}", "<d>".repeat(depth), "</d>".repeat(depth));
    let f = fixture();
    f.load("c", &f.files(&[doc.as_bytes()])).expect("loads");
    let txn = f.db.begin_read().expect("read");
    assert!(check(&txn, "c").expect("check").is_empty());
    let store = XmlStore::open(&txn, "c").expect("open");
    assert_eq!(store.len(), depth as u64 + 2);
    let leaf = store.node(depth as u64 + 1).expect("text node");
    assert_eq!((leaf.kind, leaf.level), (Kind::Text, depth as u32 + 1));
    let mut value = Vec::new();
    store.string_value(1, &mut value).expect("string value");
    assert_eq!(value, b"x");
}

#[test]
fn real_samples_read_back_as_roxmltree_has_them() {
    for sample in
        ["xmark_f0.1.xml.zst", "shakespeare_bosak.tar.zst", "dblp_sample.tar.zst", "swissprot_uniprot_samples.tar.zst"]
    {
        let Some(documents) = crate::parse::tests::samples::documents(sample) else { return };
        let f = fixture();
        let bytes: Vec<Vec<u8>> = documents.into_iter().map(|(_, b)| b).collect();
        f.load("c", &f.files(&bytes.iter().map(Vec::as_slice).collect::<Vec<_>>())).expect("loads");
        assert_matches(&f.db, "c", &bytes);
        println!("{sample}: {} documents equal", bytes.len());
    }
}

#[test]
#[ignore = "long: writes and loads a 1 GiB document (cargo test --release -- --ignored)"]
fn a_one_gib_document_loads_checks_and_reads_back() {
    use std::io::Write;
    let f = fixture();
    let path = f.dir.path().join("big.xml");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).expect("create"));
    let (mut records, mut written) = (0u64, 0u64);
    out.write_all(b"<big>\n").expect("write");
    while written < 1 << 30 {
        let record = format!(
            "  <r id='r{records}' n='{}'><t>title {records} of the long test</t><v>{}.{}</v>{}</r>\n",
            records % 97,
            records % 1000,
            records % 10,
            "<p>some longer running text that goes to the value stream, record after record</p>"
                .repeat((records % 4) as usize)
        );
        out.write_all(record.as_bytes()).expect("write");
        written += record.len() as u64;
        records += 1;
    }
    out.write_all(b"</big>\n").expect("write");
    out.flush().expect("flush");
    drop(out);
    f.load("big", std::slice::from_ref(&path)).expect("loads");
    let txn = f.db.begin_read().expect("read");
    assert!(check(&txn, "big").expect("check").is_empty());
    let store = XmlStore::open(&txn, "big").expect("open");
    let r = store.name_id("r").unwrap().unwrap();
    assert_eq!(store.dictionary().counts[&(Kind::Element, r)], records);
    let id = store.name_id("id").unwrap().unwrap();
    let last = format!("r{}", records - 1);
    let found = store.lookup_string(id, Kind::Attribute, &last).expect("lookup");
    assert_eq!(found.len(), 1);
    let mut xml = Vec::new();
    store.write_xml(store.node(found[0]).unwrap().parent, &mut xml).expect("serialises");
    assert!(String::from_utf8(xml).unwrap().starts_with(&format!("<r id=\"{last}\"")));
}

#[test]
fn serialised_subtrees_declare_the_namespaces_they_use() {
    let doc = "<p:a xmlns:p='urn:p' xmlns='urn:d'><p:b xmlns:x='urn:x' x:y='1'><c/></p:b><?xml!?><?t v?></p:a>";
    let f = fixture();
    f.load("c", &f.files(&[doc.as_bytes()])).expect("loads");
    let txn = f.db.begin_read().expect("read");
    let store = XmlStore::open(&txn, "c").expect("open");
    let mut whole = Vec::new();
    store.write_xml(0, &mut whole).expect("serialises");
    assert_eq!(outline(&String::from_utf8(whole).unwrap()), outline(doc));
    let b = (0..store.len())
        .find(|&p| store.node(p).unwrap().name == store.name_id("p:b\0urn:p").unwrap().unwrap())
        .expect("p:b");
    let mut inner = Vec::new();
    store.write_xml(b, &mut inner).expect("serialises");
    let inner = String::from_utf8(inner).unwrap();
    let parsed = roxmltree::Document::parse(&inner).unwrap_or_else(|e| panic!("{inner}: {e}"));
    let element = parsed.root_element();
    assert_eq!((element.tag_name().namespace(), element.tag_name().name()), (Some("urn:p"), "b"), "{inner}");
    assert_eq!(element.first_element_child().unwrap().tag_name().namespace(), Some("urn:d"), "{inner}");
}

#[test]
fn a_large_document_malformed_near_its_end_fails_the_pipelined_load_with_its_position() {
    let mut doc = String::from("<r>\n");
    while doc.len() < 3 << 20 {
        doc.push_str("<e a='1'>some text to make the document large</e>\n");
    }
    let lines = doc.lines().count() + 1;
    doc.push_str("<bad></r>");
    let f = fixture();
    let paths = f.files(&[doc.as_bytes()]);
    let err = f.load("c", &paths).expect_err("malformed");
    assert!(matches!(&err, Error::Xml { line, .. } if *line as usize == lines), "{err}");
    let txn = f.db.begin_read().expect("read");
    assert!(txn.catalog_list().expect("catalog").is_empty(), "the failed load left nothing");
}

#[test]
fn check_finds_a_value_index_that_disagrees_with_the_document_index() {
    let f = fixture();
    f.load("c", &f.files(&[b"<r><p id='a'>x</p><p id='b'>y</p></r>"])).expect("loads");
    let txn = f.db.begin_write().expect("write");
    {
        let mut tree = quiredb_structures::btree::BTree::open(&txn, "xml:c:value").expect("the value index");
        let (key, block) = tree.first().expect("reads").expect("one block");
        let mut wrong = block.clone();
        let last = wrong.len() - 1;
        wrong[last] ^= 1;
        tree.insert(&key, &wrong).expect("tampers");
    }
    let problems = check(&txn, "c").expect("checks");
    assert!(!problems.is_empty(), "a changed posting must be found");
}

/// Loads `<r><a/><b/></r>` as collection `c`, rewrites its one document block with
/// `tamper` applied to its records, and returns what `check` says.
fn check_after_tampering_with_records(tamper: impl Fn(&mut [super::record::NodeRecord])) -> Vec<String> {
    use super::record::{PendingNode, encode_doc_block};
    let f = fixture();
    f.load("c", &f.files(&[b"<r><a/><b/></r>"])).expect("loads");
    let txn = f.db.begin_write().expect("write");
    let mut records = Vec::new();
    {
        let store = XmlStore::open(&txn, "c").expect("opens");
        let mut cursor = store.nodes(0, u64::MAX).expect("a cursor");
        while let Some(node) = cursor.next_node().expect("reads") {
            records.push(node);
        }
    }
    assert_eq!(records.len(), 4, "document, r, a, b");
    assert!(check(&txn, "c").expect("checks").is_empty(), "sound before");
    tamper(&mut records);
    let pending: Vec<PendingNode> =
        records.iter().map(|&record| PendingNode { record, inline: (0, 0), open: false }).collect();
    let (mut block, mut patches) = (Vec::new(), Vec::new());
    encode_doc_block(&pending, &[], &mut block, &mut patches);
    {
        let mut tree = quiredb_structures::btree::BTree::open(&txn, "xml:c:doc").expect("the document index");
        tree.insert(&super::format::doc_key(0), &block).expect("tampers");
    }
    check(&txn, "c").expect("checks")
}

#[test]
fn check_finds_a_node_under_the_wrong_parent_or_overrunning_it() {
    // Proves the walk's placement checks: `b` recorded as a child of its sibling `a`,
    // and `a` recorded larger than `r` holds.
    let problems = check_after_tampering_with_records(|records| records[3].parent = records[2].pre);
    assert!(problems.iter().any(|p| p.contains("node 3 has parent 2 level 2, expected 1 level 2")), "{problems:#?}");
    let problems = check_after_tampering_with_records(|records| records[2].size = 5);
    assert!(problems.iter().any(|p| p.contains("node 2 (size 5) overruns its parent 1")), "{problems:#?}");
}

#[test]
fn a_format_1_collection_answers_without_namespaces_and_says_why_it_cannot_with_them() {
    let f = fixture();
    f.load("c", &f.files(&[b"<a><b>t</b></a>"])).expect("loads");
    // Registered again as format 1: what a collection loaded before URIs were kept is.
    let txn = f.db.begin_write().expect("write");
    let entry = txn.drop_structure("c").expect("drop");
    txn.create_structure("c", entry.kind, &[1], entry.root).expect("create");
    txn.commit(Durability::default()).expect("commit");
    // Loading into it keeps format 1: the new names get no URI.
    f.load("c", &f.files(&[b"<d:c xmlns:d='urn:d' xml:lang='en'><e xmlns='urn:e'/></d:c>"])).expect("loads");
    let txn = f.db.begin_read().expect("read");
    let store = XmlStore::open(&txn, "c").expect("open");
    assert!(!store.dictionary().uris_known);
    assert!(store.dictionary().uris.iter().all(String::is_empty));
    let mut prepared = store.prepare("count(//b | //c | //e | //@lang)").expect("prepares");
    let value = prepared.value().expect("runs");
    assert_eq!(prepared.value_string(&value).expect("string"), "4");
    let needing =
        [("//d:c", 3), ("//a[lang('en')]", 5), ("count(//b) + string-length(namespace-uri(/*))", 28), ("id('x')", 1)];
    for (query, column) in needing {
        let error = store.prepare(query).err().unwrap_or_else(|| panic!("{query} must fail")).to_string();
        assert!(error.contains(&format!("column {column}")) && error.contains("load it again"), "{query}: {error}");
    }
}
