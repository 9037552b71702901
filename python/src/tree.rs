//! `Tree`: an ordered key-value tree (the engine's B+tree) seen through a transaction,
//! with a `dict`-like API (`t[k]`, `t[k] = v`, `del t[k]`, `k in t`, `len(t)`, `get`,
//! iteration in key order) and `range(start, end)` (end excluded, like Python's ranges).
//!
//! Keys and values are bytes; a tree opened with `key_type=str` (`value_type=str`) gives
//! them back as str (stored as UTF-8, whose byte order is code point order). Writes take
//! bytes or str. Iteration reads [`CHUNK`] entries at a time, each chunk a range read
//! after the last key seen, so it streams whatever the tree's size.

use std::collections::VecDeque;
use std::ops::Bound as Limit;

use pyo3::exceptions::{PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString, PyType};
use quiredb::engine::PageRead;
use quiredb::structures::btree::BTree;

use crate::errors::OrRaise;
use crate::txn::{ReadTransaction, WriteTransaction};

/// Entries read at a time while iterating.
const CHUNK: usize = 256;

/// How keys or values are handed back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// As `bytes`.
    Bytes,
    /// As `str` (UTF-8).
    Str,
}

impl Encoding {
    /// `bytes` (or None) or `str`.
    pub fn of(kind: Option<&Bound<'_, PyType>>) -> PyResult<Encoding> {
        let Some(kind) = kind else { return Ok(Encoding::Bytes) };
        if kind.is(kind.py().get_type::<PyBytes>()) {
            Ok(Encoding::Bytes)
        } else if kind.is(kind.py().get_type::<PyString>()) {
            Ok(Encoding::Str)
        } else {
            Err(PyTypeError::new_err(format!("key_type and value_type are bytes or str, not {}", kind.name()?)))
        }
    }

    fn to_py<'py>(self, py: Python<'py>, bytes: &[u8]) -> PyResult<Bound<'py, PyAny>> {
        match self {
            Encoding::Bytes => Ok(PyBytes::new(py, bytes).into_any()),
            Encoding::Str => {
                let text = std::str::from_utf8(bytes)
                    .map_err(|error| PyValueError::new_err(format!("a stored entry is not UTF-8: {error}")))?;
                Ok(PyString::new(py, text).into_any())
            }
        }
    }
}

/// Bytes of a key or value given as `bytes`, `bytearray` or `str`.
fn bytes_of(value: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(text.to_str()?.as_bytes().to_vec());
    }
    value.extract::<Vec<u8>>().map_err(|_| {
        PyTypeError::new_err(format!(
            "keys and values are bytes or str, not {}",
            value.get_type().name().map_or_else(|_| "?".into(), |n| n.to_string())
        ))
    })
}

/// The transaction a tree reads and writes through.
pub enum TxnRef {
    /// A write transaction.
    Write(Py<WriteTransaction>),
    /// A snapshot.
    Read(Py<ReadTransaction>),
}

/// Runs `$body` with `$txn` bound to the tree's engine transaction (either kind).
macro_rules! with_txn {
    ($tree:expr, $py:expr, |$txn:ident| $body:expr) => {
        match &$tree.txn {
            TxnRef::Write(write) => {
                let write = write.bind($py).borrow();
                let $txn = write.txn()?;
                $body
            }
            TxnRef::Read(read) => {
                let read = read.bind($py).borrow();
                let $txn = read.txn()?;
                $body
            }
        }
    };
}

/// An ordered key-value tree in a transaction.
///
/// >>> with db.write() as txn:
/// ...     t = txn.tree("words", key_type=str, value_type=str)
/// ...     t["apple"] = "pomme"
/// ...     t["pear"] = "poire"
/// ...     t.range("a", "b")
/// [('apple', 'pomme')]
#[pyclass(module = "quiredb")]
pub struct Tree {
    txn: TxnRef,
    name: String,
    keys: Encoding,
    values: Encoding,
}

impl Tree {
    /// The tree `name` of `txn`.
    pub fn new(txn: TxnRef, name: String, (keys, values): (Encoding, Encoding)) -> Self {
        Tree { txn, name, keys, values }
    }

    /// Up to `limit` entries within the bounds, ascending (descending when `reverse`).
    fn entries(
        &self,
        py: Python<'_>,
        (low, high): (Limit<&[u8]>, Limit<&[u8]>),
        reverse: bool,
        limit: usize,
    ) -> PyResult<Vec<(Vec<u8>, Vec<u8>)>> {
        fn read<T: PageRead>(
            txn: &T,
            name: &str,
            (low, high): (Limit<&[u8]>, Limit<&[u8]>),
            reverse: bool,
            limit: usize,
        ) -> PyResult<Vec<(Vec<u8>, Vec<u8>)>> {
            let tree = BTree::open(txn, name).or_raise()?;
            let range = tree.range(low, high);
            let entries: Result<Vec<_>, _> =
                if reverse { range.rev().take(limit).collect() } else { range.take(limit).collect() };
            entries.or_raise()
        }
        with_txn!(self, py, |txn| read(txn, &self.name, (low, high), reverse, limit))
    }

    /// The value of `key`, if present.
    fn lookup(&self, py: Python<'_>, key: &[u8]) -> PyResult<Option<Vec<u8>>> {
        with_txn!(self, py, |txn| BTree::open(txn, &self.name).and_then(|tree| tree.get_vec(key)).or_raise())
    }

    /// The write transaction, or TypeError in a snapshot.
    fn writing<'py>(&self, py: Python<'py>) -> PyResult<PyRef<'py, WriteTransaction>> {
        match &self.txn {
            TxnRef::Write(write) => Ok(write.bind(py).borrow()),
            TxnRef::Read(_) => Err(PyTypeError::new_err("this tree was opened in a read transaction: it is read-only")),
        }
    }

    fn pair<'py>(
        &self,
        py: Python<'py>,
        (key, value): &(Vec<u8>, Vec<u8>),
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        Ok((self.keys.to_py(py, key)?, self.values.to_py(py, value)?))
    }
}

#[pymethods]
impl Tree {
    fn __getitem__<'py>(&self, py: Python<'py>, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        match self.lookup(py, &bytes_of(key)?)? {
            Some(value) => self.values.to_py(py, &value),
            None => Err(PyKeyError::new_err(key.clone().unbind())),
        }
    }

    fn __setitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let (key, value) = (bytes_of(key)?, bytes_of(value)?);
        let write = self.writing(py)?;
        let mut tree = BTree::open(write.txn()?, &self.name).or_raise()?;
        tree.insert(&key, &value).or_raise()?;
        Ok(())
    }

    fn __delitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let bytes = bytes_of(key)?;
        let write = self.writing(py)?;
        let mut tree = BTree::open(write.txn()?, &self.name).or_raise()?;
        match tree.remove(&bytes).or_raise()? {
            true => Ok(()),
            false => Err(PyKeyError::new_err(key.clone().unbind())),
        }
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let key = bytes_of(key)?;
        with_txn!(self, py, |txn| BTree::open(txn, &self.name).and_then(|tree| tree.contains(&key)).or_raise())
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        with_txn!(self, py, |txn| BTree::open(txn, &self.name).map(|tree| tree.len() as usize).or_raise())
    }

    /// The value of `key`, or `default`.
    #[pyo3(signature = (key, default = None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self.lookup(py, &bytes_of(key)?)? {
            Some(value) => Ok(Some(self.values.to_py(py, &value)?)),
            None => Ok(default),
        }
    }

    /// Removes `key` and gives its value back (or `default`; KeyError without one).
    #[pyo3(signature = (key, default = None))]
    fn pop<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let bytes = bytes_of(key)?;
        let write = self.writing(py)?;
        let mut tree = BTree::open(write.txn()?, &self.name).or_raise()?;
        match tree.get_vec(&bytes).or_raise()? {
            Some(value) => {
                tree.remove(&bytes).or_raise()?;
                self.values.to_py(py, &value)
            }
            None => default.ok_or_else(|| PyKeyError::new_err(key.clone().unbind())),
        }
    }

    /// Sets every pair of `entries` (a dict, or an iterable of (key, value) pairs).
    fn update(&self, py: Python<'_>, entries: &Bound<'_, PyAny>) -> PyResult<()> {
        let pairs = match entries.cast::<pyo3::types::PyDict>() {
            Ok(dict) => dict.items().into_any(),
            Err(_) => entries.clone(),
        };
        let mut owned = Vec::new();
        for pair in pairs.try_iter()? {
            let (key, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = pair?.extract()?;
            owned.push((bytes_of(&key)?, bytes_of(&value)?));
        }
        let write = self.writing(py)?;
        let mut tree = BTree::open(write.txn()?, &self.name).or_raise()?;
        tree.insert_batch(owned).or_raise()?;
        Ok(())
    }

    /// Entries with `start <= key < end` (None: unbounded; `end_inclusive=True` takes
    /// `end` too) as a list of (key, value), ascending, or descending with `reverse`.
    #[pyo3(signature = (start = None, end = None, *, end_inclusive = false, reverse = false, limit = None))]
    fn range<'py>(
        &self,
        py: Python<'py>,
        start: Option<&Bound<'py, PyAny>>,
        end: Option<&Bound<'py, PyAny>>,
        end_inclusive: bool,
        reverse: bool,
        limit: Option<usize>,
    ) -> PyResult<Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
        let start = start.map(bytes_of).transpose()?;
        let end = end.map(bytes_of).transpose()?;
        let low = start.as_deref().map_or(Limit::Unbounded, Limit::Included);
        let high = match (end.as_deref(), end_inclusive) {
            (None, _) => Limit::Unbounded,
            (Some(end), true) => Limit::Included(end),
            (Some(end), false) => Limit::Excluded(end),
        };
        let entries = self.entries(py, (low, high), reverse, limit.unwrap_or(usize::MAX))?;
        entries.iter().map(|entry| self.pair(py, entry)).collect()
    }

    /// The smallest entry, or None.
    fn first<'py>(&self, py: Python<'py>) -> PyResult<Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
        let entries = self.entries(py, (Limit::Unbounded, Limit::Unbounded), false, 1)?;
        entries.first().map(|entry| self.pair(py, entry)).transpose()
    }

    /// The largest entry, or None.
    fn last<'py>(&self, py: Python<'py>) -> PyResult<Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
        let entries = self.entries(py, (Limit::Unbounded, Limit::Unbounded), true, 1)?;
        entries.first().map(|entry| self.pair(py, entry)).transpose()
    }

    /// The keys in order (streamed).
    fn keys(slf: Py<Self>) -> TreeIter {
        TreeIter::new(slf, Yield::Keys)
    }

    /// The values in key order (streamed).
    fn values(slf: Py<Self>) -> TreeIter {
        TreeIter::new(slf, Yield::Values)
    }

    /// The (key, value) pairs in key order (streamed).
    fn items(slf: Py<Self>) -> TreeIter {
        TreeIter::new(slf, Yield::Items)
    }

    fn __iter__(slf: Py<Self>) -> TreeIter {
        TreeIter::new(slf, Yield::Keys)
    }

    /// The tree's name.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    fn __repr__(&self) -> String {
        format!("<quiredb.Tree {:?}>", self.name)
    }
}

/// What an iteration yields.
#[derive(Clone, Copy)]
enum Yield {
    Keys,
    Values,
    Items,
}

/// Iterates a tree in key order, a chunk at a time.
#[pyclass(module = "quiredb")]
pub struct TreeIter {
    tree: Py<Tree>,
    what: Yield,
    after: Option<Vec<u8>>,
    buffer: VecDeque<(Vec<u8>, Vec<u8>)>,
    done: bool,
}

impl TreeIter {
    fn new(tree: Py<Tree>, what: Yield) -> Self {
        TreeIter { tree, what, after: None, buffer: VecDeque::new(), done: false }
    }
}

#[pymethods]
impl TreeIter {
    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let tree = self.tree.bind(py).borrow();
        if self.buffer.is_empty() && !self.done {
            let low = self.after.as_deref().map_or(Limit::Unbounded, Limit::Excluded);
            self.buffer = tree.entries(py, (low, Limit::Unbounded), false, CHUNK)?.into();
            self.done = self.buffer.len() < CHUNK;
            self.after = self.buffer.back().map(|(key, _)| key.clone());
        }
        let Some(entry) = self.buffer.pop_front() else { return Ok(None) };
        Ok(Some(match self.what {
            Yield::Keys => tree.keys.to_py(py, &entry.0)?,
            Yield::Values => tree.values.to_py(py, &entry.1)?,
            Yield::Items => tree.pair(py, &entry)?.into_pyobject(py)?.into_any(),
        }))
    }
}
