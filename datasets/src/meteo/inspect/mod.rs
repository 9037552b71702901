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
//! measure's values (9s such as `-9999` or `999.9`, global or per column). What it
//! leaves out or takes on weak evidence (empty columns, 0/1 flag columns, numbers with a
//! comma in a file of decimal points) it says in [`Inspection::notes`]. It never reads
//! past the sample and never writes.
//!
//! Here: the column kinds and the guessing state; each guess in its own file
//! (`layout.rs`, `station.rs`, `time.rs`, `measures.rs`), in the order above.

use super::fields::parse_timestamp;
use super::period::PeriodPattern;
use super::schema::{Delimiter, MissingValues, Schema};
use super::sniff::{Sniffed, sniff};
use super::timefmt::TimeFormat;

mod layout;
mod measures;
mod station;
mod time;

#[cfg(test)]
mod archive_tests;
#[cfg(test)]
mod portal_tests;
#[cfg(test)]
mod tests;

/// Formats tried on date columns, then on time-of-day columns.
/// A format that names the hour holds the time of day too. `%Y` matches four digits
/// only (see [`matches_format`]); a two-digit year (a Davis WeatherLink export's
/// `01/01/20`) is `%y`, 1969–2068. Month names in any case (Met Éireann's
/// `01-jan-1942 00:00`) are `%b`; a twelve-hour clock after a date (an Onset HOBO
/// logger's `07/14/17 01:00:00 PM`) is `%I … %p`.
const DATE_FORMATS: [&str; 27] = [
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
    "%d.%m.%y",
    "%m/%d/%y",
    "%d/%m/%y",
    "%d.%m.%y %H:%M",
    "%m/%d/%y %H:%M",
    "%d/%m/%y %H:%M",
    "%d-%b-%Y %H:%M",
    "%d-%b-%Y",
    "%d %b %Y %H:%M",
    "%d %b %Y",
    "%b %d %Y",
    "%m/%d/%y %I:%M:%S %p",
    "%m/%d/%y %I:%M %p",
    "%m/%d/%Y %I:%M:%S %p",
    "%m/%d/%Y %I:%M %p",
];
/// Times of day: 24-hour clocks, then 12-hour ones (`1:05 PM`; WeatherLink's `12:05a`).
const TIME_FORMATS: [&str; 6] = ["%H:%M", "%H:%M:%S", "%H%M", "%I:%M %p", "%I:%M:%S %p", "%I:%M%p"];

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
    /// What the guess left out that a user may want, each a sentence naming the flag
    /// that adds it back.
    pub notes: Vec<String>,
}

/// Inspects the start of an input (BOM removed; `complete` when it is all of it).
pub fn inspect(start: &[u8], complete: bool, schema: &Schema) -> Inspection {
    let sniffed = sniff(start, complete, schema);
    let (names, body) = match sniffed.header {
        true => (sniffed.rows.first().cloned().unwrap_or_default(), sniffed.rows.get(1..).unwrap_or_default()),
        false => ((0..sniffed.body_fields).map(|i| format!("column {}", i + 1)).collect(), &sniffed.rows[..]),
    };
    let decimal_comma = sniffed.decimal_comma;
    // A short row is a note or an error (BADC-CSV's `end data`): it types nothing.
    let values: Vec<Vec<&str>> = (0..names.len())
        .map(|index| {
            let full = body.iter().filter(|row| row.len() >= sniffed.body_fields);
            full.filter_map(|row| row.get(index).map(String::as_str)).collect()
        })
        .collect();
    let file_word = missing_word(&values, decimal_comma, &schema.missing);
    let mut missing = schema.missing.clone();
    missing.tokens.extend(file_word.clone());
    let columns: Vec<Column> = names
        .iter()
        .enumerate()
        .map(|(index, name)| {
            // A blank or repeated name names no column: its number does; nor does one
            // with a comma, which would split `--measures` (HOBO's `Temp, °F`).
            let unique = names.iter().filter(|other| *other == name).count() == 1;
            let named = sniffed.header && !name.is_empty() && !name.contains(',') && unique;
            let reference = if named { name.clone() } else { index.to_string() };
            Column { name: name.clone(), reference, kind: kind_of(&values[index], decimal_comma, &missing) }
        })
        .collect();
    let mut guess = Guess {
        sniffed: &sniffed,
        columns: &columns,
        body,
        used: Vec::new(),
        measured: Vec::new(),
        missing_words: file_word.into_iter().collect(),
        flags: Vec::new(),
        notes: Vec::new(),
    };
    let layout = guess.all(decimal_comma, &schema.missing);
    let (flags, notes) = (guess.flags, guess.notes);
    Inspection { sniffed, columns, layout, flags, notes }
}

/// A word that stands for a missing value throughout a file (the Iowa Environmental
/// Mesonet's `M`): one column holds nothing else, and another holds it among numbers,
/// however few (a gust reported once in four hours). Read as missing everywhere, it
/// makes the second column numbers and the first empty.
fn missing_word<'a>(values: &[Vec<&'a str>], decimal_comma: bool, missing: &MissingValues) -> Option<String> {
    let usual = |v: &str| missing.tokens.iter().any(|token| token.eq_ignore_ascii_case(v));
    let word = |v: &str| {
        (1..=LONGEST_WORD).contains(&v.len()) && v.chars().all(|c| c.is_ascii_graphic() && !c.is_ascii_digit())
    };
    let filled_with = |column: &[&'a str]| -> Option<&'a str> {
        let first = column.iter().copied().find(|v| !usual(v))?;
        let only = column.iter().filter(|v| !usual(v)).count() >= 2 && column.iter().all(|v| usual(v) || *v == first);
        (only && word(first)).then_some(first)
    };
    let number =
        |v: &str| super::fields::parse_measure(v.as_bytes(), decimal_comma, missing).is_ok_and(|n| n.is_some());
    let candidates: Vec<(usize, &str)> =
        values.iter().enumerate().filter_map(|(index, column)| filled_with(column).map(|w| (index, w))).collect();
    let among_numbers = |index: usize, w: &str| {
        values.iter().enumerate().any(|(other, column)| {
            other != index
                && column.contains(&w)
                && column.iter().any(|v| number(v))
                && column.iter().all(|v| usual(v) || *v == w || number(v))
        })
    };
    candidates.into_iter().find(|&(index, w)| among_numbers(index, w)).map(|(_, w)| w.to_owned())
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
    // ISO 8601's basic form with a `T` (meteoblue's `20200101T0000`).
    for (length, format) in [(13, "%Y%m%dT%H%M"), (15, "%Y%m%dT%H%M%S")] {
        let basic = |v: &str| {
            v.len() == length && v.as_bytes()[8] == b'T' && v.bytes().filter(u8::is_ascii_digit).count() == length - 1
        };
        if all(&basic) && all(&|v| matches_format(format, v)) {
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

/// Whether `value` reads in `format`; a `%Y` must be written with four digits (chrono
/// would read `01/01/20` as the year 20).
fn matches_format(format: &str, value: &str) -> bool {
    let four_digits = || value.split(|c: char| !c.is_ascii_digit()).any(|run| run.len() >= 4);
    (!format.contains("%Y") || four_digits())
        && TimeFormat::new(format).is_ok_and(|compiled| compiled.parse(value).is_ok())
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
    /// [`Inspection::notes`].
    notes: Vec<String>,
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
        if self.sniffed.encoding != encoding_rs::UTF_8 {
            self.flag("--encoding", Some(self.sniffed.encoding.name().to_ascii_lowercase()));
        }
    }

    /// The first free column of a kind named one of `names` (any case, without its
    /// unit), or named so in one of the languages of a name written in two with a `/`
    /// between them (the Hong Kong Observatory's `年/Year`).
    fn find(&self, names: &[&str], kind: impl Fn(&ColumnKind) -> bool) -> Option<usize> {
        let named = |column: &Column| {
            let name = super::source::without_unit(&column.name).to_lowercase();
            let mut parts = std::iter::once(name.as_str()).chain(name.split('/').map(str::trim));
            parts.any(|part| names.contains(&part))
        };
        (0..self.columns.len())
            .find(|&i| !self.used.contains(&i) && named(&self.columns[i]) && kind(&self.columns[i].kind))
    }

    fn take(&mut self, index: usize) -> String {
        self.used.push(index);
        self.columns[index].reference.clone()
    }
}

/// `text` as one shell word, as the printed command quotes it (`'Water Level=L'`).
fn shell_quoted(text: &str) -> String {
    let plain = !text.is_empty() && text.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.,/:+=@".contains(&b));
    if plain { text.to_owned() } else { format!("'{}'", text.replace('\'', "'\\''")) }
}

/// Appends to `set` the characters of `more` it lacks.
fn add_new(set: &mut String, more: &str) {
    for c in more.chars() {
        if !set.contains(c) {
            set.push(c);
        }
    }
}
