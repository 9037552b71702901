//! quiredb-datasets: see ../shared/DESIGN.md.
#![forbid(unsafe_code)]

pub mod error;
pub mod meteo;
pub mod queryset;
pub mod xml;

pub use error::{Error, Result};
