//! Spreadsheet input of `quire load-csv`: one worksheet (the first, or `--sheet`'s) of an
//! Excel (`.xlsx`,
//! `.xlsm`, `.xlsb`, `.xls`) or OpenDocument (`.ods`) file, read with `calamine` as
//! the CSV text of its rows, so that every column option of the CSV loader applies
//! unchanged and the stored records are the lines a CSV export of the sheet gives.
//!
//! Cells are written as a spreadsheet's CSV export shows them, in forms the loader
//! reads: numbers as written (shortest form), a date cell as `YYYY-MM-DD`, a time cell
//! (or a duration) as `HH:MM:SS`, a date and time as `YYYY-MM-DDTHH:MM:SS` (with
//! milliseconds when it has them), text as is, error cells (`#N/A`) and empty cells
//! empty, which the loader reads as missing. The sheet's used range starts the text:
//! leading empty rows and columns are left out; every row has the range's width, as a
//! spreadsheet's CSV export writes it, and an empty row is an empty line. So title rows
//! above the header have as many fields as the rows and are not found as a preamble:
//! `--skip-lines` names them (`--inspect` shows the rows).

use std::io::{self, Read};
use std::path::Path;

use calamine::{Data, ExcelDateTime, Range, Reader, open_workbook_auto};

use super::rendered::{Render, Rendered, write_csv};
use crate::error::{Error, Result};

/// Extensions of the spreadsheet files read ([`is_spreadsheet`]).
pub const SHEET_EXTENSIONS: [&str; 5] = ["xlsx", "xlsm", "xlsb", "xls", "ods"];

/// True for a spreadsheet file name (see [`SHEET_EXTENSIONS`]).
pub fn is_spreadsheet(path: &Path) -> bool {
    let extension = path.extension().and_then(|extension| extension.to_str()).unwrap_or_default();
    SHEET_EXTENSIONS.iter().any(|known| extension.eq_ignore_ascii_case(known))
}

/// The worksheet `sheet` (its name, or its number from 1; `None`: the first) of the
/// spreadsheet at `path` as a stream of CSV text.
pub fn csv_stream(path: &Path, sheet: Option<&str>) -> Result<Box<dyn Read>> {
    let bad =
        |reason: String| Error::InFile { file: path.display().to_string(), source: Box::new(Error::Sheet(reason)) };
    let mut workbook = open_workbook_auto(path).map_err(|error| bad(error.to_string()))?;
    let names = workbook.sheet_names();
    let index = match sheet {
        None => 0,
        Some(wanted) => names
            .iter()
            .position(|name| name == wanted)
            .or_else(|| wanted.parse::<usize>().ok().filter(|&n| (1..=names.len()).contains(&n)).map(|n| n - 1))
            .ok_or_else(|| bad(format!("no worksheet {wanted:?}; the workbook has {}", names.join(", "))))?,
    };
    let range = match workbook.worksheet_range_at(index) {
        Some(range) => range.map_err(|error| bad(error.to_string()))?,
        None => return Err(bad("the workbook has no worksheet".into())),
    };
    Ok(Box::new(Rendered::new(SheetRows { range, row: 0 }, Vec::new())))
}

/// A worksheet's rows, rendered as CSV text a row at a time.
struct SheetRows {
    range: Range<Data>,
    /// The next row to render (relative to the range's start).
    row: usize,
}

impl Render for SheetRows {
    fn render_next(&mut self, out: &mut Vec<u8>) -> io::Result<bool> {
        if self.row >= self.range.height() {
            return Ok(false);
        }
        let fields: Vec<String> = (0..self.range.width())
            .map(|column| self.range.get((self.row, column)).map_or_else(String::new, cell))
            .collect();
        self.row += 1;
        if fields.iter().all(String::is_empty) {
            out.push(b'\n');
            return Ok(true);
        }
        write_csv(out, |writer| writer.write_record(&fields).map_err(io::Error::other))?;
        Ok(true)
    }
}

/// One cell as a CSV export shows it (see the module docs).
fn cell(data: &Data) -> String {
    match data {
        Data::Int(value) => value.to_string(),
        Data::Float(value) => value.to_string(),
        Data::String(text) | Data::DateTimeIso(text) | Data::DurationIso(text) => text.clone(),
        Data::Bool(value) => value.to_string(),
        Data::DateTime(when) => date_time(when),
        Data::Error(_) | Data::Empty => String::new(),
    }
}

/// An Excel date, time or date and time in ISO 8601 (see the module docs).
fn date_time(when: &ExcelDateTime) -> String {
    let (year, month, day, hour, minute, second, milli) = when.to_ymd_hms_milli();
    let value = when.as_f64();
    let time = match milli {
        0 => format!("{hour:02}:{minute:02}:{second:02}"),
        _ => format!("{hour:02}:{minute:02}:{second:02}.{milli:03}"),
    };
    if when.is_duration() || (0.0..1.0).contains(&value) {
        time
    } else if value.fract() == 0.0 {
        format!("{year:04}-{month:02}-{day:02}")
    } else {
        format!("{year:04}-{month:02}-{day:02}T{time}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/meteo").join(name)
    }

    #[test]
    fn a_sheet_reads_as_the_csv_its_export_gives() {
        // Proves: the first worksheet becomes one CSV line per row, padded to the used
        // range's width, an empty row an empty line; date, time and date-time cells in
        // the forms the loader reads; an error cell and an empty cell empty; a comma
        // quoted.
        let mut text = String::new();
        csv_stream(&sample("hilltop_hourly.xlsx"), None).unwrap().read_to_string(&mut text).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "Station: Hilltop_Met (synthetic sample),,,,,,,");
        assert_eq!(lines[1], "");
        assert_eq!(lines[2], "Date,Time,Observed,Temperature (°C),Pressure (hPa),Rain (mm),Wind (m/s),Note");
        assert_eq!(lines[3], "2021-06-01,01:00:00,2021-06-01T01:00:00,12.41,1003,0,1.82,ok");
        assert_eq!(lines[4], "2021-06-01,02:00:00,2021-06-01T02:00:00,11.97,1003,0.2,1.46,\"a, b\"");
        assert_eq!(lines[5], "2021-06-01,03:00:00,2021-06-01T03:00:00,,1002,0.4,0.93,");
        assert_eq!(lines[6], "2021-06-01,04:00:00,2021-06-01T04:00:00,11.02,1002,,0.71,");
        assert_eq!(lines.len(), 7);
    }

    #[test]
    fn a_sheet_is_chosen_by_name_or_number() {
        // Proves: `sheet` picks a worksheet by its name or its number from 1; another
        // is an error listing the workbook's sheets.
        let path = sample("hilltop_hourly.xlsx");
        let daily = "Date,Tmax,Tmin,Rain\n2021-06-01,18.5,9.1,0.6\n2021-06-02,20.25,10,0\n";
        for sheet in ["Daily", "2"] {
            let mut text = String::new();
            csv_stream(&path, Some(sheet)).unwrap().read_to_string(&mut text).unwrap();
            assert_eq!(text, daily, "{sheet}");
        }
        for wrong in ["Monthly", "3", "0"] {
            let error = csv_stream(&path, Some(wrong)).err().expect("refused").to_string();
            assert!(error.contains(&format!("no worksheet {wrong:?}")) && error.contains("Hourly, Daily"), "{error}");
        }
    }

    #[test]
    fn a_file_that_is_no_spreadsheet_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fake.xlsx");
        std::fs::write(&path, b"station,time\nS1,2020-01-01\n").unwrap();
        let error = csv_stream(&path, None).err().expect("refused").to_string();
        assert!(error.contains("fake.xlsx") && error.contains("spreadsheet"), "{error}");
    }
}
