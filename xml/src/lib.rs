//! quiredb-xml: the native XML store, its XPath front end and its oracle (see
//! ../shared/DESIGN.md).
//!
//! - [`store`]: collections shredded into a document index and a partition index
//!   (QuickXDB's layout) with a path summary and a value index, inside the database
//!   file; loading, node values, serialisation, the checker.
//! - [`parse`]: the streaming XML parser the store loads with (roxmltree's data model,
//!   memory bounded by the largest token).
//! - [`xpath`]: XPath 1.0 — the one parser, of full expressions (`grammar.rs`,
//!   `expr.rs`), the structural subset the join engine answers, lowered from its trees
//!   (`ast.rs`, `subset.rs`, `parser.rs`), the function library and the one evaluator (`eval.rs`) every node
//!   model shares; [`reference`](mod@reference): that evaluator over a `roxmltree` DOM
//!   (and the subset's own walk), the oracle of the store's tests and of the T5
//!   benchmark, checked against lxml and BaseX; [`collection`]: loading documents for it.
//!
//! [`mix`]: a seeded XPath 1.0 query mix and comparable answers, for the tests that
//! hold the store to the reference.
//!
//! The query engine over the store is `store/query/`: structural joins for the subset,
//! the shared evaluator over labels for the rest.
#![forbid(unsafe_code)]

pub mod collection;
pub mod error;
pub mod mix;
pub mod parse;
pub mod reference;
pub mod store;
pub mod xpath;

pub use error::{Error, Result};
