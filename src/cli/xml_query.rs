//! `quire xpath DB NAME 'QUERY' [--count | --values | --xml] [--explain] [--limit N]
//! [--threads N] [--repeat N] [--ns PREFIX=URI]… [--var NAME=VALUE]… [--var-number NAME=NUMBER]…`:
//! XPath over a collection of the native XML store.
//!
//! Output, one result per line in document order: by default the node's number (its
//! pre, for `quire xml-value`) and its path; `--values` its string value (line breaks
//! inside a value printed as they are); `--xml` the node serialised; `--count` only the
//! number of results. `--explain` runs the query and prints the plan with each
//! operator's rows and time instead of the results. A closed pipe (`| head`) ends
//! output quietly. An expression whose value is a number, a string or a boolean
//! (`count(//item)`, `name(/*)`, `//a = 3`) prints that value, XPath's string form.
//! A prefix in a name test (`//dc:creator`) is the URI `--ns` binds it to, or else the
//! one URI the collection's names use with it; `//creator` matches the local name in
//! any namespace. `$name` is the string `--var` (or the number `--var-number`) binds.
//!
//! Read next: `xml/src/store/query/mod.rs` (the engine).

use anyhow::Result;
use quiredb_engine::PageRead;
use quiredb_xml::store::{Prepared, XmlStore};
use quiredb_xml::xpath::bindings::{Atom, Bindings};
use quiredb_xml::xpath::expr::Type;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `quire xpath`.
#[derive(clap::Args)]
pub struct Args {
    /// Database file.
    db: PathBuf,
    /// Collection name.
    name: String,
    /// The XPath query. A query that starts with `-` (`-count(//a)`) is read as the
    /// query, not as an option.
    #[arg(allow_hyphen_values = true)]
    query: String,
    /// Print only the number of results.
    #[arg(long, conflicts_with_all = ["values", "xml"])]
    count: bool,
    /// Print each result's string value.
    #[arg(long, conflicts_with = "xml")]
    values: bool,
    /// Print each result serialised as XML.
    #[arg(long)]
    xml: bool,
    /// Run the query and print its plan with each operator's rows and time.
    #[arg(long)]
    explain: bool,
    #[command(flatten)]
    bindings: BindingArgs,
    /// Print at most this many results.
    #[arg(long)]
    limit: Option<usize>,
    /// Run the query this many times first (warm; with --explain the rows and times
    /// are totals over all runs).
    #[arg(long, default_value_t = 1)]
    repeat: usize,
    /// Split the query across this many threads where its plan allows.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Buffer pool size in MiB.
    #[arg(long, default_value_t = 256)]
    cache_mib: usize,
    /// Write the results to --out in this format instead of printing them: `parquet`,
    /// one row per node (pre, size, level, name, path, string value).
    #[cfg(feature = "parquet")]
    #[arg(long, value_enum, requires = "out")]
    format: Option<super::xpath_parquet::Format>,
    /// The file of --format.
    #[cfg(feature = "parquet")]
    #[arg(long, requires = "format")]
    out: Option<PathBuf>,
}

/// Prints the number, string or boolean an expression gives (`count(//a)`), with
/// `--explain` its plan and time too.
fn print_value<T: PageRead>(prepared: &mut Prepared<'_, '_, T>, args: &Args, out: &mut impl Write) -> Result<ExitCode> {
    let started = Instant::now();
    for _ in 1..args.repeat {
        prepared.value()?;
    }
    let value = prepared.value()?;
    let elapsed = started.elapsed() / args.repeat.max(1) as u32;
    let text = prepared.value_string(&value)?;
    if args.explain {
        write!(out, "{}", prepared.explain())?;
        writeln!(out, "value {text} in {:.3} ms a run", elapsed.as_secs_f64() * 1e3)?;
    } else {
        writeln!(out, "{text}")?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// What a query's prefixes and variables are bound to (`quire xpath`, `xpath-ref`).
#[derive(clap::Args)]
pub struct BindingArgs {
    /// Bind a namespace prefix of the query to a URI (repeatable). Unbound prefixes
    /// stand for the one URI the collection's names use with them.
    #[arg(long = "ns", value_name = "PREFIX=URI", value_parser = Bindings::parse_namespace)]
    ns: Vec<(String, String)>,
    /// Bind `$NAME` to a string (repeatable): no quoting, any characters.
    #[arg(long = "var", value_name = "NAME=VALUE", value_parser = Bindings::parse_variable)]
    var: Vec<(String, String)>,
    /// Bind `$NAME` to a number (repeatable).
    #[arg(long = "var-number", value_name = "NAME=NUMBER", value_parser = Bindings::parse_number)]
    var_number: Vec<(String, f64)>,
    /// Read a name test without a prefix as XPath 1.0 does (lxml, BaseX): names in no
    /// namespace only. Without it, `title` matches that local name in any namespace.
    #[arg(long)]
    strict_names: bool,
    /// With --strict-names implied: element name tests without a prefix are in this
    /// namespace (XPath 2.0's default element namespace); attributes stay in none.
    #[arg(long, value_name = "URI")]
    default_ns: Option<String>,
}

impl BindingArgs {
    /// The bindings, in order (a later one of a name wins; numbers after strings).
    pub fn bindings(&self) -> Bindings {
        let mut bindings = Bindings::new();
        for (prefix, uri) in &self.ns {
            bindings.namespace(prefix, uri);
        }
        for (name, value) in &self.var {
            bindings.variable(name, Atom::String(value.clone()));
        }
        for (name, value) in &self.var_number {
            bindings.variable(name, Atom::Number(*value));
        }
        if self.strict_names || self.default_ns.is_some() {
            bindings.strict_names(self.default_ns.as_deref());
        }
        bindings
    }
}

/// Runs the query and prints what was asked.
pub fn run(args: Args) -> Result<ExitCode> {
    let db = super::xml_store::open_read_only_cached(&args.db, args.cache_mib)?;
    let txn = db.begin_read()?;
    let store = XmlStore::open(&txn, &args.name)?;
    let mut prepared = store.prepare_with(&args.query, &args.bindings.bindings())?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    if prepared.result_type() != Type::Nodes {
        return print_value(&mut prepared, &args, &mut out);
    }
    if args.count && !args.explain {
        for _ in 1..args.repeat {
            prepared.count()?;
        }
        writeln!(out, "{}", prepared.count()?)?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let started = Instant::now();
    let begin = || Ok(db.begin_read()?);
    for _ in 1..args.repeat {
        prepared.run_parallel(args.threads, begin)?;
    }
    let labels = prepared.run_parallel(args.threads, begin)?.to_vec();
    let elapsed = started.elapsed() / args.repeat.max(1) as u32;
    if args.explain {
        write!(out, "{}", prepared.explain())?;
        writeln!(out, "{} results in {:.3} ms a run", labels.len(), elapsed.as_secs_f64() * 1e3)?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    #[cfg(feature = "parquet")]
    if let Some(path) = &args.out {
        let written = super::xpath_parquet::write(&store, &mut prepared, &labels, path)?;
        eprintln!("{written} results written to {}", path.display());
        return Ok(ExitCode::SUCCESS);
    }
    let dict = store.dictionary();
    let mut value = Vec::new();
    for label in labels.iter().take(args.limit.unwrap_or(usize::MAX)) {
        if args.values {
            value.clear();
            prepared.string_value(label.pre, &mut value)?;
            out.write_all(&value)?;
        } else if args.xml {
            store.write_xml(label.pre, &mut out)?;
        } else {
            write!(out, "{}\t{}", label.pre, dict.path_text(label.path))?;
        }
        writeln!(out)?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
