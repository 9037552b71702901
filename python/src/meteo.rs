//! The meteorological data set from Python: `load_csv` (the load of `quire load-csv
//! --db`: [`load_parallel`] over an [`ObservationReader`]) and the queries `range`,
//! `window`, `knn`, `agg`, whose answers are built as Arrow record batches by
//! `quiredb_datasets::meteo::arrow` and handed to `pyarrow` through the Arrow C data
//! interface (no copy). Every load and query runs with the GIL released.

use std::io::Write;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::Context;
use arrow_array::RecordBatch;
use arrow_pyarrow::IntoPyArrow;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use quiredb::datasets::meteo::aggregate::{AggregateQuery, Every, aggregate};
use quiredb::datasets::meteo::fields::parse_timestamp;
use quiredb::datasets::meteo::parallel::DEFAULT_RTREE_BUDGET;
use quiredb::datasets::meteo::{
    LoadOptions, LoadSummary, MeteoView, ObservationReader, ParallelConfig, Schema, load_parallel,
};
use quiredb_datasets::meteo::arrow as batches;

use crate::database::{Shared, WriterTurn};
use crate::errors::OrRaise;
use quiredb::load_io::{Inputs, LazyFile, open_inputs, releasing_page_cache};

/// Seconds between two calls of a progress callback.
const PROGRESS_EVERY: Duration = Duration::from_millis(200);

/// What `load_csv` was asked to do.
pub struct LoadRequest {
    /// Files and folders.
    pub paths: Vec<PathBuf>,
    /// The column mapping (`options::schema`).
    pub schema: Schema,
    /// Skip malformed rows.
    pub skip_bad: bool,
    /// Commit every this many rows.
    pub batch: Option<u64>,
    /// The R*-tree's 1 to 8 measures, or `["none"]` for no R*-tree.
    pub index_measures: Option<Vec<String>>,
    /// Where skipped rows are listed.
    pub skip_report: Option<PathBuf>,
}

/// One path or a list of paths.
pub fn path_list(paths: &Bound<'_, PyAny>) -> PyResult<Vec<PathBuf>> {
    if paths.is_instance_of::<PyString>() || paths.hasattr("__fspath__")? {
        return Ok(vec![paths.extract()?]);
    }
    let list: Vec<PathBuf> = paths.extract().map_err(|_| PyTypeError::new_err("paths: a path or a list of paths"))?;
    if list.is_empty() {
        return Err(PyValueError::new_err("paths: no file given"));
    }
    Ok(list)
}

/// Names given as "a,b,c" or a list.
pub fn names(value: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    match value.extract::<String>() {
        Ok(text) => Ok(text.split(',').map(|name| name.trim().to_owned()).collect()),
        Err(_) => value.extract(),
    }
}

/// Runs the load with the GIL released; `progress(rows, bytes_read, total_bytes)` is
/// called at most every 0.2 s (its exceptions are reported as unraisable: the load
/// cannot be stopped half-way without losing its transaction).
pub fn load_csv(
    py: Python<'_>,
    shared: &Arc<Shared>,
    request: LoadRequest,
    progress: Option<Py<PyAny>>,
) -> PyResult<Py<PyDict>> {
    let turn = WriterTurn::take(py, shared)?;
    let shared_for_load = Arc::clone(shared);
    let summary = py.detach(move || {
        let mut last = Instant::now();
        let mut report = |rows: u64, bytes: u64, total: u64, last_call: bool| {
            let Some(callback) = &progress else { return };
            if !last_call && last.elapsed() < PROGRESS_EVERY {
                return;
            }
            last = Instant::now();
            Python::attach(|py| {
                if let Err(error) = callback.call1(py, (rows, bytes, total)) {
                    error.write_unraisable(py, None);
                }
            });
        };
        run_load(&shared_for_load, &request, &mut report)
    });
    drop(turn);
    summary_dict(py, &summary.or_raise()?)
}

fn run_load(
    shared: &Shared,
    request: &LoadRequest,
    report: &mut dyn FnMut(u64, u64, u64, bool),
) -> anyhow::Result<LoadSummary> {
    let label = request.paths.iter().map(|path| path.display().to_string()).collect::<Vec<_>>().join(", ");
    let Inputs { files: inputs, read_bytes, total_bytes: total } =
        open_inputs(&request.paths, request.schema.sheet.as_deref(), request.schema.member.as_deref())?;
    let mut reader =
        ObservationReader::from_files(inputs, &request.schema).with_context(|| format!("cannot read {label}"))?;
    if let Some(names) = &request.index_measures {
        reader.set_index_measures(names)?;
    }
    let beside = shared.path.parent().filter(|dir| !dir.as_os_str().is_empty());
    let config = ParallelConfig {
        durability: shared.durability,
        measure_names: reader.measure_names(),
        tmp_dir: beside.map_or_else(|| PathBuf::from("."), Path::to_path_buf),
        rtree_budget: DEFAULT_RTREE_BUDGET,
        cpu_clock: Default::default(),
        record_layout: Some(reader.record_layout()),
    };
    let options = LoadOptions {
        skip_bad: request.skip_bad,
        batch_rows: request.batch,
        skip_report: request.skip_report.clone().map(|path| Box::new(LazyFile::new(path)) as Box<dyn Write>),
    };
    let mut update = |rows: u64, _: u64| report(rows, read_bytes.load(Ordering::Relaxed), total, false);
    let loaded = releasing_page_cache(Some(&shared.path), || {
        load_parallel(&shared.db, &config, &mut reader, options, &mut update)
    });
    let unchanged = match request.batch {
        Some(_) => "batches committed before the error stay",
        None => "the database is unchanged",
    };
    let (summary, _) = loaded.with_context(|| format!("load of {label} stopped; {unchanged}"))?;
    report(summary.rows, read_bytes.load(Ordering::Relaxed), total, true);
    Ok(summary)
}

fn summary_dict(py: Python<'_>, summary: &LoadSummary) -> PyResult<Py<PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("rows", summary.rows)?;
    dict.set_item("skipped_rows", summary.skipped_rows)?;
    dict.set_item("complete_rows", summary.complete_rows)?;
    dict.set_item("measure_names", &summary.measure_names)?;
    let missing = PyDict::new(py);
    for (name, count) in summary.measure_names.iter().zip(&summary.missing) {
        missing.set_item(name, count)?;
    }
    dict.set_item("missing", missing)?;
    dict.set_item("stations", summary.stations)?;
    dict.set_item("time_range", summary.time_range)?;
    dict.set_item("bytes", summary.bytes)?;
    dict.set_item("batches", summary.batches)?;
    let skipped: Vec<(u64, &str)> = summary.skipped.iter().map(|row| (row.line, row.error.as_str())).collect();
    dict.set_item("skipped", skipped)?;
    Ok(dict.unbind())
}

/// A time given as seconds since 1970 (int), an ISO 8601 string (as the CLI reads it) or
/// a `datetime` (naive ones are UTC).
fn time(value: &Bound<'_, PyAny>) -> PyResult<i64> {
    if let Ok(seconds) = value.extract::<i64>() {
        return Ok(seconds);
    }
    if let Ok(text) = value.extract::<String>() {
        return parse_timestamp(text.as_bytes()).map_err(|reason| PyValueError::new_err(format!("{text:?}: {reason}")));
    }
    if value.hasattr("timestamp")? && value.hasattr("tzinfo")? {
        let aware = match value.getattr("tzinfo")?.is_none() {
            true => {
                let utc = value.py().import("datetime")?.getattr("timezone")?.getattr("utc")?;
                let kwargs = PyDict::new(value.py());
                kwargs.set_item("tzinfo", utc)?;
                value.call_method("replace", (), Some(&kwargs))?
            }
            false => value.clone(),
        };
        return Ok(aware.call_method0("timestamp")?.extract::<f64>()?.floor() as i64);
    }
    Err(PyTypeError::new_err("a time is an int (Unix seconds), an ISO 8601 str or a datetime"))
}

/// The times from `start` to `end` (inclusive), unbounded where None.
pub fn times(start: Option<&Bound<'_, PyAny>>, end: Option<&Bound<'_, PyAny>>) -> PyResult<RangeInclusive<i64>> {
    Ok(start.map(time).transpose()?.unwrap_or(i64::MIN)..=end.map(time).transpose()?.unwrap_or(i64::MAX))
}

/// `every=` of `agg`.
pub fn every(name: &str) -> PyResult<Every> {
    match name {
        "hour" => Ok(Every::Hour),
        "day" => Ok(Every::Day),
        "month" => Ok(Every::Month),
        "year" => Ok(Every::Year),
        other => Err(PyValueError::new_err(format!("every {other:?}: use \"hour\", \"day\", \"month\" or \"year\""))),
    }
}

/// `batch` as a `pyarrow.Table` (through the C stream interface: the buffers are shared).
fn table(py: Python<'_>, batch: RecordBatch) -> PyResult<Bound<'_, PyAny>> {
    chunked_table(py, vec![batch])
}

/// `batches` (at least one, of one schema) as the chunks of one `pyarrow.Table`.
fn chunked_table(py: Python<'_>, batches: Vec<RecordBatch>) -> PyResult<Bound<'_, PyAny>> {
    let schema = batches[0].schema();
    arrow_pyarrow::Table::try_new(batches, schema).or_raise()?.into_pyarrow(py)
}

/// `Database.range`.
pub fn range<'py>(
    py: Python<'py>,
    shared: &Shared,
    station: Option<String>,
    times: RangeInclusive<i64>,
    limit: Option<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    let db = Arc::clone(&shared.db);
    let parts = py
        .detach(move || match limit {
            // The first `limit` rows in order: one thread.
            Some(limit) => batches::range(&db.begin_read()?, station.as_deref(), times, limit),
            None => batches::range_on_two_threads(&db, station.as_deref(), times),
        })
        .or_raise()?;
    chunked_table(py, parts)
}

/// `Database.window`.
pub fn window<'py>(py: Python<'py>, shared: &Shared, low: Vec<f64>, high: Vec<f64>) -> PyResult<Bound<'py, PyAny>> {
    let db = Arc::clone(&shared.db);
    let batch = py
        .detach(move || {
            let txn = db.begin_read()?;
            let found = MeteoView::open(&txn)?.window(&low, &high)?;
            batches::found(&txn, &found, false)
        })
        .or_raise()?;
    table(py, batch)
}

/// `Database.knn`.
pub fn knn<'py>(py: Python<'py>, shared: &Shared, query: Vec<f64>, k: usize) -> PyResult<Bound<'py, PyAny>> {
    let db = Arc::clone(&shared.db);
    let batch = py
        .detach(move || {
            let txn = db.begin_read()?;
            let found = MeteoView::open(&txn)?.knn(&query, k)?;
            batches::found(&txn, &found, true)
        })
        .or_raise()?;
    table(py, batch)
}

/// `Database.agg`.
pub fn agg<'py>(py: Python<'py>, shared: &Shared, query: AggregateQuery) -> PyResult<Bound<'py, PyAny>> {
    let db = Arc::clone(&shared.db);
    let batch = py
        .detach(move || {
            let txn = db.begin_read()?;
            let mut buckets = Vec::new();
            aggregate(&txn, &query, &mut |bucket| {
                buckets.push(bucket.clone());
                Ok(true)
            })?;
            batches::buckets(&buckets)
        })
        .or_raise()?;
    table(py, batch)
}

/// `Database.meteo_stats`.
pub fn stats(py: Python<'_>, shared: &Shared) -> PyResult<Py<PyDict>> {
    let db = Arc::clone(&shared.db);
    let stats = py.detach(move || MeteoView::open(&db.begin_read()?)?.stats()).or_raise()?;
    let dict = PyDict::new(py);
    dict.set_item("records", stats.records)?;
    dict.set_item("keys", stats.keys)?;
    dict.set_item("points", stats.points)?;
    dict.set_item("rtree_height", stats.rtree_height)?;
    dict.set_item("measure_names", stats.measure_names)?;
    dict.set_item("pages", stats.pages.to_vec())?;
    Ok(dict.unbind())
}
