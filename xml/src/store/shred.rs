//! Shredding: turns the parser's events into node records, labels and index entries.
//!
//! Records are written in document order as they come, so memory holds one document
//! block, one pending partition block per name and the stack of open elements — never
//! the document. A size is known only when its element closes: a record or label that
//! leaves memory while its element is open is written with a padded size (see
//! `format.rs`) and patched in place at the close; each open element remembers where
//! its two padded sizes went ([`Slot`]).
//!
//! Invariants kept: `pre` grows by one per node; the stack holds the document node and
//! the open elements in pre order; a partition's blocks never overlap because a name's
//! labels enter its buffer in pre order.
//!
//! Read next: `load.rs` (drives a shredder per document), `values.rs`.

use super::chunks::ChunkWriter;
use super::dict::Dictionary;
use super::format::{INLINE_MAX, Kind, PADDED, ValueRef, doc_key, part_key, write_padded};
use super::record::{Label, NodeRecord, PendingNode, encode_doc_block, encode_part_block};
use super::values::ValueWriter;
use super::{BLOCK_NODES, Counters, PART_LABELS};
use crate::error::Result;
use crate::parse::{Event, Sink};
use quiredb_engine::WriteTxn;
use quiredb_structures::btree::BTree;
use rustc_hash::FxHashMap;

/// log2 of the path cache's slots.
const PATH_CACHE_BITS: u32 = 12;

/// Where the padded size of an open element went.
#[derive(Clone, Copy, Debug)]
enum Slot {
    /// Still in memory, at this index of its buffer.
    Pending(usize),
    /// Written: the block's key and the size's byte offset in the block.
    Flushed { key: [u8; 13], key_len: u8, offset: usize },
}

/// An open element (or the document node).
struct Open {
    pre: u64,
    kind: Kind,
    name: u32,
    level: u32,
    path: u32,
    /// Its partition (index into `Shredder::parts`).
    part: u32,
    doc_slot: Slot,
    part_slot: Slot,
    /// String value while the element has no element child (`None` once it has one
    /// or the value outgrew the value index's limit).
    value: Option<String>,
}

/// Pending labels of one partition.
struct PartBuffer {
    kind: Kind,
    name: u32,
    labels: Vec<(Label, bool)>,
    /// Bytes the labels take at most once encoded.
    bytes: usize,
}

/// The trees and queue a shredder writes, borrowed from the loader.
pub struct Targets<'a, 't, 'db> {
    pub doc: &'a mut BTree<'t, WriteTxn<'db>>,
    pub part: &'a mut BTree<'t, WriteTxn<'db>>,
    pub text: &'a mut BTree<'t, WriteTxn<'db>>,
    pub chunks: &'a mut ChunkWriter,
    pub values: &'a mut ValueWriter,
    pub value_tree: &'a mut BTree<'t, WriteTxn<'db>>,
    pub dict_tree: &'a mut BTree<'t, WriteTxn<'db>>,
    pub dict: &'a mut Dictionary,
    pub counters: &'a mut Counters,
}

/// Shreds one collection load (any number of documents, one after the other).
pub struct Shredder<'a, 't, 'db> {
    out: Targets<'a, 't, 'db>,
    block: Vec<PendingNode>,
    block_bytes: usize,
    block_limit: usize,
    stack: Vec<Open>,
    parts: Vec<PartBuffer>,
    /// The partition of each (kind, name), as an index into `parts`.
    part_ids: FxHashMap<(Kind, u32), u32>,
    /// The partition of each path id (`u32::MAX` until first seen).
    part_of_path: Vec<u32>,
    /// Inline values of the current block (see `PendingNode::inline`).
    inline: Vec<u8>,
    /// Recently seen paths: (parent, kind, name, path).
    path_cache: Vec<(u32, Kind, u32, u32)>,
    spare_strings: Vec<String>,
    scratch: Vec<u8>,
    patches: Vec<(usize, usize)>,
}

impl<'a, 't, 'db> Shredder<'a, 't, 'db> {
    pub fn new(out: Targets<'a, 't, 'db>, payload_size: usize) -> Self {
        out.dict.ensure_root_path();
        Shredder {
            out,
            block: Vec::with_capacity(BLOCK_NODES),
            block_bytes: 0,
            block_limit: payload_size / 4 - 64,
            stack: Vec::new(),
            parts: Vec::new(),
            part_ids: FxHashMap::default(),
            part_of_path: Vec::new(),
            inline: Vec::new(),
            path_cache: vec![(u32::MAX, Kind::Document, 0, 0); 1 << PATH_CACHE_BITS],
            spare_strings: Vec::new(),
            scratch: Vec::new(),
            patches: Vec::new(),
        }
    }

    /// Starts a document: adds its document node.
    pub fn start_document(&mut self) -> Result<()> {
        assert!(self.stack.is_empty(), "a document starts after the previous one ended");
        self.add(Kind::Document, 0, None)
    }

    /// Ends the current document (closes its document node) and lists it, loaded from
    /// `file`, in the dictionary.
    pub fn end_document(&mut self, file: &str) -> Result<()> {
        assert_eq!(self.stack.len(), 1, "the parser closes every element it opens");
        let pre = self.stack[0].pre;
        let number = self.out.counters.documents;
        self.out.counters.documents += 1;
        super::dict::store_document(self.out.dict_tree, number, pre, file)?;
        self.close()?;
        if self.out.values.is_full() {
            self.out.values.flush(self.out.value_tree, self.block_limit)?;
        }
        Ok(())
    }

    /// Writes every pending block (call once after the last document).
    pub fn finish(mut self) -> Result<()> {
        self.flush_block()?;
        self.out.chunks.finish(self.out.text)?;
        for part in 0..self.parts.len() {
            self.flush_part(part)?;
        }
        Ok(())
    }

    /// Adds one node under the top of the stack (or a document node on an empty stack).
    fn add(&mut self, kind: Kind, name: u32, value: Option<&str>) -> Result<()> {
        let pre = self.out.counters.next_pre;
        let (parent, level, parent_path) = match self.stack.last() {
            Some(top) => (top.pre, top.level + 1, top.path),
            None => (pre, 0, 0),
        };
        let path = if kind == Kind::Document { 0 } else { self.path(parent_path, kind, name) };
        if self.block.len() == BLOCK_NODES || self.block_bytes + 24 + INLINE_MAX > self.block_limit {
            self.flush_block()?;
        }
        let (value_ref, inline) = self.store_value(kind, value)?;
        let record = NodeRecord { pre, kind, name, parent, level, path, size: 0, value: value_ref };
        self.count(kind, path);
        let label = Label { pre, size: 0, level, path };
        let part = self.partition(kind, name, path);
        let part_index = self.push_label(part, label, kind.has_size())?;
        let doc_index = self.push_node(record, inline);
        if kind.has_size() {
            let value = Some(self.spare_strings.pop().unwrap_or_default());
            self.stack.push(Open {
                pre,
                kind,
                name,
                level,
                path,
                part,
                doc_slot: Slot::Pending(doc_index),
                part_slot: Slot::Pending(part_index),
                value,
            });
        }
        Ok(())
    }

    /// The path `parent/step`, through a small direct-mapped cache: recursive documents
    /// have millions of paths, and siblings mostly repeat a few steps.
    fn path(&mut self, parent: u32, kind: Kind, name: u32) -> u32 {
        let hash =
            (parent.wrapping_mul(0x9E37_79B1) ^ name.wrapping_mul(0x85EB_CA6B) ^ kind as u32) >> (32 - PATH_CACHE_BITS);
        let slot = &mut self.path_cache[hash as usize];
        if slot.0 == parent && slot.1 == kind && slot.2 == name {
            return slot.3;
        }
        let path = self.out.dict.path(parent, kind, name);
        self.path_cache[hash as usize] = (parent, kind, name, path);
        path
    }

    fn count(&mut self, kind: Kind, path: u32) {
        self.out.counters.next_pre += 1;
        self.out.counters.nodes[kind as usize] += 1;
        self.out.dict.paths[path as usize].count += 1;
    }

    /// The partition of nodes of `kind` and `name` (reached through `path`).
    fn partition(&mut self, kind: Kind, name: u32, path: u32) -> u32 {
        if let Some(&part) = self.part_of_path.get(path as usize)
            && part != u32::MAX
        {
            return part;
        }
        let next = self.parts.len() as u32;
        let part = *self.part_ids.entry((kind, name)).or_insert(next);
        if part == next {
            self.parts.push(PartBuffer { kind, name, labels: Vec::new(), bytes: 0 });
        }
        if self.part_of_path.len() <= path as usize {
            self.part_of_path.resize(path as usize + 1, u32::MAX);
        }
        self.part_of_path[path as usize] = part;
        part
    }

    /// Stores a value: inline when short, else in the value queue.
    /// Stores a value: inline (in the block's buffer) when short, else in the value
    /// stream. Returns the reference and the inline range.
    fn store_value(&mut self, kind: Kind, value: Option<&str>) -> Result<(ValueRef, (u32, u32))> {
        let start = self.inline.len() as u32;
        if !kind.has_value() {
            return Ok((ValueRef::None, (start, start)));
        }
        let Some(value) = value else { return Ok((ValueRef::Absent, (start, start))) };
        if value.len() <= INLINE_MAX {
            self.inline.extend_from_slice(value.as_bytes());
            let range = (start, self.inline.len() as u32);
            return Ok((ValueRef::Inline { at: 0, len: value.len() as u32 }, range));
        }
        let number = self.out.chunks.add(self.out.text, value.as_bytes())?;
        Ok((ValueRef::Streamed { number }, (start, start)))
    }

    /// Adds a record to the current block (which has room: see `add`); returns its
    /// index there.
    fn push_node(&mut self, record: NodeRecord, inline: (u32, u32)) -> usize {
        self.block_bytes += 24 + (inline.1 - inline.0) as usize;
        self.block.push(PendingNode { record, inline, open: record.kind.has_size() });
        self.block.len() - 1
    }

    /// Writes the current block; open elements in it learn where their size went.
    fn flush_block(&mut self) -> Result<()> {
        let Some(first) = self.block.first() else { return Ok(()) };
        let first_pre = first.record.pre;
        encode_doc_block(&self.block, &self.inline, &mut self.scratch, &mut self.patches);
        let key = doc_key(first_pre);
        self.out.doc.insert(&key, &self.scratch)?;
        for &(index, offset) in &self.patches {
            let pre = first_pre + index as u64;
            let at = self.stack.binary_search_by_key(&pre, |o| o.pre).expect("an open node is on the stack");
            let mut slot = [0; 13];
            slot[..8].copy_from_slice(&key);
            self.stack[at].doc_slot = Slot::Flushed { key: slot, key_len: 8, offset };
        }
        self.block.clear();
        self.inline.clear();
        self.block_bytes = 0;
        Ok(())
    }

    /// Adds a label to its partition buffer; returns its index there.
    fn push_label(&mut self, part: u32, label: Label, open: bool) -> Result<usize> {
        // At most: a 9-byte pre delta, a 5-byte path, a padded size.
        let bytes = 14 + if open { PADDED } else { 0 };
        let buffer = &self.parts[part as usize];
        if buffer.labels.len() == PART_LABELS || buffer.bytes + bytes > self.block_limit {
            self.flush_part(part as usize)?;
        }
        let buffer = &mut self.parts[part as usize];
        buffer.labels.push((label, open));
        buffer.bytes += bytes;
        Ok(buffer.labels.len() - 1)
    }

    /// Writes the pending labels of one partition.
    fn flush_part(&mut self, part: usize) -> Result<()> {
        let buffer = &mut self.parts[part];
        let Some(&(first, _)) = buffer.labels.first() else { return Ok(()) };
        encode_part_block(buffer.kind, &buffer.labels, &mut self.scratch, &mut self.patches);
        let key = part_key(buffer.kind, buffer.name, first.pre);
        self.out.part.insert(&key, &self.scratch)?;
        for &(index, offset) in &self.patches {
            let pre = buffer.labels[index].0.pre;
            let at = self.stack.binary_search_by_key(&pre, |o| o.pre).expect("an open label is on the stack");
            self.stack[at].part_slot = Slot::Flushed { key, key_len: 13, offset };
        }
        buffer.labels.clear();
        buffer.bytes = 0;
        Ok(())
    }

    /// Closes the innermost open element (or document node): its size is now known.
    fn close(&mut self) -> Result<()> {
        let open = self.stack.pop().expect("close matches an open");
        let size = self.out.counters.next_pre - open.pre - 1;
        match open.doc_slot {
            Slot::Pending(i) => {
                self.block[i].record.size = size;
                self.block[i].open = false;
            }
            Slot::Flushed { key, key_len, offset } => patch(self.out.doc, &key[..key_len as usize], offset, size)?,
        }
        match open.part_slot {
            Slot::Pending(i) => {
                let buffer = &mut self.parts[open.part as usize];
                buffer.labels[i].0.size = size;
                buffer.labels[i].1 = false;
            }
            Slot::Flushed { key, key_len, offset } => patch(self.out.part, &key[..key_len as usize], offset, size)?,
        }
        if let Some(mut value) = open.value {
            if open.kind == Kind::Element {
                self.out.values.add(open.name, Kind::Element, &value, open.pre);
            }
            value.clear();
            self.spare_strings.push(value);
        }
        Ok(())
    }

    /// Marks the top element as having an element child (no string value indexed).
    fn top_loses_value(&mut self) {
        if let Some(top) = self.stack.last_mut()
            && let Some(mut value) = top.value.take()
        {
            value.clear();
            self.spare_strings.push(value);
        }
    }

    fn top_gains_text(&mut self, text: &str) {
        let Some(top) = self.stack.last_mut() else { return };
        if let Some(value) = &mut top.value {
            if value.len() + text.len() <= super::values::VALUE_MAX {
                value.push_str(text);
            } else {
                let mut value = top.value.take().expect("checked above");
                value.clear();
                self.spare_strings.push(value);
            }
        }
    }
}

/// Overwrites the padded size at `offset` of the block under `key` in `tree`.
fn patch(tree: &mut BTree<'_, WriteTxn<'_>>, key: &[u8], offset: usize, size: u64) -> Result<()> {
    let mut block = tree.get_vec(key)?.expect("a flushed block stays in its tree during the load");
    write_padded(&mut block[offset..offset + PADDED], size);
    tree.insert(key, &block)?;
    Ok(())
}

impl Sink for Shredder<'_, '_, '_> {
    fn event(&mut self, event: Event<'_>) -> Result<()> {
        match event {
            Event::Open { name, uri } => {
                self.top_loses_value();
                let id = self.out.dict.intern(name, uri);
                self.add(Kind::Element, id, None)
            }
            Event::Attribute { name, uri, value, id: is_id } => {
                let id = self.out.dict.intern(name, uri);
                if is_id {
                    let owner = self.stack.last().expect("an attribute follows its element").name;
                    self.out.dict.id_attributes.insert((owner, id));
                }
                let pre = self.out.counters.next_pre;
                self.out.values.add(id, Kind::Attribute, value, pre);
                self.add(Kind::Attribute, id, Some(value))
            }
            Event::Text(text) => {
                self.top_gains_text(text);
                self.add(Kind::Text, 0, Some(text))
            }
            Event::Comment(text) => self.add(Kind::Comment, 0, Some(text)),
            Event::Pi { target, value } => {
                let id = self.out.dict.intern(target, "");
                self.add(Kind::Pi, id, value)
            }
            Event::Namespace { prefix, uri } => {
                let pre = self.stack.last().expect("a declaration follows its element").pre;
                super::dict::store_namespace(self.out.dict_tree, pre, prefix, uri)
            }
            Event::Close => {
                self.close()?;
                if self.out.values.is_full() {
                    self.out.values.flush(self.out.value_tree, self.block_limit)?;
                }
                Ok(())
            }
        }
    }
}
