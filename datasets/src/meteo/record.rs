//! The queue's record encoding: a raw CSV line packed four bits a character.
//!
//! Meteorological rows are mostly digits and `,` `.` `-` `:`; each of those (and `T`,
//! the ISO date/time separator) takes one *nibble*; any other byte takes three (the
//! escape nibble `15`, then the byte, high nibble first). Nibbles fill a byte high half
//! first; an odd count ends with a lone `15` (padding). A generated row
//! (`S00001,2013-03-01T00:00,5.7,1022.9,-7.1,0,0.6`, 45 bytes) packs into 24 bytes.
//!
//! | nibble | 0–9     | 10  | 11  | 12  | 13  | 14  | 15                         |
//! |--------|---------|-----|-----|-----|-----|-----|----------------------------|
//! | byte   | `0`–`9` | `,` | `.` | `-` | `:` | `T` | escape: the next two nibbles are a byte; alone at the end: padding |
//!
//! A packed record never starts with the byte `0xFF`; a record that would not get
//! shorter packed (or whose first byte is ≥ `0xF0`) is stored as `0xFF` then the raw
//! bytes. The empty record stays empty.
//!
//! Which encoding a database's queue uses is recorded in `meteo.meta` under
//! [`ENCODING_KEY`] (value [`NIBBLE_V1`]); a database without that entry holds raw
//! lines (files of earlier versions), and loads into it keep writing raw lines.

use crate::error::{Error, Result};

/// Key in `meteo.meta` naming the queue's record encoding.
pub const ENCODING_KEY: &[u8] = b"record_encoding";
/// Value of [`ENCODING_KEY`] for this module's encoding.
pub const NIBBLE_V1: &[u8] = b"nibble1";

/// First byte of a record stored unpacked.
const PLAIN: u8 = 0xFF;
/// The escape (and padding) nibble.
const ESCAPE: u8 = 15;
/// The bytes of nibbles 10..=14.
const SYMBOLS: [u8; 5] = [b',', b'.', b'-', b':', b'T'];

/// How the queue's records are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordEncoding {
    /// The raw CSV line (databases of earlier versions).
    Raw,
    /// Packed with [`pack`].
    Nibble,
}

impl RecordEncoding {
    /// The encoding named by the `meteo.meta` value `value` (`None`: no entry).
    pub fn from_meta(value: Option<&[u8]>) -> Result<Self> {
        match value {
            None => Ok(RecordEncoding::Raw),
            Some(NIBBLE_V1) => Ok(RecordEncoding::Nibble),
            Some(other) => Err(Error::Schema(format!(
                "unknown record encoding {:?} in meteo.meta",
                String::from_utf8_lossy(other)
            ))),
        }
    }

    /// Appends the stored form of the raw line `raw` to `out`.
    pub fn encode(self, raw: &[u8], out: &mut Vec<u8>) {
        match self {
            RecordEncoding::Raw => out.extend_from_slice(raw),
            RecordEncoding::Nibble => pack(raw, out),
        }
    }

    /// Replaces `out` with the raw line of the stored record `stored`.
    pub fn decode(self, stored: &[u8], out: &mut Vec<u8>) -> Result<()> {
        out.clear();
        match self {
            RecordEncoding::Raw => {
                out.extend_from_slice(stored);
                Ok(())
            }
            RecordEncoding::Nibble => unpack(stored, out),
        }
    }
}

/// Nibble of each byte (`ESCAPE` for bytes without one).
const CODES: [u8; 256] = {
    let mut codes = [ESCAPE; 256];
    let mut digit = 0;
    while digit < 10 {
        codes[(b'0' + digit) as usize] = digit;
        digit += 1;
    }
    let mut i = 0;
    while i < SYMBOLS.len() {
        codes[SYMBOLS[i] as usize] = 10 + i as u8;
        i += 1;
    }
    codes
};

/// Appends the packed form of `raw` to `out` (see the module docs).
pub fn pack(raw: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    // Room for the worst case (three nibbles a byte), trimmed at the end.
    out.resize(start + raw.len() * 3 / 2 + 2, 0);
    let buffer = &mut out[start..];
    let mut at = 0;
    // The latest nibbles, newest lowest; `count` of them are not yet written. Older
    // ones fall off the top of the u32 (at most 1 + 3 are pending).
    let (mut pending, mut count) = (0u32, 0u32);
    let mut pairs = raw.chunks_exact(2);
    for pair in pairs.by_ref() {
        let (first, second) = (CODES[pair[0] as usize], CODES[pair[1] as usize]);
        if first != ESCAPE && second != ESCAPE {
            // Two nibbles in, one byte out: `count` stays 0 or 1.
            pending = pending << 8 | u32::from(first) << 4 | u32::from(second);
            buffer[at] = (pending >> (4 * count)) as u8;
            at += 1;
            continue;
        }
        for &byte in pair {
            push_nibbles(byte, buffer, &mut at, &mut pending, &mut count);
        }
    }
    for &byte in pairs.remainder() {
        push_nibbles(byte, buffer, &mut at, &mut pending, &mut count);
    }
    if count == 1 {
        buffer[at] = (pending << 4 | u32::from(ESCAPE)) as u8;
        at += 1;
    }
    out.truncate(start + at);
    let packed = out.len() - start;
    if packed > raw.len() || out.get(start) == Some(&PLAIN) {
        out.truncate(start);
        if !raw.is_empty() {
            out.push(PLAIN);
            out.extend_from_slice(raw);
        }
    }
}

/// Packs a row straight from its fields, for one delimiter: the bytes [`pack`] gives
/// for the fields joined by the delimiter, without joining them first.
#[derive(Debug, Clone)]
pub struct FieldPacker {
    delimiter: u8,
    /// Per byte: its nibble (0–14), [`ESCAPE`] for a byte stored escaped, or
    /// [`DECLINE`] for a byte that would be quoted in the line (the delimiter, a quote,
    /// a line break).
    classes: [u8; 256],
    /// Per pair of bytes `a, b` (index `a | b << 8`): the byte of their two nibbles,
    /// or [`PAIR_SLOW`] when either has no nibble of its own (escaped or declined).
    pairs: Box<[u16; 1 << 16]>,
}

/// A pair of bytes that [`FieldPacker::pack`] takes one by one.
const PAIR_SLOW: u16 = 0x100;

/// Class of a byte that makes [`FieldPacker::pack`] decline.
const DECLINE: u8 = 0xFF;

impl FieldPacker {
    /// A packer for fields joined by `delimiter`.
    pub fn new(delimiter: u8) -> Self {
        let mut classes = CODES;
        for byte in [delimiter, b'"', b'\n', b'\r'] {
            classes[byte as usize] = DECLINE;
        }
        let mut pairs = Box::new([PAIR_SLOW; 1 << 16]);
        for (index, pair) in pairs.iter_mut().enumerate() {
            let [a, b] = (index as u16).to_le_bytes().map(|byte| classes[byte as usize]);
            if a < ESCAPE && b < ESCAPE {
                *pair = u16::from(a) << 4 | u16::from(b);
            }
        }
        FieldPacker { delimiter, classes, pairs }
    }

    /// The delimiter the fields are joined by.
    pub fn delimiter(&self) -> u8 {
        self.delimiter
    }

    /// Appends the packed line of `fields`; true on success. False, with `out`
    /// unchanged, when a field would be quoted in the line or the line is stored plain
    /// (see the module docs): the caller then joins the line and uses
    /// [`RecordEncoding::encode`]. Nibbles gather in a `u64`, newest lowest, and
    /// leave four bytes at a time.
    pub fn pack<'a>(&self, fields: impl IntoIterator<Item = &'a [u8]>, out: &mut Vec<u8>) -> bool {
        let start = out.len();
        let (mut pending, mut count, mut raw_len) = (0u64, 0u32, 0usize);
        for (index, field) in fields.into_iter().enumerate() {
            if index > 0 {
                raw_len += 1;
                gather(self.delimiter, CODES[self.delimiter as usize], &mut pending, &mut count);
            }
            flush(&mut pending, &mut count, out);
            raw_len += field.len();
            // At most 7 nibbles pending before a pair, 13 after (two escapes).
            let mut pairs = field.chunks_exact(2);
            for pair in pairs.by_ref() {
                let both = self.pairs[usize::from(pair[0]) | usize::from(pair[1]) << 8];
                if both != PAIR_SLOW {
                    pending = pending << 8 | u64::from(both);
                    count += 2;
                } else if !self.gather_each(pair, &mut pending, &mut count) {
                    out.truncate(start);
                    return false;
                }
                flush(&mut pending, &mut count, out);
            }
            if !self.gather_each(pairs.remainder(), &mut pending, &mut count) {
                out.truncate(start);
                return false;
            }
            flush(&mut pending, &mut count, out);
        }
        while count >= 2 {
            count -= 2;
            out.push((pending >> (4 * count)) as u8);
        }
        if count == 1 {
            out.push((pending << 4 | u64::from(ESCAPE)) as u8);
        }
        if out.len() - start > raw_len || out.get(start) == Some(&PLAIN) {
            out.truncate(start);
            return false;
        }
        true
    }
}

impl FieldPacker {
    /// Gathers the nibbles of `bytes` one by one; false at a byte that declines.
    #[inline(always)]
    fn gather_each(&self, bytes: &[u8], pending: &mut u64, count: &mut u32) -> bool {
        for &byte in bytes {
            let class = self.classes[byte as usize];
            if class == DECLINE {
                return false;
            }
            gather(byte, class, pending, count);
        }
        true
    }
}

/// Writes four bytes of `pending`'s nibbles to `out` if at least eight are pending.
#[inline(always)]
fn flush(pending: &mut u64, count: &mut u32, out: &mut Vec<u8>) {
    if *count >= 8 {
        *count -= 8;
        out.extend_from_slice(&((*pending >> (4 * *count)) as u32).to_be_bytes());
    }
}

/// Appends the nibble(s) of `byte`, whose code is `code` (one nibble, or three for an
/// escape) to `pending` (which keeps the newest 16).
#[inline(always)]
fn gather(byte: u8, code: u8, pending: &mut u64, count: &mut u32) {
    if code < ESCAPE {
        *pending = *pending << 4 | u64::from(code);
        *count += 1;
    } else {
        *pending = *pending << 12 | u64::from(ESCAPE) << 8 | u64::from(byte);
        *count += 3;
    }
}

/// Appends `byte`'s nibble(s) to the pending ones and writes the complete bytes.
#[inline(always)]
fn push_nibbles(byte: u8, buffer: &mut [u8], at: &mut usize, pending: &mut u32, count: &mut u32) {
    let code = u32::from(CODES[byte as usize]);
    if code == u32::from(ESCAPE) {
        *pending = *pending << 12 | code << 8 | u32::from(byte);
        *count += 3;
    } else {
        *pending = *pending << 4 | code;
        *count += 1;
    }
    while *count >= 2 {
        *count -= 2;
        buffer[*at] = (*pending >> (4 * *count)) as u8;
        *at += 1;
    }
}

/// Appends the raw line of the packed record `packed` to `out`. A truncated escape is
/// an error (a corrupt record).
pub fn unpack(packed: &[u8], out: &mut Vec<u8>) -> Result<()> {
    if let Some((&PLAIN, raw)) = packed.split_first() {
        out.extend_from_slice(raw);
        return Ok(());
    }
    // Written by index into room for the longest line (a byte a nibble), then cut.
    let start = out.len();
    out.resize(start + packed.len() * 2, 0);
    let written = unpack_into(packed, &mut out[start..]);
    out.truncate(start + written.as_ref().copied().unwrap_or(0));
    written.map(drop)
}

/// [`unpack`] of a packed record into `out` (room for two bytes a packed byte);
/// returns the bytes written.
fn unpack_into(packed: &[u8], out: &mut [u8]) -> Result<usize> {
    let nibble = |n: usize| if n.is_multiple_of(2) { packed[n / 2] >> 4 } else { packed[n / 2] & 15 };
    let total = packed.len() * 2;
    let (mut n, mut at) = (0, 0);
    while n + 1 < total {
        (n, at) = plain_run(packed, n, out, at);
        if n + 1 >= total {
            break;
        }
        match nibble(n) {
            ESCAPE if n + 2 == total => {
                return Err(Error::Schema("a packed queue record ends inside an escape".into()));
            }
            ESCAPE => {
                out[at] = nibble(n + 1) << 4 | nibble(n + 2);
                n += 3;
            }
            plain => {
                out[at] = BYTES[usize::from(plain)];
                n += 1;
            }
        }
        at += 1;
    }
    if n + 1 == total && nibble(n) != ESCAPE {
        out[at] = BYTES[usize::from(nibble(n))];
        at += 1;
    }
    Ok(at)
}

/// Decodes plain nibbles from nibble `n` on, two a step with one table look-up, into
/// `out` from byte `at`, until a pair holds an escape; returns the new `(n, at)`. An
/// escape (three nibbles) shifts the rest of a line by a nibble, so the pairs are
/// taken at either alignment — each in its own loop.
fn plain_run(packed: &[u8], n: usize, out: &mut [u8], at: usize) -> (usize, usize) {
    let slots = out[at..].chunks_exact_mut(2);
    let mut done = 0;
    if n.is_multiple_of(2) {
        for (&byte, slot) in packed[n / 2..].iter().zip(slots) {
            let pair = PAIRS[usize::from(byte)];
            if pair[0] == 0 {
                break;
            }
            slot.copy_from_slice(&pair);
            done += 1;
        }
    } else {
        for (bytes, slot) in packed[n / 2..].windows(2).zip(slots) {
            let pair = PAIRS[usize::from(bytes[0] << 4 | bytes[1] >> 4)];
            if pair[0] == 0 {
                break;
            }
            slot.copy_from_slice(&pair);
            done += 1;
        }
    }
    (n + 2 * done, at + 2 * done)
}

/// Replaces `out` with field `column` (from 0) of the comma-separated raw line of the
/// packed record `packed`, decoding no more of it than that: the fields before are
/// skipped by counting `,` nibbles (an escaped byte is never a comma). False when the
/// line has a quote up to the field's end (quoted fields need the `csv` crate: decode
/// the whole line) or fewer fields; an error for a truncated escape.
pub fn packed_field(packed: &[u8], column: usize, out: &mut Vec<u8>) -> Result<bool> {
    out.clear();
    if let Some((&PLAIN, raw)) = packed.split_first() {
        let Some(field) = raw.split(|&byte| byte == b',').nth(column) else { return Ok(false) };
        let quoted = raw[..field.as_ptr() as usize - raw.as_ptr() as usize + field.len()].contains(&b'"');
        out.extend_from_slice(field);
        return Ok(!quoted);
    }
    let nibble = |n: usize| if n.is_multiple_of(2) { packed[n / 2] >> 4 } else { packed[n / 2] & 15 };
    let total = packed.len() * 2;
    let (mut n, mut field) = (0, 0);
    while n < total {
        // Before the field, a byte of two plain nibbles neither of them a comma is
        // skipped whole.
        if field < column && n.is_multiple_of(2) && SKIPPABLE[usize::from(packed[n / 2])] {
            n += 2;
            continue;
        }
        let (byte, width) = match nibble(n) {
            ESCAPE if n + 1 == total => break,
            ESCAPE if n + 2 == total => {
                return Err(Error::Schema("a packed queue record ends inside an escape".into()));
            }
            ESCAPE => (nibble(n + 1) << 4 | nibble(n + 2), 3),
            plain => (BYTES[usize::from(plain)], 1),
        };
        n += width;
        match byte {
            b'"' => return Ok(false),
            b',' if field == column => return Ok(true),
            b',' => field += 1,
            _ if field == column => out.push(byte),
            _ => {}
        }
    }
    Ok(field == column)
}

/// Packed bytes of two plain nibbles, neither of them the comma's (10).
const SKIPPABLE: [bool; 256] = {
    let mut skippable = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        let (high, low) = (byte >> 4, byte & 15);
        skippable[byte] = high < ESCAPE as usize && low < ESCAPE as usize && high != 10 && low != 10;
        byte += 1;
    }
    skippable
};

/// The byte of each plain nibble (0–14).
const BYTES: [u8; 15] = [b'0', b'1', b'2', b'3', b'4', b'5', b'6', b'7', b'8', b'9', b',', b'.', b'-', b':', b'T'];

/// The two bytes of each packed byte whose nibbles are both plain; `[0, 0]` for a byte
/// with an escape or padding nibble (no plain nibble decodes to 0).
const PAIRS: [[u8; 2]; 256] = {
    let mut pairs = [[0u8; 2]; 256];
    let mut byte = 0;
    while byte < 256 {
        let (high, low) = (byte >> 4, byte & 15);
        if high < ESCAPE as usize && low < ESCAPE as usize {
            pairs[byte] = [BYTES[high], BYTES[low]];
        }
        byte += 1;
    }
    pairs
};
const _: () = assert!(BYTES[10] == SYMBOLS[0] && BYTES[14] == SYMBOLS[4], "BYTES follows the nibble table");

#[cfg(test)]
mod tests {
    use super::*;

    /// Every field of lines with escapes, empty fields, quotes and stored-plain records
    /// equals the field of the unpacked line; quotes and missing fields say false.
    #[test]
    fn packed_field_equals_the_field_of_the_unpacked_line() {
        let lines: [&[u8]; 6] = [
            b"S00001,2013-03-01T00:00,5.7,1022.9,-7.1,0,0.6",
            b"Aotizhongxin,2013,3,1,NA,,-0.5,",
            b",,",
            b"x",
            b"\xff\xfe,1,2",
            b"",
        ];
        for line in lines {
            let mut packed = Vec::new();
            pack(line, &mut packed);
            let fields: Vec<&[u8]> = line.split(|&b| b == b',').collect();
            let mut out = Vec::new();
            for column in 0..fields.len() + 2 {
                let found = packed_field(&packed, column, &mut out).expect("well-formed");
                assert_eq!(found, column < fields.len(), "{line:?} {column}");
                if found {
                    assert_eq!(out, fields[column], "{line:?} field {column}");
                }
            }
        }
        for quoted in [&b"\"a,b\",2,3"[..], b"1,\"2\",3"] {
            let mut packed = Vec::new();
            pack(quoted, &mut packed);
            assert!(!packed_field(&packed, 1, &mut Vec::new()).expect("well-formed"), "{quoted:?}");
        }
        let mut packed = Vec::new();
        pack(b"1,2,\"3\"", &mut packed);
        assert!(packed_field(&packed, 1, &mut Vec::new()).expect("well-formed"), "a quote after the field is fine");
    }

    fn round_trip(raw: &[u8]) -> Vec<u8> {
        let mut packed = Vec::new();
        pack(raw, &mut packed);
        let mut back = Vec::new();
        unpack(&packed, &mut back).expect("unpack");
        assert_eq!(back, raw, "round trip of {:?}", String::from_utf8_lossy(raw));
        packed
    }

    /// A generated row packs into about half its bytes and comes back unchanged.
    #[test]
    fn generated_rows_pack_to_about_half() {
        assert_eq!(round_trip(b"S00001,2013-03-01T00:00,5.7,1022.9,-7.1,0,0.6").len(), 24);
        assert_eq!(round_trip(b"1,2").len(), 2);
        assert_eq!(round_trip(b"12").len(), 1);
        assert!(round_trip(b"").is_empty());
    }

    /// Text that would grow is stored plain behind 0xFF; so is a first byte >= 0xF0.
    #[test]
    fn letters_and_high_bytes_are_stored_plain() {
        assert_eq!(round_trip(b"NA"), b"\xFFNA");
        round_trip("é,1".as_bytes());
        assert_eq!(round_trip(b"\xF0\x9F\x98\x801234567890123")[0], PLAIN);
        assert!(round_trip(b"1,\"a;b\",NA,2013-01-01 00:00:00").len() < 30);
    }

    /// Every byte value, alone and among digits, round-trips.
    #[test]
    fn every_byte_round_trips() {
        for byte in 0..=255u8 {
            round_trip(&[byte]);
            round_trip(&[b'1', byte, b'2', b'3', byte, b'4', b'5', b'6', b'7']);
        }
    }

    /// Random lines over digits, symbols and other bytes round-trip (seed:
    /// `RECORD_SEED`, printed).
    #[test]
    fn random_lines_round_trip() {
        let mut state: u64 = std::env::var("RECORD_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(7) | 1;
        println!("RECORD_SEED={state}");
        let alphabet = b"0123456789,.-:TS ;\"\xF0\xFF";
        for _ in 0..2000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let line: Vec<u8> = (0..state % 64)
                .map(|i| alphabet[((state >> (i % 58)) as usize + i as usize) % alphabet.len()])
                .collect();
            round_trip(&line);
        }
    }

    /// `FieldPacker::pack` gives `pack` of the joined line, or declines (quotes, line breaks,
    /// the delimiter inside a field, lines stored plain) and leaves `out` alone; random
    /// fields (seed: `RECORD_SEED`, printed).
    #[test]
    fn packing_fields_equals_packing_the_joined_line() {
        let fields: [&[u8]; 7] = [b"S00001", b"2013-03-01T00:00", b"5.7", b"1022.9", b"-7.1", b"0", b"0.6"];
        let mut out = vec![9];
        assert!(FieldPacker::new(b',').pack(fields, &mut out));
        let mut expected = vec![9];
        pack(&fields.join(&b',')[..], &mut expected);
        assert_eq!(out, expected);
        for declined in [&[b"1" as &[u8], b"a,b"][..], &[b"x\"y"], &[b"1\n2"], &[b"NA", b"NA"], &[b"\xF0123456"]] {
            let mut out = vec![1, 2];
            assert!(!FieldPacker::new(b',').pack(declined.iter().copied(), &mut out), "{declined:?}");
            assert_eq!(out, [1, 2]);
        }
        let mut state: u64 = std::env::var("RECORD_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(11) | 1;
        println!("RECORD_SEED={state}");
        let alphabet = b"0123456789,.-:TS ;\"\t\xF0\xFF";
        for round in 0..3000 {
            let mut next = || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state
            };
            let delimiter = [b',', b';', b'\t', b'.'][round % 4];
            let fields: Vec<Vec<u8>> = (0..next() % 9)
                .map(|_| (0..next() % 20).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]).collect())
                .collect();
            let mut out = vec![7];
            let packed = FieldPacker::new(delimiter).pack(fields.iter().map(Vec::as_slice), &mut out);
            let joined = fields.join(&delimiter);
            let mut expected = vec![7];
            pack(&joined, &mut expected);
            let quoted = fields.iter().flatten().any(|&b| b == delimiter || matches!(b, b'"' | b'\n' | b'\r'));
            let plain = expected.get(1) == Some(&PLAIN);
            assert_eq!(packed, !quoted && !plain, "{fields:?} with {delimiter}");
            assert_eq!(out, if packed { expected } else { vec![7] }, "{fields:?} with {delimiter}");
        }
    }

    /// A truncated escape is an error, not a panic.
    #[test]
    fn truncated_escape_is_an_error() {
        let mut out = Vec::new();
        unpack(&[0x1F, 0x4F], &mut out).expect("an escape then padding");
        assert_eq!(out, b"1O");
        assert!(unpack(&[0xF4], &mut out).is_err());
    }
}
