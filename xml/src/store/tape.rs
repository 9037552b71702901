//! Parsing many small documents in parallel: each is parsed on a worker thread into a
//! [`Tape`] (its events, owned), and the tapes are replayed into the shredder in
//! collection order on the loading thread, while the workers parse the next batch.
//!
//! Only documents up to [`SMALL_DOCUMENT`] bytes take this path, and a batch holds at
//! most [`BATCH_BYTES`] of them, so memory stays bounded. A larger document is parsed
//! on a thread of its own into tapes of [`SEGMENT_OPS`] events, at most two ahead of
//! the shredder ([`pipeline`]): parsing and shredding overlap on two cores, memory stays
//! bounded. A document that fails to parse is reported when its turn comes, so errors
//! and `--skip-bad` behave as in the sequential path.
//!
//! Read next: `load.rs`.

use crate::error::{Error, Result};
use crate::parse::{self, Event, Sink};
use rayon::prelude::*;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Largest document parsed on a worker thread.
pub const SMALL_DOCUMENT: u64 = 1 << 20;
/// Input bytes per batch of small documents.
pub const BATCH_BYTES: u64 = 16 << 20;

/// Events per segment of a large document's tape.
pub const SEGMENT_OPS: usize = 1 << 15;

/// One event with its strings as ranges of the tape's text.
#[derive(Clone, Copy, Debug)]
enum Op {
    /// The name's and the namespace URI's ranges.
    Open((u32, u32), (u32, u32)),
    /// The name's, the URI's and the value's ranges, and whether it is an ID.
    Attribute((u32, u32), (u32, u32), (u32, u32), bool),
    Text(u32, u32),
    Comment(u32, u32),
    Pi(u32, u32, Option<(u32, u32)>),
    Namespace(Option<(u32, u32)>, (u32, u32)),
    Close,
}

/// The events of one document, owned.
#[derive(Debug, Default)]
pub struct Tape {
    text: String,
    ops: Vec<Op>,
    /// The last namespace URI put: a document's names share a few, stored once each run.
    last_uri: (u32, u32),
}

impl Tape {
    fn put(&mut self, s: &str) -> (u32, u32) {
        let start = self.text.len() as u32;
        self.text.push_str(s);
        (start, self.text.len() as u32)
    }

    /// [`Tape::put`] of a namespace URI, reusing the last one's range when equal.
    fn put_uri(&mut self, uri: &str) -> (u32, u32) {
        if self.get(self.last_uri) != uri {
            self.last_uri = self.put(uri);
        }
        self.last_uri
    }

    fn get(&self, (start, end): (u32, u32)) -> &str {
        &self.text[start as usize..end as usize]
    }

    /// Replays the events into `sink`.
    pub fn replay(&self, sink: &mut impl Sink) -> Result<()> {
        for op in &self.ops {
            let event = match *op {
                Op::Open(name, uri) => Event::Open { name: self.get(name), uri: self.get(uri) },
                Op::Attribute(name, uri, value, id) => {
                    Event::Attribute { name: self.get(name), uri: self.get(uri), value: self.get(value), id }
                }
                Op::Text(a, b) => Event::Text(self.get((a, b))),
                Op::Comment(a, b) => Event::Comment(self.get((a, b))),
                Op::Pi(a, b, value) => Event::Pi { target: self.get((a, b)), value: value.map(|v| self.get(v)) },
                Op::Namespace(prefix, uri) => {
                    Event::Namespace { prefix: prefix.map(|p| self.get(p)), uri: self.get(uri) }
                }
                Op::Close => Event::Close,
            };
            sink.event(event)?;
        }
        Ok(())
    }
}

impl Sink for Tape {
    fn event(&mut self, event: Event<'_>) -> Result<()> {
        let op = match event {
            Event::Open { name, uri } => Op::Open(self.put(name), self.put_uri(uri)),
            Event::Attribute { name, uri, value, id } => {
                let name = self.put(name);
                Op::Attribute(name, self.put_uri(uri), self.put(value), id)
            }
            Event::Text(text) => {
                let (a, b) = self.put(text);
                Op::Text(a, b)
            }
            Event::Comment(text) => {
                let (a, b) = self.put(text);
                Op::Comment(a, b)
            }
            Event::Pi { target, value } => {
                let (a, b) = self.put(target);
                Op::Pi(a, b, value.map(|v| self.put(v)))
            }
            Event::Namespace { prefix, uri } => Op::Namespace(prefix.map(|p| self.put(p)), self.put(uri)),
            Event::Close => Op::Close,
        };
        self.ops.push(op);
        Ok(())
    }
}

/// Parses `file` into a tape.
fn record(file: &Path) -> Result<Tape> {
    let io = |source| Error::Io { path: file.to_path_buf(), source };
    let input = std::fs::File::open(file).map_err(io)?;
    let mut tape = Tape::default();
    let reader: Box<dyn Read> = if file.extension().is_some_and(|e| e == "zst") {
        Box::new(zstd::Decoder::new(input).map_err(io)?)
    } else {
        Box::new(input)
    };
    parse::parse(reader, file, &mut tape)?;
    Ok(tape)
}

/// Sends a large document's events on in segments.
struct Segmenter {
    tape: Tape,
    out: std::sync::mpsc::SyncSender<Result<Tape>>,
}

impl Sink for Segmenter {
    fn event(&mut self, event: Event<'_>) -> Result<()> {
        self.tape.event(event)?;
        if self.tape.ops.len() >= SEGMENT_OPS {
            let full = std::mem::take(&mut self.tape);
            self.out.send(Ok(full)).map_err(|_| stopped())?;
        }
        Ok(())
    }
}

/// What the parser thread sees when the loading thread has stopped taking segments.
fn stopped() -> Error {
    Error::Io { path: "<load>".into(), source: std::io::Error::other("the load stopped") }
}

/// Parses `input` (document `file`) on a thread of `scope` while this thread replays
/// its events into `sink`, segment by segment. An error of either side ends both.
pub fn pipeline<'scope, S: Sink>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    input: Box<dyn Read + Send + 'scope>,
    file: &'scope Path,
    sink: &mut S,
) -> Result<()> {
    let (out, segments) = std::sync::mpsc::sync_channel(2);
    scope.spawn(move || {
        let mut segmenter = Segmenter { tape: Tape::default(), out };
        let last = parse::parse(input, file, &mut segmenter).map(|()| std::mem::take(&mut segmenter.tape));
        // A closed channel means the loading thread has already returned its error.
        let _ = segmenter.out.send(last);
    });
    for segment in segments {
        segment?.replay(sink)?;
    }
    Ok(())
}

/// Parses `files` in parallel, in order.
pub fn record_all(files: &[PathBuf]) -> Vec<Result<Tape>> {
    files.par_iter().map(|file| record(file)).collect()
}

/// Splits `files` (with their sizes) into runs: a run of small documents of at most
/// [`BATCH_BYTES`], or one large document alone (`false`).
pub fn runs(sizes: &[u64]) -> Vec<(std::ops::Range<usize>, bool)> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < sizes.len() {
        if sizes[i] > SMALL_DOCUMENT {
            runs.push((i..i + 1, false));
            i += 1;
            continue;
        }
        let (start, mut bytes) = (i, 0);
        while i < sizes.len() && sizes[i] <= SMALL_DOCUMENT && (i == start || bytes + sizes[i] <= BATCH_BYTES) {
            bytes += sizes[i];
            i += 1;
        }
        runs.push((start..i, true));
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_documents_batch_and_large_ones_stand_alone() {
        let sizes = [10, 20, SMALL_DOCUMENT + 1, 5, SMALL_DOCUMENT, 7];
        assert_eq!(runs(&sizes), vec![(0..2, true), (2..3, false), (3..6, true)]);
        let full = vec![SMALL_DOCUMENT; 17];
        assert_eq!(runs(&full), vec![(0..16, true), (16..17, true)]);
    }

    #[test]
    fn a_tape_replays_the_events_it_recorded() {
        let text = "<?p v?><a k='1'>x<!--c--><b/>&amp;y</a>";
        let mut direct = crate::parse::outline::Outline::default();
        parse::parse(text.as_bytes(), Path::new("t.xml"), &mut direct).expect("parses");
        let mut tape = Tape::default();
        parse::parse(text.as_bytes(), Path::new("t.xml"), &mut tape).expect("parses");
        let mut replayed = crate::parse::outline::Outline::default();
        tape.replay(&mut replayed).expect("replays");
        assert_eq!(direct.lines, replayed.lines);
    }
}
