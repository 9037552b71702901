//! Order-preserving key encodings: `a < b` exactly when `a.encode() < b.encode()`
//! byte-wise, so typed keys sort correctly in the byte-ordered B+tree.
//!
//! | type        | encoding                                                         |
//! |-------------|------------------------------------------------------------------|
//! | `u64`, `u32`| big-endian                                                        |
//! | `i64`, `i32`| big-endian with the sign bit flipped                              |
//! | `f64`       | IEEE bits; negative: all bits flipped, else sign bit set (total order, −0 < +0, NaNs at the ends) |
//! | `String`, `Vec<u8>` | bytes with `00` escaped as `00 FF`, terminated by `00 00` (self-delimiting, so tuples order field by field) |
//! | tuples of 2 or 3 keys | the fields' encodings concatenated                       |

/// A type with an order-preserving, self-delimiting byte encoding.
pub trait Key: Sized {
    /// Appends the encoding of `self` to `out`.
    fn encode_to(&self, out: &mut Vec<u8>);
    /// Decodes one value from the front of `bytes`, advancing it; `None` if malformed.
    fn decode_from(bytes: &mut &[u8]) -> Option<Self>;

    /// The encoding as a new vector.
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_to(&mut out);
        out
    }

    /// Decodes a whole encoding; `None` if malformed or followed by extra bytes.
    fn decode(mut bytes: &[u8]) -> Option<Self> {
        let value = Self::decode_from(&mut bytes)?;
        bytes.is_empty().then_some(value)
    }
}

fn take<const N: usize>(bytes: &mut &[u8]) -> Option<[u8; N]> {
    let (head, rest) = bytes.split_first_chunk::<N>()?;
    *bytes = rest;
    Some(*head)
}

impl Key for u64 {
    fn encode_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_be_bytes());
    }
    fn decode_from(bytes: &mut &[u8]) -> Option<Self> {
        take::<8>(bytes).map(u64::from_be_bytes)
    }
}

impl Key for u32 {
    fn encode_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_be_bytes());
    }
    fn decode_from(bytes: &mut &[u8]) -> Option<Self> {
        take::<4>(bytes).map(u32::from_be_bytes)
    }
}

impl Key for i64 {
    fn encode_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&((*self as u64) ^ (1 << 63)).to_be_bytes());
    }
    fn decode_from(bytes: &mut &[u8]) -> Option<Self> {
        take::<8>(bytes).map(|b| (u64::from_be_bytes(b) ^ (1 << 63)) as i64)
    }
}

impl Key for i32 {
    fn encode_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&((*self as u32) ^ (1 << 31)).to_be_bytes());
    }
    fn decode_from(bytes: &mut &[u8]) -> Option<Self> {
        take::<4>(bytes).map(|b| (u32::from_be_bytes(b) ^ (1 << 31)) as i32)
    }
}

impl Key for f64 {
    fn encode_to(&self, out: &mut Vec<u8>) {
        let bits = self.to_bits();
        let ordered = if bits >> 63 == 1 { !bits } else { bits | (1 << 63) };
        out.extend_from_slice(&ordered.to_be_bytes());
    }
    fn decode_from(bytes: &mut &[u8]) -> Option<Self> {
        let ordered = u64::from_be_bytes(take::<8>(bytes)?);
        let bits = if ordered >> 63 == 1 { ordered & !(1 << 63) } else { !ordered };
        Some(f64::from_bits(bits))
    }
}

fn encode_bytes(bytes: &[u8], out: &mut Vec<u8>) {
    for &byte in bytes {
        out.push(byte);
        if byte == 0 {
            out.push(0xFF);
        }
    }
    out.extend_from_slice(&[0, 0]);
}

fn decode_bytes(bytes: &mut &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = 0;
    loop {
        match (bytes.get(at)?, bytes.get(at + 1)) {
            (0, Some(0)) => break,
            (0, Some(0xFF)) => {
                out.push(0);
                at += 2;
            }
            (0, _) => return None,
            (&byte, _) => {
                out.push(byte);
                at += 1;
            }
        }
    }
    *bytes = &bytes[at + 2..];
    Some(out)
}

impl Key for Vec<u8> {
    fn encode_to(&self, out: &mut Vec<u8>) {
        encode_bytes(self, out);
    }
    fn decode_from(bytes: &mut &[u8]) -> Option<Self> {
        decode_bytes(bytes)
    }
}

impl Key for String {
    fn encode_to(&self, out: &mut Vec<u8>) {
        encode_bytes(self.as_bytes(), out);
    }
    fn decode_from(bytes: &mut &[u8]) -> Option<Self> {
        String::from_utf8(decode_bytes(bytes)?).ok()
    }
}

impl<A: Key, B: Key> Key for (A, B) {
    fn encode_to(&self, out: &mut Vec<u8>) {
        self.0.encode_to(out);
        self.1.encode_to(out);
    }
    fn decode_from(bytes: &mut &[u8]) -> Option<Self> {
        Some((A::decode_from(bytes)?, B::decode_from(bytes)?))
    }
}

impl<A: Key, B: Key, C: Key> Key for (A, B, C) {
    fn encode_to(&self, out: &mut Vec<u8>) {
        self.0.encode_to(out);
        self.1.encode_to(out);
        self.2.encode_to(out);
    }
    fn decode_from(bytes: &mut &[u8]) -> Option<Self> {
        Some((A::decode_from(bytes)?, B::decode_from(bytes)?, C::decode_from(bytes)?))
    }
}

#[cfg(test)]
mod tests {
    use super::Key;

    fn assert_order<K: Key + PartialOrd + std::fmt::Debug>(values: &[K]) {
        for pair in values.windows(2) {
            assert!(pair[0] < pair[1], "test values must ascend");
            assert!(pair[0].encode() < pair[1].encode(), "{:?} < {:?} but encodings do not", pair[0], pair[1]);
        }
        for value in values {
            assert!(
                K::decode(&value.encode())
                    .is_some_and(|back| back.partial_cmp(value) == Some(std::cmp::Ordering::Equal))
            );
        }
    }

    /// Each encoding sorts like its type and decodes back.
    #[test]
    fn encodings_preserve_order() {
        assert_order(&[0u64, 1, 255, 256, u64::MAX]);
        assert_order(&[i64::MIN, -256, -1, 0, 1, i64::MAX]);
        assert_order(&[f64::NEG_INFINITY, -1e300, -1.5, 0.0_f64.next_down(), 0.0, 1e-300, 2.5, f64::INFINITY]);
        assert_order(&[String::new(), "a".into(), "a\0".into(), "a\0b".into(), "ab".into(), "b".into()]);
        assert_order(&[(1u64, "b".to_string()), (1, "ba".into()), (2, String::new())]);
        assert_order(&[("a".to_string(), -5i64, 1.0f64), ("a".into(), 3, 0.0), ("a\0".into(), -9, 0.0)]);
        assert!(u64::decode(&[1, 2, 3]).is_none());
        assert!(String::decode(&[b'a', 0]).is_none());
    }
}
