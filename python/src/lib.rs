//! The `quiredb` Python module (pyo3; built with maturin, see `python/README.md`):
//! QuireDB's ordered key-value trees in context-managed transactions, the
//! meteorological data set with `pyarrow.Table` answers, and the native XML store with
//! XPath.
//!
//! Each Python call goes to the same library functions as the `quire` command line
//! (`src/cli/*.rs`); loads and queries run with the GIL released. Errors of the engine
//! are raised as `quiredb.Error` with the engine's message.
//!
//! Read next: `database.rs` (the `Database` class), `txn.rs` and `tree.rs` (transactions
//! and trees), `meteo.rs`, `xml.rs`; the stub `python/quiredb.pyi` documents the API.
#![forbid(unsafe_code)]

mod database;
mod errors;
mod meteo;
mod options;
mod tree;
mod txn;
mod xml;

use pyo3::prelude::*;

/// The `quiredb` module.
#[pymodule]
#[pyo3(name = "quiredb")]
fn quiredb_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("Error", m.py().get_type::<errors::Error>())?;
    m.add_function(wrap_pyfunction!(database::open, m)?)?;
    m.add_class::<database::Database>()?;
    m.add_class::<txn::WriteTransaction>()?;
    m.add_class::<txn::ReadTransaction>()?;
    m.add_class::<tree::Tree>()?;
    m.add_class::<tree::TreeIter>()?;
    m.add_class::<xml::Node>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("PARQUET_INPUT", cfg!(feature = "parquet"))?;
    Ok(())
}
