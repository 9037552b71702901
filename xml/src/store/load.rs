//! Loading documents into a collection, inside the caller's write transaction.
//!
//! Inputs are files (`.zst` files are decompressed as they stream) and folders (their
//! `.xml` files in name order — the reference evaluator's rule, `collection.rs`).
//! Documents are appended in input order after those already in the collection. Memory
//! is bounded by the parser's largest token and the shredder's buffers, not by the
//! documents.
//!
//! Small documents are parsed in parallel, a batch ahead of the shredder (`tape.rs`);
//! large ones stream. On error the transaction holds a partial load: the caller aborts
//! it (drops it), so the database is exactly as before. With [`LoadOptions::skip_bad`] each document is
//! first parsed without writing; a malformed one is listed in the summary and skipped.
//!
//! Read next: `shred.rs`.

use super::chunks::ChunkWriter;
use super::dict::Dictionary;
use super::shred::{Shredder, Targets};
use super::tape;
use super::values::ValueWriter;
use super::{component, create, read_counters, store_counters};
use crate::error::{Error, Result};
use crate::parse::{self, Event, Sink};
use quiredb_engine::{PageRead, WriteTxn};
use quiredb_structures::btree::BTree;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// How to load.
#[derive(Clone, Copy, Debug, Default)]
pub struct LoadOptions {
    /// Skip malformed documents (listed in the summary) instead of failing the load.
    pub skip_bad: bool,
}

/// Where a load is, for progress bars.
#[derive(Clone, Copy, Debug, Default)]
pub struct Progress {
    /// Input bytes read so far (compressed bytes for `.zst` files).
    pub bytes: u64,
    /// Input bytes in all (file sizes).
    pub total_bytes: u64,
    /// Documents loaded so far.
    pub documents: u64,
}

/// What a load did.
#[derive(Debug, Default)]
pub struct LoadSummary {
    /// Documents added.
    pub documents: u64,
    /// Nodes added, by kind (`Kind` order).
    pub nodes: [u64; 6],
    /// Input bytes read.
    pub bytes: u64,
    /// Distinct names and paths of the collection after the load.
    pub names: u32,
    pub paths: u32,
    /// Malformed documents skipped (with `skip_bad`), with the reason.
    pub skipped: Vec<(PathBuf, String)>,
}

/// Loads `inputs` into collection `collection` (created when absent).
pub fn load(
    txn: &WriteTxn<'_>,
    collection: &str,
    inputs: &[PathBuf],
    options: LoadOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<LoadSummary> {
    let files = expand(inputs)?;
    let sizes: Vec<u64> = files.iter().map(|f| std::fs::metadata(f).map_or(0, |m| m.len())).collect();
    let total_bytes = sizes.iter().sum();
    if txn.catalog_entry(collection)?.is_none() {
        create(txn, collection)?;
    }
    let tree = |part: &str| BTree::open(txn, component(collection, part));
    let (mut doc, mut part, mut dict_tree, mut value_tree) =
        (tree("doc")?, tree("part")?, tree("dict")?, tree("value")?);
    let mut text = tree("text")?;
    let (mut counters, uris_known) = read_counters(txn, collection)?;
    let mut dict = Dictionary::read(&dict_tree, collection, uris_known)?;
    let first_name = dict.names.len();
    let before = counters;
    let mut values = ValueWriter::default();
    let mut chunks = ChunkWriter::new(counters.streamed, txn.payload_size() - 32)?;
    let mut summary = LoadSummary::default();
    let read = AtomicU64::new(0);
    {
        let targets = Targets {
            doc: &mut doc,
            part: &mut part,
            text: &mut text,
            chunks: &mut chunks,
            values: &mut values,
            value_tree: &mut value_tree,
            dict_tree: &mut dict_tree,
            dict: &mut dict,
            counters: &mut counters,
        };
        let mut shredder = Shredder::new(targets, txn.payload_size());
        let runs = tape::runs(&sizes);
        std::thread::scope(|scope| -> Result<()> {
            let parse_run = |run: &(std::ops::Range<usize>, bool)| {
                let (range, small) = run.clone();
                let files = &files[range];
                scope.spawn(move || if small { tape::record_all(files) } else { Vec::new() })
            };
            let mut next = runs.first().map(parse_run);
            for (i, run) in runs.iter().enumerate() {
                let tapes = next.take().expect("each run is parsed ahead").join().expect("a parser thread panicked");
                next = runs.get(i + 1).map(parse_run);
                if !run.1 {
                    let file = &files[run.0.start];
                    if options.skip_bad
                        && let Err(e) = parse::parse(open_input(file, &read)?, file, &mut Validate)
                    {
                        summary.skipped.push((file.clone(), e.to_string()));
                        continue;
                    }
                    shredder.start_document()?;
                    let input = open_input(file, &read)?;
                    tape::pipeline(scope, input, file, &mut shredder)?;
                    shredder.end_document(&file.to_string_lossy())?;
                    summary.documents += 1;
                    progress(Progress {
                        bytes: read.load(Ordering::Relaxed),
                        total_bytes,
                        documents: summary.documents,
                    });
                    continue;
                }
                for (index, tape) in run.0.clone().zip(tapes) {
                    let file = &files[index];
                    read.fetch_add(sizes[index], Ordering::Relaxed);
                    let tape = match tape {
                        Ok(tape) => tape,
                        Err(e) if options.skip_bad => {
                            summary.skipped.push((file.clone(), e.to_string()));
                            continue;
                        }
                        Err(e) => return Err(e),
                    };
                    shredder.start_document()?;
                    tape.replay(&mut shredder)?;
                    shredder.end_document(&file.to_string_lossy())?;
                    summary.documents += 1;
                }
                progress(Progress { bytes: read.load(Ordering::Relaxed), total_bytes, documents: summary.documents });
            }
            Ok(())
        })?;
        shredder.finish()?;
    }
    counters.streamed = chunks.values();
    values.flush(&mut value_tree, txn.payload_size() / 4 - 64)?;
    for (key, n) in values.indexed {
        *dict.indexed.entry(key).or_insert(0) += n;
    }
    dict.recount();
    dict.store(&mut dict_tree, first_name)?;
    counters.names = dict.names.len() as u32 - 1;
    counters.paths = dict.paths.len() as u32;
    store_counters(txn, collection, &counters)?;
    summary.bytes = read.load(Ordering::Relaxed);
    summary.names = dict.names.len() as u32 - 1;
    summary.paths = dict.paths.len() as u32;
    for (i, n) in summary.nodes.iter_mut().enumerate() {
        *n = counters.nodes[i] - before.nodes[i];
    }
    Ok(summary)
}

/// Files and folders to the documents they hold, in load order.
pub fn expand(inputs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for input in inputs {
        if input.is_dir() {
            files.extend(xml_files(input)?);
        } else if input.exists() {
            files.push(input.clone());
        } else {
            let source = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file or folder");
            return Err(Error::Io { path: input.clone(), source });
        }
    }
    Ok(files)
}

/// The `.xml` files of a folder in name order (the reference evaluator's rule).
pub fn xml_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let io = |source| Error::Io { path: dir.to_path_buf(), source };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.is_file() && path.extension().is_some_and(|e| e == "xml") {
            files.push(path);
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(Error::EmptyCollection(dir.to_path_buf()));
    }
    Ok(files)
}

/// A reader over `file`, decompressing `.zst`, adding what it reads to `read`.
fn open_input<'c>(file: &Path, read: &'c AtomicU64) -> Result<Box<dyn Read + Send + 'c>> {
    let io = |source| Error::Io { path: file.to_path_buf(), source };
    let counted = Counted { inner: std::fs::File::open(file).map_err(io)?, read };
    if file.extension().is_some_and(|e| e == "zst") {
        let mut decoder = zstd::Decoder::new(counted).map_err(io)?;
        decoder.window_log_max(31).map_err(io)?;
        return Ok(Box::new(decoder));
    }
    Ok(Box::new(counted))
}

/// Counts the bytes read through it.
struct Counted<'c, R> {
    inner: R,
    read: &'c AtomicU64,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// A sink that only lets the parser check well-formedness.
struct Validate;

impl Sink for Validate {
    fn event(&mut self, _: Event<'_>) -> Result<()> {
        Ok(())
    }
}
