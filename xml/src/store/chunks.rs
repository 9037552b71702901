//! The value stream (`xml:C:text`): text, attribute, comment and PI values longer
//! than [`INLINE_MAX`](super::format::INLINE_MAX) bytes, numbered in document order
//! (the *value number*) and kept in zstd-compressed chunks of consecutive values.
//!
//! | key | value |
//! |-----|-------|
//! | number of the chunk's first value (u64 BE) | form (u8: 0 raw, 1 zstd), varint raw length, then the (compressed) raw bytes: varint value count, each value's varint length, the values |
//!
//! A node's record holds no position at all: a block knows the number of its first
//! streamed value and the others follow. Chunk boundaries are chosen when a chunk is
//! written, so each chunk is cut to fill one page once compressed (the tree keeps it
//! as a one-page blob); a value larger than a page is a chunk of its own.
//!
//! Why (measured on XMark f=0.1, 7.3 MB of values over 24 bytes): one queue record per
//! value took 7.5 MB against BaseX's 4.9 MB of texts; chunks compressed to fit a
//! quarter-page leaf cell compressed 1.9×; chunks whose boundaries were fixed before
//! compressing overflowed into two-page blobs. Cutting after compressing fills pages.
//!
//! Read next: `record.rs` (how blocks number their values), `read.rs` (the reader's
//! chunk cache).

use super::format::{Reader, put_varint};
use crate::error::{Error, Result};
use quiredb_engine::WriteTxn;
use quiredb_structures::btree::BTree;

/// zstd level: 1 is faster than 3 and, on XMark's texts in 16 KB pieces, no larger.
const LEVEL: i32 = 1;

/// Builds chunks while loading.
pub struct ChunkWriter {
    /// Number of the first buffered value.
    first: u64,
    /// Buffered values, back to back, and their lengths.
    raw: Vec<u8>,
    lens: Vec<usize>,
    /// Raw bytes to buffer before cutting a chunk (follows the compression ratio).
    target: usize,
    capacity: usize,
    compressor: zstd::bulk::Compressor<'static>,
    plain: Vec<u8>,
    out: Vec<u8>,
}

fn zstd_error(source: std::io::Error) -> Error {
    Error::Io { path: "<zstd>".into(), source }
}

impl ChunkWriter {
    /// Continues the stream after `values` streamed values; `capacity` is the largest
    /// stored chunk that fits one page.
    pub fn new(values: u64, capacity: usize) -> Result<Self> {
        Ok(ChunkWriter {
            first: values,
            raw: Vec::new(),
            lens: Vec::new(),
            target: capacity * 3,
            capacity,
            compressor: zstd::bulk::Compressor::new(LEVEL).map_err(zstd_error)?,
            plain: Vec::new(),
            out: Vec::new(),
        })
    }

    /// Values streamed so far (the next value's number).
    pub fn values(&self) -> u64 {
        self.first + self.lens.len() as u64
    }

    /// Adds a value; returns its number.
    pub fn add(&mut self, tree: &mut BTree<'_, WriteTxn<'_>>, value: &[u8]) -> Result<u64> {
        let number = self.values();
        self.raw.extend_from_slice(value);
        self.lens.push(value.len());
        while self.raw.len() >= self.target {
            self.write_chunk(tree)?;
        }
        Ok(number)
    }

    /// Writes every buffered value.
    pub fn finish(&mut self, tree: &mut BTree<'_, WriteTxn<'_>>) -> Result<()> {
        while !self.lens.is_empty() {
            self.write_chunk(tree)?;
        }
        Ok(())
    }

    /// Writes the longest run of buffered values whose chunk fits one page (at least
    /// one value), and keeps the rest.
    fn write_chunk(&mut self, tree: &mut BTree<'_, WriteTxn<'_>>) -> Result<()> {
        let mut n = self.lens.len();
        loop {
            let bytes: usize = self.lens[..n].iter().sum();
            self.encode(n, bytes)?;
            if self.out.len() <= self.capacity || n == 1 {
                let ratio = bytes as f64 / self.out.len() as f64;
                self.target = ((self.capacity as f64 * ratio) as usize).clamp(self.capacity / 2, 64 * self.capacity);
                tree.insert(&self.first.to_be_bytes(), &self.out)?;
                self.first += n as u64;
                self.lens.drain(..n);
                self.raw.drain(..bytes);
                return Ok(());
            }
            let shrink = self.capacity as f64 / self.out.len() as f64 * 0.97;
            n = ((n as f64 * shrink) as usize).clamp(1, n - 1);
        }
    }

    /// Encodes the first `n` values (`bytes` long) as a chunk into `self.out`.
    fn encode(&mut self, n: usize, bytes: usize) -> Result<()> {
        self.plain.clear();
        put_varint(&mut self.plain, n as u64);
        for &len in &self.lens[..n] {
            put_varint(&mut self.plain, len as u64);
        }
        self.plain.extend_from_slice(&self.raw[..bytes]);
        let compressed = self.compressor.compress(&self.plain).map_err(zstd_error)?;
        self.out.clear();
        let (form, body) = if compressed.len() < self.plain.len() { (1, &compressed) } else { (0, &self.plain) };
        self.out.push(form);
        put_varint(&mut self.out, self.plain.len() as u64);
        self.out.extend_from_slice(body);
        Ok(())
    }
}

/// A decoded chunk: its values back to back and where each starts. Decoding reuses
/// the chunk's buffers and decompression context, so reading values allocates nothing
/// once the buffers have grown.
#[derive(Default)]
pub struct Chunk {
    /// Number of its first value.
    pub first: u64,
    /// The decoded chunk; values start at `base`.
    bytes: Vec<u8>,
    base: usize,
    /// Start of value `i` at `base + starts[i]`, end at `base + starts[i + 1]`.
    starts: Vec<usize>,
    decompressor: Option<zstd::bulk::Decompressor<'static>>,
}

impl std::fmt::Debug for Chunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chunk")
            .field("first", &self.first)
            .field("values", &self.starts.len().saturating_sub(1))
            .finish()
    }
}

impl Chunk {
    /// Value `number`, if this chunk holds it.
    pub fn value(&self, number: u64) -> Option<&[u8]> {
        let i = usize::try_from(number.checked_sub(self.first)?).ok()?;
        Some(&self.bytes[self.base + *self.starts.get(i)?..self.base + *self.starts.get(i + 1)?])
    }

    /// Decodes a chunk stored under value number `first` into `self`.
    pub fn decode(&mut self, first: u64, stored: &[u8]) -> std::result::Result<(), String> {
        self.starts.clear();
        self.first = u64::MAX; // holds nothing until decoded whole
        let mut r = Reader::new(stored);
        let form = r.bytes(1)?[0];
        let raw_len = r.varint()? as usize;
        let body = &stored[r.position()..];
        self.bytes.clear();
        match form {
            0 if body.len() == raw_len => self.bytes.extend_from_slice(body),
            1 if raw_len <= 1 << 31 => {
                self.bytes.reserve(raw_len);
                let decompressor = match &mut self.decompressor {
                    Some(d) => d,
                    slot => slot.insert(zstd::bulk::Decompressor::new().map_err(|e| format!("zstd: {e}"))?),
                };
                decompressor.decompress_to_buffer(body, &mut self.bytes).map_err(|e| format!("zstd: {e}"))?;
            }
            _ => return Err(format!("chunk of form {form} and raw length {raw_len} is malformed")),
        }
        if self.bytes.len() != raw_len {
            return Err(format!("chunk holds {} bytes, says {raw_len}", self.bytes.len()));
        }
        let mut r = Reader::new(&self.bytes);
        let count = r.varint()?;
        if count == 0 || count > self.bytes.len() as u64 {
            return Err(format!("chunk claims {count} values"));
        }
        let mut at = 0usize;
        self.starts.push(0);
        for _ in 0..count {
            at = at.checked_add(r.varint()? as usize).ok_or("value lengths overflow")?;
            self.starts.push(at);
        }
        self.base = r.position();
        if self.bytes.len() - self.base != at {
            self.starts.clear();
            return Err(format!("chunk values take {} bytes, lengths say {at}", self.bytes.len() - self.base));
        }
        self.first = first;
        Ok(())
    }
}
