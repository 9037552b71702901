//! Generic byte-level mutations ("havoc", after AFL): bit flips, interesting values,
//! block insertion, deletion and duplication, dictionary tokens, splicing.
//!
//! Used by the in-process driver beside each target's structure-aware mutator. Every
//! mutation keeps the input at most [`MAX_INPUT_BYTES`] long. Read next: the targets
//! (`db.rs`, `xpath.rs`, `meteo_csv.rs`).

use crate::rng::Rng;

/// Longest input a mutation produces.
pub const MAX_INPUT_BYTES: usize = 64 * 1024;

/// Byte values that often sit on boundaries.
const INTERESTING_8: [u8; 9] = [0, 1, 0x7F, 0x80, 0xFF, b'0', b'9', b'\n', b'"'];

/// 64-bit values that often sit on boundaries (little-endian when written).
pub const INTERESTING_64: [u64; 14] = [
    0,
    1,
    2,
    0x7F,
    0xFF,
    0xFFFF,
    0x7FFF_FFFF,
    0xFFFF_FFFF,
    1 << 32,
    1 << 51,
    (1 << 51) + 1,
    i64::MAX as u64,
    u64::MAX,
    u64::MAX - 1,
];

/// Applies one random havoc mutation to `input`; `dictionary` supplies tokens and
/// `others` inputs to splice from (either may be empty).
pub fn mutate(rng: &mut Rng, input: &mut Vec<u8>, dictionary: &[&[u8]], others: &[Vec<u8>]) {
    match rng.below(10) {
        0 => flip_bit(rng, input),
        1 => set_interesting(rng, input),
        2 => add_to_byte(rng, input),
        3 => delete_block(rng, input),
        4 => duplicate_block(rng, input),
        5 => insert_random(rng, input),
        6 | 7 if !dictionary.is_empty() => {
            let token = *rng.pick(dictionary);
            insert_token(rng, input, token);
        }
        8 if !others.is_empty() => {
            let other = rng.pick(others).as_slice();
            splice(rng, input, other);
        }
        _ => overwrite_word(rng, input),
    }
    input.truncate(MAX_INPUT_BYTES);
}

fn flip_bit(rng: &mut Rng, input: &mut [u8]) {
    if !input.is_empty() {
        let at = rng.below(input.len());
        input[at] ^= 1 << rng.below(8);
    }
}

fn set_interesting(rng: &mut Rng, input: &mut [u8]) {
    if !input.is_empty() {
        let at = rng.below(input.len());
        input[at] = *rng.pick(&INTERESTING_8);
    }
}

fn add_to_byte(rng: &mut Rng, input: &mut [u8]) {
    if !input.is_empty() {
        let at = rng.below(input.len());
        let delta = rng.between(1, 35) as u8;
        input[at] = if rng.ratio(1, 2) { input[at].wrapping_add(delta) } else { input[at].wrapping_sub(delta) };
    }
}

fn delete_block(rng: &mut Rng, input: &mut Vec<u8>) {
    if !input.is_empty() {
        let len = rng.small_len(input.len());
        let at = rng.below(input.len() - len + 1);
        input.drain(at..at + len);
    }
}

fn duplicate_block(rng: &mut Rng, input: &mut Vec<u8>) {
    if !input.is_empty() {
        let len = rng.small_len(input.len().min(4096));
        let from = rng.below(input.len() - len + 1);
        let block = input[from..from + len].to_vec();
        let at = rng.below(input.len() + 1);
        let copies = if rng.ratio(1, 8) { rng.small_len(64) } else { 1 };
        for _ in 0..copies {
            input.splice(at..at, block.iter().copied());
        }
    }
}

fn insert_random(rng: &mut Rng, input: &mut Vec<u8>) {
    let len = rng.small_len(32);
    let at = rng.below(input.len() + 1);
    let bytes: Vec<u8> = (0..len).map(|_| rng.byte()).collect();
    input.splice(at..at, bytes);
}

fn insert_token(rng: &mut Rng, input: &mut Vec<u8>, token: &[u8]) {
    let at = rng.below(input.len() + 1);
    if rng.ratio(1, 3) && at + token.len() <= input.len() {
        input[at..at + token.len()].copy_from_slice(token);
    } else {
        input.splice(at..at, token.iter().copied());
    }
}

fn splice(rng: &mut Rng, input: &mut Vec<u8>, other: &[u8]) {
    let cut = rng.below(input.len() + 1);
    let from = rng.below(other.len() + 1);
    input.truncate(cut);
    input.extend_from_slice(&other[from..]);
}

fn overwrite_word(rng: &mut Rng, input: &mut [u8]) {
    let width = *rng.pick(&[2usize, 4, 8]);
    if input.len() >= width {
        let at = rng.below(input.len() - width + 1);
        let value = rng.pick(&INTERESTING_64).to_le_bytes();
        input[at..at + width].copy_from_slice(&value[..width]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mutations are replayable from the seed and respect the size cap.
    #[test]
    fn mutations_are_deterministic_and_bounded() {
        let run = |seed| {
            let mut rng = Rng::new(seed);
            let mut input = b"station,time\nA,1\n".to_vec();
            for _ in 0..2000 {
                mutate(&mut rng, &mut input, &[b"NA", b"\"\""], &[b"x,y\n".to_vec()]);
                assert!(input.len() <= MAX_INPUT_BYTES);
            }
            input
        };
        assert_eq!(run(3), run(3));
    }
}
