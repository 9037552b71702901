//! `quiredb.open` and the `Database` class: the open file, its transactions, and the
//! data-set calls (`load_csv`, `range`, …, `load_xml`, `xpath`) that run in their own
//! transaction with the GIL released.
//!
//! One writer at a time: [`WriterGate`] hands out the write turn (waiting with the GIL
//! released, so a Python thread that holds the turn can finish), and refuses a second
//! write transaction in the thread that already holds one (that would wait forever).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::ThreadId;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use quiredb::datasets::meteo::aggregate::AggregateQuery;
use quiredb::{Durability, engine};

use crate::errors::OrRaise;
use crate::txn::{ReadTransaction, WriteTransaction};
use crate::{meteo, xml};

/// What a `Database` and its transactions share.
pub struct Shared {
    /// The engine's database.
    pub db: Arc<engine::Database>,
    /// The file.
    pub path: PathBuf,
    /// Durability of commits unless a commit names its own.
    pub durability: Durability,
    /// The write turn.
    pub gate: WriterGate,
}

/// Who holds the write turn, and the signal that it was given back.
#[derive(Default)]
pub struct WriterGate {
    holder: Mutex<Option<ThreadId>>,
    freed: Condvar,
}

/// The write turn; given back when dropped.
pub struct WriterTurn(Arc<Shared>);

impl WriterTurn {
    /// Waits (without the GIL) for the write turn of `shared`.
    pub fn take(py: Python<'_>, shared: &Arc<Shared>) -> PyResult<WriterTurn> {
        let me = std::thread::current().id();
        let gate = &shared.gate;
        let taken = py.detach(|| {
            let mut holder = gate.holder.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            if *holder == Some(me) {
                return false;
            }
            while holder.is_some() {
                holder = gate.freed.wait(holder).unwrap_or_else(|poisoned| poisoned.into_inner());
            }
            *holder = Some(me);
            true
        });
        match taken {
            true => Ok(WriterTurn(Arc::clone(shared))),
            false => Err(PyRuntimeError::new_err(
                "this thread already has a write transaction open (commit or abort it first)",
            )),
        }
    }
}

impl Drop for WriterTurn {
    fn drop(&mut self) {
        let gate = &self.0.gate;
        *gate.holder.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = None;
        gate.freed.notify_one();
    }
}

/// `"full"`, `"checksummed"` or `"none"` (the CLI's `--durability`).
pub fn durability(name: &str) -> PyResult<Durability> {
    match name.to_ascii_lowercase().as_str() {
        "full" => Ok(Durability::Full),
        "checksummed" => Ok(Durability::Checksummed),
        "none" => Ok(Durability::None),
        other => Err(PyValueError::new_err(format!("durability {other:?}: use \"full\", \"checksummed\" or \"none\""))),
    }
}

/// Opens the database file at `path`, creating it when absent (unless `read_only`).
///
/// `cache_mib` is the buffer pool in MiB; `durability` ("full", "checksummed" or
/// "none") is that of every commit unless a commit names its own.
///
/// >>> import quiredb
/// >>> db = quiredb.open("weather.quire", cache_mib=64)
#[pyfunction]
#[pyo3(signature = (path, cache_mib = 64, durability = "checksummed", read_only = false))]
pub fn open(py: Python<'_>, path: PathBuf, cache_mib: usize, durability: &str, read_only: bool) -> PyResult<Database> {
    let durability = self::durability(durability)?;
    let builder = engine::Database::builder().cache_bytes(cache_mib << 20);
    let target = path.clone();
    let db = py
        .detach(move || match (read_only, target.exists()) {
            (true, _) => builder.open_read_only(&target),
            (false, true) => builder.open(&target),
            (false, false) => builder.create(&target),
        })
        .map_err(|error| anyhow::Error::from(error).context(format!("cannot open {}", path.display())))
        .or_raise()?;
    let shared = Shared { db: Arc::new(db), path, durability, gate: WriterGate::default() };
    Ok(Database { shared: Some(Arc::new(shared)) })
}

/// An open QuireDB file. Close it with `close()` or a `with` block.
///
/// >>> with quiredb.open("data.quire") as db:
/// ...     with db.write() as txn:
/// ...         txn.tree("users")[b"ada"] = b"Lovelace"
#[pyclass(module = "quiredb")]
pub struct Database {
    shared: Option<Arc<Shared>>,
}

impl Database {
    /// The shared state, or an error once closed.
    pub fn shared(&self) -> PyResult<&Arc<Shared>> {
        self.shared.as_ref().ok_or_else(|| PyValueError::new_err("the database is closed"))
    }
}

#[pymethods]
impl Database {
    /// Starts the write transaction (waits for another thread's to end). Use it in a
    /// `with` block: it commits at the end, and aborts if the block raises.
    fn write(&self, py: Python<'_>) -> PyResult<WriteTransaction> {
        WriteTransaction::begin(py, self.shared()?)
    }

    /// Starts a snapshot reader (never waits for the writer).
    fn read(&self) -> PyResult<ReadTransaction> {
        ReadTransaction::begin(self.shared()?)
    }

    /// The file's path.
    #[getter]
    fn path(&self) -> PyResult<PathBuf> {
        Ok(self.shared()?.path.clone())
    }

    /// Closes the database (transactions still open keep the file until they end).
    fn close(&mut self) {
        self.shared = None;
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&mut self, _exc: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close();
        false
    }

    fn __repr__(&self) -> String {
        match &self.shared {
            Some(shared) => format!("<quiredb.Database {:?}>", shared.path.display().to_string()),
            None => "<quiredb.Database (closed)>".to_owned(),
        }
    }

    /// Loads meteorological CSV files (or folders, or zip archives' members; `.gz`/`.zst` decompressed; spreadsheets
    /// and, with `parquet`, Parquet files read as the CSV of their rows) in one
    /// transaction, with the options of `quire load-csv` as keywords.
    #[pyo3(signature = (paths, *, progress = None, skip_bad = false, batch = None, index_measures = None, skip_report = None, **options))]
    #[allow(clippy::too_many_arguments)]
    fn load_csv(
        &self,
        py: Python<'_>,
        paths: &Bound<'_, PyAny>,
        progress: Option<Py<PyAny>>,
        skip_bad: bool,
        batch: Option<u64>,
        index_measures: Option<&Bound<'_, PyAny>>,
        skip_report: Option<PathBuf>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyDict>> {
        let request = meteo::LoadRequest {
            paths: meteo::path_list(paths)?,
            schema: crate::options::schema(options)?,
            skip_bad,
            batch,
            index_measures: index_measures.map(meteo::names).transpose()?,
            skip_report,
        };
        meteo::load_csv(py, self.shared()?, request, progress)
    }

    /// Records of one station (every station when `station` is None) with
    /// `start <= time <= end`, at most `limit`, as a `pyarrow.Table`.
    #[pyo3(signature = (station = None, start = None, end = None, *, limit = None))]
    fn range<'py>(
        &self,
        py: Python<'py>,
        station: Option<String>,
        start: Option<&Bound<'py, PyAny>>,
        end: Option<&Bound<'py, PyAny>>,
        limit: Option<usize>,
    ) -> PyResult<Bound<'py, PyAny>> {
        meteo::range(py, self.shared()?, station, meteo::times(start, end)?, limit)
    }

    /// Records whose five indexed measures all lie in the box `[low, high]`.
    fn window<'py>(&self, py: Python<'py>, low: Vec<f64>, high: Vec<f64>) -> PyResult<Bound<'py, PyAny>> {
        meteo::window(py, self.shared()?, low, high)
    }

    /// The `k` records nearest to `point` (five measures), nearest first.
    fn knn<'py>(&self, py: Python<'py>, point: Vec<f64>, k: usize) -> PyResult<Bound<'py, PyAny>> {
        meteo::knn(py, self.shared()?, point, k)
    }

    /// Per-station aggregates of one measure per `every` ("hour", "day", "month" or
    /// "year") as a `pyarrow.Table`.
    #[pyo3(signature = (measure, every, *, station = None, start = None, end = None))]
    fn agg<'py>(
        &self,
        py: Python<'py>,
        measure: String,
        every: &str,
        station: Option<String>,
        start: Option<&Bound<'py, PyAny>>,
        end: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let times = meteo::times(start, end)?;
        let (from, to) = (*times.start(), *times.end());
        let query = AggregateQuery { station, from, to, every: meteo::every(every)?, measure };
        meteo::agg(py, self.shared()?, query)
    }

    /// Sizes of the meteorological structures and the measure names, as a dict.
    fn meteo_stats(&self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        meteo::stats(py, self.shared()?)
    }

    /// Loads XML files and folders into collection `name` in one transaction.
    #[pyo3(signature = (name, paths, *, skip_bad = false, progress = None))]
    fn load_xml(
        &self,
        py: Python<'_>,
        name: String,
        paths: &Bound<'_, PyAny>,
        skip_bad: bool,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyDict>> {
        xml::load(py, self.shared()?, name, meteo::path_list(paths)?, skip_bad, progress)
    }

    /// Runs an XPath query over collection `name`. `output`: "auto" (nodes, or the
    /// number, string or boolean of an expression like `count(//a)`), "nodes",
    /// "values" (string values), "xml" or "count". `namespaces` binds the query's
    /// prefixes to URIs (`{"dc": "http://purl.org/dc/elements/1.1/"}`); a prefix it
    /// lacks stands for the one URI the collection's names use with it. `variables`
    /// gives `$name` a value (`{"who": "O'Brien"}`: a str, a number or a bool).
    /// `strict_names` reads `title` as XPath 1.0 does (in no namespace; lxml, BaseX),
    /// `default_namespace` (implying it) puts unprefixed element tests in that URI.
    #[pyo3(signature = (name, query, *, output = "auto", limit = None, namespaces = None, variables = None,
                        strict_names = false, default_namespace = None))]
    #[allow(clippy::too_many_arguments)]
    fn xpath<'py>(
        &self,
        py: Python<'py>,
        name: String,
        query: String,
        output: &str,
        limit: Option<usize>,
        namespaces: Option<HashMap<String, String>>,
        variables: Option<HashMap<String, Bound<'py, PyAny>>>,
        strict_names: bool,
        default_namespace: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let names = xml::NameReading { strict: strict_names, default_namespace };
        let bindings = xml::bindings(namespaces, variables, names)?;
        let request = xml::Request { collection: name, query, bindings };
        xml::xpath(py, self.shared()?, request, xml::Output::parse(output)?, limit)
    }

    /// Runs the query and gives its plan with each operator's rows and time.
    #[pyo3(signature = (name, query, *, namespaces = None, variables = None, strict_names = false,
                        default_namespace = None))]
    #[allow(clippy::too_many_arguments)]
    fn explain<'py>(
        &self,
        py: Python<'py>,
        name: String,
        query: String,
        namespaces: Option<HashMap<String, String>>,
        variables: Option<HashMap<String, Bound<'py, PyAny>>>,
        strict_names: bool,
        default_namespace: Option<String>,
    ) -> PyResult<String> {
        let names = xml::NameReading { strict: strict_names, default_namespace };
        let request = xml::Request { collection: name, query, bindings: xml::bindings(namespaces, variables, names)? };
        xml::explain(py, self.shared()?, request)
    }

    /// The XML collections of the database.
    fn collections<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        xml::collections(py, self.shared()?)
    }
}
