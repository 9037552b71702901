//! Streaming CSV → [`Observation`] reader over any `Read`, built on the `csv` crate.
//!
//! Opening: a UTF-8 BOM is dropped; the delimiter is detected from the first line when
//! the schema says `Auto` (the most frequent of `,` `;` tab outside quotes); the first
//! row is a header or data per [`HeaderMode`]; named columns are resolved against the
//! header. Every row must have as many fields as the header (or, without header, as the
//! first row): fewer is a "short row", more a "long row". Decimal commas are accepted
//! whenever the delimiter is not `,`. CRLF and quoted fields (with delimiters, quotes,
//! newlines inside) are the `csv` crate's job.
//!
//! Per-row problems come back as [`ReadOutcome::Bad`] (the caller skips or stops);
//! only I/O failures and schema/opening problems are `Err`. Only the fields the schema
//! uses are decoded; other columns may hold anything, including non-UTF-8 bytes.

use std::cell::Cell;
use std::io::{Chain, Cursor, Read};

use csv::ByteRecord;

use super::Observation;
use super::fields::{self, DateCache, Reason};
use super::record::{FieldPacker, RecordEncoding};
use super::schema::{ColumnRef, Delimiter, HeaderMode, MissingValues, Schema, StationSpec, TimeSpec};
use crate::error::{ColumnLabel, Error, Result};

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";
const BUFFER_BYTES: usize = 256 * 1024;
const PEEK_BYTES: usize = 64 * 1024;

/// The input as the `csv` crate reads it: the peeked start, then the rest.
type Input<R> = Chain<Cursor<Vec<u8>>, R>;

/// What one call to [`ObservationReader::read`] found.
#[derive(Debug)]
pub enum ReadOutcome {
    /// A good row; the observation was filled in.
    Row,
    /// A malformed row (an [`Error::Csv`]); the observation is unspecified.
    Bad(Error),
    /// No more rows.
    End,
}

/// Resolved column positions of a schema.
#[derive(Debug, Clone)]
struct Plan {
    station: Result<usize, String>,
    time: TimePlan,
    measures: Vec<usize>,
}

#[derive(Debug, Clone)]
enum TimePlan {
    Timestamp(usize),
    Parts([usize; 3], Option<usize>),
}

/// Reads observations one by one, reusing its buffers.
pub struct ObservationReader<R: Read> {
    csv: csv::Reader<Input<R>>,
    plan: Plan,
    missing: MissingValues,
    delimiter: u8,
    decimal_comma: bool,
    header: Option<Vec<String>>,
    expected_fields: usize,
    pending: Option<ByteRecord>,
    record: ByteRecord,
    raw: Vec<u8>,
    packer: FieldPacker,
    offset_bytes: u64,
    date_cache: Cell<DateCache>,
}

impl<R: Read> ObservationReader<R> {
    /// Opens `input` with `schema`: reads the first row, decides on the header and
    /// resolves the columns. Errors: empty input, columns that do not exist.
    pub fn new(input: R, schema: &Schema) -> Result<Self> {
        schema.validate()?;
        let (start, rest) = peek(input)?;
        let offset_bytes = if start.starts_with(UTF8_BOM) { UTF8_BOM.len() } else { 0 };
        let delimiter = match schema.delimiter {
            Delimiter::Byte(byte) => byte,
            Delimiter::Auto => detect_delimiter(&start[offset_bytes..]),
        };
        let mut start = Cursor::new(start);
        start.set_position(offset_bytes as u64);
        let mut csv = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .has_headers(false)
            .flexible(true)
            .buffer_capacity(BUFFER_BYTES)
            .from_reader(start.chain(rest));
        let mut first = ByteRecord::new();
        if !csv.read_byte_record(&mut first).map_err(csv_error)? {
            return Err(Error::Empty("no rows, not even a header".into()));
        }
        let is_header = match schema.header {
            HeaderMode::Present => true,
            HeaderMode::Absent => false,
            HeaderMode::Auto => !first.iter().any(looks_numeric),
        };
        let header = is_header.then(|| first.iter().map(|f| String::from_utf8_lossy(f).trim().to_owned()).collect());
        let mut reader = ObservationReader {
            csv,
            plan: Plan { station: Err(String::new()), time: TimePlan::Timestamp(0), measures: Vec::new() },
            missing: schema.missing.clone(),
            delimiter,
            decimal_comma: delimiter != b',',
            header,
            expected_fields: first.len(),
            pending: (!is_header).then_some(first),
            record: ByteRecord::new(),
            raw: Vec::new(),
            packer: FieldPacker::new(delimiter),
            offset_bytes: offset_bytes as u64,
            date_cache: Cell::new(DateCache::default()),
        };
        reader.plan = reader.resolve(schema)?;
        Ok(reader)
    }

    /// The header's column names, if the file has a header.
    pub fn header(&self) -> Option<&[String]> {
        self.header.as_deref()
    }

    /// The delimiter in use (detected or given).
    pub fn delimiter(&self) -> u8 {
        self.delimiter
    }

    /// Names of the measures, from the header or as `column N`.
    pub fn measure_names(&self) -> Vec<String> {
        let name = |index: usize| self.label(index).name.unwrap_or_else(|| format!("column {}", index + 1));
        self.plan.measures.iter().map(|&index| name(index)).collect()
    }

    /// Byte offset of the current row's start in the input (for progress display).
    pub fn position_bytes(&self) -> u64 {
        self.offset_bytes + self.record.position().map_or(0, |position| position.byte())
    }

    /// 1-based line of the current row.
    pub fn line(&self) -> u64 {
        self.record.position().map_or(0, |position| position.line())
    }

    /// Reads the next row into `observation`.
    pub fn read(&mut self, observation: &mut Observation) -> Result<ReadOutcome> {
        if let Some(first) = self.pending.take() {
            self.record = first;
        } else if !self.csv.read_byte_record(&mut self.record).map_err(csv_error)? {
            return Ok(ReadOutcome::End);
        }
        Ok(match self.decode(observation) {
            Ok(()) => ReadOutcome::Row,
            Err(error) => ReadOutcome::Bad(error),
        })
    }

    /// The current row re-joined with the delimiter (fields quoted when they hold the
    /// delimiter, a quote or a line break), without line terminator.
    pub fn raw_record(&mut self) -> &[u8] {
        join(&self.record, self.delimiter, &mut self.raw);
        &self.raw
    }

    /// The current row's raw record, joined only when asked for ([`RawRow`]).
    pub fn row(&mut self) -> RawRow<'_> {
        RawRow { record: &self.record, packer: &self.packer, joined: &mut self.raw, ready: false }
    }

    fn decode(&self, observation: &mut Observation) -> Result<()> {
        self.check_width()?;
        self.decode_station(&mut observation.station)?;
        observation.time = self.decode_time()?;
        observation.measures.clear();
        for &index in &self.plan.measures {
            let field = &self.record[index];
            let value = fields::parse_measure(field, self.decimal_comma, &self.missing)
                .map_err(|reason| self.field_error(index, reason))?;
            observation.measures.push(value);
        }
        Ok(())
    }

    fn check_width(&self) -> Result<()> {
        let width = self.record.len();
        if width < self.expected_fields {
            let reason = format!("short row: {width} fields, expected {}", self.expected_fields);
            return Err(Error::csv(self.line(), self.label(width), reason, self.record.as_slice()));
        }
        if width > self.expected_fields {
            let reason = format!("long row: {width} fields, expected {}", self.expected_fields);
            let extra = &self.record[self.expected_fields];
            return Err(Error::csv(self.line(), self.label(self.expected_fields), reason, extra));
        }
        Ok(())
    }

    /// Sets `station` (the previous row's, when the observation is reused) to this
    /// row's station; unchanged when it is the same.
    fn decode_station(&self, station: &mut String) -> Result<()> {
        match &self.plan.station {
            Err(constant) if station == constant => {}
            Err(constant) => constant.clone_into(station),
            Ok(index) => {
                let field = self.record[*index].trim_ascii();
                if field == station.as_bytes() && !field.is_empty() {
                    return Ok(());
                }
                station.clear();
                let text = std::str::from_utf8(field).map_err(|_| self.field_error(*index, "not UTF-8"))?;
                if text.is_empty() {
                    return Err(self.field_error(*index, "empty station"));
                }
                station.push_str(text);
            }
        }
        Ok(())
    }

    fn decode_time(&self) -> Result<i64> {
        match self.plan.time {
            TimePlan::Timestamp(index) => fields::parse_timestamp_cached(&self.record[index], &self.date_cache)
                .map_err(|reason| self.field_error(index, reason)),
            TimePlan::Parts([year, month, day], hour) => {
                let int = |index: usize| fields::parse_int(&self.record[index]).map_err(|r| self.field_error(index, r));
                let hour_value = hour.map(int).transpose()?.unwrap_or(0);
                fields::civil_seconds(int(year)?, int(month)?, int(day)?, hour_value)
                    .map_err(|reason| self.field_error(hour.unwrap_or(day), reason))
            }
        }
    }

    fn field_error(&self, index: usize, reason: Reason) -> Error {
        let text = self.record.get(index).unwrap_or_default();
        Error::csv(self.line(), self.label(index), reason, text)
    }

    fn label(&self, index: usize) -> ColumnLabel {
        let name = self.header.as_ref().and_then(|names| names.get(index)).cloned();
        ColumnLabel { number: index + 1, name }
    }

    fn resolve(&self, schema: &Schema) -> Result<Plan> {
        let station = match &schema.station {
            StationSpec::Column(column) => Ok(self.resolve_column(column)?),
            StationSpec::Constant(name) => Err(name.clone()),
        };
        let time = match &schema.time {
            TimeSpec::Timestamp(column) => TimePlan::Timestamp(self.resolve_column(column)?),
            TimeSpec::Parts { year, month, day, hour } => TimePlan::Parts(
                [self.resolve_column(year)?, self.resolve_column(month)?, self.resolve_column(day)?],
                hour.as_ref().map(|column| self.resolve_column(column)).transpose()?,
            ),
        };
        let measures = schema.measures.iter().map(|column| self.resolve_column(column)).collect::<Result<_>>()?;
        Ok(Plan { station, time, measures })
    }

    fn resolve_column(&self, column: &ColumnRef) -> Result<usize> {
        let index = match column {
            ColumnRef::Index(index) => *index,
            ColumnRef::Name(name) => self.find_name(name)?,
        };
        if index >= self.expected_fields {
            return Err(Error::Schema(format!(
                "column index {index} is past the end: rows have {} fields (columns count from 0)",
                self.expected_fields
            )));
        }
        Ok(index)
    }

    fn find_name(&self, name: &str) -> Result<usize> {
        let Some(header) = &self.header else {
            return Err(Error::Schema(format!(
                "column {name:?} is named, but the first row is not a header; give column numbers (from 0)"
            )));
        };
        let exact = header.iter().position(|column| column == name);
        let loose = || header.iter().position(|column| column.eq_ignore_ascii_case(name));
        exact
            .or_else(loose)
            .ok_or_else(|| Error::Schema(format!("no column {name:?}; the header has: {}", header.join(", "))))
    }
}

/// A row's raw record ([`ObservationReader::raw_record`]) that is joined only if
/// asked for: [`RawRow::encode`] packs the fields straight into a record.
pub struct RawRow<'a> {
    record: &'a ByteRecord,
    packer: &'a FieldPacker,
    joined: &'a mut Vec<u8>,
    ready: bool,
}

impl RawRow<'_> {
    /// The raw record (joined on the first call).
    pub fn bytes(&mut self) -> &[u8] {
        if !self.ready {
            join(self.record, self.packer.delimiter(), self.joined);
            self.ready = true;
        }
        self.joined
    }

    /// Appends the raw record stored with `encoding` to `out`: the bytes of
    /// `encoding.encode(self.bytes(), out)`, packed from the fields when it can.
    pub fn encode(&mut self, encoding: RecordEncoding, out: &mut Vec<u8>) {
        if encoding == RecordEncoding::Nibble && self.packer.pack(self.record, out) {
            return;
        }
        encoding.encode(self.bytes(), out);
    }
}

/// Replaces `out` with `record`'s fields joined by `delimiter`, quoted where needed.
fn join(record: &ByteRecord, delimiter: u8, out: &mut Vec<u8>) {
    out.clear();
    // One branch-free pass over all field bytes: `\n`, `\r` and `"` are <= `"`.
    let plain = !record.as_slice().iter().fold(false, |any, &b| any | (b <= b'"') | (b == delimiter));
    for (index, field) in record.iter().enumerate() {
        if index > 0 {
            out.push(delimiter);
        }
        if plain {
            out.extend_from_slice(field);
        } else {
            push_field(out, field, delimiter);
        }
    }
}

/// Reads up to [`PEEK_BYTES`] from the start of `input` (less only at its end).
fn peek<R: Read>(mut input: R) -> Result<(Vec<u8>, R)> {
    let mut start = Vec::with_capacity(PEEK_BYTES);
    (&mut input).take(PEEK_BYTES as u64).read_to_end(&mut start)?;
    Ok((start, input))
}

/// The most frequent of `,` `;` tab outside quotes in the first line; `,` on ties.
fn detect_delimiter(start: &[u8]) -> u8 {
    let mut counts = [0usize; 3];
    let mut quoted = false;
    for &byte in start {
        match byte {
            b'"' => quoted = !quoted,
            b'\n' if !quoted => break,
            b',' if !quoted => counts[0] += 1,
            b';' if !quoted => counts[1] += 1,
            b'\t' if !quoted => counts[2] += 1,
            _ => {}
        }
    }
    let candidates = [b',', b';', b'\t'];
    let best = (0..3).max_by_key(|&i| (counts[i], std::cmp::Reverse(i))).unwrap_or(0);
    candidates[best]
}

fn looks_numeric(field: &[u8]) -> bool {
    let text = field.trim_ascii();
    let unsigned = text.strip_prefix(b"-").unwrap_or(text);
    unsigned.first().is_some_and(u8::is_ascii_digit)
}

fn push_field(out: &mut Vec<u8>, field: &[u8], delimiter: u8) {
    let needs_quotes = field.iter().any(|&b| b == delimiter || b == b'"' || b == b'\n' || b == b'\r');
    if !needs_quotes {
        out.extend_from_slice(field);
        return;
    }
    out.push(b'"');
    for &byte in field {
        if byte == b'"' {
            out.push(b'"');
        }
        out.push(byte);
    }
    out.push(b'"');
}

fn csv_error(error: csv::Error) -> Error {
    let line = error.position().map_or(0, |position| position.line());
    match error.into_kind() {
        csv::ErrorKind::Io(io) => Error::Io(io),
        other => Error::Csv {
            line,
            column: ColumnLabel { number: 0, name: None },
            reason: format!("malformed CSV: {other:?}"),
            text: String::new(),
        },
    }
}
