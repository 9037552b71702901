//! `WriteTransaction` and `ReadTransaction`: the engine's transactions as Python
//! context managers. A write transaction commits when its `with` block ends and aborts
//! when the block raises (or when it is dropped uncommitted); a read transaction is a
//! snapshot that never waits for the writer.
//!
//! The engine's write transaction borrows its database; [`OwnedWrite`] keeps the two
//! together (`self_cell`, no unsafe code here). Transactions belong to the thread that
//! started them (`unsendable`): the engine's writer lock is held by that thread.

use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyType;
use quiredb::engine::{self, Durability, OwnedReadTxn, WriteTxn};
use quiredb::structures::btree::BTree;

use crate::database::{Shared, WriterTurn, durability};
use crate::errors::OrRaise;
use crate::tree::{Encoding, Tree, TxnRef};

type MaybeWrite<'db> = Option<WriteTxn<'db>>;

self_cell::self_cell!(
    /// A write transaction with the database it borrows.
    struct OwnedWrite {
        owner: Arc<engine::Database>,
        #[covariant]
        dependent: MaybeWrite,
    }
);

/// The write transaction: `with db.write() as txn: ...` commits at the end of the
/// block, and aborts if the block raises.
///
/// >>> with db.write() as txn:
/// ...     users = txn.tree("users", key_type=str)
/// ...     users["ada"] = b"Lovelace"
#[pyclass(module = "quiredb", unsendable)]
pub struct WriteTransaction {
    cell: Option<OwnedWrite>,
    turn: Option<WriterTurn>,
    durability: Durability,
}

impl WriteTransaction {
    /// Takes the write turn and begins.
    pub fn begin(py: Python<'_>, shared: &Arc<Shared>) -> PyResult<Self> {
        let turn = WriterTurn::take(py, shared)?;
        let cell = OwnedWrite::try_new(Arc::clone(&shared.db), |db| db.begin_write().map(Some)).or_raise()?;
        Ok(WriteTransaction { cell: Some(cell), turn: Some(turn), durability: shared.durability })
    }

    /// The engine's transaction, or an error once it has ended.
    pub fn txn(&self) -> PyResult<&WriteTxn<'_>> {
        self.cell
            .as_ref()
            .and_then(|cell| cell.borrow_dependent().as_ref())
            .ok_or_else(|| PyValueError::new_err("the write transaction has ended (committed or aborted)"))
    }

    /// Ends the transaction: commits with `durability`, or aborts when `None`.
    fn finish(&mut self, commit: Option<Durability>) -> PyResult<()> {
        let Some(mut cell) = self.cell.take() else {
            return Err(PyValueError::new_err("the write transaction has already ended"));
        };
        let result = cell.with_dependent_mut(|_, txn| match (txn.take(), commit) {
            (Some(txn), Some(durability)) => txn.commit(durability),
            (Some(txn), None) => {
                txn.abort();
                Ok(())
            }
            (None, _) => Ok(()),
        });
        drop(cell);
        self.turn = None;
        result.or_raise()
    }
}

#[pymethods]
impl WriteTransaction {
    /// The tree `name`, created when absent. `key_type` and `value_type` are `bytes`
    /// (the default) or `str`: what reads give back (str is stored as UTF-8, in code
    /// point order); writes take either.
    #[pyo3(signature = (name, key_type = None, value_type = None))]
    fn tree(
        slf: Bound<'_, Self>,
        name: String,
        key_type: Option<&Bound<'_, PyType>>,
        value_type: Option<&Bound<'_, PyType>>,
    ) -> PyResult<Tree> {
        {
            let this = slf.borrow();
            BTree::open_or_create(this.txn()?, &name).or_raise()?;
        }
        let encodings = (Encoding::of(key_type)?, Encoding::of(value_type)?);
        Ok(Tree::new(TxnRef::Write(slf.unbind()), name, encodings))
    }

    /// Deletes the tree `name` and its entries.
    fn drop_tree(&self, name: &str) -> PyResult<()> {
        BTree::drop_tree(self.txn()?, name).or_raise()
    }

    /// Commits; `durability` ("full", "checksummed", "none") overrides the database's.
    #[pyo3(signature = (durability = None))]
    fn commit(&mut self, durability: Option<&str>) -> PyResult<()> {
        let durability = durability.map(self::durability).transpose()?.unwrap_or(self.durability);
        self.finish(Some(durability))
    }

    /// Throws the transaction's changes away.
    fn abort(&mut self) -> PyResult<()> {
        self.finish(None)
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Commits when the block ended normally, aborts when it raised; the exception
    /// goes on.
    fn __exit__(
        &mut self,
        exc_type: Option<&Bound<'_, PyAny>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _traceback: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        if self.cell.is_none() {
            return Ok(false);
        }
        match exc_type {
            None => self.finish(Some(self.durability))?,
            Some(_) => self.finish(None)?,
        }
        Ok(false)
    }
}

/// A snapshot reader: `with db.read() as txn: ...`.
///
/// >>> with db.read() as txn:
/// ...     print(txn.tree("users", key_type=str).get("ada"))
#[pyclass(module = "quiredb", unsendable)]
pub struct ReadTransaction {
    txn: Option<OwnedReadTxn>,
}

impl ReadTransaction {
    /// Begins a snapshot of `shared`.
    pub fn begin(shared: &Arc<Shared>) -> PyResult<Self> {
        Ok(ReadTransaction { txn: Some(shared.db.begin_read_owned().or_raise()?) })
    }

    /// The engine's snapshot, or an error once closed.
    pub fn txn(&self) -> PyResult<&OwnedReadTxn> {
        self.txn.as_ref().ok_or_else(|| PyValueError::new_err("the read transaction has ended"))
    }
}

#[pymethods]
impl ReadTransaction {
    /// The tree `name` (an error when absent); `key_type`/`value_type` as in
    /// `WriteTransaction.tree`.
    #[pyo3(signature = (name, key_type = None, value_type = None))]
    fn tree(
        slf: Bound<'_, Self>,
        name: String,
        key_type: Option<&Bound<'_, PyType>>,
        value_type: Option<&Bound<'_, PyType>>,
    ) -> PyResult<Tree> {
        {
            let this = slf.borrow();
            BTree::open(this.txn()?, &name).or_raise()?;
        }
        let encodings = (Encoding::of(key_type)?, Encoding::of(value_type)?);
        Ok(Tree::new(TxnRef::Read(slf.unbind()), name, encodings))
    }

    /// Ends the snapshot.
    fn close(&mut self) {
        self.txn = None;
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&mut self, _exc: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close();
        false
    }
}
