//! The `quire` command line, run as a user would: the demo, info, check and compact on
//! its database, and one-line errors with a non-zero exit for bad files.

use std::path::Path;
use std::process::{Command, Output};

fn quire(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_quire")).args(args).output().expect("quire runs")
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("UTF-8 temp path")
}

#[test]
fn demo_then_info_check_and_compact_on_its_database() {
    // Proves: the README's main job works and leaves a database the tools accept.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("demo.quire");
    let demo = quire(&["demo", "--db", path_str(&db)]);
    assert!(demo.status.success(), "{}", text(&demo));
    assert!(text(&demo).contains("integrity check: clean"), "{}", text(&demo));
    let info = quire(&["info", path_str(&db)]);
    assert!(info.status.success(), "{}", text(&info));
    assert!(text(&info).contains("page size"), "{}", text(&info));
    let check = quire(&["check", path_str(&db)]);
    assert!(check.status.success(), "{}", text(&check));
    let compact = quire(&["compact", path_str(&db)]);
    assert!(compact.status.success(), "{}", text(&compact));
    let check = quire(&["check", path_str(&db)]);
    assert!(check.status.success(), "after compact: {}", text(&check));
}

#[test]
fn bad_files_give_one_line_errors_and_a_failing_status() {
    // Proves: missing, foreign and corrupted files are reported clearly, never a panic.
    let dir = tempfile::tempdir().unwrap();
    let missing = quire(&["info", path_str(&dir.path().join("missing"))]);
    assert!(!missing.status.success());
    assert_eq!(String::from_utf8_lossy(&missing.stderr).lines().count(), 1, "{}", text(&missing));
    let foreign = dir.path().join("foreign");
    std::fs::write(&foreign, vec![b'x'; 20_000]).unwrap();
    let output = quire(&["check", path_str(&foreign)]);
    assert!(!output.status.success());
    assert!(text(&output).contains("not a QuireDB database"), "{}", text(&output));
    assert!(!text(&output).contains("panicked"));

    let db = dir.path().join("flipped.quire");
    assert!(quire(&["demo", "--db", path_str(&db)]).status.success());
    let mut bytes = std::fs::read(&db).unwrap();
    let page = 8192 * 40; // a data page of the demo's first transaction
    bytes[page + 1000] ^= 0x10;
    std::fs::write(&db, bytes).unwrap();
    let output = quire(&["check", path_str(&db)]);
    assert!(!output.status.success(), "{}", text(&output));
    assert!(text(&output).contains("corrupted page"), "{}", text(&output));
    assert!(!text(&output).contains("panicked"));
}

#[test]
fn info_and_check_of_a_rolled_back_file_report_it_and_never_change_it() {
    // Proves: a file whose newest commit fails verification is reported (check exits
    // non-zero naming the rollback) and looking at it writes nothing.
    use quiredb::engine::{Database, Durability, Options, PageKind};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rolled.quire");
    let db = Database::create(&path, Options::default()).unwrap();
    let txn = db.begin_write().unwrap();
    txn.alloc_page(PageKind::BTREE_LEAF).unwrap()[0] = 1;
    txn.commit(Durability::Full).unwrap();
    let txn = db.begin_write().unwrap();
    for _ in 0..300 {
        txn.alloc_page(PageKind::BTREE_LEAF).unwrap()[0] = 2;
    }
    txn.commit(Durability::Checksummed).unwrap();
    drop(db);
    let mut bytes = std::fs::read(&path).unwrap();
    let victim = (2..bytes.len() / 8192)
        .find(|page| bytes[page * 8192 + 4] == PageKind::BTREE_LEAF.0 && bytes[page * 8192 + 16] == 2)
        .expect("a leaf of the second commit");
    bytes[victim * 8192 + 100] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let info = quire(&["info", path_str(&path)]);
    assert!(info.status.success(), "{}", text(&info));
    assert!(text(&info).contains("instead of 2"), "{}", text(&info));
    let check = quire(&["check", path_str(&path)]);
    assert!(!check.status.success(), "{}", text(&check));
    assert!(text(&check).contains("rollback at open"), "{}", text(&check));
    assert!(std::fs::read(&path).unwrap() == bytes, "info or check changed the file");
}

#[test]
fn load_xml_then_info_value_and_check_and_a_malformed_document_changes_nothing() {
    // Proves: load-xml loads a folder as one collection, xml-info and xml-value read it
    // back, check verifies it; a malformed document fails the load with file, line and
    // column and leaves the database as it was; --skip-bad loads the rest.
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    std::fs::write(docs.join("a.xml"), "<a k='v'>one <b>two</b></a>").unwrap();
    std::fs::write(docs.join("b.xml"), "<c>three</c>").unwrap();
    let db = dir.path().join("x.quire");
    let load = quire(&["load-xml", path_str(&db), "col", path_str(&docs), "--quiet"]);
    assert!(load.status.success(), "{}", text(&load));
    assert!(text(&load).contains("documents      2"), "{}", text(&load));
    let info = quire(&["xml-info", path_str(&db), "col", "--paths"]);
    assert!(info.status.success(), "{}", text(&info));
    assert!(text(&info).contains("@k"), "the path summary lists the attribute: {}", text(&info));
    let value = quire(&["xml-value", path_str(&db), "col", "1"]);
    assert_eq!(String::from_utf8_lossy(&value.stdout), "one two\n", "{}", text(&value));
    let xml = quire(&["xml-value", path_str(&db), "col", "0", "--xml"]);
    assert_eq!(String::from_utf8_lossy(&xml.stdout), "<a k=\"v\">one <b>two</b></a>\n", "{}", text(&xml));
    let check = quire(&["check", path_str(&db)]);
    assert!(check.status.success(), "{}", text(&check));
    let before = std::fs::read(&db).unwrap();
    std::fs::write(docs.join("c.xml"), "<d>\n<e></d>").unwrap();
    let bad = quire(&["load-xml", path_str(&db), "col2", path_str(&docs), "--quiet"]);
    assert!(!bad.status.success());
    assert!(text(&bad).contains("c.xml") && text(&bad).contains("line 2"), "{}", text(&bad));
    assert!(!text(&bad).contains("panicked"));
    let list = quire(&["xml-info", path_str(&db)]);
    assert!(!text(&list).contains("col2"), "the failed load left no collection: {}", text(&list));
    assert_eq!(std::fs::read(&db).unwrap().len(), before.len());
    let skip = quire(&["load-xml", path_str(&db), "col2", path_str(&docs), "--quiet", "--skip-bad"]);
    assert!(skip.status.success(), "{}", text(&skip));
    assert!(text(&skip).contains("skipped") && text(&skip).contains("c.xml"), "{}", text(&skip));
    let check = quire(&["check", path_str(&db)]);
    assert!(check.status.success(), "{}", text(&check));
}

#[test]
fn xpath_prints_counts_values_xml_and_plans_and_names_what_it_cannot_answer() {
    // Proves: quire xpath answers over a multi-document collection in document order
    // (values with their line breaks, XML, count, node list), explains its plan, and
    // fails with the column of an unsupported construct or the name of a missing
    // collection — without a panic.
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    std::fs::write(docs.join("a.xml"), "<r><p n='1'>x\ny</p><p n='2'>z</p></r>").unwrap();
    std::fs::write(docs.join("b.xml"), "<r><p n='3'/></r>").unwrap();
    let db = dir.path().join("x.quire");
    assert!(quire(&["load-xml", path_str(&db), "c", path_str(&docs), "--quiet"]).status.success());
    let run = |args: &[&str]| {
        let mut all = vec!["xpath", path_str(&db), "c"];
        all.extend_from_slice(args);
        quire(&all)
    };
    assert_eq!(String::from_utf8_lossy(&run(&["//p[. != 'z']/@n", "--values"]).stdout), "1\n3\n");
    assert_eq!(String::from_utf8_lossy(&run(&["/r/p[@n or . = 'z']", "--count"]).stdout), "3\n");
    assert_eq!(String::from_utf8_lossy(&run(&["//p[@n = 1]", "--values"]).stdout), "x\ny\n");
    assert_eq!(String::from_utf8_lossy(&run(&["//p[@n = 2]", "--xml"]).stdout), "<p n=\"2\">z</p>\n");
    let listed = run(&["//p", "--limit", "2"]);
    assert_eq!(String::from_utf8_lossy(&listed.stdout).lines().count(), 2, "{}", text(&listed));
    assert!(text(&listed).contains("/r/p"), "{}", text(&listed));
    let explain = run(&["//r[p/@n > 2]/p", "--explain"]);
    assert!(text(&explain).contains("semi-join") && text(&explain).contains("rows out"), "{}", text(&explain));
    let unsupported = run(&["//p[last()]"]);
    assert!(!unsupported.status.success());
    assert!(
        text(&unsupported).contains("column 5") && !text(&unsupported).contains("panicked"),
        "{}",
        text(&unsupported)
    );
    let missing = quire(&["xpath", path_str(&db), "nope", "//p"]);
    assert!(!missing.status.success() && text(&missing).contains("\"nope\""), "{}", text(&missing));
}
