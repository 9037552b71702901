//! The text layer under the `csv` crate: a `Read` adapter that transcodes a legacy
//! encoding (Latin-1, Windows-1250, … via `encoding_rs`) to UTF-8; for
//! whitespace-aligned files, turns each run of spaces and tabs inside a line into one
//! tab (leading and trailing runs are dropped), so the `csv` crate splits them; and in
//! a file whose lines end with a lone `\r`, makes each a `\n` (the `csv` crate ends
//! rows there too, but counts lines by `\n`); and in a file whose lines end with an
//! HTML line break (`<br />`, text saved from a web page), drops it.
//!
//! Without either job it passes reads straight through. Invariant: the output is the
//! input's text, line for line (line numbers of errors stay right).

use std::io::{self, Read};

use encoding_rs::{CoderResult, Decoder, Encoding};

const CHUNK_BYTES: usize = 64 * 1024;

/// The adapter; see the module docs.
pub struct TextInput<R> {
    inner: R,
    decoder: Option<Decoder>,
    whitespace: bool,
    raw: Vec<u8>,
    decoded: Vec<u8>,
    out: Vec<u8>,
    out_at: usize,
    finished: bool,
    line_start: bool,
    pending_space: bool,
    cr_lines: bool,
    html_breaks: bool,
    /// With `html_breaks`: the text after the last line end seen, held until its line
    /// ends (a break may be cut by a chunk's end).
    carry: Vec<u8>,
}

impl<R: Read> TextInput<R> {
    /// Reads `inner` as `encoding` (`None` or UTF-8: no transcoding), collapsing
    /// whitespace runs when `whitespace`.
    pub fn new(inner: R, encoding: Option<&'static Encoding>, whitespace: bool) -> Self {
        let decoder = encoding.filter(|e| *e != encoding_rs::UTF_8).map(Encoding::new_decoder_with_bom_removal);
        TextInput {
            inner,
            decoder,
            whitespace,
            raw: Vec::new(),
            decoded: Vec::new(),
            out: Vec::new(),
            out_at: 0,
            finished: false,
            line_start: true,
            pending_space: false,
            cr_lines: false,
            html_breaks: false,
            carry: Vec::new(),
        }
    }

    /// Drops an HTML line break (`<br />`, `<br/>`, `<br>`) at the end of each line when
    /// `html_breaks`.
    pub fn with_html_breaks(mut self, html_breaks: bool) -> Self {
        self.html_breaks = html_breaks;
        self
    }

    /// Makes each `\r` a `\n` when `cr_lines` (a file whose lines end with a lone `\r`).
    pub fn with_cr_lines(mut self, cr_lines: bool) -> Self {
        self.cr_lines = cr_lines;
        self
    }

    fn passes_through(&self) -> bool {
        self.decoder.is_none() && !self.whitespace && !self.cr_lines && !self.html_breaks
    }

    /// Refills `out`; false at the end of the input.
    fn refill(&mut self) -> io::Result<bool> {
        self.out.clear();
        self.out_at = 0;
        while self.out.is_empty() && !self.finished {
            self.raw.resize(CHUNK_BYTES, 0);
            let read = self.inner.read(&mut self.raw)?;
            self.raw.truncate(read);
            self.finished = read == 0;
            self.decode();
            self.collapse();
            if self.cr_lines {
                self.out.iter_mut().filter(|byte| **byte == b'\r').for_each(|byte| *byte = b'\n');
            }
            if self.html_breaks {
                self.drop_breaks();
            }
        }
        Ok(!self.out.is_empty())
    }

    fn decode(&mut self) {
        let Some(decoder) = self.decoder.as_mut() else {
            std::mem::swap(&mut self.raw, &mut self.decoded);
            return;
        };
        let capacity = decoder.max_utf8_buffer_length(self.raw.len()).unwrap_or(self.raw.len() * 3 + 16);
        self.decoded.resize(capacity, 0);
        let (result, _, written, _) = decoder.decode_to_utf8(&self.raw, &mut self.decoded, self.finished);
        debug_assert_eq!(result, CoderResult::InputEmpty, "the buffer is sized for the worst case");
        self.decoded.truncate(written);
    }

    fn collapse(&mut self) {
        if !self.whitespace {
            std::mem::swap(&mut self.decoded, &mut self.out);
            return;
        }
        for &byte in &self.decoded {
            match byte {
                b' ' | b'\t' => self.pending_space = !self.line_start,
                b'\n' | b'\r' => {
                    self.pending_space = false;
                    self.line_start = true;
                    self.out.push(byte);
                }
                _ => {
                    if self.pending_space {
                        self.out.push(b'\t');
                        self.pending_space = false;
                    }
                    self.line_start = false;
                    self.out.push(byte);
                }
            }
        }
    }
}

impl<R> TextInput<R> {
    /// Drops the HTML line break ending each whole line of `carry` + `out`; what
    /// follows the last line end is carried to the next chunk, unless the input ended.
    fn drop_breaks(&mut self) {
        let mut text = std::mem::take(&mut self.carry);
        text.extend_from_slice(&self.out);
        let whole = match self.finished {
            true => text.len(),
            false => text.iter().rposition(|&byte| byte == b'\n').map_or(0, |at| at + 1),
        };
        self.carry = text.split_off(whole);
        self.out.clear();
        for line in text.split_inclusive(|&byte| byte == b'\n') {
            let body = line.strip_suffix(b"\n").unwrap_or(line);
            let body = body.strip_suffix(b"\r").unwrap_or(body);
            self.out.extend_from_slice(super::sniff::without_html_break(body));
            self.out.extend_from_slice(&line[body.len()..]);
        }
    }
}

impl<R: Read> Read for TextInput<R> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        if self.passes_through() {
            return self.inner.read(buffer);
        }
        if self.out_at == self.out.len() && !self.refill()? {
            return Ok(0);
        }
        let count = buffer.len().min(self.out.len() - self.out_at);
        buffer[..count].copy_from_slice(&self.out[self.out_at..self.out_at + count]);
        self.out_at += count;
        Ok(count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn through(input: &[u8], encoding: Option<&'static Encoding>, whitespace: bool) -> String {
        let mut out = String::new();
        TextInput::new(input, encoding, whitespace).read_to_string(&mut out).expect("valid UTF-8 out");
        out
    }

    /// Latin-1 and Windows-1250 bytes come out as UTF-8; whitespace runs as one tab.
    #[test]
    fn transcodes_and_collapses() {
        assert_eq!(through(b"M\xfcnchen;1,5\n", Some(encoding_rs::WINDOWS_1252), false), "München;1,5\n");
        assert_eq!(through(b"\x8alezsk\xe1\n", Some(encoding_rs::WINDOWS_1250), false), "Šlezská\n");
        assert_eq!(through(b"  1901 01\t  -78  \r\n 2 3\n", None, true), "1901\t01\t-78\r\n2\t3\n");
        assert_eq!(through(b"a,b\n", None, false), "a,b\n");
        let mut out = String::new();
        TextInput::new(&b"a,b\rc,d\r"[..], None, false).with_cr_lines(true).read_to_string(&mut out).expect("UTF-8");
        assert_eq!(out, "a,b\nc,d\n");
    }

    /// HTML line breaks end lines wherever the chunks cut them; others stay.
    #[test]
    fn html_line_breaks_are_dropped() {
        let line = "12:51 AM,41.0,<br>x,2015-01-01 05:51:00<br />\r\n";
        let text = format!("\r\nTimeEST,DateUTC<br />\r\n{}last<br/>", line.repeat(CHUNK_BYTES / line.len() + 3));
        let mut out = String::new();
        TextInput::new(text.as_bytes(), None, false).with_html_breaks(true).read_to_string(&mut out).expect("UTF-8");
        let expected = "12:51 AM,41.0,<br>x,2015-01-01 05:51:00\r\n";
        assert_eq!(out, format!("\r\nTimeEST,DateUTC\r\n{}last", expected.repeat(CHUNK_BYTES / line.len() + 3)));
    }
}
