//! `quire load-csv --baseline`: the load-speed goal measured in one run. Before the
//! load, the same file is parsed by the `csv` crate into typed default-schema rows
//! (serde, [`Baseline::Typed`], or [`Baseline::TypedWide`] for `--wide`,
//! [`Baseline::TypedVariable`] for `--variable-column`: what `--parse-only --typed` does); after it, both are
//! printed with wall and CPU time and the ratio of the load's speed to the parse's.
//!
//! The baselines themselves ([`csv_parse_only`]) live here, with the measurement, not
//! in the datasets library.
//!
//! CPU time is the whole process's user + system time from `/proc/self/stat`, in clock
//! ticks of 1/100 s (Linux's `USER_HZ`); on systems without it only wall time is shown.

use std::io::Read;
use std::time::Instant;

/// Wall and CPU seconds of one phase.
#[derive(Clone, Copy, Debug)]
pub struct Span {
    /// Wall-clock seconds.
    pub wall: f64,
    /// Process CPU seconds (user + system), when known.
    pub cpu: Option<f64>,
}

/// A running measurement.
pub struct Stopwatch {
    wall: Instant,
    cpu: Option<f64>,
}

impl Stopwatch {
    /// Starts now.
    pub fn start() -> Self {
        Stopwatch { wall: Instant::now(), cpu: process_cpu_seconds() }
    }

    /// Time since the start.
    pub fn span(&self) -> Span {
        let cpu = self.cpu.zip(process_cpu_seconds()).map(|(start, now)| now - start);
        Span { wall: self.wall.elapsed().as_secs_f64(), cpu }
    }
}

/// User + system CPU seconds of this process so far.
fn process_cpu_seconds() -> Option<f64> {
    super::load_clock::process_cpu().map(|cpu| cpu.as_secs_f64())
}

/// The baseline parse of `input`: (records, bytes, time).
pub fn baseline(input: impl std::io::Read, delimiter: u8, kind: Baseline) -> anyhow::Result<(u64, u64, Span)> {
    let watch = Stopwatch::start();
    let (records, bytes) = csv_parse_only(input, delimiter, kind)?;
    Ok((records, bytes, watch.span()))
}

/// Prints the baseline, the load and their speed ratio (load rows/s over parse rows/s
/// of the same rows, i.e. parse time over load time).
pub fn print_comparison(rows: u64, parse: Span, load: Span) -> std::io::Result<()> {
    let line = |name: &str, span: Span| {
        let cpu = span.cpu.map_or_else(|| "?".to_owned(), |cpu| format!("{cpu:.2}"));
        let rate = rows as f64 / span.wall.max(1e-9);
        outln!("{name} {:.2} s wall, {cpu} s CPU, {rate:.0} rows/s", span.wall)
    };
    line("baseline:      csv crate, typed rows:", parse)?;
    line("load:         ", load)?;
    let cpu_ratio = parse
        .cpu
        .zip(load.cpu)
        .map_or_else(|| "?".to_owned(), |(parse, load)| format!("{:.3}", parse / load.max(1e-9)));
    outln!("speed ratio:   {:.3} (wall), {cpu_ratio} (CPU); the goal is >= 0.5", parse.wall / load.wall.max(1e-9))
}

/// How much of a parse [`csv_parse_only`] does: the baselines of the load-speed goal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Baseline {
    /// The `csv` crate splitting records into fields (`read_byte_record`), nothing else.
    Split,
    /// The `csv` crate with serde into a typed row of the default schema (station and
    /// time as text, five `Option<f64>` with unparsable values as `None`) — what
    /// "parsing with the csv crate" usually means.
    Typed,
    /// The same for a wide table: the first field as text, every other one an
    /// `Option<f64>` (serde into `(&str, Vec<Option<f64>>)`).
    TypedWide,
    /// The same for a variable-column table (`station,time,element,value`): three
    /// texts and an `Option<f64>`.
    TypedVariable,
}

/// A wide row as serde sees it, for [`Baseline::TypedWide`] (its fields are only
/// parsed, never read).
#[derive(serde::Deserialize)]
#[allow(dead_code)]
struct WideRow<'a>(#[serde(borrow)] &'a str, Vec<Option<f64>>);

/// A variable-column row as serde sees it, for [`Baseline::TypedVariable`].
#[derive(serde::Deserialize)]
struct VariableRow<'a> {
    #[serde(borrow)]
    _station: &'a str,
    #[serde(borrow)]
    _time: &'a str,
    #[serde(borrow)]
    _element: &'a str,
    #[serde(deserialize_with = "csv::invalid_option")]
    _value: Option<f64>,
}

/// A default-schema row as serde sees it, for [`Baseline::Typed`].
#[derive(serde::Deserialize)]
struct TypedRow<'a> {
    #[serde(borrow)]
    _station: &'a str,
    #[serde(borrow)]
    _time: &'a str,
    #[serde(deserialize_with = "csv::invalid_option")]
    _temp: Option<f64>,
    #[serde(deserialize_with = "csv::invalid_option")]
    _pres: Option<f64>,
    #[serde(deserialize_with = "csv::invalid_option")]
    _dewp: Option<f64>,
    #[serde(deserialize_with = "csv::invalid_option")]
    _rain: Option<f64>,
    #[serde(deserialize_with = "csv::invalid_option")]
    _wspm: Option<f64>,
}

/// Runs a [`Baseline`] parse over `input` (header included). Returns (records, bytes).
pub fn csv_parse_only<R: Read>(input: R, delimiter: u8, baseline: Baseline) -> anyhow::Result<(u64, u64)> {
    let mut reader =
        csv::ReaderBuilder::new().delimiter(delimiter).has_headers(false).flexible(true).from_reader(input);
    let mut record = csv::ByteRecord::new();
    let mut records = 0u64;
    let to_error = |error: csv::Error| anyhow::Error::new(error);
    while reader.read_byte_record(&mut record).map_err(to_error)? {
        records += 1;
        match baseline {
            _ if records == 1 => {}
            Baseline::Split => {}
            Baseline::Typed => {
                let row: Option<TypedRow> = record.deserialize(None).ok();
                std::hint::black_box(row);
            }
            Baseline::TypedWide => {
                let row: Option<WideRow> = record.deserialize(None).ok();
                std::hint::black_box(row);
            }
            Baseline::TypedVariable => {
                let row: Option<VariableRow> = record.deserialize(None).ok();
                std::hint::black_box(row);
            }
        }
    }
    Ok((records, reader.position().byte()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use quiredb_datasets::meteo::generator::{GeneratorConfig, write_csv};

    fn generate(config: &GeneratorConfig) -> Vec<u8> {
        let mut bytes = Vec::new();
        write_csv(config, &mut bytes, &mut |_, _| {}).expect("writes to memory");
        bytes
    }

    /// Both csv-crate baselines see every generated record (header included) and every byte.
    #[test]
    fn csv_baselines_count_every_record() {
        let bytes = generate(&GeneratorConfig { seed: 2, ..GeneratorConfig::new(1_000) });
        for baseline in [Baseline::Split, Baseline::Typed] {
            let (records, read) = csv_parse_only(bytes.as_slice(), b',', baseline).expect("parses");
            assert_eq!((records, read), (1_001, bytes.len() as u64), "{baseline:?}");
        }
    }
}
