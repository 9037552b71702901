//! Period column names of wide tables (`--wide PATTERN`): which header names are
//! periods, and the civil date each one starts on.
//!
//! Patterns: `YYYY_MM`, `YYYY-MM`, `YYYYMM`, `YYYYMMDD`, `YYYY-MM-DD`, `months`
//! (English month names or their three-letter abbreviations, any case; the year then
//! comes from the row's time column) and `days` (`1`…`31`, also `D01`, `Day1`, `Tag1`;
//! one row per month, the year and month from the row's time columns). A column whose
//! name does not match is an ordinary column (station, year, an annual total, …).
//! Read next: `melt.rs`.

use crate::error::{Error, Result};

/// How the period columns of a wide table are named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeriodPattern {
    /// `2020_01`.
    YearUnderscoreMonth,
    /// `2020-01`.
    YearDashMonth,
    /// `202001`.
    YearMonth,
    /// `20200131`.
    YearMonthDay,
    /// `2020-01-31`.
    IsoDate,
    /// `Jan` … `Dec`, `January` … `December`.
    MonthNames,
    /// `1` … `31` (or `D01`, `Day1`, `Tag1`): days of the row's month.
    DayNumbers,
}

/// The patterns by their command-line spelling.
pub const PATTERN_NAMES: [(&str, PeriodPattern); 7] = [
    ("YYYY_MM", PeriodPattern::YearUnderscoreMonth),
    ("YYYY-MM", PeriodPattern::YearDashMonth),
    ("YYYYMM", PeriodPattern::YearMonth),
    ("YYYYMMDD", PeriodPattern::YearMonthDay),
    ("YYYY-MM-DD", PeriodPattern::IsoDate),
    ("months", PeriodPattern::MonthNames),
    ("days", PeriodPattern::DayNumbers),
];

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// A period column's start: the year (absent for month names and days), month (0 for
/// days: the row's month) and day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Period {
    /// The year, when the column name holds it.
    pub year: Option<i64>,
    /// Month 1–12.
    pub month: i64,
    /// Day 1–31 (1 for monthly periods).
    pub day: i64,
}

impl PeriodPattern {
    /// The pattern spelled `name` on the command line (see [`PATTERN_NAMES`]).
    pub fn parse(name: &str) -> Result<Self> {
        let found = PATTERN_NAMES.iter().find(|(spelling, _)| spelling.eq_ignore_ascii_case(name.trim()));
        found.map(|(_, pattern)| *pattern).ok_or_else(|| {
            let known: Vec<&str> = PATTERN_NAMES.iter().map(|(spelling, _)| *spelling).collect();
            Error::Argument(format!("unknown period pattern {name:?}; known: {}", known.join(", ")))
        })
    }

    /// The command-line spelling of this pattern.
    pub fn name(self) -> &'static str {
        PATTERN_NAMES.iter().find(|(_, pattern)| *pattern == self).map_or("?", |(spelling, _)| spelling)
    }

    /// True when the period names carry the year.
    pub fn has_year(self) -> bool {
        !matches!(self, PeriodPattern::MonthNames | PeriodPattern::DayNumbers)
    }

    /// The period a column named `name` stands for, or `None` when it is no period.
    pub fn period(self, name: &str) -> Option<Period> {
        let name = name.trim();
        if !name.is_ascii() {
            return None;
        }
        let digits = |text: &str| text.bytes().all(|b| b.is_ascii_digit()).then(|| text.parse::<i64>().ok()).flatten();
        let month_day = |year: i64, month: i64, day: i64| {
            let valid = (1..=12).contains(&month) && (1..=31).contains(&day);
            valid.then_some(Period { year: Some(year), month, day })
        };
        let split = |separator: char| {
            let (year, month) = name.split_once(separator)?;
            (year.len() == 4 && month.len() == 2).then_some(())?;
            month_day(digits(year)?, digits(month)?, 1)
        };
        match self {
            PeriodPattern::YearUnderscoreMonth => split('_'),
            PeriodPattern::YearDashMonth => split('-'),
            PeriodPattern::YearMonth if name.len() == 6 => month_day(digits(&name[..4])?, digits(&name[4..])?, 1),
            PeriodPattern::YearMonthDay if name.len() == 8 => {
                month_day(digits(&name[..4])?, digits(&name[4..6])?, digits(&name[6..])?)
            }
            PeriodPattern::IsoDate if name.len() == 10 && name.as_bytes()[4] == b'-' && name.as_bytes()[7] == b'-' => {
                month_day(digits(&name[..4])?, digits(&name[5..7])?, digits(&name[8..])?)
            }
            PeriodPattern::MonthNames => month_number(name).map(|month| Period { year: None, month, day: 1 }),
            PeriodPattern::DayNumbers => day_number(name).map(|day| Period { year: None, month: 0, day }),
            _ => None,
        }
    }

    /// The pattern that names at least three of `header`'s columns (28 days), if one
    /// does.
    pub fn detect(header: &[String]) -> Option<Self> {
        let matches = |pattern: Self| header.iter().filter(|name| pattern.period(name).is_some()).count();
        let enough = |pattern: Self| if pattern == PeriodPattern::DayNumbers { 28 } else { 3 };
        PATTERN_NAMES.iter().map(|(_, pattern)| *pattern).find(|&pattern| matches(pattern) >= enough(pattern))
    }
}

/// 1–31 for `7`, `07`, `D07`, `Day7`, `Tag7` (any case).
fn day_number(name: &str) -> Option<i64> {
    let lower = name.to_ascii_lowercase();
    let digits = ["day", "tag", "d"].iter().find_map(|prefix| lower.strip_prefix(prefix)).unwrap_or(&lower);
    let valid = !digits.is_empty() && digits.len() <= 2 && digits.bytes().all(|b| b.is_ascii_digit());
    valid.then(|| digits.parse().ok()).flatten().filter(|day| (1..=31).contains(day))
}

/// 1–12 for an English month name or its three-letter abbreviation (any case).
fn month_number(name: &str) -> Option<i64> {
    let lower = name.to_ascii_lowercase();
    let position = MONTHS.iter().position(|month| *month == lower || (lower.len() == 3 && month.starts_with(&lower)));
    position.map(|index| index as i64 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each pattern takes its own spelling and refuses the others and ordinary names.
    #[test]
    fn patterns_match_their_columns_only() {
        let june = |year| Some(Period { year, month: 6, day: 1 });
        assert_eq!(PeriodPattern::YearUnderscoreMonth.period("2020_06"), june(Some(2020)));
        assert_eq!(PeriodPattern::YearDashMonth.period("2020-06"), june(Some(2020)));
        assert_eq!(PeriodPattern::YearMonth.period("202006"), june(Some(2020)));
        assert_eq!(PeriodPattern::YearMonthDay.period("20200601"), june(Some(2020)));
        assert_eq!(PeriodPattern::IsoDate.period("2020-06-01"), june(Some(2020)));
        assert_eq!(PeriodPattern::MonthNames.period("Jun"), june(None));
        assert_eq!(PeriodPattern::MonthNames.period("JUNE"), june(None));
        assert_eq!(PeriodPattern::YearDashMonth.period("2020_06"), None);
        assert_eq!(PeriodPattern::YearMonth.period("202013"), None);
        assert_eq!(PeriodPattern::MonthNames.period("station"), None);
        assert_eq!(PeriodPattern::MonthNames.period("Ju"), None);
        assert_eq!(PeriodPattern::DayNumbers.period("D07"), Some(Period { year: None, month: 0, day: 7 }));
        assert_eq!(PeriodPattern::DayNumbers.period("31"), Some(Period { year: None, month: 0, day: 31 }));
        assert_eq!(PeriodPattern::DayNumbers.period("32"), None);
        assert_eq!(PeriodPattern::DayNumbers.period("day"), None);
        for pattern in PATTERN_NAMES.map(|(_, pattern)| pattern) {
            assert_eq!(pattern.period("20\u{fffd}01"), None, "non-ASCII names are no periods");
        }
        let header: Vec<String> = ["year", "Jan", "Feb", "Mar", "annual"].map(String::from).to_vec();
        assert_eq!(PeriodPattern::detect(&header), Some(PeriodPattern::MonthNames));
        assert_eq!(PeriodPattern::parse("yyyy_mm").ok(), Some(PeriodPattern::YearUnderscoreMonth));
        assert!(PeriodPattern::parse("weeks").is_err());
    }
}
