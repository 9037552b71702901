//! Times written in a strftime-style format (`--time-format`), parsed with `chrono`.
//!
//! The format is compiled once; each field is parsed into chrono's `Parsed` and turned
//! into seconds since the epoch: `%s` (Unix seconds) as it is, otherwise the date
//! (`%Y %m %d`, or `%Y %j` day-of-year, …) plus the time of day when the format has
//! one (midnight otherwise), minus the offset when it has `%z`/`%:z`. The hour
//! `24:00`, which typical meteorological year files use for the end of the day, is read
//! as `00:00` of the next day. Read next: `reader.rs` (where a zone-less time gets the
//! schema's UTC offset).

use std::cell::Cell;

use chrono::format::{Item, Parsed, StrftimeItems};
use chrono::{LocalResult, NaiveTime, TimeZone};

use super::fields::{DateCache, Reason};
use crate::error::{Error, Result};

/// A compiled `--time-format`.
#[derive(Debug, Clone)]
pub struct TimeFormat {
    items: Vec<Item<'static>>,
    /// True when the format has an hour but no minutes (`%Y%m%d %H`): hour 24 is then
    /// the end of the day (KNMI's hours run 1–24).
    hour_only: bool,
    /// True when the format ends in ` %H%M`: a last field of fewer than four digits is
    /// an `HHMM` written without leading zeros (`1` for 00:01, NREL MIDC's files).
    clock_last: bool,
    /// True when the format ends in `%p`: a last `a` or `p` after a digit is `am` or
    /// `pm` (Davis WeatherLink's `12:05a`).
    meridiem_last: bool,
}

/// A parsed time: seconds since the epoch and whether the text named its zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParsedTime {
    /// Seconds since 1970-01-01T00:00:00 (UTC when `zoned`, else civil time).
    pub seconds: i64,
    /// True when the text gave an offset or was Unix seconds.
    pub zoned: bool,
}

impl TimeFormat {
    /// Compiles `format`; an error names what chrono refused.
    pub fn new(format: &str) -> Result<Self> {
        let items = StrftimeItems::new(format)
            .parse_to_owned()
            .map_err(|error| Error::Argument(format!("bad --time-format {format:?}: {error}")))?;
        let hour_only = format.contains("%H") && !["%M", "%R", "%T"].iter().any(|minutes| format.contains(minutes));
        let (clock_last, meridiem_last) = (format.ends_with(" %H%M"), format.ends_with("%p"));
        Ok(TimeFormat { items, hour_only, clock_last, meridiem_last })
    }

    /// Parses `text` (spaces around it are ignored).
    pub fn parse(&self, text: &str) -> Result<ParsedTime, Reason> {
        let text = text.trim();
        if let Some(padded) = self.padded_clock(text).or_else(|| self.short_meridiem(text)) {
            return self.parse(&padded);
        }
        match self.parse_exact(text) {
            Ok(parsed) => Ok(parsed),
            Err(reason) => {
                let end_of_day = |at: usize, length: usize| {
                    let midnight = &"00:00"[..length];
                    let next_day = format!("{}{midnight}{}", &text[..at], &text[at + length..]);
                    let parsed = self.parse_exact(&next_day).ok()?;
                    Some(ParsedTime { seconds: parsed.seconds + 86_400, ..parsed })
                };
                if let Some(at) = text.find("24:00") {
                    return end_of_day(at, 5).ok_or(reason);
                }
                // Hour 24 fails to parse wherever it stands, so the one "24" whose
                // midnight parses is the hour: alone (`%H`), or before zero minutes
                // (`2400`, `24 0`: a `%H%M` format, or an hour and a minute column).
                let minutes_zero = |at: usize| {
                    let minutes = text[at + 2..].trim_start_matches([' ', ':']);
                    let zeros = minutes.bytes().take_while(|&b| b == b'0').count();
                    zeros > 0 && !minutes[zeros..].starts_with(|c: char| c.is_ascii_digit())
                };
                let hours = text.match_indices("24").map(|(at, _)| at).filter(|&at| self.hour_only || minutes_zero(at));
                hours.into_iter().find_map(|at| end_of_day(at, 2)).ok_or(reason)
            }
        }
    }

    /// `text` with its last field padded to four digits, when the format ends in
    /// ` %H%M` and that field has one to three digits.
    fn padded_clock(&self, text: &str) -> Option<String> {
        let (head, last) = text.rsplit_once(' ').filter(|_| self.clock_last)?;
        let short = (1..4).contains(&last.len()) && last.bytes().all(|b| b.is_ascii_digit());
        short.then(|| format!("{head} {last:0>4}"))
    }

    /// `text` with `m` after its last letter, when the format ends in `%p` and the text
    /// in a lone `a` or `p` (either case) after a digit.
    fn short_meridiem(&self, text: &str) -> Option<String> {
        let [.., digit, letter] = text.as_bytes() else { return None };
        let short = digit.is_ascii_digit() && matches!(letter.to_ascii_lowercase(), b'a' | b'p');
        (self.meridiem_last && short).then(|| format!("{text}m"))
    }

    fn parse_exact(&self, text: &str) -> Result<ParsedTime, Reason> {
        let mut parsed = Parsed::new();
        chrono::format::parse(&mut parsed, text, self.items.iter()).map_err(|_| "does not match the --time-format")?;
        if let Some(seconds) = parsed.timestamp() {
            return Ok(ParsedTime { seconds, zoned: true });
        }
        let date = parsed.to_naive_date().or_else(|_| period_start(&parsed))?;
        if parsed.hour_div_12().is_some() && parsed.minute().is_none() {
            parsed.set_minute(0).map_err(|_| "bad time of day")?;
        }
        let time = match parsed.hour_div_12() {
            Some(_) => parsed.to_naive_time().map_err(|_| "bad time of day")?,
            None => NaiveTime::MIN,
        };
        let local = date.and_time(time).and_utc().timestamp();
        let offset = parsed.offset().map(i64::from);
        Ok(ParsedTime { seconds: local - offset.unwrap_or(0), zoned: offset.is_some() })
    }
}

/// The first day of the month (`%Y %m`) or year (`%Y`) a format without a day names,
/// as monthly and yearly series are dated.
fn period_start(parsed: &Parsed) -> Result<chrono::NaiveDate, Reason> {
    let incomplete = "no complete date in the --time-format";
    let by_calendar = parsed.ordinal().is_none()
        && parsed.isoweek().is_none()
        && parsed.week_from_sun().is_none()
        && parsed.week_from_mon().is_none();
    if !by_calendar || parsed.day().is_some() || parsed.weekday().is_some() {
        return Err(incomplete);
    }
    let mut start = parsed.clone();
    if start.month().is_none() {
        start.set_month(1).map_err(|_| incomplete)?;
    }
    start.set_day(1).map_err(|_| incomplete)?;
    start.to_naive_date().map_err(|_| incomplete)
}

/// What a time is parsed with: the date cache, the `--time-format`, and how a time
/// written without zone becomes UTC (a fixed offset, or a time zone with its
/// daylight-saving rules, `chrono-tz`).
#[derive(Debug, Default)]
pub(crate) struct Clock {
    pub(crate) dates: Cell<DateCache>,
    pub(crate) format: Option<TimeFormat>,
    pub(crate) utc_offset_seconds: i64,
    pub(crate) zone: Option<chrono_tz::Tz>,
}

impl Clock {
    /// True when zone-less times are UTC already.
    pub(crate) fn is_utc(&self) -> bool {
        self.utc_offset_seconds == 0 && self.zone.is_none()
    }

    /// UTC seconds of a civil time (seconds since the epoch as if it were UTC). In a
    /// time zone, a repeated hour (autumn) is its first occurrence; a skipped one
    /// (spring) is an error.
    pub(crate) fn to_utc(&self, civil: i64) -> Result<i64, Reason> {
        let Some(zone) = self.zone else { return Ok(civil - self.utc_offset_seconds) };
        let naive = chrono::DateTime::from_timestamp(civil, 0).ok_or("time out of range")?.naive_utc();
        match zone.from_local_datetime(&naive) {
            LocalResult::Single(time) | LocalResult::Ambiguous(time, _) => Ok(time.timestamp()),
            LocalResult::None => Err("no such local time (skipped by a daylight-saving change)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seconds(format: &str, text: &str) -> Result<i64, Reason> {
        TimeFormat::new(format).expect("valid format").parse(text).map(|parsed| parsed.seconds)
    }

    /// US dates, day-of-year, Unix seconds, offsets, 24:00 and date-only formats.
    #[test]
    fn formats_of_the_field() {
        assert_eq!(seconds("%m/%d/%Y %H:%M", "03/01/2013 01:00"), Ok(1_362_099_600));
        assert_eq!(seconds("%m/%d/%Y %H:%M", "02/28/2013 24:00"), Ok(1_362_096_000));
        assert_eq!(seconds("%Y%m%d %H", "20130228 24"), Ok(1_362_096_000), "hours 1–24 (KNMI)");
        assert_eq!(seconds("%Y%m%d %H", "20240224 24"), seconds("%Y%m%d %H", "20240225 00"), "24 in the date too");
        assert!(seconds("%Y%m%d %H:%M", "20130228 24:30").is_err());
        assert_eq!(seconds("%Y%m%d %H%M", "20130228 2400"), Ok(1_362_096_000), "USCRN's four-digit times");
        assert_eq!(seconds("%Y%m%d %H%M", "20240224 2400"), seconds("%Y%m%d %H%M", "20240225 0000"));
        assert!(seconds("%Y%m%d %H%M", "20130228 2430").is_err());
        assert_eq!(seconds("%Y %m %d %H %M", "2013 2 28 24 0"), Ok(1_362_096_000), "EnergyPlus's hour 24, minute 0");
        assert!(seconds("%Y %m %d %H %M", "2013 2 28 24 05").is_err());
        assert_eq!(seconds("%Y %j %H%M", "2013 59 1"), Ok(1_362_009_660), "MIDC's 00:01 written 1");
        assert_eq!(seconds("%Y %j %H%M", "2013 59 130"), seconds("%Y %j %H%M", "2013 59 0130"));
        assert!(seconds("%Y %j %H%M", "2013 59 75").is_err(), "minute 75");
        assert!(seconds("%Y%m%d %H", "20130228 25").is_err());
        assert_eq!(seconds("%Y %j", "2013 060"), Ok(1_362_096_000));
        assert_eq!(seconds("%s", "1362096000"), Ok(1_362_096_000));
        assert_eq!(seconds("%Y%m%d", "20130301"), Ok(1_362_096_000));
        assert_eq!(seconds("%Y-%m-%dT%H:%M%:z", "2013-03-01T02:00+01:00"), Ok(1_362_099_600));
        let zoned = TimeFormat::new("%Y-%m-%d %H:%M %z").unwrap().parse("2013-03-01 01:00 +0000");
        assert_eq!(zoned, Ok(ParsedTime { seconds: 1_362_099_600, zoned: true }));
        assert!(seconds("%m/%d/%Y", "13/01/2013").is_err());
        assert!(seconds("%m/%d/%Y %H:%M", "03/01/2013 25:00").is_err());
        assert!(TimeFormat::new("%Q").is_err());
    }

    /// Twelve-hour clocks, WeatherLink's one-letter `a`/`p` among them, and two-digit years.
    #[test]
    fn twelve_hour_clocks_and_two_digit_years() {
        let at = |text| seconds("%m/%d/%y %I:%M%p", text);
        assert_eq!(at("03/01/13 1:00a"), Ok(1_362_099_600));
        assert_eq!(at("03/01/13 1:00AM"), at("03/01/13 1:00a"));
        assert_eq!(at("02/28/13 12:00a"), Ok(1_362_009_600), "12 a.m. is midnight");
        assert_eq!(at("03/01/13 1:00p"), Ok(1_362_099_600 + 12 * 3_600));
        assert!(at("03/01/13 1:00x").is_err());
        assert!(at("03/01/13 13:00p").is_err());
        assert!(seconds("%m/%d/%y %H:%M", "03/01/13 1:00a").is_err(), "no %p: the letter is an error");
        assert_eq!(seconds("%d.%m.%y", "31.12.99"), Ok(946_598_400), "69–99 are the 1900s");
    }

    /// A format without the day dates a monthly value its month's first day, a yearly
    /// one its year's; without year, or with only a day, there is no date.
    #[test]
    fn months_and_years_are_dated_their_first_day() {
        assert_eq!(seconds("%Y %m", "2013 3"), Ok(1_362_096_000));
        assert_eq!(seconds("%Y-%m", "2013-03"), Ok(1_362_096_000));
        assert_eq!(seconds("%Y", "2013"), Ok(1_356_998_400));
        assert_eq!(seconds("%Y %m", "2013 13"), Err("does not match the --time-format"));
        assert_eq!(seconds("%m", "3"), Err("no complete date in the --time-format"));
        assert_eq!(seconds("%Y %d", "2013 5"), Err("no complete date in the --time-format"));
    }

    /// Local times of a zone with daylight saving: winter and summer offsets, the
    /// repeated autumn hour taken once (its first), the skipped spring hour refused.
    #[test]
    fn time_zones_with_daylight_saving() {
        let clock = Clock { zone: Some(chrono_tz::Europe::Berlin), ..Clock::default() };
        let civil = |text: &str| super::super::fields::parse_timestamp(text.as_bytes()).expect("test time");
        assert_eq!(clock.to_utc(civil("2021-01-15T12:00")), Ok(civil("2021-01-15T11:00")));
        assert_eq!(clock.to_utc(civil("2021-07-15T12:00")), Ok(civil("2021-07-15T10:00")));
        assert_eq!(clock.to_utc(civil("2021-10-31T02:30")), Ok(civil("2021-10-31T00:30")));
        assert!(clock.to_utc(civil("2021-03-28T02:30")).is_err());
        let offset = Clock { utc_offset_seconds: -7 * 3600, ..Clock::default() };
        assert_eq!(offset.to_utc(0), Ok(7 * 3600));
    }
}
