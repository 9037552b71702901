//! GHCN-Daily's fixed-width files (`.dly`, the files of `ghcnd_all.tar.gz`), read as the
//! CSV of GHCN-Daily's by-year files, so that the variable-column loading of those
//! (`--variable-column`, `--flag-column`, `--inspect`'s suggestion) applies unchanged.
//!
//! A `.dly` line holds one station, month and element: the station (columns 1–11), the
//! year (12–15), the month (16–17), the element (18–21), then for each day 1–31 a
//! value (5 columns, right-aligned, `-9999` missing) and three one-column flags
//! (measurement, quality, source). Each day with a value becomes the by-year line
//! `ID,YYYYMMDD,ELEMENT,VALUE,MFLAG,QFLAG,SFLAG,` (a blank flag empty, no observation
//! time), in the file's order; missing days are left out, as the by-year files leave
//! them out. Values stay as written (tenths of °C and of mm for temperatures and
//! precipitation, as in every GHCN-Daily file).
//!
//! A line that does not have this form is an error naming its line and column: a
//! short line, a year, month or value that is not a number, a value on a day the month
//! does not have.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;

use super::rendered::{Render, Rendered};

/// Bytes of a whole `.dly` line: the header and 31 days of 8 columns.
const LINE: usize = HEADER + 31 * DAY;
/// Columns before the first day.
const HEADER: usize = 21;
/// Columns of one day: the value and three flags.
const DAY: usize = 8;

/// True for a `.dly` file name, compressed (`.dly.gz`, `.dly.zst`) or not.
pub fn is_dly(path: &Path) -> bool {
    let name = path.file_name().map(|name| name.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    [".dly", ".dly.gz", ".dly.zst"].iter().any(|suffix| name.ends_with(suffix))
}

/// The `.dly` text `input` (decompressed) as the CSV of a by-year file.
pub fn csv_stream<'a>(input: impl Read + 'a) -> Box<dyn Read + 'a> {
    Box::new(Rendered::new(DlyLines { lines: BufReader::new(input), line: 0, text: Vec::new() }, Vec::new()))
}

/// The lines of a `.dly` file, rendered a line (up to 31 records) at a time.
struct DlyLines<R> {
    lines: BufReader<R>,
    /// Number of the line last read, from 1.
    line: usize,
    text: Vec<u8>,
}

impl<R: Read> Render for DlyLines<R> {
    fn render_next(&mut self, out: &mut Vec<u8>) -> io::Result<bool> {
        loop {
            self.text.clear();
            if self.lines.read_until(b'\n', &mut self.text)? == 0 {
                return Ok(false);
            }
            self.line += 1;
            while self.text.last().is_some_and(|&b| b == b'\n' || b == b'\r') {
                self.text.pop();
            }
            if !self.text.iter().all(u8::is_ascii_whitespace) {
                break;
            }
        }
        render_line(&self.text, out).map_err(|(column, reason)| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("GHCN-Daily line {}, column {column}: {reason}", self.line),
            )
        })?;
        Ok(true)
    }
}

/// A fault in a line: its column (from 1) and what is wrong.
type Fault = (usize, String);

/// Writes the by-year records of one `.dly` line into `out` (nothing on a fault).
fn render_line(line: &[u8], out: &mut Vec<u8>) -> Result<(), Fault> {
    if let Some(at) = line.iter().position(|b| !b.is_ascii()) {
        return Err((at + 1, "a byte that is not ASCII".into()));
    }
    if line.len() < HEADER + 5 {
        return Err((line.len() + 1, format!("the line ends after {} columns (a .dly line has {LINE})", line.len())));
    }
    // Columns `from..=to` (from 1), as far as the line reaches; ASCII, so text.
    let field = |from: usize, to: usize| {
        let bytes = line.get(from - 1..to.min(line.len())).unwrap_or_default();
        std::str::from_utf8(bytes).unwrap_or_default()
    };
    let (station, element) = (field(1, 11).trim(), field(18, 21).trim());
    let year: i32 = field(12, 15).parse().map_err(|_| (12, format!("the year {:?} is not a number", field(12, 15))))?;
    let month: u32 = field(16, 17)
        .parse()
        .ok()
        .filter(|month| (1..=12).contains(month))
        .ok_or_else(|| (16, format!("the month {:?} is not 01–12", field(16, 17))))?;
    if station.is_empty() || element.is_empty() {
        return Err((if station.is_empty() { 1 } else { 18 }, "the station or the element is blank".into()));
    }
    let start = out.len();
    for day in 1..=31u32 {
        let at = HEADER + 1 + (day as usize - 1) * DAY;
        if at > line.len() {
            break; // a line cut after its last value (trailing blanks trimmed)
        }
        let value = field(at, at + 4).trim();
        if value == "-9999" {
            continue;
        }
        let number = match value.parse::<i32>() {
            Ok(number) if day <= days_in_month(year, month) => Ok(number),
            Ok(number) => Err(format!("day {day} of {year}-{month:02} has a value ({number})")),
            Err(_) => Err(format!("day {day}'s value {value:?} is not a number")),
        }
        .map_err(|reason| {
            out.truncate(start);
            (at, reason)
        })?;
        push_field(out, station.as_bytes(), b',');
        write!(out, "{year:04}{month:02}{day:02},").expect("writing to memory");
        push_field(out, element.as_bytes(), b',');
        write!(out, "{number},").expect("writing to memory");
        for offset in 5..8 {
            push_field(out, field(at + offset, at + offset).trim().as_bytes(), b',');
        }
        out.push(b'\n');
    }
    Ok(())
}

/// Writes `text` as a CSV field (quoted if it holds a comma or a quote), then `end`.
fn push_field(out: &mut Vec<u8>, text: &[u8], end: u8) {
    if text.iter().any(|&b| b == b',' || b == b'"') {
        out.push(b'"');
        for &b in text {
            out.extend_from_slice(if b == b'"' { b"\"\"" } else { std::slice::from_ref(&b) });
        }
        out.push(b'"');
    } else {
        out.extend_from_slice(text);
    }
    out.push(end);
}

/// Days of `month` in `year` (Gregorian).
fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `.dly` line: `values` of days 1… (`None` missing) with flags `flags` (3 chars).
    pub(crate) fn dly_line(
        station: &str,
        year: i32,
        month: u32,
        element: &str,
        values: &[(Option<i32>, &str)],
    ) -> String {
        let mut line = format!("{station:<11}{year:04}{month:02}{element:<4}");
        for day in 0..31 {
            let (value, flags) = values.get(day).copied().unwrap_or((None, "   "));
            line.push_str(&format!("{:>5}{flags}", value.unwrap_or(-9999)));
        }
        line
    }

    fn read(text: &str) -> io::Result<String> {
        let mut out = String::new();
        csv_stream(text.as_bytes()).read_to_string(&mut out).map(|_| out)
    }

    #[test]
    fn each_day_with_a_value_is_a_by_year_line() {
        let tmax = dly_line("USW00094728", 2020, 2, "TMAX", &[(Some(56), "  W"), (None, "   "), (Some(-11), " IW")]);
        let prcp = dly_line("USW00094728", 2020, 2, "PRCP", &[(Some(0), "T W")]);
        assert_eq!(tmax.len(), LINE);
        let text = read(&format!("{tmax}\r\n\n{prcp}\n{}", &prcp.replace("T W", "\",W")[..HEADER + DAY])).unwrap();
        assert_eq!(
            text,
            "USW00094728,20200201,TMAX,56,,,W,\nUSW00094728,20200203,TMAX,-11,,I,W,\nUSW00094728,20200201,PRCP,0,T,,W,\n\
             USW00094728,20200201,PRCP,0,\"\"\"\",\",\",W,\n"
        );
    }

    #[test]
    fn a_line_not_of_the_form_is_an_error_at_its_line_and_column() {
        let good = dly_line("USW00094728", 2021, 4, "TMIN", &[(Some(5), "   ")]);
        let mut bad_value = good.clone();
        bad_value.replace_range(29..34, "  1x3");
        let leap = dly_line("USW00094728", 2021, 2, "TMIN", &[(Some(1), "   "); 29]);
        for (text, line, column, what) in [
            (format!("{good}\n{bad_value}\n"), 2, 30, "day 2's value \"1x3\""),
            (format!("{good}\nUSW000947282021"), 2, 16, "ends after 15 columns"),
            (good.replacen("2021", "20X1", 1), 1, 12, "year"),
            (good.replacen("202104", "202113", 1), 1, 16, "month"),
            (leap, 1, 22 + 28 * DAY, "day 29 of 2021-02"),
            (good.replacen("TMIN", "TMÏ", 1), 1, 20, "ASCII"),
        ] {
            let error = read(&text).unwrap_err().to_string();
            assert!(error.contains(&format!("line {line}, column {column}")) && error.contains(what), "{error}");
        }
        let leap_year = dly_line("USW00094728", 2020, 2, "TMIN", &[(Some(1), "   "); 29]);
        assert_eq!(read(&leap_year).unwrap().lines().count(), 29, "2020 has a 29 February");
    }

    #[test]
    fn lines_cut_or_changed_anywhere_are_read_or_refused_never_a_panic() {
        let line = dly_line("USW00094728", 2020, 2, "TMAX", &[(Some(56), "  W"), (Some(-3), "T,\""), (Some(7), "   ")]);
        let mut rng = quiredb_test_support::Rng::new(quiredb_test_support::seed(0x0D17)); // prints the replay line
        let mut next = |below: usize| rng.index(below);
        for cut in 0..=line.len() {
            let _ = read(&line[..cut]);
        }
        for round in 0..2_000 {
            let mut bytes = line.clone().into_bytes();
            for _ in 0..1 + next(4) {
                let at = next(bytes.len());
                match next(3) {
                    0 => bytes[at] = b" -0123456789AW,\"\n\xC3"[next(16)],
                    1 => drop(bytes.remove(at)),
                    _ => bytes.insert(at, b' '),
                }
            }
            let mut out = String::new();
            let result = csv_stream(bytes.as_slice()).read_to_string(&mut out);
            assert!(result.is_ok() || result.unwrap_err().to_string().contains("GHCN-Daily line"), "round {round}");
        }
    }

    #[test]
    fn names_of_dly_files() {
        for taken in ["USW00094728.dly", "a.DLY", "b.dly.gz", "c.dly.zst"] {
            assert!(is_dly(Path::new(taken)), "{taken}");
        }
        for left in ["a.csv", "dly", "a.dly.txt"] {
            assert!(!is_dly(Path::new(left)), "{left}");
        }
    }
}
