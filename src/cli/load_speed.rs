//! `quire load-csv --baseline`: the load-speed goal measured in one run. Before the
//! load, the same file is parsed by the `csv` crate into typed default-schema rows
//! (serde, [`Baseline::Typed`], or [`Baseline::TypedWide`] for `--wide`: what
//! `--parse-only --typed` does); after it, both are
//! printed with wall and CPU time and the ratio of the load's speed to the parse's.
//!
//! CPU time is the whole process's user + system time from `/proc/self/stat`, in clock
//! ticks of 1/100 s (Linux's `USER_HZ`); on systems without it only wall time is shown.

use std::time::Instant;

use quiredb_datasets::meteo::Baseline;

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
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces) start at state (field 3);
    // utime and stime are fields 14 and 15.
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i)?.parse::<u64>().ok();
    Some((ticks(11)? + ticks(12)?) as f64 / 100.0)
}

/// The baseline parse of `input`: (records, bytes, time).
pub fn baseline(input: impl std::io::Read, delimiter: u8, kind: Baseline) -> anyhow::Result<(u64, u64, Span)> {
    let watch = Stopwatch::start();
    let (records, bytes) = quiredb_datasets::meteo::csv_parse_only(input, delimiter, kind)?;
    Ok((records, bytes, watch.span()))
}

/// Prints the baseline, the load and their speed ratio (load rows/s over parse rows/s
/// of the same rows, i.e. parse time over load time).
pub fn print_comparison(rows: u64, parse: Span, load: Span) {
    let line = |name: &str, span: Span| {
        let cpu = span.cpu.map_or_else(|| "?".to_owned(), |cpu| format!("{cpu:.2}"));
        let rate = rows as f64 / span.wall.max(1e-9);
        println!("{name} {:.2} s wall, {cpu} s CPU, {rate:.0} rows/s", span.wall);
    };
    line("baseline:      csv crate, typed rows:", parse);
    line("load:         ", load);
    let cpu_ratio = parse
        .cpu
        .zip(load.cpu)
        .map_or_else(|| "?".to_owned(), |(parse, load)| format!("{:.3}", parse / load.max(1e-9)));
    println!("speed ratio:   {:.3} (wall), {cpu_ratio} (CPU); the goal is >= 0.5", parse.wall / load.wall.max(1e-9));
}
