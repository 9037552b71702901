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
    if txn.catalog_entry(collection)?.is_none() {
        create(txn, collection)?;
    }
    let tree = |part: &str| BTree::open(txn, component(collection, part));
    let (mut doc, mut part, mut dict_tree, mut value_tree) =
        (tree("doc")?, tree("part")?, tree("dict")?, tree("value")?);
    let mut text = tree("text")?;
    let (mut counters, uris_known) = read_counters(txn, collection)?;
    let mut dict = Dictionary::read(&dict_tree, collection, uris_known)?;
    let (first_name, before) = (dict.names.len(), counters);
    let mut values = ValueWriter::default();
    let mut chunks = ChunkWriter::new(counters.streamed, txn.payload_size() - 32)?;
    let read = AtomicU64::new(0);
    let mut feed = Feed {
        files: &files,
        sizes: &sizes,
        total_bytes: sizes.iter().sum(),
        read: &read,
        skip_bad: options.skip_bad,
        summary: LoadSummary::default(),
        progress,
    };
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
        feed.all(&mut shredder)?;
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
    let mut summary = feed.summary;
    summary.bytes = read.load(Ordering::Relaxed);
    summary.names = dict.names.len() as u32 - 1;
    summary.paths = dict.paths.len() as u32;
    for (i, n) in summary.nodes.iter_mut().enumerate() {
        *n = counters.nodes[i] - before.nodes[i];
    }
    Ok(summary)
}

/// The documents of a load on their way to the shredder, with what is reported.
struct Feed<'a, 'p> {
    files: &'a [PathBuf],
    sizes: &'a [u64],
    total_bytes: u64,
    /// Input bytes read so far (by the streaming readers too).
    read: &'a AtomicU64,
    skip_bad: bool,
    summary: LoadSummary,
    progress: &'p mut dyn FnMut(Progress),
}

impl<'a> Feed<'a, '_> {
    /// Shreds every document in load order. Files come in runs (`tape::runs`): a run of
    /// small files is parsed to tapes on a thread while the run before it is shredded;
    /// a large file is a run of its own and streams.
    fn all(&mut self, shredder: &mut Shredder<'_, '_, '_>) -> Result<()> {
        let (files, runs) = (self.files, tape::runs(self.sizes));
        std::thread::scope(|scope| -> Result<()> {
            let parse_run = |run: &(std::ops::Range<usize>, bool)| {
                let (range, small) = run.clone();
                let files = &files[range];
                scope.spawn(move || if small { tape::record_all(files) } else { Vec::new() })
            };
            let mut next = runs.first().map(parse_run);
            for (i, (range, small)) in runs.iter().enumerate() {
                let tapes = next.take().expect("each run is parsed ahead").join().expect("a parser thread panicked");
                next = runs.get(i + 1).map(parse_run);
                match small {
                    true => self.replay(range.clone(), tapes, shredder)?,
                    false => self.stream(scope, &files[range.start], shredder)?,
                }
                self.report();
            }
            Ok(())
        })
    }

    /// Shreds a large file as the parser reads it (with `skip_bad`, after a parse that
    /// writes nothing has found it well formed).
    fn stream<'s>(
        &mut self,
        scope: &'s std::thread::Scope<'s, '_>,
        file: &'a Path,
        shredder: &mut Shredder<'_, '_, '_>,
    ) -> Result<()>
    where
        'a: 's,
    {
        if self.skip_bad
            && let Err(e) = parse::parse(open_input(file, self.read)?, file, &mut Validate)
        {
            self.summary.skipped.push((file.to_path_buf(), e.to_string()));
            return Ok(());
        }
        shredder.start_document()?;
        tape::pipeline(scope, open_input(file, self.read)?, file, shredder)?;
        shredder.end_document(&file.to_string_lossy())?;
        self.summary.documents += 1;
        Ok(())
    }

    /// Shreds the tapes of the small files `range` (a malformed one is skipped with
    /// `skip_bad`, else fails the load).
    fn replay(
        &mut self,
        range: std::ops::Range<usize>,
        tapes: Vec<Result<tape::Tape>>,
        shredder: &mut Shredder<'_, '_, '_>,
    ) -> Result<()> {
        for (index, tape) in range.zip(tapes) {
            let file = &self.files[index];
            self.read.fetch_add(self.sizes[index], Ordering::Relaxed);
            let tape = match tape {
                Ok(tape) => tape,
                Err(e) if self.skip_bad => {
                    self.summary.skipped.push((file.clone(), e.to_string()));
                    continue;
                }
                Err(e) => return Err(e),
            };
            shredder.start_document()?;
            tape.replay(shredder)?;
            shredder.end_document(&file.to_string_lossy())?;
            self.summary.documents += 1;
        }
        Ok(())
    }

    fn report(&mut self) {
        let (bytes, documents) = (self.read.load(Ordering::Relaxed), self.summary.documents);
        (self.progress)(Progress { bytes, total_bytes: self.total_bytes, documents });
    }
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
