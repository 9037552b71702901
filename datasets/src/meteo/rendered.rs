//! CSV text rendered on demand from a source of records (a spreadsheet's rows, a Parquet
//! file's record batches) and read as a stream: what `sheet_input.rs` and
//! `parquet_input.rs` hand the CSV loader, a piece at a time, so that memory holds one
//! piece, not the file's text.
//!
//! Invariant: once rendering has failed, every later read fails with the same message
//! (a reader that retried would skip the piece that failed).

use std::io::{self, Read};

/// A source of CSV text, rendered a piece at a time.
pub(crate) trait Render {
    /// Writes the next piece into `out` (empty on entry); `false` at the end.
    fn render_next(&mut self, out: &mut Vec<u8>) -> io::Result<bool>;
}

/// The text of a [`Render`] as a [`Read`].
pub(crate) struct Rendered<R> {
    source: R,
    /// Rendered text not yet read, from `at`.
    text: Vec<u8>,
    at: usize,
    failed: Option<String>,
}

impl<R: Render> Rendered<R> {
    /// The text `first` (a header, or nothing), then the source's.
    pub fn new(source: R, first: Vec<u8>) -> Self {
        Rendered { source, text: first, at: 0, failed: None }
    }
}

impl<R: Render> Read for Rendered<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(message) = &self.failed {
            return Err(io::Error::other(message.clone()));
        }
        while self.at == self.text.len() {
            self.text.clear();
            self.at = 0;
            match self.source.render_next(&mut self.text) {
                Ok(true) => {}
                Ok(false) => return Ok(0),
                Err(error) => {
                    self.failed = Some(error.to_string());
                    return Err(error);
                }
            }
        }
        let n = buf.len().min(self.text.len() - self.at);
        buf[..n].copy_from_slice(&self.text[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Writes CSV records into `out` with `write`: records of any length, fields quoted
/// where they need it.
pub(crate) fn write_csv(
    out: &mut Vec<u8>,
    write: impl FnOnce(&mut csv::Writer<&mut Vec<u8>>) -> io::Result<()>,
) -> io::Result<()> {
    let mut writer = csv::WriterBuilder::new().flexible(true).from_writer(out);
    write(&mut writer)?;
    writer.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Renders `pieces`, then fails if `fail`.
    struct Pieces {
        pieces: Vec<&'static str>,
        fail: bool,
    }

    impl Render for Pieces {
        fn render_next(&mut self, out: &mut Vec<u8>) -> io::Result<bool> {
            if self.pieces.is_empty() {
                return if self.fail { Err(io::Error::other("bad piece")) } else { Ok(false) };
            }
            out.extend_from_slice(self.pieces.remove(0).as_bytes());
            Ok(true)
        }
    }

    #[test]
    fn the_first_text_then_every_piece_is_read_even_in_small_reads() {
        let source = Pieces { pieces: vec!["a,b\n", "", "1,2\n"], fail: false };
        let mut rendered = Rendered::new(source, b"h\n".to_vec());
        let (mut text, mut buf) = (Vec::new(), [0u8; 3]);
        loop {
            let n = rendered.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            text.extend_from_slice(&buf[..n]);
        }
        assert_eq!(text, b"h\na,b\n1,2\n");
    }

    #[test]
    fn a_failure_is_returned_by_every_later_read() {
        let mut rendered = Rendered::new(Pieces { pieces: vec!["x\n"], fail: true }, Vec::new());
        let mut text = String::new();
        let error = rendered.read_to_string(&mut text).unwrap_err();
        assert_eq!(error.to_string(), "bad piece");
        assert_eq!(rendered.read(&mut [0; 4]).unwrap_err().to_string(), "bad piece");
    }

    #[test]
    fn records_are_quoted_where_they_need_it() {
        let mut out = Vec::new();
        write_csv(&mut out, |writer| {
            writer.write_record(["a", "b, c"]).map_err(io::Error::other)?;
            writer.write_record(["1"]).map_err(io::Error::other)
        })
        .unwrap();
        assert_eq!(out, b"a,\"b, c\"\n1\n");
    }
}
