//! `--inspect` on the exports of national weather services and data portals (Meteostat,
//! Météo-France, Open-Meteo, the Iowa Environmental Mesonet, NOAA GHCNh, AEMET, the
//! Hong Kong Observatory, the Bureau of Meteorology's half-hourly files, NOAA NDBC's
//! buoys, NASA POWER's hourly files): the rules each needs, and what each rule must
//! leave alone.
//! The CLI test `inspect_reads_archives_as_their_makers_write_them` loads a sample of
//! each.

use super::station::names_a_station;
use super::tests::{flags, sample, value};
use super::*;

/// Without a header, `--index-measures` names the R*-tree's measures by their place
/// among the measures, which is how the load reads a number (Meteostat's bulk files:
/// gusts and snow seldom reported). Before, it gave the columns' numbers in the file,
/// and the load refused the last one (`no measure "10"`).
#[test]
fn index_measures_without_a_header_are_numbered_among_the_measures() {
    let mut bulk = String::new();
    for hour in 0..12 {
        let gust = if hour % 2 == 0 { "36.4" } else { "" };
        let rain = if hour % 3 == 0 { "" } else { "0.2" };
        bulk.push_str(&format!("2022-01-01,{hour},4.{hour},2.1,89,{rain},,240,15.0,{gust},1019.1,,3\n"));
    }
    let found = flags(&bulk);
    assert_eq!(value(&found, "--time"), Some("0,1"));
    assert_eq!(value(&found, "--measures"), Some("2,3,4,5,7,8,9,10,12"));
    let index = Some("0,1,2,3,4,5,7,8");
    assert_eq!(value(&found, "--index-measures"), index, "columns 2,3,4,5,7,8,10,12 by their places");
    let notes = inspect(bulk.as_bytes(), true, &Schema::default()).notes;
    let note = "6, 11 (columns numbered from 0, as --measures reads them): empty";
    assert!(notes.first().is_some_and(|first| first.starts_with(note)), "{notes:?}");
    let named = sample(
        "time,temp,dwpt,rhum,prcp,wdir,wspd,wpgt,pres,coco\n",
        (0..6).map(|hour| {
            let gust = if hour == 0 { "36.4" } else { "" };
            format!("2022-01-01 0{hour}:00:00,1.0,0.5,80,0.0,240,5.0,{gust},1019.1,3")
        }),
    );
    let index = Some("temp,dwpt,rhum,prcp,wdir,wspd,pres,coco");
    assert_eq!(value(&flags(&named), "--index-measures"), index, "named by their names");
}

/// Météo-France's climatological files: `NUM_POSTE` is the station, `ALTI` (one value)
/// a place, and each `Q…` column named `Q` and a measure's name is that measure's
/// quality code, no measure; a quality column of one code and blanks is no
/// `--flag-column` (alone it would drop every value). A lone `QFF` beside `FF` is a
/// measure (the sea-level pressure). The SYNOP export: `ID OMM station` is the
/// station, `communes (code)` and the month of the year no measures, and times with
/// their offset need no zone.
#[test]
fn meteo_france_stations_places_and_quality_columns() {
    let hourly = sample(
        "NUM_POSTE;NOM_USUEL;LAT;LON;ALTI;AAAAMMJJHH;RR1;QRR1;T;QT;U;QU\n",
        (0..6).map(|hour| {
            let (rain, code) = if hour == 2 { ("", "") } else { ("0.2", "1") };
            format!(
                "75114001;PARIS-MONTSOURIS;48.821667;2.337833;75;20220101{hour:02};{rain};{code};6.{hour};1;8{hour};9"
            )
        }),
    );
    let found = flags(&hourly);
    assert_eq!(value(&found, "--station"), Some("NUM_POSTE"));
    assert_eq!(value(&found, "--measures"), Some("RR1,T,U"));
    assert_eq!(value(&found, "--flag-column"), None, "one code each: nothing to tell");
    let pressure = "station;time;FF;QFF\nA;2022010100;3.1;1013.2\nA;2022010101;2.0;1012.9\n";
    assert_eq!(value(&flags(pressure), "--measures"), Some("FF,QFF"));
    let mut synop =
        String::from("ID OMM station;Date;Température;Altitude;communes (name);communes (code);mois_de_l_annee\n");
    for hour in [1, 4, 7] {
        synop.push_str(&format!("07149;2020-01-01T0{hour}:00:00+01:00;276.9;89;Paray-Vieille-Poste;91479;1\n"));
    }
    let found = flags(&synop);
    assert_eq!(value(&found, "--station"), Some("ID OMM station"));
    assert_eq!(value(&found, "--measures"), Some("Température"));
    assert_eq!((value(&found, "--time-zone"), value(&found, "--utc-offset")), (None, None));
    assert!(names_a_station("NUM_POSTE") && !names_a_station("temperature_Source_Station_ID"));
}

/// Open-Meteo's CSV: the zone under `timezone` in the metadata above the blank line
/// gives `--time-zone` (local times, no offset written); UTC or GMT gives nothing, and
/// an offset alone `--utc-offset`. A daily file's `sunrise (iso8601)` is no time: the
/// `time` column of dates is. The WMO weather code stays a measure.
#[test]
fn open_meteo_zone_in_the_metadata_and_sunrise() {
    let hourly = |zone: &str, offset: &str| {
        let head = format!(
            "latitude,longitude,elevation,utc_offset_seconds,timezone,timezone_abbreviation\n\
             52.52,13.419998,38.0,{offset},{zone},GMT+1\n\ntime,temperature_2m (°C),weather_code (wmo code)\n"
        );
        flags(&sample(&head, (0..4).map(|hour| format!("2024-01-01T0{hour}:00,2.{hour},3"))))
    };
    let berlin = hourly("Europe/Berlin", "3600");
    assert_eq!(value(&berlin, "--time"), Some("time"));
    assert_eq!(value(&berlin, "--time-zone"), Some("Europe/Berlin"));
    assert_eq!(value(&berlin, "--measures"), Some("temperature_2m (°C),weather_code (wmo code)"));
    assert_eq!(value(&hourly("GMT", "0"), "--time-zone"), None);
    assert_eq!(value(&hourly("GMT", "0"), "--utc-offset"), None);
    assert_eq!(value(&hourly("Nowhere", "-18000"), "--utc-offset"), Some("-05:00"));
    let daily = sample(
        "time,temperature_2m_max (°C),sunrise (iso8601),sunset (iso8601)\n",
        (1..=3).map(|day| format!("2023-07-0{day},23.{day},2023-07-0{day}T05:3{day},2023-07-0{day}T21:2{day}")),
    );
    let found = flags(&daily);
    assert_eq!((value(&found, "--time"), value(&found, "--time-format")), (Some("time"), Some("%Y-%m-%d")));
    assert_eq!(value(&found, "--measures"), Some("temperature_2m_max (°C)"));
}

/// The Iowa Environmental Mesonet's ASOS files: `M` fills some columns and stands
/// among the numbers of others, however few (a gust once in four hours): missing
/// throughout (`--na M`), so the gust column is a measure. `T` in `p01i` is a trace
/// (`--word-value T=0`). A zone in the time column's name gives `--time-zone`. The
/// altimeter setting `alti` changes: a measure, not a place.
#[test]
fn iem_asos_missing_word_trace_and_a_zone_in_the_name() {
    let asos = sample(
        "station,valid(America/Chicago),tmpf,p01i,alti,gust,ice_accretion_1hr\n",
        (0..8).map(|hour| {
            let rain = ["0.00", "T", "0.01", "M"][hour % 4];
            let gust = if hour % 4 == 0 { "28.00" } else { "M" };
            format!("DSM,2021-12-31 1{hour}:53,2{hour}.00,{rain},30.{hour}1,{gust},M")
        }),
    );
    let found = flags(&asos);
    assert_eq!(value(&found, "--time-zone"), Some("America/Chicago"));
    assert_eq!(value(&found, "--measures"), Some("tmpf,p01i,alti,gust"));
    assert_eq!(value(&found, "--word-value"), Some("T=0"));
    assert_eq!(value(&found, "--na"), Some("M"));
    let euro = "time,p€,p01i\n2021-12-31 10:53,1,T\n2021-12-31 11:53,2,0.01\n";
    assert_eq!(value(&flags(euro), "--word-value"), Some("T=0"), "a name of four bytes not all ASCII: no panic");
    let one_in_a_column = "station,valid,tmpf,skyc1\nDSM,2021-12-31 10:53,20.0,OVC\nDSM,2021-12-31 11:53,21.0,OVC\n";
    assert_eq!(value(&flags(one_in_a_column), "--na"), None, "a word filling a column, among no numbers");
}

/// NOAA GHCNh's PSV files: `Station_ID` is the station (not `Station_name`), the codes
/// beside each measure (`temperature_Source_Code`, `…_Measurement_Code`,
/// `…_Source_Station_ID`) are no measures, and `temperature_Quality_Code` is
/// `temperature`'s flag column.
#[test]
fn ghcnh_station_id_and_the_codes_beside_each_measure() {
    let mut psv = String::from(
        "Station_ID|Station_name|Year|Month|Day|Hour|Minute|Latitude|temperature|temperature_Measurement_Code|\
         temperature_Quality_Code|temperature_Report_Type|temperature_Source_Code|temperature_Source_Station_ID\n",
    );
    for hour in 0..4 {
        let quality = if hour == 2 { "L" } else { "" };
        psv.push_str(&format!(
            "USW00094728|NY CITY CNTRL PK|2023|01|01|0{hour}|51|40.77898|5.{hour}||{quality}|FM-15|343|72505394728\n"
        ));
    }
    let found = flags(&psv);
    assert_eq!(value(&found, "--delimiter"), Some("|"));
    assert_eq!(value(&found, "--station"), Some("Station_ID"));
    assert_eq!(value(&found, "--time"), Some("Year,Month,Day,Hour,Minute"));
    assert_eq!(value(&found, "--measures"), Some("temperature"));
    assert_eq!(value(&found, "--flag-column"), Some("temperature=temperature_Quality_Code"));
}

/// AEMET's daily values as CSV: `;` with decimal commas, `indicativo` the station,
/// `altitud` a place, `Ip` (inapreciable) a trace of precipitation, and the hour of the
/// minimum (`horatmin`, a time of day named after `tmin`) no part of the row's time.
#[test]
fn aemet_decimal_commas_trace_and_times_of_the_extremes() {
    let aemet = sample(
        "fecha;indicativo;nombre;altitud;tmed;prec;tmin;horatmin;tmax;horatmax\n",
        (1..=4).map(|day| {
            let rain = if day == 2 { "Ip" } else { "0,0" };
            format!("2023-01-0{day};1387;A CORUÑA;58;10,{day};{rain};6,4;07:2{day};14,8;15:0{day}")
        }),
    );
    let found = flags(&aemet);
    assert_eq!(value(&found, "--station"), Some("indicativo"));
    assert_eq!((value(&found, "--time"), value(&found, "--time-format")), (Some("fecha"), Some("%Y-%m-%d")));
    assert_eq!(value(&found, "--measures"), Some("tmed,prec,tmin,tmax"));
    assert_eq!(value(&found, "--word-value"), Some("Ip=0"));
    let fmi = "Year,m,d,Time,Air temperature\n2023,1,1,00:00,0.1\n2023,1,1,01:00,0.2\n";
    assert_eq!(value(&flags(fmi), "--time"), Some("Year,m,d,Time"), "a time of day named for no column");
}

/// The Hong Kong Observatory's CSV: names in two languages (`年/Year`) name the time's
/// parts, a completeness column is no measure, and the legend under the rows, lines
/// as wide as the rows holding one field of words, is no row.
#[test]
fn hong_kong_names_in_two_languages_and_a_legend() {
    let mut hko = String::from(
        "香港天文台 - 每日最高氣溫 (攝氏度) Hong Kong Observatory - Daily Maximum Temperature (°C),,,,\n\
         年/Year,月/Month,日/Day,數值/Value,數據完整性/data Completeness\n",
    );
    for day in 1..=5 {
        let (max, complete) = if day == 3 { ("***", "") } else { ("19.5", "C") };
        hko.push_str(&format!("2023,1,{day},{max},{complete}\n"));
    }
    hko.push_str("*** 沒有數據/unavailable,,,,\n# 數據不完整/data incomplete,,,,\nC 數據完整/data Complete,,,,\n");
    let found = inspect(hko.as_bytes(), true, &Schema::default());
    assert_eq!(found.columns[0].kind, ColumnKind::Integer, "the legend types no column");
    assert_eq!(value(&found.flags, "--time"), Some("年/Year,月/Month,日/Day"));
    assert_eq!(value(&found.flags, "--measures"), Some("數值/Value"));
    assert_eq!(value(&found.flags, "--na"), Some("***"));
    assert!(found.flags.iter().any(|(flag, _)| flag == "--station-from-file"), "{:?}", found.flags);
}

/// The Bureau of Meteorology's half-hourly files name each of three times' year, month,
/// day, hour and minute columns by the tokens of their format, the name split where
/// the format's commas are (`Year Month Day Hours Minutes in YYYY`, `MM`, `DD`, `HH24`,
/// `MI format in Local time`): the run in UTC is the time, and the local ones are no
/// measures.
#[test]
fn bom_half_hourly_times_named_by_their_format() {
    let run = |zone: &str| format!("Year Month Day Hours Minutes in YYYY,MM,DD,HH24,MI format in {zone}");
    let mut hm = format!(
        "hm,Station Number,{},{},Air Temperature in degrees C,Quality of air temperature,#\n",
        run("Local time"),
        run("Universal coordinated time")
    );
    for half in 0..4 {
        let (hour, minute) = (half / 2, half % 2 * 30);
        hm.push_str(&format!(
            "hm, 066062,2020,01,01,{hour:02},{minute:02},2019,12,31,{:02},{minute:02},  23.{half},N,#\n",
            hour + 13
        ));
    }
    let found = flags(&hm);
    assert_eq!(value(&found, "--station"), Some("Station Number"));
    assert_eq!(value(&found, "--time"), Some("7,8,9,10,MI format in Universal coordinated time"));
    assert_eq!(value(&found, "--time-format"), Some("%Y %m %d %H %M"));
    assert_eq!(value(&found, "--measures"), Some("Air Temperature in degrees C"));
}

/// Open-Meteo's file of several locations: a block of a names line and a line of values
/// per location above a blank line, then `location_id,time,…`, narrower, and rows that
/// start with numbers: a table, not notes. `location_id` is the station; a zone is
/// given only when every location's line agrees.
#[test]
fn open_meteo_several_locations() {
    let file = |zones: [&str; 2]| {
        let head = format!(
            "location_id,latitude,longitude,elevation,utc_offset_seconds,timezone,timezone_abbreviation\n\
             0,52.52,13.41,38.0,3600,{},CET\n1,48.14,11.58,519.0,3600,{},CET\n\nlocation_id,time,temperature_2m (°C)\n",
            zones[0], zones[1]
        );
        let rows = (0..12).map(|row| format!("{},2024-01-01T0{}:00,1.{}", row / 6, row % 6, row % 6));
        inspect(sample(&head, rows).as_bytes(), true, &Schema::default())
    };
    let found = file(["Europe/Berlin", "Europe/Berlin"]);
    assert_eq!((found.sniffed.preamble_lines, found.sniffed.body_fields), (4, 3));
    assert_eq!(value(&found.flags, "--station"), Some("location_id"));
    assert_eq!(value(&found.flags, "--time"), Some("time"));
    assert_eq!(value(&found.flags, "--time-zone"), Some("Europe/Berlin"));
    let found = file(["Europe/Berlin", "America/New_York"]);
    assert_eq!(value(&found.flags, "--time-zone"), None, "zones that differ give none");
}

/// NOAA NDBC's standard meteorological files: two `#` lines, the names then their
/// units; the header is the names (the units repeat, the names do not). `YY` holding
/// four digits is the year and `mm` beside `MM` the minute. `99.00` in a column of
/// small values is missing, given per column (`99` is data in many a column); a plain
/// `99` stays data. Before, the units line was the header and the minute a measure.
#[test]
fn ndbc_names_above_units_and_two_nines() {
    let mut buoy = String::from(
        "#YY  MM DD hh mm WDIR WSPD WVHT  PRES  ATMP  DEWP\n#yr  mo dy hr mn degT m/s     m   hPa  degC  degC\n",
    );
    for minute in 0..6 {
        let wave = if minute == 4 { " 1.04" } else { "99.00" };
        buoy.push_str(&format!("2023 01 01 00 {:02} 267  6.3 {wave} 1016.7   8.0 999.0\n", minute * 10));
    }
    let found = inspect(buoy.as_bytes(), true, &Schema::default());
    assert_eq!(found.sniffed.rows[0][..3], ["YY", "MM", "DD"]);
    assert_eq!(value(&found.flags, "--time"), Some("YY,MM,DD,hh,mm"));
    assert_eq!(value(&found.flags, "--time-format"), Some("%Y %m %d %H %M"));
    assert_eq!(value(&found.flags, "--measures"), Some("WDIR,WSPD,WVHT,PRES,ATMP,DEWP"));
    assert_eq!(value(&found.flags, "--na"), Some("WVHT=99,999"));
    let humid = "time,rh\n2023-01-01T00:00,99\n2023-01-01T01:00,40\n2023-01-01T02:00,99\n";
    assert_eq!(value(&flags(humid), "--na"), None, "a plain 99 among values above its half is data");
    let two_digit_years = "YY MM DD hh WD\n93 01 01 00 270\n93 01 01 01 280\n93 01 01 02 290\n";
    let time = value(&flags(two_digit_years), "--time").map(str::to_owned);
    assert_ne!(time.as_deref(), Some("YY,MM,DD,hh"), "`YY` of two digits is no year (1999's files)");
}

/// The DWD climate data portal's CSV (`Produkt_Code,SDO_ID,Zeitstempel,Wert,…`): the
/// station is `SDO_ID`, an identifier holding one value, not the product's code in the
/// first column. An identifier whose values change (OpenWeatherMap's `weather_id`)
/// names no station.
#[test]
fn dwd_portal_station_identifier() {
    let cdc = sample(
        "Produkt_Code,SDO_ID,Zeitstempel,Wert,Qualitaet_Niveau,Qualitaet_Byte\n",
        (0..4).map(|hour| format!("OBS_DEU_PT1H_T2M,3379,2023-01-01T0{hour}:00:00,5.{hour},3,1")),
    );
    let found = flags(&cdc);
    assert_eq!(value(&found, "--station"), Some("SDO_ID"));
    assert_eq!((value(&found, "--time"), value(&found, "--measures")), (Some("Zeitstempel"), Some("Wert")));
    let weather = "dt,temp,weather_id\n1577836800,1.5,800\n1577840400,1.2,801\n";
    assert!(flags(weather).iter().any(|(flag, _)| flag == "--station-from-file"));
}

/// NASA POWER's hourly files in local solar time (`… in LST` in the header block, the
/// API's default): `--utc-offset` is the offset of the 15° band the block's longitude
/// falls in (New York's -74.006: -05:00; POWER's LST rows stay on the hour), so the
/// load stores UTC. Before, LST was read as UTC. A file in UTC, a daily file and a
/// longitude in the band of Greenwich get no offset.
#[test]
fn nasa_power_hourly_local_solar_time() {
    let power = |standard: &str, longitude: &str, names: &str| {
        let head = format!(
            "-BEGIN HEADER-\nNASA/POWER CERES/MERRA2 Native Resolution Hourly Data \n\
             Dates (month/day/year): 01/01/2020 through 01/01/2020 in {standard}\n\
             Location: Latitude  40.7128   Longitude {longitude} \n\
             The value for missing source data that cannot be computed or is outside of the sources availability range: -999 \n\
             Parameter(s): \nT2M     MERRA-2 Temperature at 2 Meters (C) \n-END HEADER-\n{names},T2M\n"
        );
        let rows = (0..6).map(|hour| match names.ends_with("HR") {
            true => format!("2020,1,1,{hour},1.{hour}"),
            false => format!("2020,1,{},1.{hour}", hour + 1),
        });
        flags(&sample(&head, rows))
    };
    let lst = power("LST", "-74.006", "YEAR,MO,DY,HR");
    assert_eq!(value(&lst, "--time"), Some("YEAR,MO,DY,HR"));
    assert_eq!(value(&lst, "--utc-offset"), Some("-05:00"), "{lst:?}");
    assert_eq!(value(&lst, "--measures"), Some("T2M"));
    assert_eq!(value(&power("LST", "13.4050", "YEAR,MO,DY,HR"), "--utc-offset"), Some("+01:00"));
    assert_eq!(value(&power("UTC", "-74.006", "YEAR,MO,DY,HR"), "--utc-offset"), None, "UTC stays");
    assert_eq!(value(&power("LST", "-74.006", "YEAR,MO,DY"), "--utc-offset"), None, "days are no times");
    assert_eq!(value(&power("LST", "7.0", "YEAR,MO,DY,HR"), "--utc-offset"), None, "Greenwich's band");
    assert_eq!(value(&power("LST", "172.6", "YEAR,MO,DY,HR"), "--utc-offset"), Some("+12:00"));
}

/// NOAA CO-OPS's (tides and currents) exports: the runs of one-letter 0/1 flags after a
/// measure (`O, F, R, L` after the water level and its `Sigma`; `X, N, R` after the
/// air temperature) and `O or I (for verified)`, a count, are no measures; a note names
/// them with the `--flag-column` that would drop what they mark. `Sigma` stays a
/// measure, `Quality` (`p`, `v`) is text. A lone one-letter column of 0/1 after a
/// measure stays a measure.
#[test]
fn coops_flag_columns_are_no_measures() {
    let water = sample(
        "Date Time, Water Level, Sigma, O or I (for verified), F, R, L, Quality \n",
        (0..6).map(|minute| {
            let rate = if minute == 3 { 1 } else { 0 };
            format!("2023-01-01 00:{:02},0.56{minute},0.005,{},0,{rate},0,p", minute * 6, minute % 3)
        }),
    );
    let found = inspect(water.as_bytes(), true, &Schema::default());
    assert_eq!(value(&found.flags, "--time"), Some("Date Time"));
    assert_eq!(value(&found.flags, "--measures"), Some("Water Level,Sigma"), "{:?}", found.flags);
    assert!(
        found.notes.iter().any(|note| note.contains("O or I (for verified), F, R, L hold 0/1 flags after Water Level")
            && note.contains("--flag-column 'Water Level=L' --drop-flags 1")),
        "{:?}",
        found.notes
    );
    let air = sample(
        "Date Time, Air Temperature, X, N, R \n",
        (0..4).map(|minute| format!("2023-01-01 00:{:02},3.{minute},0,0,{}", minute * 6, minute % 2)),
    );
    assert_eq!(value(&flags(&air), "--measures"), Some("Air Temperature"));
    let lone = "time,t,r\n2023-01-01T00:00,3.1,0\n2023-01-01T01:00,3.4,1\n";
    assert_eq!(value(&flags(lone), "--measures"), Some("t,r"), "one 0/1 column is no run of flags");
}

/// A column empty in every sampled row (snow depth in a sample of summer days) that
/// stands among the measures is one: later rows may fill it. An empty column outside
/// them (after the last measure) is left out, and a note names both kinds with what to
/// do; an empty quality column (`t_flag`) is no measure and no note. Before, every
/// empty column was dropped without a word.
#[test]
fn empty_columns_among_measures_are_loaded() {
    let summer = sample(
        "time,tavg,snow,t_flag,prcp,remarks\n",
        (1..=4).map(|day| format!("2023-07-0{day},2{day}.5,,,0.{day},")),
    );
    let found = inspect(summer.as_bytes(), true, &Schema::default());
    assert_eq!(value(&found.flags, "--measures"), Some("tavg,snow,prcp"), "{:?}", found.notes);
    let [loaded, left] = &found.notes[..] else { panic!("two notes: {:?}", found.notes) };
    assert!(loaded.starts_with("snow: empty in the 4 rows looked at, loaded as measures"), "{loaded}");
    assert!(left.starts_with("remarks: empty in the 4 rows looked at and not among the measures"), "{left}");
    assert!(left.ends_with("add them to --measures"), "{left}");
}

/// A comma-delimited export with every field quoted and decimal commas (`"12,5"`):
/// the measures are numbers (the load reads them so too). In a file whose numbers
/// have decimal points, a column of `"1,234"` (a thousand, or 1.234?) is no measure,
/// and a note says why rather than a guess.
#[test]
fn quoted_decimal_commas_in_a_comma_delimited_file() {
    let export = sample(
        "\"Datum\",\"Temperatur (°C)\",\"Luftdruck (hPa)\"\n",
        (0..4).map(|hour| format!("\"01.01.2023 0{hour}:00\",\"{hour},5\",\"1013,{hour}\"")),
    );
    let found = inspect(export.as_bytes(), true, &Schema::default());
    assert_eq!(found.columns[1].kind, ColumnKind::Number);
    assert_eq!(value(&found.flags, "--measures"), Some("Temperatur (°C),Luftdruck (hPa)"));
    assert!(found.notes.is_empty(), "{:?}", found.notes);
    let points = "time,t,visibility\n2023-01-01T00:00,1.5,\"1,234\"\n2023-01-01T01:00,2.5,\"2,050\"\n";
    let found = inspect(points.as_bytes(), true, &Schema::default());
    assert_eq!(value(&found.flags, "--measures"), Some("t"));
    assert!(found.notes.iter().any(|note| note.starts_with("visibility: numbers written with a comma (\"1,234\")")));
}
