//! Rows that are not one observation each: wide tables (one row, many periods) are
//! *melted* into one observation per period cell, and variable-column tables (one row
//! per station, time and element, as GHCN-Daily's CSV) are *pivoted* into one
//! observation per (station, time) holding the chosen elements.
//!
//! Each produced observation gets a raw record of its own, `station,time,values…`
//! (time as `YYYY-MM-DDTHH:MM`, values as numbers with `.`, missing ones empty), joined
//! by the input's delimiter: that is what the queue stores for it.
//!
//! The pivot gathers the rows of one station (in any time order) and hands them out,
//! in time order, when the station changes or the input ends; at most
//! [`PIVOT_TIMES_LIMIT`] distinct times are held (a station's century of days is 37 k).

use std::collections::{BTreeMap, VecDeque};

use csv::ByteRecord;

use super::Observation;
use super::fields;
use crate::error::{Error, Result};

/// Most distinct times of one station the pivot holds (an error beyond).
pub const PIVOT_TIMES_LIMIT: usize = 4 << 20;

/// An observation produced by a melt or pivot, with its raw record.
#[derive(Debug, Clone)]
pub(crate) struct Made {
    pub(crate) observation: Observation,
    pub(crate) raw: ByteRecord,
}

/// Builds the raw record of a made observation; `line` is its source line. (The
/// delimiter joins the fields later, in `reader.rs`.)
pub(crate) fn made(observation: Observation, line: u64) -> Made {
    let mut raw = ByteRecord::new();
    raw.push_field(observation.station.as_bytes());
    let mut time = Vec::new();
    fields::format_timestamp(observation.time, &mut time);
    raw.push_field(&time);
    for value in &observation.measures {
        raw.push_field(value.map(|number| number.to_string()).unwrap_or_default().as_bytes());
    }
    let mut position = csv::Position::new();
    position.set_line(line);
    raw.set_position(Some(position));
    Made { observation, raw }
}

/// The pivot of a variable-column table.
#[derive(Debug)]
pub(crate) struct Pivot {
    elements: Vec<String>,
    station: String,
    times: BTreeMap<i64, (Vec<Option<f64>>, u64)>,
}

impl Pivot {
    /// A pivot keeping `elements`, in that order.
    pub(crate) fn new(elements: Vec<String>) -> Self {
        Pivot { elements, station: String::new(), times: BTreeMap::new() }
    }

    /// The measure slot of `element`, if it is kept (exact, then ignoring case).
    pub(crate) fn slot(&self, element: &str) -> Option<usize> {
        let exact = self.elements.iter().position(|kept| kept == element);
        exact.or_else(|| self.elements.iter().position(|kept| kept.eq_ignore_ascii_case(element)))
    }

    /// Adds one value; when the station changed, the previous station's observations
    /// go to `out` first.
    pub(crate) fn add(&mut self, row: PivotRow<'_>, out: &mut VecDeque<Made>) -> Result<()> {
        if row.station != self.station {
            self.flush(out);
            row.station.clone_into(&mut self.station);
        }
        if self.times.len() >= PIVOT_TIMES_LIMIT && !self.times.contains_key(&row.time) {
            return Err(Error::Argument(format!(
                "station {:?} has more than {PIVOT_TIMES_LIMIT} distinct times; split the input by station",
                self.station
            )));
        }
        let width = self.elements.len();
        let (values, _) = self.times.entry(row.time).or_insert_with(|| (vec![None; width], row.line));
        values[row.slot] = row.value;
        Ok(())
    }

    /// Hands out every gathered observation, in time order.
    pub(crate) fn flush(&mut self, out: &mut VecDeque<Made>) {
        for (time, (measures, line)) in std::mem::take(&mut self.times) {
            let observation = Observation { station: self.station.clone(), time, measures };
            out.push_back(made(observation, line));
        }
    }
}

/// One row of a variable-column table, decoded.
pub(crate) struct PivotRow<'a> {
    pub(crate) station: &'a str,
    pub(crate) time: i64,
    pub(crate) slot: usize,
    pub(crate) value: Option<f64>,
    pub(crate) line: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of two stations in mixed time order come out per station, in time order,
    /// one observation per time with every kept element in its slot.
    #[test]
    fn pivot_gathers_per_station_and_time() {
        let mut pivot = Pivot::new(vec!["TMAX".into(), "PRCP".into()]);
        let mut out = VecDeque::new();
        let rows = [("A", 2, "PRCP", 3.0), ("A", 1, "TMAX", 10.0), ("A", 2, "TMAX", 12.0), ("B", 1, "prcp", 0.5)];
        for (line, (station, time, element, value)) in rows.into_iter().enumerate() {
            let slot = pivot.slot(element).expect("kept element");
            let row = PivotRow { station, time, slot, value: Some(value), line: line as u64 + 2 };
            pivot.add(row, &mut out).unwrap();
        }
        pivot.flush(&mut out);
        let seen: Vec<_> = out
            .iter()
            .map(|m| (m.observation.station.as_str(), m.observation.time, m.observation.measures.clone()))
            .collect();
        assert_eq!(
            seen,
            [("A", 1, vec![Some(10.0), None]), ("A", 2, vec![Some(12.0), Some(3.0)]), ("B", 1, vec![None, Some(0.5)])]
        );
        assert_eq!(out[1].raw.iter().collect::<Vec<_>>(), [&b"A"[..], b"1970-01-01T00:00", b"12", b"3"]);
        assert_eq!(out[1].raw.position().map(|p| p.line()), Some(2));
        assert_eq!(pivot.slot("SNOW"), None);
    }
}
