//! The column-mapping flags of `quire load-csv` and the [`Schema`] they build: a
//! preset or the generator's layout, changed flag by flag (station, time and its
//! format, measures, delimiter, header, preamble, sentinels, encoding, wide and
//! variable-column layouts). `--inspect` prints these same flags (`inspect.rs`).

use anyhow::{Context, Result, bail};
use quiredb_datasets::meteo::schema::PRESET_NAMES;
use quiredb_datasets::meteo::{
    ColumnRef, Delimiter, HeaderMode, Layout, PeriodPattern, Preamble, Schema, StationSpec, TextEncoding, TimeSpec,
};

/// How the columns of the input map to observations.
#[derive(clap::Args, Default, Clone)]
pub struct MappingArgs {
    /// Column mapping of a known file: one of beijing, nycflights13, vega-seattle,
    /// vega-seattle-hourly, vega-sf-hourly. Without it: the generator's layout
    /// (station, time, five measures), changed by the flags below.
    #[arg(long)]
    pub preset: Option<String>,
    /// Station column (name, or number from 0).
    #[arg(long, conflicts_with_all = ["station_name", "station_from_file", "station_from_preamble"])]
    pub station: Option<String>,
    /// One station name for the whole file, when it has no station column.
    #[arg(long, conflicts_with_all = ["station_from_file", "station_from_preamble"])]
    pub station_name: Option<String>,
    /// The station is the file's name without extensions (`berlin.csv.gz` → berlin).
    #[arg(long, conflicts_with = "station_from_preamble")]
    pub station_from_file: bool,
    /// The station is field COL of preamble line ROW (both from 1), e.g. 1,2.
    #[arg(long, value_name = "ROW,COL")]
    pub station_from_preamble: Option<String>,
    /// Time column; or year,month,day[,hour] columns; or date,time columns joined
    /// with a space (any number of columns with --time-format).
    #[arg(long)]
    pub time: Option<String>,
    /// strftime-style format of the (joined) time columns, e.g. "%m/%d/%Y %H:%M",
    /// "%Y %j" (day of year), "%s" (Unix seconds), "%Y-%m-%dT%H:%M%:z"; 24:00 is the
    /// end of the day. Without it: ISO 8601 (T or space, Z or ±HH:MM) or Unix seconds.
    #[arg(long)]
    pub time_format: Option<String>,
    /// UTC offset of times written without a zone, e.g. +01:00 or -7 (default: UTC).
    #[arg(long, allow_hyphen_values = true, conflicts_with = "time_zone")]
    pub utc_offset: Option<String>,
    /// Time zone of times written without one, with its daylight-saving rules (an IANA
    /// name: Europe/Berlin); a repeated autumn hour is its first occurrence.
    #[arg(long)]
    pub time_zone: Option<String>,
    /// Measure columns, comma-separated, in order (a unit after the name in the header
    /// may be left out: TEMP finds "TEMP (C)"). With --variable-column: the elements.
    #[arg(long)]
    pub measures: Option<String>,
    /// Field delimiter: one character, or "whitespace" for aligned columns (words after
    /// the last column, as the Met Office's "Provisional", are a remark, no field);
    /// detected by default.
    #[arg(long)]
    pub delimiter: Option<String>,
    /// The first row is data, not a header (default: detected).
    #[arg(long, conflicts_with = "header")]
    pub no_header: bool,
    /// The first row is a header (default: detected).
    #[arg(long)]
    pub header: bool,
    /// Lines before the header to skip (default: detected — the leading lines with
    /// fewer fields than the body, or starting with #).
    #[arg(long)]
    pub skip_lines: Option<usize>,
    /// More values meaning "missing", comma-separated: numbers (-99999,9999.9) or
    /// words (M,---), added to "", NA, N/A, NaN, null, -999, -9999, -99999; or
    /// COLUMN=NUMBER for one column only (TEMP=99.9).
    #[arg(long, allow_hyphen_values = true)]
    pub na: Option<String>,
    /// Quality flag columns beside values, VALUE=FLAG, comma-separated: a value whose
    /// flag is set (see --drop-flags) counts as missing.
    #[arg(long, value_name = "VALUE=FLAG,…")]
    pub flag_column: Option<String>,
    /// With --flag-column or --suffix-flags: the flags that drop a value (it counts as
    /// missing), comma-separated (default: any set flag of a flag column, no flag after
    /// a number).
    #[arg(long)]
    pub drop_flags: Option<String>,
    /// Characters that may follow a number as its flag, e.g. "s" (NOAA LCD's 27s, a
    /// suspect value) or "*#" (the Met Office's 8.6*, an estimate): the number is the
    /// value, missing when --drop-flags names a flag it carries.
    #[arg(long, value_name = "CHARACTERS")]
    pub suffix_flags: Option<String>,
    /// Words that stand for a number, WORD=NUMBER, comma-separated, e.g. T=0 (NOAA's
    /// trace of precipitation).
    #[arg(long, value_name = "WORD=NUMBER,…", allow_hyphen_values = true)]
    pub word_value: Option<String>,
    /// Text encoding (latin1, windows-1250, shift_jis, gbk, utf-8, utf-16le, …);
    /// default: UTF-16 when the file starts with a UTF-16 byte order mark, else UTF-8,
    /// else the encoding guessed from the file's start (Windows-1252 for Western text).
    #[arg(long)]
    pub encoding: Option<String>,
    /// Worksheet of spreadsheet inputs (.xlsx, .ods, …): its name, or its number from
    /// 1; default: the first.
    #[arg(long)]
    pub sheet: Option<String>,
    /// Members of zip archives to load: a pattern of their names (`*`, `?`, `[…]`),
    /// e.g. 'produkt_*'; default: the archive's data files.
    #[arg(long, value_name = "PATTERN")]
    pub member: Option<String>,
    /// A wide table: columns named by period (YYYY_MM, YYYY-MM, YYYYMM, YYYYMMDD,
    /// YYYY-MM-DD, months, days) melted into one observation per cell; with months,
    /// --time names the year column; with days (1…31, D01…), the year and month columns.
    #[arg(long, value_name = "PATTERN")]
    pub wide: Option<String>,
    /// With --wide: the name of the measure the cells hold.
    #[arg(long, default_value = "value", requires = "wide")]
    pub wide_measure: String,
    /// A variable-column table (station,date,element,value): the element column; the
    /// elements in --measures become the measures.
    #[arg(long, requires_all = ["value_column", "measures"], conflicts_with = "wide")]
    pub variable_column: Option<String>,
    /// With --variable-column: the value column.
    #[arg(long, requires = "variable_column")]
    pub value_column: Option<String>,
}

impl MappingArgs {
    /// The schema these flags describe.
    pub fn schema(&self) -> Result<Schema> {
        let mut schema = match &self.preset {
            Some(name) => Schema::preset(name).with_context(|| format!("known: {}", PRESET_NAMES.join(", ")))?,
            None => Schema::default(),
        };
        self.apply_station(&mut schema)?;
        self.apply_time(&mut schema)?;
        self.apply_text(&mut schema)?;
        self.apply_values(&mut schema)?;
        self.apply_layout(&mut schema)?;
        Ok(schema)
    }

    fn apply_time(&self, schema: &mut Schema) -> Result<()> {
        if let Some(time) = &self.time {
            schema.time = time_spec(time, self.time_format.as_deref())?;
        } else if let (Some(format), TimeSpec::Timestamp(column)) = (&self.time_format, &schema.time) {
            schema.time = TimeSpec::Joined { columns: vec![column.clone()], format: Some(format.clone()) };
        }
        if let Some(offset) = &self.utc_offset {
            schema.utc_offset_seconds = utc_offset(offset)?;
        }
        if let Some(name) = &self.time_zone {
            schema.time_zone = Some(quiredb_datasets::meteo::schema::time_zone(name)?);
        }
        Ok(())
    }

    /// Delimiter, header, preamble and encoding.
    fn apply_text(&self, schema: &mut Schema) -> Result<()> {
        if let Some(delimiter) = &self.delimiter {
            schema.delimiter = delimiter_of(delimiter)?;
        }
        if self.no_header {
            schema.header = HeaderMode::Absent;
        } else if self.header {
            schema.header = HeaderMode::Present;
        }
        if let Some(lines) = self.skip_lines {
            schema.preamble = Preamble::Lines(lines);
        }
        if let Some(label) = &self.encoding {
            schema.encoding = TextEncoding::from_label(label)?;
        }
        schema.sheet.clone_from(&self.sheet);
        schema.member.clone_from(&self.member);
        Ok(())
    }

    /// Missing markers and quality flags.
    fn apply_values(&self, schema: &mut Schema) -> Result<()> {
        if let Some(list) = &self.na {
            add_missing(schema, list)?;
        }
        if let Some(list) = &self.flag_column {
            for pair in list.split(',') {
                let Some((value, flag)) = pair.split_once('=') else {
                    bail!("--flag-column takes VALUE=FLAG pairs, got {pair:?}");
                };
                schema.flags.push((ColumnRef::parse(value), ColumnRef::parse(flag)));
            }
        }
        if let Some(list) = &self.word_value {
            for pair in list.split(',') {
                let parsed = pair.split_once('=').and_then(|(word, number)| Some((word, number.trim().parse().ok()?)));
                let Some((word, number)) =
                    parsed.filter(|(word, number): &(&str, f64)| !word.trim().is_empty() && number.is_finite())
                else {
                    bail!("--word-value takes WORD=NUMBER pairs, got {pair:?}");
                };
                schema.missing.words.push((word.trim().to_owned(), number));
            }
        }
        if let Some(flags) = &self.suffix_flags {
            schema.missing.suffix_flags = suffix_flags(flags)?;
        }
        if let Some(list) = &self.drop_flags {
            if self.flag_column.is_none() && self.suffix_flags.is_none() {
                bail!("--drop-flags needs --flag-column or --suffix-flags: it names the flags that drop a value");
            }
            schema.drop_flags = list.split(',').map(|flag| flag.trim().to_owned()).collect();
            let suffix = |flag: &&String| flag.len() == 1 && schema.missing.suffix_flags.contains(flag.as_str());
            schema.missing.dropped_suffix_flags = schema.drop_flags.iter().filter(suffix).map(String::as_str).collect();
        }
        Ok(())
    }

    fn apply_station(&self, schema: &mut Schema) -> Result<()> {
        if let Some(column) = &self.station {
            schema.station = StationSpec::Column(ColumnRef::parse(column));
        }
        if let Some(name) = &self.station_name {
            schema.station = StationSpec::Constant(name.clone());
        }
        if self.station_from_file {
            schema.station = StationSpec::FileName;
        }
        if let Some(place) = &self.station_from_preamble {
            let parsed =
                place.split_once(',').and_then(|(row, col)| Some((row.trim().parse().ok()?, col.trim().parse().ok()?)));
            let Some((line, field)) = parsed.filter(|&(line, field): &(usize, usize)| line > 0 && field > 0) else {
                bail!("--station-from-preamble takes ROW,COL, both counted from 1, got {place:?}");
            };
            schema.station = StationSpec::Preamble { line, field };
        }
        Ok(())
    }

    fn apply_layout(&self, schema: &mut Schema) -> Result<()> {
        let measures: Option<Vec<String>> =
            self.measures.as_ref().map(|m| m.split(',').map(|s| s.trim().to_owned()).collect());
        if let Some(pattern) = &self.wide {
            schema.layout =
                Layout::Wide { pattern: PeriodPattern::parse(pattern)?, measure: self.wide_measure.clone() };
            schema.measures.clear();
        } else if let (Some(variable), Some(value)) = (&self.variable_column, &self.value_column) {
            schema.layout = Layout::Variable {
                variable: ColumnRef::parse(variable),
                value: ColumnRef::parse(value),
                elements: measures.unwrap_or_default(),
            };
            schema.measures.clear();
        } else if let Some(measures) = measures {
            schema.measures = measures.iter().map(|m| ColumnRef::parse(m)).collect();
        }
        Ok(())
    }
}

/// `--time`: one column (a timestamp, or with a format), three or four columns
/// (year, month, day, hour), else the columns joined.
fn time_spec(text: &str, format: Option<&str>) -> Result<TimeSpec> {
    let columns: Vec<ColumnRef> = text.split(',').map(ColumnRef::parse).collect();
    if let Some(format) = format {
        return Ok(TimeSpec::Joined { columns, format: Some(format.to_owned()) });
    }
    match columns.len() {
        1 => Ok(TimeSpec::Timestamp(columns.into_iter().next().context("one column")?)),
        2 => Ok(TimeSpec::Joined { columns, format: None }),
        3 | 4 => {
            let mut parts = columns.into_iter();
            let (Some(year), Some(month), Some(day)) = (parts.next(), parts.next(), parts.next()) else {
                bail!("--time takes year,month,day[,hour] columns, got {text:?}");
            };
            Ok(TimeSpec::Parts { year, month, day, hour: parts.next() })
        }
        _ => bail!(
            "--time takes one column, date,time, or year,month,day[,hour] (or any with --time-format), got {text:?}"
        ),
    }
}

/// `+01:00`, `-0700`, `-7`, `Z` → seconds east of UTC.
fn utc_offset(text: &str) -> Result<i64> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("z") || text.eq_ignore_ascii_case("utc") {
        return Ok(0);
    }
    let (sign, rest) = match text.as_bytes().first() {
        Some(b'-') => (-1, &text[1..]),
        Some(b'+') => (1, &text[1..]),
        _ => (1, text),
    };
    let (hours, minutes) = match rest.split_once(':') {
        Some((hours, minutes)) => (hours, minutes),
        None if rest.len() == 4 && rest.is_ascii() => rest.split_at(2),
        None => (rest, "0"),
    };
    let parsed = hours.parse::<i64>().ok().zip(minutes.parse::<i64>().ok());
    match parsed {
        Some((hours, minutes)) if hours <= 14 && minutes < 60 => Ok(sign * (hours * 3600 + minutes * 60)),
        _ => bail!("--utc-offset takes ±HH:MM (e.g. +01:00, -07:00), got {text:?}"),
    }
}

fn delimiter_of(text: &str) -> Result<Delimiter> {
    if ["whitespace", "space", "ws"].contains(&text.to_ascii_lowercase().as_str()) {
        return Ok(Delimiter::Whitespace);
    }
    let text = if text == "\\t" || text.eq_ignore_ascii_case("tab") { "\t" } else { text };
    match text.as_bytes() {
        [byte] if byte.is_ascii() => Ok(Delimiter::Byte(*byte)),
        _ => bail!("--delimiter takes one ASCII character, tab or whitespace, got {text:?}"),
    }
}

/// `--suffix-flags`: the flag characters (commas and spaces between them ignored);
/// none may be part of a number.
fn suffix_flags(text: &str) -> Result<String> {
    let flags: String = text.chars().filter(|c| *c != ',' && !c.is_whitespace()).collect();
    let number_like = |c: char| c.is_ascii_digit() || ".+-".contains(c) || !c.is_ascii_graphic();
    if flags.is_empty() || flags.chars().any(number_like) {
        bail!("--suffix-flags takes characters that are no part of a number (letters, *, #, …), got {text:?}");
    }
    Ok(flags)
}

fn add_missing(schema: &mut Schema, list: &str) -> Result<()> {
    for value in list.split(',').map(str::trim).filter(|value| !value.is_empty()) {
        if let Some((column, number)) = value.split_once('=') {
            let number: f64 = number.trim().parse().with_context(|| format!("--na {value:?}: not a number after ="))?;
            schema.column_sentinels.push((ColumnRef::parse(column), vec![number]));
            continue;
        }
        match value.parse::<f64>() {
            Ok(number) => schema.missing.sentinels.push(number),
            Err(_) => schema.missing.tokens.push(value.to_owned()),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The flags' small parsers: offsets, delimiters, time specs, sentinels.
    #[test]
    fn flag_values_parse() {
        assert_eq!(utc_offset("+01:00").unwrap(), 3600);
        assert_eq!(utc_offset("-0700").unwrap(), -25_200);
        assert_eq!(utc_offset("-7").unwrap(), -25_200);
        assert!(utc_offset("+25:00").is_err());
        assert!(utc_offset("+a€").is_err(), "no panic on a multi-byte character");
        assert_eq!(delimiter_of("whitespace").unwrap(), Delimiter::Whitespace);
        assert_eq!(delimiter_of(";").unwrap(), Delimiter::Byte(b';'));
        assert!(delimiter_of(";;").is_err());
        assert!(matches!(time_spec("date,time", None).unwrap(), TimeSpec::Joined { format: None, .. }));
        assert!(matches!(time_spec("y,m,d", None).unwrap(), TimeSpec::Parts { hour: None, .. }));
        let mut schema = Schema::default();
        add_missing(&mut schema, "-99999,9999.9,M,TEMP=99.9").unwrap();
        assert!(schema.missing.sentinels.contains(&9999.9) && schema.missing.tokens.contains(&"M".to_owned()));
        assert_eq!(schema.column_sentinels, [(ColumnRef::Name("TEMP".into()), vec![99.9])]);
        assert!(add_missing(&mut schema, "TEMP=x").is_err());
    }
}
