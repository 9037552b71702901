//! `quire gen …`: data-set generators.
//!
//! - `quire gen xml --kind xmark|dblp|swissprot|treebank --factor F [--seed S] [--out FILE]`
//!   streams a generated collection to stdout or FILE (factor 1 ≈ 116 MB), and prints
//!   its statistics on stderr.
//! - `quire gen queries PATH --name NAME --out DIR [--seed S] [--per-set N]` draws the
//!   QuickXDB query sets of a collection (a file, or a folder of .xml files) and writes
//!   `DIR/NAME-100.qset`, `NAME-10.qset`, `NAME-1.qset` with reference counts.
//!
//! To add a generator (e.g. `meteo`), add a variant to [`Gen`] and a match arm to
//! [`run`]; each variant owns its argument struct.
//!
//! Read next: `datasets/src/xml/mod.rs`, `datasets/src/queryset.rs`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use quiredb_datasets::queryset::{self, GeneratorOptions};
use quiredb_datasets::xml::{self, Kind};
use quiredb_xml::collection;

/// The generators of `quire gen`.
#[derive(clap::Subcommand)]
pub enum Gen {
    /// Generate an XML collection (XMark, DBLP, SwissProt or TreeBank-like).
    Xml(XmlArgs),
    /// Generate XPath query sets (QuickXDB method) with expected counts for a collection.
    Queries(QueriesArgs),
    /// Generate meteorological observations calibrated on the Beijing data (CSV).
    Meteo(super::load_csv::GenMeteoArgs),
}

/// Arguments of `quire gen xml`.
#[derive(clap::Args)]
pub struct XmlArgs {
    /// Collection kind: xmark, dblp, swissprot or treebank.
    #[arg(long)]
    kind: String,
    /// Scale factor (1 ≈ 116 MB; XMark factor 1 matches xmlgen's f=1).
    #[arg(long, default_value_t = 1.0)]
    factor: f64,
    /// Random seed (same seed, same bytes).
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Output file (default: standard output).
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Arguments of `quire gen queries`.
#[derive(clap::Args)]
pub struct QueriesArgs {
    /// The collection: an XML file or a folder of .xml files.
    path: PathBuf,
    /// Collection name used in file names (default: the file stem).
    #[arg(long)]
    name: Option<String>,
    /// Folder that receives the .qset files.
    #[arg(long)]
    out: PathBuf,
    /// Random seed.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Queries per set.
    #[arg(long, default_value_t = 50)]
    per_set: usize,
    /// Candidate queries drawn before giving up on filling every set.
    #[arg(long, default_value_t = 20_000)]
    max_attempts: usize,
    /// Also keep queries of the form `s[n/x]/n`, which BaseX 9.7.2 answers wrongly.
    #[arg(long)]
    keep_basex_bug_queries: bool,
}

/// Runs one generator.
pub fn run(command: Gen) -> anyhow::Result<ExitCode> {
    match command {
        Gen::Xml(args) => xml_collection(args),
        Gen::Queries(args) => query_sets(args),
        Gen::Meteo(args) => super::load_csv::gen_meteo(args),
    }
}

fn xml_collection(args: XmlArgs) -> anyhow::Result<ExitCode> {
    let kind: Kind = args.kind.parse()?;
    let started = std::time::Instant::now();
    let stats = match &args.out {
        Some(path) => {
            let file = std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
            xml::generate(kind, args.factor, args.seed, file)?
        }
        None => xml::generate(kind, args.factor, args.seed, std::io::stdout().lock())?,
    };
    let seconds = started.elapsed().as_secs_f64();
    eprintln!(
        "{} factor {} seed {}: {} bytes, {} elements, {} attributes, depth {}, {:.1} MB/s",
        kind.name(),
        args.factor,
        args.seed,
        stats.bytes,
        stats.elements,
        stats.attributes,
        stats.max_depth,
        stats.bytes as f64 / 1e6 / seconds.max(1e-9)
    );
    Ok(ExitCode::SUCCESS)
}

fn query_sets(args: QueriesArgs) -> anyhow::Result<ExitCode> {
    let name = match &args.name {
        Some(name) => name.clone(),
        None => collection_name(&args.path),
    };
    let sources = collection::load(&args.path)?;
    let docs = collection::parse_all(&sources)?;
    let options = GeneratorOptions {
        seed: args.seed,
        per_set: args.per_set,
        max_attempts: args.max_attempts,
        avoid_basex_bug: !args.keep_basex_bug_queries,
    };
    std::fs::create_dir_all(&args.out).with_context(|| format!("cannot create {}", args.out.display()))?;
    let mut stderr = std::io::stderr().lock();
    for set in queryset::generate_sets(&name, &docs, &options)? {
        let path = queryset::write_qset(&args.out, &set)?;
        writeln!(stderr, "{}: {} queries", path.display(), set.queries.len())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `xmark_f1.xml` → `xmark_f1`; a folder → its name.
fn collection_name(path: &std::path::Path) -> String {
    let stem = if path.is_dir() { path.file_name() } else { path.file_stem() };
    stem.map_or_else(|| "collection".into(), |s| s.to_string_lossy().into_owned())
}
