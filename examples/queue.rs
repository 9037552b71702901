//! A typed queue: sensor events appended in one transaction, consumed in another.
//! `cargo run --example queue`.

use quiredb::{Database, Durability, QueueDef, Structures};

/// (sensor, reading) events, oldest first.
const EVENTS: QueueDef<(&str, f64)> = QueueDef::new("events");

fn main() -> quiredb::Result<()> {
    let dir = tempfile::tempdir()?;
    let db = Database::builder().cache_bytes(16 << 20).create(dir.path().join("data.quire"))?;
    let txn = db.begin_write()?;
    {
        let mut events = txn.open_queue(EVENTS)?;
        events.push_back(("north", 11.5))?;
        events.push_back(("south", 9.25))?;
    }
    txn.commit(Durability::Checksummed)?;

    let txn = db.begin_write()?;
    {
        let mut events = txn.open_queue(EVENTS)?;
        while let Some((id, event)) = events.pop_front()? {
            let (sensor, reading) = event.value();
            println!("event {id:?}: {sensor} read {reading}");
        }
        assert!(events.is_empty()?);
    }
    txn.commit(Durability::Checksummed)?;
    Ok(())
}
