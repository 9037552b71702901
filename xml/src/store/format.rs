//! Byte encodings of the XML store: varints, node records of the document index,
//! labels of the partition index, and the keys of every tree.
//!
//! All integers in records are LEB128 varints (7 bits a byte, low bits first, high bit
//! = more). A size that is not known when its record is written (an element still open
//! when its block leaves memory) is written *padded*: [`PADDED`] bytes whatever the
//! value, so the loader can patch it in place once the element closes. Keys are
//! big-endian so byte order is numeric order.
//!
//! Decoding never trusts the bytes: every read is bounds-checked and a bad record is an
//! `Err(reason)` the caller turns into `Error::Corrupted` naming the page's tree.
//!
//! Read next: `mod.rs` (the layout tables), `shred.rs` (who writes these records).

/// Bytes of a padded varint: enough for any u64.
pub const PADDED: usize = 10;

/// Appends `value` as a varint.
pub fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Appends `value` as a varint of exactly [`PADDED`] bytes.
pub fn put_padded(out: &mut Vec<u8>, value: u64) {
    let at = out.len();
    out.resize(at + PADDED, 0);
    write_padded(&mut out[at..at + PADDED], value);
}

/// Overwrites a padded varint in place.
pub fn write_padded(slot: &mut [u8], mut value: u64) {
    for (i, byte) in slot.iter_mut().enumerate() {
        let more = if i + 1 < PADDED { 0x80 } else { 0 };
        *byte = (value as u8 & 0x7f) | more;
        value >>= 7;
    }
}

/// A bounds-checked reader over a record's bytes.
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, at: 0 }
    }

    /// Offset of the next byte to read.
    pub fn position(&self) -> usize {
        self.at
    }

    pub fn is_empty(&self) -> bool {
        self.at >= self.bytes.len()
    }

    pub fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            let Some(&byte) = self.bytes.get(self.at) else {
                return Err(format!("varint runs past the end at byte {}", self.at));
            };
            self.at += 1;
            if shift == 63 && byte > 1 {
                return Err(format!("varint overflows 64 bits at byte {}", self.at - 1));
            }
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(format!("varint longer than {PADDED} bytes at byte {}", self.at))
    }

    pub fn u32(&mut self) -> Result<u32, String> {
        let value = self.varint()?;
        u32::try_from(value).map_err(|_| format!("value {value} does not fit 32 bits"))
    }

    pub fn bytes(&mut self, len: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(len).filter(|&end| end <= self.bytes.len());
        let Some(end) = end else {
            return Err(format!("{len} bytes at {} run past the record's {} bytes", self.at, self.bytes.len()));
        };
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    pub fn u64_le(&mut self) -> Result<u64, String> {
        let bytes = self.bytes(8)?;
        Ok(u64::from_le_bytes(bytes.try_into().expect("8 bytes")))
    }
}

/// Node kinds, as stored (the numbering is part of the format).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Document = 0,
    Element = 1,
    Attribute = 2,
    Text = 3,
    Comment = 4,
    Pi = 5,
}

impl Kind {
    pub const ALL: [Kind; 6] = [Kind::Document, Kind::Element, Kind::Attribute, Kind::Text, Kind::Comment, Kind::Pi];

    pub fn from_code(code: u8) -> Option<Kind> {
        Kind::ALL.get(usize::from(code)).copied()
    }

    /// Kinds with a name (elements, attributes, PI targets).
    pub fn is_named(self) -> bool {
        matches!(self, Kind::Element | Kind::Attribute | Kind::Pi)
    }

    /// Kinds with a stored value (text, attribute, comment, PI content).
    pub fn has_value(self) -> bool {
        matches!(self, Kind::Attribute | Kind::Text | Kind::Comment | Kind::Pi)
    }

    /// Kinds that can have descendants.
    pub fn has_size(self) -> bool {
        matches!(self, Kind::Document | Kind::Element)
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Document => "document",
            Kind::Element => "element",
            Kind::Attribute => "attribute",
            Kind::Text => "text",
            Kind::Comment => "comment",
            Kind::Pi => "processing-instruction",
        }
    }
}

/// Where a node's value lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueRef {
    /// No value (documents, elements).
    None,
    /// Stored in the block at this byte range.
    Inline { at: u32, len: u32 },
    /// Value `number` of the value stream (`chunks.rs`).
    Streamed { number: u64 },
    /// A PI without a value (`<?target?>`): different from an empty one in the oracle.
    Absent,
}

/// Values up to this many bytes are stored inside the document index block.
pub const INLINE_MAX: usize = 24;

/// Key of a document-index block: the pre of its first node.
pub fn doc_key(pre: u64) -> [u8; 8] {
    pre.to_be_bytes()
}

/// Key of a partition block: kind, name id, pre of its first label.
pub fn part_key(kind: Kind, name: u32, pre: u64) -> [u8; 13] {
    let mut key = [0u8; 13];
    key[0] = kind as u8;
    key[1..5].copy_from_slice(&name.to_be_bytes());
    key[5..13].copy_from_slice(&pre.to_be_bytes());
    key
}

/// Splits a partition key; `None` when it is not 13 bytes or names no kind.
pub fn split_part_key(key: &[u8]) -> Option<(Kind, u32, u64)> {
    if key.len() != 13 {
        return None;
    }
    let kind = Kind::from_code(key[0])?;
    let name = u32::from_be_bytes(key[1..5].try_into().ok()?);
    Some((kind, name, u64::from_be_bytes(key[5..13].try_into().ok()?)))
}

/// Order-preserving encoding of an f64 (NaN is never indexed).
pub fn f64_key(value: f64) -> [u8; 8] {
    let bits = value.to_bits();
    let ordered = if bits >> 63 == 1 { !bits } else { bits | (1 << 63) };
    ordered.to_be_bytes()
}

/// Inverse of [`f64_key`].
pub fn f64_from_key(bytes: [u8; 8]) -> f64 {
    let ordered = u64::from_be_bytes(bytes);
    let bits = if ordered >> 63 == 1 { ordered & !(1 << 63) } else { !ordered };
    f64::from_bits(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_plain_and_padded() {
        for value in [0, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, value);
            put_padded(&mut out, value);
            let mut reader = Reader::new(&out);
            assert_eq!(reader.varint(), Ok(value));
            let at = reader.position();
            assert_eq!(reader.varint(), Ok(value));
            assert_eq!(reader.position() - at, PADDED);
            assert!(reader.is_empty());
        }
    }

    #[test]
    fn truncated_or_overlong_varints_are_errors() {
        assert!(Reader::new(&[0x80]).varint().is_err());
        assert!(Reader::new(&[0xff; 11]).varint().is_err());
        assert!(Reader::new(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02]).varint().is_err());
        assert!(Reader::new(&[1, 2]).bytes(3).is_err());
    }

    #[test]
    fn float_keys_sort_like_floats() {
        let mut values = [-1e300, -2.5, -0.0, 0.0, 1e-300, 3.0, 40.0, f64::INFINITY, f64::NEG_INFINITY];
        let mut keys: Vec<_> = values.iter().map(|&v| f64_key(v)).collect();
        keys.sort();
        values.sort_by(f64::total_cmp);
        let decoded: Vec<f64> = keys.iter().map(|&k| f64_from_key(k)).collect();
        assert_eq!(decoded.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), values.map(f64::to_bits));
    }
}
