//! The one error type of quiredb-structures. Engine errors convert into it; each
//! structure adds the variants of its own bad input here (one enum for the crate).

/// Result alias of the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything a structure operation can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An engine error (I/O, corruption, catalog, …).
    #[error(transparent)]
    Engine(#[from] quiredb_engine::Error),
    /// A page of a structure does not hold what the structure wrote there.
    #[error("structure {structure:?} is corrupted at logical page {page}: {reason}")]
    Corrupted {
        /// Catalog name of the structure (or its kind when unnamed).
        structure: String,
        /// Logical page.
        page: u64,
        /// What check failed.
        reason: String,
    },
    /// The catalog entry has another kind or other parameters than the caller expects.
    #[error("structure {name:?} is a {found}, not a {expected}")]
    WrongKind {
        /// Catalog name.
        name: String,
        /// Kind found in the catalog.
        found: String,
        /// Kind the caller asked for.
        expected: String,
    },
    /// Reading the input of a streaming blob write failed.
    #[error("reading the blob's input failed: {0}")]
    Input(#[source] std::io::Error),
    /// A B+tree key is longer than the tree's key-size limit.
    #[error("key of {len} bytes is over the B+tree key limit of {max} bytes (store long data in the value)")]
    KeyTooLarge {
        /// Length of the key given.
        len: usize,
        /// The limit for this page size (`btree::max_key_len`).
        max: usize,
    },
    /// Bulk-load input was not in strictly increasing key order.
    #[error("bulk load input is not sorted: entry {index} is not greater than the one before")]
    BulkLoadUnsorted {
        /// Position of the offending entry in the input (from 0).
        index: u64,
    },
    /// A streamed bulk load was started on a tree that already has entries.
    #[error("bulk load into B+tree {tree:?} needs an empty tree; it has {len} entries")]
    BulkLoadNotEmpty {
        /// Catalog name of the tree.
        tree: String,
        /// Entries it holds.
        len: u64,
    },
    /// An R-tree box or point has a NaN or infinite coordinate, or `min > max`.
    #[error("invalid R-tree box: {reason}")]
    InvalidBox {
        /// Which coordinate is wrong.
        reason: String,
    },
    /// A box with `min != max` was given to an R-tree that stores points only.
    #[error("R-tree {tree:?} stores points only: {reason}")]
    NotAPoint {
        /// Catalog name of the tree.
        tree: String,
        /// The box refused.
        reason: String,
    },
    /// An R-tree stored in a format version this build does not read.
    #[error(
        "R-tree {tree:?} is stored in format version {found}; this build reads version {expected} (rebuild the tree)"
    )]
    RTreeFormat {
        /// Catalog name.
        tree: String,
        /// The version found on the head page.
        found: u32,
        /// The version this build reads.
        expected: u32,
    },
    /// A temporary file of a streaming R-tree bulk load could not be written or read.
    #[error("R-tree bulk load temporary file: {0}")]
    Spill(#[source] std::io::Error),
    /// A structure parameter is out of range (dimensions, node capacity, …).
    #[error("invalid parameter: {reason}")]
    InvalidParameter {
        /// What is out of range.
        reason: String,
    },
    /// A typed structure was opened with other types than it stores.
    #[error("{name:?} stores {stored}; it was opened as {requested} (open it with the types it was created with)")]
    TypeMismatch {
        /// Catalog name.
        name: String,
        /// The types recorded in the catalog.
        stored: String,
        /// The types the caller asked for.
        requested: String,
    },
    /// A second handle to one structure was asked for in one write transaction.
    #[error("{name:?} is already open in this write transaction (use the open handle, or drop it first)")]
    AlreadyOpen {
        /// Catalog name.
        name: String,
    },
    /// A key has no encoding in its table's key type.
    #[error("key for table {table:?} cannot be encoded: {reason}")]
    KeyEncoding {
        /// Catalog name of the table.
        table: String,
        /// Why.
        reason: String,
    },
    /// A queue operation named a record that is not live in the queue.
    #[error("queue {structure:?} holds no live record with sequence number {seq} in page {page}")]
    InvalidRecordId {
        /// Catalog name of the queue.
        structure: String,
        /// Sequence number of the id.
        seq: u64,
        /// Logical page of the id.
        page: u64,
    },
}
