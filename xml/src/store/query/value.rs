//! Comparisons of predicates: string values read from the document index, or the
//! matching nodes looked up in the value index, with buffers that are reused run
//! after run.
//!
//! XPath 1.0 semantics (the reference evaluator's [`compare`]): `=`/`!=` with a string
//! literal compare string values; every other comparison compares numbers, NaN never
//! true except with `!=`. A node-set compares true when *some* node does.
//!
//! The value index answers `=` with a string and every comparison with a number when
//! it holds every value of the step's partition ([`Comparison::indexed`]); it pays when
//! the candidates are many, and reading values when they are few.
//!
//! Read next: `exec.rs`.

use super::join::intersect_pres;
use super::plan::Comparison;
use crate::error::Result;
use crate::reference::{compare, xpath_number};
use crate::store::chunks::Chunk;
use crate::store::format::{Kind, ValueRef, doc_key};
use crate::store::record::{Label, NEWLINE, NodeRecord, decode_doc_block};
use crate::store::values::{ScanBuffers, number_key, string_key};
use crate::store::{XmlStore, corrupted};
use crate::xpath::{CompareOp, Literal};
use quiredb_engine::PageRead;
use std::ops::Bound;

/// Decoded document blocks [`ValueReader::record`] keeps besides the current one.
const RECENT_BLOCKS: usize = 8;

/// Node `pre` in a decoded block, if the block holds it.
fn record_in(nodes: &[NodeRecord], pre: u64) -> Option<NodeRecord> {
    let first = nodes.first()?.pre;
    nodes.get(usize::try_from(pre.checked_sub(first)?).ok()?).copied()
}

/// Candidates below this many are compared by reading their values.
const INDEX_AT: usize = 32;

/// Reusable buffers for reading values.
#[derive(Debug, Default)]
pub struct ValueReader {
    block: Vec<u8>,
    nodes: Vec<NodeRecord>,
    /// The records of blocks loaded before `nodes`, for [`ValueReader::record`].
    recent: Vec<Vec<NodeRecord>>,
    next_recent: usize,
    chunk: Chunk,
    chunk_bytes: Vec<u8>,
    value: Vec<u8>,
    pres: Vec<u64>,
    key: Vec<u8>,
    low: Vec<u8>,
    high: Vec<u8>,
    scan: ScanBuffers,
}

impl ValueReader {
    /// Keeps the labels of `candidates` whose value satisfies `comparison`, into `out`.
    pub fn filter<T: PageRead>(
        &mut self,
        store: &XmlStore<'_, T>,
        candidates: &[Label],
        comparison: &Comparison,
        out: &mut Vec<Label>,
    ) -> Result<()> {
        out.clear();
        if let Some((kind, name)) = comparison.indexed
            && candidates.len() >= INDEX_AT
            && self.lookup(store, kind, name, comparison)?
        {
            intersect_pres(candidates, &self.pres, out);
            return Ok(());
        }
        let mut value = std::mem::take(&mut self.value);
        for label in candidates {
            value.clear();
            self.string_value(store, label.pre, &mut value)?;
            let text =
                std::str::from_utf8(&value).map_err(|_| corrupted(&store.name, label.pre, "a value is not UTF-8"))?;
            if compare(text, comparison.op, &comparison.literal) {
                out.push(*label);
            }
        }
        self.value = value;
        Ok(())
    }

    /// Fills `self.pres` (sorted) from the value index; false when the index cannot
    /// answer this comparison.
    fn lookup<T: PageRead>(
        &mut self,
        store: &XmlStore<'_, T>,
        kind: Kind,
        name: u32,
        comparison: &Comparison,
    ) -> Result<bool> {
        self.pres.clear();
        let number = match (&comparison.op, &comparison.literal) {
            (CompareOp::Ne, _) => return Ok(false),
            (CompareOp::Eq, Literal::String(s)) => {
                let n = xpath_number(s);
                if n.is_nan() {
                    string_key(&mut self.key, name, kind, s);
                    let pres = &mut self.pres;
                    let key = self.key.as_slice();
                    let bounds = (Bound::Included(key), Bound::Included(key));
                    store.scan_values_with(bounds.0, bounds.1, &mut self.scan, &mut |_, found| {
                        pres.extend_from_slice(found);
                        Ok(())
                    })?;
                    return Ok(true);
                }
                // A number-looking string: its numbers' nodes, then equal text only.
                self.number_range(store, kind, name, CompareOp::Eq, n)?;
                self.keep_equal_text(store, s)?;
                return Ok(true);
            }
            (_, Literal::String(s)) => xpath_number(s),
            (_, Literal::Number(n, _)) => *n,
        };
        if number.is_nan() {
            return Ok(true); // nothing compares true with NaN but `!=`
        }
        self.number_range(store, kind, name, comparison.op, number)?;
        Ok(true)
    }

    /// The nodes whose number stands in `op` to `number`, sorted into `self.pres`.
    fn number_range<T: PageRead>(
        &mut self,
        store: &XmlStore<'_, T>,
        kind: Kind,
        name: u32,
        op: CompareOp,
        number: f64,
    ) -> Result<()> {
        number_key(&mut self.key, name, kind, Some(number));
        number_key(&mut self.low, name, kind, None);
        self.high.clear();
        self.high.extend_from_slice(&self.low);
        self.high.extend_from_slice(&[0xff; 9]);
        let (at, first, end) = (self.key.as_slice(), self.low.as_slice(), self.high.as_slice());
        let (low, high) = match op {
            CompareOp::Eq => (Bound::Included(at), Bound::Included(at)),
            CompareOp::Lt => (Bound::Included(first), Bound::Excluded(at)),
            CompareOp::Le => (Bound::Included(first), Bound::Included(at)),
            CompareOp::Gt => (Bound::Excluded(at), Bound::Excluded(end)),
            CompareOp::Ge => (Bound::Included(at), Bound::Excluded(end)),
            CompareOp::Ne => unreachable!("`!=` never reaches the index"),
        };
        let pres = &mut self.pres;
        store.scan_values_with(low, high, &mut self.scan, &mut |_, found| {
            pres.extend_from_slice(found);
            Ok(())
        })?;
        if op != CompareOp::Eq {
            self.pres.sort_unstable();
        }
        Ok(())
    }

    /// Keeps the pres whose string value is exactly `text`.
    fn keep_equal_text<T: PageRead>(&mut self, store: &XmlStore<'_, T>, text: &str) -> Result<()> {
        let mut pres = std::mem::take(&mut self.pres);
        let mut value = std::mem::take(&mut self.value);
        let mut kept = 0;
        for i in 0..pres.len() {
            value.clear();
            self.string_value(store, pres[i], &mut value)?;
            if value == text.as_bytes() {
                pres[kept] = pres[i];
                kept += 1;
            }
        }
        pres.truncate(kept);
        self.pres = pres;
        self.value = value;
        Ok(())
    }

    /// Appends the XPath string value of node `node` to `out`.
    pub fn string_value<T: PageRead>(&mut self, store: &XmlStore<'_, T>, node: u64, out: &mut Vec<u8>) -> Result<()> {
        let (pre_of_root, mut pre) = (node, node);
        let mut last = None;
        loop {
            let i = self.locate(store, pre)?;
            let node = self.nodes[i];
            let last = *last.get_or_insert(node.pre + node.size);
            if node.pre == pre_of_root && node.kind.has_value() || node.kind == Kind::Text {
                self.append_value(store, &node, out)?;
            }
            if node.pre >= last {
                return Ok(());
            }
            pre = node.pre + 1;
        }
    }

    /// The document-index record of node `pre`. The records of the last
    /// [`RECENT_BLOCKS`] blocks stay decoded: a walk up to the ancestors and back down
    /// to the next node does not decode its blocks again.
    pub fn record<T: PageRead>(&mut self, store: &XmlStore<'_, T>, pre: u64) -> Result<NodeRecord> {
        if let Some(node) = std::iter::once(&self.nodes).chain(&self.recent).find_map(|nodes| record_in(nodes, pre)) {
            return Ok(node);
        }
        if !self.nodes.is_empty() {
            let spare = if self.recent.len() < RECENT_BLOCKS {
                self.recent.push(Vec::new());
                self.recent.len() - 1
            } else {
                self.next_recent = (self.next_recent + 1) % RECENT_BLOCKS;
                self.next_recent
            };
            std::mem::swap(&mut self.recent[spare], &mut self.nodes);
        }
        let i = self.locate(store, pre)?;
        Ok(self.nodes[i])
    }

    /// Index into `self.nodes` of node `pre`, loading its block when needed.
    fn locate<T: PageRead>(&mut self, store: &XmlStore<'_, T>, pre: u64) -> Result<usize> {
        if let Some(first) = self.nodes.first().map(|n| n.pre)
            && pre >= first
            && pre - first < self.nodes.len() as u64
        {
            return Ok((pre - first) as usize);
        }
        let mut cursor = store.doc.cursor();
        cursor.seek_floor(&doc_key(pre))?;
        let first = cursor.key().and_then(|k| <[u8; 8]>::try_from(k).ok()).map(u64::from_be_bytes);
        let Some(first) = first else {
            return Err(corrupted(&store.name, pre, format!("node {pre} missing from the document index")));
        };
        cursor.value(&mut self.block)?;
        decode_doc_block(first, &self.block, store.dictionary.paths(), &mut self.nodes)
            .map_err(|reason| corrupted(&store.name, first, format!("document block {first}: {reason}")))?;
        match pre.checked_sub(first).filter(|&i| i < self.nodes.len() as u64) {
            Some(i) => Ok(i as usize),
            None => Err(corrupted(&store.name, pre, format!("node {pre} missing from the document index"))),
        }
    }

    /// Appends the value of `node` (in the loaded block) to `out`.
    fn append_value<T: PageRead>(
        &mut self,
        store: &XmlStore<'_, T>,
        node: &NodeRecord,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        match node.value {
            NEWLINE => out.push(b'\n'),
            ValueRef::Inline { at, len } => {
                let bytes = self.block.get(at as usize..(at + len) as usize);
                out.extend_from_slice(bytes.ok_or_else(|| corrupted(&store.name, node.pre, "inline value"))?);
            }
            ValueRef::Streamed { number } => {
                if self.chunk.value(number).is_none() {
                    let mut cursor = store.text.cursor();
                    cursor.seek_floor(&number.to_be_bytes())?;
                    let first = cursor.key().and_then(|k| <[u8; 8]>::try_from(k).ok()).map(u64::from_be_bytes);
                    let Some(first) = first else {
                        return Err(corrupted(&store.name, node.pre, format!("value {number} is missing")));
                    };
                    cursor.value(&mut self.chunk_bytes)?;
                    self.chunk
                        .decode(first, &self.chunk_bytes)
                        .map_err(|reason| corrupted(&store.name, node.pre, format!("value chunk {first}: {reason}")))?;
                }
                let value = self.chunk.value(number);
                out.extend_from_slice(
                    value.ok_or_else(|| corrupted(&store.name, node.pre, format!("value {number} is missing")))?,
                );
            }
            ValueRef::None | ValueRef::Absent => {}
        }
        Ok(())
    }
}
