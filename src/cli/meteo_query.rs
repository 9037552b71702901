//! The meteorological queries: `quire range` (one station, a time interval, via the
//! B+tree), `quire window` (a box over the indexed measures, 1 to 8 of them, via the
//! R*-tree), `quire knn` (nearest records to a point of the indexed measures) and `quire stats` (sizes of the
//! layout). Answers go to stdout in `--format` (`meteo_output.rs`); counts and timings
//! to stderr. Aggregates are `meteo_agg.rs`.
//! The layout is documented in `datasets/src/meteo/store.rs`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use quiredb_datasets::meteo::aggregate::{stored_layout, stored_measure_names};
use quiredb_datasets::meteo::fields::parse_timestamp;
use quiredb_datasets::meteo::query::{Found, MeteoView};
use quiredb_engine::{Database, Options, PageRead};

use super::meteo_output::{OutputArgs, RecordMeaning, write_records};

/// Arguments of `quire range`.
#[derive(clap::Args)]
pub struct RangeArgs {
    /// Database file.
    pub db: PathBuf,
    /// Station name.
    #[arg(long)]
    pub station: String,
    /// First time (e.g. 2013-03-01T00:00, a year such as 2013, or epoch seconds), inclusive.
    #[arg(long)]
    pub from: String,
    /// Last time, inclusive (a year: through its last second).
    #[arg(long)]
    pub to: String,
    /// Output format and limit.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Arguments of `quire window`.
#[derive(clap::Args)]
pub struct WindowArgs {
    /// Database file.
    pub db: PathBuf,
    /// Lower corner: comma-separated values, one for each of the R*-tree's dimensions,
    /// in their order (the load's --index-measures, or its first eight measures at most;
    /// see `quire stats`).
    #[arg(long, allow_hyphen_values = true)]
    pub min: String,
    /// Upper corner: as many comma-separated values.
    #[arg(long, allow_hyphen_values = true)]
    pub max: String,
    /// Output format and limit.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Arguments of `quire knn`.
#[derive(clap::Args)]
pub struct KnnArgs {
    /// Database file.
    pub db: PathBuf,
    /// Query point: one comma-separated value for each of the R*-tree's dimensions.
    #[arg(long, allow_hyphen_values = true)]
    pub point: String,
    /// Number of neighbours.
    #[arg(short, default_value_t = 10)]
    pub k: usize,
    /// Output format and limit.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Arguments of `quire stats`.
#[derive(clap::Args)]
pub struct StatsArgs {
    /// Database file.
    pub db: PathBuf,
}

/// Queries only read: the file is opened read-only and never changed.
pub(super) fn open(path: &Path) -> Result<Database> {
    if !path.exists() {
        bail!("{} does not exist", path.display());
    }
    Database::open_read_only(path, Options::default()).with_context(|| format!("cannot open {}", path.display()))
}

/// Comma-separated numbers (a point's count is checked against the R*-tree's
/// dimensions by the query).
fn point(text: &str) -> Result<Vec<f64>> {
    text.split(',')
        .map(|value| value.trim().parse::<f64>().with_context(|| format!("{value:?} is not a number")))
        .collect()
}

pub(super) fn time(text: &str) -> Result<i64> {
    parse_timestamp(text.as_bytes()).map_err(|reason| anyhow::anyhow!("{text:?}: {reason}"))
}

/// A bound of `--from` (`end` false) or `--to`: a bare year (`2014`: four digits, which
/// as epoch seconds would be 1970's first hour) is its first second, or for `--to` its
/// last; anything else as [`time`] reads it.
fn bound(text: &str, end: bool) -> Result<i64> {
    if text.len() != 4 || !text.bytes().all(|byte| byte.is_ascii_digit()) {
        return time(text);
    }
    let year: i64 = text.parse()?;
    Ok(if end { time(&format!("{}-01-01T00:00", year + 1))? - 1 } else { time(&format!("{year}-01-01T00:00"))? })
}

/// The times of `--from` and `--to` (each absent one open), refused when the first
/// lies after the last: such an interval holds nothing, and a silent empty answer
/// would read as "no data then".
pub(super) fn interval(from: Option<&str>, to: Option<&str>) -> Result<(i64, i64)> {
    let first = from.map(|text| bound(text, false)).transpose()?.unwrap_or(i64::MIN);
    let last = to.map(|text| bound(text, true)).transpose()?.unwrap_or(i64::MAX);
    if let (Some(from), Some(to), true) = (from, to, first > last) {
        bail!("--from {from} is after --to {to}: no time lies between them");
    }
    Ok((first, last))
}

/// The measure each dimension of the R*-tree stands for (the load's
/// `--index-measures`, else the first `dimensions` measures).
fn dimension_names(txn: &impl PageRead, dimensions: usize) -> Result<Vec<String>> {
    let names = stored_measure_names(txn)?;
    let chosen =
        stored_layout(txn)?.and_then(|layout| layout.index_measures).unwrap_or_else(|| (0..dimensions).collect());
    Ok(chosen.iter().filter_map(|&i| names.get(i).cloned()).collect())
}

fn print(txn: &impl PageRead, found: &[Found], output: OutputArgs, started: Instant) -> Result<ExitCode> {
    let layout = stored_layout(txn)?;
    let delimiter = layout.as_ref().map_or(b',', |layout| layout.delimiter);
    let meaning = RecordMeaning { layout, names: stored_measure_names(txn)?, delimiter };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    write_records(&mut out, found, output, &meaning)?;
    out.flush()?;
    let shown = found.len().min(output.limit.unwrap_or(usize::MAX));
    eprintln!("{shown} records in {:.3} ms", started.elapsed().as_secs_f64() * 1e3);
    Ok(ExitCode::SUCCESS)
}

/// Runs `quire range`.
pub fn range(args: RangeArgs) -> Result<ExitCode> {
    let (from, to) = interval(Some(&args.from), Some(&args.to))?;
    let db = open(&args.db)?;
    let txn = db.begin_read()?;
    let started = Instant::now();
    let limit = args.output.limit.unwrap_or(usize::MAX);
    let view = MeteoView::open(&txn)?;
    let found = view.range_first(&args.station, from, to, limit)?;
    let code = print(&txn, &found, args.output, started)?;
    if found.is_empty() && view.range_first(&args.station, i64::MIN, i64::MAX, 1)?.is_empty() {
        eprintln!(
            "note: the database holds no record of station {:?} at any time (names match exactly; \
             `quire agg DB --every year --measure M` lists the stations)",
            args.station
        );
    }
    Ok(code)
}

/// Runs `quire window`.
pub fn window(args: WindowArgs) -> Result<ExitCode> {
    let (min, max) = (point(&args.min)?, point(&args.max)?);
    let db = open(&args.db)?;
    let txn = db.begin_read()?;
    let started = Instant::now();
    let view = MeteoView::open(&txn)?;
    if let Some(d) = (0..min.len().min(max.len())).find(|&d| min[d].is_nan() || max[d].is_nan() || min[d] > max[d]) {
        let names = dimension_names(&txn, view.dimensions())?;
        let name = names.get(d).map_or(String::new(), |name| format!(" ({name})"));
        bail!(
            "--min {} is not at or below --max {} in dimension {}{name}: the window holds nothing",
            min[d],
            max[d],
            d + 1
        );
    }
    let found = view.window(&min, &max)?;
    print(&txn, &found, args.output, started)
}

/// Runs `quire knn`; each line starts with the distance and a tab.
pub fn knn(args: KnnArgs) -> Result<ExitCode> {
    let query = point(&args.point)?;
    let db = open(&args.db)?;
    let txn = db.begin_read()?;
    let started = Instant::now();
    let found = MeteoView::open(&txn)?.knn(&query, args.k)?;
    print(&txn, &found, args.output, started)
}

/// Runs `quire stats`.
pub fn stats(args: StatsArgs) -> Result<ExitCode> {
    let db = open(&args.db)?;
    let txn = db.begin_read()?;
    let stats = MeteoView::open(&txn)?.stats()?;
    outln!("records (queue):          {}", stats.records)?;
    outln!("keys (station, time):     {}", stats.keys)?;
    let dims = stats.dimensions;
    if dims == 0 {
        outln!("points:                   none (no R*-tree: loaded with --index-measures none)")?;
    } else {
        outln!("points ({dims}-D R*-tree):     {} (height {})", stats.points, stats.rtree_height)?;
    }
    outln!("measures:                 {}", stats.measure_names.join(", "))?;
    let names = dimension_names(&txn, dims)?;
    outln!("R*-tree dimensions:       {}", if dims == 0 { "none".to_owned() } else { names.join(", ") })?;
    let [queue, btree, rtree] = stats.pages;
    outln!("pages:                    queue {queue}, B+tree {btree}, R*-tree {rtree}")?;
    outln!("file:                     {} bytes", std::fs::metadata(&args.db)?.len())?;
    outln!("engine:                   {:?}", db.stats())?;
    Ok(ExitCode::SUCCESS)
}
