//! QuireDB: a multi-structure embedded database engine in one page file.
//!
//! This facade re-exports the crates of the workspace so that an application links one
//! crate: [`engine`] (page file, page map, buffer pool, transactions, catalog),
//! [`structures`] (B+tree, R*-tree, queue, blobs), [`xml`] and [`datasets`].
//! Read `../shared/DESIGN.md` for the architecture and `engine/FORMAT.md` for the
//! on-disk format.
#![forbid(unsafe_code)]

pub use quiredb_datasets as datasets;
pub use quiredb_engine as engine;
pub use quiredb_engine::{Database, Durability, Error, Options, ReadTxn, Result, WriteTxn};
pub use quiredb_structures as structures;
pub use quiredb_xml as xml;
