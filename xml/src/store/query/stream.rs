//! Label streams: the labels of a step's partitions in document order, filtered to the
//! step's paths, that can jump forward ([`SourceStream::seek`]) without decoding the
//! blocks in between — the galloping half of every structural join.
//!
//! A [`PartState`] is one partition's position: the current block's labels (already
//! path-filtered) and where the next block starts. It holds no borrow, so the buffers
//! live in the prepared query and are reused run after run; each block is found by a
//! fresh B+tree descent (a seek or the key after the current block's first pre), which
//! costs about what decoding a block does and keeps no page pinned between blocks.
//! Several partitions (`*`, `node()`, names in several namespaces) merge by smallest pre.
//!
//! Read next: `join.rs`, which drives these streams.

use super::paths::PathSet;
use super::plan::{Part, Source};
use crate::error::Result;
use crate::store::format::{Kind, part_key, split_part_key};
use crate::store::record::{Label, decode_part_block};
use crate::store::{XmlStore, corrupted};
use quiredb_engine::PageRead;

/// The position of a stream in one partition.
#[derive(Debug)]
pub struct PartState {
    kind: Kind,
    name: u32,
    filtered: bool,
    /// Labels of the current block (path-filtered), from `at` on still to come.
    labels: Vec<Label>,
    at: usize,
    /// First pre of the current block, and the last pre it covers (before filtering).
    first: u64,
    last: u64,
    /// No block loaded yet, or none after the current one.
    loaded: bool,
    exhausted: bool,
    bytes: Vec<u8>,
}

impl Default for PartState {
    fn default() -> Self {
        PartState {
            kind: Kind::Document,
            name: 0,
            filtered: false,
            labels: Vec::new(),
            at: 0,
            first: 0,
            last: 0,
            loaded: false,
            exhausted: false,
            bytes: Vec::new(),
        }
    }
}

impl PartState {
    fn reset(&mut self, part: &Part) {
        self.kind = part.kind;
        self.name = part.name;
        self.filtered = part.filtered;
        self.labels.clear();
        self.at = 0;
        self.loaded = false;
        self.exhausted = false;
    }
}

/// A stream over the partitions of one [`Source`].
pub struct SourceStream<'a, 't, T: PageRead> {
    store: &'a XmlStore<'t, T>,
    paths: &'a PathSet,
    parts: &'a mut [PartState],
    /// The part holding the smallest next label, when known.
    current: Option<usize>,
}

impl<'a, 't, T: PageRead> SourceStream<'a, 't, T> {
    /// A stream over `source`, using (and growing) the buffers in `states`.
    pub fn open(store: &'a XmlStore<'t, T>, source: &'a Source, states: &'a mut Vec<PartState>) -> Self {
        if states.len() < source.parts.len() {
            states.resize_with(source.parts.len(), PartState::default);
        }
        let parts = &mut states[..source.parts.len()];
        for (state, part) in parts.iter_mut().zip(&source.parts) {
            state.reset(part);
        }
        SourceStream { store, paths: &source.paths, parts, current: None }
    }

    /// The next label, without consuming it.
    pub fn peek(&mut self) -> Result<Option<Label>> {
        if let Some(i) = self.current {
            return Ok(Some(self.parts[i].labels[self.parts[i].at]));
        }
        let mut best: Option<(usize, Label)> = None;
        for i in 0..self.parts.len() {
            if let Some(label) = self.peek_part(i)?
                && best.is_none_or(|(_, b)| label.pre < b.pre)
            {
                best = Some((i, label));
            }
        }
        self.current = best.map(|(i, _)| i);
        Ok(best.map(|(_, l)| l))
    }

    /// Consumes the label [`peek`](Self::peek) returned.
    pub fn advance(&mut self) {
        if let Some(i) = self.current.take() {
            self.parts[i].at += 1;
        }
    }

    /// Moves to the first label with pre ≥ `pre` (forward only).
    pub fn seek(&mut self, pre: u64) -> Result<()> {
        self.current = None;
        for i in 0..self.parts.len() {
            let state = &mut self.parts[i];
            if state.exhausted {
                state.at = state.labels.len();
            } else if state.loaded && pre <= state.last {
                let from = state.at;
                state.at = from + state.labels[from..].partition_point(|l| l.pre < pre);
            } else {
                self.load(i, pre, false)?;
            }
        }
        Ok(())
    }

    /// The next label of part `i`, loading blocks as needed.
    fn peek_part(&mut self, i: usize) -> Result<Option<Label>> {
        loop {
            let state = &self.parts[i];
            if let Some(&label) = state.labels.get(state.at) {
                return Ok(Some(label));
            }
            if state.exhausted {
                return Ok(None);
            }
            let (loaded, first) = (state.loaded, state.first);
            if loaded {
                self.load(i, first.saturating_add(1), true)?;
            } else {
                self.load(i, 0, false)?;
            }
        }
    }

    /// Loads a block of part `i` and positions at its first label with pre ≥ `pre`
    /// (moving on to later blocks while none is): the block holding `pre`, or with
    /// `after` the first block starting at or after `pre`.
    fn load(&mut self, i: usize, pre: u64, after: bool) -> Result<()> {
        let state = &mut self.parts[i];
        let mut cursor = self.store.part.cursor();
        let key = part_key(state.kind, state.name, pre);
        let mine = |key: Option<&[u8]>| {
            key.and_then(split_part_key).filter(|&(k, n, _)| (k, n) == (state.kind, state.name)).map(|(_, _, f)| f)
        };
        let mut first = None;
        if !after {
            cursor.seek_floor(&key)?;
            first = mine(cursor.key());
        }
        if first.is_none() {
            cursor.seek(&key)?;
            first = mine(cursor.key());
        }
        let from = if after { 0 } else { pre };
        loop {
            let Some(block_first) = first else {
                state.labels.clear();
                state.at = 0;
                state.exhausted = true;
                return Ok(());
            };
            cursor.value(&mut state.bytes)?;
            state.labels.clear();
            decode_part_block(state.kind, block_first, &state.bytes, self.store.dictionary.paths(), &mut state.labels)
                .map_err(|reason| {
                    corrupted(&self.store.name, block_first, format!("partition block {block_first}: {reason}"))
                })?;
            state.first = block_first;
            state.last = state.labels.last().map_or(block_first, |l| l.pre);
            state.loaded = true;
            if state.filtered {
                let paths = self.paths;
                state.labels.retain(|l| paths.contains(l.path));
            }
            state.at = state.labels.partition_point(|l| l.pre < from);
            if state.at < state.labels.len() {
                return Ok(());
            }
            cursor.move_next()?;
            first = mine(cursor.key());
        }
    }
}
