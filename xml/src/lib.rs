//! quiredb-xml: the native XML store's front end and oracle (see ../shared/DESIGN.md).
//!
//! Today: the XPath subset parser ([`xpath`]) and the reference evaluator over a
//! `roxmltree` DOM ([`reference`]), which is the oracle the store's tests and the T5
//! benchmark check against. The store itself (shredding, labels, indexes, structural
//! joins) comes later and will sit beside these modules.
#![forbid(unsafe_code)]

pub mod collection;
pub mod error;
pub mod parse;
pub mod reference;
pub mod store;
pub mod xpath;

pub use error::{Error, Result};
