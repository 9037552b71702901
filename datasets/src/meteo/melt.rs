//! Variable-column tables (one row per station, time and element, as GHCN-Daily's CSV)
//! are *pivoted* into one observation per (station, time) holding the chosen elements.
//! (Wide tables are melted in `wide.rs`.)
//!
//! Each produced observation gets a raw record of its own, `station,time,values…`
//! (time as `YYYY-MM-DDTHH:MM`, values as written in the input, missing ones empty),
//! joined by the input's delimiter: that is what the queue stores for it.
//!
//! Produced observations wait in a [`MadeQueue`] (one station at a time, flat arrays:
//! no allocation per observation in steady state). The pivot gathers the rows of one
//! station (in any time order) and hands them out, in time order, when the station
//! changes or the input ends; at most [`PIVOT_TIMES_LIMIT`] distinct times are held (a
//! station's century of days is 37 k). Rows of a station that comes back after another
//! station are a second group: the B+tree then keeps the later observation of a
//! repeated (station, time).

use std::collections::HashMap;

use super::Observation;
use super::fields;
use super::reader::push_field;
use crate::error::{Error, Result};

/// Most distinct times of one station the pivot holds (an error beyond).
pub const PIVOT_TIMES_LIMIT: usize = 4 << 20;

/// Observations of one station waiting to be read, with their value texts.
#[derive(Debug, Default)]
pub(crate) struct MadeQueue {
    station: String,
    width: usize,
    times: Vec<i64>,
    lines: Vec<u64>,
    values: Vec<Option<f64>>,
    texts: Vec<u8>,
    text_ends: Vec<usize>,
    next: usize,
    /// The station as a field of the raw records (quoted if need be), made at the
    /// first pop after [`MadeQueue::start`].
    station_field: Vec<u8>,
    dates: DateTexts,
}

impl MadeQueue {
    /// Empties the queue for observations of `station` with `width` measures each.
    pub(crate) fn start(&mut self, station: &str, width: usize) {
        station.clone_into(&mut self.station);
        self.width = width;
        self.next = 0;
        self.station_field.clear();
        for buffer in
            [&mut self.times as &mut dyn Clear, &mut self.lines, &mut self.values, &mut self.texts, &mut self.text_ends]
        {
            buffer.clear_all();
        }
    }

    /// Queues one observation: its time, source line and (value, text) per measure.
    pub(crate) fn push<'t>(&mut self, time: i64, line: u64, cells: impl Iterator<Item = (Option<f64>, &'t [u8])>) {
        self.times.push(time);
        self.lines.push(line);
        for (value, text) in cells {
            self.values.push(value);
            self.texts.extend_from_slice(text);
            self.text_ends.push(self.texts.len());
        }
        debug_assert_eq!(self.values.len(), self.times.len() * self.width, "every observation has `width` cells");
    }

    /// True when every queued observation was read.
    pub(crate) fn is_empty(&self) -> bool {
        self.next == self.times.len()
    }

    /// Moves the next observation into `observation` and its raw record, joined by
    /// `delimiter` (fields quoted where needed), into `raw`; returns its source line,
    /// `None` when the queue is empty.
    pub(crate) fn pop_into(&mut self, observation: &mut Observation, raw: &mut Vec<u8>, delimiter: u8) -> Option<u64> {
        let &time = self.times.get(self.next)?;
        let at = self.next;
        self.next += 1;
        if !same_text(&observation.station, &self.station) {
            self.station.clone_into(&mut observation.station);
        }
        observation.time = time;
        observation.measures.clear();
        observation.measures.extend_from_slice(&self.values[at * self.width..(at + 1) * self.width]);
        if self.station_field.is_empty() {
            push_field(&mut self.station_field, self.station.as_bytes(), delimiter);
        }
        raw.clear();
        raw.extend_from_slice(&self.station_field);
        raw.push(delimiter);
        self.dates.append(time, raw);
        for cell in at * self.width..(at + 1) * self.width {
            let start = if cell == 0 { 0 } else { self.text_ends[cell - 1] };
            raw.push(delimiter);
            let text = &self.texts[start..self.text_ends[cell]];
            push_field(raw, text, delimiter);
        }
        Some(self.lines[at])
    }
}

/// `a == b`, inline, in (overlapping) words: station names are short, and a call of
/// the C library's `memcmp` for each made observation cost more than the comparison.
#[inline]
pub(crate) fn same_text(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let len = a.len();
    if len != b.len() {
        return false;
    }
    let word = |text: &[u8], at: usize| u64::from_ne_bytes(text[at..at + 8].try_into().expect("eight bytes"));
    let half = |text: &[u8], at: usize| u32::from_ne_bytes(text[at..at + 4].try_into().expect("four bytes"));
    match len {
        0..4 => a.iter().zip(b).all(|(x, y)| x == y),
        4..8 => half(a, 0) == half(b, 0) && half(a, len - 4) == half(b, len - 4),
        _ => (0..len - 8).step_by(8).all(|at| word(a, at) == word(b, at)) && word(a, len - 8) == word(b, len - 8),
    }
}

/// `YYYY-MM-DD` texts of recent days, direct-mapped by day number: made observations
/// repeat days (a wide table's columns row after row, a pivot's hours of one day).
#[derive(Debug)]
pub(crate) struct DateTexts {
    slots: Vec<(i64, [u8; 10])>,
}

impl Default for DateTexts {
    fn default() -> Self {
        DateTexts { slots: vec![(i64::MIN, [0; 10]); DATE_SLOTS] }
    }
}

/// Days [`DateTexts`] remembers.
const DATE_SLOTS: usize = 4096;

impl DateTexts {
    /// Appends `YYYY-MM-DDTHH:MM` of `time` to `out` ([`fields::format_timestamp`]).
    pub(crate) fn append(&mut self, time: i64, out: &mut Vec<u8>) {
        let day = time.div_euclid(86_400);
        let slot = &mut self.slots[day.rem_euclid(DATE_SLOTS as i64) as usize];
        if slot.0 != day {
            let start = out.len();
            fields::format_timestamp(time, out);
            match out.get(start..start + 10).and_then(|date| <[u8; 10]>::try_from(date).ok()) {
                Some(date) if out.len() == start + 16 => *slot = (day, date),
                _ => return,
            }
            out.truncate(start);
        }
        let second_of_day = time.rem_euclid(86_400);
        let (hour, minute) = (second_of_day / 3_600, second_of_day % 3_600 / 60);
        let two = |value: i64| [b'0' + (value / 10) as u8, b'0' + (value % 10) as u8];
        let ([h1, h2], [m1, m2]) = (two(hour), two(minute));
        out.extend_from_slice(&slot.1);
        out.extend_from_slice(&[b'T', h1, h2, b':', m1, m2]);
    }
}

/// Clearing the queue's buffers of different element types in one loop.
trait Clear {
    fn clear_all(&mut self);
}

impl<T> Clear for Vec<T> {
    fn clear_all(&mut self) {
        self.clear();
    }
}

/// The pivot of a variable-column table. Rows of one (station, time) mostly come
/// together and times mostly ascend: then each row touches only the last entry; an
/// out-of-order time builds an index of the station's times once.
#[derive(Debug)]
pub(crate) struct Pivot {
    elements: Vec<String>,
    station: String,
    /// (time, first source line) per gathered time.
    times: Vec<(i64, u64)>,
    /// `elements.len()` cells per time: the value and its text's span in `texts`.
    cells: Vec<(Option<f64>, usize, usize)>,
    texts: Vec<u8>,
    index: Option<HashMap<i64, usize>>,
}

impl Pivot {
    /// A pivot keeping `elements`, in that order.
    pub(crate) fn new(elements: Vec<String>) -> Self {
        Pivot { elements, station: String::new(), times: Vec::new(), cells: Vec::new(), texts: Vec::new(), index: None }
    }

    /// The measure slot of `element`, if it is kept (exact, then ignoring case).
    pub(crate) fn slot(&self, element: &str) -> Option<usize> {
        let exact = self.elements.iter().position(|kept| kept == element);
        exact.or_else(|| self.elements.iter().position(|kept| kept.eq_ignore_ascii_case(element)))
    }

    /// Adds one value; when the station changed, the previous station's observations
    /// go to `out` first.
    pub(crate) fn add(&mut self, row: PivotRow<'_>, out: &mut MadeQueue) -> Result<()> {
        if row.station != self.station {
            self.flush(out);
            row.station.clone_into(&mut self.station);
        }
        let at = match self.times.last() {
            Some(last) if last.0 == row.time => self.times.len() - 1,
            last if self.index.is_none() && last.is_none_or(|last| last.0 < row.time) => {
                self.push(row.time, row.line)?
            }
            _ => self.find_or_push(row.time, row.line)?,
        };
        let start = self.texts.len();
        self.texts.extend_from_slice(row.text);
        self.cells[at * self.elements.len() + row.slot] = (row.value, start, self.texts.len());
        Ok(())
    }

    fn push(&mut self, time: i64, line: u64) -> Result<usize> {
        if self.times.len() >= PIVOT_TIMES_LIMIT {
            return Err(Error::Argument(format!(
                "station {:?} has more than {PIVOT_TIMES_LIMIT} distinct times; split the input by station",
                self.station
            )));
        }
        self.times.push((time, line));
        self.cells.extend(std::iter::repeat_n((None, 0, 0), self.elements.len()));
        Ok(self.times.len() - 1)
    }

    fn find_or_push(&mut self, time: i64, line: u64) -> Result<usize> {
        let times = &self.times;
        let index =
            self.index.get_or_insert_with(|| times.iter().enumerate().map(|(at, entry)| (entry.0, at)).collect());
        if let Some(&at) = index.get(&time) {
            return Ok(at);
        }
        let at = self.push(time, line)?;
        self.index.as_mut().expect("built above").insert(time, at);
        Ok(at)
    }

    /// Hands every gathered observation to `out` (which must be drained), in time order.
    pub(crate) fn flush(&mut self, out: &mut MadeQueue) {
        debug_assert!(out.is_empty(), "the reader drains the queue before reading on");
        let width = self.elements.len();
        out.start(&self.station, width);
        let mut order: Vec<usize> = (0..self.times.len()).collect();
        if self.index.take().is_some() {
            order.sort_by_key(|&at| self.times[at].0);
        }
        for at in order {
            let (time, line) = self.times[at];
            let cells = self.cells[at * width..(at + 1) * width].iter();
            out.push(time, line, cells.map(|&(value, start, end)| (value, &self.texts[start..end])));
        }
        self.times.clear();
        self.cells.clear();
        self.texts.clear();
    }
}

/// One row of a variable-column table, decoded.
pub(crate) struct PivotRow<'a> {
    pub(crate) station: &'a str,
    pub(crate) time: i64,
    pub(crate) slot: usize,
    pub(crate) value: Option<f64>,
    /// The value as written (trimmed).
    pub(crate) text: &'a [u8],
    pub(crate) line: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of two stations in mixed time order come out per station, in time order,
    /// one observation per time with every kept element in its slot and its text.
    #[test]
    fn pivot_gathers_per_station_and_time() {
        let mut pivot = Pivot::new(vec!["TMAX".into(), "PRCP".into()]);
        let mut queue = MadeQueue::default();
        let mut seen = Vec::new();
        let drain = |queue: &mut MadeQueue, seen: &mut Vec<_>| {
            let (mut observation, mut raw) = (Observation::default(), Vec::new());
            while let Some(line) = queue.pop_into(&mut observation, &mut raw, b',') {
                let fields: Vec<String> =
                    raw.split(|&b| b == b',').map(|f| String::from_utf8_lossy(f).into_owned()).collect();
                seen.push((observation.station.clone(), observation.time, observation.measures.clone(), fields, line));
            }
        };
        let rows = [("A", 2, "PRCP", "3.0"), ("A", 1, "TMAX", "10"), ("A", 2, "TMAX", "12"), ("B", 1, "prcp", "0.5")];
        for (line, (station, time, element, text)) in rows.into_iter().enumerate() {
            let slot = pivot.slot(element).expect("kept element");
            let value = text.parse().ok();
            let row = PivotRow { station, time, slot, value, text: text.as_bytes(), line: line as u64 + 2 };
            pivot.add(row, &mut queue).unwrap();
            drain(&mut queue, &mut seen);
        }
        pivot.flush(&mut queue);
        drain(&mut queue, &mut seen);
        let summary: Vec<_> = seen.iter().map(|(s, t, m, _, _)| (s.as_str(), *t, m.clone())).collect();
        assert_eq!(
            summary,
            [("A", 1, vec![Some(10.0), None]), ("A", 2, vec![Some(12.0), Some(3.0)]), ("B", 1, vec![None, Some(0.5)])]
        );
        assert_eq!(seen[1].3, ["A", "1970-01-01T00:00", "12", "3.0"]);
        assert_eq!(seen[1].4, 2);
        assert_eq!(pivot.slot("SNOW"), None);
    }

    /// `same_text` agrees with `==` for texts of every length up to 20, equal or
    /// differing in any one byte, and for texts of different lengths.
    #[test]
    fn same_text_agrees_with_equality() {
        for len in 0..=20 {
            let text: String = (0..len).map(|i| char::from(b'a' + i as u8)).collect();
            assert!(same_text(&text, &text.clone()), "{text}");
            for at in 0..len {
                let mut other = text.clone().into_bytes();
                other[at] = b'Z';
                let other = String::from_utf8(other).expect("ASCII");
                assert!(!same_text(&text, &other) && !same_text(&other, &text), "{text} {other}");
            }
            assert!(!same_text(&text, &format!("{text}x")), "{text}");
        }
    }

    /// Cached date texts equal `format_timestamp` for times across many days, a day
    /// and its slot-mate, and years outside 0–9999.
    #[test]
    fn date_texts_match_format_timestamp() {
        let mut dates = DateTexts::default();
        let mut times: Vec<i64> = (0..20_000).map(|i| i * 7_919 * 60 - 400_000_000).collect();
        times.extend([0, DATE_SLOTS as i64 * 86_400, -400_000_000_000, 300_000_000_000, 0]);
        let (mut cached, mut direct) = (Vec::new(), Vec::new());
        for time in times {
            cached.clear();
            dates.append(time, &mut cached);
            direct.clear();
            fields::format_timestamp(time, &mut direct);
            assert_eq!(cached, direct, "time {time}");
        }
    }
}
