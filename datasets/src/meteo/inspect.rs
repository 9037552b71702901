//! `quire load-csv --inspect`: the layout of a file's start (`sniff.rs`), a guess of
//! each column's kind, and the `load-csv` flags that load it.
//!
//! Guesses, in order: the layout (wide when three header names are periods, variable
//! when a text column of element codes sits beside a value column and the codes repeat,
//! the (station, date) key repeats, or they are GHCN codes; else long); the station (a
//! column named like a station, a first column of text, a preamble field, else the file
//! name); the time (year/month/day[/hour] columns, year and day-of-year columns, Unix
//! seconds, an ISO or formatted timestamp, a date column plus a time column); the
//! measures (the other numeric columns, flag columns left out; a column of numbers
//! with flags after some (`27s`, `8.6*`) or a few words among them (`T`, `VRB`, `---`)
//! is one: `--suffix-flags`, `--word-value`, `--na`); the R*-tree's dimensions when the
//! first eight measures are seldom all present; sentinels that stand out among a
//! measure's values (9s such as `-9999` or `999.9`, global or per column). It never
//! reads past the sample and never writes.

use super::fields::parse_timestamp;
use super::period::PeriodPattern;
use super::schema::{Delimiter, MissingValues, Schema};
use super::sniff::{Sniffed, sniff};
use super::timefmt::TimeFormat;

/// Formats tried on date columns, then on time-of-day columns.
/// A format that names the hour holds the time of day too.
const DATE_FORMATS: [&str; 12] = [
    "%d.%m.%Y",
    "%m/%d/%Y",
    "%d/%m/%Y",
    "%Y/%m/%d",
    "%d.%m.%Y %H:%M",
    "%m/%d/%Y %H:%M",
    "%d/%m/%Y %H:%M",
    "%Y/%m/%d %H:%M",
    "%m/%d/%Y %H:%M:%S",
    "%d/%m/%Y %H:%M:%S",
    "%Y/%m/%d %H:%M:%S",
    "%Y%m%d:%H%M",
];
const TIME_FORMATS: [&str; 3] = ["%H:%M", "%H:%M:%S", "%H%M"];
/// Numbers that mean "missing" in weather files without being made of 9s (ISD's -9900).
const OTHER_SENTINELS: [f64; 1] = [-9900.0];
/// GHCN-Daily element codes: a column of them is an element column however short the sample.
const ELEMENT_CODES: [&str; 10] = ["PRCP", "SNOW", "SNWD", "TMAX", "TMIN", "TAVG", "TOBS", "AWND", "EVAP", "WESD"];
/// Identifier columns that are neither a station nor a measure (ECA&D's source id).
const ID_NAMES: [&str; 2] = ["souid", "staid"];
const STATION_NAMES: [&str; 14] = [
    "station",
    "stn",
    "id",
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
];
/// A station's place, written on each row of some archives (Environment Canada's
/// `Longitude (x)`): no measure.
const PLACE_NAMES: [&str; 8] = ["lon", "long", "longitude", "lat", "latitude", "elevation", "altitude", "alt"];
const ELEMENT_NAMES: [&str; 5] = ["element", "variable", "parameter", "param", "elem"];
const VALUE_NAMES: [&str; 4] = ["value", "data_value", "val", "wert"];
const DAY_OF_YEAR_NAMES: [&str; 6] = ["doy", "day_of_year", "dayofyear", "yday", "jday", "julian_day"];
/// Names of a column of `HHMM` times of day: a clock, or the time zone it is read in.
const CLOCK_NAMES: [&str; 11] = ["hhmm", "hhmi", "clock", "utc", "gmt", "lst", "mst", "pst", "cst", "est", "hm"];
const UNIX_SECONDS_NAMES: [&str; 7] = ["epoch", "unix", "unixtime", "unix_time", "timestamp", "time", "ts"];

/// What a column's sampled values look like.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnKind {
    /// Nothing but missing markers.
    Empty,
    /// Integers.
    Integer,
    /// Numbers.
    Number,
    /// ISO 8601 timestamps or dates.
    Timestamp,
    /// Dates (or date-times) in this strftime format.
    Date(&'static str),
    /// Times of day in this format.
    TimeOfDay(&'static str),
    /// Numbers, some with a flag after them (`27s`, `8.6*`) or words among them (`T`,
    /// `VRB`, `---`): the flag characters and the words seen.
    Flagged {
        /// The characters seen after numbers.
        suffixes: String,
        /// The words seen instead of numbers.
        words: Vec<String>,
    },
    /// Anything else.
    Text,
}

/// One column: name (or `column N`) and kind.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// Header name, or `column N` (1-based) without a header.
    pub name: String,
    /// The flag value that names it: the header name, or the 0-based number.
    pub reference: String,
    /// What its values look like.
    pub kind: ColumnKind,
}

/// The result of an inspection.
#[derive(Debug, Clone)]
pub struct Inspection {
    /// What the sniffer found.
    pub sniffed: Sniffed,
    /// The columns of the body.
    pub columns: Vec<Column>,
    /// "long", "wide (PATTERN)" or "variable-column".
    pub layout: String,
    /// The suggested `load-csv` flags, each with its value.
    pub flags: Vec<(String, Option<String>)>,
}

/// Inspects the start of an input (BOM removed; `complete` when it is all of it).
pub fn inspect(start: &[u8], complete: bool, schema: &Schema) -> Inspection {
    let sniffed = sniff(start, complete, schema);
    let (names, body) = match sniffed.header {
        true => (sniffed.rows.first().cloned().unwrap_or_default(), sniffed.rows.get(1..).unwrap_or_default()),
        false => ((0..sniffed.body_fields).map(|i| format!("column {}", i + 1)).collect(), &sniffed.rows[..]),
    };
    let decimal_comma = sniffed.delimiter != Delimiter::Byte(b',');
    let columns: Vec<Column> = names
        .iter()
        .enumerate()
        .map(|(index, name)| {
            let values: Vec<&str> = body.iter().filter_map(|row| row.get(index).map(String::as_str)).collect();
            // A blank or repeated name names no column: its number does.
            let named = sniffed.header && !name.is_empty() && names.iter().filter(|other| *other == name).count() == 1;
            let reference = if named { name.clone() } else { index.to_string() };
            Column { name: name.clone(), reference, kind: kind_of(&values, decimal_comma, &schema.missing) }
        })
        .collect();
    let mut guess = Guess {
        sniffed: &sniffed,
        columns: &columns,
        body,
        used: Vec::new(),
        measured: Vec::new(),
        missing_words: Vec::new(),
        flags: Vec::new(),
    };
    let layout = guess.all(decimal_comma, &schema.missing);
    let flags = guess.flags;
    Inspection { sniffed, columns, layout, flags }
}

fn kind_of(values: &[&str], decimal_comma: bool, missing: &MissingValues) -> ColumnKind {
    let present: Vec<&str> =
        values.iter().copied().filter(|v| !missing.tokens.iter().any(|t| t.eq_ignore_ascii_case(v))).collect();
    if present.is_empty() {
        return ColumnKind::Empty;
    }
    let all = |test: &dyn Fn(&str) -> bool| present.iter().all(|value| test(value));
    let number = |v: &str| super::fields::parse_measure(v.as_bytes(), decimal_comma, missing).is_ok();
    for (length, format) in [(8, "%Y%m%d"), (10, "%Y%m%d%H"), (12, "%Y%m%d%H%M"), (14, "%Y%m%d%H%M%S")] {
        let digits = |v: &str| v.len() == length && v.bytes().all(|b| b.is_ascii_digit());
        if all(&digits) && all(&|v| matches_format(format, v)) {
            return ColumnKind::Date(format);
        }
    }
    if all(&|v| v.len() == 10 && matches_format("%Y-%m-%d", v)) {
        return ColumnKind::Date("%Y-%m-%d");
    }
    if all(&|v| v.parse::<i64>().is_ok()) {
        return ColumnKind::Integer;
    }
    if all(&number) {
        return ColumnKind::Number;
    }
    // ISO 8601 times, some perhaps as Unix seconds (the load reads both).
    let dated = |v: &str| v.contains('-') || v.contains('/');
    if all(&|v| parse_timestamp(v.as_bytes()).is_ok()) && present.iter().any(|v| dated(v)) {
        return ColumnKind::Timestamp;
    }
    for format in DATE_FORMATS {
        if all(&|v| matches_format(format, v)) {
            return ColumnKind::Date(format);
        }
    }
    for format in TIME_FORMATS {
        if all(&|v| matches_format(&format!("%Y-%m-%d {format}"), &format!("2000-01-01 {v}"))) {
            return ColumnKind::TimeOfDay(format);
        }
    }
    flagged(&present, &number).unwrap_or(ColumnKind::Text)
}

/// Most numeric columns of a variable-column table besides its value column.
const MOST_NUMBERS_BESIDE_VALUE: usize = 3;

/// Most characters of a word standing in a column of numbers (`VRB`, `---`).
const LONGEST_WORD: usize = 4;

/// [`ColumnKind::Flagged`] when at least half of `present` are numbers, some with flag
/// characters after them, and the others short words without digits.
fn flagged(present: &[&str], number: &dyn Fn(&str) -> bool) -> Option<ColumnKind> {
    let (mut suffixes, mut words, mut numbers) = (String::new(), Vec::<String>::new(), 0);
    for value in present {
        if number(value) {
            numbers += 1;
            continue;
        }
        let flag_at = value.rfind(|c: char| c.is_ascii_digit()).map_or(0, |last| last + 1);
        let flag = &value[flag_at..];
        let flag_like = |c: char| c.is_ascii_graphic() && !".,+-".contains(c);
        if flag_at > 0 && flag.len() <= 3 && flag.chars().all(flag_like) && number(&value[..flag_at]) {
            numbers += 1;
            add_new(&mut suffixes, flag);
        } else if value.len() <= LONGEST_WORD && value.chars().all(|c| c.is_ascii_graphic() && !c.is_ascii_digit()) {
            if !words.iter().any(|word| word == value) {
                words.push((*value).to_owned());
            }
        } else {
            return None;
        }
    }
    (numbers > 0 && numbers * 2 >= present.len()).then_some(ColumnKind::Flagged { suffixes, words })
}

fn matches_format(format: &str, value: &str) -> bool {
    TimeFormat::new(format).is_ok_and(|compiled| compiled.parse(value).is_ok())
}

/// The guessing state: columns taken so far and the flags chosen.
struct Guess<'a> {
    sniffed: &'a Sniffed,
    columns: &'a [Column],
    body: &'a [Vec<String>],
    used: Vec<usize>,
    /// Columns whose values are measures (sentinels are looked for in these).
    measured: Vec<usize>,
    /// Words in measure columns that mean missing (`VRB`, `---`).
    missing_words: Vec<String>,
    flags: Vec<(String, Option<String>)>,
}

impl Guess<'_> {
    fn flag(&mut self, name: &str, value: Option<String>) {
        self.flags.push((name.to_owned(), value));
    }

    fn all(&mut self, decimal_comma: bool, missing: &MissingValues) -> String {
        self.format_flags();
        let header: Vec<String> = self.columns.iter().map(|c| c.name.clone()).collect();
        let wide = self.sniffed.header.then(|| PeriodPattern::detect(&header)).flatten();
        let variable = self.variable_columns();
        self.station(wide.is_some());
        let layout = match (wide, variable) {
            (Some(pattern), _) => {
                self.wide(pattern);
                format!("wide ({})", pattern.name())
            }
            (None, Some((element, value))) => {
                self.time();
                self.variable(element, value);
                "variable-column".to_owned()
            }
            (None, None) => {
                self.time();
                self.measures();
                "long".to_owned()
            }
        };
        self.sentinels(decimal_comma, missing);
        layout
    }

    fn format_flags(&mut self) {
        let delimiter = match self.sniffed.delimiter {
            Delimiter::Byte(b'\t') => "tab".to_owned(),
            Delimiter::Byte(byte) => char::from(byte).to_string(),
            _ => "whitespace".to_owned(),
        };
        self.flag("--delimiter", Some(delimiter));
        self.flag("--skip-lines", Some(self.sniffed.preamble_lines.to_string()));
        self.flag(if self.sniffed.header { "--header" } else { "--no-header" }, None);
        if !self.sniffed.utf8 {
            self.flag("--encoding", Some("windows-1252".into()));
        }
    }

    fn find(&self, names: &[&str], kind: impl Fn(&ColumnKind) -> bool) -> Option<usize> {
        let named = |column: &Column| {
            let name = super::source::without_unit(&column.name).to_ascii_lowercase();
            names.iter().any(|candidate| name == *candidate)
        };
        (0..self.columns.len())
            .find(|&i| !self.used.contains(&i) && named(&self.columns[i]) && kind(&self.columns[i].kind))
    }

    fn take(&mut self, index: usize) -> String {
        self.used.push(index);
        self.columns[index].reference.clone()
    }

    fn variable_columns(&self) -> Option<(usize, usize)> {
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

    fn station(&mut self, wide: bool) {
        let text = |kind: &ColumnKind| *kind == ColumnKind::Text;
        let station = self
            .find(&STATION_NAMES, |_| true)
            .or_else(|| (0..self.columns.len()).find(|&i| names_a_station(&self.columns[i].name)))
            .or_else(|| self.columns.first().is_some_and(|first| text(&first.kind)).then_some(0));
        let station = station
            .filter(|&i| !wide || PeriodPattern::detect(&[self.columns[i].name.clone()]).is_none())
            .or_else(|| self.constant_code());
        if let Some(index) = station {
            let reference = self.take(index);
            self.flag("--station", Some(reference));
        } else if let Some(place) = self.preamble_station() {
            self.flag("--station-from-preamble", Some(place));
        } else {
            self.flag("--station-from-file", None);
        }
    }

    /// Without a header, a first column of one integer in every sampled row, too large
    /// for a year (USCRN's WBAN number `53131`): the station.
    fn constant_code(&self) -> Option<usize> {
        let first = self.columns.first().filter(|column| column.kind == ColumnKind::Integer)?;
        let mut values = self.body.iter().filter_map(|row| row.first());
        let code = values.next()?;
        let constant = self.body.len() >= 2 && values.all(|value| value == code);
        let large = code.parse::<i64>().is_ok_and(|value| value > 9999);
        (!self.sniffed.header && first.reference == "0" && constant && large).then_some(0)
    }

    /// `ROW,COL` of a station in the preamble: under a station-like label of a label
    /// line followed by a value line (`name,lat\nBerlin,52.5`); else in the first line,
    /// the field after a label (`Station: X`, `Station;X`, a logger's `TOA5`) or its
    /// first field. `None` for a label line without a station label.
    fn preamble_station(&self) -> Option<String> {
        let preamble = &self.sniffed.preamble;
        let first = preamble.iter().position(|fields| fields.iter().any(|f| !f.is_empty()))?;
        let fields = &preamble[first];
        let is_label =
            |field: &String| STATION_NAMES.contains(&field.trim_end_matches(':').to_ascii_lowercase().as_str());
        if let Some(values) = preamble.get(first + 1).filter(|values| values.len() == fields.len() && fields.len() > 2)
        {
            let column = fields.iter().position(is_label).filter(|&c| !values[c].is_empty())?;
            return Some(format!("{},{}", first + 2, column + 1));
        }
        // A comment or a banner (`# Coding: utf-8`, CAMS's first line; NASA POWER's
        // `-BEGIN HEADER-`) names no station, nor does a place (PVGIS's `Latitude
        // (decimal degrees): 45.000`).
        let label = super::source::without_unit(fields[0].split(':').next().unwrap_or("")).to_ascii_lowercase();
        let banner = fields[0].starts_with(|c: char| !c.is_alphanumeric());
        if banner || (fields[0].contains(':') && PLACE_NAMES.contains(&label.as_str())) {
            return None;
        }
        let labelled = fields.len() > 1
            && (is_label(&fields[0]) || fields[0].ends_with(':') || super::sniff::is_logger_line(fields));
        let column = if labelled { 2 } else { 1 };
        // A sentence (an archive's title, a licence) names no station: the file does.
        let field = fields.get(column - 1).map_or("", |field| field.trim());
        if field.split_whitespace().count() > 4 || field.len() > 40 {
            return None;
        }
        Some(format!("{},{}", first + 1, column))
    }

    fn time(&mut self) {
        let int = |kind: &ColumnKind| *kind == ColumnKind::Integer;
        let parts = [
            &["year", "yr", "jahr", "yyyy"][..],
            &["month", "mo", "monat", "mm"],
            &["day", "dy", "tag", "dd"],
            &["hour", "hr", "stunde"],
        ];
        let found: Vec<Option<usize>> = parts.iter().map(|names| self.find(names, int)).collect();
        if let [Some(_), Some(_), Some(_), hour] = found[..] {
            let minute = hour.and_then(|_| self.find(&["minute", "min", "mi"], int)).filter(|&i| self.within(i, 0, 59));
            let references: Vec<String> = found.iter().chain([&minute]).flatten().map(|&i| self.take(i)).collect();
            self.flag("--time", Some(references.join(",")));
            if minute.is_some() {
                self.flag("--time-format", Some("%Y %m %d %H %M".into()));
            }
            return;
        }
        // A monthly series: year and month columns, each value dated its month's first day.
        if let [Some(year), Some(month), None, None] = found[..]
            && self
                .body
                .iter()
                .all(|row| row.get(month).and_then(|m| m.parse::<u32>().ok()).is_some_and(|m| (1..=12).contains(&m)))
        {
            let references = [self.take(year), self.take(month)];
            self.flag("--time", Some(references.join(",")));
            return self.flag("--time-format", Some("%Y %m".into()));
        }
        if let ([Some(year), None, ..], Some(day)) = (&found[..], self.find(&DAY_OF_YEAR_NAMES, int)) {
            let (year, hour) = (*year, found[3]);
            let clock = hour.is_none().then(|| self.clock_column()).flatten();
            let references: Vec<String> =
                [Some(year), Some(day), hour, clock].into_iter().flatten().map(|i| self.take(i)).collect();
            self.flag("--time", Some(references.join(",")));
            let format = match (hour, clock) {
                (Some(_), _) => "%Y %j %H",
                (None, Some(_)) => "%Y %j %H%M",
                (None, None) => "%Y %j",
            };
            return self.flag("--time-format", Some(format.into()));
        }
        if let Some(seconds) = self.unix_seconds() {
            let reference = self.take(seconds);
            return self.flag("--time", Some(reference));
        }
        if let Some((columns, format)) = self.leading_time_columns() {
            self.used.extend(&columns);
            // An EnergyPlus weather file's minute field after its hour: 60, the hour's end.
            let after = columns.last().map_or(0, |last| last + 1);
            if format.is_none()
                && self.columns.get(after).is_some_and(|c| c.kind == ColumnKind::Integer)
                && self.within(after, 60, 60)
            {
                self.used.push(after);
            }
            let references: Vec<String> = columns.iter().map(usize::to_string).collect();
            self.flag("--time", Some(references.join(",")));
            if let Some(format) = format {
                self.flag("--time-format", Some(format.to_owned()));
            }
            return;
        }
        // The first free column of a kind, one named for UTC first (SolarAnywhere's
        // `ObservationTime(GMT)` beside its `ObservationTime(LST)`).
        let free = |guess: &Self, test: &dyn Fn(&ColumnKind) -> bool| {
            let candidates =
                (0..guess.columns.len()).filter(|&i| !guess.used.contains(&i) && test(&guess.columns[i].kind));
            let candidates: Vec<usize> = candidates.collect();
            let utc = |&i: &usize| {
                ["utc", "gmt"].iter().any(|zone| guess.columns[i].name.to_ascii_lowercase().contains(zone))
            };
            candidates.iter().copied().find(utc).or(candidates.first().copied())
        };
        if let Some(index) = free(self, &|kind| *kind == ColumnKind::Timestamp) {
            let reference = self.take(index);
            return self.flag("--time", Some(reference));
        }
        let Some(date) = free(self, &|kind| matches!(kind, ColumnKind::Date(_))) else { return };
        let ColumnKind::Date(date_format) = self.columns[date].kind else { return };
        let date_reference = self.take(date);
        if date_format.contains("%H") {
            self.flag("--time", Some(date_reference));
            return self.flag("--time-format", Some(date_format.to_owned()));
        }
        if let Some(clock) = self.clock_after(date) {
            let clock_reference = self.take(clock);
            self.flag("--time", Some(format!("{date_reference},{clock_reference}")));
            return self.flag("--time-format", Some(format!("{date_format} %H%M")));
        }
        match free(self, &|kind| matches!(kind, ColumnKind::TimeOfDay(_))) {
            Some(time) => {
                let ColumnKind::TimeOfDay(time_format) = self.columns[time].kind else { return };
                let time_reference = self.take(time);
                self.flag("--time", Some(format!("{date_reference},{time_reference}")));
                self.flag("--time-format", Some(format!("{date_format} {time_format}")));
            }
            None => match self.hour_after(date) {
                Some(hour) => {
                    let hour_reference = self.take(hour);
                    self.flag("--time", Some(format!("{date_reference},{hour_reference}")));
                    self.flag("--time-format", Some(format!("{date_format} %H")));
                }
                None => {
                    self.flag("--time", Some(date_reference));
                    self.flag("--time-format", Some(date_format.to_owned()));
                }
            },
        }
    }

    /// An integer column named like Unix seconds whose values are times of 1973–2286.
    fn unix_seconds(&self) -> Option<usize> {
        let index = self.find(&UNIX_SECONDS_NAMES, |kind| *kind == ColumnKind::Integer)?;
        let plausible = |row: &Vec<String>| {
            row.get(index)
                .and_then(|v| v.parse::<i64>().ok())
                .is_some_and(|s| (100_000_000..10_000_000_000).contains(&s))
        };
        self.body.iter().all(plausible).then_some(index)
    }

    /// Whether every sampled value of column `index` is an integer in `low..=high`.
    fn within(&self, index: usize, low: i64, high: i64) -> bool {
        let inside = |row: &Vec<String>| {
            row.get(index).and_then(|v| v.parse::<i64>().ok()).is_some_and(|v| (low..=high).contains(&v))
        };
        self.body.iter().all(inside)
    }

    /// The time columns that start a file without header, known by their values: a
    /// year, perhaps a day of the year (SURFRAD's `2019 56 2 25 0 0`), a month, a
    /// day, an hour (0–24: an EnergyPlus weather file's hours run 1–24) and perhaps
    /// minutes; with the `--time-format` they need (none for year, month, day, hour).
    fn leading_time_columns(&self) -> Option<(Vec<usize>, Option<&'static str>)> {
        let int = |i: usize| self.columns.get(i).is_some_and(|column| column.kind == ColumnKind::Integer);
        let fits = |i: usize, low: i64, high: i64| int(i) && self.within(i, low, high);
        if self.sniffed.header || self.columns.len() < 5 || !fits(0, 1800, 2200) {
            return None;
        }
        let civil = |month: usize| fits(month, 1, 12) && fits(month + 1, 1, 31) && fits(month + 2, 0, 24);
        let month = match civil(2) && self.body.iter().all(|row| day_of_year_agrees(row)) {
            true => 2,
            false => civil(1).then_some(1)?,
        };
        let minute = month + 3;
        if self.columns.len() > minute + 1 && fits(minute, 0, 59) && self.minutes_after(minute) {
            return Some((vec![0, month, month + 1, month + 2, minute], Some("%Y %m %d %H %M")));
        }
        Some((vec![0, month, month + 1, month + 2], None))
    }

    /// Whether integer column `index` holds codes written with leading zeros, all of
    /// one width of three digits or more (GSOD's `FRSHTT` indicators, `010000`): a
    /// measure's numbers are not padded with zeros.
    fn is_code(&self, index: usize) -> bool {
        let values: Vec<&str> =
            self.body.iter().filter_map(|row| row.get(index).map(|v| v.trim())).filter(|v| !v.is_empty()).collect();
        let width = values.first().map_or(0, |first| first.len());
        self.columns[index].kind == ColumnKind::Integer
            && width >= 3
            && values.iter().all(|v| v.len() == width && v.bytes().all(|b| b.is_ascii_digit()))
            && values.iter().any(|v| v.starts_with('0'))
    }

    /// Whether the integers of column `minute` (0–59), right after the columns that
    /// date a row to its hour, are its minutes: all 0, or rising within each hour that
    /// has several rows, and some hour has several (SURFRAD's rows a minute). An hourly
    /// file's next column (ISD-Lite's temperature in tenths) is a measure.
    fn minutes_after(&self, minute: usize) -> bool {
        let value = |row: &Vec<String>| row.get(minute).and_then(|v| v.parse::<i64>().ok());
        if self.body.iter().all(|row| value(row) == Some(0)) {
            return true;
        }
        let same_hour = |pair: &[Vec<String>]| pair[0].get(..minute) == pair[1].get(..minute);
        let pairs: Vec<&[Vec<String>]> = self.body.windows(2).filter(|pair| same_hour(pair)).collect();
        !pairs.is_empty() && pairs.iter().all(|pair| value(&pair[0]) < value(&pair[1]))
    }

    /// A column of times of day as four digits (`0910`, USCRN's `UTC_TIME`) right
    /// after a date column: integers written with four digits, hours 00–24 and minutes
    /// 00–59; named like a time when the file has a header (a pressure of `1013` hPa
    /// is no time).
    fn clock_after(&self, date: usize) -> Option<usize> {
        let next = date + 1;
        let column = self.columns.get(next).filter(|column| column.kind == ColumnKind::Integer)?;
        let lower = column.name.to_ascii_lowercase();
        let named = !self.sniffed.header || ["time", "hhmm", "clock"].iter().any(|word| lower.contains(word));
        let clock = |value: &str| {
            let digits = value.len() == 4 && value.bytes().all(|b| b.is_ascii_digit());
            digits && value[..2] <= *"24" && value[2..] <= *"59"
        };
        let values = || self.body.iter().filter_map(|row| row.get(next).map(String::as_str));
        (named && values().all(clock) && !self.used.contains(&next)).then_some(next)
    }

    /// A column of times of day as integers `HHMM`, perhaps without leading zeros
    /// (NREL MIDC's `MST`: `0`, `1`, …, `2359`), named like a clock or a time zone.
    fn clock_column(&self) -> Option<usize> {
        let named = |name: &str| {
            let lower = super::source::without_unit(name).to_ascii_lowercase();
            CLOCK_NAMES.contains(&lower.as_str())
        };
        let clock = |row: &Vec<String>, index: usize| {
            let value = row.get(index).and_then(|v| v.parse::<i64>().ok());
            value.is_some_and(|v| (0..=2400).contains(&v) && v % 100 < 60)
        };
        (0..self.columns.len()).find(|&i| {
            !self.used.contains(&i)
                && self.columns[i].kind == ColumnKind::Integer
                && named(&self.columns[i].name)
                && self.body.iter().all(|row| clock(row, i))
        })
    }

    /// An hour column beside a date column without time of day: named like an hour,
    /// or (without header) the next column when it holds integers 0–24.
    fn hour_after(&self, date: usize) -> Option<usize> {
        let int = |kind: &ColumnKind| *kind == ColumnKind::Integer;
        if let Some(hour) = self.find(&["hour", "hr", "stunde", "hh"], int) {
            return Some(hour);
        }
        let next = date + 1;
        let hours = |row: &Vec<String>| {
            row.get(next).and_then(|v| v.parse::<i64>().ok()).is_some_and(|h| (0..=24).contains(&h))
        };
        let fits =
            !self.sniffed.header && self.columns.get(next).is_some_and(|c| int(&c.kind)) && self.body.iter().all(hours);
        fits.then_some(next)
    }

    fn measures(&mut self) {
        let not_a_measure = |name: &str| {
            let lower = name.to_ascii_lowercase();
            let bare = super::source::without_unit(name).to_ascii_lowercase();
            let counter = ["no", "eor", "record", "source"].contains(&lower.as_str());
            let clock = lower.contains("sunrise") || lower.contains("sunset");
            let identifier = ID_NAMES.contains(&lower.as_str()) || bare.ends_with(" id") || bare.ends_with("_id");
            // A row number written by pandas: a blank name, or `Unnamed: 0`.
            let index = bare.is_empty() || bare.starts_with("unnamed:");
            is_quality_name(&lower) || counter || clock || identifier || index || PLACE_NAMES.contains(&bare.as_str())
        };
        // A second date's time of day (USCRN's local `LST_TIME` after `LST_DATE`) and a
        // column of codes are no measures.
        let dates = (0..self.columns.len()).filter(|&i| matches!(self.columns[i].kind, ColumnKind::Date(_)));
        let mut numbers_no_measure: Vec<usize> = dates.filter_map(|date| self.clock_after(date)).collect();
        numbers_no_measure.extend((0..self.columns.len()).filter(|&i| self.is_code(i)));
        let measures: Vec<usize> = (0..self.columns.len())
            .filter(|&i| !self.used.contains(&i) && !numbers_no_measure.contains(&i))
            .filter(|&i| is_measure_kind(&self.columns[i].kind))
            .filter(|&i| !not_a_measure(&self.columns[i].name))
            .collect();
        self.measured.extend(&measures);
        self.value_words(&measures);
        self.index_measures(&measures);
        let flags: Vec<(usize, usize)> =
            measures.iter().filter_map(|&m| self.quality_column(m).map(|flag| (m, flag))).collect();
        let references: Vec<String> = measures.into_iter().map(|i| self.take(i)).collect();
        self.flag("--measures", Some(references.join(",")));
        self.quality_flags(&flags);
    }

    /// `--index-measures` when the R*-tree's default dimensions (the first eight
    /// measures) are all present in fewer than half of the sample's rows (NOAA LCD's
    /// daily columns, filled once a day): the measures most often present, in their
    /// order, as many as keep half of the rows complete.
    fn index_measures(&mut self, measures: &[usize]) {
        let markers = MissingValues::default().tokens;
        let present = |row: &Vec<String>, index: usize| {
            row.get(index).is_some_and(|value| {
                let value = value.trim();
                !value.is_empty()
                    && !markers.iter().any(|token| token.eq_ignore_ascii_case(value))
                    && !self.missing_words.iter().any(|word| word == value)
            })
        };
        let complete =
            |chosen: &[usize]| self.body.iter().filter(|row| chosen.iter().all(|&i| present(row, i))).count();
        let half = self.body.len().div_ceil(2);
        let default = &measures[..measures.len().min(super::MAX_DIMENSIONS)];
        if default.is_empty() || complete(default) >= half {
            return;
        }
        let mut by_presence = measures.to_vec();
        by_presence.sort_by_key(|&index| std::cmp::Reverse(complete(&[index])));
        let mut chosen: Vec<usize> = Vec::new();
        for index in by_presence {
            let with = [&chosen[..], &[index]].concat();
            if chosen.len() < super::MAX_DIMENSIONS && complete(&with) >= half {
                chosen = with;
            }
        }
        chosen.sort_unstable();
        if !chosen.is_empty() {
            let names: Vec<String> = chosen.iter().map(|&i| self.columns[i].reference.clone()).collect();
            self.flag("--index-measures", Some(names.join(",")));
        }
    }

    /// `--suffix-flags` for the flags seen after the measures' numbers (NOAA's `s`,
    /// suspect, also `--drop-flags`), `--word-value T=0` for NOAA's trace in a
    /// precipitation or snow column, and the other words as missing markers (`--na`,
    /// written by [`Guess::sentinels`]).
    fn value_words(&mut self, measures: &[usize]) {
        let mut flags = String::new();
        let mut trace = false;
        for &index in measures {
            let ColumnKind::Flagged { suffixes, words } = &self.columns[index].kind else { continue };
            add_new(&mut flags, suffixes);
            let name = self.columns[index].name.to_ascii_lowercase();
            let fallen = ["prec", "prcp", "rain", "snow"].iter().any(|word| name.contains(word));
            for word in words {
                if word == "T" && fallen {
                    trace = true;
                } else if !self.missing_words.contains(word) {
                    self.missing_words.push(word.clone());
                }
            }
        }
        if !flags.is_empty() {
            self.flag("--suffix-flags", Some(flags.clone()));
        }
        if flags.contains(SUSPECT_FLAG) {
            self.flag("--drop-flags", Some(SUSPECT_FLAG.to_string()));
        }
        if trace {
            self.flag("--word-value", Some("T=0".into()));
        }
    }

    /// The column holding measure `measure`'s quality code, named after it as archives
    /// name them (`Q_TG` for `TG` in ECA&D, `TMAX_FLAG`, `QC_T`, …).
    fn quality_column(&self, measure: usize) -> Option<usize> {
        let name = super::source::without_unit(&self.columns[measure].name).to_ascii_lowercase();
        let names = [format!("q_{name}"), format!("{name}_q"), format!("qc_{name}"), format!("{name}_qc")];
        let names = names.into_iter().chain([format!("{name}_flag"), format!("flag_{name}"), format!("{name} flag")]);
        let names: Vec<String> = names.collect();
        let lower = |i: usize| super::source::without_unit(&self.columns[i].name).to_ascii_lowercase();
        (0..self.columns.len()).find(|&i| i != measure && !self.used.contains(&i) && names.contains(&lower(i)))
    }

    /// `--flag-column` for each (measure, quality column) of `pairs`. Flags set to
    /// anything drop a value by default; where the sample's most common code is not
    /// blank, the other codes seen are `--drop-flags` (ECA&D's `1,9` whichever it
    /// shows), and a quality column with one code in the whole sample is left alone
    /// (nothing to tell); Environment Canada's flags (`… Flag`) drop on `M` only.
    fn quality_flags(&mut self, pairs: &[(usize, usize)]) {
        let mut dropped: Vec<String> = Vec::new();
        let mut suggested = Vec::new();
        for &(measure, flag) in pairs {
            let mut counts: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
            for row in self.body {
                *counts.entry(row.get(flag).map_or("", |code| code.trim())).or_default() += 1;
            }
            let Some((&common, _)) = counts.iter().max_by_key(|&(_, count)| *count) else { continue };
            // ECA&D's codes (0 valid, 1 suspect, 9 missing), whichever the sample shows.
            if common == "0" && counts.keys().all(|code| ["0", "1", "9"].contains(code)) {
                dropped.extend(["1".to_string(), "9".to_string()]);
            } else if self.columns[flag].name.to_ascii_lowercase().ends_with(" flag") {
                // Environment Canada's legend (`Max Temp Flag`): M missing; E estimated,
                // T trace and the others describe a value that stands.
                dropped.push("M".to_string());
            } else if counts.len() < 2 && !common.is_empty() {
                continue;
            } else if !common.is_empty() {
                dropped
                    .extend(counts.keys().filter(|code| **code != common && !code.is_empty()).map(|c| c.to_string()));
            }
            suggested.push((measure, flag));
        }
        let pairs: Vec<String> = suggested
            .into_iter()
            .map(|(measure, flag)| format!("{}={}", self.columns[measure].reference, self.take(flag)))
            .collect();
        if !pairs.is_empty() {
            self.flag("--flag-column", Some(pairs.join(",")));
        }
        dropped.sort();
        dropped.dedup();
        if !dropped.is_empty() {
            self.flag("--drop-flags", Some(dropped.join(",")));
        }
    }

    fn wide(&mut self, pattern: PeriodPattern) {
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

    fn variable(&mut self, element: usize, value: usize) {
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

    /// `--na` for the usual sentinels (see [`sentinel_like`]) that stand out in a
    /// measure column: every other value of the column is less than half their
    /// magnitude (a PM2.5 of 999 among values up to 900 is data, a temperature of 999.9
    /// among values up to 30 is not). A sentinel that is data in another column is
    /// given per column (`--na temp=999`).
    fn sentinels(&mut self, decimal_comma: bool, missing: &MissingValues) {
        // Parsed without the sentinels, so the default ones (-999, -9999) are seen too.
        let tokens = MissingValues { sentinels: Vec::new(), ..missing.clone() };
        let mut standing_out: Vec<(f64, Vec<usize>)> = Vec::new();
        let mut data: Vec<f64> = Vec::new();
        for &index in &self.measured {
            let parse = |f: &String| super::fields::parse_measure(f.as_bytes(), decimal_comma, &tokens).ok().flatten();
            let values: Vec<f64> = self.body.iter().filter_map(|row| row.get(index).and_then(parse)).collect();
            let mut candidates: Vec<f64> = values.iter().copied().filter(|&v| sentinel_like(v)).collect();
            candidates.sort_by(f64::total_cmp);
            candidates.dedup();
            for candidate in candidates {
                let usual = values.iter().filter(|&&v| !sentinel_like(v));
                let others = usual.fold(0.0f64, |most, v| most.max(v.abs()));
                if others >= candidate.abs() / 2.0 {
                    data.push(candidate);
                } else if let Some((_, columns)) = standing_out.iter_mut().find(|(value, _)| *value == candidate) {
                    columns.push(index);
                } else {
                    standing_out.push((candidate, vec![index]));
                }
            }
        }
        let mut list: Vec<String> = self.missing_words.clone();
        for (candidate, columns) in standing_out {
            match data.contains(&candidate) {
                true => list.extend(columns.iter().map(|&i| format!("{}={candidate}", self.columns[i].reference))),
                false => list.push(candidate.to_string()),
            }
        }
        if !list.is_empty() {
            self.flag("--na", Some(list.join(",")));
        }
    }
}

/// Whether a row's second field is the day of the year of the date in its first, third
/// and fourth (year, month, day).
fn day_of_year_agrees(row: &[String]) -> bool {
    let number = |i: usize| row.get(i).and_then(|v| v.parse::<i64>().ok());
    let (Some(year), Some(ordinal), Some(month), Some(day)) = (number(0), number(1), number(2), number(3)) else {
        return false;
    };
    let first = super::fields::days_from_civil(year, 1, 1);
    (1..=12).contains(&month)
        && (1..=31).contains(&day)
        && super::fields::days_from_civil(year, month, day) - first + 1 == ordinal
}

/// Whether a column name says it names the station in words (the Bureau of
/// Meteorology's `Bureau of Meteorology station number`): the word `station` followed
/// by `number`, `no`, `id`, `name` or `code`; or `sta` or `stn` among other words
/// (Météo-France's `numer_sta`).
fn names_a_station(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let numbered = words.len() > 1 && words.iter().any(|word| ["sta", "stn"].contains(word));
    numbered
        || words
            .windows(2)
            .any(|pair| pair[0] == "station" && ["number", "no", "id", "name", "code"].contains(&pair[1]))
}

/// Whether a (lower-case) column name is a quality code's (`TMAX_FLAG`, `Q_TG`,
/// `Max Temp Flag`, `QN_9`) or another companion's of a value (`GHI source`).
fn is_quality_name(lower: &str) -> bool {
    let last_word = super::source::without_unit(lower).rsplit([' ', '_']).next().unwrap_or("");
    ["flag", "qual", "qc", "qn"].iter().any(|word| lower.contains(word))
        || lower.starts_with("q_")
        || lower.ends_with("_q")
        || COMPANION_WORDS.contains(&last_word)
}

/// Last words of the columns that describe another column's value (TMY3's `GHI
/// source`, `GHI uncert (%)`, GSOD's `TEMP_ATTRIBUTES`): no measures, no element codes.
const COMPANION_WORDS: [&str; 5] = ["source", "uncert", "uncertainty", "unc", "attributes"];

/// Appends to `set` the characters of `more` it lacks.
fn add_new(set: &mut String, more: &str) {
    for c in more.chars() {
        if !set.contains(c) {
            set.push(c);
        }
    }
}

/// Whether a column of this kind holds measures.
fn is_measure_kind(kind: &ColumnKind) -> bool {
    matches!(kind, ColumnKind::Integer | ColumnKind::Number | ColumnKind::Flagged { .. })
}

/// NOAA's flag of a suspect value after the number (LCD's `27s`): suggested as dropped.
const SUSPECT_FLAG: char = 's';

/// A usual "missing" number: three or more 9s with any sign and decimal point (`999`,
/// `-9999`, `999999`, `999.9`, `-99.9`), or one of [`OTHER_SENTINELS`].
fn sentinel_like(value: f64) -> bool {
    let digits: Vec<u8> = value.abs().to_string().bytes().filter(|&b| b != b'.').collect();
    (digits.len() >= 3 && digits.iter().all(|&b| b == b'9')) || OTHER_SENTINELS.contains(&value)
}

#[cfg(test)]
#[path = "inspect_archive_tests.rs"]
mod archive_tests;

#[cfg(test)]
mod tests {
    use super::*;

    /// The flags `--inspect` suggests for `text`.
    pub(super) fn flags(text: &str) -> Vec<(String, Option<String>)> {
        inspect(text.as_bytes(), true, &Schema::default()).flags
    }

    /// The value of flag `name` among `flags`.
    pub(super) fn value<'a>(flags: &'a [(String, Option<String>)], name: &str) -> Option<&'a str> {
        flags.iter().find(|(flag, _)| flag == name).and_then(|(_, value)| value.as_deref())
    }

    /// A long file with a preamble, separate date and time columns, a sentinel.
    #[test]
    fn long_with_preamble_and_split_time() {
        let text = "Station;Hof\nDatum;Zeit;T (C);QN\n01.01.2020;01:00;1,5;3\n01.01.2020;02:00;9999,9;3\n01.01.2020;24:00;2;3\n";
        let found = flags(text);
        assert_eq!(value(&found, "--skip-lines"), Some("1"));
        assert_eq!(value(&found, "--station-from-preamble"), Some("1,2"));
        assert_eq!(value(&found, "--time"), Some("Datum,Zeit"));
        assert_eq!(value(&found, "--time-format"), Some("%d.%m.%Y %H:%M"));
        assert_eq!(value(&found, "--measures"), Some("T (C)"));
        assert_eq!(value(&found, "--na"), Some("9999.9"));
    }

    /// A quality column named after its measure (`Q_TG`, `TMAX_FLAG`) is the measure's
    /// `--flag-column`, not a measure; codes other than the common one are dropped when
    /// the common one is not blank; a quality column with one code says nothing; an
    /// archive's title line does not name the station, the file does. Environment
    /// Canada's `… Flag` columns drop on `M` only, its place and id columns are no
    /// measures, and every pair goes in one `--flag-column`; the Bureau of Meteorology's
    /// `… station number` is the station.
    #[test]
    fn quality_columns_are_flags_of_their_measures() {
        let mut eca = String::from("EUROPEAN CLIMATE ASSESSMENT & DATASET (ECA&D), file created on 22-11-2021\n\n");
        eca.push_str(" SOUID,    DATE,   TG, Q_TG\n");
        for day in 1..=28 {
            let (value, code) = match day {
                4 => (-9999, 9),
                11 => (-24, 1),
                _ => (day * 3, 0),
            };
            eca.push_str(&format!("100003,186001{day:02},{value:>5},{code:>5}\n"));
        }
        let found = flags(&eca);
        assert_eq!(value(&found, "--measures"), Some("TG"), "SOUID is an id, Q_TG a flag: {found:?}");
        assert_eq!(value(&found, "--flag-column"), Some("TG=Q_TG"));
        assert_eq!(value(&found, "--drop-flags"), Some("1,9"));
        assert!(found.iter().any(|(flag, _)| flag == "--station-from-file"), "{found:?}");
        let noaa = "station,date,TMAX,TMAX_FLAG,PRCP\nA,2020-01-01,10,,0\nA,2020-01-02,11,X,0\nA,2020-01-03,12,,1\n";
        let found = flags(noaa);
        assert_eq!(value(&found, "--measures"), Some("TMAX,PRCP"));
        assert_eq!(value(&found, "--flag-column"), Some("TMAX=TMAX_FLAG"));
        assert_eq!(value(&found, "--drop-flags"), None, "a blank flag is the common one: any set flag drops");
        let canada = "\"Longitude (x)\",\"Latitude (y)\",\"Station Name\",\"Climate ID\",\"Date/Time\",\"Year\",\
                      \"Month\",\"Day\",\"Max Temp (°C)\",\"Max Temp Flag\",\"Total Rain (mm)\",\"Total Rain Flag\"\n\
                      \"-75.67\",\"45.38\",\"OTTAWA CDA\",\"6105976\",\"2020-01-01\",\"2020\",\"01\",\"01\",\"1.2\",\"\",\"\",\"M\"\n\
                      \"-75.67\",\"45.38\",\"OTTAWA CDA\",\"6105976\",\"2020-01-02\",\"2020\",\"01\",\"02\",\"\",\"M\",\"0.0\",\"T\"\n\
                      \"-75.67\",\"45.38\",\"OTTAWA CDA\",\"6105976\",\"2020-01-03\",\"2020\",\"01\",\"03\",\"-3.5\",\"E\",\"\",\"M\"\n";
        let found = inspect(canada.as_bytes(), true, &Schema::default());
        assert_eq!(found.layout, "long", "an all-M flag column is no element column: {:?}", found.flags);
        assert_eq!(value(&found.flags, "--station"), Some("Station Name"));
        assert_eq!(value(&found.flags, "--measures"), Some("Max Temp (°C),Total Rain (mm)"), "no place, no id");
        let pairs = "Max Temp (°C)=Max Temp Flag,Total Rain (mm)=Total Rain Flag";
        assert_eq!(value(&found.flags, "--flag-column"), Some(pairs), "one flag, every pair");
        assert_eq!(value(&found.flags, "--drop-flags"), Some("M"), "Environment Canada's legend");
        let bom = "Product code,Bureau of Meteorology station number,Year,Month,Day,Rainfall amount (millimetres)\n\
                   IDCJAC0009,066062,2023,01,01,0.0\nIDCJAC0009,066062,2023,01,02,4.2\n";
        let found = flags(bom);
        assert_eq!(value(&found, "--station"), Some("Bureau of Meteorology station number"));
        assert_eq!(value(&found, "--measures"), Some("Rainfall amount (millimetres)"));
        assert!(!names_a_station("HourlyStationPressure") && names_a_station("Station Name"));
        let only_valid = eca.replace("  -24,    1", "  -24,    0").replace("-9999,    9", "   12,    0");
        assert_eq!(value(&flags(&only_valid), "--drop-flags"), Some("1,9"), "ECA&D's codes, seen or not");
        let one_code = "station,date,T,Q_T\nA,2020-01-01,1,A\nA,2020-01-02,2,A\nA,2020-01-03,3,A\n";
        assert_eq!(value(&flags(one_code), "--flag-column"), None);
    }

    /// Numbers with flags after them and words among numbers are measures (NOAA's LCD
    /// files, the Met Office's station files): the flags are `--suffix-flags` (NOAA's
    /// suspect `s` dropped), NOAA's trace `T` in a precipitation column is 0, other
    /// words are missing; a column filled once a day is no element column; when the
    /// first eight measures are seldom all present, `--index-measures` names those that
    /// are; year and month columns date a monthly series.
    #[test]
    fn flags_after_numbers_words_and_monthly_series() {
        let mut lcd = String::from(
            "STATION,DATE,REPORT_TYPE,DailyPrecipitation,DailyWeather,HourlyDryBulbTemperature,\
             HourlyPrecipitation,HourlyWindDirection,HourlyVisibility\n",
        );
        for hour in 0..8 {
            let temp = if hour == 3 { "34s".to_owned() } else { (30 + hour).to_string() };
            let rain = ["T", "0.00", "0.02s", "0.01"][hour % 4];
            let wind = if hour == 5 { "VRB" } else { "250" };
            let seen = if hour == 6 { "2.50V" } else { "10.00" };
            lcd.push_str(&format!("\"7250\",\"2021-01-01T{hour:02}:51:00\",\"FM-15\",,,{temp},{rain},{wind},{seen}\n"));
        }
        lcd.push_str("\"7250\",\"2021-01-01T23:59:00\",\"SOD  \",\"0.12\",\"RA\",,,,\n");
        let found = inspect(lcd.as_bytes(), true, &Schema::default());
        assert_eq!(found.layout, "long", "{:?}", found.flags);
        let lcd = found.flags;
        assert_eq!(value(&lcd, "--station"), Some("STATION"));
        assert_eq!(value(&lcd, "--time"), Some("DATE"));
        let measures =
            "DailyPrecipitation,HourlyDryBulbTemperature,HourlyPrecipitation,HourlyWindDirection,HourlyVisibility";
        assert_eq!(value(&lcd, "--measures"), Some(measures));
        assert_eq!(value(&lcd, "--suffix-flags"), Some("sV"));
        assert_eq!(value(&lcd, "--drop-flags"), Some("s"));
        assert_eq!(value(&lcd, "--word-value"), Some("T=0"));
        assert_eq!(value(&lcd, "--na"), Some("VRB"));
        let index = "HourlyDryBulbTemperature,HourlyPrecipitation,HourlyWindDirection,HourlyVisibility";
        assert_eq!(value(&lcd, "--index-measures"), Some(index));
        let met_office = "Oxford\nEstimated data is marked with a * after the value.\n\
                          \x20  yyyy  mm   tmax    rain     sun\n              degC      mm   hours\n\
                          \x20  1853   1    8.4    62.8     ---\n   1929   3   12.4     2.8   160.0*\n\
                          \x20  2019   6   20.4    96.3   166.6#\n   2023   7   21.4   108.4*  156.9#  Provisional\n";
        let met = flags(met_office);
        assert_eq!(value(&met, "--skip-lines"), Some("2"));
        assert_eq!(value(&met, "--station-from-preamble"), Some("1,1"));
        assert_eq!((value(&met, "--time"), value(&met, "--time-format")), (Some("yyyy,mm"), Some("%Y %m")));
        assert_eq!(value(&met, "--measures"), Some("tmax,rain,sun"));
        assert_eq!(value(&met, "--suffix-flags"), Some("*#"));
        assert_eq!((value(&met, "--na"), value(&met, "--drop-flags")), (Some("---"), None));
        let words = flags("station,date,dir\nA,2020-01-01,N\nA,2020-01-02,NE\nA,2020-01-03,5\n");
        assert_eq!(value(&words, "--measures"), Some(""), "mostly words: text, no measure");
    }

    /// GHCN-Daily rows (no header) are a variable-column table; a monthly table with
    /// month columns is wide.
    #[test]
    fn variable_and_wide() {
        let text = "USW1,20200101,TMAX,150,,,W,\nUSW1,20200101,TMIN,-20,,,W,\nUSW1,20200101,PRCP,0,,,W,\n\
                    USW1,20200102,TMAX,160,,,W,\nUSW1,20200102,TMIN,-10,,,W,\nUSW1,20200102,PRCP,5,,,W,\n";
        let found = flags(text);
        assert_eq!(value(&found, "--variable-column"), Some("2"));
        assert_eq!(value(&found, "--value-column"), Some("3"));
        assert_eq!(value(&found, "--measures"), Some("TMAX,TMIN,PRCP"));
        assert_eq!(value(&found, "--time-format"), Some("%Y%m%d"));
        assert_eq!(value(&found, "--flag-column"), Some("3=5"), "GHCN's quality flag drops a value");
        let wide = inspect(b"station,year,Jan,Feb,Mar\nA,2020,1.5,2,3\nB,2020,1,2,3\n", true, &Schema::default());
        assert_eq!(wide.layout, "wide (months)");
        assert_eq!(value(&wide.flags, "--time"), Some("year"));
    }

    /// Year and day-of-year (and hour) columns take a `%Y %j` format; an integer
    /// column of Unix seconds named like a time is the time.
    #[test]
    fn day_of_year_and_unix_seconds() {
        let found = flags("station,year,doy,hour,t\nZ,2020,61,12,1.0\nZ,2020,366,0,2.0\n");
        assert_eq!(value(&found, "--time"), Some("year,doy,hour"));
        assert_eq!(value(&found, "--time-format"), Some("%Y %j %H"));
        assert_eq!(value(&found, "--measures"), Some("t"));
        let found = flags("station,Year,DOY,t\nZ,2020,61,1.0\nZ,2020,62,2.0\n");
        assert_eq!((value(&found, "--time"), value(&found, "--time-format")), (Some("Year,DOY"), Some("%Y %j")));
        let found = flags("station,epoch,t\nY,1583064000,1.0\nY,1583067600,2.0\n");
        assert_eq!(value(&found, "--time"), Some("epoch"));
        assert_eq!(value(&found, "--time-format"), None);
        assert_eq!(value(&found, "--measures"), Some("t"));
        let found = flags("station,time,t\nY,12,1.0\nY,13,2.0\n");
        assert_ne!(value(&found, "--time"), Some("time"), "small integers are no Unix seconds");
    }

    /// Three more archive styles: DWD product files (padded `;` fields, YYYYMMDDHH,
    /// quality and end-of-record columns), Meteostat (no header, date and hour
    /// columns) and Open-Meteo (a metadata block, a blank line, then the table).
    #[test]
    fn dwd_meteostat_and_open_meteo() {
        let dwd = "STATIONS_ID;MESS_DATUM;QN_9;TT_TU;RF_TU;eor\n        3;1950040101;    5;   5.7;  83.0;eor\n\
                   3;1950040102;    5;   5.2;  85.0;eor\n";
        let found = flags(dwd);
        assert_eq!(value(&found, "--time"), Some("MESS_DATUM"));
        assert_eq!(value(&found, "--time-format"), Some("%Y%m%d%H"));
        assert_eq!(value(&found, "--measures"), Some("TT_TU,RF_TU"));
        let meteostat = "2020-01-01,0,7.2,4.2,81,,\n2020-01-01,1,7.0,4.4,83,,\n2020-01-01,2,6.8,4.5,85,,\n";
        let found = flags(meteostat);
        assert_eq!(value(&found, "--time"), Some("0,1"));
        assert_eq!(value(&found, "--time-format"), Some("%Y-%m-%d %H"));
        assert_eq!(value(&found, "--measures"), Some("2,3,4"));
        assert!(found.iter().any(|(flag, _)| flag == "--station-from-file"));
        let open_meteo = "latitude,longitude,elevation,timezone\n52.52,13.41,38.0,GMT\n\n\
                          time,temperature_2m (C),rain (mm)\n2023-01-01T00:00,1.2,0\n2023-01-01T01:00,1.0,0.1\n";
        let found = flags(open_meteo);
        assert_eq!(value(&found, "--skip-lines"), Some("3"));
        assert_eq!(value(&found, "--time"), Some("time"));
        assert_eq!(value(&found, "--measures"), Some("temperature_2m (C),rain (mm)"));
    }

    /// Values of 9s that stand out in a measure column are suggested as `--na`, the
    /// default ones too; one that is data in another column is given per column; 9s
    /// among values of their size are data.
    #[test]
    fn sentinels_of_nines() {
        let text = "station,date,t,p,rh,pm25\nA,2020-01-01,12.5,1013,55,999\nA,2020-01-02,-99.9,999999,99.9,500\n\
                    A,2020-01-03,-9999,1012,98,800\nA,2020-01-04,999,99999,999.9,-999\n";
        let found = flags(text);
        assert_eq!(value(&found, "--measures"), Some("t,p,rh,pm25"));
        assert_eq!(value(&found, "--na"), Some("-9999,-99.9,t=999,99999,999999,999.9"));
        assert!(sentinel_like(-9900.0) && sentinel_like(99.9) && !sentinel_like(99.0) && !sentinel_like(9998.0));
    }

    /// A GHCN-Daily sample of a few lines is a variable-column table when its (station,
    /// date) key repeats or its codes are GHCN's; a long table with a column of
    /// upper-case codes (wind directions) stays long.
    #[test]
    fn variable_from_a_short_sample() {
        let five = "USW1,20200101,TMAX,56,,,W,2400\nUSW1,20200101,TMIN,-22,,,W,2400\nUSW1,20200101,PRCP,0,,,W,2400\n\
                    USW1,20200101,SNOW,0,,,W,\nUSW1,20200102,TMAX,72,,,W,2400\n";
        let found = flags(five);
        assert_eq!(value(&found, "--variable-column"), Some("2"));
        assert_eq!(value(&found, "--measures"), Some("TMAX,TMIN,PRCP,SNOW"));
        let found = flags("USW1,20200101,TMAX,56\nUSW1,20200102,TMIN,-22\n");
        assert_eq!(value(&found, "--variable-column"), Some("2"), "GHCN codes on distinct days");
        let wind = "A,20200101,NNE,3.5\nA,20200102,SW,4.0\nA,20200103,N,1.5\nA,20200104,E,2.5\nA,20200105,W,0.5\n";
        let found = inspect(wind.as_bytes(), true, &Schema::default());
        assert_eq!(found.layout, "long");
        assert_eq!(value(&found.flags, "--measures"), Some("3"));
    }
}
