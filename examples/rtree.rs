//! A typed R*-tree: station positions as 2-D points, a window query and the nearest
//! stations to a place. `cargo run --example rtree`.

use quiredb::structures::rtree::{Rect, WindowMode};
use quiredb::{Database, Durability, RTreeDef, Structures};

/// (longitude, latitude) of each station, its payload the station number.
const STATIONS: RTreeDef<2, f32> = RTreeDef::points("stations");

fn main() -> quiredb::Result<()> {
    let dir = tempfile::tempdir()?;
    let db = Database::builder().cache_bytes(16 << 20).create(dir.path().join("data.quire"))?;
    let txn = db.begin_write()?;
    {
        let mut stations = txn.open_rtree(STATIONS)?;
        for (number, position) in [[116.4, 39.9], [10.7, 59.9], [2.35, 48.85], [13.4, 52.5]].into_iter().enumerate() {
            stations.insert_point(position, number as u64)?;
        }
    }
    txn.commit(Durability::Checksummed)?;

    let snapshot = db.begin_read()?;
    let stations = snapshot.open_rtree(STATIONS)?;
    let europe = Rect::new([-10.0, 35.0], [30.0, 70.0]);
    let mut inside: Vec<u64> =
        stations.window(&europe, WindowMode::Intersects)?.map(|hit| hit.map(|(_, id)| id)).collect::<Result<_, _>>()?;
    inside.sort_unstable();
    assert_eq!(inside, [1, 2, 3]);
    let (distance, nearest) = stations.nearest([8.5, 47.4], None)?.next().transpose()?.expect("four stations");
    println!("nearest station to Zürich: {nearest} at {distance:.2}°; in Europe: {inside:?}");
    Ok(())
}
