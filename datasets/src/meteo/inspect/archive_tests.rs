//! `--inspect` on the layouts of solar and climate archives (TMY3 with its source
//! columns, EnergyPlus, NSRDB, PVGIS, SURFRAD, USCRN, CAMS, SolarAnywhere, pandas
//! frames): the rules each needs, and what each rule must leave alone. The CLI test
//! `inspect_reads_archives_as_their_makers_write_them` loads a sample of each.

use super::station::names_a_station;
use super::tests::{flags, sample, value};
use super::*;

/// A wide table with a column of codes beside each measure (TMY3's `Dry-bulb source`)
/// is long, and its source and uncertainty columns are no measures; a narrow table of
/// codes and values stays a variable-column one.
#[test]
fn source_and_uncertainty_columns_describe_their_measures() {
    let mut tmy3 = String::from("724666,\"DENVER\",CO,-7.0,39.742,-105.179,1793\n");
    tmy3.push_str("Date (MM/DD/YYYY),Time (HH:MM),GHI (W/m^2),GHI source,GHI uncert (%),Dry-bulb (C),Dry-bulb source,");
    tmy3.push_str("Dry-bulb uncert (code),Wspd (m/s),Wspd source,Wspd uncert (code)\n");
    for hour in 1..=12 {
        let source = if hour % 3 == 0 { "E" } else { "A" };
        tmy3.push_str(&format!("01/01/1991,{hour:02}:00,{},2,8,{hour}.5,{source},7,2.{hour},{source},7\n", hour * 10));
    }
    let found = inspect(tmy3.as_bytes(), true, &Schema::default());
    assert_eq!(found.layout, "long", "{:?}", found.flags);
    assert_eq!(value(&found.flags, "--measures"), Some("GHI (W/m^2),Dry-bulb (C),Wspd (m/s)"));
    let narrow =
        "station,date,element,value\nA,2020-01-01,TX,1\nA,2020-01-01,TN,2\nA,2020-01-02,TX,3\nA,2020-01-02,TN,4\n";
    assert_eq!(value(&flags(narrow), "--variable-column"), Some("element"));
}

/// Keyword lines wider than the rows above rows that start with numbers (EnergyPlus's
/// `DESIGN CONDITIONS,…`) are preamble; the station is the `LOCATION` line's city;
/// the time is year, month, day and hour (1–24), and the minute field of 60 is no
/// measure. A header wider than its rows is still a header.
#[test]
fn energyplus_keyword_lines_and_minute_sixty() {
    let mut epw = String::from("LOCATION,SCHIPHOL,-,NLD,IWEC Data,062400,52.30,4.77,1.0,-2.0\n");
    epw.push_str("DESIGN CONDITIONS,1,Heating,1,-7.3,-4.9,-11.1,1.4,-6.2,-8.4,1.8,-3.7,17.6,9.5\n");
    epw.push_str("COMMENTS 1,\"IWEC data\"\nDATA PERIODS,1,1,Data,Sunday, 1/ 1,12/31\n");
    for hour in 1..=24 {
        epw.push_str(&format!("1996,1,1,{hour},60,C9C9*0?9,{}.5,-1.0,88\n", hour % 7));
    }
    let found = flags(&epw);
    assert_eq!(value(&found, "--skip-lines"), Some("4"));
    assert_eq!(value(&found, "--station-from-preamble"), Some("1,2"));
    assert_eq!((value(&found, "--time"), value(&found, "--time-format")), (Some("0,1,2,3"), None));
    assert_eq!(value(&found, "--measures"), Some("6,7,8"));
    let wide_header = "Year,Month,Day,T,RH,extra\n2020,1,1,1.5,80\n2020,1,2,1.7,81\n2020,1,3,1.2,82\n";
    assert_eq!(value(&flags(wide_header), "--skip-lines"), Some("0"));
}

/// The header is the fullest line of text right above the first data row: under
/// NSRDB's metadata names and values (the station is under `Location ID`), under a
/// line of column groups; not under a header's units row, which stays a units row.
#[test]
fn the_header_sits_right_above_the_data() {
    let psm3 = "Source,Location ID,City,Time Zone,Elevation,Units\nNSRDB,145804,-,-7,1829,c\n\
                Year,Month,Day,Hour,Minute,Temperature\n2019,1,1,0,0,-4.0\n2019,1,1,0,30,-4.2\n2019,1,1,1,0,-4.4\n";
    let found = flags(psm3);
    assert_eq!(value(&found, "--skip-lines"), Some("2"));
    assert_eq!(value(&found, "--station-from-preamble"), Some("2,2"));
    assert_eq!(
        (value(&found, "--time"), value(&found, "--time-format")),
        (Some("Year,Month,Day,Hour,Minute"), Some("%Y %m %d %H %M"))
    );
    let groups = ",Model,,Results,\n,DOY,HR,GH,Dif Hz\n,1,1,0,0\n,1,2,0,0\n,1,3,10.5,2\n";
    assert_eq!(value(&flags(groups), "--skip-lines"), Some("1"));
    let units =
        sniff("date,temp,rh\n,C,%\n2020-01-01,1.5,80\n2020-01-02,1.7,81\n".as_bytes(), true, &Schema::default());
    assert_eq!((units.preamble_lines, units.units_rows), (0, 1));
}

/// Notes after a blank line at the end of a small file (PVGIS's legend) do not decide
/// the layout; `YYYYMMDD:HHMM` is a time; a place in the preamble is no station.
#[test]
fn pvgis_preamble_times_and_legend() {
    let mut pvgis = String::from("Latitude (decimal degrees): 45.000\nLongitude (decimal degrees): 8.000\n");
    pvgis.push_str("time(UTC),T2m,RH,SP\n");
    for hour in 0..6 {
        pvgis.push_str(&format!("20180101:{hour:02}00,{}.5,90.0,99800.0\n", hour));
    }
    pvgis.push_str("\nT2m: 2-m air temperature (degree Celsius)\nRH: relative humidity (%)\nSP: pressure (Pa)\n");
    pvgis.push_str("G(h): Global irradiance on the horizontal plane (W/m2)\n\nPVGIS (c) European Union, 2001-2025\n");
    let found = flags(&pvgis);
    assert_eq!(value(&found, "--skip-lines"), Some("2"));
    assert_eq!((value(&found, "--time"), value(&found, "--time-format")), (Some("time(UTC)"), Some("%Y%m%d:%H%M")));
    assert_eq!(value(&found, "--measures"), Some("T2m,RH,SP"));
    assert!(found.iter().any(|(flag, _)| flag == "--station-from-file"), "{found:?}");
}

/// Without a header, the first columns are the time when their values say so: a year,
/// a day of the year only when it agrees with the month and day (SURFRAD; in January
/// both readings fit), a month, a day, an hour, minutes when 0–59. ISD-Lite's year,
/// month, day, hour stay as they were.
#[test]
fn leading_time_columns_without_header() {
    let surfrad = |doy: u32, month: u32, day: u32| {
        let rows = (0..5).map(|m| format!(" 2019 {doy} {month} {day}  0 {m}  0.0 110.8 -1.9 0"));
        flags(&sample(" Bondville\n   40.05  88.37  213 m version 1\n", rows))
    };
    for (doy, month, day) in [(32, 2, 1), (5, 1, 5)] {
        let found = surfrad(doy, month, day);
        assert_eq!(value(&found, "--time"), Some("0,2,3,4,5"), "{doy}: {found:?}");
        assert_eq!(value(&found, "--time-format"), Some("%Y %m %d %H %M"));
    }
    let isd = flags("1901 01 01 06   -78 -9999\n1901 01 01 13   -72 -9999\n1901 01 01 20   -94 -9999\n");
    assert_eq!((value(&isd, "--time"), value(&isd, "--time-format")), (Some("0,1,2,3"), None));
    let warm = flags("2020 01 01 00    33 -9999\n2020 01 01 01    40 -9999\n2020 01 01 02    38 -9999\n");
    assert_eq!(value(&warm, "--time"), Some("0,1,2,3"), "tenths of a degree after an hourly time are no minutes");
}

/// A four-digit time column right after a date column (USCRN's `UTC_TIME`) joins the
/// date, and the second date's (local) time is no measure; with a header it must be
/// named like a time: a pressure of `1013` after a date is a measure.
#[test]
fn four_digit_times_after_a_date() {
    let crn = "53131 20190101 2350 20190101 1650 3 -111.17 32.24 3.0\n53131 20190101 2355 20190101 1655 3 -111.17 32.24 3.1\n\
               53131 20190102 0000 20190101 1700 3 -111.17 32.24 3.2\n";
    let found = flags(crn);
    assert_eq!((value(&found, "--time"), value(&found, "--time-format")), (Some("1,2"), Some("%Y%m%d %H%M")));
    assert_eq!(value(&found, "--station"), Some("0"), "a WBAN number in every row");
    assert_eq!(value(&found, "--measures"), Some("5,6,7,8"));
    let named = flags("date,UTC_TIME,t\n20190101,2350,1\n20190101,2355,2\n");
    assert_eq!(value(&named, "--time"), Some("date,UTC_TIME"));
    let pressure = flags("date,pres,t\n20190101,1013,1\n20190102,1012,2\n");
    assert_eq!((value(&pressure, "--time"), value(&pressure, "--measures")), (Some("date"), Some("pres,t")));
}

/// A commented preamble of CAMS's length above a few `;` rows: the delimiter and the
/// header come from the rows, the ISO periods are the time, a comment is no station.
/// A UTC time column is chosen over a local one; a blank-named row-number column
/// (pandas) is no measure, and blank or repeated names are referred to by number.
#[test]
fn comments_periods_utc_and_unnamed_columns() {
    let mut cams = String::from("# Coding: utf-8\n# Title: CAMS Radiation Service, a long title, with commas, in it\n");
    for column in 1..30 {
        cams.push_str(&format!("# {column}. A column, described at length\n"));
    }
    cams.push_str("# Observation period;TOA;GHI\n");
    for hour in 0..3 {
        cams.push_str(&format!("2020-06-01T{hour:02}:00:00.0/2020-06-01T{:02}:00:00.0;{hour}.5;{hour}.25\n", hour + 1));
    }
    let found = inspect(cams.as_bytes(), true, &Schema::default());
    assert_eq!(found.sniffed.delimiter, Delimiter::Byte(b';'));
    assert_eq!(value(&found.flags, "--time"), Some("Observation period"));
    assert_eq!(value(&found.flags, "--measures"), Some("TOA,GHI"));
    assert!(found.flags.iter().any(|(flag, _)| flag == "--station-from-file"), "{:?}", found.flags);
    let times = flags("Local,UTC Time,t\n01/01/2021 01:00,01/01/2021 06:00,1\n01/01/2021 02:00,01/01/2021 07:00,2\n");
    assert_eq!((value(&times, "--time"), value(&times, "--time-format")), (Some("UTC Time"), Some("%m/%d/%Y %H:%M")));
    let pandas = flags(",time,t,t\n0,2020-01-01,1,2\n1,2020-01-02,3,4\n");
    assert_eq!(value(&pandas, "--measures"), Some("2,3"), "repeated names by number, the row number left out");
}

/// NOAA's GSOD: each `X_ATTRIBUTES` column (the count of observations) and the
/// `FRSHTT` indicators (`010000`) are no measures. NASA POWER: the header block
/// between banners is preamble, and a banner names no station.
#[test]
fn gsod_attributes_and_nasa_power_banners() {
    let mut gsod = String::from(
        "\"STATION\",\"DATE\",\"NAME\",\"TEMP\",\"TEMP_ATTRIBUTES\",\"MAX\",\"MAX_ATTRIBUTES\",\"FRSHTT\"\n",
    );
    for (day, flags) in [(1, "000000"), (2, "010000"), (3, "010010")] {
        gsod.push_str(&format!(
            "\"72505394728\",\"2020-01-0{day}\",\"NY CITY\",\"   3{day}.4\",\"24\",\"   46.0\",\"*\",\"{flags}\"\n"
        ));
    }
    let found = flags(&gsod);
    assert_eq!(value(&found, "--measures"), Some("TEMP,MAX"));
    let power = "-BEGIN HEADER-\nNASA/POWER Hourly Data\nLocation: Latitude  45.0   Longitude 8.0\nT2M     Temperature at 2 Meters (C)\n\
                 -END HEADER-\nYEAR,MO,DY,HR,T2M,RH2M\n2020,1,1,0,1.5,90.2\n2020,1,1,1,1.2,-999\n2020,1,1,2,0.9,91.5\n";
    let found = flags(power);
    assert_eq!(value(&found, "--skip-lines"), Some("5"));
    assert_eq!(value(&found, "--time"), Some("YEAR,MO,DY,HR"));
    assert!(found.iter().any(|(flag, _)| flag == "--station-from-file"), "{found:?}");
}

/// Météo-France's SYNOP files: `numer_sta` names the station, a fourteen-digit
/// `YYYYMMDDHHMMSS` is the time, `mq` (manquant) is missing, and the `;` that ends each
/// line makes no measure.
#[test]
fn meteo_france_synop() {
    let synop = sample(
        "numer_sta;date;pmer;t;u;cm;\n",
        [(0, "94"), (3, "mq"), (6, "91")]
            .map(|(hour, humidity)| format!("07005;20200101{hour:02}0000;102830;275.350000;{humidity};mq;")),
    );
    let found = flags(&synop);
    assert_eq!(value(&found, "--station"), Some("numer_sta"));
    assert_eq!((value(&found, "--time"), value(&found, "--time-format")), (Some("date"), Some("%Y%m%d%H%M%S")));
    assert_eq!(value(&found, "--measures"), Some("pmer,t,u"));
    assert_eq!(value(&found, "--na"), Some("mq"));
    assert!(!names_a_station("status") && !names_a_station("sta") && names_a_station("id_sta"));
}

/// NREL MIDC's raw files: year, day of the year and an `HHMM` column named for its
/// time zone, written without leading zeros (`1` for 00:01), make the time; an
/// integer column not named like a clock does not.
#[test]
fn day_of_year_with_an_unpadded_clock() {
    let midc =
        "Year,DOY,MST,Air Temperature [deg C]\n2018,291,0,1.5\n2018,291,1,1.4\n2018,291,59,1.2\n2018,291,100,1.1\n";
    let found = flags(midc);
    assert_eq!((value(&found, "--time"), value(&found, "--time-format")), (Some("Year,DOY,MST"), Some("%Y %j %H%M")));
    let other = flags("Year,DOY,Batt,t\n2018,291,0,1.5\n2018,291,1,1.4\n");
    assert_eq!(value(&other, "--time"), Some("Year,DOY"));
}

/// MIDAS Open's BADC-CSV: the metadata lines down to `data` are preamble, the `end
/// data` line after the rows types no column (the time is `ob_end_time`, a timestamp,
/// not the later receipt stamp), and the version, record status and hour count are no
/// measures.
#[test]
fn midas_open_badc_csv() {
    let mut midas = String::from("Conventions,G,BADC-CSV,1\ntitle,G,uk-daily-temperature-obs\n");
    midas.push_str("long_name,max_air_temp,Maximum air temperature,degC\nlocation,G,50.861,-3.239\ndata\n");
    midas.push_str("ob_end_time,id_type,id,ob_hour_count,version_num,src_id,rec_st_ind,max_air_temp,");
    midas.push_str("min_air_temp,max_air_temp_q,meto_stmp_time\n");
    for day in 1..=6 {
        midas.push_str(&format!(
            "2020-01-0{day} 09:00:00,DCNN,1226,24,1,1381,1001,{day}.9,3.2,0,2020-01-0{day} 09:56:00\n"
        ));
    }
    midas.push_str("end data\n");
    let found = flags(&midas);
    assert_eq!(value(&found, "--skip-lines"), Some("5"));
    assert_eq!(value(&found, "--time"), Some("ob_end_time"));
    assert_eq!(value(&found, "--measures"), Some("max_air_temp,min_air_temp"));
}

/// A Davis WeatherLink export: dates with two-digit years (`%y`, not the year 20) and
/// twelve-hour times written `12:05a`.
#[test]
fn weatherlink_two_digit_years_and_twelve_hour_times() {
    let export = sample(
        "Date\tTime\tTemp Out\tOut Hum\tWind Dir\tBar\n",
        [("12:05a", "NW"), ("12:10a", "NNW"), ("1:15p", "---"), ("11:20p", "N")]
            .map(|(time, dir)| format!("01/13/20\t{time}\t41.2\t88\t{dir}\t30.112")),
    );
    let found = flags(&export);
    assert_eq!(value(&found, "--time"), Some("Date,Time"));
    let format = value(&found, "--time-format").expect("a format");
    assert!(format.starts_with("%m/%d/%y %I:%M") && format.ends_with("%p"), "{format}");
    assert_eq!(value(&found, "--measures"), Some("Temp Out,Out Hum,Bar"));
    assert!(!matches_format("%m/%d/%Y", "01/13/20") && matches_format("%m/%d/%y", "01/13/20"));
}

/// The Finnish Meteorological Institute's downloads: year, month and day columns with a
/// time-of-day column make the time (the hours of a day are not one time), and the
/// older files name the month and day `m` and `d`.
#[test]
fn fmi_year_month_day_and_a_time_of_day() {
    let fmi = sample(
        "Observation station,Year,Month,Day,Time [Local time],Air temperature mean [°C]\n",
        (0..4).map(|hour| format!("Helsinki Kaisaniemi,2023,1,1,{hour:02}:00,1.{hour}")),
    );
    let found = flags(&fmi);
    assert_eq!(value(&found, "--time"), Some("Year,Month,Day,Time [Local time]"));
    assert_eq!(value(&found, "--time-format"), Some("%Y %m %d %H:%M"));
    let old = "Year,m,d,Time,Time zone,Air temperature (degC)\n2020,1,1,00:00,UTC,1.2\n2020,1,2,00:00,UTC,0.4\n";
    let found = flags(old);
    assert_eq!(value(&found, "--time"), Some("Year,m,d,Time"));
    assert_eq!(value(&found, "--measures"), Some("Air temperature (degC)"));
}

/// Met Éireann's files: a preamble of `Station Name: …` and a legend, dates with
/// month names (`01-jan-1942 00:00`), and an indicator column `ind` before each
/// measure, which is no measure.
#[test]
fn met_eireann_month_names_and_indicators() {
    let mut eireann = String::from("Station Name: DUBLIN AIRPORT\nStation Height: 71 M \n\n");
    eireann.push_str("date:  -  Date and Time (utc)\nind:  -  Indicator\nrain:  -  Precipitation Amount (mm)\n\n");
    eireann.push_str("date,ind,rain,ind,temp\n");
    for hour in 0..4 {
        eireann.push_str(&format!("01-jan-1942 {hour:02}:00,{},0.{hour},0,6.{hour}\n", if hour == 0 { 0 } else { 2 }));
    }
    let found = flags(&eireann);
    assert_eq!((value(&found, "--time"), value(&found, "--time-format")), (Some("date"), Some("%d-%b-%Y %H:%M")));
    assert_eq!(value(&found, "--measures"), Some("rain,temp"));
    assert_eq!(value(&found, "--station-from-preamble"), Some("1,1"));
}

/// IMGW's files (Poland) have no header and start with the station's code and name:
/// year, month and day columns further in are the time, and the next column is the
/// hour only when it rises within a day (a daily file's next column is a measure).
#[test]
fn imgw_year_month_day_after_the_station() {
    let mut daily = String::new();
    for day in 1..=4 {
        daily.push_str(&format!("\"249180010\",\"KOLO\",\"2020\",\"01\",\"{day:02}\",\"{day}\",\"\",\"0.{day}\"\n"));
    }
    let found = flags(&daily);
    assert_eq!((value(&found, "--station"), value(&found, "--time")), (Some("0"), Some("2,3,4")));
    assert_eq!(value(&found, "--measures"), Some("5,7"));
    let mut hourly = String::new();
    for (day, hour) in [(1, 0), (1, 6), (1, 12), (2, 0), (2, 6)] {
        hourly.push_str(&format!("\"349190600\",\"WARSZAWA\",\"2020\",\"01\",\"{day:02}\",\"{hour:02}\",\"-1.5\"\n"));
    }
    assert_eq!(value(&flags(&hourly), "--time"), Some("2,3,4,5"));
}

/// An Onset HOBO logger's export: the row number `#` is no measure, the time is a date
/// with a twelve-hour clock, the `GMT-05:00` in its name is the UTC offset, and names
/// with commas are referenced by number (`--measures` splits at commas).
#[test]
fn hobo_twelve_hour_clock_offset_and_names_with_commas() {
    let mut hobo =
        String::from("\"Plot Title: 10432183\"\n\"#\",\"Date Time, GMT-05:00\",\"Temp, °F (LGR S/N: 1)\",\"RH, %\"\n");
    for (i, minute) in [(1, "00"), (2, "15"), (3, "30")] {
        hobo.push_str(&format!("{i},07/14/17 01:{minute}:00 PM,82.{i},59.{i}\n"));
    }
    let found = flags(&hobo);
    assert_eq!((value(&found, "--time"), value(&found, "--time-format")), (Some("1"), Some("%m/%d/%y %I:%M:%S %p")));
    assert_eq!(value(&found, "--utc-offset"), Some("-05:00"));
    assert_eq!(value(&found, "--measures"), Some("2,3"));
    assert_eq!(time::offset_in_name("Time (UTC+1)"), Some("+01:00".into()));
    assert_eq!(time::offset_in_name("Time (UTC)"), None);
}

/// meteoblue's history exports: a block of metadata lines as wide as the rows (a key,
/// then one value a column) above the names; the header is the names' line, whose
/// names differ, the station the `location` line's value, and the time ISO 8601's basic
/// form (`20200101T0000`).
#[test]
fn meteoblue_metadata_block_and_basic_iso_times() {
    let mut export = String::from("location,Basel,Basel\nlat,47.55832,47.55832\nunit,°C,mm\n");
    export.push_str(
        "resolution,hourly,hourly\naggregation,None,None\ntimestamp,Basel Temperature [2 m],Basel Precipitation\n",
    );
    for hour in 0..24 {
        export.push_str(&format!("20200101T{hour:02}00,0.{hour},0.0\n"));
    }
    let found = flags(&export);
    assert_eq!(value(&found, "--skip-lines"), Some("5"));
    assert_eq!((value(&found, "--time"), value(&found, "--time-format")), (Some("timestamp"), Some("%Y%m%dT%H%M")));
    assert_eq!(value(&found, "--station-from-preamble"), Some("1,2"));
    assert_eq!(value(&found, "--measures"), Some("Basel Temperature [2 m],Basel Precipitation"));
}

/// OpenWeatherMap's history exports: `dt` is Unix seconds, `city_name` the station, and
/// the zone's offset and the weather icon's code are no measures.
#[test]
fn openweathermap_history_export() {
    let export = sample(
        "dt,dt_iso,timezone,city_name,lat,lon,temp,humidity,weather_id,weather_icon\n",
        (0..3).map(|hour| {
            let dt = 1_577_836_800 + hour * 3_600;
            format!("{dt},2020-01-01 0{hour}:00:00 +0000 UTC,3600,Berlin,52.52,13.40,1.9{hour},84,800,01n")
        }),
    );
    let found = flags(&export);
    assert_eq!((value(&found, "--station"), value(&found, "--time")), (Some("city_name"), Some("dt")));
    assert_eq!(value(&found, "--measures"), Some("temp,humidity"));
}

/// CoCoRaHS's exports name the station in camel case (`StationNumber`) and write the
/// observation's time of day with AM/PM; Environment Canada's hourly files give year,
/// month, day and a `Time (LST)` column, all four the time (not the day alone).
#[test]
fn cocorahs_station_and_eccc_hourly_time() {
    let cocorahs = sample(
        "ObservationDate,ObservationTime,StationNumber,StationName,TotalPrecipAmt\n",
        (1..=3).map(|day| format!("2020-01-0{day},07:00 AM,CO-LR-1,Fort Collins 2.3 SW,0.{day}")),
    );
    let found = flags(&cocorahs);
    assert_eq!(value(&found, "--station"), Some("StationNumber"));
    assert_eq!(value(&found, "--time-format"), Some("%Y-%m-%d %I:%M %p"));
    let eccc = sample(
        "\"Station Name\",\"Year\",\"Month\",\"Day\",\"Time (LST)\",\"Temp (°C)\"\n",
        (0..3).map(|hour| format!("\"TORONTO CITY\",\"2020\",\"01\",\"01\",\"0{hour}:00\",\"0.{hour}\"")),
    );
    let found = flags(&eccc);
    assert_eq!(value(&found, "--time"), Some("Year,Month,Day,Time (LST)"));
    assert_eq!(value(&found, "--time-format"), Some("%Y %m %d %H:%M"));
}
