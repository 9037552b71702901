//! The `quire` command line, run as a user would: the demo, info, check and compact on
//! its database, and one-line errors with a non-zero exit for bad files.

use std::path::Path;
use std::process::{Command, Output};

fn quire(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_quire")).args(args).output().expect("quire runs")
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("UTF-8 temp path")
}

#[test]
fn demo_then_info_check_and_compact_on_its_database() {
    // Proves: the README's main job works and leaves a database the tools accept.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("demo.quire");
    let demo = quire(&["demo", "--db", path_str(&db)]);
    assert!(demo.status.success(), "{}", text(&demo));
    assert!(text(&demo).contains("integrity check: clean"), "{}", text(&demo));
    let info = quire(&["info", path_str(&db)]);
    assert!(info.status.success(), "{}", text(&info));
    assert!(text(&info).contains("page size"), "{}", text(&info));
    let check = quire(&["check", path_str(&db)]);
    assert!(check.status.success(), "{}", text(&check));
    for kind in ["catalog", "B+tree leaf", "B+tree head", "R*-tree node", "queue data", "XML collection head"] {
        assert!(text(&check).contains(kind), "check names the kind {kind}: {}", text(&check));
    }
    assert!(!text(&check).contains("no structure defines"), "{}", text(&check));
    let step = quire(&["compact", path_str(&db), "--steps", "1", "--budget", "8"]);
    assert!(step.status.success(), "{}", text(&step));
    assert!(text(&step).contains("step 1: moved"), "{}", text(&step));
    assert!(!text(&step).contains("step 2"), "one step only: {}", text(&step));
    let compact = quire(&["compact", path_str(&db)]);
    assert!(compact.status.success(), "{}", text(&compact));
    assert!(text(&compact).contains("bytes ->"), "{}", text(&compact));
    let check = quire(&["check", path_str(&db)]);
    assert!(check.status.success(), "after compact: {}", text(&check));
}

#[test]
fn bad_files_give_one_line_errors_and_a_failing_status() {
    // Proves: missing, foreign and corrupted files are reported clearly, never a panic.
    let dir = tempfile::tempdir().unwrap();
    let missing = quire(&["info", path_str(&dir.path().join("missing"))]);
    assert!(!missing.status.success());
    assert_eq!(String::from_utf8_lossy(&missing.stderr).lines().count(), 1, "{}", text(&missing));
    let foreign = dir.path().join("foreign");
    std::fs::write(&foreign, vec![b'x'; 20_000]).unwrap();
    let output = quire(&["check", path_str(&foreign)]);
    assert!(!output.status.success());
    assert!(text(&output).contains("not a QuireDB database"), "{}", text(&output));
    assert!(!text(&output).contains("panicked"));

    let db = dir.path().join("flipped.quire");
    assert!(quire(&["demo", "--db", path_str(&db)]).status.success());
    let mut bytes = std::fs::read(&db).unwrap();
    let page = 8192 * 40; // a data page of the demo's first transaction
    bytes[page + 1000] ^= 0x10;
    std::fs::write(&db, bytes).unwrap();
    let output = quire(&["check", path_str(&db)]);
    assert!(!output.status.success(), "{}", text(&output));
    assert!(text(&output).contains("corrupted page"), "{}", text(&output));
    assert!(!text(&output).contains("panicked"));
}

#[test]
fn info_and_check_of_a_rolled_back_file_report_it_and_never_change_it() {
    // Proves: a file whose newest commit fails verification is reported (check exits
    // non-zero naming the rollback) and looking at it writes nothing. Without a commit
    // log, so that the second commit is written in place and verified at open.
    use quiredb::engine::{Database, Durability};
    use quiredb::structures::btree::LEAF_PAGE;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rolled.quire");
    let db = Database::builder().commit_log_pages(0).create(&path).unwrap();
    let txn = db.begin_write().unwrap();
    txn.alloc_page(LEAF_PAGE).unwrap()[0] = 1;
    txn.commit(Durability::Full).unwrap();
    let txn = db.begin_write().unwrap();
    for _ in 0..300 {
        txn.alloc_page(LEAF_PAGE).unwrap()[0] = 2;
    }
    txn.commit(Durability::Checksummed).unwrap();
    drop(db);
    let mut bytes = std::fs::read(&path).unwrap();
    let victim = (2..bytes.len() / 8192)
        .find(|page| bytes[page * 8192 + 4] == LEAF_PAGE.code() && bytes[page * 8192 + 16] == 2)
        .expect("a leaf of the second commit");
    bytes[victim * 8192 + 100] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let info = quire(&["info", path_str(&path)]);
    assert!(info.status.success(), "{}", text(&info));
    assert!(text(&info).contains("instead of 2"), "{}", text(&info));
    let check = quire(&["check", path_str(&path)]);
    assert!(!check.status.success(), "{}", text(&check));
    assert!(text(&check).contains("rollback at open"), "{}", text(&check));
    assert!(std::fs::read(&path).unwrap() == bytes, "info or check changed the file");
}

#[test]
fn load_xml_then_info_value_and_check_and_a_malformed_document_changes_nothing() {
    // Proves: load-xml loads a folder as one collection, xml-info and xml-value read it
    // back, check verifies it; a malformed document fails the load with file, line and
    // column and leaves the database as it was; --skip-bad loads the rest.
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    std::fs::write(docs.join("a.xml"), "<a k='v'>one <b>two</b></a>").unwrap();
    std::fs::write(docs.join("b.xml"), "<c>three</c>").unwrap();
    let db = dir.path().join("x.quire");
    let load = quire(&["load-xml", path_str(&db), "col", path_str(&docs), "--quiet"]);
    assert!(load.status.success(), "{}", text(&load));
    assert!(text(&load).contains("documents      2"), "{}", text(&load));
    let info = quire(&["xml-info", path_str(&db), "col", "--paths"]);
    assert!(info.status.success(), "{}", text(&info));
    assert!(text(&info).contains("@k"), "the path summary lists the attribute: {}", text(&info));
    let value = quire(&["xml-value", path_str(&db), "col", "1"]);
    assert_eq!(String::from_utf8_lossy(&value.stdout), "one two\n", "{}", text(&value));
    let xml = quire(&["xml-value", path_str(&db), "col", "0", "--xml"]);
    assert_eq!(String::from_utf8_lossy(&xml.stdout), "<a k=\"v\">one <b>two</b></a>\n", "{}", text(&xml));
    let check = quire(&["check", path_str(&db)]);
    assert!(check.status.success(), "{}", text(&check));
    let before = std::fs::read(&db).unwrap();
    std::fs::write(docs.join("c.xml"), "<d>\n<e></d>").unwrap();
    let bad = quire(&["load-xml", path_str(&db), "col2", path_str(&docs), "--quiet"]);
    assert!(!bad.status.success());
    assert!(text(&bad).contains("c.xml") && text(&bad).contains("line 2"), "{}", text(&bad));
    assert!(!text(&bad).contains("panicked"));
    let list = quire(&["xml-info", path_str(&db)]);
    assert!(!text(&list).contains("col2"), "the failed load left no collection: {}", text(&list));
    assert_eq!(std::fs::read(&db).unwrap().len(), before.len());
    let skip = quire(&["load-xml", path_str(&db), "col2", path_str(&docs), "--quiet", "--skip-bad"]);
    assert!(skip.status.success(), "{}", text(&skip));
    assert!(text(&skip).contains("skipped") && text(&skip).contains("c.xml"), "{}", text(&skip));
    let check = quire(&["check", path_str(&db)]);
    assert!(check.status.success(), "{}", text(&check));
}

#[test]
fn xpath_prints_counts_values_xml_and_plans_and_names_what_it_cannot_answer() {
    // Proves: quire xpath answers over a multi-document collection in document order
    // (values with their line breaks, XML, count, node list), explains its plan, and
    // fails with the column of an unsupported construct or the name of a missing
    // collection — without a panic.
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    std::fs::write(docs.join("a.xml"), "<r><p n='1'>x\ny</p><p n='2'>z</p></r>").unwrap();
    std::fs::write(docs.join("b.xml"), "<r><p n='3'/></r>").unwrap();
    let db = dir.path().join("x.quire");
    assert!(quire(&["load-xml", path_str(&db), "c", path_str(&docs), "--quiet"]).status.success());
    let run = |args: &[&str]| {
        let mut all = vec!["xpath", path_str(&db), "c"];
        all.extend_from_slice(args);
        quire(&all)
    };
    assert_eq!(String::from_utf8_lossy(&run(&["//p[. != 'z']/@n", "--values"]).stdout), "1\n3\n");
    assert_eq!(String::from_utf8_lossy(&run(&["/r/p[@n or . = 'z']", "--count"]).stdout), "3\n");
    assert_eq!(String::from_utf8_lossy(&run(&["//p[@n = 1]", "--values"]).stdout), "x\ny\n");
    assert_eq!(String::from_utf8_lossy(&run(&["//p[@n = 2]", "--xml"]).stdout), "<p n=\"2\">z</p>\n");
    let listed = run(&["//p", "--limit", "2"]);
    assert_eq!(String::from_utf8_lossy(&listed.stdout).lines().count(), 2, "{}", text(&listed));
    assert!(text(&listed).contains("/r/p"), "{}", text(&listed));
    let explain = run(&["//r[p/@n > 2]/p", "--explain"]);
    assert!(text(&explain).contains("semi-join") && text(&explain).contains("rows out"), "{}", text(&explain));
    assert_eq!(String::from_utf8_lossy(&run(&["//p[last()]/@n", "--values"]).stdout), "2\n3\n");
    assert_eq!(String::from_utf8_lossy(&run(&["count(//p)"]).stdout), "3\n");
    assert_eq!(String::from_utf8_lossy(&run(&["name(//p[2]/..) = 'r'"]).stdout), "true\n");
    let unsupported = run(&["//p[$v]"]);
    assert!(!unsupported.status.success());
    assert!(
        text(&unsupported).contains("column 5") && !text(&unsupported).contains("panicked"),
        "{}",
        text(&unsupported)
    );
    let missing = quire(&["xpath", path_str(&db), "nope", "//p"]);
    assert!(!missing.status.success() && text(&missing).contains("\"nope\""), "{}", text(&missing));
}

#[test]
fn xpath_and_xpath_ref_bind_namespace_prefixes_alike() {
    // Proves: `--ns` binds a prefix for quire xpath and xpath-ref alike, an unbound
    // prefix stands for the one URI the data uses with it, and a prefix with no URI
    // is an error naming it and its column; `--var` and `--var-number` bind `$name`.
    let dir = tempfile::tempdir().unwrap();
    let feed = dir.path().join("feed.xml");
    let text_of = r#"<feed xmlns="urn:atom" xmlns:dc="urn:dc" xml:lang="en"><entry><dc:creator>Ann</dc:creator></entry><entry xml:lang="fr-CA"><title>Deux</title><dc:creator>Bob</dc:creator></entry></feed>"#;
    std::fs::write(&feed, text_of).unwrap();
    let db = dir.path().join("ns.quire");
    assert!(quire(&["load-xml", path_str(&db), "f", path_str(&feed), "--quiet"]).status.success());
    for (query, want) in [
        ("//a:entry[lang('fr')]/dc:creator", "Bob\n"),
        ("count(//Q{urn:atom}*)", "4\n"),
        ("namespace-uri(//dc:creator)", "urn:dc\n"),
        ("count(//entry/*[namespace-uri() = 'urn:atom'])", "1\n"),
    ] {
        let store = quire(&["xpath", path_str(&db), "f", query, "--values", "--ns", "a=urn:atom"]);
        assert_eq!(String::from_utf8_lossy(&store.stdout), want, "{query}: {}", text(&store));
        let reference = quire(&["xpath-ref", path_str(&feed), query, "--ns", "a=urn:atom"]);
        assert_eq!(String::from_utf8_lossy(&reference.stdout), want, "{query}: {}", text(&reference));
    }
    let info = quire(&["xml-info", path_str(&db), "f"]);
    let listed = ["namespaces     (default) = urn:atom", "dc = urn:dc", "xml = http://www.w3.org/XML/1998/namespace"];
    assert!(listed.iter().all(|l| text(&info).contains(l)), "{}", text(&info));
    let unbound = quire(&["xpath", path_str(&db), "f", "//a:entry"]);
    assert!(!unbound.status.success() && text(&unbound).contains("prefix `a` at column 3"), "{}", text(&unbound));
    let bad = quire(&["xpath", path_str(&db), "f", "//a:entry", "--ns", "a"]);
    assert!(!bad.status.success() && text(&bad).contains("PREFIX=URI"), "{}", text(&bad));
    // `$name` is a bound string or number, quoted by nothing.
    let query = "count(//dc:creator[. = $who]) + $n";
    let vars = ["--var", "who=Bob", "--var-number", "n=0.5"];
    for command in ["xpath", "xpath-ref"] {
        let mut args =
            if command == "xpath" { vec![command, path_str(&db), "f"] } else { vec![command, path_str(&feed)] };
        args.extend([query].iter().chain(&vars));
        let run = quire(&args);
        assert_eq!(String::from_utf8_lossy(&run.stdout), "1.5\n", "{command}: {}", text(&run));
    }
    let unbound = quire(&["xpath", path_str(&db), "f", query]);
    assert!(!unbound.status.success() && text(&unbound).contains("`$who`"), "{}", text(&unbound));
    // XPath 1.0's reading of `entry` (no namespace: none here), or Atom's as default.
    for (flags, want) in [(&["--strict-names"][..], "0\n"), (&["--default-ns", "urn:atom"][..], "2\n")] {
        let mut args = vec!["xpath", path_str(&db), "f", "count(//entry)"];
        args.extend(flags);
        let run = quire(&args);
        assert_eq!(String::from_utf8_lossy(&run.stdout), want, "{flags:?}: {}", text(&run));
    }
}

/// A committed sample of `datasets/tests/data/meteo`.
fn meteo_sample(name: &str) -> String {
    format!("{}/datasets/tests/data/meteo/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Runs `quire load-csv` on `files` into `db` with `flags`; asserts success and the row count.
fn load_csv(db: &Path, files: &[&str], flags: &[&str], rows: u64) -> String {
    let mut args = vec!["load-csv", "--db", path_str(db), "--quiet"];
    args.extend(files);
    args.extend(flags);
    let output = quire(&args);
    assert!(output.status.success(), "{args:?}: {}", text(&output));
    assert!(text(&output).contains(&format!("rows loaded:   {rows}\n")), "{args:?}: {}", text(&output));
    text(&output)
}

#[test]
fn load_csv_takes_the_layouts_of_the_field_with_flags_only() {
    // Proves: each layout class of issue 24 loads from the command line with flags
    // only, and `range` finds its rows by station and time.
    let dir = tempfile::tempdir().unwrap();
    let tmy = dir.path().join("tmy.quire");
    let flags = ["--station-from-preamble", "1,2", "--time", "Date,Time", "--time-format", "%m/%d/%Y %H:%M"];
    let more = ["--utc-offset", "-07:00", "--measures", "Dry-bulb,Dew-point,Pressure,Wspd"];
    load_csv(&tmy, &[&meteo_sample("tmy3_724666.csv")], &[&flags[..], &more].concat(), 4);
    let range = quire(&[
        "range",
        path_str(&tmy),
        "--station",
        "DENVER CENTENNIAL",
        "--from",
        "1988-01-02T07:00Z",
        "--to",
        "1988-01-02T07:00Z",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&range.stdout),
        "01/01/1988,24:00,0,0,-6.0,-11.0,59,822,4.5\n",
        "{}",
        text(&range)
    );

    let dwd = dir.path().join("dwd.quire");
    let flags =
        ["--station-from-preamble", "1,2", "--time", "Datum,Zeit", "--time-format", "%d.%m.%Y %H:%M", "--na", "-999.9"];
    let out = load_csv(
        &dwd,
        &[&meteo_sample("dwd_muenchen_latin1.csv")],
        &[&flags[..], &["--measures", "Lufttemperatur,Niederschlag,Luftdruck"]].concat(),
        3,
    );
    assert!(out.contains("Luftdruck (hPa)          1"), "one missing pressure: {out}");

    let ghcn = dir.path().join("ghcn.quire");
    let flags = [
        "--no-header",
        "--station",
        "0",
        "--time",
        "1",
        "--time-format",
        "%Y%m%d",
        "--variable-column",
        "2",
        "--value-column",
        "3",
        "--measures",
        "TMAX,TMIN,PRCP",
    ];
    load_csv(&ghcn, &[&meteo_sample("ghcn_daily_USW00094728.csv")], &flags, 3);
    let range =
        quire(&["range", path_str(&ghcn), "--station", "USW00094728", "--from", "2020-01-02", "--to", "2020-01-02"]);
    assert_eq!(String::from_utf8_lossy(&range.stdout), "USW00094728,2020-01-02T00:00,72,11,5\n", "{}", text(&range));

    let wide = dir.path().join("wide.quire");
    let flags = ["--station", "station", "--wide", "months", "--time", "year", "--wide-measure", "temp"];
    load_csv(&wide, &[&meteo_sample("wide_monthly_months.csv")], &flags, 24);
    // Its records are joined by ',', the first file's by ';': a database of its own
    // (`records_of_another_layout_are_refused_not_misread`).
    let wide = dir.path().join("wide-stations.quire");
    let flags = ["--station", "station", "--wide", "YYYY_MM", "--na", "-99999"];
    load_csv(&wide, &[&meteo_sample("wide_stations_yyyy_mm.csv")], &flags, 6);

    let isd = dir.path().join("isd.quire");
    let flags = [
        "--delimiter",
        "whitespace",
        "--no-header",
        "--station-from-file",
        "--time",
        "0,1,2,3",
        "--measures",
        "4,5,6,7,8",
    ];
    let out = load_csv(&isd, &[&meteo_sample("isd_lite")], &flags, 5);
    assert!(out.contains("stations:      2"), "{out}");
}

#[test]
fn inspect_prints_the_layout_and_a_command_line_that_loads_the_file() {
    // Proves: --inspect writes nothing and its printed command line loads the file as
    // it is, for each sample layout, and for the Latin-1 one saved as UTF-16 (Excel's
    // "Unicode text"), whose encoding it names.
    let dir = tempfile::tempdir().unwrap();
    let utf16_dir = tempfile::tempdir().unwrap();
    let utf16 = utf16_dir.path().join("dwd_utf16.txt");
    let latin1 = std::fs::read(meteo_sample("dwd_muenchen_latin1.csv")).unwrap();
    let units = std::iter::once(0xFEFF).chain(latin1.iter().map(|&byte| u16::from(byte)));
    std::fs::write(&utf16, units.flat_map(u16::to_le_bytes).collect::<Vec<u8>>()).unwrap();
    let mut samples: Vec<(String, usize)> = [
        ("tmy3_724666.csv", 4),
        ("dwd_muenchen_latin1.csv", 3),
        ("ghcn_daily_USW00094728.csv", 3),
        ("wide_monthly_months.csv", 24),
        ("wide_stations_yyyy_mm.csv", 6),
        ("iso_and_unix.csv", 4),
        ("wide_daily_days.csv", 58),
        ("campbell_toa5.dat", 4),
        ("hilltop_hourly.xlsx", 4),
        ("ghcn_USW00094728.dly", 60),
        ("TG_STAID000005.txt", 200),
        ("metoffice_oxforddata.txt", 19),
        ("noaa_lcd_72505394728.csv", 75),
        ("knmi_uurgeg_260.txt", 5),
        ("en_climate_daily_ON_6105976_2020_P1D.csv", 31),
        ("bom_IDCJAC0009_066062_1800_Data.csv", 8),
    ]
    .map(|(name, rows)| (meteo_sample(name), rows))
    .into();
    samples.push((path_str(&utf16).to_owned(), 3));
    for (name, rows) in &samples {
        let output = quire(&["load-csv", name, "--inspect"]);
        assert!(output.status.success(), "{name}: {}", text(&output));
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let command = stdout.lines().last().expect("a command line").trim().to_owned();
        assert!(command.starts_with("quire load-csv "), "{name}: {stdout}");
        assert!(!stdout.contains("not found:"), "{name}: every sample's time and measures are found: {stdout}");
        let script = format!("{} {} --quiet", env!("CARGO_BIN_EXE_quire"), &command["quire ".len()..]);
        let run = Command::new("sh").arg("-c").arg(&script).current_dir(dir.path()).output().expect("sh runs");
        assert!(run.status.success(), "{name}: {script}: {}", text(&run));
        assert!(text(&run).contains(&format!("rows loaded:   {rows}\n")), "{name}: {stdout}\n{}", text(&run));
        assert_eq!(stdout.contains("encoding:      UTF-16LE, with a BOM"), name.ends_with("utf16.txt"), "{stdout}");
    }
    assert!(std::fs::read_dir(dir.path()).unwrap().count() == samples.len(), "only the loads wrote files");
}

#[test]
fn inspect_reads_archives_as_their_makers_write_them() {
    // Proves: the command line --inspect prints loads each archive's layout right: its
    // rows (a footer of notes is no row), its station, and each row's time, checked by
    // finding one row at its time. TMY3 with its source and uncertainty columns (and
    // 24:00), an EnergyPlus weather file (keyword lines, hours 1-24, minute 60), NSRDB's
    // PSM3 (a metadata names line and a values line above the header, minutes), a pandas
    // frame's row-number column, PVGIS (a preamble, YYYYMMDD:HHMM, a legend after the
    // rows), SURFRAD (no header; year, day of year, month, day, hour, minute; in January
    // too), USCRN (no header, WBAN, a date and an HHMM column, crossing midnight), CAMS
    // (`#` comments, the header in the last one, `;`, ISO periods), SolarAnywhere (a
    // padded title line, local and UTC time columns), MIDAS Open (BADC-CSV: metadata
    // down to `data`, `end data` after the rows), a Davis WeatherLink export (names on
    // two lines, `12/31/20`, `10:30p`, crossing a year), NOAA Global Hourly (packed
    // `TMP`, `WND`, … fields), the Japan Meteorological Agency (Shift_JIS, names on two
    // lines, quality columns), Weather Underground's old history files (`<br />` ending
    // each line), Met Éireann (`Station Name: …`, month names, `ind` columns), the
    // Finnish Meteorological Institute (year, month, day and a time of day), an Onset
    // HOBO logger (`GMT-05:00` in the time's name, `01:45:00 PM`, commas in names), NOAA
    // GSOD (a `STATION,DATE` header like Global Hourly's, with a plain `SLP`). Meteostat's
    // bulk files (gzipped, no header, the station in the file's name), KNMI's daily file,
    // a MeteoSwiss IDAweb order (a legend after the rows), Météo-France's SYNOP export
    // (`ID OMM station`, times with offsets, codes of places) and climatological files
    // (`NUM_POSTE`, `Q…` quality columns), Open-Meteo (the zone in the metadata, local
    // times; a daily file's sunrise is no time), the Iowa Environmental Mesonet's ASOS
    // files (`M` missing, `T` trace, `valid(America/Chicago)`), NOAA GHCNh (`|`, codes
    // beside each measure), AEMET (`;`, decimal commas, `Ip`, Latin-1, `horatmin`), the
    // Hong Kong Observatory (names in two languages, a legend of full-width lines), NASA
    // POWER's daily `YEAR,DOY` and hourly files in local solar time (`in LST`, New York's
    // longitude: 23:00 LST is 04:00 UTC), the Bureau of Meteorology's half-hourly files (three
    // times named by their format's tokens, one in UTC), SILO, a German spreadsheet's `;`
    // with decimal commas and points grouping thousands (`1.013,2`), NOAA CO-OPS's water
    // levels (0/1 flag columns after the measures, no measures), a comma-delimited export
    // with every field quoted and decimal commas (`"12,5"`).
    let dir = tempfile::tempdir().unwrap();
    let samples = [
        ("tmy3_sources_725650.csv", 48, "725650", "1991-01-02T00:00", "01/01/1991,24:00,0,2,0,4,"),
        ("energyplus_ams.epw", 48, "SCHIPHOL", "1996-01-02T00:00", "1996,1,1,24,60,"),
        ("nsrdb_psm3_145804.csv", 24, "145804", "2019-01-01T05:30", "2019,1,1,5,30,0,-11.5,-5.0,821,2.0"),
        ("pandas_index_psm.csv", 8, "pandas_index_psm", "2020-06-01T03:30", "7,2020,6,1,3,30,18.5,700"),
        ("pvgis_tmy_45_8.csv", 20, "pvgis_tmy_45_8", "2018-01-01T19:00", "20180101:1900,1.05,95.70,"),
        ("surfrad_bon19032.dat", 30, "Bondville", "2019-02-01T00:29", "0.483"),
        ("surfrad_bon19005.dat", 30, "Bondville", "2019-01-05T03:07", "3.117"),
        ("uscrn_subhourly_53131.txt", 24, "53131", "2019-01-02T00:30", "4.8"),
        ("cams_radiation_hourly.csv", 12, "cams_radiation_hourly", "2020-06-01T05:00", "2020-06-01T05:00:00.0/"),
        ("solaranywhere_sa.csv", 12, "0", "2021-01-01T10:00", "01/01/2021 05:00,0,-3.5,AN"),
        (
            "midas_open_dunkeswell_2020.csv",
            8,
            "1226",
            "2020-01-08T09:00",
            "09:00:00,DCNN,1226,24,1,DLY3208,1381,1001,9.9,5.0",
        ),
        (
            "noaa_global_hourly_72505394728.csv",
            10,
            "72505394728",
            "2020-01-01T09:51",
            "290,3.9,22000,16093,1.1,-1.9,1011.1",
        ),
        ("jma_tokyo_hourly.csv", 8, "jma_tokyo_hourly", "2024-01-02T03:00", "2024/1/2 3:00:00,4.3,8,1,0.0,8,1"),
        (
            "wunderground_KNYC_20150101.csv",
            12,
            "wunderground_KNYC_20150101",
            "2015-01-02T03:51",
            "10:51 PM,35.5,30.0,76,30.23,10.0,W,9.0",
        ),
        ("met_eireann_hly532.csv", 10, "DUBLIN AIRPORT", "1999-12-31T23:00", "31-dec-1999 23:00,2,0.9,0,4.2,0,3.2"),
        ("fmi_helsinki_kaisaniemi.csv", 8, "Helsinki Kaisaniemi", "2023-01-01T07:00", "2023,1,1,07:00,0.1,-1"),
        ("hobo_10432183.csv", 12, "10432183", "2017-07-14T18:45", "12,07/14/17 01:45:00 PM,83.000,54.000"),
        ("gsod_01001099999_2020.csv", 2, "01001099999", "2020-01-02T00:00", "1003.5"),
        ("weatherlink_export.txt", 12, "weatherlink_export", "2021-01-01T03:30", "1/01/21\t3:30a\t40.1\t40.2"),
        ("10637.csv.gz", 36, "10637", "2022-01-01T23:00", "2022-01-01,23,3.0,1.3,86,0.3,,250,14.1,,1012.5,,8"),
        ("etmgeg_260.txt", 31, "260", "2023-01-31T00:00", "  260,20230131,  250,   66,"),
        ("order_97564_SMA_data.txt", 36, "SMA", "2020-01-01T05:50", "SMA;202001010550;1.4;0.0;0.6"),
        (
            "donnees-synop-essentielles-omm.csv",
            24,
            "07149",
            "2020-01-03T21:00",
            "07149;2020-01-03T22:00:00+01:00;102730;",
        ),
        ("H_75_previous-2020-2022.csv.gz", 36, "75114001", "2022-01-01T23:00", ";2022010123;0;1;0;9;4.7;"),
        ("open_meteo_berlin_hourly.csv", 30, "open_meteo_berlin_hourly", "2024-01-02T04:00", "2024-01-02T05:00,-1.7"),
        ("open_meteo_zurich_daily.csv", 31, "open_meteo_zurich_daily", "2023-07-31T00:00", "2023-07-31,23.8,14.5"),
        ("asos_DSM.csv", 30, "DSM", "2022-01-01T23:53", "DSM,2022-01-01 23:53,20.49,16.62"),
        ("asos_DSM_debug.csv", 30, "DSM", "2022-01-01T23:53", "DSM,2022-01-01 17:53,18.70,15.70"),
        (
            "GHCNh_USW00094728_2023.psv",
            30,
            "USW00094728",
            "2023-01-02T05:51",
            "USW00094728|NY CITY CNTRL PK|2023|01|02|05|51|",
        ),
        ("aemet_1387_diarios.csv", 31, "1387", "2023-01-31T00:00", "2023-01-31;1387;A CORU\u{d1}A;"),
        ("CLMMAXT_HKO_.csv", 31, "CLMMAXT_HKO_", "2023-01-31T00:00", "2023,1,31,19.9,C"),
        ("nasa_power_daily_doy.csv", 31, "nasa_power_daily_doy", "2022-01-31T00:00", "2022,31,-2.55,2.40,0.55,-999.0"),
        ("nasa_power_hourly_lst.csv", 24, "nasa_power_hourly_lst", "2020-01-02T04:00", "2020,1,1,23,0.00,82.50"),
        (
            "coops_8518750_water_level.csv",
            30,
            "coops_8518750_water_level",
            "2023-01-01T02:54",
            "2023-01-01 02:54,0.715",
        ),
        ("quoted_decimal_commas_de.csv", 24, "Potsdam", "2023-01-15T23:00", "15.01.2023 23:00,Potsdam,\"1,7\","),
        ("HM01X_Data_066062_999999999.txt", 30, "066062", "2020-01-01T03:30", "hm, 066062,2020,01,01,14,30,"),
        ("silo_66062.csv", 31, "66062", "2023-01-31T00:00", "66062,2023-01-31,"),
        (
            "data_OBS_DEU_PT1H_T2M_3379.csv",
            24,
            "3379",
            "2023-01-01T23:00",
            "OBS_DEU_PT1H_T2M,3379,2023-01-01T23:00:00,",
        ),
        ("44025h2023.txt", 30, "44025h2023", "2023-01-01T04:50", "2023\t01\t01\t04\t50\t237"),
        ("open_meteo_two_locations.csv", 24, "1", "2024-01-01T11:00", "1,2024-01-01T11:00,"),
        ("decimal_comma_thousands_de.csv", 30, "decimal_comma_thousands_de", "2023-03-26T17:00", "26.03.2023 17:00;"),
    ];
    for (name, rows, station, time, found) in samples {
        let output = quire(&["load-csv", &meteo_sample(name), "--inspect"]);
        assert!(output.status.success(), "{name}: {}", text(&output));
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let command = stdout.lines().last().expect("a command line").trim().to_owned();
        let script = format!("{} {} --quiet", env!("CARGO_BIN_EXE_quire"), &command["quire ".len()..]);
        let run = Command::new("sh").arg("-c").arg(&script).current_dir(dir.path()).output().expect("sh runs");
        assert!(run.status.success(), "{name}: {script}: {}", text(&run));
        assert!(text(&run).contains(&format!("rows loaded:   {rows}\n")), "{name}: {stdout}\n{}", text(&run));
        let notes = text(&run).lines().any(|line| line.starts_with("notes:         5 short line(s) at the end"));
        assert_eq!(
            notes && text(&run).contains("(from line 30), read as notes: no rows"),
            name.starts_with("pvgis"),
            "{name}: {}",
            text(&run)
        );
        let stem = name.split('.').next().unwrap();
        let db = dir.path().join(format!("{stem}.quire"));
        let range = quire(&["range", path_str(&db), "--station", station, "--from", time, "--to", time]);
        let answer = text(&range);
        assert_eq!(answer.lines().filter(|line| !line.ends_with(" ms")).count(), 1, "{name} at {time}: {answer}");
        assert!(answer.contains(found), "{name} at {time}: {found:?} not in {answer}\n{stdout}");
    }
    // Quoted decimal commas are read as such: 1,7 °C at 23:00.
    let db = dir.path().join("quoted_decimal_commas_de.quire");
    let at = ["--from", "2023-01-15T23:00", "--to", "2023-01-15T23:00", "--format", "jsonl"];
    let jsonl = text(&quire(&[&["range", path_str(&db), "--station", "Potsdam"][..], &at].concat()));
    assert!(jsonl.contains("1.7") && jsonl.contains("1015.3"), "{jsonl}");
    // CO-OPS's flag columns are no measures, and a note says how to use them.
    let coops = text(&quire(&["load-csv", &meteo_sample("coops_8518750_water_level.csv"), "--inspect"]));
    assert!(coops.contains("--measures 'Water Level,Sigma'"), "{coops}");
    assert!(
        coops.contains("note:          O or I (for verified), F, R, L hold 0/1 flags after Water Level"),
        "{coops}"
    );
    // A table with no time column: said so, and the printed command asks for one
    // rather than reading the second column as Unix seconds.
    let timeless = dir.path().join("timeless.txt");
    std::fs::write(&timeless, "1\t2\t0\t12\n1\t3\t0\t12\n1\t4\t5\t12\n").unwrap();
    let output = quire(&["load-csv", path_str(&timeless), "--inspect"]);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(stdout.contains("not found:     a time column: --time COLUMN"), "{stdout}");
    assert!(stdout.trim_end().ends_with("--time TIME"), "{stdout}");
}

#[test]
fn a_bad_dly_line_is_an_error_naming_its_line_and_column_once() {
    // Proves: a GHCN-Daily `.dly` line whose value is not a number stops the load with
    // its line and column (said once, not repeated by the error's cause), and no
    // database is left.
    let dir = tempfile::tempdir().unwrap();
    let mut lines: Vec<String> =
        std::fs::read_to_string(meteo_sample("ghcn_USW00094728.dly")).unwrap().lines().map(String::from).collect();
    lines[2].replace_range(37..42, "  1x3");
    let (bad, db) = (dir.path().join("bad.dly"), dir.path().join("bad.quire"));
    std::fs::write(&bad, lines.join("\n")).unwrap();
    let mapping = ["--no-header", "--station", "0", "--time", "1", "--time-format", "%Y%m%d"];
    let elements = ["--variable-column", "2", "--value-column", "3", "--measures", "TMAX,TMIN"];
    let output = quire(&[&["load-csv", path_str(&bad), "--db", path_str(&db)][..], &mapping, &elements].concat());
    assert!(!output.status.success());
    let message = "GHCN-Daily line 3, column 38: day 3's value \"1x3\" is not a number";
    assert_eq!(text(&output).matches(message).count(), 1, "{}", text(&output));
    assert!(!db.exists(), "nothing written");
}

#[test]
fn load_csv_reads_the_worksheet_sheet_names() {
    // Proves: --sheet picks a spreadsheet's worksheet by name (the first is read
    // without it), and a sheet the workbook lacks is an error naming the file and its
    // sheets.
    let dir = tempfile::tempdir().unwrap();
    let (sheet, db) = (meteo_sample("hilltop_hourly.xlsx"), dir.path().join("s.quire"));
    let args = ["load-csv", &sheet, "--db", path_str(&db), "--station-name", "hill", "--time", "Date"];
    let daily = quire(&[&args[..], &["--measures", "Tmax,Tmin", "--sheet", "Daily", "--quiet"]].concat());
    assert!(daily.status.success(), "{}", text(&daily));
    assert!(text(&daily).contains("rows loaded:   2\n"), "{}", text(&daily));
    let wrong = quire(&[&args[..], &["--measures", "Tmax", "--sheet", "Weekly", "--quiet"]].concat());
    assert!(!wrong.status.success());
    assert!(text(&wrong).contains("hilltop_hourly.xlsx") && text(&wrong).contains("Hourly, Daily"), "{}", text(&wrong));
}

#[test]
fn load_csv_bad_value_names_file_line_column_and_value_and_changes_nothing() {
    // Proves: in a load of several files, a bad value stops the load with the file,
    // line, column and value, leaving the database as it was; --skip-bad loads the
    // rest and lists the row.
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("a.csv");
    let bad = dir.path().join("b.csv");
    std::fs::write(&good, "Station: Alpha\ndate;time;temp (C)\n01.02.2020;01:00;1,5\n").unwrap();
    std::fs::write(&bad, "Station: Beta\ndate;time;temp (C)\n01.02.2020;01:00;1,5\n01.02.2020;02:00;x1\n").unwrap();
    let db = dir.path().join("m.quire");
    let flags = ["--station-from-file", "--time", "date,time", "--time-format", "%d.%m.%Y %H:%M", "--measures", "temp"];
    load_csv(&db, &[path_str(&good)], &flags, 1);
    let before = std::fs::read(&db).unwrap();
    let mut args = vec!["load-csv", "--db", path_str(&db), "--quiet", path_str(&good), path_str(&bad)];
    args.extend(flags);
    let output = quire(&args);
    assert!(!output.status.success());
    let message = text(&output);
    assert!(
        message.contains("b.csv")
            && message.contains("line 4")
            && message.contains("column 3 (temp (C))")
            && message.contains("\"x1\""),
        "{message}"
    );
    assert!(message.contains("unchanged") && !message.contains("panicked"), "{message}");
    assert!(std::fs::read(&db).unwrap() == before, "the failed load changed the database");
    args.push("--skip-bad");
    let output = quire(&args);
    assert!(output.status.success(), "{}", text(&output));
    assert!(text(&output).contains("rows skipped:  1") && text(&output).contains("skip report"), "{}", text(&output));
}

#[test]
fn agg_and_output_formats_over_a_loaded_table() {
    // Proves: agg streams per-station buckets of one measure (mean, min, max, count,
    // sum; a missing cell counts nowhere) in table, csv and jsonl, honours --station,
    // --from/--to and --limit; range and knn print csv and jsonl with measures (range's
    // jsonl with each record's station and UTC time too).
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("wide.quire");
    let flags = ["--station", "station", "--wide", "months", "--time", "year", "--wide-measure", "temp"];
    load_csv(&db, &[&meteo_sample("wide_monthly_months.csv")], &flags, 24);
    let agg = |extra: &[&str]| {
        let mut args = vec!["agg", path_str(&db), "--every", "year", "--measure", "temp"];
        args.extend(extra);
        let output = quire(&args);
        assert!(output.status.success(), "{args:?}: {}", text(&output));
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    assert_eq!(
        agg(&["--fn", "mean,min,max,count,sum", "--format", "csv"]),
        "station,start,mean,min,max,count,sum\nValentia,2020-01-01T00:00,11.5,8,15.8,12,138\n\
         Valentia,2021-01-01T00:00,12.063636,7.5,16.9,11,132.7\n"
    );
    assert_eq!(
        agg(&["--fn", "count", "--format", "jsonl", "--limit", "1"]),
        "{\"count\":12,\"start\":\"2020-01-01T00:00\",\"station\":\"Valentia\"}\n"
    );
    let months =
        agg(&["--station", "Valentia", "--from", "2021-11-01", "--to", "2021-12-31", "--fn", "max", "--format", "csv"]);
    assert_eq!(months, "station,start,max\nValentia,2021-01-01T00:00,11.2\n");
    assert!(agg(&[]).starts_with("station "), "a table with a header line");
    let missing = quire(&["agg", path_str(&db), "--every", "day", "--measure", "rain"]);
    assert!(!missing.status.success() && text(&missing).contains("the database has: temp"), "{}", text(&missing));

    let range = quire(&[
        "range",
        path_str(&db),
        "--station",
        "Valentia",
        "--from",
        "2020-01-01",
        "--to",
        "2020-12-31",
        "--format",
        "jsonl",
        "--limit",
        "1",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&range.stdout),
        "{\"measures\":{\"temp\":9.1},\"record\":\"Valentia;2020-01-01T00:00;9,1\",\"station\":\"Valentia\",\"time\":\"2020-01-01T00:00\"}\n",
        "{}",
        text(&range)
    );
    let isd = dir.path().join("isd.quire");
    let flags = ["--station-from-file", "--time", "0,1,2,3", "--measures", "4,5,6,7,8"];
    load_csv(&isd, &[&meteo_sample("isd_lite")], &flags, 5);
    let knn =
        quire(&["knn", path_str(&isd), "--point", "50,-20,10200,290,60", "-k", "3", "--format", "csv", "--limit", "2"]);
    let lines: Vec<String> = String::from_utf8_lossy(&knn.stdout).lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 2, "{}", text(&knn));
    assert!(lines[0].ends_with(",2020,01,01,00,56,-22,10208,290,67,0,-9999,-9999"), "{}", lines[0]);
    let agg_of = |measure: &str| {
        let output = quire(&["agg", path_str(&isd), "--every", "year", "--measure", measure, "--format", "csv"]);
        assert!(output.status.success(), "--measure {measure}: {}", text(&output));
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let by_name = agg_of("column 5");
    assert!(by_name.lines().count() > 1, "{by_name}");
    assert_eq!(agg_of("4"), by_name, "--measure takes load-csv's 0-based column number");
}

#[test]
fn agg_and_range_count_values_as_the_load_counted_them() {
    // Proves: a value the load counted as missing — its quality flag column drops it
    // (ECA&D), a flag after the number drops it (NOAA LCD's suspect `s`), a missing
    // word (`VRB`) — is missing in agg and in range's measures too, and a word that
    // stands for a number (LCD's trace `T`) is that number. (agg used to read the raw
    // records with the missing markers alone: ECA&D's January counted 30 values.)
    let dir = tempfile::tempdir().unwrap();
    let eca = dir.path().join("eca.quire");
    let flags = ["--skip-lines", "19", "--station-from-file", "--time", "DATE", "--time-format", "%Y%m%d"];
    let more = ["--measures", "TG", "--flag-column", "TG=Q_TG", "--drop-flags", "1,9"];
    load_csv(&eca, &[&meteo_sample("TG_STAID000005.txt")], &[&flags[..], &more].concat(), 200);
    let january =
        quire(&["agg", path_str(&eca), "--every", "month", "--measure", "TG", "--fn", "count,min", "--limit", "1"]);
    let january = String::from_utf8_lossy(&january.stdout).into_owned();
    assert!(january.lines().nth(1).is_some_and(|line| line.ends_with("29        -150")), "{january}");

    let lcd = dir.path().join("lcd.quire");
    let flags = ["--station", "STATION", "--time", "DATE", "--suffix-flags", "sV", "--drop-flags", "s"];
    let measures = "HourlyDryBulbTemperature,HourlyPrecipitation,HourlyWindDirection";
    let more = ["--word-value", "T=0", "--na", "VRB", "--measures", measures];
    load_csv(&lcd, &[&meteo_sample("noaa_lcd_72505394728.csv")], &[&flags[..], &more].concat(), 75);
    let agg = |measure: &str| {
        let args =
            ["agg", path_str(&lcd), "--every", "day", "--measure", measure, "--fn", "count,sum", "--format", "csv"];
        String::from_utf8_lossy(&quire(&args).stdout).into_owned()
    };
    // Counted from the sample by hand: a trace is 0, `…s` is missing.
    assert_eq!(
        agg("HourlyPrecipitation"),
        "station,start,count,sum\n72505394728,2021-01-01T00:00,22,0.33\n\
         72505394728,2021-01-02T00:00,22,0.64\n72505394728,2021-01-03T00:00,23,0.2\n"
    );
    assert!(agg("HourlyDryBulbTemperature").contains("2021-01-03T00:00,21,"), "three suspect values a day");
    let measures_at = |time: &str| {
        let args =
            ["range", path_str(&lcd), "--station", "72505394728", "--from", time, "--to", time, "--format", "jsonl"];
        let line = String::from_utf8_lossy(&quire(&args).stdout).into_owned();
        line.split("\"record\"").next().unwrap_or_default().to_owned()
    };
    let measures = measures_at("2021-01-01T00:51");
    assert!(measures.contains("\"HourlyPrecipitation\":0.0,\"HourlyWindDirection\":null"), "{measures}");
    assert!(measures_at("2021-01-01T18:51").contains("\"HourlyPrecipitation\":null"));
}

#[test]
fn index_measures_choose_the_r_tree_dimensions_among_more_measures() {
    // Proves: --index-measures picks the R*-tree's dimensions among seven measures (five,
    // then three); knn answers over them, stats names them, a point of another size is
    // refused, and a wrong count or name is a clear error that writes nothing.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tmy.quire");
    let base = ["--station-from-preamble", "1,2", "--time", "Date,Time", "--time-format", "%m/%d/%Y %H:%M"];
    let measures = ["--measures", "GHI,DNI,Dry-bulb,Dew-point,RHum,Pressure,Wspd"];
    let pick = ["--index-measures", "Dry-bulb,Dew-point,RHum,Pressure,Wspd"];
    let out = load_csv(&db, &[&meteo_sample("tmy3_724666.csv")], &[&base[..], &measures, &pick].concat(), 4);
    assert!(out.contains("4 points in"), "{out}");
    let knn = quire(&["knn", path_str(&db), "--point", "-6,-11,59,822,4.5", "-k", "1"]);
    assert!(String::from_utf8_lossy(&knn.stdout).starts_with("0.0000\t01/01/1988,24:00,"), "{}", text(&knn));
    let stats = quire(&["stats", path_str(&db)]);
    assert!(
        text(&stats)
            .contains("R*-tree dimensions:       Dry-bulb (C), Dew-point (C), RHum (%), Pressure (mbar), Wspd (m/s)"),
        "{}",
        text(&stats)
    );
    let other = dir.path().join("other.quire");
    let mut args = vec!["load-csv", "--db", path_str(&other), "--quiet"];
    let sample = meteo_sample("tmy3_724666.csv");
    args.push(&sample);
    args.extend(base.iter().chain(&measures).copied());
    for (choice, error) in [
        ("", "takes 1 to 8 measures (the R*-tree's dimensions), got 0; or none"),
        (
            "GHI,DNI,Dry-bulb,Dew-point,RHum,Pressure,Wspd,GHI,DNI",
            "takes 1 to 8 measures (the R*-tree's dimensions), got 9; or none",
        ),
        ("GHI,Wind", "no measure \"Wind\""),
    ] {
        let wrong = quire(&[&args[..], &["--index-measures", choice]].concat());
        assert!(!wrong.status.success() && text(&wrong).contains(error), "{choice}: {}", text(&wrong));
        assert!(!other.exists(), "a refused load creates no database");
    }
    let three = ["--index-measures", "Pressure,Dry-bulb,Wspd"];
    let out = load_csv(&other, &[sample.as_str()], &[&base[..], &measures, &three].concat(), 4);
    assert!(out.contains("4 points in"), "{out}");
    let knn = quire(&["knn", path_str(&other), "--point", "822,-6,4.5", "-k", "1"]);
    assert!(String::from_utf8_lossy(&knn.stdout).starts_with("0.0000\t01/01/1988,24:00,"), "{}", text(&knn));
    let five = quire(&["knn", path_str(&other), "--point", "-6,-11,59,822,4.5", "-k", "1"]);
    assert!(!five.status.success() && text(&five).contains("3 dimensions: 3 values needed, got 5"), "{}", text(&five));
    let stats = quire(&["stats", path_str(&other)]);
    let dims = "R*-tree dimensions:       Pressure (mbar), Dry-bulb (C), Wspd (m/s)";
    assert!(text(&stats).contains("points (3-D R*-tree):     4") && text(&stats).contains(dims), "{}", text(&stats));
}

#[test]
fn index_measures_none_loads_without_r_tree() {
    // Proves: --index-measures none loads a wide table with no R*-tree; stats, range,
    // agg and check work on it; window and knn fail with the reason, not a panic; a
    // later load that would build a tree is refused and changes nothing.
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("wide.csv");
    std::fs::write(&csv, "station,20200101,20200102\nA,1.5,2.5\nB,3,-4\n").unwrap();
    let db = dir.path().join("wide.quire");
    let flags = ["--wide", "YYYYMMDD", "--station", "station", "--wide-measure", "t"];
    let out = load_csv(&db, &[path_str(&csv)], &[&flags[..], &["--index-measures", "none"]].concat(), 4);
    assert!(out.contains("0 points in"), "{out}");
    let stats = quire(&["stats", path_str(&db)]);
    assert!(stats.status.success(), "{}", text(&stats));
    assert!(
        text(&stats).contains("no R*-tree") && text(&stats).contains("records (queue):          4"),
        "{}",
        text(&stats)
    );
    let range = quire(&["range", path_str(&db), "--station", "B", "--from", "2020-01-01", "--to", "2020-01-02"]);
    assert_eq!(
        String::from_utf8_lossy(&range.stdout),
        "B,2020-01-01T00:00,3\nB,2020-01-02T00:00,-4\n",
        "{}",
        text(&range)
    );
    let agg = quire(&["agg", path_str(&db), "--every", "year", "--measure", "t", "--fn", "sum", "--format", "csv"]);
    assert!(agg.status.success() && text(&agg).contains("A,2020") && text(&agg).contains(",4"), "{}", text(&agg));
    let check = quire(&["check", path_str(&db)]);
    assert!(check.status.success() && text(&check).contains("clean"), "{}", text(&check));
    for query in [&["window", path_str(&db), "--min", "0", "--max", "9"][..], &["knn", path_str(&db), "--point", "1"]] {
        let refused = quire(query);
        assert!(!refused.status.success(), "{query:?}: {}", text(&refused));
        assert!(text(&refused).contains("no R*-tree (it was loaded with --index-measures none)"), "{}", text(&refused));
        assert!(!text(&refused).contains("panicked"), "{}", text(&refused));
    }
    let before = std::fs::read(&db).unwrap();
    let mut args = vec!["load-csv", "--db", path_str(&db), "--quiet", path_str(&csv)];
    args.extend(flags);
    let refused = quire(&args);
    assert!(
        !refused.status.success() && text(&refused).contains("loaded with --index-measures none"),
        "{}",
        text(&refused)
    );
    assert_eq!(std::fs::read(&db).unwrap(), before, "the refused load changed the database");
}

#[test]
fn time_zone_flag_applies_daylight_saving_to_local_times() {
    // Proves: --time-zone turns local times into UTC with the zone's winter and summer
    // offsets; a local time skipped by the spring change is a row error naming it; an
    // unknown zone is refused before anything is written.
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("berlin.csv");
    std::fs::write(&csv, "time,temp\n2021-01-15 12:00,1\n2021-07-15 12:00,20\n2021-03-28 02:30,5\n").unwrap();
    let db = dir.path().join("tz.quire");
    let flags =
        ["--station-from-file", "--time", "time", "--measures", "temp", "--time-zone", "Europe/Berlin", "--skip-bad"];
    let out = load_csv(&db, &[path_str(&csv)], &flags, 2);
    assert!(out.contains("no such local time"), "{out}");
    let range = quire(&[
        "range",
        path_str(&db),
        "--station",
        "berlin",
        "--from",
        "2021-07-15T10:00Z",
        "--to",
        "2021-07-15T10:00Z",
    ]);
    assert_eq!(String::from_utf8_lossy(&range.stdout), "2021-07-15 12:00,20\n", "{}", text(&range));
    let range = quire(&[
        "range",
        path_str(&db),
        "--station",
        "berlin",
        "--from",
        "2021-01-15T11:00Z",
        "--to",
        "2021-01-15T11:00Z",
    ]);
    assert_eq!(String::from_utf8_lossy(&range.stdout), "2021-01-15 12:00,1\n", "{}", text(&range));
    let other = dir.path().join("other.quire");
    let bad = quire(&["load-csv", path_str(&csv), "--db", path_str(&other), "--time-zone", "Mars/Olympus"]);
    assert!(!bad.status.success() && text(&bad).contains("unknown time zone"), "{}", text(&bad));
    assert!(!other.exists());
}

/// Runs `quire args` with standard output a pipe whose reader reads `lines` lines and
/// then goes away (`quire ... | head -n lines`); returns the status and stderr.
fn quire_into_closed_pipe(args: &[&str], lines: usize) -> (std::process::ExitStatus, String) {
    use std::io::BufRead;
    let (reader, writer) = std::io::pipe().expect("a pipe");
    // With no line to read, the reader goes away before quire starts: a short answer
    // fits in the pipe's buffer, and one written before the reader left is delivered
    // (then quire may rightly print its summary to stderr).
    let reader = (lines > 0).then_some(reader);
    let child = Command::new(env!("CARGO_BIN_EXE_quire"))
        .args(args)
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("quire runs");
    let mut reader = reader.map(std::io::BufReader::new);
    for _ in 0..lines {
        let reader = reader.as_mut().expect("a reader when lines are read");
        let mut line = String::new();
        assert!(reader.read_line(&mut line).expect("read a line") > 0, "{args:?} printed fewer than {lines} lines");
    }
    drop(reader);
    let output = child.wait_with_output().expect("quire ends");
    (output.status, String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn a_reader_that_goes_away_ends_each_command_quietly() {
    // Proves: when standard output's reader closes (`quire stats DB | head`), every
    // printing command stops with success and an empty stderr, never a panic — with
    // the reader gone before the first line, and after one line of a long answer.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("wide.quire");
    let flags = ["--station", "station", "--wide", "months", "--time", "year", "--wide-measure", "temp"];
    let wide = meteo_sample("wide_monthly_months.csv");
    load_csv(&db, &[&wide], &flags, 24);
    let docs = dir.path().join("many.xml");
    std::fs::write(&docs, format!("<r>{}</r>", "<p>a long enough line of text</p>".repeat(20_000))).unwrap();
    let xml = dir.path().join("x.quire");
    assert!(quire(&["load-xml", path_str(&xml), "c", path_str(&docs), "--quiet"]).status.success());
    let demo = dir.path().join("demo.quire");
    let (db, xml) = (path_str(&db), path_str(&xml));
    let range = ["range", db, "--station", "Valentia", "--from", "2020-01-01", "--to", "2021-12-31"];
    let load_dry = ["load-csv", "--dry-run", "--quiet", &wide, "--station", "station", "--wide", "months"];
    let commands: [&[&str]; 14] = [
        &["stats", db],
        &["info", db],
        &["check", db],
        &range,
        &["agg", db, "--every", "month", "--measure", "temp"],
        &["load-csv", &wide, "--inspect"],
        &[&load_dry[..], &["--time", "year", "--wide-measure", "temp"]].concat(),
        &["xml-info", xml, "c"],
        &["xpath", xml, "c", "//p", "--values"],
        &["xpath-ref", path_str(&docs), "//p"],
        &["compact", db, "--steps", "1"],
        &["demo", "--db", path_str(&demo)],
        &["gen", "xml", "--kind", "xmark", "--factor", "0.001"],
        &["gen", "meteo", "--rows", "100000"],
    ];
    for args in commands {
        let (status, stderr) = quire_into_closed_pipe(args, 0);
        assert!(status.success() && stderr.is_empty(), "{args:?}: {status}: {stderr}");
    }
    let (status, stderr) = quire_into_closed_pipe(&["xpath", xml, "c", "//p", "--values"], 1);
    assert!(status.success() && stderr.is_empty(), "xpath after one line: {status}: {stderr}");
}

#[test]
fn zip_archives_load_their_data_members() {
    // Proves: a zip archive loads its data files (stored or deflated, folders and other
    // files left out) as one load, or the members `--member` names (DWD's `produkt_*`
    // beside its metadata files, which --inspect proposes by itself), through the command
    // --inspect prints; a damaged member
    // stops the load with an error naming it and leaves no database; a pattern that
    // names nothing is an error.
    let dir = tempfile::tempdir().unwrap();
    let two = dir.path().join("two.quire");
    let flags = ["--station", "station", "--time", "time", "--measures", "t"];
    let out = load_csv(&two, &[&meteo_sample("two_series.zip")], &flags, 20);
    assert!(out.contains("stations:      2"), "{out}");
    let dwd = meteo_sample("stundenwerte_TU_00003_hist.zip");
    let output = quire(&["load-csv", &dwd, "--member", "produkt_*", "--inspect"]);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(stdout.contains("archive:       1 member(s) to load"), "{stdout}");
    let command = stdout.lines().last().expect("a command line").trim().to_owned();
    assert!(command.ends_with("--member 'produkt_*'"), "{command}");
    let script = format!("{} {} --quiet", env!("CARGO_BIN_EXE_quire"), &command["quire ".len()..]);
    let run = Command::new("sh").arg("-c").arg(&script).current_dir(dir.path()).output().expect("sh runs");
    assert!(text(&run).contains("rows loaded:   24\n"), "{script}: {}", text(&run));
    let db = dir.path().join("stundenwerte_TU_00003_hist.quire");
    let range =
        quire(&["range", path_str(&db), "--station", "3", "--from", "1950-04-01T05:00", "--to", "1950-04-01T05:00"]);
    assert!(text(&range).contains("1950040105;    5;   5.2;  83.0;eor"), "{}", text(&range));
    // Without --member, --inspect looks at the largest member and names its kind.
    let output = quire(&["load-csv", &dwd, "--inspect"]);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(stdout.contains("archive:       1 member(s) to load"), "{stdout}");
    assert!(stdout.trim_end().ends_with("--member 'produkt*'"), "{stdout}");
    let none = quire(&["load-csv", &dwd, "--member", "*.csv", "--dry-run"]);
    assert!(text(&none).contains("holds no member named like *.csv"), "{}", text(&none));
    // A byte changed in the stored member's data (a digit: its CRC-32 tells) and in
    // the deflated one's (its stream breaks).
    for (member, offset, expected) in [("station_1.csv", 40, "is damaged"), ("station_2.csv", 20, "deflate")] {
        let mut bytes = std::fs::read(meteo_sample("two_series.zip")).unwrap();
        let at = bytes.windows(13).position(|window| window == member.as_bytes()).expect("the member's local name");
        bytes[at + 13 + offset] ^= if member.ends_with("1.csv") { 0x01 } else { 0x55 };
        let damaged = dir.path().join("damaged.zip");
        std::fs::write(&damaged, bytes).unwrap();
        let bad_db = dir.path().join(format!("damaged-{member}.quire"));
        let output = quire(&[&["load-csv", path_str(&damaged), "--db", path_str(&bad_db)][..], &flags].concat());
        assert!(!output.status.success(), "{}", text(&output));
        assert!(text(&output).contains(member) && text(&output).contains(expected), "{member}: {}", text(&output));
        let stats = text(&quire(&["stats", path_str(&bad_db)]));
        assert!(!bad_db.exists() || stats.contains("no meteorological data"), "nothing loaded: {stats}");
    }
}

#[test]
fn queries_refuse_empty_intervals_and_windows_and_note_a_station_they_do_not_hold() {
    // Proves: `range` and `agg` with --from after --to, and `window` with a lower corner
    // above the upper one, are errors naming the bounds (and the window's measure) —
    // they used to answer "0 records" as if there were no data there; `range` of a
    // station with no record at any time adds a note saying so on stderr, a known
    // station with nothing in the interval does not.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("eca.quire");
    let flags = ["--skip-lines", "19", "--station-from-file", "--time", "DATE", "--time-format", "%Y%m%d"];
    load_csv(&db, &[&meteo_sample("TG_STAID000005.txt")], &[&flags[..], &["--measures", "TG"]].concat(), 200);
    let range = |station: &str, from: &str, to: &str| {
        quire(&["range", path_str(&db), "--station", station, "--from", from, "--to", to])
    };
    let inverted = range("TG_STAID000005", "2000-02-01", "2000-01-01");
    assert!(!inverted.status.success());
    assert!(text(&inverted).contains("--from 2000-02-01 is after --to 2000-01-01"), "{}", text(&inverted));
    let agg = quire(&["agg", path_str(&db), "--every", "day", "--measure", "TG", "--from", "2001", "--to", "2000"]);
    assert!(!agg.status.success() && text(&agg).contains("--from 2001 is after --to 2000"), "{}", text(&agg));
    let window = quire(&["window", path_str(&db), "--min", "5", "--max", "1"]);
    assert!(!window.status.success(), "{}", text(&window));
    assert!(text(&window).contains("--min 5 is not at or below --max 1 in dimension 1 (TG)"), "{}", text(&window));
    let unknown = range("TG_STAID000006", "1900-01-01", "2100-01-01");
    assert!(unknown.status.success() && unknown.stdout.is_empty());
    assert!(text(&unknown).contains("no record of station \"TG_STAID000006\" at any time"), "{}", text(&unknown));
    let empty = range("TG_STAID000005", "1800-01-01", "1800-12-31");
    assert!(empty.status.success() && empty.stdout.is_empty());
    assert!(!text(&empty).contains("note:"), "{}", text(&empty));
}

#[test]
fn inspect_refuses_binary_files_naming_what_they_are() {
    // Proves: `--inspect` on a gridded NetCDF file, a bzip2-compressed CSV or other binary
    // data fails with one line saying what the file is, instead of proposing a command
    // whose station is a byte of noise; a text file still inspects.
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[u8], &str); 3] = [
        ("grid.nc", b"CDF\x01\x00\x00\x00\x00\x00\x00\x00\x0a", "is a NetCDF file, not a text table"),
        ("obs.csv.bz2", b"BZh91AY&SY\x00\x01", "compressed with bzip2"),
        ("obs.bin", b"time,t\n\x00\x01\x02\xff,3\n", "binary data (a NUL byte at byte 7)"),
    ];
    for (name, bytes, expected) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let output = quire(&["load-csv", "--inspect", path_str(&path)]);
        assert!(!output.status.success(), "{name}: {}", text(&output));
        assert!(text(&output).contains(expected), "{name}: {}", text(&output));
    }
    let text_file = dir.path().join("obs.csv");
    std::fs::write(&text_file, "time,station,t\n2020-01-01T00:00,a,1.5\n2020-01-01T01:00,a,2.5\n").unwrap();
    assert!(quire(&["load-csv", "--inspect", path_str(&text_file)]).status.success());
}

#[test]
fn an_xpath_query_may_start_with_a_minus_sign() {
    // Proves: `quire xpath` and `quire xpath-ref` read a query that starts with `-` as the
    // query (clap used to take `-count(//a)` for an unknown option).
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("a.xml");
    std::fs::write(&doc, "<r><a/><a/></r>").unwrap();
    let db = dir.path().join("x.quire");
    assert!(quire(&["load-xml", path_str(&db), "c", path_str(&doc)]).status.success());
    let store = quire(&["xpath", path_str(&db), "c", "-count(//a)"]);
    assert_eq!(String::from_utf8_lossy(&store.stdout).trim(), "-2", "{}", text(&store));
    let reference = quire(&["xpath-ref", path_str(&doc), "-count(//a) - 1"]);
    assert_eq!(String::from_utf8_lossy(&reference.stdout).trim(), "-3", "{}", text(&reference));
}

#[test]
fn records_of_another_layout_are_refused_not_misread() {
    // Proves: `agg` reads every record of a database by one layout, so files whose
    // records would read otherwise under it — columns in another order, another
    // delimiter, decimal commas after points — are refused, in one load (naming the
    // file) or in a later one, and the database keeps what it had; points after decimal
    // commas, in either, read right. `agg` used to count the other file's values as
    // missing, silently.
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, body: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, body).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let points = write("a.csv", "station,time,temp\nA,2020-01-01T00:00,1.5\nA,2020-01-01T01:00,2.5\n");
    let commas = write("b.csv", "station,time,temp\nB,2020-01-01T00:00,\"12,5\"\nB,2020-01-01T01:00,\"13,5\"\n");
    let reordered = write("d.csv", "time,temp,station\n2020-01-01T00:00,7.5,D\n2020-01-01T01:00,8.5,D\n");
    let semicolons = write("c.csv", "station;time;temp\nC;2020-01-01T00:00;3,5\n");
    let flags = ["--station", "station", "--time", "time", "--measures", "temp"];
    let agg = |db: &Path| {
        let output = quire(&[
            "agg",
            path_str(db),
            "--every",
            "day",
            "--measure",
            "temp",
            "--from",
            "2020-01-01",
            "--to",
            "2020-12-31",
        ]);
        assert!(output.status.success(), "{}", text(&output));
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let load =
        |db: &Path, files: &[&str]| quire(&[&["load-csv", "--db", path_str(db), "--quiet"], files, &flags].concat());
    let cases = [
        (&reordered, "measures in columns 2 (from 1), not 3"),
        (&semicolons, "fields joined by ';', not ','"),
        (&commas, "numbers with decimal commas, not points"),
    ];
    for (at, (other, expected)) in cases.into_iter().enumerate() {
        let one = dir.path().join(format!("one-{at}.quire"));
        let refused = load(&one, &[&points, other]);
        assert!(!refused.status.success(), "{}", text(&refused));
        assert!(text(&refused).contains(expected) && text(&refused).contains("as those of"), "{}", text(&refused));
        let two = dir.path().join(format!("two-{at}.quire"));
        assert!(load(&two, &[&points]).status.success());
        let later = load(&two, &[other]);
        if other == &commas {
            assert!(later.status.success(), "decimal commas after points, in another load: {}", text(&later));
            assert!(agg(&two).contains("12.5") && agg(&two).contains("1.5"), "{}", agg(&two));
            continue;
        }
        assert!(!later.status.success() && text(&later).contains("the database's records have"), "{}", text(&later));
        let kept = agg(&two);
        assert!(kept.contains("1.5") && kept.lines().count() == 2, "the first load's records only: {kept}");
    }
    let first_commas = dir.path().join("commas-first.quire");
    assert!(load(&first_commas, &[&commas, &points]).status.success());
    let both = agg(&first_commas);
    assert!(both.contains("12.5") && both.contains("1.5"), "{both}");
    // A bare year bounds by its first and last second (as epoch seconds, 2020 would be
    // 1970's first hour: an empty answer).
    let years = |from: &str, to: &str| {
        let output = quire(&[
            "agg",
            path_str(&first_commas),
            "--every",
            "year",
            "--measure",
            "temp",
            "--from",
            from,
            "--to",
            to,
        ]);
        assert!(output.status.success(), "{}", text(&output));
        String::from_utf8_lossy(&output.stdout).lines().count() - 1
    };
    assert_eq!((years("2020", "2020"), years("2019", "2019"), years("2021", "2021")), (2, 0, 0));
}
