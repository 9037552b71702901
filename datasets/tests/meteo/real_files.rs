//! The real files of `../shared/data/weather` load with the expected row and missing
//! counts. Expected counts come from `../shared/data/README.md` and from a naive
//! line-split count in this file (an independent code path), never from the loader.

use std::io::Read;
use std::path::PathBuf;

use quiredb_datasets::meteo::Schema;

use super::load_bytes;

fn weather_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data/weather"));
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("SKIPPED: {} is absent; the real-file tests did not run", dir.display());
        None
    }
}

fn decoder(path: PathBuf) -> impl Read {
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    let mut decoder = zstd::Decoder::new(file).expect("zstd decoder");
    decoder.window_log_max(27).expect("window size");
    decoder
}

/// The decompressed bytes of `name` (a .csv.zst, or `archive:member` of a .tar.zst).
pub fn real_file(name: &str) -> Option<Vec<u8>> {
    let dir = weather_dir()?;
    let mut bytes = Vec::new();
    match name.split_once(':') {
        None => {
            decoder(dir.join(name)).read_to_end(&mut bytes).expect("decompress");
        }
        Some((archive, member)) => {
            let mut tar = tar::Archive::new(decoder(dir.join(archive)));
            let entries = tar.entries().expect("tar entries");
            let mut entry = entries
                .map(|entry| entry.expect("tar entry"))
                .find(|entry| entry.path().is_ok_and(|path| path.ends_with(member)))
                .unwrap_or_else(|| panic!("{member} not in {archive}"));
            entry.read_to_end(&mut bytes).expect("read tar member");
        }
    }
    Some(bytes)
}

/// Naive count: (data rows, rows with every listed column present, missing per column).
fn naive_counts(bytes: &[u8], columns: &[&str]) -> (u64, u64, Vec<u64>) {
    let text = std::str::from_utf8(bytes).expect("real files are UTF-8");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let positions: Vec<usize> =
        columns.iter().map(|c| header.iter().position(|h| h == c).expect("column in header")).collect();
    let (mut rows, mut complete, mut missing) = (0, 0, vec![0u64; columns.len()]);
    for line in lines {
        let fields: Vec<&str> = line.split(',').collect();
        rows += 1;
        let mut all = true;
        for (slot, &position) in missing.iter_mut().zip(&positions) {
            if matches!(fields[position], "NA" | "") {
                *slot += 1;
                all = false;
            }
        }
        complete += u64::from(all);
    }
    (rows, complete, missing)
}

fn check_preset(file: &str, preset: &str, columns: &[&str], rows: u64, complete: u64, missing: &[u64]) {
    let Some(bytes) = real_file(file) else { return };
    let naive = naive_counts(&bytes, columns);
    assert_eq!(naive, (rows, complete, missing.to_vec()), "naive count of {file}");
    let schema = Schema::preset(preset).expect("known preset");
    let summary = load_bytes(&bytes, &schema, false).expect("real file loads");
    assert_eq!(summary.rows, rows, "{summary}");
    assert_eq!(summary.skipped_rows, 0);
    assert_eq!(summary.complete_rows, complete, "{summary}");
    assert_eq!(summary.missing, missing, "{summary}");
    assert_eq!(summary.bytes, bytes.len() as u64);
}

/// Beijing: 420,768 rows, 12 stations, all five measures present in 420,359 rows.
#[test]
fn beijing_loads_with_expected_counts() {
    let columns = ["TEMP", "PRES", "DEWP", "RAIN", "WSPM"];
    let missing = [398, 393, 403, 390, 318];
    check_preset("beijing_multisite_all_stations.csv.zst", "beijing", &columns, 420_768, 420_359, &missing);
    let Some(bytes) = real_file("beijing_multisite_all_stations.csv.zst") else {
        return;
    };
    let summary = load_bytes(&bytes, &Schema::preset("beijing").expect("preset"), false).expect("loads");
    assert_eq!(summary.stations, 12);
    // 2013-03-01T00:00 .. 2017-02-28T23:00, civil time taken as UTC.
    assert_eq!(summary.time_range, Some((1_362_096_000, 1_488_322_800)));
}

/// nycflights13 weather: 26,115 rows; pressure is the measure most often missing.
#[test]
fn nycflights13_loads_with_expected_counts() {
    let columns = ["temp", "dewp", "pressure", "precip", "wind_speed"];
    let file = "weather_nycflights13.tar.zst:weather.csv";
    check_preset(file, "nycflights13", &columns, 26_115, 23_383, &[1, 1, 2_729, 0, 4]);
}

/// vega: Seattle daily (1,461 rows, 4 measures) and the two hourly files (8,759 rows).
#[test]
fn vega_files_load_with_expected_counts() {
    let daily = ["precipitation", "temp_max", "temp_min", "wind"];
    check_preset("weather_vega.tar.zst:seattle-weather.csv", "vega-seattle", &daily, 1_461, 1_461, &[0; 4]);
    let hourly = "weather_vega.tar.zst:seattle-temps.csv";
    check_preset(hourly, "vega-seattle-hourly", &["temp"], 8_759, 8_759, &[0]);
    check_preset("weather_vega.tar.zst:sf-temps.csv", "vega-sf-hourly", &["temp"], 8_759, 8_759, &[0]);
}

/// The calibration constants are what `fit.rs` gets from the Beijing file today.
/// With QUIRE_PRINT_CALIBRATION=1 it prints the constants block for calibration.rs.
#[test]
fn calibration_constants_match_a_fresh_fit() {
    use quiredb_datasets::meteo::{ObservationReader, calibration::Calibration, fit::fit};
    let Some(bytes) = real_file("beijing_multisite_all_stations.csv.zst") else {
        return;
    };
    let schema = Schema::preset("beijing").expect("preset");
    let mut reader = ObservationReader::new(bytes.as_slice(), &schema).expect("opens");
    let fitted = fit(&mut reader).expect("fit");
    if std::env::var_os("QUIRE_PRINT_CALIBRATION").is_some() {
        println!("{}", fitted.to_rust_source());
    }
    let recorded = Calibration::beijing();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-5 * (1.0 + b.abs());
    assert_eq!(fitted.stations.len(), recorded.stations.len());
    for (f, r) in fitted.stations.iter().zip(&recorded.stations) {
        assert_eq!(f.name, r.name);
        let pairs = f.coefficients.iter().flatten().zip(r.coefficients.iter().flatten());
        assert!(pairs.clone().all(|(a, b)| close(*a, *b)), "station {}: refit differs", f.name);
    }
    let flat = |c: &Calibration| -> Vec<f64> {
        let rain = c.rain.iter().flat_map(|m| [m.wet_after_dry, m.wet_after_wet, m.mean_wet_mm]);
        c.ar_phi
            .iter()
            .chain(c.innovation_cholesky.iter().flatten())
            .chain(&c.missing_rate)
            .copied()
            .chain(rain)
            .collect()
    };
    let (a, b) = (flat(&fitted), flat(&recorded));
    assert!(a.iter().zip(&b).all(|(x, y)| close(*x, *y)), "fitted {a:?}\nrecorded {b:?}");
}
