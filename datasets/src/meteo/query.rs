//! Reading the meteorological layout of `store.rs`: station/time ranges through the
//! B+tree, windows and k nearest neighbours over the measures through the R*-tree, each
//! answer resolved to its raw record in the queue (unpacked, `record.rs`); and the
//! layout's sizes.
//!
//! Everything runs in a caller's snapshot (`ReadTxn` or the write transaction), so a
//! query sees one consistent state while loads go on.

use std::ops::{Bound, RangeInclusive};

use quiredb_engine::{PageRead, ResultSet};
use quiredb_structures::btree::BTree;
use quiredb_structures::queue::{Queue, RecordId};
use quiredb_structures::rtree::{Rect, WindowMode};

use super::record::RecordEncoding;
use super::store::{
    BTREE_NAME, META_NAME, MeasureTree, QUEUE_NAME, RTREE_NAME, decode_record_id, encode_key, stored_encoding,
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
        let no_tree = || Error::Schema(format!("no meteorological data in this database (no {RTREE_NAME})"));
        let dims = tree_dimensions(txn)?.ok_or_else(no_tree)?;
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
            let (_, value) = entry?;
            let id =
                decode_record_id(&value).ok_or_else(|| Error::Schema("a B+tree value is not a record id".into()))?;
            found.push(self.resolve(id, None)?);
        }
        Ok(found)
    }

    /// The dimensions of the R*-tree (the values a point of [`MeteoView::window`] and
    /// [`MeteoView::knn`] has).
    pub fn dimensions(&self) -> usize {
        self.dims
    }

    /// Records whose indexed measures all lie in `[min, max]` (inclusive), in id order;
    /// `min` and `max` have [`MeteoView::dimensions`] values.
    pub fn window(&self, min: &[f64], max: &[f64]) -> Result<Vec<Found>> {
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
        let mut result = ResultSet::detached();
        with_dimensions!(self.dims, D => {
            let tree = MeasureTree::<_, D>::open(self.txn, RTREE_NAME)?;
            tree.nearest_k(self.point::<D>(point)?, k, None, &mut result).map_err(Error::from)
        })?;
        let rows: Vec<(u64, f64)> = result.ids().iter().copied().zip(result.scores().iter().copied()).collect();
        rows.into_iter().map(|(payload, distance)| self.resolve(unpack_record_id(payload), Some(distance))).collect()
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
        let pages = [
            self.queue.stats()?.data_pages,
            btree_stats.leaves + btree_stats.branches,
            with_dimensions!(self.dims, D => MeasureTree::<_, D>::open(self.txn, RTREE_NAME)?.node_pages().map_err(Error::from))?,
        ];
        let (points, rtree_height) = with_dimensions!(self.dims, D => {
            let tree = MeasureTree::<_, D>::open(self.txn, RTREE_NAME)?;
            Ok::<_, Error>((tree.len()?, tree.height()?))
        })?;
        let measure_names = match BTree::open(self.txn, META_NAME) {
            Ok(meta) => meta.get_vec(b"measures")?.unwrap_or_default(),
            Err(_) => Vec::new(),
        };
        let names = String::from_utf8_lossy(&measure_names);
        Ok(StoreStats {
            records: self.queue.len()?,
            keys,
            points,
            dimensions: self.dims,
            rtree_height,
            measure_names: names.split(',').filter(|n| !n.is_empty()).map(str::to_owned).collect(),
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
        let (from, to) = (*times.start(), *times.end());
        let (low, high) = match station {
            Some(station) => {
                let (mut low, mut high) = (Vec::new(), Vec::new());
                encode_key(&station.to_owned(), from, &mut low);
                encode_key(&station.to_owned(), to, &mut high);
                (Bound::Included(low), Bound::Included(high))
            }
            None => (Bound::Unbounded, Bound::Unbounded),
        };
        let btree = BTree::open(self.txn, BTREE_NAME)?;
        let (mut stored, mut raw) = (Vec::new(), Vec::new());
        // Entries read in place (no copy of the key and value).
        for entry in btree.entries(low.as_ref().map(Vec::as_slice), high.as_ref().map(Vec::as_slice)) {
            let (key, value) = entry?;
            let (station, time) = super::aggregate::decode_key(&key)?;
            if time < from || time > to {
                continue;
            }
            let id =
                decode_record_id(&value).ok_or_else(|| Error::Schema("a B+tree value is not a record id".into()))?;
            stored.clear();
            raw.clear();
            if !self.queue.get(id, &mut stored)? {
                return Err(Error::Schema(format!("an index points to record {id:?}, which is not in the queue")));
            }
            self.encoding.decode(&stored, &mut raw)?;
            if !visit(Keyed { station: &station, time, raw: &raw })? {
                break;
            }
        }
        Ok(())
    }

    fn resolve(&self, id: RecordId, distance: Option<f64>) -> Result<Found> {
        let mut stored = Vec::new();
        if !self.queue.get(id, &mut stored)? {
            return Err(Error::Schema(format!("an index points to record {id:?}, which is not in the queue")));
        }
        let mut raw = Vec::with_capacity(stored.len() * 2);
        self.encoding.decode(&stored, &mut raw)?;
        Ok(Found { id, raw, distance })
    }
}
