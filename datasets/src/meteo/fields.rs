//! Parsing and formatting of single CSV fields: measures (with missing markers and
//! decimal commas), integers, timestamps, and civil dates ↔ days since 1970-01-01.
//!
//! Every parser takes raw bytes and returns `Err(reason)` with a short static reason;
//! `reader.rs` wraps it into an [`crate::Error::Csv`] with line, column and text.
//! Nothing here allocates. Dates use the proleptic Gregorian calendar
//! (`days_from_civil` after H. Hinnant, "chrono-Compatible Low-Level Date Algorithms").

use std::cell::Cell;

use super::schema::MissingValues;

/// Why a field did not parse; shown to the user after the position.
pub type Reason = &'static str;

/// Parses a measure: `Ok(None)` when the field is a missing marker or sentinel.
/// With `decimal_comma`, one `,` is read as the decimal point (`"12,5"` = 12.5).
/// Inlined: a short plain decimal that is no sentinel takes only `plain_decimal`.
#[inline(always)]
pub fn parse_measure(bytes: &[u8], decimal_comma: bool, missing: &MissingValues) -> Result<Option<f64>, Reason> {
    match plain_decimal(bytes, decimal_comma) {
        Some(value) if !missing.sentinels.contains(&value) => Ok(Some(value)),
        _ => parse_measure_slow(bytes, decimal_comma, missing),
    }
}

/// [`parse_measure`] of any field: spaces around it, missing markers, sentinels,
/// exponents, long digit strings.
#[inline(never)]
fn parse_measure_slow(bytes: &[u8], decimal_comma: bool, missing: &MissingValues) -> Result<Option<f64>, Reason> {
    let text = trim(bytes);
    match parse_number(text, decimal_comma) {
        Some(value) if missing.sentinels.contains(&value) => Ok(None),
        Some(value) if value.is_finite() => Ok(Some(value)),
        Some(_) if is_missing_token(text, missing) => Ok(None),
        Some(_) => Err("not a finite number"),
        None if is_missing_token(text, missing) => Ok(None),
        None => other_value(text, decimal_comma, missing),
    }
}

/// Most characters of a flag after a number (`8.6*#`).
const MOST_SUFFIX_FLAGS: usize = 3;

/// A field that is no number and no missing marker: a word standing for a number, or a
/// number followed by flag characters (missing when one of them drops it); else why
/// not.
#[inline(never)]
fn other_value(text: &[u8], decimal_comma: bool, missing: &MissingValues) -> Result<Option<f64>, Reason> {
    if let Some((_, value)) = missing.words.iter().find(|(word, _)| word.as_bytes().eq_ignore_ascii_case(text)) {
        return Ok(Some(*value));
    }
    let flags = missing.suffix_flags.as_bytes();
    let flag_length = text.iter().rev().take(MOST_SUFFIX_FLAGS).take_while(|byte| flags.contains(byte)).count();
    let (number, flag) = text.split_at(text.len() - flag_length);
    match parse_number(number.trim_ascii_end(), decimal_comma) {
        Some(value) if flag_length > 0 && value.is_finite() => {
            let dropped = flag.iter().any(|byte| missing.dropped_suffix_flags.as_bytes().contains(byte));
            Ok((!dropped && !missing.sentinels.contains(&value)).then_some(value))
        }
        _ if std::str::from_utf8(text).is_err() => Err("not UTF-8"),
        _ if has_number_prefix(text, decimal_comma) => {
            Err("not a number: a number with text after it (a flag? see load-csv --suffix-flags)")
        }
        _ => Err("not a number"),
    }
}

/// True when `text` is a number followed by at most [`MOST_SUFFIX_FLAGS`] other
/// characters that are no digits (`27s`, `8.6*`).
fn has_number_prefix(text: &[u8], decimal_comma: bool) -> bool {
    let digits = text.iter().rposition(u8::is_ascii_digit).map_or(0, |last| last + 1);
    let tail = &text[digits..];
    digits > 0
        && (1..=MOST_SUFFIX_FLAGS).contains(&tail.len())
        && tail.iter().all(|byte| byte.is_ascii_graphic() && *byte != b'.' && *byte != b',')
        && parse_number(&text[..digits], decimal_comma).is_some()
}

fn parse_number(text: &[u8], decimal_comma: bool) -> Option<f64> {
    fast_decimal(text, decimal_comma).or_else(|| parse_number_slow(text, decimal_comma))
}

/// [`fast_decimal`] of the common case only — an optional `-`, then at most 15 bytes
/// of digits with at most one decimal point, nothing around — with fewer checks
/// (15 bytes hold at most 15 digits); `None` for anything else.
#[inline(always)]
fn plain_decimal(text: &[u8], decimal_comma: bool) -> Option<f64> {
    let (negative, body) = match text {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, text),
    };
    if body.is_empty() || body.len() > 15 || body == b"." || body == b"," {
        return None;
    }
    let mut mantissa = 0u64;
    let mut point = body.len();
    for (index, &byte) in body.iter().enumerate() {
        let digit = byte.wrapping_sub(b'0');
        if digit < 10 {
            mantissa = mantissa * 10 + u64::from(digit);
        } else if point == body.len() && (byte == b'.' || (byte == b',' && decimal_comma)) {
            point = index;
        } else {
            return None;
        }
    }
    let fraction = body.len().saturating_sub(point + 1);
    // Below 10^15, so the signed conversion (one instruction; the unsigned one is four) is exact.
    let value = mantissa as i64 as f64 / POWERS_OF_TEN[fraction];
    Some(if negative { -value } else { value })
}

/// Exact powers of ten, `POWERS_OF_TEN[k] = 10^k`, all representable in an f64.
const POWERS_OF_TEN: [f64; 16] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];

/// Clinger's fast path for plain decimals (`-12.5`, `1023`, at most 15 digits, no
/// exponent): the digits as an integer m < 2^53 and the fraction length k give m / 10^k,
/// a division of two exact f64 values, hence correctly rounded — the same f64 as
/// `str::parse`. `None` sends anything else to the standard parser.
#[inline(always)]
fn fast_decimal(text: &[u8], decimal_comma: bool) -> Option<f64> {
    let (negative, body) = match text.split_first()? {
        (b'-', rest) => (true, rest),
        (b'+', rest) => (false, rest),
        _ => (false, text),
    };
    if body.is_empty() || body.len() > 16 {
        return None;
    }
    let mut mantissa = 0u64;
    let mut point = None;
    for (index, &byte) in body.iter().enumerate() {
        let digit = byte.wrapping_sub(b'0');
        if digit < 10 {
            mantissa = mantissa * 10 + u64::from(digit);
        } else if point.is_none() && (byte == b'.' || (byte == b',' && decimal_comma)) {
            point = Some(index);
        } else {
            return None;
        }
    }
    let digits = body.len() - usize::from(point.is_some());
    if digits == 0 || digits > 15 {
        return None;
    }
    let fraction = point.map_or(0, |index| body.len() - index - 1);
    // Below 10^15, so the signed conversion (one instruction; the unsigned one is four) is exact.
    let value = mantissa as i64 as f64 / POWERS_OF_TEN[fraction];
    Some(if negative { -value } else { value })
}

fn parse_number_slow(text: &[u8], decimal_comma: bool) -> Option<f64> {
    if decimal_comma && text.contains(&b',') {
        let mut buffer = [0u8; 64];
        let copy = buffer.get_mut(..text.len())?;
        copy.copy_from_slice(text);
        let comma = copy.iter().position(|&byte| byte == b',')?;
        copy[comma] = b'.';
        let whole = &text[..comma];
        if whole.contains(&b'.') {
            // Thousands grouped with points before a decimal comma (a German
            // spreadsheet's `1.013,2`): the points go.
            let ungrouped = ungrouped(whole)?;
            let number = [&ungrouped[..], &copy[comma..]].concat();
            return std::str::from_utf8(&number).ok()?.parse().ok();
        }
        return std::str::from_utf8(copy).ok()?.parse().ok();
    }
    std::str::from_utf8(text).ok()?.parse().ok()
}

/// The digits (and sign) of a whole part grouped by points in threes (`-1.013`,
/// `12.345.678`); `None` when it is not grouped so (`1.5`, `10.12`).
fn ungrouped(whole: &[u8]) -> Option<Vec<u8>> {
    let (sign, digits) = match whole.split_first()? {
        (b'-' | b'+', rest) => (&whole[..1], rest),
        _ => (&whole[..0], whole),
    };
    let mut groups = digits.split(|&byte| byte == b'.');
    let first = groups.next()?;
    let first_fits = (1..=3).contains(&first.len()) && first.iter().all(u8::is_ascii_digit);
    let rest: Vec<&[u8]> = groups.collect();
    let rest_fit = rest.iter().all(|group| group.len() == 3 && group.iter().all(u8::is_ascii_digit));
    (first_fits && rest_fit).then(|| [sign, first].concat().into_iter().chain(rest.concat()).collect())
}

/// True when the quality flag `flag` drops its value: it is set and `drops` names it
/// (any set flag when `drops` is empty).
pub fn flag_drops(flag: &[u8], drops: &[String]) -> bool {
    let flag = flag.trim_ascii();
    !flag.is_empty() && (drops.is_empty() || drops.iter().any(|drop| drop.as_bytes().eq_ignore_ascii_case(flag)))
}

fn is_missing_token(text: &[u8], missing: &MissingValues) -> bool {
    missing.tokens.iter().any(|token| token.as_bytes().eq_ignore_ascii_case(text))
}

/// Parses a decimal integer (optional sign, ASCII digits, surrounding spaces allowed).
pub fn parse_int(bytes: &[u8]) -> Result<i64, Reason> {
    let text = trim(bytes);
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, text),
    };
    if digits.is_empty() || digits.len() > 18 || !digits.iter().all(u8::is_ascii_digit) {
        return Err("not an integer");
    }
    let value = digits.iter().fold(0i64, |acc, &d| acc * 10 + i64::from(d - b'0'));
    Ok(if negative { -value } else { value })
}

/// Parses a timestamp to seconds since 1970-01-01T00:00:00 UTC. Accepted forms:
/// integer seconds since the epoch; `YYYY-MM-DD`; `YYYY-MM-DD HH:MM`;
/// `YYYY-MM-DDTHH:MM:SS`; date parts may be separated by `/`; fractional seconds are
/// dropped; an optional `Z` or `±HH:MM` / `±HHMM` offset. Times without zone are UTC.
pub fn parse_timestamp(bytes: &[u8]) -> Result<i64, Reason> {
    parse_timestamp_cached(bytes, &Cell::new(DateCache::default()))
}

/// The last date text seen (`YYYY-MM-DD`) and its day number: consecutive rows mostly
/// share the date, so [`parse_timestamp_cached`] skips the calendar arithmetic.
#[derive(Debug, Clone, Copy, Default)]
pub struct DateCache {
    text: [u8; 10],
    days: i64,
}

/// [`parse_timestamp`] with a cache of the last date.
pub fn parse_timestamp_cached(bytes: &[u8], cache: &Cell<DateCache>) -> Result<i64, Reason> {
    let text = trim(bytes);
    let unsigned = text.strip_prefix(b"-").unwrap_or(text);
    if !unsigned.is_empty() && unsigned.iter().all(u8::is_ascii_digit) {
        return parse_int(text).map_err(|_| "epoch seconds out of range");
    }
    let mut cursor = Cursor { text, at: 0 };
    let cached = cache.get();
    let date = if text.get(..10) == Some(&cached.text[..]) {
        cursor.at = 10;
        cached.days
    } else {
        let days = cursor.date()?;
        if let Some(date_text) = text.get(..10).and_then(|t| <[u8; 10]>::try_from(t).ok()) {
            cache.set(DateCache { text: date_text, days });
        }
        days
    };
    let seconds = cursor.time_of_day()?;
    let offset = cursor.offset()?;
    if cursor.at != text.len() && !interval_end(&text[cursor.at..]) {
        return Err("unexpected text after the date and time");
    }
    Ok(date * 86_400 + seconds - offset)
}

/// Whether `rest` is the end of an ISO 8601 interval whose start was read (`/` and a
/// date and time, CAMS's `2020-01-01T00:00:00.0/2020-01-01T00:01:00.0`): the interval
/// is dated by its start.
#[cold]
fn interval_end(rest: &[u8]) -> bool {
    rest.strip_prefix(b"/").is_some_and(|end| end.contains(&b'-') && parse_timestamp(end).is_ok())
}

/// True when a timestamp text names its zone: `Z`, a `±HH:MM` offset after the date,
/// or integer seconds since the epoch (UTC by definition).
pub fn has_zone(bytes: &[u8]) -> bool {
    let text = trim(bytes);
    // An interval's start (`start/end`) names the zone, if any.
    let text = text
        .split(|&byte| byte == b'/')
        .next()
        .filter(|start| start.len() < text.len() && start.contains(&b'-'))
        .unwrap_or(text);
    let unsigned = text.strip_prefix(b"-").unwrap_or(text);
    let epoch = !unsigned.is_empty() && unsigned.iter().all(u8::is_ascii_digit);
    let offset = text.get(10..).is_some_and(|time| time.iter().any(|&byte| byte == b'+' || byte == b'-'));
    epoch || text.ends_with(b"Z") || offset
}

/// Seconds since the epoch of a civil date and hour, validating each part; hour 24
/// is the end of the day (midnight of the next).
pub fn civil_seconds(year: i64, month: i64, day: i64, hour: i64) -> Result<i64, Reason> {
    let days = checked_days(year, month, day)?;
    if !(0..=24).contains(&hour) {
        return Err("hour out of range 0-24");
    }
    Ok(days * 86_400 + hour * 3_600)
}

fn checked_days(year: i64, month: i64, day: i64) -> Result<i64, Reason> {
    if !(-9999..=9999).contains(&year) {
        return Err("year out of range");
    }
    if !(1..=12).contains(&month) {
        return Err("month out of range 1-12");
    }
    if day < 1 || day > days_in_month(year, month) {
        return Err("day out of range for the month");
    }
    Ok(days_from_civil(year, month, day))
}

/// Days since 1970-01-01 of a valid proleptic Gregorian date.
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date (year, month, day) of a day number since 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Appends `YYYY-MM-DDTHH:MM` (UTC) for `seconds` since the epoch.
pub fn format_timestamp(seconds: i64, out: &mut Vec<u8>) {
    let (year, month, day) = civil_from_days(seconds.div_euclid(86_400));
    let second_of_day = seconds.rem_euclid(86_400);
    let (hour, minute) = (second_of_day / 3_600, second_of_day % 3_600 / 60);
    if (0..=9999).contains(&year) {
        let two = |value: i64| [b'0' + (value / 10) as u8, b'0' + (value % 10) as u8];
        let [y1, y2] = two(year / 100);
        let [y3, y4] = two(year % 100);
        let ([m1, m2], [d1, d2], [h1, h2], [n1, n2]) = (two(month), two(day), two(hour), two(minute));
        out.extend_from_slice(&[y1, y2, y3, y4, b'-', m1, m2, b'-', d1, d2, b'T', h1, h2, b':', n1, n2]);
        return;
    }
    push_padded(out, year, 4);
    out.push(b'-');
    push_padded(out, month, 2);
    out.push(b'-');
    push_padded(out, day, 2);
    out.push(b'T');
    push_padded(out, hour, 2);
    out.push(b':');
    push_padded(out, minute, 2);
}

fn push_padded(out: &mut Vec<u8>, value: i64, width: usize) {
    if value < 0 {
        out.push(b'-');
    }
    let magnitude = value.unsigned_abs();
    let digits = magnitude.checked_ilog10().map_or(1, |log| log as usize + 1);
    out.extend(std::iter::repeat_n(b'0', width.saturating_sub(digits)));
    push_unsigned(out, magnitude);
}

/// Appends `tenths / 10` with one decimal, dropping a `.0` (`-188` → `-18.8`, `10230` →
/// `1023`), as the Beijing file writes its values.
pub fn format_tenths(tenths: i64, out: &mut Vec<u8>) {
    if tenths < 0 {
        out.push(b'-');
    }
    let magnitude = tenths.unsigned_abs();
    push_unsigned(out, magnitude / 10);
    if !magnitude.is_multiple_of(10) {
        out.push(b'.');
        out.push(b'0' + (magnitude % 10) as u8);
    }
}

fn push_unsigned(out: &mut Vec<u8>, value: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = value;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

fn trim(bytes: &[u8]) -> &[u8] {
    bytes.trim_ascii()
}

/// A left-to-right scanner over a date-time text.
struct Cursor<'a> {
    text: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn digits(&mut self, count: usize, what: Reason) -> Result<i64, Reason> {
        let end = self.at + count;
        let slice = self.text.get(self.at..end).ok_or(what)?;
        if !slice.iter().all(u8::is_ascii_digit) {
            return Err(what);
        }
        self.at = end;
        Ok(slice.iter().fold(0, |acc, &d| acc * 10 + i64::from(d - b'0')))
    }

    fn eat(&mut self, choices: &[u8]) -> Option<u8> {
        let byte = *self.text.get(self.at)?;
        choices.contains(&byte).then(|| {
            self.at += 1;
            byte
        })
    }

    fn date(&mut self) -> Result<i64, Reason> {
        let year = self.digits(4, "bad date: expected YYYY-MM-DD")?;
        let separator = self.eat(b"-/").ok_or("bad date: expected YYYY-MM-DD")?;
        let month = self.digits(2, "bad date: expected YYYY-MM-DD")?;
        self.eat(&[separator]).ok_or("bad date: expected YYYY-MM-DD")?;
        let day = self.digits(2, "bad date: expected YYYY-MM-DD")?;
        checked_days(year, month, day).map_err(|_| "bad date: no such day")
    }

    fn time_of_day(&mut self) -> Result<i64, Reason> {
        if self.eat(b"T ").is_none() {
            return Ok(0);
        }
        let hour = self.digits(2, "bad time: expected HH:MM")?;
        self.eat(b":").ok_or("bad time: expected HH:MM")?;
        let minute = self.digits(2, "bad time: expected HH:MM")?;
        let second = if self.eat(b":").is_some() { self.digits(2, "bad time: expected HH:MM:SS")? } else { 0 };
        if self.eat(b".").is_some() {
            while self.eat(b"0123456789").is_some() {}
        }
        if hour > 23 || minute > 59 || second > 60 {
            return Err("bad time: out of range");
        }
        Ok(hour * 3_600 + minute * 60 + second)
    }

    fn offset(&mut self) -> Result<i64, Reason> {
        if self.eat(b"Z").is_some() {
            return Ok(0);
        }
        let Some(sign) = self.eat(b"+-") else {
            return Ok(0);
        };
        let hours = self.digits(2, "bad zone offset")?;
        self.eat(b":");
        let minutes = self.digits(2, "bad zone offset")?;
        let seconds = hours * 3_600 + minutes * 60;
        Ok(if sign == b'-' { -seconds } else { seconds })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    /// With decimal commas, points grouping the whole part in threes are thousands
    /// separators (a German spreadsheet's `1.013,2` hPa); points that group otherwise,
    /// or without a decimal comma after them, are no separators.
    #[test]
    fn thousands_grouped_by_points_before_a_decimal_comma() {
        let missing = MissingValues::default();
        let read = |text: &str| parse_measure(text.as_bytes(), true, &missing);
        assert_eq!(read("1.013,2"), Ok(Some(1013.2)));
        assert_eq!(read("-12.345.678,5"), Ok(Some(-12_345_678.5)));
        assert_eq!(read("1.013"), Ok(Some(1.013)), "no comma: a decimal point");
        for bad in ["1.5,3", "10.12,4", "1.0134,2", ".013,2", "1..013,2"] {
            assert!(read(bad).is_err(), "{bad}");
        }
        assert!(parse_measure(b"1.013,2", false, &missing).is_err(), "a comma file has no decimal commas");
    }

    /// The fast decimal path gives bit-identical results to `str::parse` on random
    /// decimals of 1..15 digits (seed printed for replay).
    #[test]
    fn fast_decimal_matches_std_parse() {
        let seed = quiredb_test_support::random_seed();
        let mut rng = quiredb_test_support::Rng::new(seed);
        for _ in 0..200_000 {
            let digits = rng.random_range(1..=15);
            let point = rng.random_range(0..=digits);
            let mut text: String = (0..digits).map(|_| char::from(b'0' + rng.random_range(0..10u8))).collect();
            if point < digits {
                text.insert(point, '.');
            }
            if rng.random() {
                text.insert(0, '-');
            }
            let expected: f64 = text.parse().expect("valid decimal");
            let fast = fast_decimal(text.as_bytes(), false).expect("fast path applies");
            assert_eq!(fast.to_bits(), expected.to_bits(), "{text} (seed {seed})");
            let plain = plain_decimal(text.as_bytes(), false);
            let short = text.trim_start_matches('-').len() <= 15;
            assert_eq!(plain.map(f64::to_bits), short.then_some(expected.to_bits()), "{text} (seed {seed})");
        }
        for text in [&b"5."[..], b".5", b"-.5", b"-0", b"1,5", b"1.2.3", b"+1", b" 1", b"1 ", b"-", b".", b",", b"-,"] {
            for comma in [false, true] {
                let plain = plain_decimal(text, comma);
                assert!(plain.is_none() || plain == fast_decimal(text, comma), "{text:?}");
                assert_eq!(plain.is_some(), fast_decimal(text, comma).is_some() && text[0] != b'+', "{text:?}");
            }
        }
        assert_eq!(fast_decimal(b"1,5", true), Some(1.5));
        assert_eq!(fast_decimal(b"1,5", false), None);
        assert_eq!(fast_decimal(b"1e5", false), None);
        assert_eq!(fast_decimal(b"-", false), None);
        assert_eq!(fast_decimal(b".", false), None);
    }

    /// Words standing for numbers, and flags after numbers: kept, or missing when a
    /// dropped flag or a sentinel; without them, a flagged number is an error that
    /// points at `--suffix-flags`.
    #[test]
    fn words_and_flags_after_numbers() {
        let plain = MissingValues::default();
        let flagged = MissingValues {
            words: vec![("T".into(), 0.0)],
            suffix_flags: "s*#".into(),
            dropped_suffix_flags: "s".into(),
            tokens: vec!["".into(), "---".into()],
            ..MissingValues::default()
        };
        let parse = |text: &str, missing: &MissingValues| parse_measure(text.as_bytes(), false, missing);
        assert_eq!(parse("163.8*", &flagged), Ok(Some(163.8)));
        assert_eq!(parse(" 73.0*#", &flagged), Ok(Some(73.0)), "two flags, spaces around");
        assert_eq!(parse("27s", &flagged), Ok(None), "a dropped flag");
        assert_eq!(parse("-9999*", &flagged), Ok(None), "a sentinel with a flag");
        assert_eq!(parse("T", &flagged), Ok(Some(0.0)));
        assert_eq!(parse("t", &flagged), Ok(Some(0.0)), "words compare as tokens do");
        assert_eq!(parse("---", &flagged), Ok(None));
        assert_eq!(parse("12", &flagged), Ok(Some(12.0)));
        assert_eq!(
            parse("2.50V", &flagged),
            Err("not a number: a number with text after it (a flag? see load-csv --suffix-flags)")
        );
        assert_eq!(parse("*", &flagged), Err("not a number"), "a flag alone is no value");
        assert_eq!(parse("1*2", &flagged), Err("not a number"));
        assert_eq!(parse("1.5***#", &flagged), Err("not a number"), "at most three flag characters");
        assert_eq!(
            parse("163.8*", &plain),
            Err("not a number: a number with text after it (a flag? see load-csv --suffix-flags)")
        );
        assert_eq!(parse("T", &plain), Err("not a number"));
        assert_eq!(parse("10x20", &plain), Err("not a number"));
        let comma = MissingValues { suffix_flags: "*".into(), ..MissingValues::default() };
        assert_eq!(parse_measure(b"1,5*", true, &comma), Ok(Some(1.5)), "a decimal comma");
        assert!(flag_drops(b" 1 ", &["1".into(), "9".into()]) && !flag_drops(b"0", &["1".into()]));
        assert!(flag_drops(b"X", &[]) && !flag_drops(b"  ", &[]), "any set flag drops when none is named");
    }

    /// Timestamps in every accepted form, and civil dates round-trip.
    #[test]
    fn timestamps_and_civil_dates() {
        assert_eq!(parse_timestamp(b"1362096000"), Ok(1_362_096_000));
        assert_eq!(parse_timestamp(b"2013-03-01"), Ok(1_362_096_000));
        assert_eq!(parse_timestamp(b"2013/03/01 01:00"), Ok(1_362_099_600));
        let interval = b"2013-03-01T01:00:00.0/2013-03-01T01:01:00.0";
        assert_eq!((parse_timestamp(interval), has_zone(interval)), (Ok(1_362_099_600), false), "CAMS's periods");
        assert!(has_zone(b"2013-03-01T01:00Z/2013-03-01T02:00Z"));
        assert!(parse_timestamp(b"2013-03-01T01:00/x").is_err() && parse_timestamp(b"2013-03-01T01:00/").is_err());
        assert_eq!(parse_timestamp(b"2013-01-01T06:00:00Z"), Ok(1_357_020_000));
        assert_eq!(parse_timestamp(b"2013-01-01T07:00:00+01:00"), Ok(1_357_020_000));
        assert_eq!(parse_timestamp(b"2016-02-29T23:59:59.5"), Ok(1_456_790_399));
        for days in [-800_000, -1, 0, 1, 15_765, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        let mut text = Vec::new();
        format_timestamp(1_362_099_600, &mut text);
        assert_eq!(text, b"2013-03-01T01:00");
        text.clear();
        format_timestamp(days_from_civil(-44, 3, 15) * 86_400 + 59 * 60, &mut text);
        assert_eq!(text, b"-0044-03-15T00:59");
    }
}
