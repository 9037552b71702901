//! NOAA's Global Hourly files (the Integrated Surface Database as NCEI serves it in CSV:
//! `global-hourly/access/YEAR/STATION.csv`, and Climate Data Online's "Global Hourly"
//! orders), read as a CSV of plain numbers, so that `--inspect` and the long layout
//! apply unchanged.
//!
//! Such a file packs each measure of the mandatory section with its codes into one
//! field: `TMP` is `+0056,1` (tenths of °C, then a quality code), `WND` is
//! `210,5,N,0036,5` (direction, its quality, the type, the speed in tenths of m/s, its
//! quality). Each packed column becomes its measures, in the units ISD documents:
//!
//! | column | written | rendered columns |
//! |---|---|---|
//! | `WND` | `ddd,q,t,ssss,q` | `WND_DIR` (°), `WND_SPEED` (m/s) |
//! | `CIG` | `hhhhh,q,d,c` | `CIG` (m) |
//! | `VIS` | `dddddd,q,v,q` | `VIS` (m) |
//! | `TMP`, `DEW` | `±tttt,q` | `TMP`, `DEW` (°C) |
//! | `SLP` | `ppppp,q` | `SLP` (hPa) |
//!
//! A value is left empty (missing) when it is ISD's missing number (all 9s: `+9999`,
//! `99999`) or when its quality code says suspect or erroneous (`2`, `3`, `6`, `7`), as
//! ISD-Lite leaves such values out. Every other column (station, date, name, the
//! additional sections) is passed as written. Lines stay lines, so errors keep their
//! line numbers; a packed field that does not have its form is an error naming its
//! line and column.

use std::io::{self, Read};

use super::rendered::{Render, Rendered, write_csv};

/// Quality codes of a suspect or erroneous value (ISD's format document, "quality code").
const BAD_QUALITY: [&str; 4] = ["2", "3", "6", "7"];

/// One packed column of the mandatory section: its name, and for each measure in it
/// the rendered name, the part holding the value, the part holding its quality code,
/// and the divisor to its unit.
struct Packed {
    column: &'static str,
    parts: usize,
    measures: &'static [(&'static str, usize, usize, f64)],
}

const PACKED: [Packed; 6] = [
    Packed { column: "WND", parts: 5, measures: &[("WND_DIR", 0, 1, 1.0), ("WND_SPEED", 3, 4, 10.0)] },
    Packed { column: "CIG", parts: 4, measures: &[("CIG", 0, 1, 1.0)] },
    Packed { column: "VIS", parts: 4, measures: &[("VIS", 0, 1, 1.0)] },
    Packed { column: "TMP", parts: 2, measures: &[("TMP", 0, 1, 10.0)] },
    Packed { column: "DEW", parts: 2, measures: &[("DEW", 0, 1, 10.0)] },
    Packed { column: "SLP", parts: 2, measures: &[("SLP", 0, 1, 10.0)] },
];

/// Whether a file whose first line (or its first 512 bytes) is `first` is a Global
/// Hourly CSV: its header starts with `STATION` and `DATE` and names at least three of
/// the packed columns (GSOD's daily files, `STATION,DATE,…,TEMP,…,SLP,…`, name one, and
/// their `SLP` is a plain number).
pub fn sniff(first: &[u8]) -> bool {
    let text = String::from_utf8_lossy(first);
    let names: Vec<&str> = text.trim_end().split(',').map(|name| name.trim().trim_matches('"')).collect();
    let packed = names.iter().filter(|name| PACKED.iter().any(|packed| packed.column == **name)).count();
    names.len() > 2 && names[..2] == ["STATION", "DATE"] && packed >= 3
}

/// The text `input` (decompressed) of a Global Hourly CSV, its packed columns rendered
/// as plain numbers (module docs).
pub fn csv_stream<'a>(input: impl Read + 'a) -> Box<dyn Read + 'a> {
    let csv = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(input);
    Box::new(Rendered::new(HourlyLines { csv, columns: Vec::new(), record: csv::StringRecord::new() }, Vec::new()))
}

/// The lines of a Global Hourly CSV, rendered a line at a time.
struct HourlyLines<R> {
    csv: csv::Reader<R>,
    /// For each column of the header, the packed form it has, if any; empty before it.
    columns: Vec<Option<&'static Packed>>,
    record: csv::StringRecord,
}

impl<R: Read> Render for HourlyLines<R> {
    fn render_next(&mut self, out: &mut Vec<u8>) -> io::Result<bool> {
        if !self.csv.read_record(&mut self.record).map_err(io::Error::other)? {
            return Ok(false);
        }
        let line = self.record.position().map_or(0, csv::Position::line);
        let fields: Vec<String> = if self.columns.is_empty() {
            self.columns = self.record.iter().map(|name| PACKED.iter().find(|packed| packed.column == name)).collect();
            self.record.iter().zip(&self.columns).flat_map(|(name, packed)| header_names(name, *packed)).collect()
        } else {
            self.render_values().map_err(|(column, reason)| {
                let message = format!("NOAA Global Hourly line {line}, column {column}: {reason}");
                io::Error::new(io::ErrorKind::InvalidData, message)
            })?
        };
        write_csv(out, |writer| writer.write_record(&fields).map_err(io::Error::other))?;
        Ok(true)
    }
}

impl<R> HourlyLines<R> {
    /// The rendered fields of the current record, or the column (from 1) and reason
    /// of its first bad packed field.
    fn render_values(&self) -> Result<Vec<String>, (usize, String)> {
        let mut fields = Vec::with_capacity(self.columns.len() + 1);
        for (index, field) in self.record.iter().enumerate() {
            match self.columns.get(index).copied().flatten() {
                Some(packed) => {
                    let values = unpack(packed, field).map_err(|reason| (index + 1, reason))?;
                    fields.extend(values);
                }
                None => fields.push(field.to_owned()),
            }
        }
        Ok(fields)
    }
}

/// The rendered names of header column `name`.
fn header_names(name: &str, packed: Option<&Packed>) -> Vec<String> {
    match packed {
        Some(packed) => packed.measures.iter().map(|measure| measure.0.to_owned()).collect(),
        None => vec![name.to_owned()],
    }
}

/// The measures of one packed field (empty strings for missing ones); an empty field
/// is all missing.
fn unpack(packed: &Packed, field: &str) -> Result<Vec<String>, String> {
    if field.trim().is_empty() {
        return Ok(vec![String::new(); packed.measures.len()]);
    }
    let parts: Vec<&str> = field.split(',').map(str::trim).collect();
    if parts.len() != packed.parts {
        let expected = packed.parts;
        return Err(format!("{} {field:?} has {} parts, not {expected}", packed.column, parts.len()));
    }
    let calm = packed.column == "WND" && parts[2] == "C";
    let mut values = Vec::with_capacity(packed.measures.len());
    for &(name, value_at, quality_at, divisor) in packed.measures {
        let text = parts[value_at];
        let number: i64 =
            text.trim_start_matches('+').parse().map_err(|_| format!("{name} {text:?} is not a number"))?;
        let missing = text.trim_start_matches(['+', '-']).bytes().all(|b| b == b'9');
        let bad = BAD_QUALITY.contains(&parts[quality_at]);
        values.push(match () {
            _ if calm && name == "WND_SPEED" && number == 0 => "0".to_owned(),
            _ if missing || bad => String::new(),
            _ if divisor == 1.0 => number.to_string(),
            _ => format!("{:.1}", number as f64 / divisor),
        });
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str =
        "\"STATION\",\"DATE\",\"SOURCE\",\"NAME\",\"WND\",\"CIG\",\"VIS\",\"TMP\",\"DEW\",\"SLP\",\"AA1\"\n";

    fn rendered(text: &str) -> io::Result<String> {
        let mut out = String::new();
        csv_stream(text.as_bytes()).read_to_string(&mut out).map(|_| out)
    }

    /// The packed columns become numbers in their units; other columns pass as written.
    #[test]
    fn packed_fields_become_measures() {
        let row = "\"72505394728\",\"2020-01-01T02:51:00\",\"7\",\"NY CITY CENTRAL PARK, NY US\",\"210,5,N,0036,5\",\
                   \"22000,1,9,N\",\"016093,1,9,9\",\"+0044,1\",\"-0022,1\",\"10109,1\",\"01,0000,9,1\"\n";
        let text = rendered(&format!("{HEADER}{row}")).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("STATION,DATE,SOURCE,NAME,WND_DIR,WND_SPEED,CIG,VIS,TMP,DEW,SLP,AA1"));
        assert_eq!(
            lines.next(),
            Some(
                "72505394728,2020-01-01T02:51:00,7,\"NY CITY CENTRAL PARK, NY US\",210,3.6,22000,16093,4.4,-2.2,1010.9,\"01,0000,9,1\""
            )
        );
        assert!(sniff(HEADER.as_bytes()) && !sniff(b"STATION,DATE,TEMP\n") && !sniff(b"DATE,STATION,TMP,DEW,SLP\n"));
        assert!(!sniff(b"\"STATION\",\"DATE\",\"TEMP\",\"DEWP\",\"SLP\",\"VISIB\",\"WDSP\"\n"), "GSOD");
    }

    /// All 9s and suspect or erroneous quality codes are missing; a calm wind has no
    /// direction and no speed.
    #[test]
    fn missing_numbers_bad_codes_and_calm() {
        let row = "X,2020-01-01T03:51:00,7,N,\"999,9,C,0000,1\",\"99999,9,9,N\",\"999999,9,9,9\",\"+9999,9\",\"-0028,3\",\"10110,1\",\n";
        let text = rendered(&format!("{HEADER}{row}")).unwrap();
        assert_eq!(text.lines().nth(1), Some("X,2020-01-01T03:51:00,7,N,,0,,,,,1011.0,"));
    }

    /// A packed field without its form is an error naming the line and the column.
    #[test]
    fn a_bad_packed_field_names_its_line_and_column() {
        let good = "X,2020-01-01T00:51:00,7,N,\"999,9,C,0000,1\",\"99999,9,9,N\",\"016093,1,9,9\",\"+0056,1\",\"-0011,1\",\"10102,1\",\n";
        let bad = good.replace("+0056,1", "+00x6,1");
        let error = rendered(&format!("{HEADER}{good}{bad}")).unwrap_err();
        assert_eq!(error.to_string(), "NOAA Global Hourly line 3, column 8: TMP \"+00x6\" is not a number");
        let short = good.replace("\"10102,1\"", "\"10102\"");
        let error = rendered(&format!("{HEADER}{short}")).unwrap_err();
        assert_eq!(error.to_string(), "NOAA Global Hourly line 2, column 10: SLP \"10102\" has 1 parts, not 2");
    }
}
