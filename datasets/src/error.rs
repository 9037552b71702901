//! The one error type of `quiredb-datasets`.
//!
//! Bad input is an error value, never a panic: every variant's `Display` reads as a
//! sentence a user can act on and names *where* (file line, column, offending text).
//! Producers: [`crate::meteo`] (CSV loading, generation); other data sets add variants
//! here. Read next: `meteo/reader.rs` for how CSV positions are reported.

use std::fmt;

/// Result alias of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong while reading, generating or loading a data set.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing a file or stream failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),

    /// One CSV field or row is malformed (a short row, a bad number, a bad date, bytes
    /// that are not UTF-8). `line` is 1-based in the file, `column` 1-based in the row.
    #[error("line {line}, {column}: {reason}{}", OffendingText(text))]
    Csv {
        /// 1-based line number of the row in the input.
        line: u64,
        /// Which column: its 1-based number and, when known, its header name.
        column: ColumnLabel,
        /// What is wrong, e.g. "not a number".
        reason: String,
        /// The offending text (lossy UTF-8, shortened), empty when there is none.
        text: String,
    },

    /// An error in one of several input files; names the file.
    #[error("{file}: {source}")]
    InFile {
        /// The file's path as given.
        file: String,
        /// What went wrong in it.
        source: Box<Error>,
    },

    /// The mapping from CSV columns to observation fields does not fit the file (a named
    /// column that is absent, a file without a header where names were given, …).
    #[error("schema does not fit the input: {0}")]
    Schema(String),

    /// The input holds no row at all.
    #[error("the input is empty: {0}")]
    Empty(String),

    /// A command-line or API argument is out of range.
    #[error("invalid argument: {0}")]
    Argument(String),

    /// Building Arrow arrays or writing Arrow/Parquet failed (feature `arrow`).
    #[cfg(feature = "arrow")]
    #[error("Arrow: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),

    /// A spreadsheet input cannot be read (in [`Error::InFile`]).
    #[error("spreadsheet: {0}")]
    Sheet(String),

    /// A Parquet input cannot be read (feature `parquet`; in [`Error::InFile`]).
    #[cfg(feature = "parquet")]
    #[error("Parquet: {0}")]
    Parquet(#[from] parquet::errors::ParquetError),

    /// The database that receives or answers the data failed (I/O, corruption, …).
    #[error("the database failed: {0}")]
    Engine(#[from] quiredb_engine::Error),

    /// A structure that receives or answers the data failed (an index refused a key, a
    /// page of it is corrupted, …).
    #[error("an index failed: {0}")]
    Structures(#[from] quiredb_structures::Error),

    /// A worker thread of a parallel load stopped or panicked; names which.
    #[error("{0}")]
    Worker(String),

    /// An XML collection, XPath query or query set failed (see [`quiredb_xml::Error`]).
    #[error(transparent)]
    Xml(#[from] quiredb_xml::Error),

    /// A generator profile or a query-set file is malformed; names the file and line.
    #[error("{0}")]
    Profile(String),
}

impl Error {
    /// A [`Error::Csv`] for `text` found at `line`, `column`.
    pub fn csv(line: u64, column: ColumnLabel, reason: impl Into<String>, text: &[u8]) -> Self {
        Error::Csv { line, column, reason: reason.into(), text: shorten(text) }
    }
}

/// A column as shown in messages: "column 12 (TEMP)".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnLabel {
    /// 1-based position in the row.
    pub number: usize,
    /// Header name, when the file has a header.
    pub name: Option<String>,
}

impl fmt::Display for ColumnLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.name {
            Some(name) => write!(f, "column {} ({name})", self.number),
            None => write!(f, "column {}", self.number),
        }
    }
}

/// Formats the offending text of a [`Error::Csv`] as `: "text"` or nothing.
struct OffendingText<'a>(&'a str);

impl fmt::Display for OffendingText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() { Ok(()) } else { write!(f, ": {:?}", self.0) }
    }
}

/// Lossy UTF-8 of at most 80 bytes of `text`, for messages.
fn shorten(text: &[u8]) -> String {
    const LIMIT: usize = 80;
    let cut = &text[..text.len().min(LIMIT)];
    let mut shown = String::from_utf8_lossy(cut).into_owned();
    if text.len() > LIMIT {
        shown.push('…');
    }
    shown
}
