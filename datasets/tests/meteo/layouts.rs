//! The layouts of issue 24, each on a small committed sample in `tests/data/meteo`
//! written the way its kind of archive writes it: a TMY3-style file (station line,
//! units in the header, date and time columns, 24:00, local standard time), a
//! DWD-style Latin-1 file (preamble, `;`, decimal commas, a sentinel), GHCN-Daily rows
//! (by-year CSV and fixed-width `.dly`)
//! (variable column), wide monthly tables, ISD-Lite files (whitespace columns, `.gz`
//! and `.zst`, station from the file name), ISO 8601 / Unix seconds with a BOM, and
//! day-of-year columns; a Campbell Scientific logger's TOA5 table (file-information
//! line, units and processing rows under the header, `NAN`); files saved as UTF-16
//! (Excel's "Unicode text") and files whose lines end with a lone CR; an Excel sheet;
//! a Met Office station file (notes, monthly rows, flags after values, remarks).

use std::path::{Path, PathBuf};

use quiredb_datasets::meteo::{
    ColumnRef, Delimiter, Layout, LoadOptions, Observation, ObservationReader, ObservationSink, PeriodPattern, Schema,
    StationSpec, TextEncoding, TimeSpec, files, load,
};

/// Keeps every observation and raw record it receives.
#[derive(Default)]
struct Collect {
    rows: Vec<(Observation, String)>,
}

impl ObservationSink for Collect {
    fn push(&mut self, observation: &Observation, raw: &[u8]) -> quiredb_datasets::Result<()> {
        self.rows.push((observation.clone(), String::from_utf8_lossy(raw).into_owned()));
        Ok(())
    }

    fn finish(&mut self) -> quiredb_datasets::Result<()> {
        Ok(())
    }
}

fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/meteo").join(name)
}

/// Loads the files (or folders) `names` with `schema`; the observations and raw records.
fn load_samples(names: &[&str], schema: &Schema) -> Vec<(Observation, String)> {
    let paths: Vec<PathBuf> = names.iter().map(|name| sample(name)).collect();
    load_paths(&paths, schema)
}

/// Loads the files (or folders) at `paths` with `schema`.
fn load_paths(paths: &[PathBuf], schema: &Schema) -> Vec<(Observation, String)> {
    try_load_paths(paths, schema).expect("sample loads")
}

/// [`load_paths`], or the load's error.
fn try_load_paths(paths: &[PathBuf], schema: &Schema) -> quiredb_datasets::Result<Vec<(Observation, String)>> {
    let inputs = files::expand(paths).expect("samples exist").into_iter().map(|path| {
        let file = std::fs::File::open(&path).expect("sample opens");
        (path.display().to_string(), files::open_input(&path, file, schema.sheet.as_deref()).expect("input"))
    });
    let mut reader = ObservationReader::from_files(inputs.collect(), schema)?;
    let mut sink = Collect::default();
    load(&mut reader, &mut sink, LoadOptions::default(), &mut |_, _| {})?;
    Ok(sink.rows)
}

fn name(text: &str) -> ColumnRef {
    ColumnRef::Name(text.into())
}

fn seconds(text: &str) -> i64 {
    quiredb_datasets::meteo::fields::parse_timestamp(text.as_bytes()).expect("test timestamp")
}

#[test]
fn tmy3_station_line_units_and_24_00_in_local_time() {
    // Proves: the station line above the header is detected as preamble and gives the
    // station; names match without their units; 24:00 is the next day's 00:00; the
    // UTC offset moves local standard time to UTC.
    let schema = Schema {
        station: StationSpec::Preamble { line: 1, field: 2 },
        time: TimeSpec::Joined { columns: vec![name("Date"), name("Time")], format: Some("%m/%d/%Y %H:%M".into()) },
        measures: vec![name("Dry-bulb"), name("Pressure")],
        utc_offset_seconds: -7 * 3600,
        ..Schema::default()
    };
    let rows = load_samples(&["tmy3_724666.csv"], &schema);
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[0].0.station, "DENVER CENTENNIAL");
    assert_eq!(rows[0].0.time, seconds("1988-01-01T08:00Z"));
    assert_eq!(rows[3].0.time, seconds("1988-01-02T07:00Z"));
    assert_eq!(rows[3].0.measures, [Some(-6.0), Some(822.0)]);
}

/// The DWD sample's schema: station from the preamble, names only, -999.9 missing.
fn dwd_schema() -> Schema {
    let mut schema = Schema {
        station: StationSpec::Preamble { line: 1, field: 2 },
        time: TimeSpec::Joined { columns: vec![name("Datum"), name("Zeit")], format: Some("%d.%m.%Y %H:%M".into()) },
        measures: vec![name("Lufttemperatur"), name("Niederschlag"), name("Luftdruck (hPa)")],
        ..Schema::default()
    };
    schema.missing.sentinels.push(-999.9);
    schema
}

#[test]
fn dwd_latin1_preamble_semicolons_decimal_commas_and_a_sentinel() {
    // Proves: a Latin-1 file with three preamble lines, `;` and decimal commas loads
    // with names only; the station comes from the preamble, transcoded; -999.9 given
    // as a sentinel is missing.
    let schema = dwd_schema();
    let rows = load_samples(&["dwd_muenchen_latin1.csv"], &schema);
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0].0.station, "München-Stadt");
    assert_eq!(rows[1].0.time, seconds("2021-03-01T01:00"));
    assert_eq!(rows[1].0.measures, [Some(2.8), Some(0.3), None]);
    assert_eq!(rows[2].0.measures, [Some(-0.5), Some(0.0), Some(954.7)]);
    assert_eq!(rows[2].1, "01.03.2021;02:00;-0,5;0,0;954,7");
}

/// GHCN-Daily's by-year rows: station, date, element, value; TMAX, TMIN and PRCP kept.
fn ghcn_schema() -> Schema {
    Schema {
        station: StationSpec::Column(ColumnRef::Index(0)),
        time: TimeSpec::Joined { columns: vec![ColumnRef::Index(1)], format: Some("%Y%m%d".into()) },
        layout: Layout::Variable {
            variable: ColumnRef::Index(2),
            value: ColumnRef::Index(3),
            elements: vec!["TMAX".into(), "TMIN".into(), "PRCP".into()],
        },
        measures: Vec::new(),
        ..Schema::default()
    }
}

#[test]
fn ghcn_daily_rows_pivot_into_one_observation_per_day() {
    // Proves: a variable-column file (no header, elements interleaved, one not kept)
    // becomes one observation per (station, day) with the kept elements in order; a
    // -9999 value is missing.
    let rows = load_samples(&["ghcn_daily_USW00094728.csv"], &ghcn_schema());
    let seen: Vec<(i64, Vec<Option<f64>>)> = rows.iter().map(|(o, _)| (o.time, o.measures.clone())).collect();
    assert_eq!(
        seen,
        [
            (seconds("2020-01-01"), vec![Some(56.0), Some(-22.0), Some(0.0)]),
            (seconds("2020-01-02"), vec![Some(72.0), Some(11.0), Some(5.0)]),
            (seconds("2020-01-03"), vec![Some(61.0), None, None]),
        ]
    );
    assert_eq!(rows[1].1, "USW00094728,2020-01-02T00:00,72,11,5");
}

#[test]
fn ghcn_daily_dly_lines_load_as_the_by_year_rows() {
    // Proves: a GHCN-Daily `.dly` file (fixed-width, a line per month and element) loads
    // with the by-year files' mapping: one observation per day, 2020's 29 February
    // included; the missing day and the value whose quality flag is set are missing.
    let schema = Schema { flags: vec![(ColumnRef::Index(3), ColumnRef::Index(5))], ..ghcn_schema() };
    let rows = load_samples(&["ghcn_USW00094728.dly"], &schema);
    assert_eq!(rows.len(), 31 + 29);
    assert_eq!(rows.last().map(|(o, _)| o.time), Some(seconds("2020-02-29")));
    assert_eq!(rows[0].0.station, "USW00094728");
    assert_eq!(rows[0].0.measures, [Some(62.0), Some(-47.0), Some(0.0)]);
    assert_eq!(rows[2].0.measures[0], None, "day 3's TMAX is -9999");
    assert_eq!(rows[9].0.measures[1], None, "day 10's TMIN failed a quality check");
    assert_eq!(rows[5].0.measures[2], Some(0.0), "a trace is a measurement flag: kept");
}

#[test]
fn wide_tables_melt_into_one_observation_per_period() {
    // Proves: month-name columns take the year from the year column (the title line is
    // preamble, the annual column is ignored, empty cells are missing); YYYY_MM columns
    // carry their year; a sentinel cell is missing.
    let schema = Schema {
        station: StationSpec::Column(name("station")),
        time: TimeSpec::Timestamp(name("year")),
        layout: Layout::Wide { pattern: PeriodPattern::MonthNames, measure: "temp".into() },
        measures: Vec::new(),
        ..Schema::default()
    };
    let rows = load_samples(&["wide_monthly_months.csv"], &schema);
    assert_eq!(rows.len(), 24);
    assert_eq!((rows[1].0.time, rows[1].0.measures.clone()), (seconds("2020-02-01"), vec![Some(8.0)]));
    assert_eq!((rows[23].0.time, rows[23].0.measures.clone()), (seconds("2021-12-01"), vec![None]));
    assert_eq!(rows[1].1, "Valentia;2020-02-01T00:00;8,0");
    let schema = Schema {
        station: StationSpec::Column(name("station")),
        layout: Layout::Wide { pattern: PeriodPattern::YearUnderscoreMonth, measure: "rain".into() },
        measures: Vec::new(),
        ..Schema::default()
    };
    let rows = load_samples(&["wide_stations_yyyy_mm.csv"], &schema);
    let seen: Vec<_> = rows.iter().map(|(o, _)| (o.station.as_str(), o.time, o.measures[0])).collect();
    assert_eq!(seen.len(), 6);
    assert_eq!(seen[2], ("S1", seconds("2020-03-01"), None));
    assert_eq!(seen[3], ("S2", seconds("2020-01-01"), Some(0.5)));
}

#[test]
fn wide_month_rows_with_day_columns_skip_days_the_month_lacks() {
    // Proves: one row per month with D01..D31 columns takes year and month from two
    // columns; empty cells of 29-31 February and 31 April are no observation; the
    // total column is ignored.
    let schema = Schema {
        station: StationSpec::Column(name("station")),
        time: TimeSpec::Joined { columns: vec![name("year"), name("month")], format: None },
        layout: Layout::Wide { pattern: PeriodPattern::DayNumbers, measure: "rain".into() },
        measures: Vec::new(),
        ..Schema::default()
    };
    let rows = load_samples(&["wide_daily_days.csv"], &schema);
    assert_eq!(rows.len(), 28 + 30);
    assert_eq!((rows[27].0.time, rows[27].0.measures.clone()), (seconds("2021-02-28"), vec![Some(2.8)]));
    assert_eq!(rows[57].0.time, seconds("2021-04-30"));
    assert_eq!(rows[28].1, "Hof;2021-04-01T00:00;1,2");
}

#[test]
fn isd_lite_folder_of_gz_and_zst_whitespace_files() {
    // Proves: a folder of compressed whitespace-aligned files without header loads as
    // one input, each file's station its name, times from four integer columns.
    let schema = Schema {
        station: StationSpec::FileName,
        time: TimeSpec::Parts {
            year: ColumnRef::Index(0),
            month: ColumnRef::Index(1),
            day: ColumnRef::Index(2),
            hour: Some(ColumnRef::Index(3)),
        },
        measures: [4, 5, 6].map(ColumnRef::Index).to_vec(),
        ..Schema::default()
    };
    let rows = load_samples(&["isd_lite"], &schema);
    let stations: Vec<&str> = rows.iter().map(|(o, _)| o.station.as_str()).collect();
    assert_eq!(
        stations,
        ["725030-14732-2020", "725030-14732-2020", "725030-14732-2020", "725053-94728-2020", "725053-94728-2020"]
    );
    assert_eq!(rows[2].0.measures, [Some(44.0), None, Some(10221.0)]);
    assert_eq!(rows[4].0.time, seconds("2020-01-01T03:00"));
    assert_eq!(rows[4].1, "2020\t01\t01\t03\t39\t-17\t10210\t250\t31\t-9999\t-9999\t-9999");
}

#[test]
fn iso_8601_unix_seconds_bom_and_day_of_year() {
    // Proves: one time column may mix Unix seconds, `T`/space, `Z` and offsets after a
    // BOM; day-of-year columns join with a format.
    let schema = Schema {
        station: StationSpec::Column(name("station")),
        time: TimeSpec::Timestamp(name("time")),
        measures: vec![name("temp")],
        ..Schema::default()
    };
    let times: Vec<i64> = load_samples(&["iso_and_unix.csv"], &schema).iter().map(|(o, _)| o.time).collect();
    let expected = ["2020-01-01T00:00Z", "2020-01-01T01:00Z", "2020-01-01T01:30Z", "2020-01-01T03:00Z"];
    assert_eq!(times, expected.map(seconds));
    let schema = Schema {
        station: StationSpec::Constant("x".into()),
        time: TimeSpec::Joined {
            columns: vec![name("year"), name("doy"), name("hour")],
            format: Some("%Y %j %H".into()),
        },
        measures: vec![name("temp")],
        ..Schema::default()
    };
    let times: Vec<i64> = load_samples(&["day_of_year.csv"], &schema).iter().map(|(o, _)| o.time).collect();
    assert_eq!(times, [seconds("2020-02-29"), seconds("2020-03-01T12:00")]);
}

#[test]
fn column_sentinels_and_quality_flags_drop_values() {
    // Proves: a sentinel of one column leaves the same number in another column alone;
    // a value whose flag column holds a dropped flag counts as missing, other flags
    // keep it; with no drop list any non-empty flag drops.
    let text =
        "station,time,temp,temp_flag,rain\nA,2020-01-01,99.9,,99.9\nA,2020-01-02,1.5,S,2\nA,2020-01-03,2.5,X,3\n";
    let mut schema = Schema {
        station: StationSpec::Column(name("station")),
        time: TimeSpec::Timestamp(name("time")),
        measures: vec![name("temp"), name("rain")],
        column_sentinels: vec![(name("temp"), vec![99.9])],
        flags: vec![(name("temp"), name("temp_flag"))],
        drop_flags: vec!["X".into()],
        ..Schema::default()
    };
    let measures = |schema: &Schema| {
        let mut reader = ObservationReader::new(text.as_bytes(), schema).expect("opens");
        let mut sink = Collect::default();
        load(&mut reader, &mut sink, LoadOptions::default(), &mut |_, _| {}).expect("loads");
        sink.rows.into_iter().map(|(o, _)| o.measures).collect::<Vec<_>>()
    };
    assert_eq!(measures(&schema), [vec![None, Some(99.9)], vec![Some(1.5), Some(2.0)], vec![None, Some(3.0)]]);
    schema.drop_flags.clear();
    assert_eq!(measures(&schema)[1], [None, Some(2.0)]);
}

#[test]
fn met_office_station_file_notes_flags_and_remarks() {
    // Proves: the Met Office's station file (notes above the header, a units row,
    // monthly rows of year and month, `*` and `#` after values, `---` for missing, a
    // trailing `Provisional`) loads with flags: each value dated its month's first day,
    // flagged values kept, `---` missing. A word after the last column is a remark only
    // in aligned columns, and only without digits.
    let mut schema = Schema {
        delimiter: Delimiter::Whitespace,
        station: StationSpec::Preamble { line: 1, field: 1 },
        time: TimeSpec::Joined { columns: vec![name("yyyy"), name("mm")], format: Some("%Y %m".into()) },
        measures: ["tmax", "tmin", "af", "rain", "sun"].map(name).into(),
        ..Schema::default()
    };
    schema.missing.tokens.push("---".into());
    schema.missing.suffix_flags = "*#".into();
    let rows = load_samples(&["metoffice_oxforddata.txt"], &schema);
    assert_eq!(rows.len(), 19);
    let (first, last) = (&rows[0].0, &rows[18].0);
    assert_eq!((first.station.as_str(), first.time), ("Oxford", seconds("1853-01-01")));
    assert_eq!(first.measures, [Some(8.4), Some(2.7), Some(4.0), Some(62.8), None]);
    assert_eq!((last.time, &last.measures[3..]), (seconds("2023-07-01"), &[Some(108.4), Some(156.9)][..]));
    assert!(rows[18].1.ends_with("Provisional"), "the raw record keeps the remark: {}", rows[18].1);
    let long_row = |text: &str, delimiter| {
        let schema = Schema { delimiter, measures: vec![ColumnRef::Index(2)], ..Schema::default() };
        let mut reader = ObservationReader::new(text.as_bytes(), &schema).expect("opens");
        load(&mut reader, &mut Collect::default(), LoadOptions::default(), &mut |_, _| {}).err().map(|e| e.to_string())
    };
    let rows = "A 2020-01-01 1.5\nA 2020-01-02 2.5\nA 2020-01-03 3.5\nA 2020-01-04 4.5";
    assert_eq!(long_row(&format!("{rows} Provisional\n"), Delimiter::Whitespace), None);
    let error = long_row(&format!("{rows} 7\n"), Delimiter::Whitespace).expect("a long row");
    assert!(error.contains("long row: 4 fields, expected 3"), "{error}");
    let commas = format!("{},Provisional\n", rows.replace(' ', ","));
    let error = long_row(&commas, Delimiter::Byte(b',')).expect("a long row");
    assert!(error.contains("long row: 4 fields, expected 3"), "{error}");
}

#[test]
fn mutated_samples_of_every_layout_never_panic() {
    // Proves: bytes flipped, dropped or inserted anywhere in the samples of each
    // layout (preamble, header, quotes, Latin-1, whitespace) give rows or errors, never
    // a panic, with detection on and with the layout's own flags. Seed printed.
    use rand::Rng;
    let mut rng = quiredb_test_support::Rng::new(quiredb_test_support::random_seed());
    let variable =
        Layout::Variable { variable: ColumnRef::Index(2), value: ColumnRef::Index(3), elements: vec!["TMAX".into()] };
    let schemas = [
        Schema::default(),
        Schema {
            layout: Layout::Wide { pattern: PeriodPattern::DayNumbers, measure: "x".into() },
            ..Schema::default()
        },
        Schema {
            layout: Layout::Wide { pattern: PeriodPattern::YearUnderscoreMonth, measure: "x".into() },
            ..Schema::default()
        },
        Schema { layout: variable, station: StationSpec::Preamble { line: 1, field: 2 }, ..Schema::default() },
        Schema {
            time: TimeSpec::Joined {
                columns: vec![ColumnRef::Index(0), ColumnRef::Index(1)],
                format: Some("%d.%m.%Y %H:%M".into()),
            },
            measures: vec![ColumnRef::Index(2)],
            utc_offset_seconds: 3600,
            ..Schema::default()
        },
    ];
    let samples = [
        "tmy3_724666.csv",
        "dwd_muenchen_latin1.csv",
        "ghcn_daily_USW00094728.csv",
        "wide_monthly_months.csv",
        "wide_daily_days.csv",
        "iso_and_unix.csv",
        "campbell_toa5.dat",
        "metoffice_oxforddata.txt",
        "noaa_lcd_72505394728.csv",
    ];
    for round in 0..360 {
        let mut bytes = std::fs::read(sample(samples[round % samples.len()])).expect("sample");
        for _ in 0..rng.random_range(1..6) {
            let at = rng.random_range(0..bytes.len());
            match rng.random_range(0..3) {
                0 => bytes[at] = rng.random(),
                1 => drop(bytes.remove(at)),
                _ => bytes.insert(at, *b",;\t \n\"-.:0123456789Ja\xe9".get(rng.random_range(0..21)).unwrap_or(&b'x')),
            }
        }
        for schema in &schemas {
            if let Ok(mut reader) = ObservationReader::new(bytes.as_slice(), schema) {
                let options = LoadOptions { skip_bad: round % 2 == 0, ..LoadOptions::default() };
                let _ = load(&mut reader, &mut Collect::default(), options, &mut |_, _| {});
            }
        }
    }
}

#[test]
fn wide_date_columns_give_raw_records_per_cell_and_bad_rows_give_none() {
    // Proves: YYYYMMDD columns (times and texts computed once per input) give one
    // observation per cell with the raw record `station,time,value as written`, the
    // station quoted when it holds the delimiter and values trimmed; a row with a bad
    // cell gives no observation at all (skipped whole, the rows after it go on); a
    // second file with other period columns gets its own times (the same station as
    // the first file's last row); one with another delimiter is refused, naming it:
    // `agg` reads every record of a database by one layout.
    let first = "station,20200101,20200102,20200103\n\"Oslo, Blindern\",1.5,-2,NA\nBergen,3.0,x,4\nTromso, 7 ,8,9\n";
    let second = "station,20210301,20210302\nTromso,5,6\n";
    let inputs = vec![("a.csv".to_owned(), first.as_bytes()), ("b.csv".to_owned(), second.as_bytes())];
    let schema = Schema {
        station: StationSpec::Column(name("station")),
        layout: Layout::Wide { pattern: PeriodPattern::parse("YYYYMMDD").expect("pattern"), measure: "t".into() },
        measures: Vec::new(),
        ..Schema::default()
    };
    let mut reader = ObservationReader::from_files(inputs, &schema).expect("opens");
    let mut sink = Collect::default();
    let options = LoadOptions { skip_bad: true, ..LoadOptions::default() };
    let summary = load(&mut reader, &mut sink, options, &mut |_, _| {}).expect("loads");
    let raws: Vec<&str> = sink.rows.iter().map(|(_, raw)| raw.as_str()).collect();
    assert_eq!(
        raws,
        [
            "\"Oslo, Blindern\",2020-01-01T00:00,1.5",
            "\"Oslo, Blindern\",2020-01-02T00:00,-2",
            "\"Oslo, Blindern\",2020-01-03T00:00,NA",
            "Tromso,2020-01-01T00:00,7",
            "Tromso,2020-01-02T00:00,8",
            "Tromso,2020-01-03T00:00,9",
            "Tromso,2021-03-01T00:00,5",
            "Tromso,2021-03-02T00:00,6",
        ]
    );
    let seen: Vec<_> = sink.rows.iter().map(|(o, _)| (o.station.as_str(), o.time, o.measures.clone())).collect();
    assert_eq!(seen[1], ("Oslo, Blindern", seconds("2020-01-02"), vec![Some(-2.0)]));
    assert_eq!(seen[2].2, vec![None]);
    assert_eq!(seen[3], ("Tromso", seconds("2020-01-01"), vec![Some(7.0)]));
    assert_eq!(seen[6], ("Tromso", seconds("2021-03-01"), vec![Some(5.0)]));
    assert_eq!((summary.rows, summary.skipped_rows), (8, 1));
    assert_eq!(summary.skipped[0].line, 3, "{}", summary.skipped[0].error);
    let semicolons = "station;20210301;20210302\nTromso;5;6\n";
    let inputs = vec![("a.csv".to_owned(), first.as_bytes()), ("c.csv".to_owned(), semicolons.as_bytes())];
    let mut reader = ObservationReader::from_files(inputs, &schema).expect("opens");
    let options = LoadOptions { skip_bad: true, ..LoadOptions::default() };
    let refused = load(&mut reader, &mut Collect::default(), options, &mut |_, _| {}).expect_err("another delimiter");
    assert!(refused.to_string().contains("c.csv") && refused.to_string().contains("joined by ';'"), "{refused}");
}

/// `text` saved as UTF-16 at `path`, little- or big-endian, after a byte order mark if `bom`.
fn save_utf16(path: &Path, text: &str, little: bool, bom: bool) {
    let units = bom.then_some(0xFEFF).into_iter().chain(text.encode_utf16());
    let bytes: Vec<u8> = units.flat_map(|unit| if little { unit.to_le_bytes() } else { unit.to_be_bytes() }).collect();
    std::fs::write(path, bytes).expect("write the UTF-16 copy");
}

#[test]
fn utf16_files_load_as_their_utf8_twins() {
    // Proves: a file saved as UTF-16 (either byte order) with its byte order mark is
    // read as such without being told, and without one when the encoding is named;
    // preamble, non-ASCII station and decimal commas come out as from the original,
    // and an aligned-columns file's preamble is skipped after its spaces collapse.
    let schema = dwd_schema();
    let expected = load_samples(&["dwd_muenchen_latin1.csv"], &schema);
    assert_eq!(expected[0].0.station, "München-Stadt");
    let latin1 = std::fs::read(sample("dwd_muenchen_latin1.csv")).expect("sample");
    let text: String = latin1.iter().map(|&byte| char::from(byte)).collect();
    let dir = tempfile::tempdir().expect("tmp dir");
    for little in [true, false] {
        let path = dir.path().join(format!("dwd-{little}.txt"));
        save_utf16(&path, &text, little, true);
        assert_eq!(load_paths(&[path], &schema), expected, "little-endian: {little}");
    }
    let path = dir.path().join("dwd-no-bom.txt");
    save_utf16(&path, &text, true, false);
    let named = Schema { encoding: TextEncoding::from_label("utf-16le").expect("a label"), ..schema.clone() };
    assert_eq!(load_paths(&[path], &named), expected);

    let aligned = "# station 725030, aligned\n#   more   notes  \n2020  1  1  0   44  -11\n2020  1  1  1   39   -9\n";
    let schema = Schema {
        station: StationSpec::Constant("725030".into()),
        time: TimeSpec::Parts {
            year: ColumnRef::Index(0),
            month: ColumnRef::Index(1),
            day: ColumnRef::Index(2),
            hour: Some(ColumnRef::Index(3)),
        },
        measures: [4, 5].map(ColumnRef::Index).to_vec(),
        ..Schema::default()
    };
    let (utf8, utf16) = (dir.path().join("aligned.txt"), dir.path().join("aligned16.txt"));
    std::fs::write(&utf8, aligned).expect("write");
    save_utf16(&utf16, aligned, true, true);
    let expected = load_paths(&[utf8], &schema);
    assert_eq!(expected.len(), 2);
    assert_eq!(load_paths(&[utf16], &schema), expected);
}

#[test]
fn lines_ended_by_a_lone_cr_load_and_count_as_lines() {
    // Proves: a file whose lines end with a lone CR (old spreadsheets' "CSV
    // (Macintosh)") is sniffed and loaded as its LF twin, and a bad value in it is
    // reported at its own line.
    let schema = dwd_schema();
    let expected = load_samples(&["dwd_muenchen_latin1.csv"], &schema);
    let latin1 = std::fs::read(sample("dwd_muenchen_latin1.csv")).expect("sample");
    let cr: Vec<u8> =
        latin1.iter().filter(|&&byte| byte != b'\r').map(|&byte| if byte == b'\n' { b'\r' } else { byte }).collect();
    let dir = tempfile::tempdir().expect("tmp dir");
    let path = dir.path().join("dwd-cr.csv");
    std::fs::write(&path, &cr).expect("write");
    assert_eq!(load_paths(std::slice::from_ref(&path), &schema), expected);
    let lines = cr.iter().filter(|&&byte| byte == b'\r').count() as u64;
    let mut bad = cr.clone();
    bad.extend_from_slice(b"01.03.2021;03:00;x1,0;0,0;954,7\r");
    std::fs::write(&path, &bad).expect("write");
    match try_load_paths(&[path], &schema) {
        Err(quiredb_datasets::Error::Csv { line, .. }) => assert_eq!(line, lines + 1),
        other => panic!("a bad value is an error at its line: {other:?}"),
    }
}

#[test]
fn campbell_toa5_tables_skip_their_units_rows() {
    // Proves: a logger's TOA5 file loads as its header names it: the file-information
    // line is preamble (more fields than the rows), its second field the station; the
    // units and processing rows under the header are not data; `NAN` is missing.
    let schema = Schema {
        station: StationSpec::Preamble { line: 1, field: 2 },
        time: TimeSpec::Timestamp(name("TIMESTAMP")),
        measures: ["AirTC_Avg", "RH", "BP_mbar_Avg", "Rain_mm_Tot", "WS_ms_Avg"].map(name).to_vec(),
        ..Schema::default()
    };
    let rows = load_samples(&["campbell_toa5.dat"], &schema);
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().all(|(o, _)| o.station == "Hilltop_Met"));
    assert_eq!(rows[0].0.time, seconds("2021-06-01T01:00"));
    assert_eq!(rows[0].0.measures, [Some(12.41), Some(88.3), Some(1003.2), Some(0.0), Some(1.82)]);
    assert_eq!(rows[2].0.measures[0], None);
    assert_eq!(rows[3].1, "2021-06-01 04:00:00,1204,11.02,92,1002.9,0,0.71");
}

#[test]
fn an_excel_sheet_loads_as_its_csv_export() {
    // Proves: an .xlsx file's first sheet loads like a CSV: its title row above a blank
    // row is preamble, date and time cells join into the time, an empty cell and an
    // error cell (#N/A) are missing, units in the header are found by name.
    let schema = Schema {
        station: StationSpec::Constant("Hilltop_Met".into()),
        time: TimeSpec::Joined { columns: vec![name("Date"), name("Time")], format: None },
        measures: ["Temperature", "Pressure", "Rain", "Wind"].map(name).to_vec(),
        ..Schema::default()
    };
    let rows = load_samples(&["hilltop_hourly.xlsx"], &schema);
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[0].0.time, seconds("2021-06-01T01:00"));
    assert_eq!(rows[0].0.measures, [Some(12.41), Some(1003.0), Some(0.0), Some(1.82)]);
    assert_eq!(rows[2].0.measures[0], None);
    assert_eq!(rows[3].0.measures, [Some(11.02), Some(1002.0), None, Some(0.71)]);
    assert_eq!(rows[1].1, "2021-06-01,02:00:00,2021-06-01T02:00:00,11.97,1003,0.2,1.46,\"a, b\"");
    let observed = Schema { time: TimeSpec::Timestamp(name("Observed")), ..schema };
    let times: Vec<i64> = load_samples(&["hilltop_hourly.xlsx"], &observed).iter().map(|(o, _)| o.time).collect();
    assert_eq!(times, rows.iter().map(|(o, _)| o.time).collect::<Vec<_>>(), "a date-time cell gives the same times");
}
