//! The measures (numeric columns that are no codes, places, counters or quality
//! flags, and empty columns among them), their flags and words, the R*-tree's
//! dimensions, and sentinels that stand out; notes on what was left out.

use super::{ColumnKind, Guess, MissingValues, add_new};

/// Identifier columns that are neither a station nor a measure (ECA&D's source id,
/// NOAA Global Hourly's call letters, `99999` when there are none).
const ID_NAMES: [&str; 3] = ["souid", "staid", "call_sign"];

/// A record's bookkeeping beside its values (MIDAS Open's version, record status and
/// the hours an observation spans): no measures.
const BOOKKEEPING_NAMES: [&str; 4] = ["version", "version_num", "rec_st_ind", "ob_hour_count"];

/// A station's place, written on each row of some archives (Environment Canada's
/// `Longitude (x)`): no measure.
/// AEMET's `altitud` too.
pub(super) const PLACE_NAMES: [&str; 9] =
    ["lon", "long", "longitude", "lat", "latitude", "elevation", "altitude", "alt", "altitud"];

/// Names of a station's place or of a measure: a place when one value fills the
/// sample (Météo-France's `ALTI`, the height; the Iowa Environmental Mesonet's `alti`
/// is the altimeter setting, which changes).
const PLACE_IF_CONSTANT: [&str; 1] = ["alti"];

/// First words of a calendar column that dates nothing the time does not (the
/// month of the year Météo-France's SYNOP exports add, `mois_de_l_annee`): no measure
/// when the time is found elsewhere.
const CALENDAR_WORDS: [&str; 11] =
    ["month", "mois", "monat", "mes", "year", "annee", "jahr", "week", "semaine", "weekday", "doy"];

/// Words of trace precipitation in a precipitation column: NOAA's `T`, AEMET's `Ip`
/// (inapreciable), `Tr`; read as 0 (`--word-value`).
const TRACE_WORDS: [&str; 4] = ["T", "Ip", "Tr", "TR"];

/// Whether a lower-case name is a precipitation's (or snow's): `prcp`, `Rain`, or
/// the Iowa Environmental Mesonet's `p01i` (inches in 1 hour), `p24m`.
fn names_precipitation(lower: &str) -> bool {
    let bytes = lower.as_bytes();
    let iem = bytes.len() == 4
        && bytes[0] == b'p'
        && bytes[1..3].iter().all(u8::is_ascii_digit)
        && matches!(bytes[3], b'i' | b'm');
    iem || ["prec", "prcp", "rain", "snow"].iter().any(|word| lower.contains(word))
}

/// Names of NOAA CO-OPS's (tides and currents) flag columns beyond its one-letter ones:
/// `O or I (for verified)` counts the samples outside three sigmas (`O`, `F` flat,
/// `R` rate of change, `L` limits, `X`/`N` maximum/minimum exceeded are the others).
const COOPS_FLAG_NAMES: [&str; 1] = ["o or i (for verified)"];

/// Numbers that mean "missing" in weather files without being made of 9s (ISD's -9900).
const OTHER_SENTINELS: [f64; 1] = [-9900.0];

/// Whether a (lower-case) column name is a quality code's (`TMAX_FLAG`, `Q_TG`,
/// `Max Temp Flag`, `QN_9`, JMA's `品質情報`, Met Éireann's `ind`) or another
/// companion's of a value (`GHI source`).
pub(super) fn is_quality_name(lower: &str) -> bool {
    let mut words = crate::meteo::source::without_unit(lower).rsplit([' ', '_']);
    let last_word = words.next().unwrap_or("");
    // A code of a companion (NOAA GHCNh's `temperature_Source_Code`,
    // `temperature_Measurement_Code`).
    let coded = last_word == "code" && words.next().is_some_and(|word| CODED_WORDS.contains(&word));
    ["flag", "qual", "qc", "qn", "品質"].iter().any(|word| lower.contains(word))
        || lower.starts_with("q_")
        || lower == "ind"
        || lower.ends_with("_q")
        || COMPANION_WORDS.contains(&last_word)
        || coded
}

/// Words before `code` in the name of a code describing another column's value.
const CODED_WORDS: [&str; 4] = ["source", "measurement", "report", "method"];

/// Last words of the columns that describe another column's value (TMY3's `GHI
/// source`, `GHI uncert (%)`, GSOD's `TEMP_ATTRIBUTES`, the Japan Meteorological
/// Agency's homogeneity number `均質番号`): no measures, no element codes.
/// The Hong Kong Observatory's `數據完整性/data Completeness` (`C` complete, `#` not).
const COMPANION_WORDS: [&str; 7] = ["source", "uncert", "uncertainty", "unc", "attributes", "completeness", "均質番号"];

/// Whether a column of this kind holds measures.
pub(super) fn is_measure_kind(kind: &ColumnKind) -> bool {
    matches!(kind, ColumnKind::Integer | ColumnKind::Number | ColumnKind::Flagged { .. })
}

/// NOAA's flag of a suspect value after the number (LCD's `27s`): suggested as dropped.
const SUSPECT_FLAG: char = 's';

/// Whether a field is two 9s with decimals of zeros (`99.0`, `-99.00`).
fn two_nines(field: &str) -> bool {
    let field = field.trim();
    let unsigned = field.strip_prefix('-').unwrap_or(field);
    unsigned.strip_prefix("99.").is_some_and(|zeros| !zeros.is_empty() && zeros.bytes().all(|b| b == b'0'))
}

/// A usual "missing" number: three or more 9s with any sign and decimal point (`999`,
/// `-9999`, `999999`, `999.9`, `-99.9`), or one of [`OTHER_SENTINELS`].
pub(super) fn sentinel_like(value: f64) -> bool {
    let digits: Vec<u8> = value.abs().to_string().bytes().filter(|&b| b != b'.').collect();
    (digits.len() >= 3 && digits.iter().all(|&b| b == b'9')) || OTHER_SENTINELS.contains(&value)
}

impl Guess<'_> {
    pub(super) fn measures(&mut self) {
        let flag_runs = self.flags_after_measures();
        let not_a_measure = |index: usize| {
            let name = &self.columns[index].name;
            let lower = name.to_ascii_lowercase();
            let bare = crate::meteo::source::without_unit(name).to_ascii_lowercase();
            let counter = ["no", "eor", "record", "source", "#"].contains(&lower.as_str())
                || BOOKKEEPING_NAMES.contains(&bare.as_str());
            let clock = lower.contains("sunrise") || lower.contains("sunset");
            // A zone's offset in seconds and a weather icon's code (OpenWeatherMap's
            // `timezone`, `weather_icon`) are no measures either.
            let zone_or_icon = lower == "timezone" || lower.ends_with("icon");
            let identifier = ID_NAMES.contains(&lower.as_str()) || bare.ends_with(" id") || bare.ends_with("_id");
            // A row number written by pandas: a first column with a blank name, or `Unnamed: 0`.
            let row_number = (bare.is_empty() && index == 0) || bare.starts_with("unnamed:");
            // An identifier's code written as the column's unit (Météo-France's
            // `communes (code)`, `department (code)`).
            let unit = lower.strip_prefix(bare.as_str()).unwrap_or("").trim();
            let coded = ["(code)", "[code]", "(id)", "[id]"].contains(&unit);
            let calendar =
                bare.split(|c: char| !c.is_alphanumeric()).next().is_some_and(|word| CALENDAR_WORDS.contains(&word));
            is_quality_name(&lower)
                || coded
                || calendar
                || self.paired_code(index).is_some()
                || counter
                || clock
                || zone_or_icon
                || identifier
                || row_number
                || PLACE_NAMES.contains(&bare.as_str())
                || (PLACE_IF_CONSTANT.contains(&bare.as_str()) && self.constant(index))
        };
        // A second date's time of day (USCRN's local `LST_TIME` after `LST_DATE`) and a
        // column of codes are no measures.
        let dates = (0..self.columns.len()).filter(|&i| matches!(self.columns[i].kind, ColumnKind::Date(_)));
        let mut numbers_no_measure: Vec<usize> = dates.filter_map(|date| self.clock_after(date)).collect();
        numbers_no_measure.extend((0..self.columns.len()).filter(|&i| self.is_code(i)));
        numbers_no_measure.extend(flag_runs);
        let measures: Vec<usize> = (0..self.columns.len())
            .filter(|&i| !self.used.contains(&i) && !numbers_no_measure.contains(&i))
            .filter(|&i| is_measure_kind(&self.columns[i].kind))
            .filter(|&i| !not_a_measure(i))
            .collect();
        let named = |i: usize| !self.sniffed.header || !self.columns[i].name.trim().is_empty();
        let empty: Vec<usize> = (0..self.columns.len())
            .filter(|&i| self.columns[i].kind == ColumnKind::Empty && !self.used.contains(&i) && named(i))
            .filter(|&i| !not_a_measure(i))
            .collect();
        let measures = self.with_empty_columns(measures, &empty);
        self.note_comma_numbers();
        self.measured.extend(&measures);
        self.value_words(&measures);
        self.index_measures(&measures);
        let flags: Vec<(usize, usize)> =
            measures.iter().filter_map(|&m| self.quality_column(m).map(|flag| (m, flag))).collect();
        let references: Vec<String> = measures.into_iter().map(|i| self.take(i)).collect();
        self.flag("--measures", Some(references.join(",")));
        self.quality_flags(&flags);
    }

    /// `measures` with the columns of `empty` (empty in the whole sample, named like
    /// no code, flag or place) that stand among them under a header: the nearest
    /// filled columns on either side, quality columns passed over, are measures (a
    /// `snow` column between `tavg` and `prcp` in a sample of summer days; later rows
    /// may fill it). Without a header an empty column among measures is as likely a
    /// status column (IMGW's, blank but for codes) and is left out. A note names the
    /// columns taken and one those left out, with how to change it.
    fn with_empty_columns(&mut self, mut measures: Vec<usize>, empty: &[usize]) -> Vec<usize> {
        let filled = |i: &usize| {
            let column = &self.columns[*i];
            column.kind != ColumnKind::Empty && !is_quality_name(&column.name.to_ascii_lowercase())
        };
        let among = |index: usize| {
            let before = (0..index).rev().find(filled);
            let after = (index + 1..self.columns.len()).find(filled);
            let both = before.zip(after);
            self.sniffed.header
                && both.is_some_and(|(before, after)| measures.contains(&before) && measures.contains(&after))
        };
        let (loaded, left): (Vec<usize>, Vec<usize>) = empty.iter().partition(|&&i| among(i));
        let rows = self.body.len();
        let numbered = if self.sniffed.header { "" } else { " (columns numbered from 0, as --measures reads them)" };
        let names = |columns: &[usize]| {
            let references: Vec<&str> = columns.iter().map(|&i| self.columns[i].reference.as_str()).collect();
            format!("{}{numbered}", references.join(", "))
        };
        if !loaded.is_empty() {
            self.notes.push(format!(
                "{}: empty in the {rows} rows looked at, loaded as measures all the same (later rows may \
                 fill them, as snow in winter); if they hold text, leave them out of --measures",
                names(&loaded)
            ));
        }
        if !left.is_empty() {
            self.notes.push(format!(
                "{}: empty in the {rows} rows looked at and not among the measures; if later rows hold \
                 numbers, add them to --measures",
                names(&left)
            ));
        }
        measures.extend(loaded);
        measures.sort_unstable();
        measures
    }

    /// A note on the text columns of numbers written with a comma (`"1,234"`) in a
    /// file whose numbers have decimal points: a thousands separator, or a decimal
    /// comma? They are no measures rather than a guess.
    fn note_comma_numbers(&mut self) {
        let comma_number = |value: &str| {
            let unsigned = value.strip_prefix(['-', '+']).unwrap_or(value);
            let digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
            unsigned.split_once(',').is_some_and(|(whole, fraction)| digits(whole) && digits(fraction))
        };
        let values = |i: usize| self.body.iter().filter_map(move |row| row.get(i)).map(|v| v.trim());
        let columns: Vec<usize> = (0..self.columns.len())
            .filter(|&i| !self.used.contains(&i) && self.columns[i].kind == ColumnKind::Text)
            .filter(|&i| values(i).filter(|v| !v.is_empty()).all(comma_number))
            .collect();
        let Some(example) = columns.first().and_then(|&i| values(i).find(|v| !v.is_empty())) else { return };
        let names: Vec<&str> = columns.iter().map(|&i| self.columns[i].name.as_str()).collect();
        let note = format!(
            "{}: numbers written with a comma (\"{example}\") in a file whose other numbers have decimal \
             points: a thousands separator or a decimal comma? Not loaded; write them without the comma to load them",
            names.join(", ")
        );
        self.notes.push(note);
    }

    /// The columns of runs of two or more 0/1 flags right after a measure (NOAA
    /// CO-OPS's `Water Level, Sigma, O, F, R, L` and `Air Temperature, X, N, R`), each
    /// named by one letter or as CO-OPS names them: no measures. A note names them and
    /// the `--flag-column` that drops the values one marks.
    fn flags_after_measures(&mut self) -> Vec<usize> {
        let mut flags = Vec::new();
        let mut index = 0;
        while index < self.columns.len() {
            let run = (index..self.columns.len()).take_while(|&i| self.flag_like(i)).count();
            let before = index.checked_sub(1).filter(|&m| is_measure_kind(&self.columns[m].kind));
            match before {
                Some(measure) if run >= 2 && !self.used.contains(&measure) => {
                    self.note_flags(measure, index..index + run);
                    flags.extend(index..index + run);
                }
                _ => {}
            }
            index += run.max(1);
        }
        flags
    }

    /// Whether column `index` looks like a CO-OPS flag: under a header, named by one
    /// letter or as CO-OPS names its count, integers 0 or 1 (a count any integer ≥ 0).
    fn flag_like(&self, index: usize) -> bool {
        let lower = self.columns[index].name.trim().to_ascii_lowercase();
        let counted = COOPS_FLAG_NAMES.contains(&lower.as_str());
        let letter = lower.len() == 1 && lower.bytes().all(|b| b.is_ascii_alphabetic());
        let value = |row: &Vec<String>| row.get(index).map_or(Some(0), |v| v.trim().parse::<i64>().ok());
        let fits = |row: &Vec<String>| value(row).is_some_and(|v| v == 0 || v == 1 || (counted && v > 1));
        self.sniffed.header
            && (letter || counted)
            && self.columns[index].kind == ColumnKind::Integer
            && self.body.iter().all(fits)
    }

    /// The note on the flags `run` right after measure `last`: they describe the first
    /// measure of the run of measures it ends (`Water Level`, before its `Sigma`).
    fn note_flags(&mut self, last: usize, run: std::ops::Range<usize>) {
        let first = (0..=last).rev().take_while(|&i| is_measure_kind(&self.columns[i].kind)).last().unwrap_or(last);
        let names: Vec<&str> = run.clone().map(|i| self.columns[i].name.as_str()).collect();
        let (measure_name, flag) = (&self.columns[first].name, &self.columns[run.end - 1].reference);
        let pair = super::shell_quoted(&format!("{}={flag}", self.columns[first].reference));
        self.notes.push(format!(
            "{} hold 0/1 flags after {measure_name} (as NOAA CO-OPS's tolerance flags): no measures; \
             to drop the values one marks, add --flag-column {pair} --drop-flags 1",
            names.join(", ")
        ));
    }

    /// Whether one value fills column `index` in the sample.
    fn constant(&self, index: usize) -> bool {
        let mut values = self.body.iter().map(|row| row.get(index));
        let first = values.next().flatten();
        values.all(|value| value == first)
    }

    /// The column whose quality code column `index` holds when it is named `Q` and that
    /// column's name (Météo-France's `QRR1` beside `RR1`, `QT` beside `T`): codes of one
    /// digit, and at least two columns of the file named so (a lone `QFF` beside `FF` is
    /// the sea-level pressure, not a code).
    fn paired_code(&self, index: usize) -> Option<usize> {
        let described = |i: usize| {
            let name = &self.columns[i].name;
            let code = self.columns[i].kind == ColumnKind::Integer
                && self.body.iter().all(|row| row.get(i).is_none_or(|v| v.trim().len() <= 1));
            let rest = name.strip_prefix(['Q', 'q']).filter(|rest| !rest.is_empty() && code)?;
            (0..self.columns.len()).find(|&j| j != i && self.columns[j].name.eq_ignore_ascii_case(rest))
        };
        let measure = described(index)?;
        ((0..self.columns.len()).filter(|&i| described(i).is_some()).count() >= 2).then_some(measure)
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
        let default = &measures[..measures.len().min(crate::meteo::MAX_DIMENSIONS)];
        if default.is_empty() || complete(default) >= half {
            return;
        }
        let mut by_presence = measures.to_vec();
        by_presence.sort_by_key(|&index| std::cmp::Reverse(complete(&[index])));
        let mut chosen: Vec<usize> = Vec::new();
        for index in by_presence {
            let with = [&chosen[..], &[index]].concat();
            if chosen.len() < crate::meteo::MAX_DIMENSIONS && complete(&with) >= half {
                chosen = with;
            }
        }
        chosen.sort_unstable();
        if !chosen.is_empty() {
            // A column referred to by its number in the file (no header, a blank,
            // repeated or comma-holding name) is named here by its place among the
            // measures, which is what `--index-measures` reads a number as.
            let reference = |i: usize| {
                let column = &self.columns[i];
                if column.reference == column.name {
                    column.reference.clone()
                } else {
                    measures.iter().position(|&m| m == i).unwrap_or(i).to_string()
                }
            };
            let names: Vec<String> = chosen.iter().map(|&i| reference(i)).collect();
            self.flag("--index-measures", Some(names.join(",")));
        }
    }

    /// `--suffix-flags` for the flags seen after the measures' numbers (NOAA's `s`,
    /// suspect, also `--drop-flags`), `--word-value T=0` for NOAA's trace in a
    /// precipitation or snow column, and the other words as missing markers (`--na`,
    /// written by [`Guess::sentinels`]).
    fn value_words(&mut self, measures: &[usize]) {
        let mut flags = String::new();
        let mut traces: Vec<String> = Vec::new();
        for &index in measures {
            let ColumnKind::Flagged { suffixes, words } = &self.columns[index].kind else { continue };
            add_new(&mut flags, suffixes);
            let name = self.columns[index].name.to_ascii_lowercase();
            let fallen = names_precipitation(&name);
            for word in words {
                if TRACE_WORDS.contains(&word.as_str()) && fallen {
                    traces.push(word.clone());
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
        traces.sort_by_key(|word| TRACE_WORDS.iter().position(|trace| trace == word));
        traces.dedup();
        if !traces.is_empty() {
            let values: Vec<String> = traces.iter().map(|word| format!("{word}=0")).collect();
            self.flag("--word-value", Some(values.join(",")));
        }
    }

    /// The column holding measure `measure`'s quality code, named after it as archives
    /// name them (`Q_TG` for `TG` in ECA&D, `TMAX_FLAG`, `QC_T`, …).
    fn quality_column(&self, measure: usize) -> Option<usize> {
        let name = crate::meteo::source::without_unit(&self.columns[measure].name).to_ascii_lowercase();
        let names = [format!("q_{name}"), format!("{name}_q"), format!("qc_{name}"), format!("{name}_qc")];
        let names = names.into_iter().chain([format!("{name}_flag"), format!("flag_{name}"), format!("{name} flag")]);
        // NOAA GHCNh's `temperature_Quality_Code`.
        let names = names.chain([format!("{name}_quality_code"), format!("{name}_quality")]);
        let names: Vec<String> = names.collect();
        // JMA's `気温(℃) 品質情報` beside `気温(℃)`: the whole name, then the word.
        let after_whole = format!("{} 品質情報", self.columns[measure].name);
        let lower = |i: usize| crate::meteo::source::without_unit(&self.columns[i].name).to_ascii_lowercase();
        let pairs = |i: usize| {
            names.contains(&lower(i)) || self.columns[i].name == after_whole || self.paired_code(i) == Some(measure)
        };
        (0..self.columns.len()).find(|&i| i != measure && !self.used.contains(&i) && pairs(i))
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
            } else if !common.is_empty() && counts.keys().all(|code| code.is_empty() || *code == common) {
                // One code and blanks (Météo-France's `QT` all `1`, blank where `T` is
                // missing): nothing to tell, and the pair alone would drop every value.
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

    /// `--na` for the usual sentinels (see [`sentinel_like`]) that stand out in a
    /// measure column: every other value of the column is less than half their
    /// magnitude (a PM2.5 of 999 among values up to 900 is data, a temperature of 999.9
    /// among values up to 30 is not). A sentinel that is data in another column is
    /// given per column (`--na temp=999`).
    pub(super) fn sentinels(&mut self, decimal_comma: bool, missing: &MissingValues) {
        // Parsed without the sentinels, so the default ones (-999, -9999) are seen too.
        let tokens = MissingValues { sentinels: Vec::new(), ..missing.clone() };
        let mut standing_out: Vec<(f64, Vec<usize>)> = Vec::new();
        let mut data: Vec<f64> = Vec::new();
        let mut per_column: Vec<(usize, f64)> = Vec::new();
        for &index in &self.measured {
            let parse =
                |f: &String| crate::meteo::fields::parse_measure(f.as_bytes(), decimal_comma, &tokens).ok().flatten();
            let values: Vec<f64> = self.body.iter().filter_map(|row| row.get(index).and_then(parse)).collect();
            // Two 9s written with decimals (NOAA NDBC's `99.00` wave height, `99.0`
            // visibility) are a sentinel too; a plain `99` (a humidity) is not.
            let short = self.body.iter().any(|row| row.get(index).is_some_and(|field| two_nines(field)));
            let like = |v: f64| sentinel_like(v) || (short && v.abs() == 99.0);
            let mut candidates: Vec<f64> = values.iter().copied().filter(|&v| like(v)).collect();
            candidates.sort_by(f64::total_cmp);
            candidates.dedup();
            for candidate in candidates {
                let usual = values.iter().filter(|&&v| !like(v));
                let others = usual.fold(0.0f64, |most, v| most.max(v.abs()));
                if others >= candidate.abs() / 2.0 {
                    data.push(candidate);
                } else if !sentinel_like(candidate) {
                    // Given per column: `99` is data in many a column the sample did
                    // not show it in (a humidity, a wind's direction).
                    per_column.push((index, candidate));
                } else if let Some((_, columns)) = standing_out.iter_mut().find(|(value, _)| *value == candidate) {
                    columns.push(index);
                } else {
                    standing_out.push((candidate, vec![index]));
                }
            }
        }
        let mut list: Vec<String> = self.missing_words.clone();
        list.extend(per_column.iter().map(|&(i, candidate)| format!("{}={candidate}", self.columns[i].reference)));
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
