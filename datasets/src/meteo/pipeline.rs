//! The load pipeline: reader → validation policy → [`ObservationSink`], with counts.
//!
//! [`load`] pulls rows from an [`ObservationReader`]; a malformed row either stops the
//! load (default: the sink's [`ObservationSink::abort`] is called and the error
//! returned, so a transactional sink leaves the database as before) or, with
//! `skip_bad`, is counted, kept in the summary (first [`SKIPPED_KEPT`]) and written to
//! the skip report (CSV: `line,error,raw`). Every `batch_rows` good rows the sink's
//! [`ObservationSink::end_batch`] is called (a commit point); [`ObservationSink::finish`]
//! after the last row.
//!
//! The index-building sink (queue of raw records, B+tree (station, time) → record,
//! R*-tree over complete rows) implements [`ObservationSink`]; [`NullSink`] validates
//! only. Read next: `reader.rs`.

use std::collections::HashSet;
use std::fmt;
use std::io::{Read, Write};

use super::Observation;
use super::reader::{ObservationReader, RawRow, ReadOutcome};
use crate::error::{Error, Result};

/// How many skipped rows [`LoadSummary::skipped`] keeps (the report file has them all).
pub const SKIPPED_KEPT: usize = 20;

/// Rows between two progress callbacks.
pub const PROGRESS_EVERY_ROWS: u64 = 16_384;

/// Receives the good rows of a load.
pub trait ObservationSink {
    /// One good row; `raw` is the row as one CSV line without terminator.
    fn push(&mut self, observation: &Observation, raw: &[u8]) -> Result<()>;

    /// One good row whose raw record is joined only if the sink asks for it; by
    /// default [`ObservationSink::push`] with the joined record.
    fn push_row(&mut self, observation: &Observation, raw: &mut RawRow<'_>) -> Result<()> {
        self.push(observation, raw.bytes())
    }

    /// A batch of rows is complete (with `batch_rows`): commit what was pushed so far.
    fn end_batch(&mut self) -> Result<()> {
        Ok(())
    }

    /// The load succeeded: commit everything not yet committed.
    fn finish(&mut self) -> Result<()>;

    /// The load stopped on an error: discard what was pushed since the last commit.
    fn abort(&mut self) {}
}

/// A sink that keeps nothing: a load into it only parses and validates.
#[derive(Debug, Default)]
pub struct NullSink {
    /// Rows received.
    pub rows: u64,
    /// Raw bytes received (sum of raw record lengths).
    pub raw_bytes: u64,
}

impl ObservationSink for NullSink {
    fn push(&mut self, _observation: &Observation, raw: &[u8]) -> Result<()> {
        self.rows += 1;
        self.raw_bytes += raw.len() as u64;
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}

/// How a load treats bad rows and batches.
#[derive(Default)]
pub struct LoadOptions {
    /// Skip malformed rows instead of stopping.
    pub skip_bad: bool,
    /// Call [`ObservationSink::end_batch`] every this many good rows.
    pub batch_rows: Option<u64>,
    /// Where skipped rows are listed (CSV `line,error,raw`), if anywhere.
    pub skip_report: Option<Box<dyn Write>>,
}

/// A row left out by `skip_bad`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedRow {
    /// 1-based line in the input.
    pub line: u64,
    /// The error, as shown to the user.
    pub error: String,
}

/// What a load did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadSummary {
    /// Good rows handed to the sink.
    pub rows: u64,
    /// Malformed rows skipped.
    pub skipped_rows: u64,
    /// Rows with every measure present (those go into the R-tree).
    pub complete_rows: u64,
    /// Per measure, rows where it is missing.
    pub missing: Vec<u64>,
    /// Measure names, in order (header names or `column N`).
    pub measure_names: Vec<String>,
    /// Distinct stations.
    pub stations: u64,
    /// Earliest and latest time, seconds since the epoch.
    pub time_range: Option<(i64, i64)>,
    /// Input bytes consumed.
    pub bytes: u64,
    /// Batches committed through `end_batch` (0 without batching).
    pub batches: u64,
    /// The first skipped rows.
    pub skipped: Vec<SkippedRow>,
    /// Notes after the rows of an input (a legend, a copyright), not read as rows.
    pub footers: Vec<super::reader::Footer>,
}

/// Running state of one load.
struct Tally {
    summary: LoadSummary,
    stations: HashSet<String>,
    last_station: String,
}

impl Tally {
    #[inline(always)]
    fn count(&mut self, observation: &Observation) {
        let summary = &mut self.summary;
        summary.rows += 1;
        let mut complete = true;
        for (slot, value) in summary.missing.iter_mut().zip(&observation.measures) {
            if value.is_none() {
                *slot += 1;
                complete = false;
            }
        }
        summary.complete_rows += u64::from(complete);
        let time = observation.time;
        summary.time_range = Some(summary.time_range.map_or((time, time), |(lo, hi)| (lo.min(time), hi.max(time))));
        if !super::melt::same_text(&observation.station, &self.last_station) {
            self.last_station.clone_from(&observation.station);
            if !self.stations.contains(&observation.station) {
                self.stations.insert(observation.station.clone());
            }
        }
    }
}

/// Loads every row of `reader` into `sink`; `progress(rows, bytes)` is called every
/// [`PROGRESS_EVERY_ROWS`] rows and at the end.
pub fn load<R: Read>(
    reader: &mut ObservationReader<R>,
    sink: &mut dyn ObservationSink,
    mut options: LoadOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<LoadSummary> {
    let measure_names = reader.measure_names();
    let summary = LoadSummary { missing: vec![0; measure_names.len()], measure_names, ..LoadSummary::default() };
    let mut tally = Tally { summary, stations: HashSet::new(), last_station: String::new() };
    let mut report = options.skip_report.take().map(csv::Writer::from_writer);
    match run(reader, sink, &options, &mut tally, &mut report, progress) {
        Ok(()) => {
            if let Some(writer) = report.as_mut() {
                writer.flush()?;
            }
            let mut summary = tally.summary;
            summary.stations = tally.stations.len() as u64;
            progress(summary.rows + summary.skipped_rows, summary.bytes);
            Ok(summary)
        }
        Err(error) => {
            sink.abort();
            Err(error)
        }
    }
}

fn run<R: Read>(
    reader: &mut ObservationReader<R>,
    sink: &mut dyn ObservationSink,
    options: &LoadOptions,
    tally: &mut Tally,
    report: &mut Option<csv::Writer<Box<dyn Write>>>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<()> {
    let mut observation = Observation::default();
    let mut rows_in_batch = 0u64;
    loop {
        match reader.read(&mut observation)? {
            ReadOutcome::End => break,
            ReadOutcome::Row => {
                sink.push_row(&observation, &mut reader.row())?;
                tally.count(&observation);
                rows_in_batch += 1;
                if options.batch_rows == Some(rows_in_batch) {
                    sink.end_batch()?;
                    tally.summary.batches += 1;
                    rows_in_batch = 0;
                }
            }
            ReadOutcome::Bad(error) if options.skip_bad => skip(reader, tally, report, &error)?,
            ReadOutcome::Bad(error) => return Err(error),
        }
        let seen = tally.summary.rows + tally.summary.skipped_rows;
        if seen.is_multiple_of(PROGRESS_EVERY_ROWS) {
            progress(seen, reader.position_bytes());
        }
    }
    tally.summary.bytes = reader.position_bytes();
    tally.summary.footers = reader.footers().to_vec();
    sink.finish()
}

fn skip<R: Read>(
    reader: &mut ObservationReader<R>,
    tally: &mut Tally,
    report: &mut Option<csv::Writer<Box<dyn Write>>>,
    error: &Error,
) -> Result<()> {
    let line = reader.line();
    let message = error.to_string();
    tally.summary.skipped_rows += 1;
    if tally.summary.skipped.len() < SKIPPED_KEPT {
        tally.summary.skipped.push(SkippedRow { line, error: message.clone() });
    }
    if let Some(writer) = report.as_mut() {
        let raw = reader.raw_record();
        writer
            .write_record([line.to_string().as_bytes(), message.as_bytes(), raw])
            .map_err(|error| Error::Io(std::io::Error::other(error)))?;
    }
    Ok(())
}

impl fmt::Display for LoadSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "rows loaded:   {}", self.rows)?;
        writeln!(f, "rows skipped:  {}", self.skipped_rows)?;
        writeln!(f, "complete rows: {} (every measure present)", self.complete_rows)?;
        writeln!(f, "stations:      {}", self.stations)?;
        if let Some((first, last)) = self.time_range {
            writeln!(f, "time range:    {} .. {}", timestamp(first), timestamp(last))?;
        }
        writeln!(f, "bytes read:    {}", self.bytes)?;
        writeln!(f, "missing values per measure:")?;
        for (name, missing) in self.measure_names.iter().zip(&self.missing) {
            writeln!(f, "  {name:<24} {missing}")?;
        }
        for skipped in &self.skipped {
            writeln!(f, "skipped: {}", skipped.error)?;
        }
        for footer in &self.footers {
            let file = footer.file.as_deref().map(|file| format!(" of {file}")).unwrap_or_default();
            let (line, rows) = (footer.line, footer.rows);
            writeln!(
                f,
                "notes:         {rows} short line(s) at the end{file} (from line {line}), read as notes: no rows"
            )?;
        }
        Ok(())
    }
}

fn timestamp(seconds: i64) -> String {
    let mut text = Vec::new();
    super::fields::format_timestamp(seconds, &mut text);
    String::from_utf8_lossy(&text).into_owned()
}
