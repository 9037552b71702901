//! Aggregates of one measure per station and period (`quire agg`), streamed over the
//! (station, time) B+tree: each key's record is read from the queue, its measure taken
//! out of the raw record with the load's [`RecordLayout`], and folded into the current
//! bucket; a bucket is handed out as soon as the station or period changes (keys come in
//! station, time order), so memory stays one bucket whatever the range.
//!
//! The scan costs per record one B+tree entry read in place by a cursor (no key or
//! value copied; the station decoded once a bucket, the period's end kept so that the
//! calendar is consulted once a bucket), one queue record copied out of its page, and
//! the measure's field decoded out of the packed record alone (`record::packed_field`,
//! the fields before it skipped a byte at a time). Every station per month over the
//! 57.8 M generated rows: 9–10 s of CPU, single thread, against SQLite's `GROUP BY`
//! 46 s (`benches/meteo-agg-vs-sqlite.sh`, reports/METEO-LAYOUTS.md).
//!
//! The [`RecordLayout`] (delimiter, the raw record's field of each measure, missing
//! markers) is written by the load into `meteo.meta` under [`LAYOUT_KEY`] as JSON; a
//! database loaded before it existed has none and `agg` asks for a reload.

use quiredb_engine::PageRead;
use quiredb_structures::btree::{BTree, Value};
use quiredb_structures::queue::{Queue, RecordId};
use quiredb_structures::table::Key;

use super::fields::{civil_from_days, days_from_civil, flag_drops, parse_measure};
use super::record::{RecordEncoding, packed_field};
use super::schema::MissingValues;
use super::store::{BTREE_NAME, META_NAME, QUEUE_NAME, decode_record_id, encode_key, stored_encoding};
use crate::error::{Error, Result};

/// Key in `meteo.meta` of the [`RecordLayout`].
pub const LAYOUT_KEY: &[u8] = b"record_layout";

/// Where the measures are in a stored raw record, and how their values read: the
/// load's missing markers, words, flags after numbers, per-measure sentinels and
/// quality flag columns, so that `agg`, `range` and Python see what the load counted.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RecordLayout {
    /// The delimiter the fields are joined by.
    pub delimiter: u8,
    /// The 0-based field of each measure, in measure order.
    pub columns: Vec<usize>,
    /// Missing markers, words and flags after numbers (the JSON's `tokens`,
    /// `sentinels`, `words`, `suffix_flags`, `dropped_suffix_flags`).
    #[serde(flatten)]
    pub missing: MissingValues,
    /// The measures that are the R*-tree's dimensions, when chosen (`--index-measures`).
    #[serde(default)]
    pub index_measures: Option<Vec<usize>>,
    /// Each measure's own rule, in measure order (empty: none has one).
    #[serde(default)]
    pub rules: Vec<MeasureRule>,
    /// Flag values that drop a value; empty: any non-empty flag (`--drop-flags`).
    #[serde(default)]
    pub drop_flags: Vec<String>,
    /// Whether numbers have a decimal comma, as the load read them; absent (a layout
    /// written before): when the delimiter is no comma.
    #[serde(default)]
    pub decimal_comma: Option<bool>,
}

/// One measure's own sentinels (`--na COLUMN=NUMBER`) and quality flag field
/// (`--flag-column`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MeasureRule {
    /// Numbers that mean missing in this measure alone.
    #[serde(default)]
    pub sentinels: Vec<f64>,
    /// The 0-based field of its quality flag.
    #[serde(default)]
    pub flag: Option<usize>,
}

impl RecordLayout {
    /// A layout of fields joined by `delimiter`, measures at `columns`.
    pub fn new(delimiter: u8, columns: Vec<usize>, missing: &MissingValues) -> Self {
        RecordLayout {
            delimiter,
            columns,
            missing: missing.clone(),
            index_measures: None,
            rules: Vec::new(),
            drop_flags: Vec::new(),
            decimal_comma: None,
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

    /// The field of measure `measure`'s quality flag, if it has one.
    pub fn flag_field(&self, measure: usize) -> Option<usize> {
        self.rules.get(measure).and_then(|rule| rule.flag)
    }

    /// Measure `measure` of the raw record `raw` (`None` when missing or unreadable).
    pub fn value(&self, raw: &[u8], measure: usize) -> Option<f64> {
        let column = *self.columns.get(measure)?;
        let flag = self.flag_field(measure);
        if !raw.contains(&b'"') {
            let fields = || raw.split(|&byte| byte == self.delimiter);
            let flag = flag.map(|flag| fields().nth(flag).unwrap_or_default());
            return self.field_value(fields().nth(column)?, flag, measure);
        }
        let mut reader = csv::ReaderBuilder::new().has_headers(false).delimiter(self.delimiter).from_reader(raw);
        let mut record = csv::ByteRecord::new();
        reader.read_byte_record(&mut record).ok()?;
        let flag = flag.map(|flag| record.get(flag).unwrap_or_default());
        self.field_value(record.get(column)?, flag, measure)
    }

    /// Whether numbers read with a decimal comma (a layout written before the choice
    /// was stored: when the delimiter is no comma).
    pub fn reads_decimal_comma(&self) -> bool {
        self.decimal_comma.unwrap_or(self.delimiter != b',')
    }

    /// Why records written under `records` would not read as their load read them under
    /// this layout (`agg`, `range` and Python read every record of a database by one
    /// layout): what `records` have that this layout does not, or `None`. Decimal
    /// commas read numbers with points as they were (a load refuses a measure with a
    /// comma under points, so such records hold none), not the other way round; the
    /// R*-tree's dimensions do not matter here.
    pub fn conflict_with(&self, records: &RecordLayout) -> Option<String> {
        let joined = |byte: u8| match byte {
            b'\t' => "tab".to_owned(),
            b' ' => "space".to_owned(),
            other => format!("'{}'", char::from(other)),
        };
        let columns = |columns: &[usize]| columns.iter().map(|at| (at + 1).to_string()).collect::<Vec<_>>().join(", ");
        if self.delimiter != records.delimiter {
            Some(format!("fields joined by {}, not {}", joined(records.delimiter), joined(self.delimiter)))
        } else if self.columns != records.columns {
            Some(format!("measures in columns {} (from 1), not {}", columns(&records.columns), columns(&self.columns)))
        } else if records.reads_decimal_comma() && !self.reads_decimal_comma() {
            Some("numbers with decimal commas, not points".to_owned())
        } else if self.missing != records.missing {
            Some("other missing markers (--na, --na-word, --suffix-flags)".to_owned())
        } else if self.rules != records.rules || self.drop_flags != records.drop_flags {
            Some("other per-measure missing values or quality flags".to_owned())
        } else {
            None
        }
    }

    /// This layout, to be stored over `stored` (the layout of the records a database
    /// holds already): with decimal commas if either has them, so both read right; an
    /// error naming the difference if the stored records would not read right under it.
    pub fn over(&self, stored: &RecordLayout) -> Result<RecordLayout> {
        let mut merged = self.clone();
        merged.decimal_comma = Some(self.reads_decimal_comma() || stored.reads_decimal_comma());
        match merged.conflict_with(stored) {
            None => Ok(merged),
            Some(conflict) => Err(Error::Schema(format!(
                "the database's records have {conflict} as this load's: agg, range and Python read \
                 every record of a database by one layout, so load these files into another database"
            ))),
        }
    }

    /// The value of measure `measure`'s field `field` beside its quality flag `flag`.
    pub fn field_value(&self, field: &[u8], flag: Option<&[u8]>, measure: usize) -> Option<f64> {
        if flag.is_some_and(|flag| flag_drops(flag, &self.drop_flags)) {
            return None;
        }
        let value = parse_measure(field, self.reads_decimal_comma(), &self.missing).ok().flatten()?;
        let own = self.rules.get(measure).is_some_and(|rule| rule.sentinels.contains(&value));
        (!own).then_some(value)
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
    Ok(super::store::decode_measure_names(&names))
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
    /// The end of the period starting at `start` (the next one's start).
    pub fn end(self, start: i64) -> i64 {
        match self {
            Every::Hour => start + 3_600,
            Every::Day => start + 86_400,
            Every::Month | Every::Year => {
                let (year, month, _) = civil_from_days(start.div_euclid(86_400));
                let (year, month) = match self {
                    Every::Month if month == 12 => (year + 1, 1),
                    Every::Month => (year, month + 1),
                    _ => (year + 1, 1),
                };
                days_from_civil(year, month, 1) * 86_400
            }
        }
    }

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
///
/// One cursor walks the B+tree in place (no key or value copied, the station decoded
/// once a bucket); each record's measure is read out of its packed form without
/// unpacking the rest ([`packed_field`]).
pub fn aggregate(
    txn: &impl PageRead,
    query: &AggregateQuery,
    emit: &mut dyn FnMut(&Bucket) -> Result<bool>,
) -> Result<u64> {
    let reader = MeasureReader::open(txn, &query.measure)?;
    let btree = BTree::open(txn, BTREE_NAME)?;
    let (mut low, mut high) = (Vec::new(), Vec::new());
    if let Some(station) = &query.station {
        encode_key(station, query.from, &mut low);
        encode_key(station, query.to, &mut high);
    }
    let mut folder = Folder { every: query.every, current: None, station_key: Vec::new(), end: 0, emitted: 0 };
    let mut cursor = btree.cursor();
    cursor.seek(&low)?;
    let mut buffers = (Vec::new(), Vec::new());
    while let Some(key) = cursor.key() {
        if query.station.is_some() && key > high.as_slice() {
            break;
        }
        let (station, time) = split_key(key)?;
        if (query.from..=query.to).contains(&time) {
            let id = match cursor.value_ref() {
                Some(Value::Inline(bytes)) => decode_record_id(bytes),
                _ => None,
            };
            let id = id.ok_or_else(|| Error::Schema("a B+tree value is not a record id".into()))?;
            let value = reader.value(id, &mut buffers)?;
            if !folder.add(station, time, value, emit)? {
                return Ok(folder.emitted);
            }
        }
        cursor.move_next()?;
    }
    folder.finish(emit)?;
    Ok(folder.emitted)
}

/// Reads one measure of the queue's records.
struct MeasureReader<'t, T: PageRead> {
    queue: Queue<'t, T>,
    encoding: RecordEncoding,
    layout: RecordLayout,
    measure: usize,
}

impl<'t, T: PageRead> MeasureReader<'t, T> {
    /// The reader of the measure named `name` (ignoring case); an error naming the
    /// measures when there is none such, or for a database without a record layout.
    fn open(txn: &'t T, name: &str) -> Result<Self> {
        let queue = Queue::open(txn, QUEUE_NAME)
            .map_err(|_| Error::Schema("no meteorological data in this database".into()))?;
        let layout = stored_layout(txn)?.ok_or_else(|| {
            Error::Schema(
                "this database was loaded before `agg` existed (no record layout in meteo.meta); load it again".into(),
            )
        })?;
        let names = stored_measure_names(txn)?;
        let measure = names
            .iter()
            .position(|known| known.eq_ignore_ascii_case(name))
            .ok_or_else(|| Error::Argument(format!("no measure {name:?}; the database has: {}", names.join(", "))))?;
        let encoding = stored_encoding(txn)?;
        Ok(MeasureReader { queue, encoding, layout, measure })
    }

    /// The measure of record `id`; `stored` and `field` are scratch buffers.
    fn value(&self, id: RecordId, (stored, field): &mut (Vec<u8>, Vec<u8>)) -> Result<Option<f64>> {
        stored.clear();
        if !self.queue.get(id, stored)? {
            return Err(Error::Schema(format!("an index points to record {id:?}, which is not in the queue")));
        }
        let column = self.layout.columns.get(self.measure).copied();
        if let (RecordEncoding::Nibble, b',', Some(column)) = (self.encoding, self.layout.delimiter, column)
            && self.layout.flag_field(self.measure).is_none()
            && packed_field(stored, column, field)?
        {
            return Ok(self.layout.field_value(field, None, self.measure));
        }
        self.encoding.decode(stored, field)?;
        Ok(self.layout.value(field, self.measure))
    }
}

/// The encoded station (escaped and ended) and the time of a B+tree key.
fn split_key(key: &[u8]) -> Result<(&[u8], i64)> {
    let bad = || Error::Schema("a B+tree key is not (station, time)".into());
    let (station, mut time) = key.split_at_checked(key.len().wrapping_sub(8)).ok_or_else(bad)?;
    Ok((station, i64::decode_key(&mut time, true).ok_or_else(bad)?))
}

/// The bucket being filled (its station's encoded key and its period's end) and the
/// emission count.
struct Folder {
    every: Every,
    current: Option<Bucket>,
    station_key: Vec<u8>,
    end: i64,
    emitted: u64,
}

impl Folder {
    /// Adds one record of the station encoded as `station_key`; false once `emit`
    /// asked to stop.
    fn add(
        &mut self,
        station_key: &[u8],
        time: i64,
        value: Option<f64>,
        emit: &mut dyn FnMut(&Bucket) -> Result<bool>,
    ) -> Result<bool> {
        let same = |bucket: &Bucket| bucket.start <= time && time < self.end && self.station_key == station_key;
        if !self.current.as_ref().is_some_and(same) {
            let previous = self.current.take();
            if let Some(bucket) = &previous {
                self.emitted += 1;
                if !emit(bucket)? {
                    return Ok(false);
                }
            }
            let station = match previous {
                Some(bucket) if self.station_key == station_key => bucket.station,
                _ => {
                    let decoded = String::decode_key(&mut &station_key[..], false);
                    decoded.ok_or_else(|| Error::Schema("a B+tree key is not (station, time)".into()))?
                }
            };
            station_key.clone_into(&mut self.station_key);
            let start = self.every.start(time);
            self.end = self.every.end(start);
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
            emit(&bucket)?;
        }
        Ok(())
    }
}

/// The (station, time) of a key of the B+tree.
pub(crate) fn decode_key(key: &[u8]) -> Result<(String, i64)> {
    let mut rest = key;
    let station = String::decode_key(&mut rest, false);
    let time = i64::decode_key(&mut rest, true);
    station.zip(time).ok_or_else(|| Error::Schema("a B+tree key is not (station, time)".into()))
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
        assert_eq!(Every::Hour.end(1_362_099_600), 1_362_099_600 + 3_600);
        assert_eq!(Every::Month.end(1_362_096_000), 1_364_774_400); // 2013-04-01
        assert_eq!(Every::Month.end(Every::Month.start(1_388_000_000)), 1_388_534_400); // Dec 2013 → 2014-01-01
        assert_eq!(Every::Year.end(1_356_998_400), 1_388_534_400);
        let layout = RecordLayout::new(b';', vec![2, 3], &MissingValues::default());
        assert_eq!(layout.value(b"A;2013-03-01;1,5;-9999", 0), Some(1.5));
        assert_eq!(layout.value(b"A;2013-03-01;1,5;-9999", 1), None);
        assert_eq!(layout.value(b"\"A;B\";2013-03-01;2;3", 1), Some(3.0));
        assert_eq!(RecordLayout::decode(&layout.encode()).ok(), Some(layout));
    }

    /// A layout keeps what the load counted as missing: a measure's own sentinels, its
    /// quality flag (any set one, or those named), words and flags after numbers; a
    /// layout written before these existed reads as having none.
    #[test]
    fn values_read_as_the_load_counted_them() {
        let missing = MissingValues {
            words: vec![("T".into(), 0.0)],
            suffix_flags: "s".into(),
            dropped_suffix_flags: "s".into(),
            ..MissingValues::default()
        };
        let mut layout = RecordLayout::new(b',', vec![2, 3], &missing);
        layout.rules = vec![MeasureRule { sentinels: vec![99.0], flag: Some(4) }, MeasureRule::default()];
        assert_eq!(layout.value(b"A,2020,12.5,T,", 0), Some(12.5));
        assert_eq!(layout.value(b"A,2020,12.5,T,", 1), Some(0.0));
        assert_eq!(layout.value(b"A,2020,12.5,7s,X", 0), None, "any set flag drops");
        assert_eq!(layout.value(b"A,2020,12.5,7s,X", 1), None, "a dropped suffix flag");
        assert_eq!(layout.value(b"A,2020,99,7,", 0), None, "the measure's own sentinel");
        assert_eq!(layout.value(b"A,2020,99,99,", 1), Some(99.0), "not the other's");
        assert_eq!(layout.value(b"\"A,B\",2020,1,2,\"X\"", 0), None, "quoted fields");
        layout.drop_flags = vec!["9".into()];
        assert_eq!(layout.value(b"A,2020,12.5,7,1", 0), Some(12.5), "a flag not named");
        assert_eq!(layout.value(b"A,2020,12.5,7,9", 0), None);
        assert_eq!((layout.flag_field(0), layout.flag_field(1)), (Some(4), None));
        assert_eq!(RecordLayout::decode(&layout.encode()).ok(), Some(layout));
        let old = br#"{"delimiter":44,"columns":[2],"tokens":[""],"sentinels":[-9999.0]}"#;
        let old = RecordLayout::decode(old).expect("a layout of an earlier version");
        assert!(old.rules.is_empty() && old.missing.words.is_empty() && old.missing.suffix_flags.is_empty());
    }

    #[test]
    fn a_layout_names_what_keeps_records_of_another_from_reading_right() {
        // Proves `conflict_with` and `over`: another delimiter, column order, missing
        // markers or decimal commas after points conflict; points under decimal commas
        // do not; `over` keeps decimal commas from either side and refuses the rest.
        let missing = MissingValues::default();
        let comma = RecordLayout::new(b',', vec![2, 3], &missing);
        assert_eq!(comma.conflict_with(&comma.clone()), None);
        let semicolon = RecordLayout::new(b';', vec![2, 3], &missing);
        assert_eq!(comma.conflict_with(&semicolon).as_deref(), Some("fields joined by ';', not ','"));
        let reordered = RecordLayout::new(b',', vec![3, 2], &missing);
        assert_eq!(comma.conflict_with(&reordered).as_deref(), Some("measures in columns 4, 3 (from 1), not 3, 4"));
        let decimal_commas = RecordLayout { decimal_comma: Some(true), ..comma.clone() };
        assert!(comma.conflict_with(&decimal_commas).unwrap().contains("decimal commas"));
        assert_eq!(decimal_commas.conflict_with(&comma), None, "points read alike under decimal commas");
        let mut other_missing = missing.clone();
        other_missing.sentinels.push(9999.0);
        assert!(comma.conflict_with(&RecordLayout::new(b',', vec![2, 3], &other_missing)).is_some());
        assert_eq!(comma.over(&decimal_commas).unwrap().decimal_comma, Some(true));
        assert_eq!(decimal_commas.over(&comma).unwrap().decimal_comma, Some(true));
        let refused = comma.over(&reordered).unwrap_err().to_string();
        assert!(refused.contains("measures in columns 4, 3 (from 1), not 3, 4"), "{refused}");
    }
}
