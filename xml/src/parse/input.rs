//! The byte stream quick-xml reads: the document's bytes decoded to UTF-8 chunk by
//! chunk ([`Input`], a `BufRead`), and the line and column of the next unread byte.
//!
//! Invariants: `buf[start..valid]` is valid UTF-8 not yet consumed; `buf[valid..filled]`
//! holds at most the 3 bytes of a character split by a read (UTF-8 only: a document in
//! another encoding is transcoded into `buf` from `raw`, and its decoder keeps a split
//! character); memory is one chunk plus what a caller's peek asks for. Bytes malformed
//! in the document's encoding are reported as an I/O error of kind `InvalidData` once
//! everything before them is consumed, with [`Input::malformed`] set, so the position
//! is exact.
//!
//! Read next: `encoding.rs` (the choice of decoding), `tree.rs` (the reader of events).

use std::io::{self, BufRead, Read};

use encoding_rs::Decoder;

use super::encoding::{self, Encoding, UTF8_BOM};

/// Bytes read from the source at a time.
const CHUNK_BYTES: usize = 64 * 1024;

/// A 1-based line and column (in characters), as roxmltree counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Position {
    pub line: u32,
    pub column: u32,
}

impl Position {
    pub const START: Position = Position { line: 1, column: 1 };

    /// Moves past `bytes` (UTF-8).
    pub fn advance(&mut self, bytes: &[u8]) {
        let chars = |b: &[u8]| b.iter().filter(|&&b| (b as i8) >= -0x40).count() as u32;
        match bytes.iter().rposition(|&b| b == b'\n') {
            Some(last) => {
                let lines = bytes.iter().filter(|&&b| b == b'\n').count() as u32;
                self.line = self.line.saturating_add(lines);
                self.column = 1 + chars(&bytes[last + 1..]);
            }
            None => self.column = self.column.saturating_add(chars(bytes)),
        }
    }

    /// The position `offset` bytes into `text`, which starts here.
    pub fn within(self, text: &str, offset: usize) -> Position {
        let mut at = self;
        at.advance(&text.as_bytes()[..offset.min(text.len())]);
        at
    }
}

pub(crate) struct Input<R> {
    source: R,
    encoding: Encoding,
    /// The decoder of an [`Encoding::Other`] document.
    decoder: Option<Decoder>,
    buf: Vec<u8>,
    raw: Vec<u8>,
    start: usize,
    valid: usize,
    filled: usize,
    eof: bool,
    /// Reading stopped at bytes malformed in the document's encoding.
    invalid: bool,
    at: Position,
}

impl<R: Read> Input<R> {
    /// Reads the head of `source` and decides its encoding; `Ok(Err(reason))` when it
    /// cannot be read.
    pub fn new(source: R) -> io::Result<std::result::Result<Self, String>> {
        let mut input = Input {
            source,
            encoding: Encoding::Utf8,
            decoder: None,
            buf: vec![0; CHUNK_BYTES],
            raw: Vec::new(),
            start: 0,
            valid: 0,
            filled: 0,
            eof: false,
            invalid: false,
            at: Position::START,
        };
        while input.filled < 1024 && !input.eof {
            input.read_more()?;
        }
        input.encoding = match encoding::detect(&input.buf[..input.filled]) {
            Ok(encoding) => encoding,
            Err(reason) => return Ok(Err(reason)),
        };
        if input.buf[..input.filled].starts_with(UTF8_BOM) {
            if input.buf[UTF8_BOM.len()..input.filled].starts_with(UTF8_BOM) {
                // quick-xml would skip this one too; roxmltree rejects it.
                return Ok(Err("a second byte order mark starts the document".into()));
            }
            input.start = UTF8_BOM.len();
            input.at.column = 2; // roxmltree counts the mark as a character
        }
        input.decoder = input.encoding.decoder();
        if input.encoding != Encoding::Utf8 {
            input.raw = input.buf[input.start..input.filled].to_vec();
            (input.start, input.filled) = (0, 0);
            input.transcode_raw(input.raw.len());
        }
        input.decode();
        Ok(Ok(input))
    }

    /// The line and column of the next unconsumed byte.
    pub fn position(&self) -> Position {
        self.at
    }

    /// The document's encoding if reading stopped at bytes malformed in it.
    pub fn malformed(&self) -> Option<&'static str> {
        self.invalid.then(|| self.encoding.name())
    }

    /// Up to `N` next unconsumed bytes (fewer only at the end of the document).
    pub fn peek<const N: usize>(&mut self) -> io::Result<[u8; N]> {
        while self.valid - self.start < N && !self.eof && !self.invalid {
            self.compact();
            self.read_more()?;
            self.decode();
        }
        let mut head = [0; N];
        let available = &self.buf[self.start..self.valid];
        let n = available.len().min(N);
        head[..n].copy_from_slice(&available[..n]);
        Ok(head)
    }

    fn compact(&mut self) {
        self.buf.copy_within(self.start..self.filled, 0);
        self.valid -= self.start;
        self.filled -= self.start;
        self.start = 0;
    }

    /// Reads one more piece of the source after `filled`.
    fn read_more(&mut self) -> io::Result<()> {
        let n = match self.encoding {
            Encoding::Utf8 => {
                if self.buf.len() < self.filled + CHUNK_BYTES / 2 {
                    self.buf.resize(self.filled + CHUNK_BYTES, 0);
                }
                let n = self.source.read(&mut self.buf[self.filled..])?;
                self.filled += n;
                n
            }
            Encoding::Latin1 | Encoding::Other(_) => {
                self.raw.resize(CHUNK_BYTES, 0);
                let n = self.source.read(&mut self.raw)?;
                self.eof = n == 0;
                self.transcode_raw(n);
                n
            }
        };
        self.eof = n == 0;
        Ok(())
    }

    /// Appends the first `n` bytes of `raw`, decoded, to the text after `filled`.
    fn transcode_raw(&mut self, n: usize) {
        self.buf.truncate(self.filled);
        match &mut self.decoder {
            Some(decoder) => {
                let last = self.eof;
                self.invalid |= !encoding::transcode(decoder, &self.raw[..n], last, &mut self.buf);
            }
            None => encoding::latin1_to_utf8(&self.raw[..n], &mut self.buf),
        }
        self.filled = self.buf.len();
    }

    /// Extends `valid` over the complete UTF-8 characters read.
    fn decode(&mut self) {
        match std::str::from_utf8(&self.buf[self.valid..self.filled]) {
            Ok(_) => self.valid = self.filled,
            Err(e) => {
                self.valid += e.valid_up_to();
                self.invalid = e.error_len().is_some() || self.eof;
            }
        }
    }
}

impl<R: Read> Read for Input<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: Read> BufRead for Input<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.start == self.valid {
            if let Some(encoding) = self.malformed() {
                let reason = format!("the document is not valid {encoding}");
                return Err(io::Error::new(io::ErrorKind::InvalidData, reason));
            }
            if self.eof {
                return Ok(&[]);
            }
            self.compact();
            self.read_more()?;
            self.decode();
        }
        Ok(&self.buf[self.start..self.valid])
    }

    fn consume(&mut self, n: usize) {
        assert!(self.start + n <= self.valid, "quick-xml consumes only what fill_buf returned");
        self.at.advance(&self.buf[self.start..self.start + n]);
        self.start += n;
    }
}
