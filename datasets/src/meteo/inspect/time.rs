//! The time: year/month/day[/hour] columns, a year and a day of the year, Unix
//! seconds, the leading integers of a file without header, a timestamp, or a date
//! column with a time-of-day, clock or hour column.

use super::{ColumnKind, Guess};

/// Names of a year's, a month's, a day's and an hour's column.
/// NOAA NDBC's buoy files write `YY MM DD hh mm` (`YY` holding four digits, `mm` the
/// minute beside `MM` the month).
const CIVIL_PARTS: [&[&str]; 4] = [
    &["year", "yr", "jahr", "yyyy"],
    &["month", "mo", "monat", "mm", "m"],
    &["day", "dy", "tag", "dd", "d"],
    &["hour", "hr", "stunde", "hh"],
];

/// A year column's name that may hold two digits: a year only when its values have four.
const SHORT_YEAR_NAMES: [&str; 1] = ["yy"];

const DAY_OF_YEAR_NAMES: [&str; 6] = ["doy", "day_of_year", "dayofyear", "yday", "jday", "julian_day"];

/// Names of a column of `HHMM` times of day: a clock, or the time zone it is read in.
const CLOCK_NAMES: [&str; 11] = ["hhmm", "hhmi", "clock", "utc", "gmt", "lst", "mst", "pst", "cst", "est", "hm"];

/// Names of a column of Unix seconds (OpenWeatherMap's history exports call it `dt`).
const UNIX_SECONDS_NAMES: [&str; 8] = ["epoch", "unix", "unixtime", "unix_time", "timestamp", "time", "ts", "dt"];

/// Whether a row's second field is the day of the year of the date in its first, third
/// and fourth (year, month, day).
fn day_of_year_agrees(row: &[String]) -> bool {
    let number = |i: usize| row.get(i).and_then(|v| v.parse::<i64>().ok());
    let (Some(year), Some(ordinal), Some(month), Some(day)) = (number(0), number(1), number(2), number(3)) else {
        return false;
    };
    let first = crate::meteo::fields::days_from_civil(year, 1, 1);
    (1..=12).contains(&month)
        && (1..=31).contains(&day)
        && crate::meteo::fields::days_from_civil(year, month, day) - first + 1 == ordinal
}

/// The UTC offset a time column's name gives (HOBO's `Date Time, GMT-05:00`,
/// `Time (UTC+1)`), as `±HH:MM`: `GMT` or `UTC` followed by a signed hour and perhaps
/// minutes.
pub(super) fn offset_in_name(name: &str) -> Option<String> {
    let upper = name.to_ascii_uppercase();
    let at = upper.find("GMT").or_else(|| upper.find("UTC"))? + 3;
    let rest = upper[at..].trim_start();
    let sign = rest.chars().next().filter(|c| *c == '+' || *c == '-')?;
    let digits: String = rest[1..].chars().take_while(|c| c.is_ascii_digit() || *c == ':').collect();
    let (hours, minutes) = digits.split_once(':').unwrap_or((&digits, "00"));
    let (hours, minutes) = (hours.parse::<u32>().ok()?, minutes.parse::<u32>().ok()?);
    (hours <= 14 && minutes < 60).then(|| format!("{sign}{hours:02}:{minutes:02}"))
}

/// The IANA time zone a time column's name gives (the Iowa Environmental Mesonet's
/// `valid(America/Chicago)`): a word of it, between brackets or spaces, that names a
/// zone with a `/` in it.
pub(super) fn zone_in_name(name: &str) -> Option<String> {
    let words = name.split(|c: char| c.is_whitespace() || "()[]{},;".contains(c));
    let zone = words.filter(|word| word.contains('/')).find_map(|word| crate::meteo::schema::time_zone(word).ok())?;
    Some(zone.name().to_owned())
}

/// Whether preamble `lines` say the times are in local solar time: the words, or
/// `LST` as a word (NASA POWER's `… through 01/31/2020 in LST`) where no line says
/// `local standard time` (Environment Canada's LST).
fn says_local_solar_time(lines: &[String]) -> bool {
    let lower: Vec<String> = lines.iter().map(|line| line.to_ascii_lowercase()).collect();
    let lst = |line: &String| line.split(|c: char| !c.is_ascii_alphanumeric()).any(|word| word == "lst");
    lower.iter().any(|line| line.contains("local solar time"))
        || (lower.iter().any(lst) && !lower.iter().any(|line| line.contains("local standard time")))
}

/// The number after the word `Longitude` in a line (`Location: Latitude  40.7128
/// Longitude -74.006`), when it is one (−180 to 180).
fn longitude_in(line: &str) -> Option<f64> {
    let lower = line.to_ascii_lowercase();
    let after = &line[lower.find("longitude")? + "longitude".len()..];
    let number =
        after.trim_start_matches(|c: char| c.is_whitespace() || c == ':' || c == '=').split_whitespace().next()?;
    let degrees = number.trim_end_matches([',', ';']).parse::<f64>().ok()?;
    (-180.0..=180.0).contains(&degrees).then_some(degrees)
}

/// NASA POWER's local solar time at `longitude` as `--utc-offset` (`±HH:00`): the
/// 15° band centred on a multiple of 15° the longitude falls in, whole hours (POWER
/// shifts its hourly UTC archive by it, so its LST rows stay on the hour; its
/// documentation: "a 15-degree swath that represents solar noon at the middle
/// longitude of the swath"). None at 0 (UTC already).
fn solar_offset(longitude: f64) -> Option<String> {
    let hours = (longitude / 15.0).round() as i64;
    let sign = if hours < 0 { '-' } else { '+' };
    (hours != 0).then(|| format!("{sign}{:02}:00", hours.abs()))
}

/// Whether a time's values carry their own offset or `Z` (`2020-01-01T01:00:00+01:00`).
fn offset_written(value: &str) -> bool {
    let value = value.trim();
    let tail = value.get(value.len().saturating_sub(6)..).unwrap_or("");
    let signed = tail.starts_with(['+', '-']) || tail.get(1..).is_some_and(|rest| rest.contains('+'));
    value.ends_with(['Z', 'z']) || (value.len() > 16 && signed)
}

impl Guess<'_> {
    /// Flags the columns that date a row: the first of these rules that finds them.
    pub(super) fn time(&mut self) {
        let int = |kind: &ColumnKind| *kind == ColumnKind::Integer;
        let mut found = CIVIL_PARTS.map(|names| self.find(names, int));
        if found[0].is_none() {
            found[0] = self.find(&SHORT_YEAR_NAMES, int).filter(|&year| self.within(year, 1800, 2200));
        }
        let flagged = self.pattern_named_time()
            || self.civil_time(found)
            || self.monthly_time(found)
            || self.ordinal_time(found)
            || self.unix_time()
            || self.leading_time()
            || self.inner_civil_time();
        if !flagged {
            self.column_time();
        }
        self.solar_time();
    }

    /// `--utc-offset` for hourly times the preamble says are in local solar time (NASA
    /// POWER's hourly files: `Dates (month/day/year): … in LST` and `Location: Latitude
    /// 40.71 Longitude -74.01` in the header block): the offset of the 15° band the
    /// longitude falls in ([`solar_offset`]). A file in UTC, a daily one (its dates are
    /// days, not times), or a time given a zone or offset already is left as it is.
    fn solar_time(&mut self) {
        let zoned = self.flags.iter().any(|(flag, _)| flag == "--utc-offset" || flag == "--time-zone");
        let lines: Vec<String> = self.sniffed.preamble.iter().map(|fields| fields.join(" ")).collect();
        if zoned || !self.time_has_hour() || !says_local_solar_time(&lines) {
            return;
        }
        if let Some(offset) = lines.iter().find_map(|line| longitude_in(line)).and_then(solar_offset) {
            self.flag("--utc-offset", Some(offset));
        }
    }

    /// Whether the time flagged names the hour: a format with `%H` or `%I`, or four
    /// columns or more read without a format (year, month, day, hour).
    fn time_has_hour(&self) -> bool {
        let value = |name: &str| self.flags.iter().find(|(flag, _)| flag == name).and_then(|(_, v)| v.as_deref());
        match (value("--time"), value("--time-format")) {
            (Some(_), Some(format)) => format.contains("%H") || format.contains("%I"),
            (Some(columns), None) => columns.split(',').count() >= 4,
            (None, _) => false,
        }
    }

    /// Runs of year, month, day, hour and minute columns named by the tokens of their
    /// format, a header name split where the format's commas are (the Bureau of
    /// Meteorology's half-hourly files: `Year Month Day Hours Minutes in YYYY`, `MM`,
    /// `DD`, `HH24`, `MI format in Local time`, and the same in local standard time and
    /// in UTC): the run whose names say UTC is the time, else the first; the other
    /// runs are taken too (no measures).
    fn pattern_named_time(&mut self) -> bool {
        const TOKENS: [&[&str]; 5] = [&["yyyy"], &["mm"], &["dd"], &["hh24", "hh"], &["mi", "mn"]];
        const RANGES: [(i64, i64); 5] = [(1800, 2200), (1, 12), (1, 31), (0, 24), (0, 59)];
        let named = |index: usize, part: usize| {
            let lower = self.columns[index].name.to_ascii_lowercase();
            let words: Vec<&str> = lower.split_whitespace().collect();
            let ends = [words.first(), words.last()];
            let (low, high) = RANGES[part];
            ends.into_iter().flatten().any(|word| TOKENS[part].contains(word)) && self.integers_within(index, low, high)
        };
        let runs: Vec<usize> = (0..self.columns.len().saturating_sub(4))
            .filter(|&start| (0..5).all(|part| !self.used.contains(&(start + part)) && named(start + part, part)))
            .collect();
        let utc = |start: &usize| {
            let lower = self.columns[start + 4].name.to_ascii_lowercase();
            ["utc", "gmt", "universal"].iter().any(|word| lower.contains(word))
        };
        let Some(&chosen) = runs.iter().find(|start| utc(start)).or(runs.first()) else { return false };
        let references: Vec<String> = (chosen..chosen + 5).map(|i| self.take(i)).collect();
        for &other in runs.iter().filter(|&&start| start != chosen) {
            (other..other + 5).for_each(|i| self.used.push(i));
        }
        self.flag("--time", Some(references.join(",")));
        self.flag("--time-format", Some("%Y %m %d %H %M".into()));
        true
    }

    /// Year, month and day columns, perhaps an hour column and then a minute column, or
    /// else a time-of-day column (the Finnish Meteorological Institute's `Time [Local
    /// time]` beside `Year,Month,Day`).
    fn civil_time(&mut self, found: [Option<usize>; 4]) -> bool {
        let [Some(_), Some(_), Some(_), hour] = found else { return false };
        let int = |kind: &ColumnKind| *kind == ColumnKind::Integer;
        let minute_names = ["minute", "min", "mi", "mn", "mm"];
        let named = |i: &usize| {
            let name = crate::meteo::source::without_unit(&self.columns[*i].name).to_ascii_lowercase();
            minute_names.contains(&name.as_str()) && int(&self.columns[*i].kind) && !self.used.contains(i)
        };
        // Not a column of the date's (NDBC's month `MM` beside its minute `mm`).
        let free = |i: &usize| !found.contains(&Some(*i));
        let minute =
            hour.and_then(|_| (0..self.columns.len()).filter(free).find(named)).filter(|&i| self.within(i, 0, 59));
        let clock = match hour {
            None => self.free_column(&|kind| matches!(kind, ColumnKind::TimeOfDay(_))),
            Some(_) => None,
        };
        let references: Vec<String> = found.iter().chain([&minute, &clock]).flatten().map(|&i| self.take(i)).collect();
        self.flag("--time", Some(references.join(",")));
        if minute.is_some() {
            self.flag("--time-format", Some("%Y %m %d %H %M".into()));
        }
        if let Some(ColumnKind::TimeOfDay(format)) = clock.map(|i| &self.columns[i].kind) {
            self.flag("--time-format", Some(format!("%Y %m %d {format}")));
        }
        true
    }

    /// A monthly series: year and month columns, each value dated its month's first day.
    fn monthly_time(&mut self, found: [Option<usize>; 4]) -> bool {
        let [Some(year), Some(month), None, None] = found else { return false };
        let a_month = |row: &Vec<String>| {
            row.get(month).and_then(|m| m.parse::<u32>().ok()).is_some_and(|m| (1..=12).contains(&m))
        };
        if !self.body.iter().all(a_month) {
            return false;
        }
        let references = [self.take(year), self.take(month)];
        self.flag("--time", Some(references.join(",")));
        self.flag("--time-format", Some("%Y %m".into()));
        true
    }

    /// A year column and a day-of-year column, perhaps with an hour or an `HHMM` clock.
    fn ordinal_time(&mut self, found: [Option<usize>; 4]) -> bool {
        let ([Some(year), None, _, hour], Some(day)) =
            (found, self.find(&DAY_OF_YEAR_NAMES, |kind| *kind == ColumnKind::Integer))
        else {
            return false;
        };
        let clock = hour.is_none().then(|| self.clock_column()).flatten();
        let references: Vec<String> =
            [Some(year), Some(day), hour, clock].into_iter().flatten().map(|i| self.take(i)).collect();
        self.flag("--time", Some(references.join(",")));
        let format = match (hour, clock) {
            (Some(_), _) => "%Y %j %H",
            (None, Some(_)) => "%Y %j %H%M",
            (None, None) => "%Y %j",
        };
        self.flag("--time-format", Some(format.into()));
        true
    }

    /// A column of Unix seconds ([`Guess::unix_seconds`]).
    fn unix_time(&mut self) -> bool {
        let Some(seconds) = self.unix_seconds() else { return false };
        let reference = self.take(seconds);
        self.flag("--time", Some(reference));
        true
    }

    /// The integer columns that start a file without header ([`Guess::leading_time_columns`]).
    fn leading_time(&mut self) -> bool {
        let Some((columns, format)) = self.leading_time_columns() else { return false };
        self.used.extend(&columns);
        // An EnergyPlus weather file's minute field after its hour: 60, the hour's end.
        let after = columns.last().map_or(0, |last| last + 1);
        if format.is_none() && self.integers_within(after, 60, 60) {
            self.used.push(after);
        }
        let references: Vec<String> = columns.iter().map(usize::to_string).collect();
        self.flag("--time", Some(references.join(",")));
        if let Some(format) = format {
            self.flag("--time-format", Some(format.to_owned()));
        }
        true
    }

    /// A free timestamp column; else a date column, with the column that gives its time
    /// of day when the date's format has no hour.
    fn column_time(&mut self) {
        if let Some(index) = self.free_column(&|kind| *kind == ColumnKind::Timestamp) {
            let reference = self.take(index);
            self.flag("--time", Some(reference));
            return self.local_time(index);
        }
        let Some(date) = self.free_column(&|kind| matches!(kind, ColumnKind::Date(_))) else { return };
        let ColumnKind::Date(date_format) = self.columns[date].kind else { return };
        let date_reference = self.take(date);
        if let Some(offset) = offset_in_name(&self.columns[date].name) {
            self.flag("--utc-offset", Some(offset));
        } else {
            self.local_time(date);
        }
        let clock = date_format.contains("%H") || date_format.contains("%I");
        let time_of_day = if clock { None } else { self.time_of_day(date) };
        match time_of_day {
            Some((reference, format)) => {
                self.flag("--time", Some(format!("{date_reference},{reference}")));
                self.flag("--time-format", Some(format!("{date_format} {format}")));
            }
            None => {
                self.flag("--time", Some(date_reference));
                self.flag("--time-format", Some(date_format.to_owned()));
            }
        }
    }

    /// The column that gives date column `date` its time of day, taken, and its format:
    /// an `HHMM` clock right after it, a free time-of-day column, or an hour column.
    fn time_of_day(&mut self, date: usize) -> Option<(String, String)> {
        if let Some(clock) = self.clock_after(date) {
            return Some((self.take(clock), "%H%M".to_owned()));
        }
        if let Some(time) = self.free_column(&|kind| matches!(kind, ColumnKind::TimeOfDay(_))) {
            let ColumnKind::TimeOfDay(format) = self.columns[time].kind else { return None };
            return Some((self.take(time), format.to_owned()));
        }
        let hour = self.hour_after(date)?;
        Some((self.take(hour), "%H".to_owned()))
    }

    /// `--time-zone` or `--utc-offset` for time column `index` when its values carry
    /// no offset: a zone in its name (`valid(America/Chicago)`), else a zone or an offset
    /// under a `timezone` or `utc_offset_seconds` label of the preamble (Open-Meteo's
    /// `latitude,…,utc_offset_seconds,timezone,…` over `52.52,…,3600,Europe/Berlin,…`),
    /// the same on every line of values. UTC and GMT need neither.
    fn local_time(&mut self, index: usize) {
        let values = || self.body.iter().filter_map(|row| row.get(index));
        if values().any(|value| offset_written(value)) {
            return;
        }
        if let Some(zone) = zone_in_name(&self.columns[index].name) {
            return self.flag("--time-zone", Some(zone));
        }
        let preamble = &self.sniffed.preamble;
        // The value under `label` in the lines of values below its line, when they all
        // agree (Open-Meteo writes a line for each location).
        let under = |label: &str| {
            let line = preamble.iter().position(|fields| fields.iter().any(|f| f.eq_ignore_ascii_case(label)))?;
            let at = preamble[line].iter().position(|field| field.eq_ignore_ascii_case(label))?;
            let width = preamble[line].len();
            let values: Vec<&String> = preamble[line + 1..]
                .iter()
                .take_while(|fields| fields.len() == width)
                .map(|fields| &fields[at])
                .collect();
            let first = values.first()?;
            values.iter().all(|value| value == first).then(|| (*first).clone())
        };
        let zone = ["timezone", "time_zone"].iter().find_map(|label| under(label));
        if let Some(zone) = zone.and_then(|zone| crate::meteo::schema::time_zone(&zone).ok()) {
            if !["UTC", "GMT", "Etc/UTC", "Etc/GMT", "Zulu"].contains(&zone.name()) {
                self.flag("--time-zone", Some(zone.name().to_owned()));
            }
            return;
        }
        let seconds = under("utc_offset_seconds").and_then(|seconds| seconds.parse::<i32>().ok());
        if let Some(seconds) = seconds.filter(|&s| s != 0 && s.abs() < 15 * 3600 && s % 60 == 0) {
            let sign = if seconds < 0 { '-' } else { '+' };
            let minutes = seconds.abs() / 60;
            self.flag("--utc-offset", Some(format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60)));
        }
    }

    /// Whether column `index` gives the time of an event of the day rather than the
    /// row's: sunrise or sunset (Open-Meteo's daily `sunrise (iso8601)`), or a time of
    /// day named after another column (AEMET's `horatmin`, the hour of `tmin`).
    fn event_time(&self, index: usize) -> bool {
        let lower = self.columns[index].name.to_ascii_lowercase();
        let after_other = matches!(self.columns[index].kind, ColumnKind::TimeOfDay(_))
            && (0..self.columns.len()).any(|other| {
                let name = crate::meteo::source::without_unit(&self.columns[other].name).to_ascii_lowercase();
                other != index && name.chars().count() >= 2 && lower.contains(&name)
            });
        lower.contains("sunrise") || lower.contains("sunset") || after_other
    }

    /// The first free column of a kind, one named for UTC first (SolarAnywhere's
    /// `ObservationTime(GMT)` beside its `ObservationTime(LST)`); no event's time.
    fn free_column(&self, test: &dyn Fn(&ColumnKind) -> bool) -> Option<usize> {
        let candidates: Vec<usize> = (0..self.columns.len())
            .filter(|&i| !self.used.contains(&i) && test(&self.columns[i].kind) && !self.event_time(i))
            .collect();
        let utc =
            |&i: &usize| ["utc", "gmt"].iter().any(|zone| self.columns[i].name.to_ascii_lowercase().contains(zone));
        candidates.iter().copied().find(utc).or(candidates.first().copied())
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

    /// Whether column `index` exists, is of integers, and each in `low..=high`.
    fn integers_within(&self, index: usize, low: i64, high: i64) -> bool {
        self.columns.get(index).is_some_and(|column| column.kind == ColumnKind::Integer)
            && self.within(index, low, high)
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
        let fits = |i: usize, low: i64, high: i64| self.integers_within(i, low, high);
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

    /// Without a header, year, month and day columns after other columns (the Polish
    /// IMGW's `"249180010","KOŁO","2020","01","01",…`: station code and name first),
    /// with the next column as the hour when it rises within each day
    /// ([`Guess::rises_within`]).
    fn inner_civil_time(&mut self) -> bool {
        let fits = |i: usize, low: i64, high: i64| self.integers_within(i, low, high);
        let civil = |year: usize| fits(year, 1800, 2200) && fits(year + 1, 1, 12) && fits(year + 2, 1, 31);
        if self.sniffed.header {
            return false;
        }
        let Some(year) = (0..self.columns.len()).find(|&year| !self.used.contains(&year) && civil(year)) else {
            return false;
        };
        let hour = (fits(year + 3, 0, 24) && self.rises_within(year + 3)).then_some(year + 3);
        let columns = [Some(year), Some(year + 1), Some(year + 2), hour];
        let references: Vec<String> = columns.into_iter().flatten().map(|i| self.take(i)).collect();
        self.flag("--time", Some(references.join(",")));
        true
    }

    /// Whether the integers of column `index` rise within each run of rows that agree
    /// on every column before it, and some run has several rows.
    fn rises_within(&self, index: usize) -> bool {
        let value = |row: &Vec<String>| row.get(index).and_then(|v| v.parse::<i64>().ok());
        let same_run = |pair: &[Vec<String>]| pair[0].get(..index) == pair[1].get(..index);
        let pairs: Vec<&[Vec<String>]> = self.body.windows(2).filter(|pair| same_run(pair)).collect();
        !pairs.is_empty() && pairs.iter().all(|pair| value(&pair[0]) < value(&pair[1]))
    }

    /// Whether the integers of column `minute` (0–59), right after the columns that
    /// date a row to its hour, are its minutes: all 0, or rising within each hour that
    /// has several rows, and some hour has several (SURFRAD's rows a minute). An hourly
    /// file's next column (ISD-Lite's temperature in tenths) is a measure.
    fn minutes_after(&self, minute: usize) -> bool {
        let value = |row: &Vec<String>| row.get(minute).and_then(|v| v.parse::<i64>().ok());
        self.body.iter().all(|row| value(row) == Some(0)) || self.rises_within(minute)
    }

    /// A column of times of day as four digits (`0910`, USCRN's `UTC_TIME`) right
    /// after a date column: integers written with four digits, hours 00–24 and minutes
    /// 00–59; named like a time when the file has a header (a pressure of `1013` hPa
    /// is no time).
    pub(super) fn clock_after(&self, date: usize) -> Option<usize> {
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
            let lower = crate::meteo::source::without_unit(name).to_ascii_lowercase();
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
}
