//! Reading the meteorological layout of `store.rs`: station/time ranges through the
//! B+tree, windows and k nearest neighbours over the measures through the R*-tree, each
//! answer resolved to its raw record in the queue (unpacked, `record.rs`); and the
//! layout's sizes.
//!
//! Everything runs in a caller's snapshot (`ReadTxn` or the write transaction), so a
//! query sees one consistent state while loads go on.

use std::ops::{Bound, RangeInclusive};

use quiredb_engine::{PageRead, ResultSet};
use quiredb_structures::btree::{BTree, Value};
use quiredb_structures::queue::{Queue, RecordId};
use quiredb_structures::rtree::{Rect, WindowMode};
use quiredb_structures::table::Key;

use super::record::RecordEncoding;
use super::store::{
    BTREE_NAME, MeasureTree, QUEUE_NAME, RTREE_NAME, decode_record_id, encode_key, no_tree_error, stored_encoding,
    tree_dimensions, unpack_record_id, with_dimensions,
};
use crate::error::{Error, Result};

/// One answer: the record's id, its raw CSV line, and the distance for kNN.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// Where the record is in the queue.
    pub id: RecordId,
    /// The row as loaded (one CSV line, no terminator).
    pub raw: Vec<u8>,
    /// Euclidean distance to the query point (kNN only).
    pub distance: Option<f64>,
    /// Its station and time (seconds since 1970, UTC), when the query read its key
    /// (range queries; the R*-tree's answers carry no key).
    pub key: Option<(String, i64)>,
}

/// A record as [`MeteoView::scan`] hands it over.
#[derive(Debug, Clone, Copy)]
pub struct Keyed<'a> {
    /// Its station.
    pub station: &'a str,
    /// Its time, seconds since 1970 (UTC).
    pub time: i64,
    /// The line as loaded.
    pub raw: &'a [u8],
}

/// Sizes of a loaded layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreStats {
    /// Records in the queue.
    pub records: u64,
    /// Keys in the (station, time) B+tree.
    pub keys: u64,
    /// Points in the R*-tree.
    pub points: u64,
    /// Dimensions of the R*-tree.
    pub dimensions: usize,
    /// Height of the R*-tree.
    pub rtree_height: u32,
    /// Measure names recorded at load time.
    pub measure_names: Vec<String>,
    /// Pages of each structure: queue data pages, B+tree nodes, R*-tree nodes.
    pub pages: [u64; 3],
}

/// A read view of the layout in one transaction.
pub struct MeteoView<'t, T: PageRead> {
    txn: &'t T,
    queue: Queue<'t, T>,
    /// The R*-tree's dimensions: every query over it dispatches on them.
    dims: usize,
    encoding: RecordEncoding,
}

impl<'t, T: PageRead> MeteoView<'t, T> {
    /// Opens the structures; an error if the database holds no meteorological data.
    pub fn open(txn: &'t T) -> Result<Self> {
        let missing = |error| Error::Schema(format!("no meteorological data in this database ({error})"));
        let queue = Queue::open(txn, QUEUE_NAME).map_err(missing)?;
        // 0: no R*-tree (`--index-measures none`).
        let dims = tree_dimensions(txn)?.unwrap_or(0);
        let encoding = stored_encoding(txn)?;
        Ok(MeteoView { txn, queue, dims, encoding })
    }

    /// Records of `station` with `from <= time <= to`, in time order.
    pub fn range(&self, station: &str, from: i64, to: i64) -> Result<Vec<Found>> {
        self.range_first(station, from, to, usize::MAX)
    }

    /// The first `limit` records of [`MeteoView::range`] (the scan stops there).
    pub fn range_first(&self, station: &str, from: i64, to: i64, limit: usize) -> Result<Vec<Found>> {
        let station = station.to_owned();
        let (mut low, mut high) = (Vec::new(), Vec::new());
        encode_key(&station, from, &mut low);
        encode_key(&station, to, &mut high);
        let btree = BTree::open(self.txn, BTREE_NAME)?;
        let mut found = Vec::new();
        for entry in btree.range(Bound::Included(&low), Bound::Included(&high)).take(limit) {
            let (key, value) = entry?;
            let id =
                decode_record_id(&value).ok_or_else(|| Error::Schema("a B+tree value is not a record id".into()))?;
            let mut answer = self.resolve(id, None)?;
            answer.key = Some(super::aggregate::decode_key(&key)?);
            found.push(answer);
        }
        Ok(found)
    }

    /// The dimensions of the R*-tree (the values a point of [`MeteoView::window`] and
    /// [`MeteoView::knn`] has); 0 when the database has none.
    pub fn dimensions(&self) -> usize {
        self.dims
    }

    /// Records whose indexed measures all lie in `[min, max]` (inclusive), in id order;
    /// `min` and `max` have [`MeteoView::dimensions`] values.
    pub fn window(&self, min: &[f64], max: &[f64]) -> Result<Vec<Found>> {
        self.require_tree()?;
        let mut payloads = Vec::new();
        with_dimensions!(self.dims, D => {
            let query = Rect::new(self.point::<D>(min)?, self.point::<D>(max)?);
            let tree = MeasureTree::<_, D>::open(self.txn, RTREE_NAME)?;
            tree.visit_window(&query, WindowMode::Intersects, |payload, _| payloads.push(payload))
                .map_err(Error::from)
        })?;
        let mut ids: Vec<RecordId> = payloads.into_iter().map(unpack_record_id).collect();
        ids.sort();
        ids.into_iter().map(|id| self.resolve(id, None)).collect()
    }

    /// The `k` records nearest to `point` (Euclidean over the indexed measures, of
    /// which `point` has [`MeteoView::dimensions`] values), nearest first, ties by
    /// record.
    pub fn knn(&self, point: &[f64], k: usize) -> Result<Vec<Found>> {
        self.require_tree()?;
        let mut result = ResultSet::detached();
        with_dimensions!(self.dims, D => {
            let tree = MeasureTree::<_, D>::open(self.txn, RTREE_NAME)?;
            tree.nearest_k(self.point::<D>(point)?, k, None, &mut result).map_err(Error::from)
        })?;
        let rows: Vec<(u64, f64)> = result.ids().iter().copied().zip(result.scores().iter().copied()).collect();
        rows.into_iter().map(|(payload, distance)| self.resolve(unpack_record_id(payload), Some(distance))).collect()
    }

    /// An error when the database has no R*-tree.
    fn require_tree(&self) -> Result<()> {
        if self.dims == 0 { Err(no_tree_error()) } else { Ok(()) }
    }

    /// `values` as a point of the R*-tree; an error naming the count otherwise.
    fn point<const D: usize>(&self, values: &[f64]) -> Result<[f64; D]> {
        values.try_into().map_err(|_| {
            Error::Argument(format!("the R*-tree has {D} dimensions: {D} values needed, got {}", values.len()))
        })
    }

    /// Sizes of the structures and the measure names.
    pub fn stats(&self) -> Result<StoreStats> {
        let btree = BTree::open(self.txn, BTREE_NAME)?;
        let keys = btree.len();
        let btree_stats = quiredb_structures::btree::stats(&btree)?;
        let (rtree_pages, points, rtree_height) = match self.dims {
            0 => (0, 0, 0),
            dims => with_dimensions!(dims, D => {
                let tree = MeasureTree::<_, D>::open(self.txn, RTREE_NAME)?;
                Ok::<_, Error>((tree.node_pages()?, tree.len()?, tree.height()?))
            })?,
        };
        let pages = [self.queue.stats()?.data_pages, btree_stats.leaves + btree_stats.branches, rtree_pages];
        Ok(StoreStats {
            records: self.queue.len()?,
            keys,
            points,
            dimensions: self.dims,
            rtree_height,
            measure_names: super::aggregate::stored_measure_names(self.txn)?,
            pages,
        })
    }

    /// Visits the records of `station` (every station when `None`) with a time in
    /// `times` in (station, time) order, each with its station, time and raw record
    /// (the buffers are reused, nothing is collected); `visit` returns false to stop.
    pub fn scan(
        &self,
        station: Option<&str>,
        times: RangeInclusive<i64>,
        visit: &mut dyn FnMut(Keyed<'_>) -> Result<bool>,
    ) -> Result<()> {
        let (low, high) = key_bounds(station, &times);
        self.scan_keys(as_slices(&low), as_slices(&high), times, visit)
    }

    /// [`MeteoView::scan`] over the (station, time) keys between `low` and `high` (keys
    /// of [`encode_key`]; [`key_bounds`] makes them), the records with a time outside
    /// `times` left out.
    pub fn scan_keys(
        &self,
        low: Bound<&[u8]>,
        high: Bound<&[u8]>,
        times: RangeInclusive<i64>,
        visit: &mut dyn FnMut(Keyed<'_>) -> Result<bool>,
    ) -> Result<()> {
        let btree = BTree::open(self.txn, BTREE_NAME)?;
        // Records loaded in key order lie in order in the queue: each page pinned once.
        let (mut records, mut raw) = (self.queue.lookup()?, Vec::new());
        // The station of the previous key and its encoded prefix: decoded once a station.
        let (mut station, mut prefix) = (String::new(), Vec::new());
        // A forward cursor, keys and values read in place (the range iterator's shared
        // pins cost a row ~250 instructions of a 1 M-row range).
        let mut cursor = btree.cursor();
        cursor.seek_from(low)?;
        let mut started = false;
        loop {
            if std::mem::replace(&mut started, true) && !cursor.move_next()? {
                break;
            }
            let Some(key) = cursor.key() else { break };
            if !below(key, high) {
                break;
            }
            let (key_station, time) = split_key_member(key)?;
            if !times.contains(&time) {
                continue;
            }
            if key_station != prefix.as_slice() {
                station = super::aggregate::decode_key(key)?.0;
                prefix.clear();
                prefix.extend_from_slice(key_station);
            }
            let value = match cursor.value_ref() {
                Some(Value::Inline(value)) => value,
                _ => return Err(Error::Schema("a B+tree value is not a record id".into())),
            };
            let id =
                decode_record_id(value).ok_or_else(|| Error::Schema("a B+tree value is not a record id".into()))?;
            let Some(stored) = records.get(id)? else {
                return Err(Error::Schema(format!("an index points to record {id:?}, which is not in the queue")));
            };
            self.encoding.decode(stored, &mut raw)?;
            if !visit(Keyed { station: &station, time, raw: &raw })? {
                break;
            }
        }
        Ok(())
    }

    /// A key that cuts the keys between `low` and `high` in two parts, near the middle
    /// of the key space between the first and the last key there (for the records of
    /// one station, the middle of their times); `None` when they hold fewer than two
    /// keys.
    pub fn middle_key(&self, low: Bound<&[u8]>, high: Bound<&[u8]>) -> Result<Option<Vec<u8>>> {
        let btree = BTree::open(self.txn, BTREE_NAME)?;
        let mut entries = btree.entries(low, high);
        let Some(first) = entries.next().transpose()? else { return Ok(None) };
        let first = first.0.to_vec();
        let Some(last) = entries.next_back().transpose()? else { return Ok(None) };
        let middle = midpoint(&first, &last.0);
        Ok((first.as_slice() < middle.as_slice() && middle.as_slice() <= &*last.0).then_some(middle))
    }

    fn resolve(&self, id: RecordId, distance: Option<f64>) -> Result<Found> {
        let mut stored = Vec::new();
        if !self.queue.get(id, &mut stored)? {
            return Err(Error::Schema(format!("an index points to record {id:?}, which is not in the queue")));
        }
        let mut raw = Vec::with_capacity(stored.len() * 2);
        self.encoding.decode(&stored, &mut raw)?;
        Ok(Found { id, raw, distance, key: None })
    }
}

/// The key bounds of the records of `station` (every station when `None`) with a time
/// in `times`.
pub fn key_bounds(station: Option<&str>, times: &RangeInclusive<i64>) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    match station {
        Some(station) => {
            let (mut low, mut high) = (Vec::new(), Vec::new());
            encode_key(&station.to_owned(), *times.start(), &mut low);
            encode_key(&station.to_owned(), *times.end(), &mut high);
            (Bound::Included(low), Bound::Included(high))
        }
        None => (Bound::Unbounded, Bound::Unbounded),
    }
}

/// `bound` borrowed.
pub fn as_slices(bound: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    bound.as_ref().map(Vec::as_slice)
}

/// A key's station member (escaped and ended, as encoded) and its time (the last eight
/// bytes).
/// Whether `key` is inside the upper bound `high`.
fn below(key: &[u8], high: Bound<&[u8]>) -> bool {
    match high {
        Bound::Unbounded => true,
        Bound::Included(edge) => key <= edge,
        Bound::Excluded(edge) => key < edge,
    }
}

fn split_key_member(key: &[u8]) -> Result<(&[u8], i64)> {
    let not_a_key = || Error::Schema("a B+tree key is not (station, time)".into());
    let (station, mut time) =
        key.split_at_checked(key.len().checked_sub(8).ok_or_else(not_a_key)?).ok_or_else(not_a_key)?;
    let time = i64::decode_key(&mut time, true).ok_or_else(not_a_key)?;
    Ok((station, time))
}

/// The byte string halfway between `a` and `b` read as big-endian numbers (the shorter
/// one padded with zero bytes): between them in byte order.
fn midpoint(a: &[u8], b: &[u8]) -> Vec<u8> {
    let width = a.len().max(b.len());
    let byte = |bytes: &[u8], i: usize| u16::from(bytes.get(i).copied().unwrap_or(0));
    // The sum, one byte a place, the carry in front.
    let mut sum = vec![0u16; width + 1];
    let mut carry = 0;
    for i in (0..width).rev() {
        let total = byte(a, i) + byte(b, i) + carry;
        sum[i + 1] = total & 0xff;
        carry = total >> 8;
    }
    sum[0] = carry;
    // Halved from the front: each place's remainder moves to the next.
    let mut half = Vec::with_capacity(width);
    let mut remainder = sum[0] & 1;
    for &place in &sum[1..] {
        let value = (remainder << 8) | place;
        half.push((value >> 1) as u8);
        remainder = value & 1;
    }
    half
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The midpoint lies between its ends in byte order, whatever their lengths.
    #[test]
    fn midpoints_lie_between() {
        let pairs: [(&[u8], &[u8]); 6] = [
            (b"a", b"c"),
            (b"a", b"b"),
            (b"\x00\xff", b"\x01\x00"),
            (b"S1\x00\x00\x80", b"S9\x00\x00\x80\x01"),
            (b"\xff\xff", b"\xff\xff\xff"),
            (b"", b"\x02"),
        ];
        for (a, b) in pairs {
            let middle = midpoint(a, b);
            assert!(a <= middle.as_slice() && middle.as_slice() <= b, "{a:?} {middle:?} {b:?}");
        }
        assert_eq!(midpoint(b"a", b"c"), b"b");
        assert_eq!(midpoint(b"\x00\xff", b"\x01\x01"), b"\x01\x00");
    }

    /// Keys split into their station member and time; short keys are an error.
    #[test]
    fn key_members() {
        let mut key = Vec::new();
        encode_key(&"S1".to_owned(), -5, &mut key);
        let (station, time) = split_key_member(&key).unwrap();
        assert_eq!(time, -5);
        assert_eq!(super::super::aggregate::decode_key(&key).unwrap(), ("S1".to_owned(), -5));
        assert_eq!(station, &key[..key.len() - 8]);
        assert!(split_key_member(b"short").is_err());
    }
}
