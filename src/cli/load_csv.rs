//! The meteorological commands: `quire load-csv` (parse, validate and load a CSV file
//! with a progress bar and a summary) and `quire gen meteo` (the calibrated generator).
//!
//! `load-csv` builds a [`Schema`] from `--preset` and/or the mapping flags, streams the
//! file (`.zst` files are decompressed on the fly) through
//! [`quiredb_datasets::meteo::load`] into an [`ObservationSink`], and prints a
//! [`LoadSummary`]. With `--db` the sink is [`IndexSink`] (queue of raw records, B+tree
//! (station, time), R*-tree over 1 to 8 measures; one transaction, or one per `--batch` rows); with
//! `--dry-run` a [`NullSink`] (parse and validate only).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use quiredb_datasets::meteo::generator::{self, GeneratorConfig};
use quiredb_datasets::meteo::store::{BTREE_NAME, IndexSink, QUEUE_NAME, RTREE_NAME, SinkStats};
use quiredb_datasets::meteo::{
    LoadOptions, LoadSummary, NullSink, ObservationReader, ParallelConfig, load, load_parallel,
};
use quiredb_engine::{Database, Durability};

use super::load_io::{Inputs, LazyFile, open_inputs};
use super::load_schema::MappingArgs;
use super::load_speed::{Baseline, csv_parse_only};

/// Arguments of `quire load-csv`.
#[derive(clap::Args)]
pub struct LoadArgs {
    /// CSV files or folders to load as one (`.gz` and `.zst` are decompressed on the
    /// fly; a folder gives its .csv/.txt/.dat/.tsv/.asc/.dly files, spreadsheets, and
    /// .gz/.zst files with no other extension as ISD-Lite's, in name order; a `.zip`
    /// archive its data files, or the members --member names, in name order); Excel and
    /// OpenDocument spreadsheets (.xlsx/.xlsm/.xlsb/.xls/.ods: the first worksheet) and,
    /// with the `parquet` feature, `.parquet` files are read as the CSV of their rows;
    /// GHCN's fixed-width files (GHCN-Daily `.dly`, GHCN-Monthly v4, known by their
    /// first line) as the CSV of GHCN-Daily's by-year files; NOAA's Global Hourly CSV
    /// (known by its header) with its packed WND, CIG, VIS, TMP, DEW and SLP fields as
    /// the numbers WND_DIR, WND_SPEED, CIG, VIS, TMP, DEW, SLP (°, m/s, m, °C, hPa).
    #[arg(required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// Database file to load into.
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// How the columns map to observations.
    #[command(flatten)]
    pub mapping: Box<MappingArgs>,
    /// Print the detected layout of the first file and the command line that loads
    /// it; writes nothing.
    #[arg(long, conflicts_with_all = ["db", "dry_run", "parse_only"])]
    pub inspect: bool,
    /// The 1 to 8 measures that are the R*-tree's dimensions, in order (names, or
    /// numbers from 0 among the measures); default: the first eight measures at most.
    /// "none": no R*-tree (a faster load; window and knn then refuse, range, agg and
    /// stats work). A load into an existing database must choose as many as its first
    /// load (or none again).
    #[arg(long, value_name = "M1,…")]
    pub index_measures: Option<String>,
    /// Skip malformed rows (listed in the skip report) instead of stopping.
    #[arg(long)]
    pub skip_bad: bool,
    /// Where skipped rows are listed (default: DB.skipped.csv, or FILE-NAME.skipped.csv
    /// in the current directory); created only when a row is skipped.
    #[arg(long)]
    pub skip_report: Option<PathBuf>,
    /// Commit every N rows instead of one transaction for the whole load.
    #[arg(long)]
    pub batch: Option<u64>,
    /// Parse and validate only; write no database.
    #[arg(long)]
    pub dry_run: bool,
    /// Buffer pool size in MiB.
    #[arg(long, default_value_t = 256)]
    pub cache_mib: usize,
    /// Build the indexes on the parsing thread (no second thread), the R*-tree's points
    /// held in memory for its bulk load up to --bulk-points.
    #[arg(long)]
    pub single_thread: bool,
    /// With --single-thread: points held in memory for the R*-tree's bulk load (48
    /// bytes each); past that, points are inserted one by one. 0 = always insert.
    #[arg(long, default_value_t = quiredb_datasets::meteo::store::BULK_POINTS_LIMIT)]
    pub bulk_points: usize,
    /// MiB of the R*-tree's streaming bulk-load sort (beyond, sorted runs spill to
    /// temporary files).
    #[arg(long, default_value_t = quiredb_datasets::meteo::parallel::DEFAULT_RTREE_BUDGET >> 20)]
    pub rtree_budget_mib: usize,
    /// Directory of the R*-tree bulk load's temporary files (default: the database's).
    #[arg(long)]
    pub tmp_dir: Option<PathBuf>,
    /// Durability of the commit(s).
    #[arg(long, value_enum, default_value = "checksummed")]
    pub durability: DurabilityArg,
    /// Only split the file into records with the `csv` crate and report the speed (the
    /// baseline the full load is measured against); no decoding, no database.
    #[arg(long, conflicts_with_all = ["dry_run", "db"])]
    pub parse_only: bool,
    /// With --parse-only: also deserialize each row into a typed default-schema row
    /// (with --wide: station text and a float per other column; with
    /// --variable-column: three texts and a float) with serde (the `csv` crate's usual
    /// typed parse).
    #[arg(long, requires = "parse_only")]
    pub typed: bool,
    /// Before the load, parse the same file with the `csv` crate into typed rows (the
    /// speed baseline) and print both with their speed ratio.
    #[arg(long, conflicts_with = "parse_only")]
    pub baseline: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Runs `quire load-csv`.
pub fn load_csv(args: LoadArgs) -> Result<ExitCode> {
    if args.parse_only {
        return parse_only(&args);
    }
    let schema = args.mapping.schema()?;
    if args.inspect {
        let mapping = super::inspect::with_data_member(&args.files[0], &args.mapping)?;
        let first =
            open_inputs(&args.files, mapping.sheet.as_deref(), mapping.member.as_deref())?.files.swap_remove(0).1;
        return super::inspect::run(&args.files[0], first, &schema, &mapping);
    }
    let baseline = match args.baseline {
        true => Some(super::load_speed::baseline(open_first(&args)?, baseline_delimiter(&args)?, typed(&args))?.2),
        false => None,
    };
    let watch = super::load_speed::Stopwatch::start();
    let Inputs { files: inputs, read_bytes, total_bytes } =
        open_inputs(&args.files, schema.sheet.as_deref(), schema.member.as_deref())?;
    let mut reader = ObservationReader::from_files(inputs, &schema)
        .with_context(|| format!("cannot read {}", files_label(&args)))?;
    if let Some(list) = &args.index_measures {
        let names: Vec<String> = list.split(',').map(|name| name.trim().to_owned()).collect();
        reader.set_index_measures(&names)?;
    }
    let database = open_database(&args)?;
    let report_path = skip_report_path(&args);
    let started = Instant::now();
    let progress = Progress { bar: progress_bar(total_bytes, args.quiet), read_bytes, started };
    let (summary, stats) = load_into(&args, database.as_ref(), &mut reader, &progress, &report_path)?;
    print_summary(&args, &summary, started.elapsed().as_secs_f64(), &report_path)?;
    if let Some(stats) = stats {
        print_sink_stats(&stats)?;
    }
    if let Some(db) = database {
        let engine = db.stats();
        drop(db);
        outln!(
            "engine:        {} page writes, {} page reads, {} spills, {} written behind, file {} bytes",
            engine.writes,
            engine.reads,
            engine.spills,
            engine.written_behind,
            args.db.as_ref().and_then(|path| std::fs::metadata(path).ok()).map_or(0, |m| m.len())
        )?;
    }
    if let Some(parse) = baseline {
        super::load_speed::print_comparison(summary.rows, parse, watch.span())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Loads `reader` into `database` (one thread with `--single-thread`, else the parallel
/// pipeline), or with no database checks the rows only; with the sink's statistics.
fn load_into(
    args: &LoadArgs,
    database: Option<&Database>,
    reader: &mut ObservationReader<Box<dyn Read>>,
    progress: &Progress,
    report_path: &Path,
) -> Result<(LoadSummary, Option<SinkStats>)> {
    let durability = args.durability.into();
    Ok(match database {
        Some(db) if args.single_thread => {
            let mut sink = IndexSink::new(db, durability, reader.measure_names())?
                .with_bulk_limit(args.bulk_points)
                .with_record_layout(reader.record_layout());
            let summary = run_load(args, reader, progress, report_path, |reader, options, update| {
                load(reader, &mut sink, options, update)
            })?;
            (summary, Some(sink.stats()))
        }
        Some(db) => {
            let config = ParallelConfig {
                durability,
                measure_names: reader.measure_names(),
                tmp_dir: tmp_dir(args),
                rtree_budget: args.rtree_budget_mib << 20,
                cpu_clock: super::load_clock::proc_clock(),
                record_layout: Some(reader.record_layout()),
            };
            let mut stats = None;
            let summary = run_load(args, reader, progress, report_path, |reader, options, update| {
                let (summary, written) = super::load_io::releasing_page_cache(args.db.as_deref(), || {
                    load_parallel(db, &config, reader, options, update)
                })?;
                stats = Some(written);
                Ok(summary)
            })?;
            (summary, stats)
        }
        None => {
            let summary = run_load(args, reader, progress, report_path, |reader, options, update| {
                load(reader, &mut NullSink::default(), options, update)
            })?;
            (summary, None)
        }
    })
}

/// What the load wrote into the database's structures, and where its threads' time went.
fn print_sink_stats(stats: &SinkStats) -> Result<()> {
    outln!(
        "database:      {} records in {QUEUE_NAME}, {} keys in {BTREE_NAME} ({} replaced), \
         {} points in {RTREE_NAME}, {} commit(s); after the last row: R-tree bulk build {:.2} s, commit {:.2} s",
        stats.records,
        stats.records - stats.replaced_keys,
        stats.replaced_keys,
        stats.points,
        stats.commits,
        stats.finish_time.as_secs_f64(),
        stats.commit_time.as_secs_f64()
    )?;
    if stats.times != Default::default() {
        outln!("threads:       {}", super::load_clock::describe(&stats.times))?;
    }
    Ok(())
}

/// The progress display of a load.
struct Progress {
    bar: ProgressBar,
    read_bytes: Arc<AtomicU64>,
    started: Instant,
}

/// The directory of the R*-tree bulk load's temporary files.
fn tmp_dir(args: &LoadArgs) -> PathBuf {
    let beside_db = args.db.as_ref().and_then(|db| db.parent()).filter(|dir| !dir.as_os_str().is_empty());
    args.tmp_dir.clone().or_else(|| beside_db.map(Path::to_path_buf)).unwrap_or_else(|| PathBuf::from("."))
}

fn run_load<'a, R: Read>(
    args: &LoadArgs,
    reader: &mut ObservationReader<R>,
    progress: &Progress,
    report_path: &Path,
    loader: impl FnOnce(
        &mut ObservationReader<R>,
        LoadOptions,
        &mut dyn FnMut(u64, u64),
    ) -> quiredb_datasets::Result<LoadSummary>
    + 'a,
) -> Result<LoadSummary> {
    let options = LoadOptions {
        skip_bad: args.skip_bad,
        batch_rows: args.batch,
        skip_report: Some(Box::new(LazyFile::new(report_path.to_path_buf()))),
    };
    let mut update = |rows: u64, _: u64| {
        progress.bar.set_position(progress.read_bytes.load(Ordering::Relaxed));
        let rate = rows as f64 / progress.started.elapsed().as_secs_f64().max(1e-9);
        progress.bar.set_message(format!("{rows} rows, {rate:.0} rows/s"));
    };
    let result = loader(reader, options, &mut update);
    progress.bar.finish_and_clear();
    let stopped = || {
        let unchanged = match (args.dry_run, args.batch) {
            (true, _) => "dry run",
            (false, Some(_)) => "batches committed before the error stay",
            (false, None) => "the database is unchanged",
        };
        format!("load of {} stopped; {unchanged}", files_label(args))
    };
    result.with_context(stopped)
}

/// The database to load into: `None` for `--dry-run`; opened, or created when absent.
fn open_database(args: &LoadArgs) -> Result<Option<Database>> {
    if args.dry_run {
        return Ok(None);
    }
    let Some(path) = &args.db else {
        bail!("give --db DB to load into a database, or --dry-run to validate only");
    };
    let options = Database::builder().cache_bytes(args.cache_mib << 20).into_options();
    let database = if path.exists() { Database::open(path, options) } else { Database::create(path, options) };
    Ok(Some(database.with_context(|| format!("cannot open {}", path.display()))?))
}

/// Durability of the load's commits (see the engine's `Durability`).
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum DurabilityArg {
    /// Data, sync, meta, sync.
    Full,
    /// Data and meta, one sync; the meta is verified on open.
    Checksummed,
    /// No sync.
    None,
}

impl From<DurabilityArg> for Durability {
    fn from(value: DurabilityArg) -> Self {
        match value {
            DurabilityArg::Full => Durability::Full,
            DurabilityArg::Checksummed => Durability::Checksummed,
            DurabilityArg::None => Durability::None,
        }
    }
}

/// `--parse-only`: the `csv` crate alone over the (decompressed) input.
fn parse_only(args: &LoadArgs) -> Result<ExitCode> {
    let input = open_first(args)?;
    let delimiter = baseline_delimiter(args)?;
    let baseline = if args.typed { typed(args) } else { Baseline::Split };
    let started = Instant::now();
    let (records, bytes) = csv_parse_only(input, delimiter, baseline)?;
    let seconds = started.elapsed().as_secs_f64().max(1e-9);
    outln!(
        "{}: csv crate only ({baseline:?}): {records} records, {bytes} bytes in {seconds:.2} s: \
         {:.0} records/s, {:.1} MB/s",
        args.files[0].display(),
        records as f64 / seconds,
        bytes as f64 / 1e6 / seconds
    )?;
    Ok(ExitCode::SUCCESS)
}

/// The typed baseline parse: of wide rows with `--wide`, of variable-column rows with
/// `--variable-column`, else of default-schema rows.
fn typed(args: &LoadArgs) -> Baseline {
    match (&args.mapping.wide, &args.mapping.variable_column) {
        (Some(_), _) => Baseline::TypedWide,
        (None, Some(_)) => Baseline::TypedVariable,
        (None, None) => Baseline::Typed,
    }
}

/// The delimiter of the baseline parses: `--delimiter`, else `,`.
fn baseline_delimiter(args: &LoadArgs) -> Result<u8> {
    match args.mapping.delimiter.as_deref().map(str::as_bytes) {
        None => Ok(b','),
        Some([byte]) if byte.is_ascii() => Ok(*byte),
        Some(_) => bail!("the baseline parses take a one-byte ASCII --delimiter"),
    }
}

/// The first input alone (for the baseline parses and --inspect).
fn open_first(args: &LoadArgs) -> Result<Box<dyn Read>> {
    Ok(open_inputs(&args.files, args.mapping.sheet.as_deref(), args.mapping.member.as_deref())?.files.swap_remove(0).1)
}

/// The inputs as named in messages.
fn files_label(args: &LoadArgs) -> String {
    let names: Vec<String> = args.files.iter().map(|path| path.display().to_string()).collect();
    names.join(", ")
}

fn skip_report_path(args: &LoadArgs) -> PathBuf {
    if let Some(path) = &args.skip_report {
        return path.clone();
    }
    match &args.db {
        Some(db) if !args.dry_run => PathBuf::from(format!("{}.skipped.csv", db.display())),
        _ => {
            let name = args.files[0].file_name().map_or("input".into(), |n| n.to_string_lossy().into_owned());
            PathBuf::from(format!("{name}.skipped.csv"))
        }
    }
}

fn progress_bar(total_bytes: u64, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total_bytes), ProgressDrawTarget::stderr());
    let template = "[{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} {binary_bytes_per_sec} ETA {eta} {msg}";
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    bar
}

fn print_summary(args: &LoadArgs, summary: &LoadSummary, seconds: f64, report: &Path) -> std::io::Result<()> {
    let target = if args.dry_run {
        "validated only (--dry-run), no database written".to_owned()
    } else {
        match args.batch {
            Some(rows) => format!("committed every {rows} rows ({} batches + the rest)", summary.batches),
            None => "one transaction".to_owned(),
        }
    };
    outln!("{}: {target}", files_label(args))?;
    out!("{summary}")?;
    let rows = summary.rows + summary.skipped_rows;
    outln!(
        "time:          {seconds:.2} s, {:.0} rows/s, {:.1} MB/s of CSV",
        rows as f64 / seconds.max(1e-9),
        summary.bytes as f64 / 1e6 / seconds.max(1e-9)
    )?;
    if summary.skipped_rows > 0 {
        outln!("skip report:   {}", report.display())?;
    }
    Ok(())
}

/// Arguments of `quire gen meteo`.
#[derive(clap::Args)]
pub struct GenMeteoArgs {
    /// Number of rows (the paper's full set: 57852305).
    #[arg(long)]
    pub rows: u64,
    /// Seed of the generator (same seed, same bytes).
    #[arg(long, default_value_t = generator::DEFAULT_SEED)]
    pub seed: u64,
    /// Number of stations (default: one per 35,064 rows, i.e. four years of hours each).
    #[arg(long)]
    pub stations: Option<u64>,
    /// Every measure present (no missing values).
    #[arg(long)]
    pub no_missing: bool,
    /// Output file (default: standard output).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Runs `quire gen meteo`; prints rows, bytes and MB/s on stderr.
pub fn gen_meteo(args: GenMeteoArgs) -> Result<ExitCode> {
    let config = GeneratorConfig {
        seed: args.seed,
        stations: args.stations,
        with_missing: !args.no_missing,
        ..GeneratorConfig::new(args.rows)
    };
    let started = Instant::now();
    let (rows, bytes) = match &args.out {
        Some(path) => {
            let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
            generator::write_csv(&config, file, &mut |_, _| {})?
        }
        None => generator::write_csv(&config, std::io::stdout().lock(), &mut |_, _| {})?,
    };
    let seconds = started.elapsed().as_secs_f64().max(1e-9);
    eprintln!(
        "generated {rows} rows, {bytes} bytes, {} stations, seed {} in {seconds:.2} s ({:.1} MB/s)",
        config.station_count(),
        config.seed,
        bytes as f64 / 1e6 / seconds
    );
    Ok(ExitCode::SUCCESS)
}
