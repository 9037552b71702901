//! The schema mapping: which CSV columns give an [`super::Observation`]'s station, time
//! and measures, how the file is delimited, and which values mean "missing".
//!
//! Columns are named ([`ColumnRef::Name`], needs a header) or numbered from 0
//! ([`ColumnRef::Index`]). [`Schema::default`] is the generator's own layout; presets
//! ([`Schema::preset`]) fit the real files in `../shared/data/weather`. A schema is
//! resolved against the header by `reader.rs`; a name that is absent is an
//! [`Error::Schema`] listing the columns that exist.

pub use encoding_rs::Encoding;

use crate::error::{Error, Result};

/// A column of the input: by header name or by 0-based position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnRef {
    /// Header name, compared exactly.
    Name(String),
    /// 0-based position in the row.
    Index(usize),
}

impl ColumnRef {
    /// Parses a command-line column: a number is a 0-based index, anything else a name.
    pub fn parse(text: &str) -> Self {
        match text.trim().parse::<usize>() {
            Ok(index) => ColumnRef::Index(index),
            Err(_) => ColumnRef::Name(text.trim().to_owned()),
        }
    }

    fn name(name: &str) -> Self {
        ColumnRef::Name(name.to_owned())
    }
}

/// Where the station comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StationSpec {
    /// A column holding the station name.
    Column(ColumnRef),
    /// One station for the whole file (files of a single site).
    Constant(String),
    /// The file's name without its extensions (`berlin.csv.gz` → `berlin`).
    FileName,
    /// A field of a preamble line: 1-based line of the file, 1-based field in it.
    Preamble {
        /// 1-based line, counted from the file's first line.
        line: usize,
        /// 1-based field of that line (split by the delimiter).
        field: usize,
    },
}

impl StationSpec {
    /// The station of a file named `path` ([`StationSpec::FileName`]).
    pub fn file_stem(path: &str) -> String {
        let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
        let name = name.strip_suffix(".gz").or_else(|| name.strip_suffix(".zst")).unwrap_or(name);
        name.rsplit_once('.').map_or(name, |(stem, _)| stem).to_owned()
    }
}

/// Where the time comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimeSpec {
    /// One column: integer seconds since the epoch, or `YYYY-MM-DD[(T| )HH:MM[:SS]][Z|±HH:MM]`
    /// (`/` also accepted between date parts).
    Timestamp(ColumnRef),
    /// Separate integer columns; no hour column means midnight.
    Parts {
        /// Year column.
        year: ColumnRef,
        /// Month column (1–12).
        month: ColumnRef,
        /// Day column (1–31, checked against the month).
        day: ColumnRef,
        /// Hour column (0–23), if any.
        hour: Option<ColumnRef>,
    },
    /// One or more columns joined with a space, then parsed with `format` (strftime
    /// style, see `timefmt.rs`), or as [`TimeSpec::Timestamp`] without a format.
    Joined {
        /// The columns, in the order they are joined.
        columns: Vec<ColumnRef>,
        /// The strftime-style format, if any.
        format: Option<String>,
    },
}

/// The field delimiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delimiter {
    /// Chosen from the first line: the most frequent of `,` `;` tab outside quotes.
    Auto,
    /// This byte.
    Byte(u8),
    /// Runs of spaces and tabs (whitespace-aligned columns, as in ISD-Lite).
    Whitespace,
}

/// Lines before the header (station metadata, units, comments).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preamble {
    /// The leading lines whose field count differs from the body's.
    Auto,
    /// Exactly this many lines.
    Lines(usize),
}

/// The text encoding of the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextEncoding {
    /// UTF-16 after a UTF-16 byte order mark; else UTF-8 when the start of the input is
    /// valid UTF-8, else the encoding `chardetng` guesses from it (Windows-1252 for
    /// Western text; `sniff::sample_encoding`).
    Auto,
    /// This encoding (UTF-8 input is passed through unchanged).
    Named(&'static encoding_rs::Encoding),
}

/// The IANA time zone `name` (`Europe/Berlin`, `America/Denver`, `UTC`).
pub fn time_zone(name: &str) -> Result<chrono_tz::Tz> {
    name.trim().parse().map_err(|_| {
        Error::Argument(format!(
            "unknown time zone {name:?}; give an IANA name such as Europe/Berlin or America/Denver"
        ))
    })
}

impl TextEncoding {
    /// An encoding by its WHATWG label (`latin1`, `windows-1250`, `utf-8`, …).
    pub fn from_label(label: &str) -> Result<Self> {
        encoding_rs::Encoding::for_label(label.trim().as_bytes()).map(TextEncoding::Named).ok_or_else(|| {
            Error::Argument(format!("unknown text encoding {label:?} (try latin1, windows-1250, utf-8)"))
        })
    }
}

/// How rows map to observations.
#[derive(Debug, Clone, PartialEq)]
pub enum Layout {
    /// One observation per row (the measures are columns).
    Long,
    /// One row per station (or per year), one column per period: each period column
    /// whose header matches `pattern` becomes one observation of the measure `measure`.
    Wide {
        /// How period columns are named.
        pattern: super::period::PeriodPattern,
        /// The name of the one measure the cells hold.
        measure: String,
    },
    /// One row per (station, time, element): rows whose `variable` column holds one of
    /// `elements` are gathered into one observation per (station, time), the `value`
    /// column giving the measure.
    Variable {
        /// The column naming the element (GHCN-Daily `ELEMENT`).
        variable: ColumnRef,
        /// The column holding the value.
        value: ColumnRef,
        /// The elements kept, in measure order.
        elements: Vec<String>,
    },
}

/// Whether the first row is a header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderMode {
    /// A header when no field of the first row parses as a number.
    Auto,
    /// The first row is a header.
    Present,
    /// There is no header; every row is data.
    Absent,
}

/// Which field values mean "missing" (a field that is missing is not an error), and
/// which text that is no plain number still is a value: a word standing for one, or a
/// number followed by its flag.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MissingValues {
    /// Tokens compared ASCII-case-insensitively after trimming spaces (`""` = empty).
    pub tokens: Vec<String>,
    /// Numbers that mean missing (compared exactly after parsing), e.g. -999.
    pub sentinels: Vec<f64>,
    /// Words that stand for a number, compared as tokens are (NOAA's `T`, a trace of
    /// precipitation, as 0).
    #[serde(default)]
    pub words: Vec<(String, f64)>,
    /// Characters that may follow a number as its flag (`s` of NOAA LCD's `27s`, `*`
    /// and `#` of the Met Office's `8.6*`, `73.0#`); empty: none may.
    #[serde(default)]
    pub suffix_flags: String,
    /// Those of [`MissingValues::suffix_flags`] that make the value missing.
    #[serde(default)]
    pub dropped_suffix_flags: String,
}

impl Default for MissingValues {
    /// `""`, `NA`, `N/A`, `NaN`, `null`; sentinels -999, -9999, -99999.
    fn default() -> Self {
        let tokens = ["", "NA", "N/A", "NaN", "null"];
        MissingValues {
            tokens: tokens.iter().map(|token| (*token).to_owned()).collect(),
            sentinels: vec![-999.0, -9999.0, -99999.0],
            words: Vec::new(),
            suffix_flags: String::new(),
            dropped_suffix_flags: String::new(),
        }
    }
}

/// The full mapping from a CSV file to observations.
#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    /// Field delimiter.
    pub delimiter: Delimiter,
    /// Header handling.
    pub header: HeaderMode,
    /// Station source.
    pub station: StationSpec,
    /// Time source.
    pub time: TimeSpec,
    /// Measure columns, in the order they take in [`super::Observation::measures`].
    pub measures: Vec<ColumnRef>,
    /// Missing-value markers.
    pub missing: MissingValues,
    /// Lines before the header.
    pub preamble: Preamble,
    /// Long, wide or variable-column rows.
    pub layout: Layout,
    /// Seconds east of UTC of times written without a zone (e.g. 3600 for UTC+01:00).
    pub utc_offset_seconds: i64,
    /// The time zone of times written without one (daylight saving included); wins
    /// over `utc_offset_seconds`.
    pub time_zone: Option<chrono_tz::Tz>,
    /// Text encoding.
    pub encoding: TextEncoding,
    /// Sentinels of single value columns, beyond [`Schema::missing`].
    pub column_sentinels: Vec<(ColumnRef, Vec<f64>)>,
    /// Quality flags: (value column, its flag column).
    pub flags: Vec<(ColumnRef, ColumnRef)>,
    /// Flag values that drop the value (it counts as missing); empty: any non-empty flag.
    pub drop_flags: Vec<String>,
    /// The worksheet of spreadsheet inputs, by name or number from 1 (`None`: the
    /// first; see `sheet_input.rs`).
    pub sheet: Option<String>,
    /// The members of zip archive inputs to read: a pattern of their names (`None`:
    /// their data files; see `zip_input.rs`).
    pub member: Option<String>,
}

impl Default for Schema {
    /// The generator's layout: column 0 station, column 1 timestamp, columns 2–6 the
    /// five measures (temp, pres, dewp, rain, wspm); header auto-detected, delimiter
    /// auto-detected, default missing markers.
    fn default() -> Self {
        Schema {
            delimiter: Delimiter::Auto,
            header: HeaderMode::Auto,
            station: StationSpec::Column(ColumnRef::Index(0)),
            time: TimeSpec::Timestamp(ColumnRef::Index(1)),
            measures: (2..2 + super::DEFAULT_MEASURES).map(ColumnRef::Index).collect(),
            missing: MissingValues::default(),
            preamble: Preamble::Auto,
            layout: Layout::Long,
            utc_offset_seconds: 0,
            time_zone: None,
            encoding: TextEncoding::Auto,
            column_sentinels: Vec::new(),
            flags: Vec::new(),
            drop_flags: Vec::new(),
            sheet: None,
            member: None,
        }
    }
}

/// The presets' names, for help texts and errors.
pub const PRESET_NAMES: [&str; 5] =
    ["beijing", "nycflights13", "vega-seattle", "vega-seattle-hourly", "vega-sf-hourly"];

impl Schema {
    /// A schema for one of the real files (see [`PRESET_NAMES`]):
    ///
    /// - `beijing`: `beijing_multisite_all_stations.csv`; station column `station`, time
    ///   from `year,month,day,hour` (local civil time taken as UTC), measures
    ///   `TEMP,PRES,DEWP,RAIN,WSPM`.
    /// - `nycflights13`: `weather.csv`; station `origin`, time `time_hour` (UTC), measures
    ///   `temp,dewp,pressure,precip,wind_speed` (US units, as in the file).
    /// - `vega-seattle`: `seattle-weather.csv` (daily); constant station `seattle`, time
    ///   `date`, measures `precipitation,temp_max,temp_min,wind`.
    /// - `vega-seattle-hourly` / `vega-sf-hourly`: `seattle-temps.csv` / `sf-temps.csv`;
    ///   constant station, time `date`, measure `temp`.
    pub fn preset(name: &str) -> Result<Schema> {
        match name {
            "beijing" => Ok(Self::beijing()),
            "nycflights13" => Ok(Self::nycflights13()),
            "vega-seattle" => Ok(Self::named("seattle", "date", &["precipitation", "temp_max", "temp_min", "wind"])),
            "vega-seattle-hourly" => Ok(Self::named("seattle", "date", &["temp"])),
            "vega-sf-hourly" => Ok(Self::named("san-francisco", "date", &["temp"])),
            other => {
                Err(Error::Argument(format!("unknown preset {other:?}; known presets: {}", PRESET_NAMES.join(", "))))
            }
        }
    }

    fn beijing() -> Schema {
        Schema {
            header: HeaderMode::Present,
            station: StationSpec::Column(ColumnRef::name("station")),
            time: TimeSpec::Parts {
                year: ColumnRef::name("year"),
                month: ColumnRef::name("month"),
                day: ColumnRef::name("day"),
                hour: Some(ColumnRef::name("hour")),
            },
            measures: names(&["TEMP", "PRES", "DEWP", "RAIN", "WSPM"]),
            ..Schema::default()
        }
    }

    fn nycflights13() -> Schema {
        Schema {
            header: HeaderMode::Present,
            station: StationSpec::Column(ColumnRef::name("origin")),
            time: TimeSpec::Timestamp(ColumnRef::name("time_hour")),
            measures: names(&["temp", "dewp", "pressure", "precip", "wind_speed"]),
            ..Schema::default()
        }
    }

    fn named(station: &str, time: &str, measures: &[&str]) -> Schema {
        Schema {
            header: HeaderMode::Present,
            station: StationSpec::Constant(station.to_owned()),
            time: TimeSpec::Timestamp(ColumnRef::name(time)),
            measures: names(measures),
            ..Schema::default()
        }
    }

    /// Checks what can be checked without the input: at least one measure.
    pub fn validate(&self) -> Result<()> {
        if let Layout::Variable { elements, .. } = &self.layout
            && elements.is_empty()
        {
            return Err(Error::Schema("the variable-column layout names no element to keep (--measures)".into()));
        }
        if self.measures.is_empty() && self.layout == Layout::Long {
            return Err(Error::Schema("the schema names no measure column".into()));
        }
        Ok(())
    }

    /// True when some column is referenced by name (the file then needs a header).
    pub fn uses_names(&self) -> bool {
        self.columns().iter().any(|column| matches!(column, ColumnRef::Name(_)))
    }

    /// Every column the schema reads: station, time parts, measures.
    pub fn columns(&self) -> Vec<&ColumnRef> {
        let mut columns = Vec::new();
        if let StationSpec::Column(column) = &self.station {
            columns.push(column);
        }
        match &self.time {
            TimeSpec::Timestamp(column) => columns.push(column),
            TimeSpec::Parts { year, month, day, hour } => {
                columns.extend([year, month, day]);
                columns.extend(hour.as_ref());
            }
            TimeSpec::Joined { columns: joined, .. } => columns.extend(joined),
        }
        columns.extend(self.measures.iter());
        if let Layout::Variable { variable, value, .. } = &self.layout {
            columns.extend([variable, value]);
        }
        columns
    }
}

fn names(names: &[&str]) -> Vec<ColumnRef> {
    names.iter().map(|name| ColumnRef::name(name)).collect()
}
