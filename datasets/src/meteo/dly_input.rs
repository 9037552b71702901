//! GHCN's fixed-width files, read as the CSV of GHCN-Daily's by-year files, so that the
//! variable-column loading of those (`--variable-column`, `--flag-column`, `--inspect`'s
//! suggestion) applies unchanged:
//! - GHCN-Daily's `.dly` files (those of `ghcnd_all.tar.gz`): a line holds one station,
//!   month and element: the station (columns 1–11), the year (12–15), the month
//!   (16–17), the element (18–21), then for each day 1–31 a value (5 columns,
//!   right-aligned, `-9999` missing) and three one-column flags (measurement, quality,
//!   source);
//! - GHCN-Monthly v4's `.dat` files: a line holds one station, year and element (16–19),
//!   then twelve months of the same value and flags (data measurement, quality control,
//!   data source). Known by their lines, not their name (`.dat` is also a logger's).
//!
//! Each value becomes the by-year line `ID,YYYYMMDD,ELEMENT,VALUE,FLAG1,FLAG2,FLAG3,` (a
//! month's value dated its first day; a blank flag empty; no observation time), in the
//! file's order; missing values are left out, as the by-year files leave them out.
//! Values stay as written (tenths of °C and mm in GHCN-Daily, hundredths of °C in
//! GHCN-Monthly).
//!
//! A line that does not have this form is an error naming its line and column: a
//! short line, a year, month or value that is not a number, a value on a day the month
//! does not have.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;

use super::rendered::{Render, Rendered};

/// Columns of one value: the value and three flags.
const DAY: usize = 8;

/// The two fixed-width forms of GHCN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// GHCN-Daily `.dly`: a line per station, month and element, 31 days.
    Daily,
    /// GHCN-Monthly v4: a line per station, year and element, 12 months.
    Monthly,
}

impl Form {
    /// Columns before the first value.
    fn header(self) -> usize {
        match self {
            Form::Daily => 21,
            Form::Monthly => 19,
        }
    }

    /// Values in a line.
    fn values(self) -> usize {
        match self {
            Form::Daily => 31,
            Form::Monthly => 12,
        }
    }

    /// Bytes of a whole line.
    fn line(self) -> usize {
        self.header() + self.values() * DAY
    }

    fn name(self) -> &'static str {
        match self {
            Form::Daily => "GHCN-Daily",
            Form::Monthly => "GHCN-Monthly",
        }
    }
}

/// True for a `.dly` file name, compressed (`.dly.gz`, `.dly.zst`) or not.
pub fn is_dly(path: &Path) -> bool {
    let name = path.file_name().map(|name| name.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    [".dly", ".dly.gz", ".dly.zst"].iter().any(|suffix| name.ends_with(suffix))
}

/// The form of a file whose first line is `first` (its line end optional): one whose
/// length, year, month, element and first value are where the form has them.
pub fn sniff(first: &[u8]) -> Option<Form> {
    let line = first.strip_suffix(b"\n").unwrap_or(first);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let digits = |range: std::ops::Range<usize>| line.get(range).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    let code = |range: std::ops::Range<usize>| {
        line.get(range).is_some_and(|c| c.iter().all(|&b| b.is_ascii_uppercase() || b.is_ascii_digit()))
    };
    [Form::Daily, Form::Monthly].into_iter().find(|&form| {
        let header = form.header();
        let value = line.get(header..header + 5).and_then(|v| std::str::from_utf8(v).ok());
        line.len() == form.line()
            && line.is_ascii()
            && digits(11..15)
            && (form == Form::Monthly || digits(15..17))
            && code(header - 4..header)
            && value.is_some_and(|v| v.trim().parse::<i32>().is_ok())
    })
}

/// The text `input` (decompressed) of a file of `form` as the CSV of a by-year file.
pub fn csv_stream<'a>(form: Form, input: impl Read + 'a) -> Box<dyn Read + 'a> {
    Box::new(Rendered::new(GhcnLines { form, lines: BufReader::new(input), line: 0, text: Vec::new() }, Vec::new()))
}

/// The lines of a GHCN fixed-width file, rendered a line (up to 31 records) at a time.
struct GhcnLines<R> {
    form: Form,
    lines: BufReader<R>,
    /// Number of the line last read, from 1.
    line: usize,
    text: Vec<u8>,
}

impl<R: Read> Render for GhcnLines<R> {
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
        render_line(self.form, &self.text, out).map_err(|(column, reason)| {
            let message = format!("{} line {}, column {column}: {reason}", self.form.name(), self.line);
            io::Error::new(io::ErrorKind::InvalidData, message)
        })?;
        Ok(true)
    }
}

/// A fault in a line: its column (from 1) and what is wrong.
type Fault = (usize, String);

/// Writes the by-year records of one line of `form` into `out` (nothing on a fault).
fn render_line(form: Form, line: &[u8], out: &mut Vec<u8>) -> Result<(), Fault> {
    let header = form.header();
    if let Some(at) = line.iter().position(|b| !b.is_ascii()) {
        return Err((at + 1, "a byte that is not ASCII".into()));
    }
    if line.len() < header + 5 {
        let length = form.line();
        return Err((line.len() + 1, format!("the line ends after {} columns (a line has {length})", line.len())));
    }
    // Columns `from..=to` (from 1), as far as the line reaches; ASCII, so text.
    let field = |from: usize, to: usize| {
        let bytes = line.get(from - 1..to.min(line.len())).unwrap_or_default();
        std::str::from_utf8(bytes).unwrap_or_default()
    };
    let (station, element) = (field(1, 11).trim(), field(header - 3, header).trim());
    let year: i32 = field(12, 15).parse().map_err(|_| (12, format!("the year {:?} is not a number", field(12, 15))))?;
    let month = match form {
        Form::Daily => field(16, 17)
            .parse()
            .ok()
            .filter(|month| (1..=12).contains(month))
            .ok_or_else(|| (16, format!("the month {:?} is not 01–12", field(16, 17))))?,
        Form::Monthly => 0,
    };
    if station.is_empty() || element.is_empty() {
        return Err((if station.is_empty() { 1 } else { header - 3 }, "the station or the element is blank".into()));
    }
    let start = out.len();
    for index in 1..=form.values() as u32 {
        let at = header + 1 + (index as usize - 1) * DAY;
        if at > line.len() {
            break; // a line cut after its last value (trailing blanks trimmed)
        }
        let value = field(at, at + 4).trim();
        if value == "-9999" {
            continue;
        }
        let (month, day) = if form == Form::Daily { (month, index) } else { (index, 1) };
        let what = if form == Form::Daily { "day" } else { "month" };
        let number = match value.parse::<i32>() {
            Ok(number) if day <= days_in_month(year, month) => Ok(number),
            Ok(number) => Err(format!("day {day} of {year}-{month:02} has a value ({number})")),
            Err(_) => Err(format!("{what} {index}'s value {value:?} is not a number")),
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
        csv_stream(Form::Daily, text.as_bytes()).read_to_string(&mut out).map(|_| out)
    }

    #[test]
    fn each_day_with_a_value_is_a_by_year_line() {
        let tmax = dly_line("USW00094728", 2020, 2, "TMAX", &[(Some(56), "  W"), (None, "   "), (Some(-11), " IW")]);
        let prcp = dly_line("USW00094728", 2020, 2, "PRCP", &[(Some(0), "T W")]);
        assert_eq!(tmax.len(), Form::Daily.line());
        let text = read(&format!("{tmax}\r\n\n{prcp}\n{}", &prcp.replace("T W", "\",W")[..Form::Daily.header() + DAY]))
            .unwrap();
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
            let result = csv_stream(Form::Daily, bytes.as_slice()).read_to_string(&mut out);
            assert!(result.is_ok() || result.unwrap_err().to_string().contains("GHCN-Daily line"), "round {round}");
        }
    }

    /// A GHCN-Monthly v4 line: `values` of months 1… (`None` missing) with their flags.
    fn monthly_line(station: &str, year: i32, element: &str, values: &[(Option<i32>, &str)]) -> String {
        let mut line = format!("{station:<11}{year:04}{element:<4}");
        for month in 0..12 {
            let (value, flags) = values.get(month).copied().unwrap_or((None, "   "));
            line.push_str(&format!("{:>5}{flags}", value.unwrap_or(-9999)));
        }
        line
    }

    #[test]
    fn each_month_with_a_value_is_a_line_dated_its_first_day() {
        let line = monthly_line("ACW00011604", 1961, "TAVG", &[(Some(-142), "  k"), (None, "   "), (Some(-3), " Ok")]);
        assert_eq!(line.len(), Form::Monthly.line());
        let mut out = String::new();
        csv_stream(Form::Monthly, line.as_bytes()).read_to_string(&mut out).unwrap();
        assert_eq!(out, "ACW00011604,19610101,TAVG,-142,,,k,\nACW00011604,19610301,TAVG,-3,,O,k,\n");
        let mut bad = line.clone();
        bad.replace_range(27..32, " 12x4");
        let error = csv_stream(Form::Monthly, bad.as_bytes()).read_to_string(&mut out).unwrap_err().to_string();
        assert!(error.contains("GHCN-Monthly line 1, column 28: month 2's value \"12x4\""), "{error}");
    }

    #[test]
    fn the_form_is_known_by_the_first_line() {
        let daily = dly_line("USW00094728", 2020, 2, "TMAX", &[(Some(56), "  W")]);
        let monthly = monthly_line("ACW00011604", 1961, "TAVG", &[(Some(-142), "  k")]);
        assert_eq!(sniff(format!("{daily}\r\n").as_bytes()), Some(Form::Daily));
        assert_eq!(sniff(monthly.as_bytes()), Some(Form::Monthly));
        for other in [
            "station,date,temp\n".to_string(),
            daily[..daily.len() - 1].to_string(),
            daily.replacen("2020", "20x0", 1),
            monthly.replacen("TAVG", "tavg", 1),
            "TOA5,CR1000,\"x\"\n".to_string(),
        ] {
            assert_eq!(sniff(other.as_bytes()), None, "{other}");
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
