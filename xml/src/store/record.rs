//! Blocks of the document index and of the partition index: encoding and decoding.
//!
//! A **document block** (value of key `pre` of the first node, see `mod.rs`) is
//! `count, first streamed value number` (0 when it has none) then `count` node records
//! in document order:
//!
//! | field   | encoding | present when |
//! |---------|----------|--------------|
//! | head    | varint `path << 2 \| form`: the path-summary id (which gives the kind, the name and the level) and the value form — for documents and elements 0; otherwise 0 inline, 1 streamed, 2 absent (a PI without value), 3 the one-character value `"\n"` | always |
//! | parent  | varint `pre − parent pre` (0 for a document node) | always |
//! | size    | varint descendants (attributes included); padded when written open | document, element |
//! | value   | inline: varint length + bytes; streamed: nothing — the block's streamed values are numbered from its header on | form inline |
//!
//! Whitespace between elements is most often a lone line feed (187,000 of XMark
//! f=0.1's 305,000 text nodes), hence its own form.
//!
//! A **partition block** (value of key `kind, name, first pre`) is `count` then per
//! label: varint pre delta (the first is 0: its pre is in the key), varint path, and
//! for documents and elements a varint size (padded when written open). Labels are in
//! document order; blocks of one partition never overlap.
//!
//! Decoders take the path summary ([`Paths`]) to fill in kinds, names and levels, and
//! reject a path id outside it.
//!
//! Read next: `shred.rs` (building blocks), `read.rs` (using them).

use super::dict::PathInfo;
use super::format::{Kind, Reader, ValueRef, put_padded, put_varint};

/// The path summary as decoders need it: each path's step and depth.
#[derive(Clone, Copy)]
pub struct Paths<'a> {
    pub info: &'a [PathInfo],
    pub depths: &'a [u32],
}

/// One node of the document index, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeRecord {
    /// Position in collection document order (the label's first part).
    pub pre: u64,
    pub kind: Kind,
    /// Name id (0 for unnamed kinds).
    pub name: u32,
    /// Pre of the parent (the node itself for a document node).
    pub parent: u64,
    pub level: u32,
    /// Path-summary id.
    pub path: u32,
    /// Descendants, attributes included: the subtree is `pre + 1 ..= pre + size`.
    pub size: u64,
    pub value: ValueRef,
}

/// A label of a partition list: enough to decide every structural relation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Label {
    pub pre: u64,
    pub size: u64,
    pub level: u32,
    pub path: u32,
}

impl Label {
    /// True when `other` is a proper descendant of `self`.
    pub fn contains(&self, other: &Label) -> bool {
        other.pre > self.pre && other.pre <= self.pre + self.size
    }

    /// True when `other` is a child (or attribute) of `self`.
    pub fn is_parent_of(&self, other: &Label) -> bool {
        self.contains(other) && other.level == self.level + 1
    }
}

/// A node on its way into a block: its value and whether its size is final.
#[derive(Clone, Copy, Debug)]
pub struct PendingNode {
    pub record: NodeRecord,
    /// For `ValueRef::Inline`: the value's range in the block's byte buffer.
    pub inline: (u32, u32),
    /// True while the element is open: its size is written padded.
    pub open: bool,
}

/// Encodes a document block; returns, for every open node, its index in `nodes` and
/// the byte offset of its padded size.
/// `inline` holds the inline values (see [`PendingNode::inline`]).
pub fn encode_doc_block(nodes: &[PendingNode], inline: &[u8], out: &mut Vec<u8>, patches: &mut Vec<(usize, usize)>) {
    out.clear();
    patches.clear();
    put_varint(out, nodes.len() as u64);
    let first_streamed = nodes.iter().find_map(|n| match n.record.value {
        ValueRef::Streamed { number } => Some(number),
        _ => None,
    });
    let mut next = first_streamed.unwrap_or(0);
    put_varint(out, next);
    for (i, node) in nodes.iter().enumerate() {
        let r = &node.record;
        let value = &inline[node.inline.0 as usize..node.inline.1 as usize];
        let newline = value == b"\n";
        let form = match r.value {
            ValueRef::None => 0,
            ValueRef::Inline { .. } if newline => 3,
            ValueRef::Inline { .. } => 0,
            ValueRef::Streamed { .. } => 1,
            ValueRef::Absent => 2,
        };
        put_varint(out, u64::from(r.path) << 2 | form);
        put_varint(out, r.pre - r.parent);
        if r.kind.has_size() {
            if node.open {
                patches.push((i, out.len()));
                put_padded(out, r.size);
            } else {
                put_varint(out, r.size);
            }
        }
        match r.value {
            ValueRef::Inline { .. } if newline => {}
            ValueRef::Inline { .. } => {
                put_varint(out, value.len() as u64);
                out.extend_from_slice(value);
            }
            ValueRef::Streamed { number } => {
                assert_eq!(number, next, "a block's streamed values are consecutive");
                next += 1;
            }
            ValueRef::None | ValueRef::Absent => {}
        }
    }
}

/// Reads a path id; returns it with its step and depth.
fn path_info(path: u64, paths: Paths<'_>, pre: u64) -> Result<(u32, PathInfo, u32), String> {
    let id = u32::try_from(path).map_err(|_| format!("node {pre}: path id {path} overflows"))?;
    match (paths.info.get(id as usize), paths.depths.get(id as usize)) {
        (Some(info), Some(depth)) => Ok((id, *info, *depth)),
        _ => Err(format!("node {pre}: unknown path id {id}")),
    }
}

/// Where a block's one-character `"\n"` values point (see [`NodeRecord::value`]).
pub const NEWLINE: ValueRef = ValueRef::Inline { at: u32::MAX, len: 1 };

/// Decodes a document block whose key is `first_pre` into `out` (cleared first).
pub fn decode_doc_block(
    first_pre: u64,
    bytes: &[u8],
    paths: Paths<'_>,
    out: &mut Vec<NodeRecord>,
) -> Result<(), String> {
    out.clear();
    let mut r = Reader::new(bytes);
    let count = r.varint()?;
    if count == 0 || count > bytes.len() as u64 {
        return Err(format!("document block of {} bytes claims {count} nodes", bytes.len()));
    }
    let mut next = r.varint()?;
    for i in 0..count {
        let pre = first_pre + i;
        let head = r.varint()?;
        let (path, info, level) = path_info(head >> 2, paths, pre)?;
        let kind = info.kind;
        let parent = pre.checked_sub(r.varint()?).ok_or_else(|| format!("node {pre}: parent before the start"))?;
        let size = if kind.has_size() { r.varint()? } else { 0 };
        let value = match (kind.has_value(), head & 3) {
            (false, 0) => ValueRef::None,
            (true, 0) => {
                let len = r.varint()? as usize;
                let at = r.position();
                r.bytes(len)?;
                ValueRef::Inline { at: at as u32, len: len as u32 }
            }
            (true, 1) => {
                next += 1;
                ValueRef::Streamed { number: next - 1 }
            }
            (true, 2) if kind == Kind::Pi => ValueRef::Absent,
            (true, 3) => NEWLINE,
            (_, form) => return Err(format!("node {pre}: a {} with value form {form}", kind.name())),
        };
        let name = info.name;
        out.push(NodeRecord { pre, kind, name, parent, level, path, size, value });
    }
    if !r.is_empty() {
        return Err(format!("document block has {} trailing bytes", bytes.len() - r.position()));
    }
    Ok(())
}

/// Encodes a partition block; returns, for every open label, its index and the
/// offset of its padded size.
pub fn encode_part_block(kind: Kind, labels: &[(Label, bool)], out: &mut Vec<u8>, patches: &mut Vec<(usize, usize)>) {
    out.clear();
    patches.clear();
    put_varint(out, labels.len() as u64);
    let mut previous = labels.first().map_or(0, |(l, _)| l.pre);
    for (i, (label, open)) in labels.iter().enumerate() {
        put_varint(out, label.pre - previous);
        previous = label.pre;
        put_varint(out, u64::from(label.path));
        if kind.has_size() {
            if *open {
                patches.push((i, out.len()));
                put_padded(out, label.size);
            } else {
                put_varint(out, label.size);
            }
        }
    }
}

/// Decodes a partition block of `kind` whose first label is `first_pre`, appending
/// its labels to `out`.
pub fn decode_part_block(
    kind: Kind,
    first_pre: u64,
    bytes: &[u8],
    paths: Paths<'_>,
    out: &mut Vec<Label>,
) -> Result<(), String> {
    let mut r = Reader::new(bytes);
    let count = r.varint()?;
    if count == 0 || count > bytes.len() as u64 {
        return Err(format!("partition block of {} bytes claims {count} labels", bytes.len()));
    }
    let mut pre = first_pre;
    for i in 0..count {
        let delta = r.varint()?;
        if (i == 0) != (delta == 0) {
            return Err(format!("label {i}: pre delta {delta} breaks document order"));
        }
        pre = pre.checked_add(delta).ok_or("pre overflows")?;
        let (path, info, level) = path_info(r.varint()?, paths, pre)?;
        if info.kind != kind {
            return Err(format!("label {pre}: path {path} is a {}, not a {}", info.kind.name(), kind.name()));
        }
        let size = if kind.has_size() { r.varint()? } else { 0 };
        out.push(Label { pre, size, level, path });
    }
    if !r.is_empty() {
        return Err(format!("partition block has {} trailing bytes", bytes.len() - r.position()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::format::PADDED;

    /// Paths 0 `/`, 1 `/e`, 2 `/e/@a`, 3 `/e/text()`, 4 `/e/comment()`, 5 `/e/?pi`.
    fn summary() -> (Vec<PathInfo>, Vec<u32>) {
        let step = |parent, kind, name| PathInfo { parent, kind, name, count: 0 };
        let info = vec![
            step(0, Kind::Document, 0),
            step(0, Kind::Element, 7),
            step(1, Kind::Attribute, 8),
            step(1, Kind::Text, 0),
            step(1, Kind::Comment, 0),
            step(1, Kind::Pi, 9),
        ];
        (info, vec![0, 1, 2, 2, 2, 2])
    }

    /// Node `pre` of path `path`, every one a child of node 10 (node 10 its own).
    fn node(pre: u64, path: u32, value: ValueRef, inline: (u32, u32), open: bool) -> PendingNode {
        let (info, depths) = summary();
        let p = info[path as usize];
        let record = NodeRecord {
            pre,
            kind: p.kind,
            name: p.name,
            parent: 10,
            level: depths[path as usize],
            path,
            size: 0,
            value,
        };
        PendingNode { record, inline, open }
    }

    #[test]
    fn document_blocks_round_trip_with_patched_sizes() {
        let (info, depths) = summary();
        let paths = Paths { info: &info, depths: &depths };
        let inline = ValueRef::Inline { at: 0, len: 0 };
        let bytes = b"v\n";
        let nodes = vec![
            node(10, 1, ValueRef::None, (0, 0), true),
            node(11, 2, inline, (0, 1), false),
            node(12, 3, ValueRef::Streamed { number: 40 }, (0, 0), false),
            node(13, 3, ValueRef::Streamed { number: 41 }, (0, 0), false),
            node(14, 4, ValueRef::Streamed { number: 42 }, (0, 0), false),
            node(15, 5, ValueRef::Absent, (0, 0), false),
            node(16, 3, inline, (1, 2), false),
        ];
        let (mut out, mut patches) = (Vec::new(), Vec::new());
        encode_doc_block(&nodes, bytes, &mut out, &mut patches);
        assert_eq!(patches.len(), 1);
        super::super::format::write_padded(&mut out[patches[0].1..patches[0].1 + PADDED], 6);
        let mut decoded = Vec::new();
        decode_doc_block(10, &out, paths, &mut decoded).expect("decodes");
        assert_eq!(decoded[0].size, 6);
        for (got, want) in decoded.iter().zip(&nodes).skip(1) {
            assert_eq!(
                (got.kind, got.name, got.level, got.parent),
                (want.record.kind, want.record.name, want.record.level, 10)
            );
        }
        for i in 2..6 {
            assert_eq!(decoded[i].value, nodes[i].record.value);
        }
        assert_eq!(decoded[6].value, NEWLINE);
        let ValueRef::Inline { at, len } = decoded[1].value else { panic!("inline value expected") };
        assert_eq!(&out[at as usize..(at + len) as usize], b"v");
        for cut in 0..out.len() {
            assert!(decode_doc_block(10, &out[..cut], paths, &mut decoded).is_err(), "truncated at {cut}");
        }
        let short = Paths { info: &info[..4], depths: &depths[..4] };
        assert!(decode_doc_block(10, &out, short, &mut decoded).is_err(), "unknown path ids are errors");
    }

    #[test]
    fn partition_blocks_round_trip() {
        let (info, depths) = summary();
        let paths = Paths { info: &info, depths: &depths };
        let labels = [
            (Label { pre: 5, size: 3, level: 1, path: 1 }, false),
            (Label { pre: 9, size: 0, level: 1, path: 1 }, true),
        ];
        let (mut out, mut patches) = (Vec::new(), Vec::new());
        encode_part_block(Kind::Element, &labels, &mut out, &mut patches);
        assert_eq!(patches, [(1, out.len() - PADDED)]);
        let mut decoded = Vec::new();
        decode_part_block(Kind::Element, 5, &out, paths, &mut decoded).expect("decodes");
        assert_eq!(decoded, labels.map(|(l, _)| l));
        assert!(decode_part_block(Kind::Element, 5, &out[..out.len() - 1], paths, &mut decoded).is_err());
        assert!(decode_part_block(Kind::Text, 5, &out, paths, &mut decoded).is_err(), "a path of another kind");
    }
}
