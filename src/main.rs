//! `quire`: the QuireDB command-line tool.
//!
//! Each subcommand lives in its own module under `src/cli/`; this file only parses the
//! command line and dispatches. Errors print one line on stderr and exit non-zero.
#![forbid(unsafe_code)]

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
    /// Generate data sets (XML collections, XPath query sets).
    #[command(subcommand)]
    Gen(cli::r#gen::Gen),
    /// Evaluate an XPath query with the reference evaluator (the oracle; slow, simple).
    XpathRef(cli::xpath::Args),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo(args) => cli::demo::run(args),
        Command::Info(args) => cli::admin::info(args),
        Command::Check(args) => cli::admin::check(args),
        Command::Compact(args) => cli::admin::compact(args),
        Command::LoadCsv(args) => cli::load_csv::load_csv(args),
        Command::Gen(command) => cli::r#gen::run(command),
        Command::XpathRef(args) => cli::xpath::run(args),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("quire: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
