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

use std::ops::{Bound, Range, RangeInclusive};
use std::sync::Arc;

use arrow_array::builder::{Float64Builder, StringBuilder, TimestampSecondBuilder, UInt64Builder};
use arrow_array::{ArrayRef, Float64Array, RecordBatch, StringArray, TimestampSecondArray};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use quiredb_engine::{Database, PageRead};

use super::aggregate::{Bucket, RecordLayout, stored_layout, stored_measure_names};
use super::query::{Found, MeteoView, as_slices, key_bounds};
use crate::error::Result;

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
    layout: Option<RecordLayout>,
    station: TextColumn,
    time: Vec<i64>,
    distance: Float64Builder,
    measures: Vec<FloatColumn>,
    record: TextColumn,
    rows: usize,
    /// Where the fields of the line being appended are.
    spans: Vec<Range<usize>>,
}

impl RecordColumns {
    /// Columns of `shape` for the database of `txn` (its measure names and record
    /// layout; without a layout, loaded before it existed, there are no measure columns).
    pub fn new(txn: &impl PageRead, shape: Shape) -> Result<Self> {
        let layout = stored_layout(txn)?;
        let names = match layout {
            Some(_) => stored_measure_names(txn)?,
            None => Vec::new(),
        };
        Ok(RecordColumns {
            shape,
            measures: names.iter().map(|_| FloatColumn::default()).collect(),
            names,
            layout,
            station: TextColumn::default(),
            time: Vec::new(),
            distance: Float64Builder::new(),
            record: TextColumn::default(),
            rows: 0,
            spans: Vec::new(),
        })
    }

    /// Room for `rows` rows in every column of the next batch (called before its first
    /// row), so that they need not grow: the texts at the average length of the rows of
    /// the last batch, with a quarter more.
    pub fn reserve(&mut self, rows: usize) {
        self.station.reserve(rows);
        self.time.reserve(rows);
        for column in &mut self.measures {
            column.reserve(rows);
        }
        self.record.reserve(rows);
    }

    /// The measure names (the measure columns, in order).
    pub fn measure_names(&self) -> &[String] {
        &self.names
    }

    /// Appends one record: its key for [`Shape::Keyed`], its distance for kNN.
    pub fn push(&mut self, key: Option<(&str, i64)>, raw: &[u8], distance: Option<f64>) {
        if let Some((station, time)) = key {
            self.station.push(station.as_bytes());
            self.time.push(time);
        }
        if let Shape::Found { distances: true } = self.shape {
            self.distance.append_option(distance);
        }
        if let Some(layout) = &self.layout {
            if field_spans(raw, layout.delimiter, &mut self.spans) {
                // Quoted fields: the layout's CSV reading.
                for (i, column) in self.measures.iter_mut().enumerate() {
                    column.push(layout.value(raw, i));
                }
            } else {
                let field = |index: usize| self.spans.get(index).map(|span| &raw[span.clone()]);
                for (i, (column, &at)) in self.measures.iter_mut().zip(&layout.columns).enumerate() {
                    let flag = layout.flag_field(i).map(|flag| field(flag).unwrap_or_default());
                    column.push(field(at).and_then(|text| layout.field_value(text, flag, i)));
                }
            }
        }
        self.record.push(raw);
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
                let times = TimestampSecondArray::new(std::mem::take(&mut self.time).into(), None);
                columns.push(Arc::new(times.with_timezone("UTC")));
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

/// Puts the spans of the fields of `line` (split at `delimiter`) into `spans`; true
/// when the line has a quote. Eight bytes a step, each byte equal to the delimiter or a
/// quote found by the zero-byte test of `word ^ broadcast` (a loop over the bytes cost a
/// generated row ~400 instructions, `memchr_iter` as much: a call a field).
fn field_spans(line: &[u8], delimiter: u8, spans: &mut Vec<Range<usize>>) -> bool {
    const LOW: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Bytes of `word` equal to `byte`, as their high bits (exact: no false positives).
    let equal = |word: u64, byte: u8| {
        let x = word ^ (LOW * u64::from(byte));
        !((x & !HIGH).wrapping_add(!HIGH) | x) & HIGH
    };
    spans.clear();
    let (mut start, mut quotes) = (0, 0);
    let mut words = line.chunks_exact(8);
    let mut base = 0;
    for chunk in words.by_ref() {
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        quotes |= equal(word, b'"');
        let mut hits = equal(word, delimiter);
        while hits != 0 {
            let at = base + hits.trailing_zeros() as usize / 8;
            spans.push(start..at);
            start = at + 1;
            hits &= hits - 1;
        }
        base += 8;
    }
    for (offset, &byte) in words.remainder().iter().enumerate() {
        if byte == delimiter {
            spans.push(start..base + offset);
            start = base + offset + 1;
        }
        quotes |= u64::from(byte == b'"');
    }
    spans.push(start..line.len());
    quotes != 0
}

/// A column of floats with nulls: values and validity bits pushed into plain vectors
/// (an Arrow builder's `append_option` cost a row of five measures ~250 instructions,
/// a `Vec<bool>` turned into a bitmap at the end ~120), made an array once a batch.
#[derive(Default)]
struct FloatColumn {
    values: Vec<f64>,
    /// Validity bits, lowest first (Arrow's layout).
    valid: Vec<u64>,
    nulls: usize,
}

impl FloatColumn {
    fn reserve(&mut self, rows: usize) {
        self.values.reserve(rows);
        self.valid.reserve(rows.div_ceil(64));
    }

    #[inline]
    fn push(&mut self, value: Option<f64>) {
        let row = self.values.len();
        if row.is_multiple_of(64) {
            self.valid.push(0);
        }
        if let Some(word) = self.valid.last_mut() {
            *word |= u64::from(value.is_some()) << (row % 64);
        }
        self.values.push(value.unwrap_or(0.0));
        self.nulls += usize::from(value.is_none());
    }

    /// The rows as an array; the column starts over.
    fn finish(&mut self) -> Float64Array {
        let rows = self.values.len();
        let values = ScalarBuffer::from(std::mem::take(&mut self.values));
        let valid = Buffer::from_vec(std::mem::take(&mut self.valid));
        let nulls = (std::mem::take(&mut self.nulls) > 0).then(|| NullBuffer::new(BooleanBuffer::new(valid, 0, rows)));
        Float64Array::new(values, nulls)
    }
}

/// A column of texts built from bytes: UTF-8 is checked once, when the column is
/// finished (per row, the check cost as much as the copy); a column with a row that is
/// not UTF-8 is rebuilt with the invalid bytes replaced.
#[derive(Default)]
struct TextColumn {
    /// Where each row ends in `bytes` (after a leading 0).
    offsets: Vec<i32>,
    bytes: Vec<u8>,
    /// Bytes a row in the last batch finished (`reserve`'s estimate).
    row_bytes: usize,
}

impl TextColumn {
    /// Room for `rows` more rows (of the last batch's average length and a quarter).
    fn reserve(&mut self, rows: usize) {
        let row_bytes = match self.row_bytes {
            0 => 64,
            known => known + known / 4 + 1,
        };
        self.offsets.reserve(rows + 1);
        self.bytes.reserve(rows * row_bytes);
    }

    fn push(&mut self, text: &[u8]) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        self.bytes.extend_from_slice(text);
        let end = i32::try_from(self.bytes.len()).expect("a batch holds less than 2 GiB of text");
        self.offsets.push(end);
    }

    /// The rows as a string array; the column starts over.
    fn finish(&mut self) -> StringArray {
        let (mut offsets, bytes) = (std::mem::take(&mut self.offsets), std::mem::take(&mut self.bytes));
        if offsets.is_empty() {
            offsets.push(0);
        }
        let rows = offsets.len() - 1;
        if rows > 0 {
            self.row_bytes = bytes.len().div_ceil(rows).max(1);
        }
        let (offsets, bytes) = (OffsetBuffer::new(ScalarBuffer::from(offsets)), Buffer::from_vec(bytes));
        // (Clones of buffers share them.)
        match StringArray::try_new(offsets.clone(), bytes.clone(), None) {
            Ok(array) => array,
            Err(_) => offsets
                .windows(2)
                .map(|row| Some(String::from_utf8_lossy(&bytes[row[0] as usize..row[1] as usize])))
                .collect(),
        }
    }
}

/// Rows of a batch of [`range`]: each batch's columns are allocated once at their full
/// size (no copies as they grow), and a range's memory goes back to the allocator in
/// pieces it hands out again to the next range (rather than to the system, which then
/// has to clear fresh pages).
pub const RANGE_BATCH_ROWS: usize = 1 << 16;

/// The records of `station` (every station when `None`) with a time in `times`, at most
/// `limit`, in (station, time) order, as batches of [`Shape::Keyed`] of
/// [`RANGE_BATCH_ROWS`] rows (the last one fewer; one empty batch when there is none).
pub fn range(
    txn: &impl PageRead,
    station: Option<&str>,
    times: RangeInclusive<i64>,
    limit: usize,
) -> Result<Vec<RecordBatch>> {
    let (low, high) = key_bounds(station, &times);
    range_of_keys(txn, as_slices(&low), as_slices(&high), times, limit)
}

/// [`range`] over the keys between `low` and `high`.
fn range_of_keys(
    txn: &impl PageRead,
    low: Bound<&[u8]>,
    high: Bound<&[u8]>,
    times: RangeInclusive<i64>,
    limit: usize,
) -> Result<Vec<RecordBatch>> {
    let mut columns = RecordColumns::new(txn, Shape::Keyed)?;
    columns.reserve(RANGE_BATCH_ROWS.min(limit));
    let (mut batches, mut rows) = (Vec::new(), 0);
    MeteoView::open(txn)?.scan_keys(low, high, times, &mut |record| {
        if rows >= limit {
            return Ok(false);
        }
        if columns.len() == RANGE_BATCH_ROWS {
            batches.push(columns.finish()?);
            columns.reserve(RANGE_BATCH_ROWS.min(limit - rows));
        }
        columns.push(Some((record.station, record.time)), record.raw, None);
        rows += 1;
        Ok(rows < limit)
    })?;
    if batches.is_empty() || !columns.is_empty() {
        batches.push(columns.finish()?);
    }
    Ok(batches)
}

/// The batches of [`range`] (no limit) read by two threads from two snapshots of the
/// same commit, each over one half of the keys, in order. One thread when a commit
/// came between the two snapshots or the range has fewer than two keys.
pub fn range_on_two_threads(
    db: &Database,
    station: Option<&str>,
    times: RangeInclusive<i64>,
) -> Result<Vec<RecordBatch>> {
    let (front, back) = (db.begin_read()?, db.begin_read()?);
    let (low, high) = key_bounds(station, &times);
    let middle = match front.meta().txn == back.meta().txn {
        true => MeteoView::open(&front)?.middle_key(as_slices(&low), as_slices(&high))?,
        false => None,
    };
    let Some(middle) = middle else { return range(&front, station, times, usize::MAX) };
    std::thread::scope(|scope| {
        // The second snapshot moves to its thread (a snapshot is not shared).
        let (middle_ref, high_ref, times_ref) = (&middle, &high, &times);
        let second = scope.spawn(move || {
            range_of_keys(&back, Bound::Included(middle_ref), as_slices(high_ref), times_ref.clone(), usize::MAX)
        });
        let first = range_of_keys(&front, as_slices(&low), Bound::Excluded(&middle), times.clone(), usize::MAX);
        let second = second.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        let (mut batches, second) = (first?, second?);
        // A half without rows (times outside `times`) adds no empty batch.
        batches.retain(|batch| batch.num_rows() > 0);
        batches.extend(second.into_iter().filter(|batch| batch.num_rows() > 0));
        if batches.is_empty() {
            return range(&front, station, times.clone(), 0);
        }
        Ok(batches)
    })
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

#[cfg(test)]
mod tests {
    use super::field_spans;

    /// Every line of up to 17 bytes of `x` and delimiters (both sides of a word
    /// boundary), then each with a quote at every position: the spans equal a plain
    /// split, and the quote is seen.
    #[test]
    fn field_spans_equal_a_split_of_the_line() {
        let mut spans = Vec::new();
        for (len, delimiter) in (0..=17).flat_map(|len| [(len, b','), (len, b';')]) {
            for bits in 0u32..1 << len {
                let line: Vec<u8> = (0..len).map(|at| if bits >> at & 1 == 1 { delimiter } else { b'x' }).collect();
                let expected: Vec<&[u8]> = line.split(|&byte| byte == delimiter).collect();
                assert!(!field_spans(&line, delimiter, &mut spans), "{line:?}");
                let found: Vec<&[u8]> = spans.iter().map(|span| &line[span.clone()]).collect();
                assert_eq!(found, expected, "{:?}", String::from_utf8_lossy(&line));
                if bits.is_multiple_of(97) {
                    for at in 0..len {
                        let mut quoted = line.clone();
                        quoted[at] = b'"';
                        assert!(field_spans(&quoted, delimiter, &mut spans), "{quoted:?}");
                    }
                }
            }
        }
    }
}
