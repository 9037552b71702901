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
use std::cmp::Reverse;
use std::collections::BinaryHeap;

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

/// The reusable buffers of a stream: one state per partition and the merge heap.
#[derive(Debug, Default)]
pub struct StreamBuffers {
    parts: Vec<PartState>,
    heap: BinaryHeap<Reverse<(u64, u32)>>,
}

/// A stream over the partitions of one [`Source`], merged by pre through a heap of
/// the partitions' next labels.
pub struct SourceStream<'a, 't, T: PageRead> {
    store: &'a XmlStore<'t, T>,
    paths: &'a PathSet,
    parts: &'a mut [PartState],
    heap: &'a mut BinaryHeap<Reverse<(u64, u32)>>,
    /// The heap holds every partition's next label.
    started: bool,
    /// No label above this pre is wanted: blocks starting beyond it are not read.
    limit: u64,
}

impl<'a, 't, T: PageRead> SourceStream<'a, 't, T> {
    /// A stream over `source`, using (and growing) `buffers`.
    pub fn open(store: &'a XmlStore<'t, T>, source: &'a Source, buffers: &'a mut StreamBuffers) -> Self {
        if buffers.parts.len() < source.parts.len() {
            buffers.parts.resize_with(source.parts.len(), PartState::default);
        }
        let parts = &mut buffers.parts[..source.parts.len()];
        for (state, part) in parts.iter_mut().zip(&source.parts) {
            state.reset(part);
        }
        buffers.heap.clear();
        SourceStream { store, paths: &source.paths, parts, heap: &mut buffers.heap, started: false, limit: u64::MAX }
    }

    /// Reads no block that starts above pre `limit` (a join needs nothing past its
    /// context's last subtree; without this a path-filtered partition would be read
    /// to its end looking for a next label that passes the filter).
    pub fn limit(mut self, limit: u64) -> Self {
        self.limit = limit;
        self
    }

    /// The next label, without consuming it.
    pub fn peek(&mut self) -> Result<Option<Label>> {
        if !self.started {
            self.start()?;
        }
        Ok(self.heap.peek().map(|Reverse((_, i))| {
            let state = &self.parts[*i as usize];
            state.labels[state.at]
        }))
    }

    /// Consumes the label [`peek`](Self::peek) returned.
    pub fn advance(&mut self) -> Result<()> {
        let Some(mut top) = self.heap.peek_mut() else { return Ok(()) };
        let i = top.0.1;
        let state = &mut self.parts[i as usize];
        state.at += 1;
        match peek_part(self.store, self.paths, self.limit, state)? {
            Some(label) => top.0 = (label.pre, i),
            None => {
                std::collections::binary_heap::PeekMut::pop(top);
            }
        }
        Ok(())
    }

    /// Moves to the first label with pre ≥ `pre` (forward only).
    pub fn seek(&mut self, pre: u64) -> Result<()> {
        if !self.started {
            for state in self.parts.iter_mut() {
                seek_part(self.store, self.paths, self.limit, state, pre)?;
            }
            return self.start();
        }
        while let Some(&Reverse((next, i))) = self.heap.peek() {
            if next >= pre {
                break;
            }
            self.heap.pop();
            let state = &mut self.parts[i as usize];
            seek_part(self.store, self.paths, self.limit, state, pre)?;
            if let Some(label) = peek_part(self.store, self.paths, self.limit, state)? {
                self.heap.push(Reverse((label.pre, i)));
            }
        }
        Ok(())
    }

    /// Fills the heap with every partition's next label.
    fn start(&mut self) -> Result<()> {
        self.started = true;
        self.heap.clear();
        for (i, state) in self.parts.iter_mut().enumerate() {
            if let Some(label) = peek_part(self.store, self.paths, self.limit, state)? {
                self.heap.push(Reverse((label.pre, i as u32)));
            }
        }
        Ok(())
    }
}

/// Moves one partition to its first label with pre ≥ `pre`.
fn seek_part<T: PageRead>(
    store: &XmlStore<'_, T>,
    paths: &PathSet,
    limit: u64,
    state: &mut PartState,
    pre: u64,
) -> Result<()> {
    if state.exhausted {
        state.at = state.labels.len();
    } else if state.loaded && pre <= state.last {
        let from = state.at.min(state.labels.len());
        state.at = from + state.labels[from..].partition_point(|l| l.pre < pre);
    } else {
        load(store, paths, limit, state, pre, false)?;
    }
    Ok(())
}

/// The next label of one partition, loading blocks as needed.
fn peek_part<T: PageRead>(
    store: &XmlStore<'_, T>,
    paths: &PathSet,
    limit: u64,
    state: &mut PartState,
) -> Result<Option<Label>> {
    loop {
        if let Some(&label) = state.labels.get(state.at) {
            return Ok(Some(label));
        }
        if state.exhausted {
            return Ok(None);
        }
        if state.loaded {
            load(store, paths, limit, state, state.first.saturating_add(1), true)?;
        } else {
            load(store, paths, limit, state, 0, false)?;
        }
    }
}

/// Loads a block of one partition and positions at its first label with pre ≥ `pre`
/// (moving on to later blocks while none is): the block holding `pre`, or with
/// `after` the first block starting at or after `pre`.
fn load<T: PageRead>(
    store: &XmlStore<'_, T>,
    paths: &PathSet,
    limit: u64,
    state: &mut PartState,
    pre: u64,
    after: bool,
) -> Result<()> {
    let mut cursor = store.part.cursor();
    let key = part_key(state.kind, state.name, pre);
    let (kind, name) = (state.kind, state.name);
    let mine = |key: Option<&[u8]>| {
        key.and_then(split_part_key).filter(|&(k, n, _)| (k, n) == (kind, name)).map(|(_, _, f)| f)
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
        let Some(block_first) = first.filter(|&f| f <= limit) else {
            state.labels.clear();
            state.at = 0;
            state.exhausted = true;
            return Ok(());
        };
        cursor.value(&mut state.bytes)?;
        state.labels.clear();
        decode_part_block(kind, block_first, &state.bytes, store.dictionary.paths(), &mut state.labels).map_err(
            |reason| corrupted(&store.name, block_first, format!("partition block {block_first}: {reason}")),
        )?;
        state.first = block_first;
        state.last = state.labels.last().map_or(block_first, |l| l.pre);
        state.loaded = true;
        if state.filtered {
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
