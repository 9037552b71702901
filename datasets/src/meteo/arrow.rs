//! Meteorological records and aggregate buckets as Arrow record batches (feature
//! `arrow`): what the Python package hands to `pyarrow` without a copy and what
//! `quire export` writes as Parquet or Arrow IPC.
//!
//! Columns of records read through the (station, time) B+tree ([`range`],
//! [`scan_batches`]): `station` (utf8), `time` (timestamp in seconds, UTC), one float64
//! column per measure (null when missing; read with the load's [`RecordLayout`]), and
//! `record`, the raw line as loaded. Records found through the R*-tree ([`found`]: window
//! and kNN) have no key at hand: `distance` (kNN only), the measures and `record`.
//! Buckets ([`buckets`]): `station`, `start`, `rows`, `count`, `sum`, `min`, `max`,
//! `mean` (the last four null for a bucket without values).

use std::ops::{Range, RangeInclusive};
use std::sync::Arc;

use arrow_array::builder::{Float64Builder, StringBuilder, TimestampSecondBuilder, UInt64Builder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use quiredb_engine::PageRead;

use super::aggregate::{Bucket, RecordLayout, stored_layout, stored_measure_names};
use super::fields::parse_measure;
use super::query::{Found, MeteoView};
use super::schema::MissingValues;
use crate::error::Result;

/// Positions of `byte` in `text`.
fn positions_of(byte: u8, text: &[u8]) -> impl Iterator<Item = usize> + '_ {
    text.iter().enumerate().filter(move |&(_, &b)| b == byte).map(|(i, _)| i)
}

/// Which columns a batch of records has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `station`, `time`, measures, `record` (records read through the B+tree).
    Keyed,
    /// Measures and `record`, after `distance` when `distances` (R*-tree answers).
    Found {
        /// With a leading `distance` column (kNN).
        distances: bool,
    },
}

/// Builds record batches row by row.
pub struct RecordColumns {
    shape: Shape,
    names: Vec<String>,
    layout: Option<(RecordLayout, MissingValues)>,
    station: StringBuilder,
    time: TimestampSecondBuilder,
    distance: Float64Builder,
    measures: Vec<Float64Builder>,
    record: StringBuilder,
    rows: usize,
    /// Where the fields of the line being appended are.
    spans: Vec<Range<usize>>,
}

impl RecordColumns {
    /// Columns of `shape` for the database of `txn` (its measure names and record
    /// layout; without a layout, loaded before it existed, there are no measure columns).
    pub fn new(txn: &impl PageRead, shape: Shape) -> Result<Self> {
        let layout = stored_layout(txn)?.map(|layout| {
            let missing = layout.missing();
            (layout, missing)
        });
        let names = match layout {
            Some(_) => stored_measure_names(txn)?,
            None => Vec::new(),
        };
        Ok(RecordColumns {
            shape,
            measures: names.iter().map(|_| Float64Builder::new()).collect(),
            names,
            layout,
            station: StringBuilder::new(),
            time: TimestampSecondBuilder::new().with_timezone("UTC"),
            distance: Float64Builder::new(),
            record: StringBuilder::new(),
            rows: 0,
            spans: Vec::new(),
        })
    }

    /// The measure names (the measure columns, in order).
    pub fn measure_names(&self) -> &[String] {
        &self.names
    }

    /// Appends one record: its key for [`Shape::Keyed`], its distance for kNN.
    pub fn push(&mut self, key: Option<(&str, i64)>, raw: &[u8], distance: Option<f64>) {
        if let Some((station, time)) = key {
            self.station.append_value(station);
            self.time.append_value(time);
        }
        if let Shape::Found { distances: true } = self.shape {
            self.distance.append_option(distance);
        }
        if let Some((layout, missing)) = &self.layout {
            if raw.contains(&b'"') {
                // Quoted fields: the layout's CSV reading.
                for (i, column) in self.measures.iter_mut().enumerate() {
                    column.append_option(layout.value(raw, i, missing));
                }
            } else {
                // One split of the line for every measure (`value` splits it per measure).
                self.spans.clear();
                let mut start = 0;
                for end in positions_of(layout.delimiter, raw) {
                    self.spans.push(start..end);
                    start = end + 1;
                }
                self.spans.push(start..raw.len());
                let decimal_comma = layout.delimiter != b',';
                for (column, &field) in self.measures.iter_mut().zip(&layout.columns) {
                    let text = self.spans.get(field).map(|span| &raw[span.clone()]);
                    let value = text.and_then(|text| parse_measure(text, decimal_comma, missing).ok());
                    column.append_option(value.flatten());
                }
            }
        }
        match std::str::from_utf8(raw) {
            Ok(text) => self.record.append_value(text),
            Err(_) => self.record.append_value(String::from_utf8_lossy(raw)),
        }
        self.rows += 1;
    }

    /// Rows appended since the last [`RecordColumns::finish`].
    pub fn len(&self) -> usize {
        self.rows
    }

    /// True when no row was appended since the last [`RecordColumns::finish`].
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// The schema of the batches.
    pub fn schema(&self) -> Arc<Schema> {
        let mut fields = Vec::new();
        match self.shape {
            Shape::Keyed => {
                fields.push(Field::new("station", DataType::Utf8, false));
                fields.push(Field::new("time", DataType::Timestamp(TimeUnit::Second, Some("UTC".into())), false));
            }
            Shape::Found { distances: true } => fields.push(Field::new("distance", DataType::Float64, true)),
            Shape::Found { distances: false } => {}
        }
        fields.extend(self.names.iter().map(|name| Field::new(name, DataType::Float64, true)));
        fields.push(Field::new("record", DataType::Utf8, false));
        Arc::new(Schema::new(fields))
    }

    /// The rows appended so far as one batch; the builders start over.
    pub fn finish(&mut self) -> Result<RecordBatch> {
        let mut columns: Vec<ArrayRef> = Vec::new();
        match self.shape {
            Shape::Keyed => {
                columns.push(Arc::new(self.station.finish()));
                columns.push(Arc::new(self.time.finish()));
            }
            Shape::Found { distances: true } => columns.push(Arc::new(self.distance.finish())),
            Shape::Found { distances: false } => {}
        }
        columns.extend(self.measures.iter_mut().map(|column| Arc::new(column.finish()) as ArrayRef));
        columns.push(Arc::new(self.record.finish()));
        self.rows = 0;
        Ok(RecordBatch::try_new(self.schema(), columns)?)
    }
}

/// The records of `station` (every station when `None`) with a time in `times`, at most
/// `limit`, in (station, time) order, as one batch of [`Shape::Keyed`].
pub fn range(
    txn: &impl PageRead,
    station: Option<&str>,
    times: RangeInclusive<i64>,
    limit: usize,
) -> Result<RecordBatch> {
    let mut columns = RecordColumns::new(txn, Shape::Keyed)?;
    MeteoView::open(txn)?.scan(station, times, &mut |record| {
        if columns.len() >= limit {
            return Ok(false);
        }
        columns.push(Some((record.station, record.time)), record.raw, None);
        Ok(columns.len() < limit)
    })?;
    columns.finish()
}

/// How [`scan_batches`] cuts the records into batches.
#[derive(Clone, Copy, Debug)]
pub struct Batching {
    /// Rows of a batch (at most).
    pub rows: usize,
    /// A batch never spans two stations.
    pub split_stations: bool,
}

/// The records of [`range`] (no limit) in batches handed to `emit` (which returns false
/// to stop).
pub fn scan_batches(
    txn: &impl PageRead,
    station: Option<&str>,
    times: RangeInclusive<i64>,
    batching: Batching,
    emit: &mut dyn FnMut(RecordBatch) -> Result<bool>,
) -> Result<()> {
    let mut columns = RecordColumns::new(txn, Shape::Keyed)?;
    let mut current = String::new();
    let mut stopped = false;
    MeteoView::open(txn)?.scan(station, times, &mut |record| {
        let new_station = batching.split_stations && record.station != current;
        let full = columns.len() >= batching.rows.max(1) || new_station;
        if !columns.is_empty() && full && !emit(columns.finish()?)? {
            stopped = true;
            return Ok(false);
        }
        if new_station {
            current = record.station.to_owned();
        }
        columns.push(Some((record.station, record.time)), record.raw, None);
        Ok(true)
    })?;
    if !stopped && !columns.is_empty() {
        emit(columns.finish()?)?;
    }
    Ok(())
}

/// Answers of a window (`distances` false) or kNN query as one batch.
pub fn found(txn: &impl PageRead, found: &[Found], distances: bool) -> Result<RecordBatch> {
    let mut columns = RecordColumns::new(txn, Shape::Found { distances })?;
    for answer in found {
        columns.push(None, &answer.raw, answer.distance);
    }
    columns.finish()
}

/// Aggregate buckets as one batch.
pub fn buckets(buckets: &[Bucket]) -> Result<RecordBatch> {
    let mut station = StringBuilder::new();
    let mut start = TimestampSecondBuilder::new().with_timezone("UTC");
    let (mut rows, mut count) = (UInt64Builder::new(), UInt64Builder::new());
    let mut values: [Float64Builder; 4] = Default::default();
    for bucket in buckets {
        station.append_value(&bucket.station);
        start.append_value(bucket.start);
        rows.append_value(bucket.rows);
        count.append_value(bucket.count);
        let present = bucket.count > 0;
        let stats = [bucket.sum, bucket.min, bucket.max, bucket.mean().unwrap_or(f64::NAN)];
        for (column, value) in values.iter_mut().zip(stats) {
            column.append_option(present.then_some(value));
        }
    }
    let timestamp = DataType::Timestamp(TimeUnit::Second, Some("UTC".into()));
    let mut fields = vec![
        Field::new("station", DataType::Utf8, false),
        Field::new("start", timestamp, false),
        Field::new("rows", DataType::UInt64, false),
        Field::new("count", DataType::UInt64, false),
    ];
    fields.extend(["sum", "min", "max", "mean"].map(|name| Field::new(name, DataType::Float64, true)));
    let mut columns: Vec<ArrayRef> =
        vec![Arc::new(station.finish()), Arc::new(start.finish()), Arc::new(rows.finish()), Arc::new(count.finish())];
    columns.extend(values.iter_mut().map(|column| Arc::new(column.finish()) as ArrayRef));
    Ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)?)
}
