//! `quire load-xml`, `quire xml-info`, `quire xml-value`: the native XML store from the
//! command line.
//!
//! `load-xml` loads files and folders into a collection in one transaction (a failure
//! leaves the database as it was; `--skip-bad` lists and skips malformed documents);
//! `xml-info` lists collections or describes one (counts, index sizes, the path
//! summary); `xml-value` prints one node's string value or its XML.
//!
//! Read next: `xml/src/store/mod.rs` (the layout), `xml/src/store/load.rs`.

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use quiredb_engine::{Database, Durability, Options, PageRead};
use quiredb_xml::store::{self, Kind, LoadOptions, XmlStore};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `quire load-xml`.
#[derive(clap::Args)]
pub struct LoadArgs {
    /// Database file (created when absent).
    pub db: PathBuf,
    /// Collection name (created when absent; documents are appended otherwise).
    pub name: String,
    /// XML files (`.zst` allowed) and folders (their `.xml` files in name order).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Skip malformed documents (listed at the end) instead of failing the load.
    #[arg(long)]
    pub skip_bad: bool,
    /// Buffer pool size in MiB.
    #[arg(long, default_value_t = 256)]
    pub cache_mib: usize,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// Arguments of `quire xml-info`.
#[derive(clap::Args)]
pub struct InfoArgs {
    /// Database file.
    pub db: PathBuf,
    /// Collection to describe (all collections are listed without it).
    pub name: Option<String>,
    /// Print the path summary as a tree.
    #[arg(long)]
    pub paths: bool,
}

/// Arguments of `quire xml-value`.
#[derive(clap::Args)]
pub struct ValueArgs {
    /// Database file.
    pub db: PathBuf,
    /// Collection name.
    pub name: String,
    /// The node's number (its pre, as queries report it).
    pub node: u64,
    /// Print the node as XML instead of its string value.
    #[arg(long)]
    pub xml: bool,
}

fn open_or_create(path: &PathBuf, cache_mib: usize) -> Result<Database> {
    let builder = Database::builder().cache_bytes(cache_mib << 20);
    let db = if path.exists() { builder.open(path) } else { builder.create(path) };
    db.with_context(|| format!("cannot open {}", path.display()))
}

pub(crate) fn open_read_only(path: &PathBuf) -> Result<Database> {
    open_read_only_with(path, Options::default())
}

/// [`open_read_only`] with a buffer pool of `cache_mib` MiB.
pub(crate) fn open_read_only_cached(path: &PathBuf, cache_mib: usize) -> Result<Database> {
    let mut options = Options::default();
    options.cache_bytes = cache_mib << 20;
    open_read_only_with(path, options)
}

fn open_read_only_with(path: &PathBuf, options: Options) -> Result<Database> {
    Database::open_read_only(path, options).with_context(|| format!("cannot open {}", path.display()))
}

/// Loads documents into a collection and prints a summary.
pub fn load(args: LoadArgs) -> Result<ExitCode> {
    let db = open_or_create(&args.db, args.cache_mib)?;
    let bar = progress_bar(args.quiet);
    let started = Instant::now();
    let txn = db.begin_write()?;
    let options = LoadOptions { skip_bad: args.skip_bad };
    let summary = store::load(&txn, &args.name, &args.paths, options, &mut |p| {
        bar.set_length(p.total_bytes);
        bar.set_position(p.bytes);
        bar.set_message(format!("{} documents", p.documents));
    })?;
    txn.commit(Durability::default())?;
    bar.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    let bytes = std::fs::metadata(&args.db)?.len();
    let nodes: u64 = summary.nodes.iter().sum();
    outln!("collection     {}", args.name)?;
    outln!("documents      {}", summary.documents)?;
    out!("nodes          {nodes} (")?;
    for (i, kind) in Kind::ALL.iter().enumerate() {
        out!("{}{} {}", if i > 0 { ", " } else { "" }, summary.nodes[i], kind.name())?;
    }
    outln!(")")?;
    outln!("names, paths   {} distinct names, {} distinct paths", summary.names, summary.paths)?;
    outln!("time           {seconds:.2} s, {:.1} MB/s", summary.bytes as f64 / 1e6 / seconds.max(1e-9))?;
    outln!("database       {bytes} bytes")?;
    for (file, reason) in &summary.skipped {
        outln!("skipped        {}: {reason}", file.display())?;
    }
    Ok(ExitCode::SUCCESS)
}

fn progress_bar(quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {bytes_per_sec} {msg}") {
        bar.set_style(style);
    }
    bar
}

/// Lists collections, or describes one.
pub fn info(args: InfoArgs) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    let db = open_read_only(&args.db)?;
    let txn = db.begin_read()?;
    let Some(name) = args.name else {
        for name in store::collections(&txn)? {
            let store = XmlStore::open(&txn, &name)?;
            let c = store.counters();
            writeln!(out, "{name:<24} {} documents, {} nodes", c.documents, c.next_pre)?;
        }
        return Ok(ExitCode::SUCCESS);
    };
    let store = XmlStore::open(&txn, &name)?;
    let c = store.counters();
    writeln!(out, "collection     {name}")?;
    writeln!(out, "documents      {}", c.documents)?;
    writeln!(out, "nodes          {}", c.next_pre)?;
    for (i, kind) in Kind::ALL.iter().enumerate() {
        writeln!(out, "  {:<22} {}", kind.name(), c.nodes[i])?;
    }
    writeln!(out, "names, paths   {} names, {} paths", c.names, c.paths)?;
    print_namespaces(&mut out, store.dictionary())?;
    writeln!(out, "streamed       {} values over {} bytes", c.streamed, quiredb_xml::store::format::INLINE_MAX)?;
    for index in store.index_pages()? {
        let kib = index.pages * (txn.payload_size() as u64 + quiredb_engine::HEADER_SIZE as u64) / 1024;
        let fill = index.leaf_fill.map(|f| format!(", leaves {:.0} % full", f * 100.0)).unwrap_or_default();
        writeln!(out, "  {:<22} {} entries, {} pages ({kib} KiB{fill})", index.index, index.entries, index.pages)?;
    }
    if args.paths {
        print_paths(&store)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The prefixes the names are written with and their URIs: what a query's `p:name`
/// stands for unless `--ns` binds `p` (a prefix listed twice must be bound).
fn print_namespaces(out: &mut impl Write, dict: &quiredb_xml::store::Dictionary) -> Result<()> {
    if !dict.uris_known {
        return Ok(writeln!(
            out,
            "namespaces     not kept (loaded by an older QuireDB: load again to query by namespace)"
        )?);
    }
    let pairs = dict.namespaces();
    if pairs.is_empty() {
        writeln!(out, "namespaces     none")?;
    }
    for (i, (prefix, uri)) in pairs.iter().enumerate() {
        let label = if i == 0 { "namespaces" } else { "" };
        let prefix = if prefix.is_empty() { "(default)" } else { prefix };
        writeln!(out, "{label:<14} {prefix} = {uri}")?;
    }
    Ok(())
}

/// The path summary as an indented tree with counts.
fn print_paths<T: PageRead>(store: &XmlStore<'_, T>) -> Result<()> {
    let dict = store.dictionary();
    let mut children: Vec<Vec<u32>> = vec![Vec::new(); dict.paths.len()];
    for (id, path) in dict.paths.iter().enumerate().skip(1) {
        children[path.parent as usize].push(id as u32);
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut stack = vec![(0u32, 0usize)];
    while let Some((id, depth)) = stack.pop() {
        let (step, count) = (dict.step_text(id), dict.paths[id as usize].count);
        writeln!(out, "{:indent$}{step}  {count}", "", indent = depth * 2)?;
        for &child in children[id as usize].iter().rev() {
            stack.push((child, depth + 1));
        }
    }
    Ok(())
}

/// Prints one node's string value or XML.
pub fn value(args: ValueArgs) -> Result<ExitCode> {
    let db = open_read_only(&args.db)?;
    let txn = db.begin_read()?;
    let store = XmlStore::open(&txn, &args.name)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.xml {
        store.write_xml(args.node, &mut out)?;
    } else {
        let mut value = Vec::new();
        store.string_value(args.node, &mut value)?;
        out.write_all(&value)?;
    }
    writeln!(out)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
