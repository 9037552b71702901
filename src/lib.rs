#![doc = include_str!("../README.md")]
//!
//! ## This crate
//!
//! `quiredb` is the facade: it re-exports the crates of the workspace so that an
//! application links one crate — [`engine`] (page file, page map, buffer pool,
//! transactions, catalog), [`structures`] (B+tree, R*-tree, queue, blobs), [`xml`] and
//! [`datasets`] — and gives them one error type, [`Error`], with a `From` for each
//! crate's own. `engine/FORMAT.md` has the on-disk format.
#![forbid(unsafe_code)]

mod error;
// The column-mapping options of `quire load-csv` and the schema they build, shared with
// the Python package's `load_csv(path, **options)`. Its field docs are clap's help
// text (`year,month,day[,hour]`), not links.
#[path = "cli/load_io.rs"]
pub mod load_io;
#[allow(rustdoc::broken_intra_doc_links)]
#[path = "cli/load_schema.rs"]
pub mod load_schema;

pub use error::{Error, Result};
pub use quiredb_datasets as datasets;
pub use quiredb_engine as engine;
pub use quiredb_engine::{Database, DatabaseBuilder, Durability, Options, OwnedReadTxn, ReadTxn, WriteTxn};
pub use quiredb_structures as structures;
pub use quiredb_structures::queue::QueueDef;
pub use quiredb_structures::rtree::RTreeDef;
pub use quiredb_structures::table::TableDef;
pub use quiredb_structures::{Structures, StructuresMut};
pub use quiredb_xml as xml;
