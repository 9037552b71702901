//! Streaming CSV → [`Observation`] reader over one or more inputs, built on the `csv`
//! crate.
//!
//! Each input is opened by `source.rs`: a UTF-8 BOM is dropped, the layout detected on
//! its first bytes (`sniff.rs`: delimiter, preamble, header), Latin-1 or another legacy
//! encoding transcoded and whitespace-aligned columns split (`transform.rs`), named
//! columns resolved against the header. Every row must have as many fields as the
//! header (or, without header, as the first row): fewer is a "short row", more a "long
//! row". Decimal commas are accepted whenever the delimiter is not `,`. CRLF and quoted
//! fields are the `csv` crate's job.
//!
//! Long rows are one observation each; wide rows are melted by `wide.rs` and
//! variable-column rows pivoted by `melt.rs`, whose observations carry a raw record of
//! their own. Several inputs
//! ([`ObservationReader::from_files`]) are read one after the other; their errors then
//! name the file ([`Error::InFile`]).
//!
//! Per-row problems come back as [`ReadOutcome::Bad`] (the caller skips or stops);
//! only I/O failures and schema/opening problems are `Err`. Only the fields the schema
//! uses are decoded; other columns may hold anything, including non-UTF-8 bytes.

use std::collections::VecDeque;
use std::io::Read;

use csv::ByteRecord;

use super::aggregate::RecordLayout;
use super::melt::{MadeQueue, Pivot, PivotRow};
use super::record::{FieldPacker, RecordEncoding};
use super::schema::{Layout, MissingValues, Schema};
use super::sniff::Sniffed;
use super::source::{Source, without_unit};
use super::timefmt::{Clock, TimeFormat};
use super::wide::WideCells;
use super::{IndexMeasures, Observation};
use crate::error::{Error, Result};

/// The `--index-measures` value that builds no R*-tree.
pub const NO_INDEX: &str = "none";

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

/// Reads observations one by one, reusing its buffers.
pub struct ObservationReader<R: Read> {
    source: Source<R>,
    inputs: VecDeque<(String, R)>,
    named_errors: bool,
    schema: Schema,
    clock: Clock,
    record: ByteRecord,
    made: MadeQueue,
    /// The source line of the current made observation (its raw record is in `raw`).
    made_line: u64,
    /// The observations of the current wide row.
    wide: WideCells,
    /// True when the current row is a made observation (`out`), not `record`.
    made_current: bool,
    pivot: Option<Pivot>,
    measure_names: Vec<String>,
    raw: Vec<u8>,
    index_measures: Option<IndexMeasures>,
    packer: FieldPacker,
    bytes_before: u64,
    footers: Vec<Footer>,
    /// The record layout of the first input, once a second is opened: every input's
    /// records must read right under it ([`RecordLayout::conflict_with`]).
    first_layout: Option<(Option<String>, RecordLayout)>,
}

/// Notes after an input's rows, read as no rows (see `Source::next`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Footer {
    /// The input's name, when it has one.
    pub file: Option<String>,
    /// The first note's line.
    pub line: u64,
    /// How many notes (rows of the `csv` crate: blank lines not counted).
    pub rows: usize,
}

impl<R: Read> ObservationReader<R> {
    /// Opens `input` with `schema`: reads the first row, decides on the header and
    /// resolves the columns. Errors: empty input, columns that do not exist.
    pub fn new(input: R, schema: &Schema) -> Result<Self> {
        Self::open(None, input, VecDeque::new(), schema)
    }

    /// Opens several named inputs, read one after the other as one load; the names
    /// appear in errors and give the station of [`super::StationSpec::FileName`].
    pub fn from_files(inputs: Vec<(String, R)>, schema: &Schema) -> Result<Self> {
        let mut inputs: VecDeque<_> = inputs.into();
        let (name, first) = inputs.pop_front().ok_or_else(|| Error::Argument("no input file".into()))?;
        let named = !inputs.is_empty();
        let mut reader = Self::open(Some(name), first, inputs, schema)?;
        reader.named_errors = named;
        Ok(reader)
    }

    fn open(name: Option<String>, input: R, inputs: VecDeque<(String, R)>, schema: &Schema) -> Result<Self> {
        schema.validate()?;
        let source = open_source(name, input, schema, !inputs.is_empty())?;
        let measure_names = match &schema.layout {
            Layout::Long => source.plan.measures.iter().map(|&index| source.column_name(index)).collect(),
            Layout::Wide { measure, .. } => vec![measure.clone()],
            Layout::Variable { elements, .. } => elements.clone(),
        };
        let pivot = match &schema.layout {
            Layout::Variable { elements, .. } => Some(Pivot::new(elements.clone())),
            _ => None,
        };
        let format = match &schema.time {
            super::TimeSpec::Joined { format: Some(format), .. } => Some(TimeFormat::new(format)?),
            _ => None,
        };
        let clock =
            Clock { format, utc_offset_seconds: schema.utc_offset_seconds, zone: schema.time_zone, ..Clock::default() };
        Ok(ObservationReader {
            packer: FieldPacker::new(source.delimiter),
            source,
            inputs,
            named_errors: false,
            schema: schema.clone(),
            clock,
            record: ByteRecord::new(),
            made: MadeQueue::default(),
            made_line: 0,
            wide: WideCells::default(),
            made_current: false,
            pivot,
            measure_names,
            raw: Vec::new(),
            index_measures: None,
            bytes_before: 0,
            footers: Vec::new(),
            first_layout: None,
        })
    }

    /// The header's column names, if the (current) input has a header.
    pub fn header(&self) -> Option<&[String]> {
        self.source.header.as_deref()
    }

    /// The delimiter in use (detected or given; a tab for whitespace-aligned columns).
    pub fn delimiter(&self) -> u8 {
        self.source.delimiter
    }

    /// What was detected at the start of the (current) input.
    pub fn sniffed(&self) -> &Sniffed {
        &self.source.sniffed
    }

    /// Names of the measures: from the header (or `column N`), the wide table's
    /// measure, or the variable-column table's elements.
    pub fn measure_names(&self) -> Vec<String> {
        self.measure_names.clone()
    }

    /// Makes the measures named `names` (or numbered from 0 among the measures) the
    /// R*-tree's dimensions, in that order; 1 to [`super::MAX_DIMENSIONS`] of them. The
    /// one name `none` builds no R*-tree ([`IndexMeasures::none`]; a measure called
    /// "none" is then chosen by its number).
    pub fn set_index_measures(&mut self, names: &[String]) -> Result<()> {
        if let [only] = names
            && only.trim().eq_ignore_ascii_case(NO_INDEX)
        {
            self.index_measures = Some(IndexMeasures::none());
            return Ok(());
        }
        let names_list = self.measure_names.join(", ");
        let find = |name: &String| {
            let named = |m: &String| m.eq_ignore_ascii_case(name) || without_unit(m).eq_ignore_ascii_case(name);
            let by_name = self.measure_names.iter().position(named);
            let by_number = || name.parse::<usize>().ok().filter(|&i| i < self.measure_names.len());
            by_name.or_else(by_number).ok_or_else(|| {
                Error::Argument(format!("--index-measures: no measure {name:?}; the measures are: {names_list}"))
            })
        };
        let names: Vec<&String> = names.iter().filter(|name| !name.trim().is_empty()).collect();
        if !(1..=super::MAX_DIMENSIONS).contains(&names.len()) {
            return Err(Error::Argument(format!(
                "--index-measures takes 1 to {} measures (the R*-tree's dimensions), got {}; or {NO_INDEX} for no R*-tree",
                super::MAX_DIMENSIONS,
                names.len()
            )));
        }
        let chosen: Vec<usize> = names.into_iter().map(find).collect::<Result<_>>()?;
        let chosen = IndexMeasures::new(&chosen)?;
        self.index_measures = Some(chosen);
        Ok(())
    }

    /// Where the measures are in the raw records this reader hands out (for `agg`):
    /// the measure columns of long rows, or fields 2… of made observations.
    pub fn record_layout(&self) -> RecordLayout {
        let mut layout = match self.schema.layout {
            Layout::Long => {
                let plan = &self.source.plan;
                let mut layout = RecordLayout::new(self.source.delimiter, plan.measures.clone(), &self.schema.missing);
                if !plan.rules.is_empty() {
                    layout.rules = plan.measures.iter().map(|&column| plan.measure_rule(column)).collect();
                    layout.drop_flags.clone_from(&plan.drop_flags);
                }
                layout
            }
            _ => RecordLayout::new(
                self.source.delimiter,
                (2..2 + self.measure_names.len()).collect(),
                &MissingValues::default(),
            ),
        };
        layout.index_measures = self.index_measures.map(|chosen| chosen.iter().collect());
        layout.decimal_comma = Some(self.source.decimal_comma);
        layout
    }

    /// The notes found after the rows of the inputs read so far.
    pub fn footers(&self) -> &[Footer] {
        &self.footers
    }

    /// Byte offset of the current row's start in the inputs (for progress display).
    pub fn position_bytes(&self) -> u64 {
        self.bytes_before + self.source.position_bytes(&self.record)
    }

    /// 1-based line of the current row in its input.
    pub fn line(&self) -> u64 {
        match self.made_current {
            true => self.made_line,
            false => self.source.line(&self.record),
        }
    }

    /// Reads the next row into `observation`.
    pub fn read(&mut self, observation: &mut Observation) -> Result<ReadOutcome> {
        loop {
            observation.index_measures = self.index_measures;
            let delimiter = self.source.delimiter;
            let made = match self.schema.layout {
                Layout::Wide { .. } => self.wide.pop_into(&self.record, observation, &mut self.raw, delimiter),
                _ => self.made.pop_into(observation, &mut self.raw, delimiter),
            };
            if let Some(line) = made {
                (self.made_current, self.made_line) = (true, line);
                return Ok(ReadOutcome::Row);
            }
            self.made_current = false;
            if !self.next_record()? {
                return Ok(ReadOutcome::End);
            }
            let decoded = match self.schema.layout {
                Layout::Long => self.decode(observation).map(|()| true),
                Layout::Wide { .. } => self.melt_wide(observation).map(|()| false),
                Layout::Variable { .. } => self.pivot_row(observation).map(|()| false),
            };
            match decoded {
                Ok(true) => return Ok(ReadOutcome::Row),
                Ok(false) => {}
                Err(error) => return Ok(ReadOutcome::Bad(self.in_file(error))),
            }
        }
    }

    /// The current row re-joined with the delimiter (fields quoted when they hold the
    /// delimiter, a quote or a line break), without line terminator.
    pub fn raw_record(&mut self) -> &[u8] {
        if !self.made_current {
            join(&self.record, self.source.delimiter, &mut self.raw);
        }
        &self.raw
    }

    /// The current row's raw record, joined only when asked for ([`RawRow`]).
    pub fn row(&mut self) -> RawRow<'_> {
        // A made observation's record is joined already (by `MadeQueue::pop_into`).
        let ready = self.made_current;
        RawRow { record: &self.record, packer: &self.packer, joined: &mut self.raw, ready }
    }

    /// Reads the next input row into `record`, going on to the next input at the end
    /// of one (the pivot hands out its last station first); false after the last.
    fn next_record(&mut self) -> Result<bool> {
        loop {
            if self.source.next(&mut self.record).map_err(|error| self.in_file(error))? {
                return Ok(true);
            }
            if let Some((line, rows)) = self.source.footer.take() {
                self.footers.push(Footer { file: self.source.name.clone(), line, rows });
            }
            if let Some(pivot) = self.pivot.as_mut() {
                pivot.flush(&mut self.made);
                if !self.made.is_empty() {
                    self.record.clear();
                    return Ok(true);
                }
            }
            let Some((name, input)) = self.inputs.pop_front() else { return Ok(false) };
            self.bytes_before += self.source.end_bytes();
            if self.first_layout.is_none() {
                self.first_layout = Some((self.source.name.clone(), self.record_layout()));
            }
            self.source = open_source(Some(name), input, &self.schema, true)?;
            self.check_layout()?;
            self.wide.new_input();
            self.packer = FieldPacker::new(self.source.delimiter);
        }
    }

    fn decode(&self, observation: &mut Observation) -> Result<()> {
        let source = &self.source;
        let record = &self.record;
        source.check_width(record)?;
        source.decode_station(record, &mut observation.station)?;
        observation.time = source.decode_time(record, &self.clock)?;
        observation.measures.clear();
        for &index in &source.plan.measures {
            observation.measures.push(source.measure(record, index)?);
        }
        Ok(())
    }

    /// One wide row: an observation per period column (none when a cell is bad).
    fn melt_wide(&mut self, scratch: &mut Observation) -> Result<()> {
        self.wide.clear();
        if self.record.is_empty() {
            return Ok(());
        }
        self.source.check_width(&self.record)?;
        self.source.decode_station(&self.record, &mut scratch.station)?;
        self.wide.melt(&self.source, &self.record, &scratch.station, &self.clock)
    }

    /// One variable-column row: its value goes to the pivot when its element is kept.
    fn pivot_row(&mut self, scratch: &mut Observation) -> Result<()> {
        let (source, record) = (&self.source, &self.record);
        let (Some(pivot), Some((variable, value_index))) = (self.pivot.as_mut(), source.plan.variable) else {
            return Ok(());
        };
        if record.is_empty() {
            return Ok(());
        }
        source.check_width(record)?;
        let element = String::from_utf8_lossy(record[variable].trim_ascii());
        let Some(slot) = pivot.slot(&element) else { return Ok(()) };
        source.decode_station(record, &mut scratch.station)?;
        let time = source.decode_time(record, &self.clock)?;
        let value = source.measure(record, value_index)?;
        let text = record[value_index].trim_ascii();
        let row = PivotRow { station: &scratch.station, time, slot, value, text, line: source.line(record) };
        pivot.add(row, &mut self.made)
    }

    /// An error if the records of the input just opened would not read right under the
    /// first input's layout, which `agg`, `range` and Python read every record of the
    /// load by (its columns in another order, another delimiter, decimal commas after
    /// points).
    fn check_layout(&self) -> Result<()> {
        let Some((first, layout)) = &self.first_layout else { return Ok(()) };
        let Some(conflict) = layout.conflict_with(&self.record_layout()) else { return Ok(()) };
        let first = first.as_deref().unwrap_or("the first input");
        Err(self.in_file(Error::Schema(format!(
            "its records have {conflict} as those of {first}: agg, range and Python read every \
             record of a database by one layout, so load it into another database (or, for \
             decimal commas, name it first)"
        ))))
    }

    /// `error` naming the current file, when several are read.
    fn in_file(&self, error: Error) -> Error {
        match (&self.source.name, self.named_errors) {
            (Some(file), true) => Error::InFile { file: file.clone(), source: Box::new(error) },
            _ => error,
        }
    }
}

/// Opens one input; with `named`, an opening error names the file.
fn open_source<R: Read>(name: Option<String>, input: R, schema: &Schema, named: bool) -> Result<Source<R>> {
    let file = name.clone();
    Source::open(name, input, schema).map_err(|error| match file {
        Some(file) if named => Error::InFile { file, source: Box::new(error) },
        _ => error,
    })
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
        if !self.ready && encoding == RecordEncoding::Nibble && self.packer.pack(self.record, out) {
            return;
        }
        encoding.encode(self.bytes(), out);
    }
}

/// True when no field of `record` needs quoting when joined by `delimiter`: one
/// branch-free pass over all field bytes (`\n`, `\r` and `"` are <= `"`; so are
/// spaces, which only cost a look per field later).
pub(crate) fn is_plain(record: &ByteRecord, delimiter: u8) -> bool {
    !record.as_slice().iter().fold(false, |any, &b| any | (b <= b'"') | (b == delimiter))
}

/// Replaces `out` with `record`'s fields joined by `delimiter`, quoted where needed.
fn join(record: &ByteRecord, delimiter: u8, out: &mut Vec<u8>) {
    out.clear();
    let plain = is_plain(record, delimiter);
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

/// Appends `field` to `out`, quoted (quotes doubled) if it holds `delimiter`, a quote
/// or a line break.
pub(crate) fn push_field(out: &mut Vec<u8>, field: &[u8], delimiter: u8) {
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
