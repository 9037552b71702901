//! `quire export DB --to DIR [--format parquet|arrow-ipc] [--partition-by
//! station|year|station,year]` (feature `parquet`): the meteorological records as
//! Hive-partitioned files (`DIR/station=X/year=2014/part-0.parquet`) that Spark, DuckDB,
//! Polars and DataFusion read directly.
//!
//! The records are streamed over the (station, time) B+tree in batches
//! ([`quiredb_datasets::meteo::arrow::scan_batches`], the columns of the Python
//! package's `range`), each batch cut into runs of one partition; a partition's file
//! stays open until its station is done (with `--partition-by year`, until the end).
//! The partition columns are in the paths, not in the files (Hive style); station names
//! are percent-encoded where they hold characters other than letters, digits, `-`, `_`
//! and `.`.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use arrow_array::RecordBatch;
use arrow_array::cast::AsArray;
use arrow_array::types::TimestampSecondType;
use arrow_schema::Schema;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use quiredb_datasets::meteo::arrow::scan_batches;
use quiredb_datasets::meteo::fields::civil_from_days;

/// Rows of a batch read from the database.
const BATCH_ROWS: usize = 64 * 1024;

/// Arguments of `quire export`.
#[derive(clap::Args)]
pub struct Args {
    /// Database file.
    pub db: PathBuf,
    /// Output directory (created; files already there are overwritten).
    #[arg(long)]
    pub to: PathBuf,
    /// File format.
    #[arg(long, value_enum, default_value = "parquet")]
    pub format: FileFormat,
    /// Hive partitioning: station, year, or station,year (default: one file).
    #[arg(long, value_name = "station|year|station,year")]
    pub partition_by: Option<String>,
    /// Only this station.
    #[arg(long)]
    pub station: Option<String>,
}

/// `--format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FileFormat {
    /// Apache Parquet (Snappy-compressed pages).
    Parquet,
    /// Arrow IPC file format (Feather v2).
    ArrowIpc,
}

/// Which columns partition the files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Partitioning {
    station: bool,
    year: bool,
}

impl Partitioning {
    fn parse(text: Option<&str>) -> Result<Self> {
        let mut partitioning = Partitioning::default();
        for part in text.into_iter().flat_map(|text| text.split(',')) {
            match part.trim() {
                "station" => partitioning.station = true,
                "year" => partitioning.year = true,
                other => bail!("--partition-by {other:?}: use station, year or station,year"),
            }
        }
        Ok(partitioning)
    }
}

/// One open output file.
enum Writer {
    Parquet(ArrowWriter<File>),
    Ipc(arrow_ipc::writer::FileWriter<File>),
}

impl Writer {
    fn create(path: &Path, schema: &Arc<Schema>, format: FileFormat) -> Result<Self> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
        Ok(match format {
            FileFormat::Parquet => {
                let properties = WriterProperties::builder().set_compression(Compression::SNAPPY).build();
                Writer::Parquet(ArrowWriter::try_new(file, Arc::clone(schema), Some(properties))?)
            }
            FileFormat::ArrowIpc => Writer::Ipc(arrow_ipc::writer::FileWriter::try_new(file, schema)?),
        })
    }

    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        match self {
            Writer::Parquet(writer) => writer.write(batch)?,
            Writer::Ipc(writer) => writer.write(batch)?,
        }
        Ok(())
    }

    fn close(self) -> Result<()> {
        match self {
            Writer::Parquet(writer) => drop(writer.close()?),
            Writer::Ipc(mut writer) => writer.finish()?,
        }
        Ok(())
    }
}

/// The files being written, by partition directory.
struct Outputs {
    root: PathBuf,
    format: FileFormat,
    open: BTreeMap<PathBuf, Writer>,
    files: usize,
}

impl Outputs {
    fn write(&mut self, dir: PathBuf, batch: &RecordBatch) -> Result<()> {
        if !self.open.contains_key(&dir) {
            let name = match self.format {
                FileFormat::Parquet => "part-0.parquet",
                FileFormat::ArrowIpc => "part-0.arrow",
            };
            let writer = Writer::create(&self.root.join(&dir).join(name), &batch.schema(), self.format)?;
            self.open.insert(dir.clone(), writer);
            self.files += 1;
        }
        self.open.get_mut(&dir).map_or(Ok(()), |writer| writer.write(batch))
    }

    fn close_all(&mut self) -> Result<()> {
        for (_, writer) in std::mem::take(&mut self.open) {
            writer.close()?;
        }
        Ok(())
    }
}

/// Runs `quire export`.
pub fn run(args: Args) -> Result<ExitCode> {
    let partitioning = Partitioning::parse(args.partition_by.as_deref())?;
    let db = super::meteo_query::open(&args.db)?;
    let txn = db.begin_read()?;
    std::fs::create_dir_all(&args.to).with_context(|| format!("cannot create {}", args.to.display()))?;
    let started = Instant::now();
    let mut outputs = Outputs { root: args.to.clone(), format: args.format, open: BTreeMap::new(), files: 0 };
    let mut rows = 0u64;
    let mut failed = None;
    let mut station = String::new();
    scan_batches(
        &txn,
        args.station.as_deref(),
        (i64::MIN, i64::MAX),
        (BATCH_ROWS, partitioning.station),
        &mut |batch| {
            rows += batch.num_rows() as u64;
            let this = batch.column(0).as_string::<i32>().value(0).to_owned();
            if partitioning.station && this != station {
                if let Err(error) = outputs.close_all() {
                    failed = Some(error);
                    return Ok(false);
                }
                station = this;
            }
            match write_batch(&mut outputs, partitioning, &batch) {
                Ok(()) => Ok(true),
                Err(error) => {
                    failed = Some(error);
                    Ok(false)
                }
            }
        },
    )?;
    if let Some(error) = failed {
        return Err(error);
    }
    outputs.close_all()?;
    let seconds = started.elapsed().as_secs_f64();
    eprintln!(
        "{rows} records in {} file(s) under {} in {seconds:.2} s ({:.0} records/s)",
        outputs.files,
        args.to.display(),
        rows as f64 / seconds.max(1e-9)
    );
    Ok(ExitCode::SUCCESS)
}

/// Writes one batch (of one station when partitioned by station) in runs of one year.
fn write_batch(outputs: &mut Outputs, partitioning: Partitioning, batch: &RecordBatch) -> Result<()> {
    let station_dir = match partitioning.station {
        true => PathBuf::from(format!("station={}", escape(batch.column(0).as_string::<i32>().value(0)))),
        false => PathBuf::new(),
    };
    let stored = match partitioning.station {
        true => batch.project(&(1..batch.num_columns()).collect::<Vec<_>>())?,
        false => batch.clone(),
    };
    if !partitioning.year {
        return outputs.write(station_dir, &stored);
    }
    let times = batch.column(1).as_primitive::<TimestampSecondType>();
    let year_of = |row: usize| civil_from_days(times.value(row).div_euclid(86_400)).0;
    let mut start = 0;
    while start < batch.num_rows() {
        let year = year_of(start);
        let mut end = start + 1;
        while end < batch.num_rows() && year_of(end) == year {
            end += 1;
        }
        outputs.write(station_dir.join(format!("year={year}")), &stored.slice(start, end - start))?;
        start = end;
    }
    Ok(())
}

/// A partition value as a path segment: characters other than ASCII letters, digits,
/// `-`, `_` and `.` percent-encoded (as Hive and Spark write them).
fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        match byte {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => out.push(byte as char),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_values_are_percent_encoded() {
        assert_eq!(escape("Dongsi"), "Dongsi");
        assert_eq!(escape("a b/c=d%"), "a%20b%2Fc%3Dd%25");
        assert_eq!(escape("Zürich"), "Z%C3%BCrich");
    }

    #[test]
    fn partitioning_flags() {
        assert_eq!(Partitioning::parse(None).unwrap(), Partitioning::default());
        assert_eq!(Partitioning::parse(Some("station,year")).unwrap(), Partitioning { station: true, year: true });
        assert!(Partitioning::parse(Some("month")).is_err());
    }
}
