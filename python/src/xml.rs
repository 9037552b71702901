//! The native XML store from Python: `load_xml` (what `quire load-xml` runs),
//! `xpath` (what `quire xpath` runs: the store's prepared query, its nodes, string
//! values, XML or count, or the value of an expression such as `count(//a)`),
//! `explain` and `collections`. Every call runs with the GIL released.

use std::sync::Arc;
use std::time::{Duration, Instant};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList};
use quiredb::engine::PageRead;
use quiredb::xml::store::{self, Kind, LoadOptions, LoadSummary, Prepared, XmlStore};
use quiredb::xml::xpath::bindings::{Atom, Bindings};
use quiredb::xml::xpath::eval::Value;
use quiredb::xml::xpath::expr::Type;
use std::collections::HashMap;

use crate::database::{Shared, WriterTurn};
use crate::errors::OrRaise;

/// One node of an XPath answer: its number (`pre`, document order), depth, number of
/// descendants, path from the root and name (the path's last step: `item`, `@id`,
/// `text()`).
#[pyclass(module = "quiredb", frozen, get_all, skip_from_py_object)]
#[derive(Clone, Debug)]
pub struct Node {
    /// The node's number in the collection (document order).
    pub pre: u64,
    /// Depth below the document node.
    pub level: u32,
    /// Number of descendants (attributes included).
    pub size: u64,
    /// Path from the document node, e.g. `/site/people/person/@id`.
    pub path: String,
    /// The last step of the path.
    pub name: String,
}

#[pymethods]
impl Node {
    fn __repr__(&self) -> String {
        format!("Node(pre={}, path={:?})", self.pre, self.path)
    }
}

/// What `xpath` gives back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// Nodes, or the value of a non-node expression.
    Auto,
    /// Nodes.
    Nodes,
    /// String values.
    Values,
    /// Each node serialised.
    Xml,
    /// The number of nodes.
    Count,
}

impl Output {
    /// `output=` of `xpath`.
    pub fn parse(name: &str) -> PyResult<Output> {
        match name {
            "auto" => Ok(Output::Auto),
            "nodes" => Ok(Output::Nodes),
            "values" => Ok(Output::Values),
            "xml" => Ok(Output::Xml),
            "count" => Ok(Output::Count),
            other => Err(PyValueError::new_err(format!(
                "output {other:?}: use \"auto\", \"nodes\", \"values\", \"xml\" or \"count\""
            ))),
        }
    }
}

/// An answer, before it becomes Python objects.
enum Answer {
    Count(u64),
    Number(f64),
    Text(String),
    Boolean(bool),
    Nodes(Vec<Node>),
    Strings(Vec<String>),
}

/// `Database.load_xml`: one transaction; a failure leaves the database as it was.
pub fn load(
    py: Python<'_>,
    shared: &Arc<Shared>,
    name: String,
    paths: Vec<std::path::PathBuf>,
    skip_bad: bool,
    progress: Option<Py<PyAny>>,
) -> PyResult<Py<PyDict>> {
    let turn = WriterTurn::take(py, shared)?;
    let shared_for_load = Arc::clone(shared);
    let summary = py.detach(move || -> quiredb::Result<LoadSummary> {
        let txn = shared_for_load.db.begin_write()?;
        let mut last = Instant::now();
        let summary = store::load(&txn, &name, &paths, LoadOptions { skip_bad }, &mut |p| {
            let Some(callback) = &progress else { return };
            if last.elapsed() >= Duration::from_millis(200) {
                last = Instant::now();
                Python::attach(|py| {
                    if let Err(error) = callback.call1(py, (p.documents, p.bytes, p.total_bytes)) {
                        error.write_unraisable(py, None);
                    }
                });
            }
        })?;
        txn.commit(shared_for_load.durability)?;
        Ok(summary)
    });
    drop(turn);
    let summary = summary.or_raise()?;
    let dict = PyDict::new(py);
    dict.set_item("documents", summary.documents)?;
    let nodes = PyDict::new(py);
    for (kind, count) in Kind::ALL.iter().zip(summary.nodes) {
        nodes.set_item(kind.name(), count)?;
    }
    dict.set_item("nodes", nodes)?;
    dict.set_item("names", summary.names)?;
    dict.set_item("paths", summary.paths)?;
    dict.set_item("bytes", summary.bytes)?;
    let skipped: Vec<(String, String)> =
        summary.skipped.iter().map(|(file, reason)| (file.display().to_string(), reason.clone())).collect();
    dict.set_item("skipped", skipped)?;
    Ok(dict.unbind())
}

/// How name tests without a prefix read (`strict_names=`, `default_namespace=`).
pub struct NameReading {
    pub strict: bool,
    pub default_namespace: Option<String>,
}

/// A query over a collection, with what its prefixes and variables are bound to.
pub struct Request {
    pub collection: String,
    pub query: String,
    pub bindings: Bindings,
}

impl Request {
    /// The query prepared over the collection in `txn`, run by `f`.
    fn run<R>(
        &self,
        txn: &quiredb::engine::ReadTxn<'_>,
        f: impl FnOnce(
            &XmlStore<'_, quiredb::engine::ReadTxn<'_>>,
            Prepared<'_, '_, quiredb::engine::ReadTxn<'_>>,
        ) -> quiredb::Result<R>,
    ) -> quiredb::Result<R> {
        let store = XmlStore::open(txn, &self.collection)?;
        let prepared = store.prepare_with(&self.query, &self.bindings)?;
        f(&store, prepared)
    }
}

/// The `namespaces=` and `variables=` arguments as bindings, checked as `--ns` and
/// `--var` are: a variable's value is a `str`, an `int` or `float`, or a `bool`.
pub fn bindings(
    namespaces: Option<HashMap<String, String>>,
    variables: Option<HashMap<String, Bound<'_, PyAny>>>,
    names: NameReading,
) -> PyResult<Bindings> {
    let mut bindings = Bindings::new();
    if names.strict || names.default_namespace.is_some() {
        bindings.strict_names(names.default_namespace.as_deref());
    }
    for (prefix, uri) in namespaces.unwrap_or_default() {
        Bindings::check_namespace(&prefix, &uri).map_err(PyValueError::new_err)?;
        bindings.namespace(&prefix, &uri);
    }
    for (name, value) in variables.unwrap_or_default() {
        Bindings::check_variable(&name).map_err(PyValueError::new_err)?;
        let atom = if let Ok(b) = value.cast::<PyBool>() {
            Atom::Boolean(b.is_true())
        } else if let Ok(s) = value.extract::<String>() {
            Atom::String(s)
        } else if let Ok(n) = value.extract::<f64>() {
            Atom::Number(n)
        } else {
            let type_name = value.get_type().name()?;
            return Err(PyTypeError::new_err(format!(
                "variable {name}: a {type_name} is not a str, a number or a bool"
            )));
        };
        bindings.variable(&name, atom);
    }
    Ok(bindings)
}

/// `Database.xpath`.
pub fn xpath<'py>(
    py: Python<'py>,
    shared: &Shared,
    request: Request,
    output: Output,
    limit: Option<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    let db = Arc::clone(&shared.db);
    let limit = limit.unwrap_or(usize::MAX);
    let answer = py
        .detach(move || -> quiredb::Result<Answer> {
            request.run(&db.begin_read()?, |store, prepared| answer(store, prepared, output, limit))
        })
        .or_raise()?;
    Ok(match answer {
        Answer::Count(count) => count.into_pyobject(py)?.into_any(),
        Answer::Number(number) => number.into_pyobject(py)?.into_any(),
        Answer::Text(text) => text.into_pyobject(py)?.into_any(),
        Answer::Boolean(value) => value.into_pyobject(py)?.to_owned().into_any(),
        Answer::Nodes(nodes) => PyList::new(py, nodes)?.into_any(),
        Answer::Strings(strings) => PyList::new(py, strings)?.into_any(),
    })
}

fn answer<T: PageRead>(
    store: &XmlStore<'_, T>,
    mut prepared: Prepared<'_, '_, T>,
    output: Output,
    limit: usize,
) -> quiredb::Result<Answer> {
    if prepared.result_type() != Type::Nodes && output == Output::Auto {
        return Ok(match prepared.value()? {
            Value::Number(number) => Answer::Number(number),
            Value::String(text) => Answer::Text(text),
            Value::Boolean(value) => Answer::Boolean(value),
            Value::Nodes(nodes) => Answer::Count(nodes.len() as u64),
        });
    }
    if output == Output::Count {
        return Ok(Answer::Count(prepared.count()?));
    }
    let labels: Vec<_> = prepared.run()?.iter().take(limit).copied().collect();
    let dict = store.dictionary();
    Ok(match output {
        Output::Values => {
            let mut strings = Vec::with_capacity(labels.len());
            let mut value = Vec::new();
            for label in &labels {
                value.clear();
                prepared.string_value(label.pre, &mut value)?;
                strings.push(String::from_utf8_lossy(&value).into_owned());
            }
            Answer::Strings(strings)
        }
        Output::Xml => {
            let mut strings = Vec::with_capacity(labels.len());
            for label in &labels {
                let mut xml = Vec::new();
                store.write_xml(label.pre, &mut xml)?;
                strings.push(String::from_utf8_lossy(&xml).into_owned());
            }
            Answer::Strings(strings)
        }
        _ => Answer::Nodes(
            labels
                .iter()
                .map(|label| Node {
                    pre: label.pre,
                    level: label.level,
                    size: label.size,
                    path: dict.path_text(label.path),
                    name: dict.step_text(label.path),
                })
                .collect(),
        ),
    })
}

/// `Database.explain`: runs the query, then gives its plan with rows and times.
pub fn explain(py: Python<'_>, shared: &Shared, request: Request) -> PyResult<String> {
    let db = Arc::clone(&shared.db);
    py.detach(move || -> quiredb::Result<String> {
        request.run(&db.begin_read()?, |_, mut prepared| {
            prepared.value()?;
            Ok(prepared.explain())
        })
    })
    .or_raise()
}

/// `Database.collections`.
pub fn collections<'py>(py: Python<'py>, shared: &Shared) -> PyResult<Bound<'py, PyList>> {
    let db = Arc::clone(&shared.db);
    let names =
        py.detach(move || -> quiredb::Result<Vec<String>> { Ok(store::collections(&db.begin_read()?)?) }).or_raise()?;
    PyList::new(py, names)
}
