//! quiredb-structures: the index structures of QuireDB, built only on the engine's
//! logical page API (`quiredb_engine::raw`): B+tree, blobs, paged queue and R*-tree,
//! and typed tables over the B+tree ([`table`]). Each opens by name through the
//! engine's catalog. An application declares its structures as constants
//! ([`table::TableDef`], [`queue::QueueDef`], [`rtree::RTreeDef`]) and opens them from
//! a transaction with [`Structures`]; the untyped handles (`BTree`, `Queue`, `RTree`)
//! stay for byte-level use and for structure authors. Every handle, typed or not,
//! borrows the transaction it was opened in (one handle model, as redb's), and a
//! write transaction has at most one handle per structure
//! ([`Error::AlreadyOpen`]).
#![forbid(unsafe_code)]

pub mod blob;
pub mod btree;
pub mod check;
pub mod error;
mod handles;
mod open;
mod opened;
pub mod queue;
pub mod rtree;
pub mod table;

pub use error::{Error, Result};
pub use open::{Structures, StructuresMut};
