//! The one error type of quiredb-bench. Every peer failure, I/O failure, bad input
//! file and cross-check disagreement becomes a `BenchError` whose message says which
//! engine or file is at fault, so a failed run names its culprit.

use std::path::PathBuf;

/// Everything that can make a benchmark run fail.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// A file or directory operation failed.
    #[error("I/O error on {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    /// A peer engine returned an error.
    #[error("engine {engine} failed: {reason}")]
    Engine { engine: String, reason: String },
    /// Engines disagree on an answer: the run is invalid.
    #[error("cross-check failed in {workload}, check `{check}`: engines disagree: {detail}")]
    CrossCheck { workload: String, check: String, detail: String },
    /// A requested engine is unknown or not built (for example without `--features peers`).
    #[error("engine `{engine}` is not available for {workload}: {reason}")]
    MissingEngine { workload: String, engine: String, reason: String },
    /// A query-set or results file has a malformed line.
    #[error("{path}:{line}: {reason}")]
    Parse { path: PathBuf, line: usize, reason: String },
    /// A bad command-line argument.
    #[error("invalid argument: {0}")]
    Usage(String),
    /// Drawing a chart failed.
    #[error("plotting {path} failed: {reason}")]
    Plot { path: PathBuf, reason: String },
}

/// Result alias of the crate.
pub type Result<T> = std::result::Result<T, BenchError>;

impl BenchError {
    /// An engine error from anything displayable.
    pub fn engine(engine: &str, reason: impl std::fmt::Display) -> Self {
        BenchError::Engine { engine: engine.to_string(), reason: reason.to_string() }
    }

    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        BenchError::Io { path: path.into(), source }
    }
}
