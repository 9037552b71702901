//! `quire`: the QuireDB command-line tool.
//!
//! Each subcommand lives in its own module under `src/cli/`; this file only parses the
//! command line and dispatches. Errors print one line on stderr and exit non-zero.
#![forbid(unsafe_code)]
// Output goes through `cli::outln!`, which returns a closed pipe's error instead of panicking.
#![deny(clippy::print_stdout)]

mod cli;

use clap::{Parser, Subcommand};

/// QuireDB command-line tool.
#[derive(Parser)]
#[command(name = "quire", version, about = "QuireDB: a multi-structure embedded database")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Create a database, run write and read transactions, print what happened.
    Demo(cli::demo::Args),
    /// Print the meta information of a database file.
    Info(cli::admin::InfoArgs),
    /// Verify every checksum and the accounting of every physical page.
    Check(cli::admin::CheckArgs),
    /// Return free space at the end of the file to the operating system.
    Compact(cli::admin::CompactArgs),
    /// Load a meteorological CSV file (progress bar, summary; --dry-run validates only).
    LoadCsv(cli::load_csv::LoadArgs),
    /// Meteorological records of one station in a time interval (B+tree).
    Range(cli::meteo_query::RangeArgs),
    /// Meteorological records whose five measures lie in a box (R*-tree).
    Window(cli::meteo_query::WindowArgs),
    /// The k meteorological records nearest to a point of the five measures (R*-tree).
    Knn(cli::meteo_query::KnnArgs),
    /// Aggregates of one measure per station and hour, day, month or year (B+tree).
    Agg(cli::meteo_agg::AggArgs),
    /// Sizes of the meteorological structures of a database.
    Stats(cli::meteo_query::StatsArgs),
    /// Write the meteorological records as Hive-partitioned Parquet or Arrow IPC files.
    #[cfg(feature = "parquet")]
    Export(cli::export::Args),
    /// Generate data sets (XML collections, XPath query sets).
    #[command(subcommand)]
    Gen(cli::r#gen::Gen),
    /// Evaluate an XPath query with the reference evaluator (the oracle; slow, simple).
    XpathRef(cli::xpath::Args),
    /// Load XML files and folders into a collection of the native XML store.
    LoadXml(cli::xml_store::LoadArgs),
    /// List XML collections, or describe one (counts, index sizes, path summary).
    XmlInfo(cli::xml_store::InfoArgs),
    /// Print one node of an XML collection: its string value, or with --xml its XML.
    XmlValue(cli::xml_store::ValueArgs),
    /// XPath over an XML collection (structural joins over the store's indexes).
    Xpath(cli::xml_query::Args),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo(args) => cli::demo::run(args),
        Command::Info(args) => cli::admin::info(args),
        Command::Check(args) => cli::admin::check(args),
        Command::Compact(args) => cli::admin::compact(args),
        Command::LoadCsv(args) => cli::load_csv::load_csv(args),
        Command::Range(args) => cli::meteo_query::range(args),
        Command::Window(args) => cli::meteo_query::window(args),
        Command::Knn(args) => cli::meteo_query::knn(args),
        Command::Agg(args) => cli::meteo_agg::run(args),
        Command::Stats(args) => cli::meteo_query::stats(args),
        #[cfg(feature = "parquet")]
        Command::Export(args) => cli::export::run(args),
        Command::Gen(command) => cli::r#gen::run(command),
        Command::XpathRef(args) => cli::xpath::run(args),
        Command::LoadXml(args) => cli::xml_store::load(args),
        Command::XmlInfo(args) => cli::xml_store::info(args),
        Command::XmlValue(args) => cli::xml_store::value(args),
        Command::Xpath(args) => cli::xml_query::run(args),
    };
    match result {
        Ok(code) => code,
        // A reader that stopped early (`quire check DB | head`) is not an error.
        Err(error) if is_broken_pipe(&error) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("quire: {}", report(&error));
            std::process::ExitCode::FAILURE
        }
    }
}

/// `error` and its causes joined by `: `, each cause left out when the text before it
/// already ends with it (the crates' errors show their source in their own message:
/// `I/O error: {source}`).
fn report(error: &anyhow::Error) -> String {
    let mut out = error.to_string();
    for cause in error.chain().skip(1) {
        let cause = cause.to_string();
        if !out.ends_with(&cause) {
            out.push_str(": ");
            out.push_str(&cause);
        }
    }
    out
}

/// True when `error` is standard output's reader having gone away.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error
        .chain()
        .any(|cause| cause.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe))
}
