//! The layout of a table: wide (a column a period), variable-column (a column of
//! element codes beside a value column) or long.

use super::measures::{is_measure_kind, is_quality_name};
use super::{ColumnKind, Guess, PeriodPattern};

/// GHCN-Daily element codes: a column of them is an element column however short the sample.
const ELEMENT_CODES: [&str; 10] = ["PRCP", "SNOW", "SNWD", "TMAX", "TMIN", "TAVG", "TOBS", "AWND", "EVAP", "WESD"];

const ELEMENT_NAMES: [&str; 5] = ["element", "variable", "parameter", "param", "elem"];

const VALUE_NAMES: [&str; 4] = ["value", "data_value", "val", "wert"];

/// Most numeric columns of a variable-column table besides its value column.
const MOST_NUMBERS_BESIDE_VALUE: usize = 3;

impl Guess<'_> {
    pub(super) fn variable_columns(&self) -> Option<(usize, usize)> {
        let codes = |index: usize| {
            let values: std::collections::BTreeSet<&str> =
                self.body.iter().filter_map(|row| row.get(index).map(String::as_str)).collect();
            let code = |v: &&str| {
                (1..=8).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
            };
            let repeated = values.len() * 2 <= self.body.len() || self.key_repeats(index);
            let known = values.iter().all(|v| ELEMENT_CODES.contains(v));
            !values.is_empty() && values.len() <= 40 && values.iter().all(code) && (repeated || known)
        };
        let text = |kind: &ColumnKind| *kind == ColumnKind::Text;
        let element = self.find(&ELEMENT_NAMES, text).or_else(|| {
            let candidates = (0..self.columns.len()).filter(|&i| {
                text(&self.columns[i].kind) && !is_quality_name(&self.columns[i].name.to_ascii_lowercase())
            });
            candidates.skip(1).find(|&i| codes(i))
        })?;
        let numeric = |kind: &ColumnKind| matches!(kind, ColumnKind::Integer | ColumnKind::Number);
        let value = self
            .find(&VALUE_NAMES, numeric)
            .or_else(|| (element + 1..self.columns.len()).find(|&i| numeric(&self.columns[i].kind)))?;
        // A table of one value per row has few other numbers (GHCN's observation
        // time); a wide table with a column of codes (TMY3's `Dry-bulb source`) has many.
        let others = (0..self.columns.len()).filter(|&i| i != value && is_measure_kind(&self.columns[i].kind));
        (others.count() <= MOST_NUMBERS_BESIDE_VALUE).then_some((element, value))
    }

    /// True when two rows agree on every column before `element` (station, date) and
    /// differ in it: one row per element and key, as in GHCN-Daily.
    fn key_repeats(&self, element: usize) -> bool {
        let mut seen: std::collections::BTreeMap<&[String], Option<&String>> = std::collections::BTreeMap::new();
        self.body.iter().any(|row| {
            let (key, code) = (&row[..element.min(row.len())], row.get(element));
            seen.insert(key, code).is_some_and(|before| before != code)
        })
    }

    pub(super) fn wide(&mut self, pattern: PeriodPattern) {
        self.flag("--wide", Some(pattern.name().to_owned()));
        let int = |kind: &ColumnKind| *kind == ColumnKind::Integer;
        let year = (!pattern.has_year()).then(|| self.find(&["year", "yr", "jahr"], int)).flatten();
        let month = (pattern == PeriodPattern::DayNumbers).then(|| self.find(&["month", "mo", "monat"], int)).flatten();
        let references: Vec<String> = year.into_iter().chain(month).map(|index| self.take(index)).collect();
        if !references.is_empty() {
            self.flag("--time", Some(references.join(",")));
        }
        self.flag("--wide-measure", Some("value".into()));
        let periods = (0..self.columns.len()).filter(|&i| pattern.period(&self.columns[i].name).is_some());
        self.measured.extend(periods.filter(|i| !self.used.contains(i)).collect::<Vec<_>>());
    }

    pub(super) fn variable(&mut self, element: usize, value: usize) {
        let mut elements: Vec<&str> = Vec::new();
        for row in self.body {
            if let Some(code) = row.get(element).filter(|code| !elements.contains(&code.as_str())) {
                elements.push(code);
            }
        }
        // GHCN-Daily's rows (by-year files, `.dly` lines) carry a quality flag two
        // columns after the value, set when the value failed a check.
        let quality = value + 2;
        let ghcn = !self.sniffed.header
            && elements.iter().any(|code| ELEMENT_CODES.contains(code))
            && quality < self.columns.len();
        let elements = elements.join(",");
        self.measured.push(value);
        let (element, value) = (self.take(element), self.take(value));
        self.flag("--variable-column", Some(element));
        self.flag("--value-column", Some(value.clone()));
        self.flag("--measures", Some(elements));
        if ghcn {
            let quality = self.take(quality);
            self.flag("--flag-column", Some(format!("{value}={quality}")));
        }
    }
}
