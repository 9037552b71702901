//! The value stream (`xml:C:text`): text, attribute, comment and PI values longer
//! than [`INLINE_MAX`](super::format::INLINE_MAX) bytes, concatenated in document
//! order and cut into chunks compressed with zstd.
//!
//! | key | value |
//! |-----|-------|
//! | chunk number (u64 BE), dense from 0 | form (u8: 0 raw, 1 zstd), varint raw length, the bytes |
//!
//! A value is (chunk, offset, length) and never straddles chunks; a value longer than a
//! chunk gets a chunk of its own. Chunks are sized so that the compressed bytes fill
//! one page (the tree keeps such a value as a one-page blob): the raw target follows
//! the compression ratio seen so far.
//!
//! Why (measured on XMark f=0.1, 7.3 MB of values over 24 bytes): one queue record per
//! value took 7.5 MB against BaseX's 4.9 MB of texts; chunks compressed to a quarter
//! page (so they stay in leaf cells) compressed 1.9× and took 4.6 MB; page-sized
//! chunks compress better and cost one decompression per page on a sequential read.
//!
//! Read next: `record.rs` (how a node points into a chunk), `read.rs` (the reader's
//! chunk cache).

use crate::error::Result;
use quiredb_engine::WriteTxn;
use quiredb_structures::btree::BTree;

use super::format::{Reader, put_varint};

/// zstd level: fast enough to keep loading disk-bound.
const LEVEL: i32 = 3;

/// Where a queued value lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValueAt {
    pub chunk: u64,
    pub offset: u32,
    pub len: u32,
}

/// Builds chunks while loading.
pub struct ChunkWriter {
    next_chunk: u64,
    raw: Vec<u8>,
    target: usize,
    cell_limit: usize,
    compressor: zstd::bulk::Compressor<'static>,
    out: Vec<u8>,
}

impl ChunkWriter {
    /// Continues the stream after `chunks` existing chunks; `cell_limit` is the largest
    /// compressed chunk that fits one page.
    pub fn new(chunks: u64, cell_limit: usize) -> std::io::Result<Self> {
        Ok(ChunkWriter {
            next_chunk: chunks,
            raw: Vec::new(),
            target: cell_limit * 2,
            cell_limit,
            compressor: zstd::bulk::Compressor::new(LEVEL)?,
            out: Vec::new(),
        })
    }

    /// Chunks written or being filled after the last flush.
    pub fn chunks(&self) -> u64 {
        self.next_chunk + u64::from(!self.raw.is_empty())
    }

    /// Adds a value; returns where it will be.
    pub fn add(&mut self, tree: &mut BTree<'_, WriteTxn<'_>>, value: &[u8]) -> Result<ValueAt> {
        if !self.raw.is_empty() && self.raw.len() + value.len() > self.target {
            self.flush(tree)?;
        }
        let at = ValueAt { chunk: self.next_chunk, offset: self.raw.len() as u32, len: value.len() as u32 };
        self.raw.extend_from_slice(value);
        Ok(at)
    }

    /// Writes the chunk being filled.
    pub fn flush(&mut self, tree: &mut BTree<'_, WriteTxn<'_>>) -> Result<()> {
        if self.raw.is_empty() {
            return Ok(());
        }
        let compressed =
            self.compressor.compress(&self.raw).map_err(|e| crate::Error::Io { path: "<zstd>".into(), source: e })?;
        self.out.clear();
        if compressed.len() < self.raw.len() {
            self.out.push(1);
            put_varint(&mut self.out, self.raw.len() as u64);
            self.out.extend_from_slice(&compressed);
            let ratio = self.raw.len() as f64 / compressed.len() as f64;
            self.target =
                ((self.cell_limit as f64 * ratio * 0.9) as usize).clamp(self.cell_limit, 64 * self.cell_limit);
        } else {
            self.out.push(0);
            put_varint(&mut self.out, self.raw.len() as u64);
            self.out.extend_from_slice(&self.raw);
            self.target = self.cell_limit;
        }
        tree.insert(&self.next_chunk.to_be_bytes(), &self.out)?;
        self.next_chunk += 1;
        self.raw.clear();
        Ok(())
    }
}

/// Decodes a stored chunk into `out` (replacing it).
pub fn decode(stored: &[u8], out: &mut Vec<u8>) -> std::result::Result<(), String> {
    let mut r = Reader::new(stored);
    let form = r.bytes(1)?[0];
    let raw_len = r.varint()? as usize;
    let body = &stored[r.position()..];
    out.clear();
    match form {
        0 if body.len() == raw_len => out.extend_from_slice(body),
        1 if raw_len <= 1 << 31 => {
            *out = zstd::bulk::decompress(body, raw_len).map_err(|e| format!("zstd: {e}"))?;
            if out.len() != raw_len {
                return Err(format!("chunk holds {} bytes, says {raw_len}", out.len()));
            }
        }
        _ => return Err(format!("chunk of form {form} and raw length {raw_len} is malformed")),
    }
    Ok(())
}
