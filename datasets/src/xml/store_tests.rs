//! The native XML store on every generated collection kind: each document generated
//! at a small factor, loaded, read back node for node against roxmltree's DOM
//! (`quiredb_xml::store::oracle`), checked, and its partition counts compared with the
//! reference evaluator's counts for `//name` over a few names.

use super::{Kind, generate};
use quiredb_engine::{Database, Durability, Options};
use quiredb_xml::store::{self, LoadOptions, XmlStore, oracle::compare_with_dom};
use quiredb_xml::{collection, reference, xpath};

#[test]
fn every_generated_kind_reads_back_as_roxmltree_has_it() {
    for kind in Kind::ALL {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(format!("{}.xml", kind.name()));
        generate(kind, 0.004, 7, std::fs::File::create(&path).expect("create")).expect("generates");
        let db = Database::create(dir.path().join("t.quire"), Options::default()).expect("create db");
        let txn = db.begin_write().expect("write");
        store::load(&txn, "c", std::slice::from_ref(&path), LoadOptions::default(), &mut |_| {}).expect("loads");
        txn.commit(Durability::Checksummed).expect("commit");
        let sources = collection::load(&path).expect("reads");
        let docs = collection::parse_all(&sources).expect("parses");
        let txn = db.begin_read().expect("read");
        let collection_store = XmlStore::open(&txn, "c").expect("open");
        let differences = compare_with_dom(&collection_store, &docs).expect("compares");
        assert!(differences.is_empty(), "{}: {differences:#?}", kind.name());
        assert!(store::check(&txn, "c").expect("checks").is_empty(), "{}", kind.name());
        let dict = collection_store.dictionary();
        for (name, &id) in dict.ids.iter().take(5) {
            let expected = reference::evaluate(&xpath::parse(&format!("//{name}")).expect("query"), &docs).len() as u64;
            let stored = dict.counts.get(&(store::Kind::Element, id)).copied().unwrap_or(0);
            assert_eq!(stored, expected, "{}: //{name}", kind.name());
        }
        println!("{}: {} nodes equal", kind.name(), collection_store.len());
    }
}
