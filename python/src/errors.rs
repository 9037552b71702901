//! `quiredb.Error`, the exception of every failure of the engine, a structure, the XML
//! store or a data set load; its message is the engine's own (the file, line, column or
//! page it names), with the causes after a colon.

use pyo3::PyErr;
use pyo3::exceptions::PyException;

pyo3::create_exception!(
    quiredb,
    Error,
    PyException,
    "A failure of QuireDB: I/O, a corrupted page, bad input (file, line and column named), a malformed query, …"
);

/// `error` as a `quiredb.Error` carrying its message and causes.
pub fn engine_error(error: impl Into<anyhow::Error>) -> PyErr {
    Error::new_err(format!("{:#}", error.into()))
}

/// Converts the error of a fallible call into `quiredb.Error`.
pub trait OrRaise<T> {
    /// The value, or the error as `quiredb.Error`.
    fn or_raise(self) -> pyo3::PyResult<T>;
}

impl<T, E: Into<anyhow::Error>> OrRaise<T> for Result<T, E> {
    fn or_raise(self) -> pyo3::PyResult<T> {
        self.map_err(engine_error)
    }
}
