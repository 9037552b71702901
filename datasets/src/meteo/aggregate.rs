//! Aggregates of one measure per station and period (`quire agg`), streamed over the
//! (station, time) B+tree: each key's record is read from the queue, its measure taken
//! out of the raw record with the load's [`RecordLayout`], and folded into the current
//! bucket; a bucket is handed out as soon as the station or period changes (keys come in
//! station, time order), so memory stays one bucket whatever the range.
//!
//! The [`RecordLayout`] (delimiter, the raw record's field of each measure, missing
//! markers) is written by the load into `meteo.meta` under [`LAYOUT_KEY`] as JSON; a
//! database loaded before it existed has none and `agg` asks for a reload.

use std::ops::Bound;

use quiredb_engine::PageRead;
use quiredb_structures::btree::BTree;
use quiredb_structures::queue::Queue;
use quiredb_structures::table::Key;

use super::fields::{civil_from_days, days_from_civil, parse_measure};
use super::record::RecordEncoding;
use super::schema::MissingValues;
use super::store::{BTREE_NAME, META_NAME, QUEUE_NAME, decode_record_id, encode_key, stored_encoding};
use crate::error::{Error, Result};

/// Key in `meteo.meta` of the [`RecordLayout`].
pub const LAYOUT_KEY: &[u8] = b"record_layout";

/// Where the measures are in a stored raw record.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RecordLayout {
    /// The delimiter the fields are joined by.
    pub delimiter: u8,
    /// The 0-based field of each measure, in measure order.
    pub columns: Vec<usize>,
    /// Missing-value tokens.
    pub tokens: Vec<String>,
    /// Missing-value sentinels.
    pub sentinels: Vec<f64>,
    /// The measures that are the R*-tree's dimensions, when chosen (`--index-measures`).
    #[serde(default)]
    pub index_measures: Option<Vec<usize>>,
}

impl RecordLayout {
    /// A layout of fields joined by `delimiter`, measures at `columns`.
    pub fn new(delimiter: u8, columns: Vec<usize>, missing: &MissingValues) -> Self {
        RecordLayout {
            delimiter,
            columns,
            tokens: missing.tokens.clone(),
            sentinels: missing.sentinels.clone(),
            index_measures: None,
        }
    }

    /// The JSON stored in `meteo.meta`.
    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a layout of numbers and strings serialises")
    }

    /// Reads [`RecordLayout::encode`]'s bytes.
    pub fn decode(bytes: &[u8]) -> Result<Self> {
        serde_json::from_slice(bytes)
            .map_err(|error| Error::Schema(format!("bad record layout in meteo.meta: {error}")))
    }

    /// The missing markers, as [`RecordLayout::value`] takes them.
    pub fn missing(&self) -> MissingValues {
        MissingValues { tokens: self.tokens.clone(), sentinels: self.sentinels.clone() }
    }

    /// Measure `measure` of the raw record `raw` (`None` when missing or unreadable);
    /// `missing` is [`RecordLayout::missing`].
    pub fn value(&self, raw: &[u8], measure: usize, missing: &MissingValues) -> Option<f64> {
        let column = *self.columns.get(measure)?;
        let decimal_comma = self.delimiter != b',';
        if !raw.contains(&b'"') {
            let field = raw.split(|&byte| byte == self.delimiter).nth(column)?;
            return parse_measure(field, decimal_comma, missing).ok().flatten();
        }
        let mut reader = csv::ReaderBuilder::new().has_headers(false).delimiter(self.delimiter).from_reader(raw);
        let mut record = csv::ByteRecord::new();
        reader.read_byte_record(&mut record).ok()?;
        parse_measure(record.get(column)?, decimal_comma, missing).ok().flatten()
    }
}

/// The record layout recorded in `meteo.meta` (`None` for databases loaded before it).
pub fn stored_layout(txn: &impl PageRead) -> Result<Option<RecordLayout>> {
    let Ok(meta) = BTree::open(txn, META_NAME) else { return Ok(None) };
    meta.get_vec(LAYOUT_KEY)?.map(|bytes| RecordLayout::decode(&bytes)).transpose()
}

/// The measure names recorded in `meteo.meta` (empty without).
pub fn stored_measure_names(txn: &impl PageRead) -> Result<Vec<String>> {
    let Ok(meta) = BTree::open(txn, META_NAME) else { return Ok(Vec::new()) };
    let names = meta.get_vec(b"measures")?.unwrap_or_default();
    Ok(String::from_utf8_lossy(&names).split(',').filter(|name| !name.is_empty()).map(str::to_owned).collect())
}

/// The period of a bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Every {
    /// Clock hours.
    Hour,
    /// Days (UTC).
    Day,
    /// Calendar months.
    Month,
    /// Calendar years.
    Year,
}

impl Every {
    /// The start of the period holding `time`.
    pub fn start(self, time: i64) -> i64 {
        let days = time.div_euclid(86_400);
        match self {
            Every::Hour => time - time.rem_euclid(3_600),
            Every::Day => days * 86_400,
            Every::Month | Every::Year => {
                let (year, month, _) = civil_from_days(days);
                let month = if self == Every::Year { 1 } else { month };
                days_from_civil(year, month, 1) * 86_400
            }
        }
    }
}

/// One bucket: a station's values of the measure in one period.
#[derive(Debug, Clone, PartialEq)]
pub struct Bucket {
    /// The station.
    pub station: String,
    /// Start of the period, seconds since the epoch.
    pub start: i64,
    /// Records in the period (the measure present or not).
    pub rows: u64,
    /// Values present.
    pub count: u64,
    /// Sum of the values.
    pub sum: f64,
    /// Smallest value (`+inf` without values).
    pub min: f64,
    /// Largest value (`-inf` without values).
    pub max: f64,
}

impl Bucket {
    fn new(station: String, start: i64) -> Self {
        Bucket { station, start, rows: 0, count: 0, sum: 0.0, min: f64::INFINITY, max: f64::NEG_INFINITY }
    }

    fn add(&mut self, value: Option<f64>) {
        self.rows += 1;
        if let Some(value) = value {
            self.count += 1;
            self.sum += value;
            self.min = self.min.min(value);
            self.max = self.max.max(value);
        }
    }

    /// The mean, `None` without values.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum / self.count as f64)
    }
}

/// What to aggregate.
#[derive(Debug, Clone)]
pub struct AggregateQuery {
    /// One station, or all.
    pub station: Option<String>,
    /// First time, inclusive.
    pub from: i64,
    /// Last time, inclusive.
    pub to: i64,
    /// The bucket period.
    pub every: Every,
    /// The measure's name (as recorded at load time).
    pub measure: String,
}

/// Streams the buckets of `query` in `txn` to `emit` (station, then time order);
/// `emit` returns false to stop. Returns the number of buckets emitted.
pub fn aggregate(
    txn: &impl PageRead,
    query: &AggregateQuery,
    emit: &mut dyn FnMut(&Bucket) -> Result<bool>,
) -> Result<u64> {
    let queue =
        Queue::open(txn, QUEUE_NAME).map_err(|_| Error::Schema("no meteorological data in this database".into()))?;
    let layout = stored_layout(txn)?.ok_or_else(|| {
        Error::Schema(
            "this database was loaded before `agg` existed (no record layout in meteo.meta); load it again".into(),
        )
    })?;
    let names = stored_measure_names(txn)?;
    let measure = names.iter().position(|name| name.eq_ignore_ascii_case(&query.measure)).ok_or_else(|| {
        Error::Argument(format!("no measure {:?}; the database has: {}", query.measure, names.join(", ")))
    })?;
    let encoding = stored_encoding(txn)?;
    let missing = layout.missing();
    let btree = BTree::open(txn, BTREE_NAME)?;
    let (low, high) = match &query.station {
        Some(station) => {
            let (mut low, mut high) = (Vec::new(), Vec::new());
            encode_key(station, query.from, &mut low);
            encode_key(station, query.to, &mut high);
            (Bound::Included(low), Bound::Included(high))
        }
        None => (Bound::Unbounded, Bound::Unbounded),
    };
    let mut folder = Folder { every: query.every, current: None, emitted: 0, stopped: false };
    let (mut stored, mut raw) = (Vec::new(), Vec::new());
    for entry in btree.range(low.as_ref().map(Vec::as_slice), high.as_ref().map(Vec::as_slice)) {
        let (key, value) = entry?;
        let (station, time) = decode_key(&key)?;
        if time < query.from || time > query.to {
            continue;
        }
        let id = decode_record_id(&value).ok_or_else(|| Error::Schema("a B+tree value is not a record id".into()))?;
        let value = read_value(txn, (&queue, encoding), id, (&mut stored, &mut raw), |raw| {
            layout.value(raw, measure, &missing)
        })?;
        if !folder.add(station, time, value, emit)? {
            return Ok(folder.emitted);
        }
    }
    folder.finish(emit)?;
    Ok(folder.emitted)
}

/// The (station, time) of a key of the B+tree.
pub(crate) fn decode_key(key: &[u8]) -> Result<(String, i64)> {
    let mut rest = key;
    let station = String::decode_key(&mut rest, false);
    let time = i64::decode_key(&mut rest, true);
    station.zip(time).ok_or_else(|| Error::Schema("a B+tree key is not (station, time)".into()))
}

fn read_value(
    txn: &impl PageRead,
    (queue, encoding): (&Queue, RecordEncoding),
    id: quiredb_structures::queue::RecordId,
    (stored, raw): (&mut Vec<u8>, &mut Vec<u8>),
    value: impl Fn(&[u8]) -> Option<f64>,
) -> Result<Option<f64>> {
    stored.clear();
    raw.clear();
    if !queue.get(txn, id, stored)? {
        return Err(Error::Schema(format!("an index points to record {id:?}, which is not in the queue")));
    }
    encoding.decode(stored, raw)?;
    Ok(value(raw))
}

/// The bucket being filled and the emission count.
struct Folder {
    every: Every,
    current: Option<Bucket>,
    emitted: u64,
    stopped: bool,
}

impl Folder {
    /// Adds one record; false once `emit` asked to stop.
    fn add(
        &mut self,
        station: String,
        time: i64,
        value: Option<f64>,
        emit: &mut dyn FnMut(&Bucket) -> Result<bool>,
    ) -> Result<bool> {
        let start = self.every.start(time);
        let same = self.current.as_ref().is_some_and(|bucket| bucket.start == start && bucket.station == station);
        if !same {
            self.finish(emit)?;
            if self.stopped {
                return Ok(false);
            }
            self.current = Some(Bucket::new(station, start));
        }
        if let Some(bucket) = self.current.as_mut() {
            bucket.add(value);
        }
        Ok(true)
    }

    fn finish(&mut self, emit: &mut dyn FnMut(&Bucket) -> Result<bool>) -> Result<()> {
        if let Some(bucket) = self.current.take() {
            self.emitted += 1;
            self.stopped = !emit(&bucket)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Period starts of every kind, and values out of raw records with quoting,
    /// decimal commas and sentinels.
    #[test]
    fn periods_and_values() {
        let time = 1_362_099_600 + 1_234; // 2013-03-01T01:20:34
        assert_eq!(Every::Hour.start(time), 1_362_099_600);
        assert_eq!(Every::Day.start(time), 1_362_096_000);
        assert_eq!(Every::Month.start(time + 86_400 * 20), 1_362_096_000);
        assert_eq!(Every::Year.start(time), 1_356_998_400);
        let layout = RecordLayout::new(b';', vec![2, 3], &MissingValues::default());
        let missing = layout.missing();
        assert_eq!(layout.value(b"A;2013-03-01;1,5;-9999", 0, &missing), Some(1.5));
        assert_eq!(layout.value(b"A;2013-03-01;1,5;-9999", 1, &missing), None);
        assert_eq!(layout.value(b"\"A;B\";2013-03-01;2;3", 1, &missing), Some(3.0));
        assert_eq!(RecordLayout::decode(&layout.encode()).ok(), Some(layout));
    }
}
