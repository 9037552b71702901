//! The sniffer on small inputs in the layouts it tells apart (`mod.rs`).

use super::*;

fn sniffed(text: &str) -> Sniffed {
    sniff(text.as_bytes(), true, &Schema::default())
}

/// A preamble of station metadata above a `;` header with decimal commas.
#[test]
fn preamble_semicolons_and_header() {
    let text = "Station;Berlin-Dahlem\nLat;52,45\n\nDatum;Zeit;T2m;RR\n01.01.2020;00:00;1,5;0\n\
                01.01.2020;01:00;-0,5;0,2\n01.01.2020;02:00;2;0\n";
    let found = sniffed(text);
    assert_eq!(found.delimiter, Delimiter::Byte(b';'));
    assert_eq!((found.preamble_lines, found.body_fields, found.header), (3, 4, true));
    assert_eq!(found.preamble[0], ["Station", "Berlin-Dahlem"]);
    let quoted = split_line(b"724666,\"DENVER, CO\",\"a \"\"b\"\"\",", Delimiter::Byte(b','));
    assert_eq!(quoted, ["724666", "DENVER, CO", "a \"b\"", ""]);
    assert_eq!(&text[found.preamble_bytes..found.preamble_bytes + 5], "Datum");
    let crlf = text.replace('\n', "\r\n");
    let found = sniffed(&crlf);
    assert_eq!(&crlf[found.preamble_bytes..found.preamble_bytes + 5], "Datum", "CRLF lines are two bytes longer");
    assert!(!found.cr_lines);
    let cr = text.replace('\n', "\r");
    let found = sniffed(&cr);
    assert_eq!((found.preamble_lines, found.body_fields, found.header, found.cr_lines), (3, 4, true, true));
    assert_eq!(&cr[found.preamble_bytes..found.preamble_bytes + 5], "Datum", "lines ended by a lone CR");
}

/// A long preamble of prose above a few rows (a short ECA&D series): the body's
/// width is the sample's second half's, so the prose does not make the file look
/// whitespace-aligned.
#[test]
fn a_long_prose_preamble_above_a_few_rows() {
    let mut text = String::from("EUROPEAN CLIMATE ASSESSMENT & DATASET (ECA&D), file created on 22-11-2021\n");
    for line in 0..17 {
        text.push_str(&format!("{}\n", if line % 4 == 0 { "" } else { "Some words of the licence, and more of them" }));
    }
    text.push_str("\n SOUID,    DATE,   TG, Q_TG\n");
    for day in 1..=6 {
        text.push_str(&format!("100003,1860010{day},   2{day},    0\n"));
    }
    let found = sniffed(&text);
    assert_eq!(found.delimiter, Delimiter::Byte(b','));
    assert_eq!((found.preamble_lines, found.body_fields, found.header), (19, 4, true));
}

/// A title row padded to the body's width above the header is preamble (with or
/// without a blank line under it); a first data row with only its time filled is not.
#[test]
fn a_padded_title_row_above_the_header() {
    let text = "Hilltop station hourly data,,,\nDate,Time,Temperature (C),Rain (mm)\n\
                2020-01-01,00:00,12.41,0\n2020-01-01,01:00,11.97,0.2\n2020-01-01,02:00,,0\n";
    let found = sniffed(text);
    assert_eq!((found.preamble_lines, found.body_fields, found.header), (1, 4, true));
    let times_only = "2020-01-01 00:00,,,\n2020-01-01 01:00,1,2,3\n2020-01-01 02:00,1,2,3\n";
    assert_eq!(sniffed(times_only).preamble_lines, 0);
}

/// Rows of units under a header are skipped; a first row of missing values is data.
#[test]
fn units_rows_under_the_header() {
    let toa5 = "\"TOA5\",\"Hill\",\"CR1000\",\"1\",\"os\",\"prog\",\"7\",\"Hourly\"\n\
                TIMESTAMP,RECORD,AirTC\nTS,RN,Deg C\n,,Avg\n2021-06-01 01:00:00,1,12.4\n2021-06-01 02:00:00,2,12.1\n";
    let found = sniffed(toa5);
    assert_eq!((found.preamble_lines, found.header, found.units_rows, found.body_fields), (1, true, 2, 3));
    assert_eq!(found.rows[1][2], "12.4", "units rows are left out of the sample rows");
    let title = sniffed("Station: Hill,,\n\nDate,T,RH\n2021-06-01,1.5,80\n2021-06-02,1.7,81\n");
    assert_eq!((title.preamble_lines, title.header), (2, true), "a padded title row above a blank line");
    let missing_first = sniffed("station,temp,rh\nS1,NA,\nS2,1.5,80\n");
    assert_eq!((missing_first.header, missing_first.units_rows), (true, 0));
    let text_rows = sniffed("a,b\nx,y\nz,w\n");
    assert_eq!(text_rows.units_rows, 0, "no data row follows");
}

/// Whitespace-aligned columns without a header; a header whose names start with
/// digits is still a header.
#[test]
fn whitespace_columns_and_digit_headers() {
    let found = sniffed("1901 01 01 06   -78 -9999\n1901 01 01 13   -72 -9999\n1901 01 01 20   -94 -9999\n");
    assert_eq!((found.delimiter, found.header, found.body_fields), (Delimiter::Whitespace, false, 6));
    let found = sniffed("time,2m_temp,10m_wind\n2020-01-01,1.5,3\n2020-01-02,NA,4\n");
    assert!(found.header);
    let found = sniffed("S1,2020-01-01,NA,4\nS1,2020-01-02,1.5,4\n");
    assert!(!found.header, "a missing marker above a number is no header");
}

/// Notes of other widths above a header (the Met Office's station files: a name, a
/// location, sentences on flags) are preamble, the units row under the header is
/// skipped; a text row of the body's width under a data row ends no preamble.
#[test]
fn notes_above_a_header() {
    let text = "Oxford\nLocation: 450900E 207200N, Lat 51.761 Lon -1.262, 63 metres amsl\n\
                Estimated data is marked with a * after the value.\n   yyyy  mm   tmax    tmin\n\
                \x20             degC    degC\n   1853   1    8.4     2.7\n   1853   2    3.2    -1.8\n\
                \x20  1853   3    7.7*   -0.6\n";
    let found = sniffed(text);
    assert_eq!(found.delimiter, Delimiter::Whitespace);
    assert_eq!((found.preamble_lines, found.header, found.units_rows, found.body_fields), (3, true, 1, 4));
    assert_eq!(found.rows[0], ["yyyy", "mm", "tmax", "tmin"]);
    let data_first = sniffed("1 2 3\na b c\n4 5 6\n7 8 9\n");
    assert_eq!(data_first.preamble_lines, 0);
}

/// A header written as the preamble's last comment line (KNMI's files) names the
/// columns, and the first row after the preamble is data; not when that row is a
/// header itself, nor with `--no-header`, nor when the comment is no header.
#[test]
fn a_header_in_the_last_comment_line() {
    let text = "# BRON: KNMI\n# \n# STN,YYYYMMDD,   HH,    T\n# \n  260,20230101,    1,  150\n\
                \x20 260,20230101,    2,  148\n  260,20230101,    3,  146\n";
    let found = sniffed(text);
    assert_eq!((found.preamble_lines, found.header, found.header_in_preamble), (4, true, true));
    assert_eq!(found.rows[0], ["STN", "YYYYMMDD", "HH", "T"]);
    assert_eq!(found.rows[1][3], "150");
    let absent = sniff(text.as_bytes(), true, &Schema { header: HeaderMode::Absent, ..Schema::default() });
    assert!(!absent.header && !absent.header_in_preamble);
    let twice = text.replace("# \n  260,20230101,    1", "# \nSTN,DATE,HH,T\n  260,20230101,    1");
    assert!(!sniffed(&twice).header_in_preamble, "the row after the preamble is the header");
    let prose = text.replace("STN,YYYYMMDD,   HH,    T", "made by a script, 2023");
    assert!(!sniffed(&prose).header_in_preamble);
}

/// A metadata block as wide as the body or wider, ended by a blank line (as
/// Open-Meteo writes it), is preamble.
#[test]
fn metadata_block_before_a_blank_line() {
    let text = "latitude,longitude,elevation,timezone\n52.52,13.41,38.0,GMT\n\ntime,temp (C),rain (mm)\n\
                2023-01-01T00:00,1.2,0\n2023-01-01T01:00,1.0,0.1\n";
    let found = sniffed(text);
    assert_eq!((found.preamble_lines, found.header, found.body_fields), (3, true, 3));
    assert_eq!(found.preamble[1][0], "52.52");
    let found = sniffed("a,b\n1,2\n\n3,4\n");
    assert_eq!(found.preamble_lines, 0, "a blank line between data rows ends no preamble");
}

/// A header written on two lines (a Davis WeatherLink export): the names join the
/// upper line's words, when that line is as wide, has no number, and the lower
/// names alone repeat or leave one empty. Names that are enough alone stay as they
/// are, and a line of groups over them stays preamble.
#[test]
fn names_written_on_two_lines() {
    let text = "\t\tTemp\tHi\tLow\tBar\n Date\tTime\tOut\tTemp\tTemp\t\n1/01/20\t12:05a\t41.2\t41.3\t41.2\t30.1\n\
                1/01/20\t12:10a\t41.0\t41.2\t41.0\t30.1\n";
    let found = sniffed(text);
    // The upper line's names differ, so it is the header and the lower a units row.
    assert_eq!((found.preamble_lines, found.header, found.names_joined), (0, true, Joined::WithLineBelow));
    assert_eq!(found.rows[0], ["Date", "Time", "Temp Out", "Hi Temp", "Low Temp", "Bar"]);
    // The upper line repeats a name, the lower leaves one empty: the lower is the
    // header, its names begun above.
    let both = "\t\tWind\tWind\tBar\tRain\nDate\tTime\tSpeed\tDir\t\tRate\n1/01/20\t12:05a\t2\t3\t30.1\t0\n\
                1/01/20\t12:10a\t1\t4\t30.2\t0\n";
    let above = sniffed(both);
    assert_eq!((above.preamble_lines, above.names_joined), (1, Joined::WithLineAbove));
    assert_eq!(above.rows[0], ["Date", "Time", "Wind Speed", "Wind Dir", "Bar", "Rain Rate"]);
    let clear = text.replace("Temp\tTemp\t\n", "High\tLow\tBar\n");
    let found = sniffed(&clear);
    assert_eq!(found.names_joined, Joined::No);
    assert_eq!(found.rows[0], ["Date", "Time", "Out", "High", "Low", "Bar"]);
    let numbered = text.replace("\t\tTemp\tHi", "\t\t2020\tHi");
    assert_eq!(sniffed(&numbered).names_joined, Joined::No, "a line with a number names no columns");
}

/// Lines that all end with an HTML line break (Weather Underground's history files)
/// are sniffed without it; one line without it leaves every line as it is.
#[test]
fn html_line_breaks_at_the_ends_of_lines() {
    let text = "\r\nTime,Temp,DateUTC<br />\r\n12:51 AM,41.0,2015-01-01 05:51:00<br />\r\n\
                1:51 AM,39.9,2015-01-01 06:51:00<br/>\r\n";
    let found = sniffed(text);
    assert!(found.html_breaks);
    assert_eq!(found.rows[0], ["Time", "Temp", "DateUTC"]);
    assert_eq!(found.rows[2][2], "2015-01-01 06:51:00");
    let one_without = text.replace("06:51:00<br/>", "06:51:00");
    assert!(!sniffed(&one_without).html_breaks);
}

/// A comma-delimited file whose quoted fields have decimal commas (`"12,5"`, as some
/// European tools export) reads numbers with a decimal comma; one with a decimal point
/// anywhere, or whose commas could all be thousands separators (`"1,234"`), does not.
/// Any other delimiter allows decimal commas, as before.
#[test]
fn quoted_decimal_commas_in_a_comma_file() {
    let file = |values: [&str; 2]| {
        let text = format!(
            "\"Datum\",\"T\",\"p\"\n\"01.01.2023 00:00\",\"{}\",\"1013,2\"\n\"01.01.2023 01:00\",\"{}\",\"1013,0\"\n",
            values[0], values[1]
        );
        sniffed(&text).decimal_comma
    };
    assert!(file(["12,5", "-0,25"]));
    assert!(file(["1.013,250", "7"]), "points grouping thousands before the comma");
    assert!(!file(["12,5", "12.5"]), "a decimal point elsewhere");
    assert!(!sniffed("t,p\n1.5,\"1,234\"\n2.5,\"1,235\"\n").decimal_comma, "1,234: a thousand, or 1.234?");
    assert!(!sniffed("t,p\n\"1,234\",1\n\"2,345\",2\n").decimal_comma, "no unambiguous comma");
    assert!(sniffed("t;p\n1,234;1\n2,345;2\n").decimal_comma);
}
