//! Unit tests of `--inspect` on small files of each layout.

use super::measures::sentinel_like;
use super::station::names_a_station;
use super::*;

/// The flags `--inspect` suggests for `text`.
pub(super) fn flags(text: &str) -> Vec<(String, Option<String>)> {
    inspect(text.as_bytes(), true, &Schema::default()).flags
}

/// A sample file: `head` (lines ended by `\n`: a preamble, a header), then each of
/// `rows` on a line of its own. The inspect tests' files are built with it.
pub(super) fn sample(head: &str, rows: impl IntoIterator<Item = String>) -> String {
    let mut text = head.to_owned();
    for row in rows {
        text.push_str(&row);
        text.push('\n');
    }
    text
}

/// The value of flag `name` among `flags`.
pub(super) fn value<'a>(flags: &'a [(String, Option<String>)], name: &str) -> Option<&'a str> {
    flags.iter().find(|(flag, _)| flag == name).and_then(|(_, value)| value.as_deref())
}

/// A long file with a preamble, separate date and time columns, a sentinel.
#[test]
fn long_with_preamble_and_split_time() {
    let text =
        "Station;Hof\nDatum;Zeit;T (C);QN\n01.01.2020;01:00;1,5;3\n01.01.2020;02:00;9999,9;3\n01.01.2020;24:00;2;3\n";
    let found = flags(text);
    assert_eq!(value(&found, "--skip-lines"), Some("1"));
    assert_eq!(value(&found, "--station-from-preamble"), Some("1,2"));
    assert_eq!(value(&found, "--time"), Some("Datum,Zeit"));
    assert_eq!(value(&found, "--time-format"), Some("%d.%m.%Y %H:%M"));
    assert_eq!(value(&found, "--measures"), Some("T (C)"));
    assert_eq!(value(&found, "--na"), Some("9999.9"));
}

/// A quality column named after its measure (`Q_TG`, `TMAX_FLAG`) is the measure's
/// `--flag-column`, not a measure; codes other than the common one are dropped when
/// the common one is not blank; a quality column with one code says nothing; an
/// archive's title line does not name the station, the file does. Environment
/// Canada's `… Flag` columns drop on `M` only, its place and id columns are no
/// measures, and every pair goes in one `--flag-column`; the Bureau of Meteorology's
/// `… station number` is the station.
#[test]
fn quality_columns_are_flags_of_their_measures() {
    let mut eca = String::from("EUROPEAN CLIMATE ASSESSMENT & DATASET (ECA&D), file created on 22-11-2021\n\n");
    eca.push_str(" SOUID,    DATE,   TG, Q_TG\n");
    for day in 1..=28 {
        let (value, code) = match day {
            4 => (-9999, 9),
            11 => (-24, 1),
            _ => (day * 3, 0),
        };
        eca.push_str(&format!("100003,186001{day:02},{value:>5},{code:>5}\n"));
    }
    let found = flags(&eca);
    assert_eq!(value(&found, "--measures"), Some("TG"), "SOUID is an id, Q_TG a flag: {found:?}");
    assert_eq!(value(&found, "--flag-column"), Some("TG=Q_TG"));
    assert_eq!(value(&found, "--drop-flags"), Some("1,9"));
    assert!(found.iter().any(|(flag, _)| flag == "--station-from-file"), "{found:?}");
    let noaa = "station,date,TMAX,TMAX_FLAG,PRCP\nA,2020-01-01,10,,0\nA,2020-01-02,11,X,0\nA,2020-01-03,12,,1\n";
    let found = flags(noaa);
    assert_eq!(value(&found, "--measures"), Some("TMAX,PRCP"));
    assert_eq!(value(&found, "--flag-column"), Some("TMAX=TMAX_FLAG"));
    assert_eq!(value(&found, "--drop-flags"), None, "a blank flag is the common one: any set flag drops");
    let canada = "\"Longitude (x)\",\"Latitude (y)\",\"Station Name\",\"Climate ID\",\"Date/Time\",\"Year\",\
                  \"Month\",\"Day\",\"Max Temp (°C)\",\"Max Temp Flag\",\"Total Rain (mm)\",\"Total Rain Flag\"\n\
                  \"-75.67\",\"45.38\",\"OTTAWA CDA\",\"6105976\",\"2020-01-01\",\"2020\",\"01\",\"01\",\"1.2\",\"\",\"\",\"M\"\n\
                  \"-75.67\",\"45.38\",\"OTTAWA CDA\",\"6105976\",\"2020-01-02\",\"2020\",\"01\",\"02\",\"\",\"M\",\"0.0\",\"T\"\n\
                  \"-75.67\",\"45.38\",\"OTTAWA CDA\",\"6105976\",\"2020-01-03\",\"2020\",\"01\",\"03\",\"-3.5\",\"E\",\"\",\"M\"\n";
    let found = inspect(canada.as_bytes(), true, &Schema::default());
    assert_eq!(found.layout, "long", "an all-M flag column is no element column: {:?}", found.flags);
    assert_eq!(value(&found.flags, "--station"), Some("Station Name"));
    assert_eq!(value(&found.flags, "--measures"), Some("Max Temp (°C),Total Rain (mm)"), "no place, no id");
    let pairs = "Max Temp (°C)=Max Temp Flag,Total Rain (mm)=Total Rain Flag";
    assert_eq!(value(&found.flags, "--flag-column"), Some(pairs), "one flag, every pair");
    assert_eq!(value(&found.flags, "--drop-flags"), Some("M"), "Environment Canada's legend");
    let bom = "Product code,Bureau of Meteorology station number,Year,Month,Day,Rainfall amount (millimetres)\n\
               IDCJAC0009,066062,2023,01,01,0.0\nIDCJAC0009,066062,2023,01,02,4.2\n";
    let found = flags(bom);
    assert_eq!(value(&found, "--station"), Some("Bureau of Meteorology station number"));
    assert_eq!(value(&found, "--measures"), Some("Rainfall amount (millimetres)"));
    assert!(!names_a_station("HourlyStationPressure") && names_a_station("Station Name"));
    let only_valid = eca.replace("  -24,    1", "  -24,    0").replace("-9999,    9", "   12,    0");
    assert_eq!(value(&flags(&only_valid), "--drop-flags"), Some("1,9"), "ECA&D's codes, seen or not");
    let one_code = "station,date,T,Q_T\nA,2020-01-01,1,A\nA,2020-01-02,2,A\nA,2020-01-03,3,A\n";
    assert_eq!(value(&flags(one_code), "--flag-column"), None);
}

/// Numbers with flags after them and words among numbers are measures (NOAA's LCD
/// files, the Met Office's station files): the flags are `--suffix-flags` (NOAA's
/// suspect `s` dropped), NOAA's trace `T` in a precipitation column is 0, other
/// words are missing; a column filled once a day is no element column; when the
/// first eight measures are seldom all present, `--index-measures` names those that
/// are; year and month columns date a monthly series.
#[test]
fn flags_after_numbers_words_and_monthly_series() {
    let mut lcd = String::from(
        "STATION,DATE,REPORT_TYPE,DailyPrecipitation,DailyWeather,HourlyDryBulbTemperature,\
         HourlyPrecipitation,HourlyWindDirection,HourlyVisibility\n",
    );
    for hour in 0..8 {
        let temp = if hour == 3 { "34s".to_owned() } else { (30 + hour).to_string() };
        let rain = ["T", "0.00", "0.02s", "0.01"][hour % 4];
        let wind = if hour == 5 { "VRB" } else { "250" };
        let seen = if hour == 6 { "2.50V" } else { "10.00" };
        lcd.push_str(&format!("\"7250\",\"2021-01-01T{hour:02}:51:00\",\"FM-15\",,,{temp},{rain},{wind},{seen}\n"));
    }
    lcd.push_str("\"7250\",\"2021-01-01T23:59:00\",\"SOD  \",\"0.12\",\"RA\",,,,\n");
    let found = inspect(lcd.as_bytes(), true, &Schema::default());
    assert_eq!(found.layout, "long", "{:?}", found.flags);
    let lcd = found.flags;
    assert_eq!(value(&lcd, "--station"), Some("STATION"));
    assert_eq!(value(&lcd, "--time"), Some("DATE"));
    let measures =
        "DailyPrecipitation,HourlyDryBulbTemperature,HourlyPrecipitation,HourlyWindDirection,HourlyVisibility";
    assert_eq!(value(&lcd, "--measures"), Some(measures));
    assert_eq!(value(&lcd, "--suffix-flags"), Some("sV"));
    assert_eq!(value(&lcd, "--drop-flags"), Some("s"));
    assert_eq!(value(&lcd, "--word-value"), Some("T=0"));
    assert_eq!(value(&lcd, "--na"), Some("VRB"));
    let index = "HourlyDryBulbTemperature,HourlyPrecipitation,HourlyWindDirection,HourlyVisibility";
    assert_eq!(value(&lcd, "--index-measures"), Some(index));
    let met_office = "Oxford\nEstimated data is marked with a * after the value.\n\
                      \x20  yyyy  mm   tmax    rain     sun\n              degC      mm   hours\n\
                      \x20  1853   1    8.4    62.8     ---\n   1929   3   12.4     2.8   160.0*\n\
                      \x20  2019   6   20.4    96.3   166.6#\n   2023   7   21.4   108.4*  156.9#  Provisional\n";
    let met = flags(met_office);
    assert_eq!(value(&met, "--skip-lines"), Some("2"));
    assert_eq!(value(&met, "--station-from-preamble"), Some("1,1"));
    assert_eq!((value(&met, "--time"), value(&met, "--time-format")), (Some("yyyy,mm"), Some("%Y %m")));
    assert_eq!(value(&met, "--measures"), Some("tmax,rain,sun"));
    assert_eq!(value(&met, "--suffix-flags"), Some("*#"));
    assert_eq!((value(&met, "--na"), value(&met, "--drop-flags")), (Some("---"), None));
    let words = flags("station,date,dir\nA,2020-01-01,N\nA,2020-01-02,NE\nA,2020-01-03,5\n");
    assert_eq!(value(&words, "--measures"), Some(""), "mostly words: text, no measure");
}

/// GHCN-Daily rows (no header) are a variable-column table; a monthly table with
/// month columns is wide.
#[test]
fn variable_and_wide() {
    let text = "USW1,20200101,TMAX,150,,,W,\nUSW1,20200101,TMIN,-20,,,W,\nUSW1,20200101,PRCP,0,,,W,\n\
                USW1,20200102,TMAX,160,,,W,\nUSW1,20200102,TMIN,-10,,,W,\nUSW1,20200102,PRCP,5,,,W,\n";
    let found = flags(text);
    assert_eq!(value(&found, "--variable-column"), Some("2"));
    assert_eq!(value(&found, "--value-column"), Some("3"));
    assert_eq!(value(&found, "--measures"), Some("TMAX,TMIN,PRCP"));
    assert_eq!(value(&found, "--time-format"), Some("%Y%m%d"));
    assert_eq!(value(&found, "--flag-column"), Some("3=5"), "GHCN's quality flag drops a value");
    let wide = inspect(b"station,year,Jan,Feb,Mar\nA,2020,1.5,2,3\nB,2020,1,2,3\n", true, &Schema::default());
    assert_eq!(wide.layout, "wide (months)");
    assert_eq!(value(&wide.flags, "--time"), Some("year"));
}

/// Year and day-of-year (and hour) columns take a `%Y %j` format; an integer
/// column of Unix seconds named like a time is the time.
#[test]
fn day_of_year_and_unix_seconds() {
    let found = flags("station,year,doy,hour,t\nZ,2020,61,12,1.0\nZ,2020,366,0,2.0\n");
    assert_eq!(value(&found, "--time"), Some("year,doy,hour"));
    assert_eq!(value(&found, "--time-format"), Some("%Y %j %H"));
    assert_eq!(value(&found, "--measures"), Some("t"));
    let found = flags("station,Year,DOY,t\nZ,2020,61,1.0\nZ,2020,62,2.0\n");
    assert_eq!((value(&found, "--time"), value(&found, "--time-format")), (Some("Year,DOY"), Some("%Y %j")));
    let found = flags("station,epoch,t\nY,1583064000,1.0\nY,1583067600,2.0\n");
    assert_eq!(value(&found, "--time"), Some("epoch"));
    assert_eq!(value(&found, "--time-format"), None);
    assert_eq!(value(&found, "--measures"), Some("t"));
    let found = flags("station,time,t\nY,12,1.0\nY,13,2.0\n");
    assert_ne!(value(&found, "--time"), Some("time"), "small integers are no Unix seconds");
}

/// Three more archive styles: DWD product files (padded `;` fields, YYYYMMDDHH,
/// quality and end-of-record columns), Meteostat (no header, date and hour
/// columns) and Open-Meteo (a metadata block, a blank line, then the table).
#[test]
fn dwd_meteostat_and_open_meteo() {
    let dwd = "STATIONS_ID;MESS_DATUM;QN_9;TT_TU;RF_TU;eor\n        3;1950040101;    5;   5.7;  83.0;eor\n\
               3;1950040102;    5;   5.2;  85.0;eor\n";
    let found = flags(dwd);
    assert_eq!(value(&found, "--time"), Some("MESS_DATUM"));
    assert_eq!(value(&found, "--time-format"), Some("%Y%m%d%H"));
    assert_eq!(value(&found, "--measures"), Some("TT_TU,RF_TU"));
    let meteostat = "2020-01-01,0,7.2,4.2,81,,\n2020-01-01,1,7.0,4.4,83,,\n2020-01-01,2,6.8,4.5,85,,\n";
    let found = flags(meteostat);
    assert_eq!(value(&found, "--time"), Some("0,1"));
    assert_eq!(value(&found, "--time-format"), Some("%Y-%m-%d %H"));
    assert_eq!(value(&found, "--measures"), Some("2,3,4"));
    assert!(found.iter().any(|(flag, _)| flag == "--station-from-file"));
    let open_meteo = "latitude,longitude,elevation,timezone\n52.52,13.41,38.0,GMT\n\n\
                      time,temperature_2m (C),rain (mm)\n2023-01-01T00:00,1.2,0\n2023-01-01T01:00,1.0,0.1\n";
    let found = flags(open_meteo);
    assert_eq!(value(&found, "--skip-lines"), Some("3"));
    assert_eq!(value(&found, "--time"), Some("time"));
    assert_eq!(value(&found, "--measures"), Some("temperature_2m (C),rain (mm)"));
}

/// Values of 9s that stand out in a measure column are suggested as `--na`, the
/// default ones too; one that is data in another column is given per column; 9s
/// among values of their size are data.
#[test]
fn sentinels_of_nines() {
    let text = "station,date,t,p,rh,pm25\nA,2020-01-01,12.5,1013,55,999\nA,2020-01-02,-99.9,999999,99.9,500\n\
                A,2020-01-03,-9999,1012,98,800\nA,2020-01-04,999,99999,999.9,-999\n";
    let found = flags(text);
    assert_eq!(value(&found, "--measures"), Some("t,p,rh,pm25"));
    assert_eq!(value(&found, "--na"), Some("-9999,-99.9,t=999,99999,999999,999.9"));
    assert!(sentinel_like(-9900.0) && sentinel_like(99.9) && !sentinel_like(99.0) && !sentinel_like(9998.0));
}

/// A GHCN-Daily sample of a few lines is a variable-column table when its (station,
/// date) key repeats or its codes are GHCN's; a long table with a column of
/// upper-case codes (wind directions) stays long.
#[test]
fn variable_from_a_short_sample() {
    let five = "USW1,20200101,TMAX,56,,,W,2400\nUSW1,20200101,TMIN,-22,,,W,2400\nUSW1,20200101,PRCP,0,,,W,2400\n\
                USW1,20200101,SNOW,0,,,W,\nUSW1,20200102,TMAX,72,,,W,2400\n";
    let found = flags(five);
    assert_eq!(value(&found, "--variable-column"), Some("2"));
    assert_eq!(value(&found, "--measures"), Some("TMAX,TMIN,PRCP,SNOW"));
    let found = flags("USW1,20200101,TMAX,56\nUSW1,20200102,TMIN,-22\n");
    assert_eq!(value(&found, "--variable-column"), Some("2"), "GHCN codes on distinct days");
    let wind = "A,20200101,NNE,3.5\nA,20200102,SW,4.0\nA,20200103,N,1.5\nA,20200104,E,2.5\nA,20200105,W,0.5\n";
    let found = inspect(wind.as_bytes(), true, &Schema::default());
    assert_eq!(found.layout, "long");
    assert_eq!(value(&found.flags, "--measures"), Some("3"));
}
