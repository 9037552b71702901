//! The README's example: a B+tree in a database file, written in one transaction and
//! read from a snapshot. `cargo run --example quickstart`.

use quiredb::engine::{Database, Durability, Options};
use quiredb::structures::btree::BTree;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let db = Database::create(dir.path().join("data.quire"), Options::default())?;
    let txn = db.begin_write()?; // one writer at a time
    let mut tree = BTree::open_or_create(&txn, "stations")?;
    tree.insert(b"beijing", b"39.9,116.4")?;
    drop(tree);
    txn.commit(Durability::Checksummed)?; // Full | Checksummed | None
    let snapshot = db.begin_read()?; // never waits for the writer
    let tree = BTree::open(&snapshot, "stations")?;
    assert_eq!(tree.get_vec(b"beijing")?.as_deref(), Some(&b"39.9,116.4"[..]));
    println!("stations: {} key(s)", tree.len());
    Ok(())
}
