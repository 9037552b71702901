//! Meteorological observations: CSV loading, a calibrated generator, and the load
//! pipeline that feeds an index-building sink.
//!
//! Data flow of a load:
//!
//! ```text
//! files (files.rs: folders, .gz/.zst) ─► source.rs per input (sniff.rs: delimiter,
//!   preamble, header; transform.rs: Latin-1 → UTF-8, whitespace columns)
//!           ─► ObservationReader (schema.rs mapping, fields.rs / timefmt.rs parsing,
//!              melt.rs for wide and variable-column tables)
//!           ─► load() (pipeline.rs: skip-bad policy, batches, LoadSummary)
//!           ─► dyn ObservationSink: store::IndexSink (queue + B+tree + R*-tree in one
//!              database; store.rs has the layout) or NullSink (a dry run)
//! ```
//!
//! [`load_parallel`] (`parallel.rs`) runs the same load with the index building on a
//! second thread and the R*-tree's streaming bulk load (bounded memory): what
//! `quire load-csv --db` uses.
//!
//! Reading back: [`query::MeteoView`] (range by station and time, window and kNN over
//! the five measures, sizes); [`aggregate`] (per-station period buckets of one measure,
//! streamed over the B+tree). `quire load-csv --inspect` is [`inspect`].
//!
//! An [`Observation`] is one row: a station name, a time in seconds since
//! 1970-01-01T00:00 (civil times without a zone are taken as UTC), and the measures in
//! schema order, each `None` when missing. Alongside it the reader hands over the *raw
//! record*: the row's fields re-joined with the input's delimiter (quoted where needed),
//! without line terminator — equal to the input line for ordinary rows.
//!
//! [`generator`] writes synthetic observations in the *default schema*
//! (`station,time,temp,pres,dewp,rain,wspm`, see [`Schema::default`]) with parameters
//! fitted on the Beijing data ([`calibration`], [`fit`]).
//!
//! Speed (2 vCPU, CPU time, 10 M generated rows, 459 MB): the `csv` crate alone splits
//! 665 MB/s; with serde into typed rows 218 MB/s; this reader with validation and raw
//! records 245 MB/s (0.37× and 1.12× of those). Measure with `quire load-csv FILE
//! --parse-only [--typed]` and `--dry-run`.
//!
//! Read next: `schema.rs` (mapping and presets), `reader.rs`, `pipeline.rs`, `store.rs`.

pub mod aggregate;
#[cfg(feature = "arrow")]
pub mod arrow;
pub mod calibration;
mod chunk;
pub mod fields;
pub mod files;
pub mod fit;
pub mod generator;
pub mod inspect;
mod melt;
pub mod page_cache;
pub mod parallel;
#[cfg(feature = "parquet")]
pub mod parquet_input;
pub mod period;
pub mod pipeline;
pub mod query;
pub mod reader;
pub mod record;
pub mod schema;
pub mod sniff;
pub mod sort_feed;
mod source;
pub mod store;
pub mod timefmt;
pub mod timing;
mod transform;

pub use generator::{GeneratorConfig, ObservationGenerator};
pub use parallel::{ParallelConfig, load_parallel};
pub use period::PeriodPattern;
pub use pipeline::{Baseline, LoadOptions, LoadSummary, NullSink, ObservationSink, SkippedRow, csv_parse_only, load};
pub use query::MeteoView;
pub use reader::{ObservationReader, RawRow, ReadOutcome};
pub use schema::{
    ColumnRef, Delimiter, HeaderMode, Layout, MissingValues, Preamble, Schema, StationSpec, TextEncoding, TimeSpec,
};
pub use store::IndexSink;

/// The number of measures of the default schema and of the paper's records (dimension 5).
pub const DEFAULT_MEASURES: usize = 5;

/// Names of the default schema's measures, in order (units: °C, hPa, °C, mm/h, m/s).
pub const DEFAULT_MEASURE_NAMES: [&str; DEFAULT_MEASURES] = ["temp", "pres", "dewp", "rain", "wspm"];

/// One observation row, typed. Buffers are reused by [`ObservationReader::read`], so a
/// load allocates nothing per row in steady state.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observation {
    /// Station name (or the schema's constant station).
    pub station: String,
    /// Seconds since 1970-01-01T00:00:00 UTC.
    pub time: i64,
    /// Measures in schema order; `None` = missing (`NA`, empty, a sentinel).
    pub measures: Vec<Option<f64>>,
    /// The measures that are the R*-tree's dimensions (`--index-measures`); `None`:
    /// all of them, when there are exactly [`store::DIMENSIONS`].
    pub index_measures: Option<[usize; store::DIMENSIONS]>,
}

impl Observation {
    /// True when every measure is present (the row goes into the R-tree).
    pub fn is_complete(&self) -> bool {
        self.measures.iter().all(Option::is_some)
    }

    /// The measures as a `D`-dimensional point, or `None` when the row has a missing
    /// measure or not exactly `D` measures.
    pub fn point<const D: usize>(&self) -> Option<[f64; D]> {
        if self.measures.len() != D {
            return None;
        }
        let mut point = [0.0; D];
        for (slot, value) in point.iter_mut().zip(&self.measures) {
            *slot = (*value)?;
        }
        Some(point)
    }

    /// The R*-tree's point of this row: the [`Observation::index_measures`], or
    /// [`Observation::point`] without them; `None` when one of them is missing.
    pub fn index_point(&self) -> Option<[f64; store::DIMENSIONS]> {
        let Some(chosen) = self.index_measures else { return self.point() };
        let mut point = [0.0; store::DIMENSIONS];
        for (slot, &measure) in point.iter_mut().zip(&chosen) {
            *slot = (*self.measures.get(measure)?)?;
        }
        Some(point)
    }
}
