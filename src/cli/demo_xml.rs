//! The XML part of `quire demo`: generate a small XMark-like auction document and a
//! few small documents, load them as one collection of the native XML store in one
//! transaction, then read it back: counts from the partition index checked against the
//! reference evaluator, a value-index lookup, a node's string value and its XML, and
//! XPath queries by structural joins, each checked against the reference evaluator.

use anyhow::{Context, Result, ensure};
use quiredb_datasets::xml::{Kind as DataKind, generate};
use quiredb_engine::{Database, Durability};
use quiredb_xml::store::{self, Kind, LoadOptions, XmlStore};
use quiredb_xml::{collection, reference, xpath};
use std::time::Instant;

/// XMark factor of the generated document (about 1.2 MB).
const FACTOR: f64 = 0.01;

/// XPath queries the tour runs: structural joins, a value comparison, a union.
const DEMO_QUERIES: [&str; 4] = [
    "/site/regions//item[payment and .//keyword]/name",
    "//open_auction[initial > 100]/@id",
    "//person[address/city = 'Moscow' or not(phone)]/name",
    "//note/b | //note/@n",
];

/// Runs the XML tour on `db`.
pub fn tour(db: &Database) -> Result<()> {
    let folder = tempfile::tempdir()?;
    let auction = folder.path().join("a-auction.xml");
    generate(DataKind::Xmark, FACTOR, 42, std::fs::File::create(&auction)?)?;
    for (i, text) in
        ["<note n='1'>first <b>small</b> document</note>", "<note n='2'><!--c-->second</note>"].iter().enumerate()
    {
        std::fs::write(folder.path().join(format!("b-note{i}.xml")), text)?;
    }
    let start = Instant::now();
    let txn = db.begin_write()?;
    let summary = store::load(&txn, "auctions", &[folder.path().to_path_buf()], LoadOptions::default(), &mut |_| {})?;
    txn.commit(Durability::Checksummed)?;
    outln!(
        "xml: loaded {} documents ({} nodes, {} distinct paths) as collection \"auctions\" in {:.1} ms",
        summary.documents,
        summary.nodes.iter().sum::<u64>(),
        summary.paths,
        start.elapsed().as_secs_f64() * 1e3
    )?;
    let txn = db.begin_read()?;
    let store = XmlStore::open(&txn, "auctions")?;
    let item = store.name_id("item")?.context("the auction has items")?;
    let items = store.dictionary().counts.get(&(Kind::Element, item)).copied().unwrap_or(0);
    let sources = collection::load(folder.path())?;
    let docs = collection::parse_all(&sources)?;
    let oracle = reference::evaluate(&xpath::parse("//item")?, &docs).len() as u64;
    outln!("xml: partition index: {items} <item> elements; the reference evaluator counts {oracle} for //item")?;
    ensure!(items == oracle, "the store and the reference evaluator disagree");
    let id = store.name_id("id")?.context("the auction has ids")?;
    let start = Instant::now();
    let found = store.lookup_string(id, Kind::Attribute, "person0")?;
    let person = store.node(*found.first().context("person0 exists")?)?;
    let person = store.node(person.parent)?;
    let looked_up = start.elapsed().as_secs_f64() * 1e6;
    let name_id = store.name_id("name")?.context("people have names")?;
    let mut children = store.nodes(person.pre + 1, person.pre + person.size)?;
    let mut name = Vec::new();
    while let Some(node) = children.next_node()? {
        if node.kind == Kind::Element && node.name == name_id {
            store.string_value(node.pre, &mut name)?;
            break;
        }
    }
    outln!(
        "xml: value index: @id = \"person0\" is an attribute of node {} (found in {looked_up:.0} µs), whose <name> is {:?}",
        person.pre,
        String::from_utf8_lossy(&name)
    )?;
    let mut xml = Vec::new();
    let note = store.documents()?.last().context("the notes are loaded")?.pre;
    store.write_xml(note, &mut xml)?;
    outln!("xml: the last document serialised: {}", String::from_utf8_lossy(&xml))?;
    for query in DEMO_QUERIES {
        let start = Instant::now();
        let mut prepared = store.prepare(query)?;
        let found = prepared.run()?.len();
        let took = start.elapsed().as_secs_f64() * 1e3;
        let expected = reference::evaluate(&xpath::parse(query)?, &docs).len();
        outln!("xml: xpath {query}: {found} nodes in {took:.2} ms (reference evaluator: {expected})")?;
        ensure!(found == expected, "the store and the reference evaluator disagree on {query}");
    }
    let problems = store::check(&txn, "auctions")?;
    ensure!(problems.is_empty(), "xml check: {problems:?}");
    Ok(())
}
