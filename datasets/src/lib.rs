//! quiredb-datasets: see ../shared/DESIGN.md.
#![forbid(unsafe_code)]

pub mod error;
pub mod meteo;

pub use error::{Error, Result};
