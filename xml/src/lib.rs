//! quiredb-xml: the native XML store, its XPath front end and its oracle (see
//! ../shared/DESIGN.md).
//!
//! - [`store`]: collections shredded into a document index and a partition index
//!   (QuickXDB's layout) with a path summary and a value index, inside the database
//!   file; loading, node values, serialisation, the checker.
//! - [`parse`]: the streaming XML parser the store loads with (roxmltree's data model,
//!   memory bounded by the largest token).
//! - [`xpath`]: the XPath subset parser; [`reference`](mod@reference): the evaluator over
//!   a `roxmltree` DOM, the oracle of the store's tests and of the T5 benchmark;
//!   [`collection`]: loading documents for it.
//!
//! The query engine over the store (structural joins) comes next and will sit beside
//! these modules.
#![forbid(unsafe_code)]

pub mod collection;
pub mod error;
pub mod parse;
pub mod reference;
pub mod store;
pub mod xpath;

pub use error::{Error, Result};
