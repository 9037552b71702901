//! One input of a load: opening it (peek, BOM, `sniff.rs`, preamble skipped, the text
//! layer of `transform.rs`, the `csv` crate), resolving the schema's columns against
//! its header, and decoding the fields of one row.
//!
//! Invariants: `line_offset` is the number of preamble lines, so [`Source::line`] is the
//! line in the file; every column index of the [`Plan`] is below `expected_fields`.
//! Read next: `reader.rs`, which pulls rows from a sequence of sources.

use std::collections::VecDeque;
use std::io::{Chain, Cursor, Read};

use csv::ByteRecord;

use super::fields::{self, Reason};
use super::period::Period;
use super::schema::{ColumnRef, Delimiter, Layout, MissingValues, Schema, StationSpec, TextEncoding, TimeSpec};
use super::sniff::{Joined, Sniffed, sniff, utf16_bom, utf16_text};
use super::timefmt::Clock;
use super::transform::TextInput;
use crate::error::{ColumnLabel, Error, Result};

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";
const BUFFER_BYTES: usize = 256 * 1024;
const PEEK_BYTES: usize = 64 * 1024;

/// The input as the `csv` crate reads it: the peeked start, then the rest, through the
/// text layer.
pub(crate) type Input<R> = TextInput<Chain<Cursor<Vec<u8>>, R>>;

/// Resolved column positions of a schema in one input.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// The station column, or the station of every row.
    pub(crate) station: Result<usize, String>,
    pub(crate) time: TimePlan,
    pub(crate) measures: Vec<usize>,
    /// Wide tables: the period columns.
    pub(crate) periods: Vec<(usize, Period)>,
    /// Variable-column tables: the element and value columns.
    pub(crate) variable: Option<(usize, usize)>,
    /// How each value column is read, by column index (`None`: the schema's markers).
    pub(crate) rules: Vec<Option<ValueRule>>,
    /// The schema's missing markers.
    pub(crate) missing: MissingValues,
    /// Flag values that drop a value; empty: any non-empty flag.
    pub(crate) drop_flags: Vec<String>,
}

impl Plan {
    /// A plan that resolves nothing yet, with the schema's value markers.
    fn empty(schema: &Schema) -> Self {
        Plan {
            station: Err(String::new()),
            time: TimePlan::None,
            measures: Vec::new(),
            periods: Vec::new(),
            variable: None,
            rules: Vec::new(),
            missing: schema.missing.clone(),
            drop_flags: schema.drop_flags.clone(),
        }
    }

    /// Column `column`'s rule as the record layout keeps it: its own sentinels and
    /// its quality flag column.
    pub(crate) fn measure_rule(&self, column: usize) -> super::aggregate::MeasureRule {
        let rule = self.rules.get(column).and_then(Option::as_ref);
        let own = |rule: &ValueRule| {
            rule.missing.sentinels.iter().copied().filter(|value| !self.missing.sentinels.contains(value)).collect()
        };
        super::aggregate::MeasureRule { sentinels: rule.map(own).unwrap_or_default(), flag: rule.and_then(|r| r.flag) }
    }
}

/// A value column's own missing markers and quality flag column.
#[derive(Debug, Clone)]
pub(crate) struct ValueRule {
    pub(crate) missing: MissingValues,
    pub(crate) flag: Option<usize>,
}

#[derive(Debug, Clone)]
pub(crate) enum TimePlan {
    Timestamp(usize),
    Parts([usize; 3], Option<usize>),
    Joined(Vec<usize>),
    /// Wide tables whose period names carry the whole date.
    None,
}

/// Whether a row's first field starts like a number (`2020-01-01`, `-3`).
fn starts_like_a_number(row: &ByteRecord) -> bool {
    row.get(0).is_some_and(|field| super::sniff::looks_numeric(&String::from_utf8_lossy(field)))
}

/// Most short rows after a blank line at the end read as notes rather than rows.
const FOOTER_ROWS: usize = 100;

/// One opened input.
pub(crate) struct Source<R: Read> {
    pub(crate) name: Option<String>,
    pub(crate) csv: csv::Reader<Input<R>>,
    pub(crate) plan: Plan,
    pub(crate) delimiter: u8,
    pub(crate) decimal_comma: bool,
    pub(crate) header: Option<Vec<String>>,
    pub(crate) expected_fields: usize,
    /// Rows read and not yet handed out: the first row when it is data, and rows read
    /// ahead to tell notes at the end from rows (see [`Source::next`]).
    pub(crate) pending: VecDeque<ByteRecord>,
    /// Whether blank lines came before the last row read from the input.
    blank_before: bool,
    /// Notes after the rows, not read as rows: (first line, lines).
    pub(crate) footer: Option<(u64, usize)>,
    pub(crate) offset_bytes: u64,
    pub(crate) line_offset: u64,
    pub(crate) sniffed: Sniffed,
}

impl<R: Read> Source<R> {
    /// Opens `input` (named `name` in messages and for [`StationSpec::FileName`]).
    pub(crate) fn open(name: Option<String>, input: R, schema: &Schema) -> Result<Self> {
        let (start, rest) = peek(input)?;
        if let Some(utf16) = utf16(&start, schema) {
            return Self::open_utf16(name, start, rest, schema, utf16);
        }
        let (sniffed, encoding, skip) = sniff_start(&start, schema);
        let whitespace = sniffed.delimiter == Delimiter::Whitespace;
        let mut start = Cursor::new(start);
        start.set_position(skip as u64);
        let input = TextInput::new(start.chain(rest), encoding, whitespace)
            .with_cr_lines(sniffed.cr_lines)
            .with_html_breaks(sniffed.html_breaks);
        Self::finish_open(name, input, schema, sniffed, skip)
    }

    /// [`Source::open`] of a UTF-16 input: sniffed as its UTF-8 text, whose preamble
    /// is skipped after transcoding.
    fn open_utf16(
        name: Option<String>,
        start: Vec<u8>,
        rest: R,
        schema: &Schema,
        utf16: &'static encoding_rs::Encoding,
    ) -> Result<Self> {
        let text = utf16_text(&start, utf16);
        let sniffed = sniff(text.as_bytes(), start.len() < PEEK_BYTES, schema);
        let whitespace = sniffed.delimiter == Delimiter::Whitespace;
        let skip = sniffed.preamble_bytes;
        // The preamble as the text layer gives it out (aligned columns collapsed).
        let mut preamble = Vec::new();
        let mut layer =
            TextInput::new(&text.as_bytes()[..skip], None, whitespace).with_html_breaks(sniffed.html_breaks);
        layer.read_to_end(&mut preamble)?;
        let input = TextInput::new(Cursor::new(start).chain(rest), Some(utf16), whitespace);
        let mut input = input.with_cr_lines(sniffed.cr_lines).with_html_breaks(sniffed.html_breaks);
        std::io::copy(&mut (&mut input).take(preamble.len() as u64), &mut std::io::sink())?;
        Self::finish_open(name, input, schema, sniffed, skip)
    }

    /// Opens the `csv` reader over `input` (the preamble's `skip` bytes consumed) and
    /// reads the first row.
    fn finish_open(
        name: Option<String>,
        input: Input<R>,
        schema: &Schema,
        sniffed: Sniffed,
        skip: usize,
    ) -> Result<Self> {
        let whitespace = sniffed.delimiter == Delimiter::Whitespace;
        let delimiter = match sniffed.delimiter {
            Delimiter::Byte(byte) => byte,
            Delimiter::Whitespace => b'\t',
            Delimiter::Auto => b',',
        };
        let mut csv = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .has_headers(false)
            .flexible(true)
            .quoting(!whitespace)
            .buffer_capacity(BUFFER_BYTES)
            .from_reader(input);
        let mut first = ByteRecord::new();
        if !csv.read_byte_record(&mut first).map_err(|error| csv_error(error, sniffed.preamble_lines as u64))? {
            return Err(Error::Empty("no rows, not even a header".into()));
        }
        let header = match sniffed.header_in_preamble || sniffed.names_joined != Joined::No {
            true => sniffed.rows.first().cloned(),
            false => sniffed
                .header
                .then(|| first.iter().map(|field| String::from_utf8_lossy(field).trim().to_owned()).collect()),
        };
        if header.is_some() {
            let mut units = ByteRecord::new();
            for _ in 0..sniffed.units_rows {
                csv.read_byte_record(&mut units).map_err(|error| csv_error(error, sniffed.preamble_lines as u64))?;
            }
        }
        let mut source = Source {
            name,
            csv,
            plan: Plan::empty(schema),
            delimiter,
            decimal_comma: sniffed.decimal_comma,
            pending: (!sniffed.header || sniffed.header_in_preamble).then(|| first.clone()).into_iter().collect(),
            blank_before: false,
            footer: None,
            expected_fields: first.len(),
            header,
            offset_bytes: skip as u64,
            line_offset: sniffed.preamble_lines as u64,
            sniffed,
        };
        source.plan = source.resolve(schema)?;
        Ok(source)
    }

    /// Reads the next row into `record`; false at the end. Short rows after a blank
    /// line that run to the end of the input, at most [`FOOTER_ROWS`] of them and none
    /// starting like a number, are notes (PVGIS's legend of its columns and its
    /// copyright), not rows: they end the input and are counted in [`Source::footer`].
    /// A row cut short at the end starts with its time or station, not words.
    pub(crate) fn next(&mut self, record: &mut ByteRecord) -> Result<bool> {
        if let Some(held) = self.pending.pop_front() {
            *record = held;
            return Ok(true);
        }
        if !self.read(record)? {
            return Ok(false);
        }
        let expected = self.expected_fields;
        let note = move |row: &ByteRecord| row.len() < expected && !starts_like_a_number(row);
        let words = super::sniff::is_word_line(record.iter());
        if !note(record) && !words {
            return Ok(true);
        }
        if !self.blank_before || !note(record) {
            return self.unless_end_marker(record);
        }
        let mut ahead = Vec::new();
        let mut next = ByteRecord::new();
        while ahead.len() < FOOTER_ROWS && self.read(&mut next)? {
            let more = note(&next);
            ahead.push(std::mem::take(&mut next));
            if !more {
                break;
            }
        }
        let notes = ahead.iter().all(note) && !self.read(&mut next)?;
        if notes {
            self.footer = Some((self.line(record), ahead.len() + 1));
            return Ok(false);
        }
        // Rows follow (or too many short ones): the short row is a row, reported as such.
        self.pending.extend(ahead);
        self.pending.extend((!next.is_empty()).then_some(next));
        Ok(true)
    }

    /// Hands out a row met right after the rows, unless it and the rows after it to the
    /// end of the input (at most [`FOOTER_ROWS`]) are each one field of words without
    /// digits, any other fields blank (BADC-CSV's `end data` after a MIDAS file's rows;
    /// the Hong Kong Observatory's legend `*** 沒有數據/unavailable,,,,`): those are
    /// notes, counted in [`Source::footer`]. A row cut short at the end keeps its time
    /// or station, which have digits.
    fn unless_end_marker(&mut self, record: &mut ByteRecord) -> Result<bool> {
        let words = |row: &ByteRecord| super::sniff::is_word_line(row.iter());
        if !words(record) {
            return Ok(true);
        }
        let mut ahead = Vec::new();
        let mut next = ByteRecord::new();
        while ahead.len() < FOOTER_ROWS && self.read(&mut next)? {
            let more = words(&next);
            ahead.push(std::mem::take(&mut next));
            if !more {
                break;
            }
        }
        if ahead.iter().all(words) && !self.read(&mut next)? {
            self.footer = Some((self.line(record), ahead.len() + 1));
            return Ok(false);
        }
        self.pending.extend(ahead);
        self.pending.extend((!next.is_empty()).then_some(next));
        Ok(true)
    }

    /// Reads a row from the input. The `csv` crate skips blank lines and dates a row
    /// at the end of the row before, so a row after blank lines gets its own line
    /// here: the lines read, less the row's own (its line breaks in quotes and its
    /// terminator), were blank.
    fn read(&mut self, record: &mut ByteRecord) -> Result<bool> {
        let before = self.csv.position().line();
        if !self.csv.read_byte_record(record).map_err(|error| csv_error(error, self.line_offset))? {
            return Ok(false);
        }
        let lines = self.csv.position().line() - before;
        let blank = match lines {
            0 | 1 => 0,
            _ => lines - 1 - (record.as_slice().iter().filter(|&&byte| byte == b'\n').count() as u64).min(lines - 1),
        };
        self.blank_before = blank > 0;
        if let Some(mut position) = record.position().cloned().filter(|_| blank > 0) {
            position.set_line(position.line() + blank);
            record.set_position(Some(position));
        }
        Ok(true)
    }

    /// 1-based line in the file of `record`.
    pub(crate) fn line(&self, record: &ByteRecord) -> u64 {
        record.position().map_or(0, |position| position.line()) + self.line_offset
    }

    /// Bytes of the input read so far.
    pub(crate) fn end_bytes(&self) -> u64 {
        self.offset_bytes + self.csv.position().byte()
    }

    /// Byte offset in the input of `record`'s start.
    pub(crate) fn position_bytes(&self, record: &ByteRecord) -> u64 {
        self.offset_bytes + record.position().map_or(0, |position| position.byte())
    }

    #[inline]
    pub(crate) fn check_width(&self, record: &ByteRecord) -> Result<()> {
        let width = record.len();
        if width < self.expected_fields {
            let reason = format!("short row: {width} fields, expected {}", self.expected_fields);
            let fields: Vec<&[u8]> = record.iter().collect();
            let row = fields.join(&[self.delimiter][..]);
            return Err(Error::csv(self.line(record), self.label(width), reason, &row));
        }
        if width > self.expected_fields && !self.ends_in_remark(record) {
            let reason = format!("long row: {width} fields, expected {}", self.expected_fields);
            let extra = &record[self.expected_fields];
            return Err(Error::csv(self.line(record), self.label(self.expected_fields), reason, extra));
        }
        Ok(())
    }

    /// True when `record`'s fields past the expected ones are a remark: aligned
    /// columns may end in words with no digit (the Met Office's `Provisional`).
    #[cold]
    fn ends_in_remark(&self, record: &ByteRecord) -> bool {
        let remark = |field: &[u8]| !field.iter().any(u8::is_ascii_digit);
        self.sniffed.delimiter == Delimiter::Whitespace && record.iter().skip(self.expected_fields).all(remark)
    }

    /// Sets `station` (the previous row's, when the observation is reused) to this
    /// row's station; unchanged when it is the same.
    #[inline]
    pub(crate) fn decode_station(&self, record: &ByteRecord, station: &mut String) -> Result<()> {
        match &self.plan.station {
            Err(constant) if station == constant => {}
            Err(constant) => constant.clone_into(station),
            Ok(index) => {
                let field = record[*index].trim_ascii();
                if field == station.as_bytes() && !field.is_empty() {
                    return Ok(());
                }
                station.clear();
                let text = std::str::from_utf8(field).map_err(|_| self.field_error(record, *index, "not UTF-8"))?;
                if text.is_empty() {
                    return Err(self.field_error(record, *index, "empty station"));
                }
                station.push_str(text);
            }
        }
        Ok(())
    }

    /// The row's time in seconds since the epoch (UTC), given the schema's offset or
    /// time zone for times written without one.
    #[inline]
    pub(crate) fn decode_time(&self, record: &ByteRecord, clock: &Clock) -> Result<i64> {
        let error = |index: usize| move |reason: Reason| self.field_error(record, index, reason);
        match &self.plan.time {
            TimePlan::None => Ok(0),
            TimePlan::Timestamp(index) => {
                let text = &record[*index];
                let seconds = fields::parse_timestamp_cached(text, &clock.dates).map_err(error(*index))?;
                match clock.is_utc() || fields::has_zone(text) {
                    true => Ok(seconds),
                    false => clock.to_utc(seconds).map_err(error(*index)),
                }
            }
            TimePlan::Parts([year, month, day], hour) => {
                let int = |index: usize| fields::parse_int(&record[index]).map_err(error(index));
                let hour_value = hour.map(int).transpose()?.unwrap_or(0);
                let civil = fields::civil_seconds(int(*year)?, int(*month)?, int(*day)?, hour_value)
                    .map_err(error(hour.unwrap_or(*day)))?;
                clock.to_utc(civil).map_err(error(hour.unwrap_or(*day)))
            }
            TimePlan::Joined(columns) => self.joined_time(record, columns, clock),
        }
    }

    fn joined_time(&self, record: &ByteRecord, columns: &[usize], clock: &Clock) -> Result<i64> {
        let mut text = String::new();
        for (n, &index) in columns.iter().enumerate() {
            let field =
                std::str::from_utf8(&record[index]).map_err(|_| self.field_error(record, index, "not UTF-8"))?;
            if n > 0 {
                text.push(' ');
            }
            text.push_str(field.trim());
        }
        let last = columns[columns.len() - 1];
        let error = |reason| Error::csv(self.line(record), self.label(last), reason, text.as_bytes());
        let (seconds, zoned) = match &clock.format {
            Some(format) => format.parse(&text).map(|parsed| (parsed.seconds, parsed.zoned)),
            None => fields::parse_timestamp(text.as_bytes()).map(|s| (s, fields::has_zone(text.as_bytes()))),
        }
        .map_err(error)?;
        if zoned { Ok(seconds) } else { clock.to_utc(seconds).map_err(error) }
    }

    /// The measure in column `index`: missing when a marker of its own or the
    /// schema's, or when its quality flag drops it. Inlined: without per-column rules
    /// a good field takes only `parse_measure`.
    #[inline(always)]
    pub(crate) fn measure(&self, record: &ByteRecord, index: usize) -> Result<Option<f64>> {
        if self.plan.rules.is_empty()
            && let Ok(value) = fields::parse_measure(&record[index], self.decimal_comma, &self.plan.missing)
        {
            return Ok(value);
        }
        self.measure_with_rules(record, index)
    }

    #[inline(never)]
    fn measure_with_rules(&self, record: &ByteRecord, index: usize) -> Result<Option<f64>> {
        let rule = self.plan.rules.get(index).and_then(Option::as_ref);
        if rule.and_then(|rule| rule.flag).is_some_and(|flag| fields::flag_drops(&record[flag], &self.plan.drop_flags))
        {
            return Ok(None);
        }
        let missing = rule.map_or(&self.plan.missing, |rule| &rule.missing);
        fields::parse_measure(&record[index], self.decimal_comma, missing)
            .map_err(|reason| self.field_error(record, index, reason))
    }

    pub(crate) fn field_error(&self, record: &ByteRecord, index: usize, reason: Reason) -> Error {
        let text = record.get(index).unwrap_or_default();
        Error::csv(self.line(record), self.label(index), reason, text)
    }

    pub(crate) fn label(&self, index: usize) -> ColumnLabel {
        let name = self.header.as_ref().and_then(|names| names.get(index)).cloned();
        ColumnLabel { number: index + 1, name }
    }

    /// The name of column `index`: its header name or `column N`.
    pub(crate) fn column_name(&self, index: usize) -> String {
        self.label(index).name.unwrap_or_else(|| format!("column {}", index + 1))
    }

    fn resolve(&self, schema: &Schema) -> Result<Plan> {
        let station = match &schema.station {
            StationSpec::Column(column) => Ok(self.resolve_column(column)?),
            StationSpec::Constant(name) => Err(name.clone()),
            StationSpec::FileName => Err(self.file_station()?),
            StationSpec::Preamble { line, field } => Err(self.preamble_station(*line, *field)?),
        };
        let resolve_all =
            |columns: &[ColumnRef]| columns.iter().map(|c| self.resolve_column(c)).collect::<Result<Vec<_>>>();
        let wide_with_year = matches!(&schema.layout, Layout::Wide { pattern, .. } if pattern.has_year());
        let time = match &schema.time {
            _ if wide_with_year => TimePlan::None,
            TimeSpec::Timestamp(column) => TimePlan::Timestamp(self.resolve_column(column)?),
            TimeSpec::Parts { year, month, day, hour } => TimePlan::Parts(
                [self.resolve_column(year)?, self.resolve_column(month)?, self.resolve_column(day)?],
                hour.as_ref().map(|column| self.resolve_column(column)).transpose()?,
            ),
            TimeSpec::Joined { columns, .. } if columns.is_empty() => {
                return Err(Error::Schema("--time names no column".into()));
            }
            TimeSpec::Joined { columns, .. } => TimePlan::Joined(resolve_all(columns)?),
        };
        let mut plan = Plan { station, time, rules: self.rules(schema)?, ..self.plan.clone() };
        match &schema.layout {
            Layout::Long => plan.measures = resolve_all(&schema.measures)?,
            Layout::Wide { pattern, .. } => plan.periods = self.periods(*pattern)?,
            Layout::Variable { variable, value, .. } => {
                plan.variable = Some((self.resolve_column(variable)?, self.resolve_column(value)?));
            }
        }
        Ok(plan)
    }

    /// The value rules of the schema's per-column sentinels and flags (none: empty).
    fn rules(&self, schema: &Schema) -> Result<Vec<Option<ValueRule>>> {
        if schema.column_sentinels.is_empty() && schema.flags.is_empty() {
            return Ok(Vec::new());
        }
        let mut rules: Vec<Option<ValueRule>> = vec![None; self.expected_fields];
        let default = || ValueRule { missing: schema.missing.clone(), flag: None };
        for (column, sentinels) in &schema.column_sentinels {
            let rule = rules[self.resolve_column(column)?].get_or_insert_with(default);
            rule.missing.sentinels.extend(sentinels);
        }
        for (value, flag) in &schema.flags {
            let flag = self.resolve_column(flag)?;
            rules[self.resolve_column(value)?].get_or_insert_with(default).flag = Some(flag);
        }
        Ok(rules)
    }

    fn periods(&self, pattern: super::period::PeriodPattern) -> Result<Vec<(usize, Period)>> {
        let Some(header) = &self.header else {
            return Err(Error::Schema("a wide table needs a header naming its period columns".into()));
        };
        let periods: Vec<_> =
            header.iter().enumerate().filter_map(|(index, name)| Some((index, pattern.period(name)?))).collect();
        if periods.is_empty() {
            return Err(Error::Schema(format!(
                "no column name matches the period pattern {}; the header has: {}",
                pattern.name(),
                header.join(", ")
            )));
        }
        Ok(periods)
    }

    fn file_station(&self) -> Result<String> {
        let name = self
            .name
            .as_deref()
            .ok_or_else(|| Error::Argument("the station from the file name needs a file".into()))?;
        Ok(StationSpec::file_stem(name))
    }

    /// Field `field` of preamble line `line` (both from 1), its station label dropped
    /// ([`after_station_label`]).
    fn preamble_station(&self, line: usize, field: usize) -> Result<String> {
        let preamble = &self.sniffed.preamble;
        let found = line.checked_sub(1).and_then(|l| preamble.get(l)).and_then(|f| f.get(field.checked_sub(1)?));
        found.filter(|text| !text.is_empty()).map(|text| after_station_label(text).to_owned()).ok_or_else(|| {
            let lines: Vec<String> = preamble.iter().map(|fields| fields.join(" | ")).collect();
            Error::Schema(format!(
                "the preamble has no field {field} on line {line} (lines and fields count from 1); \
                 the preamble has {} line(s): {}",
                preamble.len(),
                lines.join(" / ")
            ))
        })
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

    /// The column named `name`: exactly, then ignoring case, then ignoring a unit in
    /// parentheses or brackets after the name (`TEMP` finds `TEMP (C)`).
    fn find_name(&self, name: &str) -> Result<usize> {
        let Some(header) = &self.header else {
            return Err(Error::Schema(format!(
                "column {name:?} is named, but the first row is not a header; give column numbers (from 0) or --header"
            )));
        };
        let exact = header.iter().position(|column| column == name);
        let loose = || header.iter().position(|column| column.eq_ignore_ascii_case(name));
        let unit = || header.iter().position(|column| without_unit(column).eq_ignore_ascii_case(without_unit(name)));
        exact
            .or_else(loose)
            .or_else(unit)
            .ok_or_else(|| Error::Schema(format!("no column {name:?}; the header has: {}", header.join(", "))))
    }
}

/// `name` without a trailing unit: `TEMP (C)` → `TEMP`, `RR [mm]` → `RR`.
pub fn without_unit(name: &str) -> &str {
    let trimmed = name.trim();
    match trimmed.rfind(['(', '[']) {
        Some(at) if at > 0 && trimmed.ends_with([')', ']']) => trimmed[..at].trim_end(),
        _ => trimmed,
    }
}

/// Names of a station's column, and labels of a station in a preamble field
/// (`Station Name: X`, HOBO's `Plot Title: X`). NOAA GHCNh's `Station_ID` comes before
/// its `Station_name`; AEMET names its stations' codes `indicativo`.
pub(crate) const STATION_NAMES: [&str; 20] = [
    "station",
    "stn",
    "id",
    "station_id",
    "indicativo",
    "name",
    "origin",
    "site",
    "stations_id",
    "usaf",
    "wmo",
    "staid",
    "station name",
    "station_name",
    "location",
    "location id",
    "location_id",
    "plot title",
    "city_name",
    "city",
];

/// The station in a preamble field written `LABEL: NAME` with a station's label (Met
/// Éireann's `Station Name: DUBLIN AIRPORT`): the name; else the whole field.
fn after_station_label(field: &str) -> &str {
    let labelled = field.split_once(':').filter(|(label, name)| {
        let label = label.trim().to_ascii_lowercase();
        !name.trim().is_empty() && STATION_NAMES.contains(&label.as_str())
    });
    labelled.map_or(field, |(_, name)| name.trim())
}

/// UTF-16 of either byte order if the schema names it, or if it reads the encoding from
/// the input and `start` begins with a UTF-16 byte order mark (Excel's "Unicode text").
fn utf16(start: &[u8], schema: &Schema) -> Option<&'static encoding_rs::Encoding> {
    let utf16 = [encoding_rs::UTF_16LE, encoding_rs::UTF_16BE];
    match schema.encoding {
        TextEncoding::Named(encoding) => utf16.contains(&encoding).then_some(encoding),
        TextEncoding::Auto => utf16_bom(start),
    }
}

/// Sniffs the peeked `start`: what was found, the encoding to transcode from (`None`:
/// UTF-8), and the bytes before the first row (BOM and preamble). The sample is
/// sniffed decoded (`sniff.rs`).
fn sniff_start(start: &[u8], schema: &Schema) -> (Sniffed, Option<&'static encoding_rs::Encoding>, usize) {
    let bom = if start.starts_with(UTF8_BOM) { UTF8_BOM.len() } else { 0 };
    let sniffed = sniff(&start[bom..], start.len() < PEEK_BYTES, schema);
    let encoding = Some(sniffed.encoding).filter(|encoding| *encoding != encoding_rs::UTF_8);
    let skip = bom + sniffed.preamble_bytes;
    (sniffed, encoding, skip)
}

/// Reads up to [`PEEK_BYTES`] from the start of `input` (less only at its end).
fn peek<R: Read>(mut input: R) -> Result<(Vec<u8>, R)> {
    let mut start = Vec::with_capacity(PEEK_BYTES);
    (&mut input).take(PEEK_BYTES as u64).read_to_end(&mut start)?;
    Ok((start, input))
}

fn csv_error(error: csv::Error, line_offset: u64) -> Error {
    let line = error.position().map_or(0, |position| position.line()) + line_offset;
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
