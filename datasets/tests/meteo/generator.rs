//! The generator: deterministic for a seed, its CSV loads with the default schema into
//! exactly the generated observations, and its statistics resemble the Beijing data
//! (means, spreads, correlations, dry hours measured on the real file with awk).

use quiredb_datasets::meteo::generator::{GeneratorConfig, ObservationGenerator, write_csv};
use quiredb_datasets::meteo::{Observation, ObservationReader, ReadOutcome, Schema};

fn generate(config: &GeneratorConfig) -> Vec<u8> {
    let mut bytes = Vec::new();
    write_csv(config, &mut bytes, &mut |_, _| {}).expect("writes to memory");
    bytes
}

/// The same seed gives the same bytes; another seed different bytes.
#[test]
fn same_seed_same_bytes() {
    let config = GeneratorConfig { seed: 7, stations: Some(14), ..GeneratorConfig::new(20_000) };
    let first = generate(&config);
    assert_eq!(first, generate(&config));
    assert_ne!(first, generate(&GeneratorConfig { seed: 8, ..config.clone() }));
    assert!(first.starts_with(b"station,time,temp,pres,dewp,rain,wspm\nS00001,2013-03-01T00:00,"));
}

/// Generated CSV loads with no mapping (the default schema) into exactly the
/// observations the generator yields, missing values included.
#[test]
fn output_loads_with_default_schema_exactly() {
    let config = GeneratorConfig {
        seed: quiredb_test_support::random_seed(),
        stations: Some(13),
        ..GeneratorConfig::new(30_000)
    };
    let bytes = generate(&config);
    let mut reader = ObservationReader::new(bytes.as_slice(), &Schema::default()).expect("opens");
    let mut generator = ObservationGenerator::new(config).expect("valid config");
    let (mut loaded, mut expected) = (Observation::default(), Observation::default());
    let mut rows = 0;
    loop {
        match reader.read(&mut loaded).expect("reads") {
            ReadOutcome::End => break,
            ReadOutcome::Bad(error) => panic!("generated row rejected: {error}"),
            ReadOutcome::Row => {}
        }
        assert!(generator.next_into(&mut expected), "more rows loaded than generated");
        assert_eq!(loaded, expected, "row {rows}");
        rows += 1;
    }
    assert!(!generator.next_into(&mut expected), "fewer rows loaded than generated");
    assert_eq!(rows, 30_000);
}

/// One year of 12 stations resembles Beijing: TEMP mean 13.5 °C (sd 11.4), PRES mean
/// 1010.8 hPa, DEWP mean 2.5 °C, corr(TEMP, DEWP) 0.82, corr(TEMP, PRES) −0.81, 96.1 %
/// dry hours, DEWP ≤ TEMP, WSPM ≥ 0.
#[test]
fn statistics_resemble_beijing() {
    let config = GeneratorConfig { seed: 3, stations: Some(12), ..GeneratorConfig::new(12 * 8_766) };
    let rows: Vec<[f64; 5]> =
        ObservationGenerator::new(config).expect("config").filter_map(|o| o.point::<5>()).collect();
    let n = rows.len() as f64;
    let means: [f64; 5] = std::array::from_fn(|i| rows.iter().map(|r| r[i]).sum::<f64>() / n);
    let mean = |i: usize| means[i];
    let cov = |i: usize, j: usize| rows.iter().map(|r| (r[i] - means[i]) * (r[j] - means[j])).sum::<f64>() / n;
    let sd = |i: usize| cov(i, i).sqrt();
    let corr = |i: usize, j: usize| cov(i, j) / sd(i) / sd(j);
    let dry = rows.iter().filter(|r| r[3] == 0.0).count() as f64 / n;
    let report = format!(
        "temp {:.2}±{:.2} pres {:.2} dewp {:.2} corrTD {:.3} corrTP {:.3} dry {:.4}",
        mean(0),
        sd(0),
        mean(1),
        mean(2),
        corr(0, 2),
        corr(0, 1),
        dry
    );
    println!("{report}");
    assert!((mean(0) - 13.5).abs() < 1.5 && (sd(0) - 11.4).abs() < 1.5, "{report}");
    assert!((mean(1) - 1010.8).abs() < 2.0 && (mean(2) - 2.5).abs() < 2.0, "{report}");
    assert!(corr(0, 2) > 0.7 && corr(0, 1) < -0.7, "{report}");
    assert!((0.93..0.99).contains(&dry), "{report}");
    assert!(rows.iter().all(|r| r[2] <= r[0] && r[4] >= 0.0 && r[3] >= 0.0));
}
