//! The README's example: a B+tree in a database file, written in one transaction and
//! read from a snapshot. `cargo run --example quickstart`.

use quiredb::structures::btree::BTree;
use quiredb::{Database, Durability};

fn main() -> quiredb::Result<()> {
    let dir = tempfile::tempdir()?;
    let db = Database::builder().cache_bytes(16 << 20).create(dir.path().join("data.quire"))?;
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
