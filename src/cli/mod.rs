//! The subcommands of `quire`, one module each. Every `run` returns the exit code or an
//! error that `main` prints as one line.
//!
//! Standard output is written through [`outln!`] and [`out!`], never `println!`: they
//! return the write's error, so a reader that goes away (`quire stats DB | head -3`)
//! ends the command quietly (`main` takes a broken pipe for success) instead of a panic.

/// `println!` that returns standard output's `io::Result` instead of panicking on a
/// failed write; callers end it with `?`.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
    }};
}

/// `print!` that returns standard output's `io::Result`, as [`outln!`] does.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($arg)*)
    }};
}

pub mod admin;
pub mod demo;
pub mod demo_btree;
pub mod demo_meteo;
pub mod demo_queue;
pub mod demo_rtree;
pub mod demo_xml;
#[cfg(feature = "parquet")]
pub mod export;
pub mod r#gen;
pub mod inspect;
pub mod load_clock;
pub mod load_csv;
pub use quiredb::{load_io, load_schema};
pub mod load_speed;
pub mod meteo_agg;
pub mod meteo_output;
pub mod meteo_query;
pub mod xml_query;
pub mod xml_store;
pub mod xpath;
#[cfg(feature = "parquet")]
pub mod xpath_parquet;
