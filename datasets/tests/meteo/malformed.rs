//! Malformed and unusual input gives the documented result: an error naming line,
//! column and text, or (with `skip_bad`) a skipped row; BOM, CRLF, quoted fields,
//! `;` with decimal commas, sentinels and headerless files load.

use quiredb_datasets::Error;
use quiredb_datasets::meteo::{
    ColumnRef, LoadOptions, NullSink, Observation, ObservationReader, ReadOutcome, Schema, StationSpec, TextEncoding,
    TimeSpec, load,
};

use super::load_bytes;

const GOOD: &str = "station,time,temp,pres,dewp,rain,wspm\nA,2013-03-01T00:00,1.5,1020,-3,0,2.1\n";

fn csv_error(input: &str) -> (u64, usize, String, String) {
    match load_bytes(input.as_bytes(), &Schema::default(), false) {
        Err(Error::Csv { line, column, reason, text }) => (line, column.number, reason, text),
        other => panic!("expected a CSV error, got {other:?}"),
    }
}

/// A short row stops the load at its line, naming the first missing column; with
/// skip_bad it is counted and the other rows load.
#[test]
fn short_row_is_an_error_or_skipped() {
    let input = format!("{GOOD}B,2013-03-01T01:00,1.5,1020\nC,2013-03-01T02:00,1,2,3,4,5\n");
    let (line, column, reason, _) = csv_error(&input);
    assert_eq!((line, column), (3, 5));
    assert!(reason.starts_with("short row: 4 fields, expected 7"), "{reason}");
    let summary = load_bytes(input.as_bytes(), &Schema::default(), true).expect("skip mode loads");
    assert_eq!((summary.rows, summary.skipped_rows), (2, 1));
    assert_eq!(summary.skipped[0].line, 3);
}

/// A bad number names its line, column (with header name) and text.
#[test]
fn bad_number_names_line_column_and_text() {
    let input = format!("{GOOD}B,2013-03-01T01:00,1.5,10x20,-3,0,2.1\n");
    let (line, column, reason, text) = csv_error(&input);
    assert_eq!((line, column, reason.as_str(), text.as_str()), (3, 4, "not a number", "10x20"));
    let message = load_bytes(input.as_bytes(), &Schema::default(), false).unwrap_err().to_string();
    assert_eq!(message, "line 3, column 4 (pres): not a number: \"10x20\"");
}

/// Impossible dates and times are errors; so is an hour 24 in year/month/day/hour files.
#[test]
fn bad_dates_are_errors() {
    for (time, expected) in [
        ("2013-02-30T00:00", "bad date: no such day"),
        ("2013-13-01", "bad date: no such day"),
        ("2013-03-01T25:00", "bad time: out of range"),
        ("yesterday", "bad date: expected YYYY-MM-DD"),
        ("2013-03-01T00:00+0x", "bad zone offset"),
    ] {
        let input = format!("{GOOD}B,{time},1,2,3,4,5\n");
        let (line, column, reason, text) = csv_error(&input);
        assert_eq!((line, column, reason.as_str(), text.as_str()), (3, 2, expected, time));
    }
    let parts = "year,month,day,hour,station,temp\n2013,2,29,0,A,1\n";
    let mut schema = Schema::preset("beijing").expect("preset");
    schema.measures = vec![ColumnRef::Name("temp".into())];
    match load_bytes(parts.as_bytes(), &schema, false) {
        Err(Error::Csv { line: 2, reason, .. }) => assert_eq!(reason, "day out of range for the month"),
        other => panic!("expected a bad date, got {other:?}"),
    }
}

/// A UTF-8 BOM is dropped (the first header name still matches) and CRLF line ends
/// leave no `\r` in the last field.
#[test]
fn bom_and_crlf_load() {
    let input = format!("\u{feff}{}", GOOD.replace('\n', "\r\n"));
    let schema = named_default();
    let observations = read_all(input.as_bytes(), &schema);
    assert_eq!(observations.len(), 1);
    assert_eq!(observations[0].0.station, "A");
    assert_eq!(observations[0].0.measures, vec![Some(1.5), Some(1020.0), Some(-3.0), Some(0.0), Some(2.1)]);
    assert_eq!(observations[0].1, b"A,2013-03-01T00:00,1.5,1020,-3,0,2.1");
}

/// Quoted fields may hold the delimiter and quotes; the raw record keeps them quoted.
#[test]
fn quoted_fields_with_delimiters() {
    let input = "station,time,temp,pres,dewp,rain,wspm\n\"Paris, \"\"Montsouris\"\"\",2013-03-01,\"1.5\",1020,-3,0,2\n";
    let observations = read_all(input.as_bytes(), &Schema::default());
    assert_eq!(observations[0].0.station, "Paris, \"Montsouris\"");
    assert_eq!(observations[0].0.time, 1_362_096_000);
    assert_eq!(observations[0].1, b"\"Paris, \"\"Montsouris\"\"\",2013-03-01,1.5,1020,-3,0,2");
}

/// `;` delimiter with decimal commas, detected automatically; sentinels and NA are
/// missing, not errors.
#[test]
fn semicolons_decimal_commas_and_sentinels() {
    let input = "station;time;temp;pres;dewp;rain;wspm\nB;1362096000;-1,5;-999;NA;;-99999\n";
    let observations = read_all(input.as_bytes(), &Schema::default());
    assert_eq!(observations[0].0.time, 1_362_096_000);
    assert_eq!(observations[0].0.measures, vec![Some(-1.5), None, None, None, None]);
}

/// A file without header loads with the default (positional) schema; a named column
/// then is a schema error.
#[test]
fn headerless_files_and_missing_columns() {
    let input = "A,2013-03-01T00:00,1,2,3,4,5\nA,2013-03-01T01:00,1,2,3,4,5\n";
    assert_eq!(load_bytes(input.as_bytes(), &Schema::default(), false).expect("loads").rows, 2);
    let named = load_bytes(input.as_bytes(), &Schema::preset("beijing").expect("preset"), false);
    assert!(matches!(named, Err(Error::Schema(_))), "{named:?}");
    let missing = load_bytes(GOOD.as_bytes(), &Schema::preset("beijing").expect("preset"), false);
    let message = missing.expect_err("no such column").to_string();
    assert!(message.contains("no column \"station\"") || message.contains("no column"), "{message}");
    assert!(message.contains("the header has: station, time"), "{message}");
}

/// Empty input is a clear error; so are non-UTF-8 stations when the input is declared
/// UTF-8. Left to detection, a start that is not UTF-8 is read in the encoding
/// `chardetng` guesses: Windows-1252 here, Shift_JIS for a Japanese file.
#[test]
fn empty_and_non_utf8_input() {
    assert!(matches!(load_bytes(b"", &Schema::default(), false), Err(Error::Empty(_))));
    let mut input = GOOD.as_bytes().to_vec();
    input.extend_from_slice(b"\xff\xfe,2013-03-01T00:00,1,2,3,4,5\n");
    let utf8 = Schema { encoding: TextEncoding::Named(encoding_rs_utf8()), ..Schema::default() };
    match load_bytes(&input, &utf8, false) {
        Err(Error::Csv { line: 3, column, reason, .. }) => {
            assert_eq!((column.number, reason.as_str()), (1, "not UTF-8"))
        }
        other => panic!("expected not UTF-8, got {other:?}"),
    }
    let detected = load_bytes(&input, &Schema::default(), false).expect("read as Windows-1252");
    assert_eq!((detected.rows, detected.stations), (2, 2));
    let japanese = "観測所,time,temp,pres,dewp,rain,wspm\n東京,2013-03-01T00:00,1.5,1020,-3,0,2.1\n\
                    大阪,2013-03-01T00:00,2.5,1021,-2,0,1.1\n札幌,2013-03-01T00:00,-4.5,1011,-9,0,3.1\n";
    let (shift_jis, _, _) = encoding_rs::SHIFT_JIS.encode(japanese);
    let stations = Schema { station: StationSpec::Column(ColumnRef::Name("観測所".into())), ..Schema::default() };
    let detected = load_bytes(&shift_jis, &stations, false).expect("read as Shift_JIS");
    assert_eq!((detected.rows, detected.stations), (3, 3), "the header's name is found once decoded");
}

fn encoding_rs_utf8() -> &'static quiredb_datasets::meteo::schema::Encoding {
    match TextEncoding::from_label("utf-8") {
        Ok(TextEncoding::Named(encoding)) => encoding,
        other => panic!("utf-8 is a known label: {other:?}"),
    }
}

/// skip_bad writes every skipped row to the report as CSV `line,error,raw`.
#[test]
fn skip_report_lists_skipped_rows() {
    let input = format!("{GOOD}B,2013-03-01T01:00,x,1,1,1,1\nC,bad,1,1,1,1,1\n");
    let report = tempfile::NamedTempFile::new().expect("temp file");
    let file = report.reopen().expect("reopen");
    let mut reader = ObservationReader::new(input.as_bytes(), &Schema::default()).expect("opens");
    let options = LoadOptions { skip_bad: true, skip_report: Some(Box::new(file)), ..LoadOptions::default() };
    let summary = load(&mut reader, &mut NullSink::default(), options, &mut |_, _| {}).expect("loads");
    assert_eq!((summary.rows, summary.skipped_rows), (1, 2));
    let text = std::fs::read_to_string(report.path()).expect("report");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(lines[0], r#"3,"line 3, column 3 (temp): not a number: ""x""","B,2013-03-01T01:00,x,1,1,1,1""#);
    assert!(lines[1].starts_with("4,"), "{}", lines[1]);
}

fn read_all(bytes: &[u8], schema: &Schema) -> Vec<(Observation, Vec<u8>)> {
    let mut reader = ObservationReader::new(bytes, schema).expect("opens");
    let mut out = Vec::new();
    loop {
        let mut observation = Observation::default();
        match reader.read(&mut observation).expect("reads") {
            ReadOutcome::Row => out.push((observation, reader.raw_record().to_vec())),
            ReadOutcome::Bad(error) => panic!("unexpected bad row: {error}"),
            ReadOutcome::End => return out,
        }
    }
}

/// The default layout by header names (so a BOM in front of `station` would break it).
fn named_default() -> Schema {
    let name = |n: &str| ColumnRef::Name(n.into());
    Schema {
        station: StationSpec::Column(name("station")),
        time: TimeSpec::Timestamp(name("time")),
        measures: ["temp", "pres", "dewp", "rain", "wspm"].map(name).to_vec(),
        ..Schema::default()
    }
}

/// Short lines after a blank line at the end (a legend, a copyright: PVGIS writes them)
/// are notes: the rows before them load, and the summary names where they start. A
/// short line followed by rows, or one starting like a number (a row cut short), is a
/// short row, at its own line: blank lines count in the line numbers.
#[test]
fn notes_after_the_rows_are_no_rows_and_blank_lines_count() {
    let legend = "\nT: air temperature (degree Celsius)\nP: pressure (hPa)\n\nMade by a model (c) 2025\n";
    let input = format!("{GOOD}B,2013-03-01T01:00,1.5,1020,-3,0,2.1\n{legend}");
    let summary = load_bytes(input.as_bytes(), &Schema::default(), false).expect("notes are no rows");
    assert_eq!(summary.rows, 2);
    assert_eq!(summary.footers.iter().map(|footer| (footer.line, footer.rows)).collect::<Vec<_>>(), [(5, 3)]);
    assert!(summary.to_string().contains("notes:         3 short line(s) at the end (from line 5), read as notes"));
    let rows_after = format!("{GOOD}\n\nB,2013-03-01T01:00,1.5\nC,2013-03-01T02:00,1,2,3,4,5\n");
    let (line, _, reason, text) = csv_error(&rows_after);
    assert_eq!((line, reason.as_str()), (5, "short row: 3 fields, expected 7"), "line 5, after two blank lines");
    assert_eq!(text, "B,2013-03-01T01:00,1.5", "the row's fields, with their delimiters");
    let cut_short = format!("{GOOD}\n2013-03-01T01:00,1.5\n");
    assert_eq!(csv_error(&cut_short).0, 4, "a row cut short at the end is no note");
    let rows =
        "B,2013-03-01T01:00,1.5,1020,-3,0,2.1\nC,2013-03-01T01:00,1.5,10x20,-3,0,2.1\nD,2013-03-01T01:00,1,2,3,4,5\n";
    assert_eq!(csv_error(&format!("{GOOD}\n\n\n{rows}")).0, 7, "three blank lines above");
}

/// A line of words right after the rows that ends the file (BADC-CSV's `end data`, as
/// MIDAS Open writes it) is a note. The same line with rows after it, a last line with
/// digits (a row cut short) or with a delimiter is a short row.
#[test]
fn an_end_marker_right_after_the_rows_is_a_note() {
    let summary = load_bytes(format!("{GOOD}end data\n").as_bytes(), &Schema::default(), false).expect("a note");
    assert_eq!(summary.rows, 1);
    assert_eq!(summary.footers.iter().map(|footer| (footer.line, footer.rows)).collect::<Vec<_>>(), [(3, 1)]);
    let no_newline = load_bytes(format!("{GOOD}end data").as_bytes(), &Schema::default(), false);
    assert_eq!(no_newline.expect("a note without a line break").rows, 1);
    let row = "B,2013-03-01T01:00,1.5,1020,-3,0,2.1\n";
    assert_eq!(csv_error(&format!("{GOOD}end data\n{row}")).0, 3, "rows after it: a short row");
    for last in ["USW00094728", "B,2013-03-01T01", "end,data"] {
        assert_eq!(csv_error(&format!("{GOOD}{last}\n")).0, 3, "{last:?} is a row cut short");
    }
}

/// Lines of words right after the rows to the end of the file, each one field of words
/// with the other fields blank (the Hong Kong Observatory's legend, as wide as its rows:
/// `*** 沒有數據/unavailable,,,,`), are notes; with a row after them the first is a row
/// and stops the load at its line (it has no time).
#[test]
fn a_legend_as_wide_as_the_rows_is_notes() {
    let legend = "*** 沒有數據/unavailable,,,,,,\n# 數據不完整/data incomplete,,,,,,\nC 數據完整/data Complete,,,,,,\n";
    let summary = load_bytes(format!("{GOOD}{legend}").as_bytes(), &Schema::default(), false).expect("notes");
    assert_eq!(summary.rows, 1);
    assert_eq!(summary.footers.iter().map(|footer| (footer.line, footer.rows)).collect::<Vec<_>>(), [(3, 3)]);
    let row = "B,2013-03-01T01:00,1.5,1020,-3,0,2.1\n";
    assert!(load_bytes(format!("{GOOD}{legend}{row}").as_bytes(), &Schema::default(), false).is_err());
    let missing_all = format!("{GOOD}B,,,,,,\n");
    assert!(load_bytes(missing_all.as_bytes(), &Schema::default(), false).is_err(), "a station and no time");
}
