//! quiredb-structures: the index structures of QuireDB, built only on the engine's
//! logical page API (`quiredb_engine::{PageRead, WriteTxn}`): B+tree, blobs, paged
//! queue and R*-tree, and typed tables over the B+tree ([`table`]). Each opens by name
//! through the engine's catalog.
#![forbid(unsafe_code)]

pub mod blob;
pub mod btree;
pub mod check;
pub mod error;
mod handles;
mod open;
pub mod queue;
pub mod rtree;
pub mod table;

pub use error::{Error, Result};
pub use open::{Structures, StructuresMut};
