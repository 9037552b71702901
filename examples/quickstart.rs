//! The README's example: a typed table in a database file, written in one transaction
//! and read from a snapshot. `cargo run --example quickstart`.

use quiredb::{Database, Durability, Structures, TableDef};

/// (station, unix time) → temperature in °C; the types are checked on every open.
const TEMPERATURES: TableDef<(&str, i64), f32> = TableDef::new("temperatures");

fn main() -> quiredb::Result<()> {
    let dir = tempfile::tempdir()?;
    let db = Database::builder().cache_bytes(16 << 20).create(dir.path().join("data.quire"))?;
    let txn = db.begin_write()?; // one writer at a time
    {
        let mut table = txn.open_table(TEMPERATURES)?; // borrows txn: ends before commit
        table.insert(("beijing", 1_700_000_000), 11.5)?;
        table.insert(("beijing", 1_700_003_600), 10.0)?;
    }
    txn.commit(Durability::Checksummed)?; // Full | Checksummed | None
    let snapshot = db.begin_read()?; // never waits for the writer
    let table = snapshot.open_table(TEMPERATURES)?;
    assert_eq!(table.get(("beijing", 1_700_000_000))?.map(|t| t.value()), Some(11.5));
    let latest = table.range(("beijing", 0)..=("beijing", i64::MAX))?.next_back().transpose()?;
    assert_eq!(latest.as_ref().map(|(key, _)| key.key()), Some(("beijing", 1_700_003_600)));
    println!("temperatures: {} reading(s)", table.len());
    Ok(())
}
