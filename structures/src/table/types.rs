//! The two encodings of a typed table: [`Value`] (any stored type: compact,
//! little-endian) and [`Key`] (a `Value` that also has an order-preserving encoding:
//! `a < b` exactly when the encodings compare so byte-wise, so typed keys sort right in
//! the byte-ordered B+tree).
//!
//! | type | key encoding | value encoding |
//! |------|--------------|----------------|
//! | `u8`…`u64`, `i8`…`i64` | big-endian, sign bit flipped for signed | little-endian |
//! | `f32`, `f64` | IEEE bits big-endian; negative: all bits flipped, else sign bit set (total order: −NaN < −∞ < −0 < +0 < +∞ < NaN) | little-endian bits |
//! | `bool`, `[u8; N]` | one byte (0/1), the N bytes | the same |
//! | `&str`, `String`, `&[u8]`, `Vec<u8>` | last member: the bytes; before the last: `00` escaped as `00 FF`, then `00 00` | the bytes |
//! | tuples of 2 to 4 | members' key encodings concatenated | fixed-width members as they are, others after a u32 length (the last: the rest) |
//!
//! A variable-length member before the last is self-delimiting, so tuple order is
//! member-by-member order ("a" < "a\0" < "ab"). A borrowed `&str` or `&[u8]` member
//! before the last cannot hold a NUL byte (it decodes by borrowing, and an escape
//! would need a copy): encoding one is refused; use `String`/`Vec<u8>` there. The
//! borrowed and owned forms share their encodings and type names (`str`, `bytes`), so
//! a table written as `&str` reads as `String` and back.
//!
//! Next: `def.rs` stores [`Value::type_name`]s in the catalog and checks them on open.

use std::borrow::Cow;

/// A type a table stores: its name in the catalog and its encoding.
pub trait Value {
    /// The type as read back, borrowing the stored bytes where it can (`&'a str`).
    type SelfType<'a>
    where
        Self: 'a;
    /// Bytes of every encoding when all have one width (tuples then store no length).
    const FIXED_WIDTH: Option<usize>;
    /// The name stored in the catalog and checked on open (`"(str, i64)"`).
    fn type_name() -> String;
    /// Appends the value encoding of `value` to `out`.
    fn encode_value(value: &Self::SelfType<'_>, out: &mut Vec<u8>);
    /// Decodes a whole value encoding; `None` when the bytes are not one.
    fn decode_value(bytes: &[u8]) -> Option<Self::SelfType<'_>>;
}

/// A [`Value`] with an order-preserving encoding, usable as a table key.
pub trait Key: Value {
    /// Appends the key encoding of `value`; `last` when no tuple member follows (the
    /// encoding then need not delimit itself). `Err` names why `value` has none.
    fn encode_key(value: &Self::SelfType<'_>, last: bool, out: &mut Vec<u8>) -> Result<(), &'static str>;
    /// Decodes one key encoding from the front of `bytes`, advancing it (`last`: the
    /// encoding runs to the end); `None` when malformed.
    fn decode_key<'a>(bytes: &mut &'a [u8], last: bool) -> Option<Self::SelfType<'a>>;
}

fn take<'a>(bytes: &mut &'a [u8], len: usize) -> Option<&'a [u8]> {
    let (head, rest) = bytes.split_at_checked(len)?;
    *bytes = rest;
    Some(head)
}

fn take_array<const N: usize>(bytes: &mut &[u8]) -> Option<[u8; N]> {
    take(bytes, N).map(|head| head.try_into().expect("take returned N bytes"))
}

/// Implements `Value` and `Key` for fixed-width number types: `$to_key`/`$from_key`
/// map to and from an unsigned type whose big-endian bytes sort like the number.
macro_rules! fixed {
    ($type:ty, $name:literal, $bits:ty, |$v:ident| $to_key:expr, |$b:ident| $from_key:expr) => {
        impl Value for $type {
            type SelfType<'a> = $type;
            const FIXED_WIDTH: Option<usize> = Some(size_of::<$type>());
            fn type_name() -> String {
                $name.to_owned()
            }
            fn encode_value(value: &$type, out: &mut Vec<u8>) {
                out.extend_from_slice(&value.to_le_bytes());
            }
            fn decode_value(bytes: &[u8]) -> Option<$type> {
                bytes.try_into().ok().map(<$type>::from_le_bytes)
            }
        }
        impl Key for $type {
            fn encode_key(value: &$type, _last: bool, out: &mut Vec<u8>) -> Result<(), &'static str> {
                let $v = *value;
                out.extend_from_slice(&<$bits>::to_be_bytes($to_key));
                Ok(())
            }
            fn decode_key(bytes: &mut &[u8], _last: bool) -> Option<$type> {
                let $b = <$bits>::from_be_bytes(take_array(bytes)?);
                Some($from_key)
            }
        }
    };
}

fixed!(u8, "u8", u8, |v| v, |b| b);
fixed!(u16, "u16", u16, |v| v, |b| b);
fixed!(u32, "u32", u32, |v| v, |b| b);
fixed!(u64, "u64", u64, |v| v, |b| b);
fixed!(i8, "i8", u8, |v| (v as u8) ^ (1 << 7), |b| (b ^ (1 << 7)) as i8);
fixed!(i16, "i16", u16, |v| (v as u16) ^ (1 << 15), |b| (b ^ (1 << 15)) as i16);
fixed!(i32, "i32", u32, |v| (v as u32) ^ (1 << 31), |b| (b ^ (1 << 31)) as i32);
fixed!(i64, "i64", u64, |v| (v as u64) ^ (1 << 63), |b| (b ^ (1 << 63)) as i64);
fixed!(f32, "f32", u32, |v| ordered_bits32(v.to_bits()), |b| f32::from_bits(unordered_bits32(b)));
fixed!(f64, "f64", u64, |v| ordered_bits64(v.to_bits()), |b| f64::from_bits(unordered_bits64(b)));

/// IEEE bits to bits that sort like `total_cmp`: negatives all flipped, else sign set.
fn ordered_bits64(bits: u64) -> u64 {
    if bits >> 63 == 1 { !bits } else { bits | (1 << 63) }
}

fn unordered_bits64(ordered: u64) -> u64 {
    if ordered >> 63 == 1 { ordered & !(1 << 63) } else { !ordered }
}

fn ordered_bits32(bits: u32) -> u32 {
    if bits >> 31 == 1 { !bits } else { bits | (1 << 31) }
}

fn unordered_bits32(ordered: u32) -> u32 {
    if ordered >> 31 == 1 { ordered & !(1 << 31) } else { !ordered }
}

impl Value for bool {
    type SelfType<'a> = bool;
    const FIXED_WIDTH: Option<usize> = Some(1);
    fn type_name() -> String {
        "bool".to_owned()
    }
    fn encode_value(value: &bool, out: &mut Vec<u8>) {
        out.push(u8::from(*value));
    }
    fn decode_value(bytes: &[u8]) -> Option<bool> {
        match bytes {
            [0] => Some(false),
            [1] => Some(true),
            _ => None,
        }
    }
}

impl Key for bool {
    fn encode_key(value: &bool, _last: bool, out: &mut Vec<u8>) -> Result<(), &'static str> {
        Self::encode_value(value, out);
        Ok(())
    }
    fn decode_key(bytes: &mut &[u8], _last: bool) -> Option<bool> {
        Self::decode_value(take(bytes, 1)?)
    }
}

impl Value for () {
    type SelfType<'a> = ();
    const FIXED_WIDTH: Option<usize> = Some(0);
    fn type_name() -> String {
        "()".to_owned()
    }
    fn encode_value(_value: &(), _out: &mut Vec<u8>) {}
    fn decode_value(bytes: &[u8]) -> Option<()> {
        bytes.is_empty().then_some(())
    }
}

impl<const N: usize> Value for [u8; N] {
    type SelfType<'a> = [u8; N];
    const FIXED_WIDTH: Option<usize> = Some(N);
    fn type_name() -> String {
        format!("[u8; {N}]")
    }
    fn encode_value(value: &[u8; N], out: &mut Vec<u8>) {
        out.extend_from_slice(value);
    }
    fn decode_value(bytes: &[u8]) -> Option<[u8; N]> {
        bytes.try_into().ok()
    }
}

impl<const N: usize> Key for [u8; N] {
    fn encode_key(value: &[u8; N], _last: bool, out: &mut Vec<u8>) -> Result<(), &'static str> {
        out.extend_from_slice(value);
        Ok(())
    }
    fn decode_key(bytes: &mut &[u8], _last: bool) -> Option<[u8; N]> {
        take_array(bytes)
    }
}

const NUL_IN_BORROWED: &str =
    "a borrowed &str or &[u8] key member before the last holds a NUL byte (use String or Vec<u8> there)";

/// Appends `bytes` as a key member: as they are when last, else escaped and ended.
fn encode_bytes_key(bytes: &[u8], last: bool, out: &mut Vec<u8>) {
    if last {
        out.extend_from_slice(bytes);
        return;
    }
    for &byte in bytes {
        out.push(byte);
        if byte == 0 {
            out.push(0xFF);
        }
    }
    out.extend_from_slice(&[0, 0]);
}

/// The end of a member before the last: (length of its escaped bytes, whether it has
/// an escape); `None` when malformed.
fn delimited_len(bytes: &[u8]) -> Option<(usize, bool)> {
    let mut escaped = false;
    let mut at = 0;
    loop {
        let zero = at + bytes[at..].iter().position(|&b| b == 0)?;
        match bytes.get(zero + 1)? {
            0 => return Some((zero, escaped)),
            0xFF => {
                escaped = true;
                at = zero + 2;
            }
            _ => return None,
        }
    }
}

/// Decodes a byte member by borrowing; `None` when malformed or escaped.
fn decode_bytes_borrowed<'a>(bytes: &mut &'a [u8], last: bool) -> Option<&'a [u8]> {
    if last {
        return take(bytes, bytes.len());
    }
    let (len, escaped) = delimited_len(bytes)?;
    let member = take(bytes, len)?;
    take(bytes, 2)?;
    (!escaped).then_some(member)
}

/// Decodes a byte member, removing escapes (borrowed when it has none).
fn decode_bytes_owned<'a>(bytes: &mut &'a [u8], last: bool) -> Option<Cow<'a, [u8]>> {
    if last {
        return take(bytes, bytes.len()).map(Cow::Borrowed);
    }
    let (len, escaped) = delimited_len(bytes)?;
    let member = take(bytes, len)?;
    take(bytes, 2)?;
    if !escaped {
        return Some(Cow::Borrowed(member));
    }
    let mut out = Vec::with_capacity(len);
    let mut tail_bytes = member;
    while let Some((&byte, tail)) = tail_bytes.split_first() {
        out.push(byte);
        tail_bytes = if byte == 0 { tail.get(1..)? } else { tail };
    }
    Some(Cow::Owned(out))
}

/// Implements `Value` and `Key` for a byte-string type: `$as_bytes` views it, `$from`
/// makes it from bytes, `$decode` reads a key member (`$borrowed`: refuse NUL before the last).
macro_rules! bytes_like {
    ($type:ty, $self_type:ty, $name:literal, $borrowed:literal, |$v:ident| $as_bytes:expr, |$b:ident| $from:expr, $decode:ident) => {
        impl Value for $type {
            type SelfType<'a>
                = $self_type
            where
                Self: 'a;
            const FIXED_WIDTH: Option<usize> = None;
            fn type_name() -> String {
                $name.to_owned()
            }
            fn encode_value($v: &Self::SelfType<'_>, out: &mut Vec<u8>) {
                out.extend_from_slice($as_bytes);
            }
            fn decode_value($b: &[u8]) -> Option<Self::SelfType<'_>> {
                $from
            }
        }
        impl Key for $type {
            fn encode_key($v: &Self::SelfType<'_>, last: bool, out: &mut Vec<u8>) -> Result<(), &'static str> {
                let bytes: &[u8] = $as_bytes;
                if $borrowed && !last && bytes.contains(&0) {
                    return Err(NUL_IN_BORROWED);
                }
                encode_bytes_key(bytes, last, out);
                Ok(())
            }
            fn decode_key<'a>(bytes: &mut &'a [u8], last: bool) -> Option<Self::SelfType<'a>> {
                let $b = $decode(bytes, last)?;
                $from
            }
        }
    };
}

bytes_like!(
    &'static str,
    &'a str,
    "str",
    true,
    |v| v.as_bytes(),
    |b| std::str::from_utf8(b).ok(),
    decode_bytes_borrowed
);
bytes_like!(&'static [u8], &'a [u8], "bytes", true, |v| v, |b| Some(b), decode_bytes_borrowed);
bytes_like!(String, String, "str", false, |v| v.as_bytes(), |b| String::from_utf8(b.to_vec()).ok(), decode_bytes_owned);
bytes_like!(Vec<u8>, Vec<u8>, "bytes", false, |v| v, |b| Some(b.to_vec()), decode_bytes_owned);

/// Width of a tuple whose members all have one (`None` otherwise).
const fn sum_widths(widths: &[Option<usize>]) -> Option<usize> {
    let mut total = 0;
    let mut i = 0;
    while i < widths.len() {
        match widths[i] {
            Some(width) => total += width,
            None => return None,
        }
        i += 1;
    }
    Some(total)
}

/// Appends a tuple member that is not the last: a variable-width one after its length.
fn encode_member<M: Value>(member: &M::SelfType<'_>, out: &mut Vec<u8>) {
    if M::FIXED_WIDTH.is_some() {
        M::encode_value(member, out);
        return;
    }
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    M::encode_value(member, out);
    let len = u32::try_from(out.len() - at - 4).expect("a tuple member fits a page's value limit");
    out[at..at + 4].copy_from_slice(&len.to_le_bytes());
}

/// Decodes a tuple member that is not the last from the front of `bytes`.
fn decode_member<'a, M: Value>(bytes: &mut &'a [u8]) -> Option<M::SelfType<'a>> {
    let len = match M::FIXED_WIDTH {
        Some(width) => width,
        None => usize::try_from(u32::from_le_bytes(take_array(bytes)?)).ok()?,
    };
    M::decode_value(take(bytes, len)?)
}

/// Implements `Value` and `Key` for a tuple: `$member`s, then the `$last` member.
macro_rules! tuple {
    ($($member:ident $index:tt),+ ; $last:ident $last_index:tt) => {
        impl<$($member: Value,)+ $last: Value> Value for ($($member,)+ $last) {
            type SelfType<'a> = ($($member::SelfType<'a>,)+ $last::SelfType<'a>) where Self: 'a;
            const FIXED_WIDTH: Option<usize> = sum_widths(&[$($member::FIXED_WIDTH,)+ $last::FIXED_WIDTH]);
            fn type_name() -> String {
                format!("({})", [$($member::type_name(),)+ $last::type_name()].join(", "))
            }
            fn encode_value(value: &Self::SelfType<'_>, out: &mut Vec<u8>) {
                $(encode_member::<$member>(&value.$index, out);)+
                $last::encode_value(&value.$last_index, out);
            }
            fn decode_value(mut bytes: &[u8]) -> Option<Self::SelfType<'_>> {
                Some(($(decode_member::<$member>(&mut bytes)?,)+ $last::decode_value(bytes)?))
            }
        }
        impl<$($member: Key,)+ $last: Key> Key for ($($member,)+ $last) {
            fn encode_key(value: &Self::SelfType<'_>, last: bool, out: &mut Vec<u8>) -> Result<(), &'static str> {
                $($member::encode_key(&value.$index, false, out)?;)+
                $last::encode_key(&value.$last_index, last, out)
            }
            fn decode_key<'a>(bytes: &mut &'a [u8], last: bool) -> Option<Self::SelfType<'a>> {
                Some(($($member::decode_key(bytes, false)?,)+ $last::decode_key(bytes, last)?))
            }
        }
    };
}

tuple!(A 0; B 1);
tuple!(A 0, B 1; C 2);
tuple!(A 0, B 1, C 2; D 3);

/// The whole key encoding of `key` into `out` (cleared first).
pub(crate) fn encode_whole_key<K: Key>(key: &K::SelfType<'_>, out: &mut Vec<u8>) -> Result<(), &'static str> {
    out.clear();
    K::encode_key(key, true, out)
}

/// Decodes a whole key encoding; `None` if malformed or followed by extra bytes.
pub(crate) fn decode_whole_key<K: Key>(mut bytes: &[u8]) -> Option<K::SelfType<'_>> {
    let key = K::decode_key(&mut bytes, true)?;
    bytes.is_empty().then_some(key)
}
