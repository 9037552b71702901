//! `quire export DB --to DIR [--format parquet|arrow-ipc] [--partition-by
//! station|year|station,year]` (feature `parquet`): the meteorological records as
//! Hive-partitioned files (`DIR/station=X/year=2014/part-0.parquet`) that Spark, DuckDB,
//! Polars and DataFusion read directly.
//!
//! The records are streamed over the (station, time) B+tree in batches
//! ([`quiredb_datasets::meteo::arrow::scan_batches`], the columns of the Python
//! package's `range`), each batch cut into runs of one partition and handed to a second
//! thread that encodes and writes (the two halves cost about the same); a partition's
//! file stays open until its station is done (with `--partition-by year`, until the end).
//! Parquet files hold the time in milliseconds (UTC; Parquet has no unit of seconds).
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
use arrow_array::cast::AsArray;
use arrow_array::types::{TimestampMillisecondType, TimestampSecondType};
use arrow_array::{Array, RecordBatch, TimestampMillisecondArray};
use arrow_schema::{Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use quiredb_datasets::meteo::arrow::{Batching, scan_batches};
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
            Writer::Parquet(writer) => writer.write(&in_milliseconds(batch)?)?,
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
            let (name, schema) = match self.format {
                FileFormat::Parquet => ("part-0.parquet", in_milliseconds(batch)?.schema()),
                FileFormat::ArrowIpc => ("part-0.arrow", batch.schema()),
            };
            let writer = Writer::create(&self.root.join(&dir).join(name), &schema, self.format)?;
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

/// What the scanning thread hands to the writing thread.
enum Message {
    /// Rows of one partition.
    Write(PathBuf, RecordBatch),
    /// Every partition so far is complete (a station is done): close their files.
    CloseAll,
}

/// Runs `quire export`: this thread scans the database and cuts the batches into
/// partitions, a second one encodes and writes the files.
pub fn run(args: Args) -> Result<ExitCode> {
    let partitioning = Partitioning::parse(args.partition_by.as_deref())?;
    let db = super::meteo_query::open(&args.db)?;
    let txn = db.begin_read()?;
    std::fs::create_dir_all(&args.to).with_context(|| format!("cannot create {}", args.to.display()))?;
    let started = Instant::now();
    let mut outputs = Outputs { root: args.to.clone(), format: args.format, open: BTreeMap::new(), files: 0 };
    let (to_writer, from_scan) = std::sync::mpsc::sync_channel::<Message>(4);
    let (rows, written) = std::thread::scope(|scope| {
        let writer = scope.spawn(move || -> Result<usize> {
            for message in from_scan {
                match message {
                    Message::Write(dir, batch) => outputs.write(dir, &batch)?,
                    Message::CloseAll => outputs.close_all()?,
                }
            }
            outputs.close_all()?;
            Ok(outputs.files)
        });
        let mut rows = 0u64;
        let mut station = String::new();
        let scanned = scan_batches(
            &txn,
            args.station.as_deref(),
            i64::MIN..=i64::MAX,
            Batching { rows: BATCH_ROWS, split_stations: partitioning.station },
            &mut |batch| {
                rows += batch.num_rows() as u64;
                let this = batch.column(0).as_string::<i32>().value(0);
                let mut messages = Vec::new();
                if partitioning.station && this != station {
                    station = this.to_owned();
                    messages.push(Message::CloseAll);
                }
                messages
                    .extend(partitions(partitioning, &batch)?.into_iter().map(|(dir, part)| Message::Write(dir, part)));
                // A closed channel: the writer stopped on an error, reported by its join.
                Ok(messages.into_iter().all(|message| to_writer.send(message).is_ok()))
            },
        );
        drop(to_writer);
        let written = writer.join().map_err(|_| anyhow::anyhow!("the writing thread panicked"))?;
        scanned?;
        anyhow::Ok((rows, written?))
    })?;
    let seconds = started.elapsed().as_secs_f64();
    eprintln!(
        "{rows} records in {written} file(s) under {} in {seconds:.2} s ({:.0} records/s)",
        args.to.display(),
        rows as f64 / seconds.max(1e-9)
    );
    Ok(ExitCode::SUCCESS)
}

/// One batch (of one station when partitioned by station) cut into its partitions:
/// the directory of each and its rows (without the station column when it is in the
/// path); runs of one year when partitioned by year.
fn partitions(
    partitioning: Partitioning,
    batch: &RecordBatch,
) -> quiredb_datasets::Result<Vec<(PathBuf, RecordBatch)>> {
    let station_dir = match partitioning.station {
        true => PathBuf::from(format!("station={}", escape(batch.column(0).as_string::<i32>().value(0)))),
        false => PathBuf::new(),
    };
    let stored = match partitioning.station {
        true => batch.project(&(1..batch.num_columns()).collect::<Vec<_>>())?,
        false => batch.clone(),
    };
    if !partitioning.year {
        return Ok(vec![(station_dir, stored)]);
    }
    let times = batch.column(1).as_primitive::<TimestampSecondType>();
    let year_of = |row: usize| civil_from_days(times.value(row).div_euclid(86_400)).0;
    let mut parts = Vec::new();
    let mut start = 0;
    while start < batch.num_rows() {
        let year = year_of(start);
        let mut end = start + 1;
        while end < batch.num_rows() && year_of(end) == year {
            end += 1;
        }
        parts.push((station_dir.join(format!("year={year}")), stored.slice(start, end - start)));
        start = end;
    }
    Ok(parts)
}

/// `batch` with its `time` column in milliseconds: Parquet has no timestamp of
/// seconds, and a column of seconds is written as a bare INT64 that DuckDB and Spark
/// read as a number.
fn in_milliseconds(batch: &RecordBatch) -> Result<RecordBatch> {
    let schema = batch.schema();
    let Ok(index) = schema.index_of("time") else { return Ok(batch.clone()) };
    let seconds = batch.column(index).as_primitive::<TimestampSecondType>();
    let millis: TimestampMillisecondArray =
        seconds.unary::<_, TimestampMillisecondType>(|time| time.saturating_mul(1000)).with_timezone("UTC");
    let mut fields: Vec<Field> = schema.fields().iter().map(|field| field.as_ref().clone()).collect();
    fields[index] = Field::new("time", millis.data_type().clone(), false);
    let mut columns = batch.columns().to_vec();
    columns[index] = Arc::new(millis);
    Ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)?)
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
