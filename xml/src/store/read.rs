//! Reading the store: nodes by pre, subtrees in document order, values, string
//! values, XML serialisation, and partition lists.
//!
//! Everything streams: a subtree is a range scan of the document index, one block at
//! a time, so a node's string value or serialisation costs memory for the output only.
//! A cursor decodes each block once into a reused buffer.
//!
//! Read next: `check.rs`, which walks the same cursors to prove the invariants.

use super::dict::Declaration;
use super::format::{Kind, ValueRef, doc_key, part_key, split_part_key};
use super::record::{Label, NEWLINE, NodeRecord, decode_doc_block, decode_part_block};
use super::{XmlStore, corrupted};
use crate::error::{Error, Result};
use quiredb_engine::PageRead;
use quiredb_structures::btree::Range;
use std::io::Write;
use std::ops::Bound;

/// Nodes of a pre range in document order (see [`XmlStore::nodes`]).
pub struct NodeCursor<'s, 't, T: PageRead> {
    store: &'s XmlStore<'t, T>,
    blocks: Range<'s, 't, T>,
    block: Vec<u8>,
    nodes: Vec<NodeRecord>,
    at: usize,
    from: u64,
    last: u64,
}

impl<'s, 't, T: PageRead> NodeCursor<'s, 't, T> {
    /// The next node, or `None` past the end of the range.
    pub fn next_node(&mut self) -> Result<Option<NodeRecord>> {
        loop {
            if let Some(&node) = self.nodes.get(self.at) {
                self.at += 1;
                if node.pre > self.last {
                    return Ok(None);
                }
                if node.pre >= self.from {
                    return Ok(Some(node));
                }
                continue;
            }
            let Some(entry) = self.blocks.next() else { return Ok(None) };
            let (key, block) = entry?;
            let first = <[u8; 8]>::try_from(key.as_slice())
                .map(u64::from_be_bytes)
                .map_err(|_| corrupted(&self.store.name, 0, "document-index key is not 8 bytes"))?;
            self.block = block;
            decode_doc_block(first, &self.block, self.store.dictionary.paths(), &mut self.nodes)
                .map_err(|reason| corrupted(&self.store.name, first, format!("document block {first}: {reason}")))?;
            self.at = 0;
        }
    }

    /// Appends the value of `node` (a node this cursor just returned) to `out`.
    pub fn value(&self, node: &NodeRecord, out: &mut Vec<u8>) -> Result<()> {
        match node.value {
            NEWLINE => {
                out.push(b'\n');
                Ok(())
            }
            ValueRef::Inline { at, len } => {
                let bytes = self.block.get(at as usize..(at + len) as usize);
                out.extend_from_slice(bytes.ok_or_else(|| corrupted(&self.store.name, node.pre, "inline value"))?);
                Ok(())
            }
            other => self.store.value_ref(node.pre, other, out),
        }
    }
}

impl<'t, T: PageRead> XmlStore<'t, T> {
    /// The nodes with pre in `first..=last`, in document order.
    pub fn nodes(&self, first: u64, last: u64) -> Result<NodeCursor<'_, 't, T>> {
        let start = match self.doc.floor(&doc_key(first))? {
            Some((key, _)) => key,
            None => doc_key(0).to_vec(),
        };
        let blocks = self.doc.range(Bound::Included(start.as_slice()), Bound::Unbounded);
        Ok(NodeCursor { store: self, blocks, block: Vec::new(), nodes: Vec::new(), at: 0, from: first, last })
    }

    /// The node `pre`.
    pub fn node(&self, pre: u64) -> Result<NodeRecord> {
        if pre >= self.len() {
            return Err(Error::NoSuchNode { collection: self.name.clone(), node: pre, nodes: self.len() });
        }
        let mut cursor = self.nodes(pre, pre)?;
        cursor
            .next_node()?
            .ok_or_else(|| corrupted(&self.name, pre, format!("node {pre} missing from the document index")))
    }

    /// Appends the value of a queued or absent value reference to `out`.
    fn value_ref(&self, pre: u64, value: ValueRef, out: &mut Vec<u8>) -> Result<()> {
        match value {
            ValueRef::Streamed { number } => {
                let mut chunk = self.chunk_cache.borrow_mut();
                if chunk.value(number).is_none() {
                    let found = self.text.floor(&number.to_be_bytes())?;
                    let Some((key, stored)) = found else {
                        return Err(corrupted(&self.name, pre, format!("value {number} of node {pre} is missing")));
                    };
                    let first = <[u8; 8]>::try_from(key.as_slice()).map(u64::from_be_bytes).unwrap_or(u64::MAX);
                    chunk
                        .decode(first, &stored)
                        .map_err(|reason| corrupted(&self.name, pre, format!("value chunk {first}: {reason}")))?;
                }
                let value = chunk.value(number);
                out.extend_from_slice(
                    value.ok_or_else(|| {
                        corrupted(&self.name, pre, format!("value {number} of node {pre} is missing"))
                    })?,
                );
                Ok(())
            }
            ValueRef::None | ValueRef::Absent => Ok(()),
            ValueRef::Inline { .. } => {
                let mut cursor = self.nodes(pre, pre)?;
                let node = cursor.next_node()?.ok_or_else(|| corrupted(&self.name, pre, "node missing"))?;
                cursor.value(&node, out)
            }
        }
    }

    /// The XPath string value of node `pre` (an element's or document's: its
    /// descendant text in document order).
    pub fn string_value(&self, pre: u64, out: &mut Vec<u8>) -> Result<()> {
        let node = self.node(pre)?;
        let mut cursor = self.nodes(pre, pre + node.size)?;
        while let Some(n) = cursor.next_node()? {
            if n.pre == pre && n.kind.has_value() || n.kind == Kind::Text {
                cursor.value(&n, out)?;
            }
        }
        Ok(())
    }

    /// Writes node `pre` as XML (an attribute as `name="value"`).
    pub fn write_xml(&self, pre: u64, out: &mut impl Write) -> Result<()> {
        let dict = self.dictionary();
        let name = |id: u32| dict.names.get(id as usize).map(String::as_str).unwrap_or("");
        let root = self.node(pre)?;
        let declarations = self.declarations(pre, pre + root.size)?;
        let mut next_declaration = 0;
        let inherited = self.inherited_declarations(&root)?;
        let mut cursor = self.nodes(pre, pre + root.size)?;
        let mut open: Vec<(u64, u32, bool)> = Vec::new();
        let mut tag_open = false;
        let mut value = Vec::new();
        let io = |e: std::io::Error| Error::Io { path: "<output>".into(), source: e };
        while let Some(n) = cursor.next_node()? {
            if n.kind == Kind::Attribute && tag_open {
                value.clear();
                cursor.value(&n, &mut value)?;
                write!(out, " {}=\"", name(n.name)).map_err(io)?;
                escape(out, &value, true).map_err(io)?;
                out.write_all(b"\"").map_err(io)?;
                continue;
            }
            close_tags(out, &mut open, &mut tag_open, n.pre, &name).map_err(io)?;
            value.clear();
            cursor.value(&n, &mut value)?;
            match n.kind {
                Kind::Document => {}
                Kind::Element => {
                    write!(out, "<{}", name(n.name)).map_err(io)?;
                    if n.pre == pre {
                        write_declarations(out, &inherited).map_err(io)?;
                    }
                    while declarations.get(next_declaration).is_some_and(|d| d.element < n.pre) {
                        next_declaration += 1;
                    }
                    let own = declarations[next_declaration..].iter().take_while(|d| d.element == n.pre).count();
                    write_declarations(out, &declarations[next_declaration..next_declaration + own]).map_err(io)?;
                    next_declaration += own;
                    open.push((n.pre + n.size, n.name, false));
                    tag_open = true;
                }
                Kind::Attribute => {
                    write!(out, "{}=\"", name(n.name)).map_err(io)?;
                    escape(out, &value, true).map_err(io)?;
                    out.write_all(b"\"").map_err(io)?;
                }
                // An empty text node is an empty CDATA section standing alone (the
                // parser merges every other text): written so, it reads back as one.
                Kind::Text if value.is_empty() => out.write_all(b"<![CDATA[]]>").map_err(io)?,
                Kind::Text => escape(out, &value, false).map_err(io)?,
                Kind::Comment => out
                    .write_all(b"<!--")
                    .and_then(|_| out.write_all(&value))
                    .and_then(|_| out.write_all(b"-->"))
                    .map_err(io)?,
                Kind::Pi => {
                    write!(out, "<?{}", name(n.name)).map_err(io)?;
                    // A space only where the value would otherwise run into the target
                    // (`<?xml!?>` is target `xml`, value `!`; `<?xml !?>` would be a
                    // misplaced XML declaration).
                    let joins =
                        value.first().is_some_and(|&b| b.is_ascii_alphanumeric() || b >= 0x80 || b"-._:".contains(&b));
                    if n.value != ValueRef::Absent && joins {
                        out.write_all(b" ").map_err(io)?;
                    }
                    out.write_all(&value).map_err(io)?;
                    out.write_all(b"?>").map_err(io)?;
                }
            }
        }
        close_tags(out, &mut open, &mut tag_open, u64::MAX, &name).map_err(io)
    }

    /// The declarations in scope at element `root` that it does not make itself: the
    /// nearest ancestor's for each prefix (serialising a subtree must declare them).
    fn inherited_declarations(&self, root: &NodeRecord) -> Result<Vec<Declaration>> {
        let mut found: Vec<Declaration> = Vec::new();
        if root.kind != Kind::Element {
            return Ok(found);
        }
        let own = self.declarations(root.pre, root.pre)?;
        let mut at = self.node(root.parent)?;
        while at.kind == Kind::Element {
            for declaration in self.declarations(at.pre, at.pre)? {
                let prefix = &declaration.prefix;
                if !own.iter().chain(&found).any(|d| &d.prefix == prefix) {
                    found.push(declaration);
                }
            }
            at = self.node(at.parent)?;
        }
        Ok(found)
    }

    /// The labels of partition (`kind`, `name`) with pre ≤ `last`, nearest first,
    /// handed to `visit` until it returns false: the nearest nodes of a reverse axis
    /// without reading the partition from its start. `labels` is scratch.
    pub fn partition_backward(
        &self,
        (kind, name): (Kind, u32),
        last: u64,
        labels: &mut Vec<Label>,
        visit: &mut dyn FnMut(Label) -> bool,
    ) -> Result<()> {
        let mut cursor = self.part.cursor();
        cursor.seek_floor(&part_key(kind, name, last))?;
        let mut block = Vec::new();
        while let Some(key) = cursor.key() {
            let Some((k, n, first)) = split_part_key(key) else {
                return Err(corrupted(&self.name, 0, "partition key is not 13 bytes"));
            };
            if (k, n) != (kind, name) {
                return Ok(());
            }
            cursor.value(&mut block)?;
            labels.clear();
            decode_part_block(kind, first, &block, self.dictionary.paths(), labels)
                .map_err(|reason| corrupted(&self.name, first, format!("partition block {first}: {reason}")))?;
            for &label in labels.iter().rev().filter(|l| l.pre <= last) {
                if !visit(label) {
                    return Ok(());
                }
            }
            if !cursor.move_prev()? {
                return Ok(());
            }
        }
        Ok(())
    }

    /// The labels of partition (`kind`, `name`) with pre ≥ `from`, in document order.
    pub fn partition(&self, kind: Kind, name: u32, from: u64) -> Result<PartitionCursor<'_, 't, T>> {
        let mut cursor = PartitionCursor { store: self, kind, name, blocks: None, labels: Vec::new(), at: 0, from };
        cursor.seek(from)?;
        Ok(cursor)
    }
}

/// Closes open elements that end before `pre`, finishing a pending start tag first.
fn close_tags<'n>(
    out: &mut impl Write,
    open: &mut Vec<(u64, u32, bool)>,
    tag_open: &mut bool,
    pre: u64,
    name: &impl Fn(u32) -> &'n str,
) -> std::io::Result<()> {
    while let Some(&(end, id, has_content)) = open.last() {
        if end >= pre {
            break;
        }
        open.pop();
        if *tag_open && !has_content {
            out.write_all(b"/>")?;
        } else {
            write!(out, "</{}>", name(id))?;
        }
        *tag_open = false;
    }
    if *tag_open {
        out.write_all(b">")?;
        *tag_open = false;
        if let Some(top) = open.last_mut() {
            top.2 = true;
        }
    } else if let Some(top) = open.last_mut() {
        top.2 = true;
    }
    Ok(())
}

/// Writes ` xmlns="uri"` / ` xmlns:p="uri"` for each declaration.
fn write_declarations(out: &mut impl Write, declarations: &[Declaration]) -> std::io::Result<()> {
    for Declaration { prefix, uri, .. } in declarations {
        if prefix.is_empty() {
            out.write_all(b" xmlns=\"")?;
        } else {
            write!(out, " xmlns:{prefix}=\"")?;
        }
        escape(out, uri.as_bytes(), true)?;
        out.write_all(b"\"")?;
    }
    Ok(())
}

/// Escapes markup characters (and, in attributes, quotes and whitespace that
/// normalisation would otherwise turn into spaces).
fn escape(out: &mut impl Write, text: &[u8], attribute: bool) -> std::io::Result<()> {
    let mut start = 0;
    for (i, &b) in text.iter().enumerate() {
        let replacement: &[u8] = match b {
            b'&' => b"&amp;",
            b'<' => b"&lt;",
            b'>' => b"&gt;",
            b'\r' => b"&#13;",
            b'"' if attribute => b"&quot;",
            b'\n' if attribute => b"&#10;",
            b'\t' if attribute => b"&#9;",
            _ => continue,
        };
        out.write_all(&text[start..i])?;
        out.write_all(replacement)?;
        start = i + 1;
    }
    out.write_all(&text[start..])
}

/// The labels of one partition in document order, from a starting pre; it can skip
/// forward ([`PartitionCursor::seek`]) without reading the blocks in between.
pub struct PartitionCursor<'s, 't, T: PageRead> {
    store: &'s XmlStore<'t, T>,
    kind: Kind,
    name: u32,
    blocks: Option<Range<'s, 't, T>>,
    labels: Vec<Label>,
    at: usize,
    from: u64,
}

impl<T: PageRead> PartitionCursor<'_, '_, T> {
    /// The next label with pre ≥ the last seek target.
    pub fn next_label(&mut self) -> Result<Option<Label>> {
        loop {
            if let Some(&label) = self.labels.get(self.at) {
                self.at += 1;
                if label.pre >= self.from {
                    return Ok(Some(label));
                }
                continue;
            }
            if !self.next_block()? {
                return Ok(None);
            }
        }
    }

    /// Loads the next block of the partition; false at its end.
    fn next_block(&mut self) -> Result<bool> {
        let Some(blocks) = &mut self.blocks else { return Ok(false) };
        let Some(entry) = blocks.next() else { return Ok(false) };
        let (key, block) = entry?;
        let Some((kind, name, first)) = split_part_key(&key) else {
            return Err(corrupted(&self.store.name, 0, "partition key is not 13 bytes"));
        };
        if (kind, name) != (self.kind, self.name) {
            self.blocks = None;
            return Ok(false);
        }
        self.labels.clear();
        self.at = 0;
        decode_part_block(kind, first, &block, self.store.dictionary.paths(), &mut self.labels)
            .map_err(|reason| corrupted(&self.store.name, first, format!("partition block {first}: {reason}")))?;
        Ok(true)
    }

    /// Skips to the first label with pre ≥ `pre` (forward or backward).
    pub fn seek(&mut self, pre: u64) -> Result<()> {
        self.from = pre;
        if let (Some(first), Some(last)) = (self.labels.first(), self.labels.last())
            && first.pre <= pre
            && pre <= last.pre
        {
            self.at = self.labels.partition_point(|l| l.pre < pre);
            return Ok(());
        }
        // Just past the loaded block (a forward walk over nearby contexts): the next
        // block is read as a scan would, without a descent, when it holds the target.
        if self.labels.last().is_some_and(|last| last.pre < pre)
            && self.blocks.is_some()
            && self.next_block()?
            && self.labels.last().is_some_and(|last| last.pre >= pre)
        {
            self.at = self.labels.partition_point(|l| l.pre < pre);
            return Ok(());
        }
        let target = part_key(self.kind, self.name, pre);
        let start = match self.store.part.floor(&target)? {
            Some((key, _)) if split_part_key(&key).is_some_and(|(k, n, _)| (k, n) == (self.kind, self.name)) => key,
            _ => part_key(self.kind, self.name, 0).to_vec(),
        };
        let end = part_key(self.kind, self.name, u64::MAX);
        self.blocks = Some(self.store.part.range(Bound::Included(start.as_slice()), Bound::Included(end.as_slice())));
        self.labels.clear();
        self.at = 0;
        Ok(())
    }
}
