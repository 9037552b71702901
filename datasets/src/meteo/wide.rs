//! Wide rows (one row per station or per month, one column per period) melted into
//! observations, one per period cell.
//!
//! A row is checked whole first ([`WideCells::melt`]: every cell parsed, every time
//! found; a bad cell makes the row bad and gives no observation), then its cells are
//! handed out one by one ([`WideCells::pop_into`]) straight from the row's record:
//! nothing is copied per cell but the value and its time. Each observation's raw
//! record is `station,time,value` (time as `YYYY-MM-DDTHH:MM`, value as written),
//! joined by the input's delimiter. The times (and their texts) of period columns
//! that name a full date are computed once per input.

use std::io::Read;

use csv::ByteRecord;

use super::Observation;
use super::fields;
use super::melt::{DateTexts, same_text};
use super::period::Period;
use super::reader::{is_plain, push_field};
use super::source::{Source, TimePlan};
use super::timefmt::Clock;
use crate::error::{Error, Result};

/// The observations of the current wide row, and the per-input period times.
#[derive(Debug, Default)]
pub(crate) struct WideCells {
    /// Per period column: its time and time text when its name is a full date (the
    /// same for every row); `None` until the input's first row.
    period_times: Option<Vec<Option<PeriodTime>>>,
    /// The current row's observations, in column order.
    cells: Vec<Cell>,
    next: usize,
    line: u64,
    station: String,
    /// The station as a field of the raw records (quoted if need be), then the delimiter.
    station_field: Vec<u8>,
    /// True when no field of the row needs quoting.
    plain: bool,
    dates: DateTexts,
}

/// A period column's time and its `YYYY-MM-DDTHH:MM` text.
type PeriodTime = (i64, [u8; 16]);

/// One observation of a wide row.
#[derive(Debug, Clone, Copy)]
struct Cell {
    /// The record's field holding the value.
    field: usize,
    /// The period column's number (among the period columns).
    period: usize,
    value: Option<f64>,
    time: i64,
}

impl WideCells {
    /// A new input begins (its period columns and delimiter may differ).
    pub(crate) fn new_input(&mut self) {
        self.period_times = None;
        self.station_field.clear();
        self.clear();
    }

    /// Forgets the current row's observations.
    pub(crate) fn clear(&mut self) {
        self.cells.clear();
        self.next = 0;
    }

    /// Checks `record`, a wide row of `station`, and queues its observations; none
    /// (and the error) when one of its cells is bad.
    pub(crate) fn melt<R: Read>(
        &mut self,
        source: &Source<R>,
        record: &ByteRecord,
        station: &str,
        clock: &Clock,
    ) -> Result<()> {
        self.clear();
        let melted = self.melt_cells(source, record, clock);
        if melted.is_err() {
            self.clear();
        }
        melted?;
        if !same_text(station, &self.station) || self.station_field.is_empty() {
            station.clone_into(&mut self.station);
            self.station_field.clear();
            push_field(&mut self.station_field, station.as_bytes(), source.delimiter);
            self.station_field.push(source.delimiter);
        }
        self.line = source.line(record);
        self.plain = is_plain(record, source.delimiter);
        Ok(())
    }

    fn melt_cells<R: Read>(&mut self, source: &Source<R>, record: &ByteRecord, clock: &Clock) -> Result<()> {
        let int = |index: usize| fields::parse_int(&record[index]).map_err(|r| source.field_error(record, index, r));
        let row_date = match &source.plan.time {
            TimePlan::Timestamp(index) => (Some(int(*index)?), None),
            TimePlan::Joined(columns) if columns.len() == 2 => (Some(int(columns[0])?), Some(int(columns[1])?)),
            _ => (None, None),
        };
        let periods = &source.plan.periods;
        let times = self.period_times.get_or_insert_with(|| period_times(periods, clock));
        for (period, (&(field, kind), &known)) in periods.iter().zip(times.iter()).enumerate() {
            let cell = match known {
                Some((time, _)) => Some((source.measure(record, field)?, time)),
                None => wide_cell(source, record, (field, kind), row_date, clock)?,
            };
            if let Some((value, time)) = cell {
                self.cells.push(Cell { field, period, value, time });
            }
        }
        Ok(())
    }

    /// Moves the next observation of the row `record` into `observation` and its raw
    /// record into `raw`; returns its source line, `None` when the row is done.
    #[inline(always)]
    pub(crate) fn pop_into(
        &mut self,
        record: &ByteRecord,
        observation: &mut Observation,
        raw: &mut Vec<u8>,
        delimiter: u8,
    ) -> Option<u64> {
        let cell = *self.cells.get(self.next)?;
        self.next += 1;
        if !same_text(&observation.station, &self.station) {
            self.station.clone_into(&mut observation.station);
        }
        observation.time = cell.time;
        match observation.measures.as_mut_slice() {
            [only] => *only = cell.value,
            _ => {
                observation.measures.clear();
                observation.measures.push(cell.value);
            }
        }
        // The station field stays at the start of `raw` from one cell of the row to the
        // next (the reader writes `raw` only here while the row's cells are handed out).
        if self.next == 1 {
            raw.clear();
            raw.extend_from_slice(&self.station_field);
        }
        debug_assert!(raw.starts_with(&self.station_field), "the raw record starts with the row's station");
        raw.truncate(self.station_field.len());
        match self.period_times.as_ref().and_then(|times| times[cell.period]) {
            Some((_, text)) => raw.extend_from_slice(&text),
            None => self.dates.append(cell.time, raw),
        }
        raw.push(delimiter);
        let text = record[cell.field].trim_ascii();
        if self.plain {
            raw.extend_from_slice(text);
        } else {
            push_field(raw, text, delimiter);
        }
        Some(self.line)
    }
}

/// One period cell of a wide row: its value and time (UTC); `None` for a missing cell
/// of a day the month does not have (31 April). `row_date` is the row's year and
/// month, for periods that lack them.
fn wide_cell<R: Read>(
    source: &Source<R>,
    record: &ByteRecord,
    (index, period): (usize, Period),
    row_date: (Option<i64>, Option<i64>),
    clock: &Clock,
) -> Result<Option<(Option<f64>, i64)>> {
    let value = source.measure(record, index)?;
    let year = period.year.or(row_date.0).ok_or_else(|| {
        Error::Schema("month-name and day columns need the year column (--time YEAR, or YEAR,MONTH for days)".into())
    })?;
    let month = if period.month == 0 { row_date.1 } else { Some(period.month) };
    let month = month.ok_or_else(|| Error::Schema("day columns need --time YEAR,MONTH".into()))?;
    match fields::civil_seconds(year, month, period.day, 0).and_then(|civil| clock.to_utc(civil)) {
        Ok(time) => Ok(Some((value, time))),
        Err(_) if value.is_none() && period.month == 0 => Ok(None),
        Err(reason) => Err(source.field_error(record, index, reason)),
    }
}

/// The time and its `YYYY-MM-DDTHH:MM` text of each period column that has a full
/// date (year, month and day): the same for every row, as [`wide_cell`] finds it
/// (`None` for the others, and for dates that do not exist, which `wide_cell` reports).
fn period_times(periods: &[(usize, Period)], clock: &Clock) -> Vec<Option<PeriodTime>> {
    let time = |period: &Period| {
        let year = period.year.filter(|_| period.month != 0)?;
        let time =
            fields::civil_seconds(year, period.month, period.day, 0).and_then(|civil| clock.to_utc(civil)).ok()?;
        let mut text = Vec::with_capacity(16);
        fields::format_timestamp(time, &mut text);
        Some((time, <[u8; 16]>::try_from(text.as_slice()).ok()?))
    };
    periods.iter().map(|(_, period)| time(period)).collect()
}
