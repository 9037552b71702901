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
//! the indexed measures (1 to 8, chosen at load), sizes); [`aggregate`] (per-station period buckets of one measure,
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

use crate::error;

pub mod aggregate;
#[cfg(feature = "arrow")]
pub mod arrow;
pub mod calibration;
mod chunk;
pub mod dly_input;
pub mod fields;
pub mod files;
pub mod fit;
pub mod generator;
pub mod inspect;
pub mod isd_input;
mod load_times;
mod melt;
pub mod parallel;
#[cfg(feature = "parquet")]
pub mod parquet_input;
pub mod period;
pub mod pipeline;
pub mod query;
pub mod reader;
pub mod record;
mod rendered;
pub mod schema;
pub mod sheet_input;
pub mod sniff;
pub mod sort_feed;
mod source;
pub mod store;
pub mod timefmt;
mod transform;
mod wide;
pub mod zip_input;

pub use generator::{GeneratorConfig, ObservationGenerator};
pub use load_times::{CpuClock, LoadTimes};
pub use parallel::{ParallelConfig, load_parallel};
pub use period::PeriodPattern;
pub use pipeline::{LoadOptions, LoadSummary, NullSink, ObservationSink, SkippedRow, load};
pub use query::MeteoView;
pub use reader::{ObservationReader, RawRow, ReadOutcome};
pub use schema::{
    ColumnRef, Delimiter, HeaderMode, Layout, MissingValues, Preamble, Schema, StationSpec, TextEncoding, TimeSpec,
};
pub use store::{IndexSink, MAX_DIMENSIONS};

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
    /// the first [`store::MAX_DIMENSIONS`] measures at most.
    pub index_measures: Option<IndexMeasures>,
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

    /// Appends the R*-tree's point of this row to `out`: the
    /// [`Observation::index_measures`], or the first [`store::MAX_DIMENSIONS`]
    /// measures at most. False, and `out` as it was, when one of them is missing or
    /// there is no R*-tree ([`IndexMeasures::none`]).
    pub fn index_point(&self, out: &mut Vec<f64>) -> bool {
        let start = out.len();
        let chosen = self.index_measures.unwrap_or_else(|| IndexMeasures::first(self.measures.len()));
        if chosen.is_empty() {
            return false;
        }
        for measure in chosen.iter() {
            match self.measures.get(measure).copied().flatten() {
                Some(value) => out.push(value),
                None => {
                    out.truncate(start);
                    return false;
                }
            }
        }
        true
    }
}

/// Measures 0, 1, … : the R*-tree's dimensions without `--index-measures`.
const DEFAULT_ORDER: [u16; store::MAX_DIMENSIONS] = [0, 1, 2, 3, 4, 5, 6, 7];

/// The measures that are the R*-tree's dimensions, in order: 1 to
/// [`store::MAX_DIMENSIONS`] measure numbers (a copy costs no allocation, and only 18
/// bytes: every observation carries one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexMeasures {
    len: u8,
    measures: [u16; store::MAX_DIMENSIONS],
}

impl IndexMeasures {
    /// The measures numbered `measures` (from 0, in schema order); an error unless
    /// there are 1 to [`store::MAX_DIMENSIONS`] of them, each below 65,536.
    pub fn new(measures: &[usize]) -> error::Result<Self> {
        if !(1..=store::MAX_DIMENSIONS).contains(&measures.len()) {
            return Err(store::dimension_error(measures.len()));
        }
        let mut chosen = [0; store::MAX_DIMENSIONS];
        for (slot, &measure) in chosen.iter_mut().zip(measures) {
            *slot = u16::try_from(measure).map_err(|_| {
                error::Error::Argument(format!(
                    "measure number {measure} cannot be an R*-tree dimension (at most 65535)"
                ))
            })?;
        }
        Ok(IndexMeasures { len: measures.len() as u8, measures: chosen })
    }

    /// The first `measures` measures, at most [`store::MAX_DIMENSIONS`] (the default).
    fn first(measures: usize) -> Self {
        IndexMeasures { len: measures.min(store::MAX_DIMENSIONS) as u8, measures: DEFAULT_ORDER }
    }

    /// No measure: no R*-tree at all (`--index-measures none`).
    pub fn none() -> Self {
        IndexMeasures { len: 0, measures: [0; store::MAX_DIMENSIONS] }
    }

    /// The measure numbers, in dimension order (none for [`IndexMeasures::none`]).
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.measures[..usize::from(self.len)].iter().map(|&measure| usize::from(measure))
    }

    /// True for [`IndexMeasures::none`].
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}
