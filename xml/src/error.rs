//! The one error type of quiredb-xml.
//!
//! Every variant names *what* went wrong and *where*: XPath errors carry the 1-based
//! character column in the query text, XML errors the file, line and column. Bad input
//! is always reported through this type, never by a panic.
//!
//! Read next: `xpath/grammar.rs` and `xpath/subset.rs` (who raise the XPath
//! variants), `reference.rs` (who raises the XML and I/O variants).

use std::path::PathBuf;

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Everything that can go wrong in quiredb-xml.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The query is not well-formed XPath.
    #[error("XPath syntax error at column {column}: expected {expected}, found {found}")]
    XPathSyntax {
        /// 1-based character column of the offending token.
        column: usize,
        /// What the parser expected there.
        expected: String,
        /// What it found instead.
        found: String,
    },
    /// The query is XPath, but uses a construct outside the subset QuireDB answers.
    #[error("XPath construct not supported at column {column}: {construct}")]
    XPathUnsupported {
        /// 1-based character column where the construct starts.
        column: usize,
        /// The construct, named as a user would look it up (e.g. "axis `ancestor::`").
        construct: String,
    },
    /// A namespace prefix of the query is bound to no URI, or to several.
    #[error("XPath namespace prefix `{prefix}` at column {column}: {reason}")]
    XPathNamespace {
        /// 1-based character column of the step with the prefix.
        column: usize,
        /// The prefix.
        prefix: String,
        /// Why it has no URI, and how to give it one.
        reason: String,
    },
    /// Nodes were asked of an XPath expression whose value is a number, a string or a
    /// boolean (`count(//a)`): read it with `Prepared::value`.
    #[error("the XPath expression gives a {found}, not nodes")]
    XPathNotNodes {
        /// "number", "string" or "boolean".
        found: &'static str,
    },
    /// A document is not well-formed XML.
    #[error("malformed XML in {file} at line {line}, column {column}: {reason}")]
    Xml {
        /// The file (or a label such as `<memory>`).
        file: PathBuf,
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// The parser's message.
        reason: String,
    },
    /// A collection path holds no `.xml` file.
    #[error("no .xml file in {0}")]
    EmptyCollection(PathBuf),
    /// Reading a document failed.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The database or a structure under the store failed (I/O, corruption, full disk).
    #[error(transparent)]
    Store(#[from] quiredb_structures::Error),
    /// No collection of that name in the database.
    #[error("no XML collection named {0:?} (`quire xml-info DB` lists them)")]
    NoSuchCollection(String),
    /// A structure of that name already exists.
    #[error("cannot create XML collection {0:?}: the name is taken")]
    CollectionExists(String),
    /// A node number outside the collection.
    #[error("collection {collection:?} has no node {node} (it has {nodes} nodes)")]
    NoSuchNode {
        /// The collection.
        collection: String,
        /// The node asked for (its pre).
        node: u64,
        /// Nodes in the collection.
        nodes: u64,
    },
}

impl From<quiredb_engine::Error> for Error {
    fn from(e: quiredb_engine::Error) -> Self {
        Error::Store(e.into())
    }
}
