//! Integration tests of `quiredb_datasets::meteo`: the real weather files, malformed
//! input, and the generator. One test binary; the modules split it by subject.
//!
//! The real files are read from `../shared/data/weather` (relative to the repository
//! root); when that folder is absent the tests that need it print a message and return.
#![forbid(unsafe_code)]

mod dimensions;
mod generator;
mod layouts;
mod malformed;
mod parallel;
mod real_files;
mod store;

use quiredb_datasets::meteo::{LoadOptions, LoadSummary, NullSink, ObservationReader, Schema, load};

/// Loads `bytes` with `schema` into a [`NullSink`], with or without skipping bad rows.
pub fn load_bytes(bytes: &[u8], schema: &Schema, skip_bad: bool) -> quiredb_datasets::Result<LoadSummary> {
    let mut reader = ObservationReader::new(bytes, schema)?;
    let options = LoadOptions { skip_bad, ..LoadOptions::default() };
    load(&mut reader, &mut NullSink::default(), options, &mut |_, _| {})
}
