//! The `db` target's input: a *mutation program* applied to a seed image.
//!
//! Byte 0 picks the seed image ([`super::images::images`]; modulo 4, but
//! [`super::images::LOGGED_SELECTOR`] picks the image with a commit log); then come operations, each
//! an opcode byte and fixed-size arguments (bytes past the end read as 0), so any byte
//! string is a valid program and byte-level mutation (AFL's, the driver's havoc) edits
//! programs meaningfully. Operations flip bits, write bytes and words, set page-header
//! and meta-page fields (format v2 offsets, `engine/FORMAT.md`) to values of
//! interesting classes (page count ± k, 2^51 + k, the newest txn id ± k, …), truncate,
//! swap, copy, zero and append pages. Afterwards every touched page gets a valid
//! checksum again (`quiredb_engine::page::reseal`) unless an `Unseal` operation said
//! otherwise, so the mutations reach the code behind the checksum test.
//!
//! Read next: `mod.rs` (what runs on the mutated image).

use std::collections::BTreeSet;

use quiredb_engine::page;

use super::images::PAGE_SIZE;
use crate::havoc::INTERESTING_64;
use crate::rng::Rng;

/// Number of opcodes (opcode bytes are taken modulo this).
const OPCODES: u8 = 12;

/// Meta-page fields (offset, width) of format v2: magic, version, page size, txn id,
/// map root, map depth, durability, page count, logical next, record head, catalog
/// root, live pages, last synced txn. Format v3's record CRC and length (120, 124) are
/// left to the plain word writes: a longer table would renumber every saved program.
const META_FIELDS: [(usize, usize); 13] = [
    (32, 8),
    (40, 4),
    (44, 4),
    (48, 8),
    (56, 8),
    (64, 4),
    (68, 1),
    (72, 8),
    (80, 8),
    (88, 8),
    (96, 8),
    (104, 8),
    (112, 8),
];

/// Page-header fields (offset, width): kind, reserved, logical id, txn id, reserved.
const HEADER_FIELDS: [(usize, usize); 5] = [(4, 1), (5, 3), (8, 8), (16, 8), (24, 8)];

/// Reads operation arguments; past the end of the program every byte is 0.
struct Args<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Args<'_> {
    fn u8(&mut self) -> u8 {
        let byte = self.bytes.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        byte
    }

    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }
}

/// Names of [`META_FIELDS`], in order.
const META_NAMES: [&str; 13] = [
    "magic",
    "format version",
    "page size",
    "txn id",
    "map root",
    "map depth",
    "durability",
    "page count",
    "logical next",
    "record head",
    "catalog root",
    "live pages",
    "last synced txn",
];

/// Names of [`HEADER_FIELDS`], in order.
const HEADER_NAMES: [&str; 5] = ["kind", "reserved", "logical id", "txn id", "reserved"];

/// The image being mutated, the pages to reseal, and (for [`describe`]) a log.
struct Image {
    bytes: Vec<u8>,
    touched: BTreeSet<usize>,
    unsealed: BTreeSet<usize>,
    log: Option<Vec<String>>,
}

impl Image {
    fn note(&mut self, line: impl FnOnce() -> String) {
        if let Some(log) = &mut self.log {
            log.push(line());
        }
    }

    /// A name for the bytes at `at`: a meta or header field, or page and offset.
    fn field_name(at: usize) -> String {
        let (page, offset) = (at / PAGE_SIZE, at % PAGE_SIZE);
        let meta = META_FIELDS.iter().position(|&(field, _)| field == offset).filter(|_| page < 2);
        let header = HEADER_FIELDS.iter().position(|&(field, _)| field == offset);
        match (meta, header) {
            (Some(index), _) => format!("meta slot {page} {}", META_NAMES[index]),
            (None, Some(index)) => format!("page {page} header {}", HEADER_NAMES[index]),
            (None, None) => format!("page {page} byte {offset}"),
        }
    }

    fn pages(&self) -> usize {
        self.bytes.len().div_ceil(PAGE_SIZE)
    }

    /// Page `selector` modulo the page count, or `None` for an empty image.
    fn page(&mut self, selector: u16) -> Option<usize> {
        let pages = self.pages();
        (pages > 0).then(|| usize::from(selector) % pages)
    }

    fn read(&self, at: usize, width: usize) -> u64 {
        let mut word = [0u8; 8];
        let end = (at + width).min(self.bytes.len());
        if at < end {
            word[..end - at].copy_from_slice(&self.bytes[at..end]);
        }
        u64::from_le_bytes(word)
    }

    /// Writes the low `width` bytes of `value` at byte `at` (clipped to the image).
    fn write(&mut self, at: usize, width: usize, value: u64) {
        let end = (at + width).min(self.bytes.len());
        if at < end {
            let (old, new) = (self.read(at, end - at), low_bytes(value, end - at));
            self.note(|| format!("set {} ({} bytes) from {old} to {new}", Self::field_name(at), end - at));
            self.bytes[at..end].copy_from_slice(&value.to_le_bytes()[..end - at]);
            self.touched.insert(at / PAGE_SIZE);
        }
    }

    /// The newest transaction id of the two meta pages.
    fn newest_txn(&self) -> u64 {
        self.read(48, 8).max(self.read(PAGE_SIZE + 48, 8))
    }

    /// A value of class `class` (modulo 8) with parameter `k`, for a field at `at`.
    fn value(&self, class: u8, k: u8, at: usize, width: usize) -> u64 {
        let signed = i64::from(k as i8);
        match class % 8 {
            0 => u64::from(k),
            1 => INTERESTING_64[usize::from(k) % INTERESTING_64.len()],
            2 => (self.pages() as u64).wrapping_add_signed(i64::from(k % 5) - 2),
            3 => (1u64 << 51) + u64::from(k),
            4 => self.read(at, width).wrapping_add_signed(signed),
            5 => u64::MAX - u64::from(k),
            6 => 1u64 << (k % 64),
            _ => self.newest_txn().wrapping_add_signed(signed),
        }
    }

    fn swap_pages(&mut self, a: usize, b: usize) {
        if a == b || (a + 1) * PAGE_SIZE > self.bytes.len() || (b + 1) * PAGE_SIZE > self.bytes.len() {
            return;
        }
        let (low, high) = (a.min(b), a.max(b));
        let (head, tail) = self.bytes.split_at_mut(high * PAGE_SIZE);
        head[low * PAGE_SIZE..(low + 1) * PAGE_SIZE].swap_with_slice(&mut tail[..PAGE_SIZE]);
    }

    fn copy_page(&mut self, from: usize, to: usize) {
        if (from + 1) * PAGE_SIZE <= self.bytes.len() && (to + 1) * PAGE_SIZE <= self.bytes.len() {
            self.bytes.copy_within(from * PAGE_SIZE..(from + 1) * PAGE_SIZE, to * PAGE_SIZE);
        }
    }

    /// Recomputes the checksum of every touched, whole, not-unsealed page.
    fn reseal(&mut self) {
        for &index in &self.touched {
            let range = index * PAGE_SIZE..(index + 1) * PAGE_SIZE;
            if range.end <= self.bytes.len() && !self.unsealed.contains(&index) {
                page::reseal(&mut self.bytes[range]);
            }
        }
    }
}

/// The low `width` bytes of `value`, as [`Image::write`] stores them.
fn low_bytes(value: u64, width: usize) -> u64 {
    if width >= 8 { value } else { value & ((1 << (8 * width)) - 1) }
}

/// The image `program` describes (see the module docs).
pub fn apply(program: &[u8], images: &[Vec<u8>]) -> Vec<u8> {
    run(program, images, None).bytes
}

/// What `program` does, one line an operation (for reading a finding).
pub fn describe(program: &[u8], images: &[Vec<u8>]) -> Vec<String> {
    run(program, images, Some(Vec::new())).log.unwrap_or_default()
}

fn run(program: &[u8], images: &[Vec<u8>], log: Option<Vec<String>>) -> Image {
    let first = program.first().copied().unwrap_or(0);
    let plain = images.len().min(super::images::PLAIN_IMAGES);
    let logged = first == super::images::LOGGED_SELECTOR && images.len() > plain;
    let selector = if logged { images.len() - 1 } else { usize::from(first) % plain };
    let bytes = images[selector].clone();
    let mut image = Image { bytes, touched: BTreeSet::new(), unsealed: BTreeSet::new(), log };
    image.note(|| format!("seed image {selector} ({} pages of {PAGE_SIZE} bytes)", images[selector].len() / PAGE_SIZE));
    let mut args = Args { bytes: program, at: 1 };
    while args.at < program.len() {
        operation(&mut image, &mut args);
    }
    image.reseal();
    let (touched, unsealed) = (image.touched.clone(), image.unsealed.clone());
    image.note(|| format!("resealed pages {touched:?}, left unsealed {unsealed:?}"));
    image
}

fn operation(image: &mut Image, args: &mut Args<'_>) {
    match args.u8() % OPCODES {
        0 => {
            let (page, offset, bit) = (args.u16(), args.u16(), args.u8());
            if let Some(page) = image.page(page) {
                let at = page * PAGE_SIZE + usize::from(offset) % PAGE_SIZE;
                let value = image.read(at, 1) ^ (1 << (bit % 8));
                image.write(at, 1, value);
            }
        }
        1 => {
            let (page, offset, value) = (args.u16(), args.u16(), args.u8());
            if let Some(page) = image.page(page) {
                image.write(page * PAGE_SIZE + usize::from(offset) % PAGE_SIZE, 1, u64::from(value));
            }
        }
        2 => {
            let (page, offset, width, class, k) = (args.u16(), args.u16(), args.u8(), args.u8(), args.u8());
            if let Some(page) = image.page(page) {
                let width = [1, 2, 4, 8][usize::from(width % 4)];
                let at = page * PAGE_SIZE + ((usize::from(offset) % PAGE_SIZE) & !(width - 1));
                let value = image.value(class, k, at, width);
                image.write(at, width, value);
            }
        }
        3 => {
            let (page, field, class, k) = (args.u16(), args.u8(), args.u8(), args.u8());
            if let Some(page) = image.page(page) {
                let (offset, width) = HEADER_FIELDS[usize::from(field) % HEADER_FIELDS.len()];
                let at = page * PAGE_SIZE + offset;
                let value = image.value(class, k, at, width);
                image.write(at, width, value);
            }
        }
        4 => {
            let (slot, field, class, k) = (args.u8(), args.u8(), args.u8(), args.u8());
            let (offset, width) = META_FIELDS[usize::from(field) % META_FIELDS.len()];
            for page in [0, 1].into_iter().filter(|page| slot % 3 == 2 || usize::from(slot % 3) == *page) {
                let at = page * PAGE_SIZE + offset;
                let value = image.value(class, k, at, width);
                image.write(at, width, value);
            }
        }
        5 => {
            // A structure or chain field near the start of the payload.
            let (page, field, class, k) = (args.u16(), args.u8(), args.u8(), args.u8());
            if let Some(page) = image.page(page) {
                let at = page * PAGE_SIZE + 32 + usize::from(field % 16) * 4;
                let width = if field & 0x10 == 0 { 8 } else { 4 };
                let value = image.value(class, k, at, width);
                image.write(at, width, value);
            }
        }
        6 => {
            let (kind, amount) = (args.u8(), args.u16());
            let len = if kind % 2 == 0 {
                image.bytes.len().saturating_sub(usize::from(amount) % 8 * PAGE_SIZE)
            } else {
                image.bytes.len().saturating_sub(usize::from(amount))
            };
            image.note(|| format!("truncate the file to {len} bytes"));
            image.bytes.truncate(len);
        }
        7 => {
            let (a, b) = (args.u16(), args.u16());
            if let (Some(a), Some(b)) = (image.page(a), image.page(b)) {
                image.note(|| format!("swap pages {a} and {b}"));
                image.swap_pages(a, b);
            }
        }
        8 => {
            let (from, to) = (args.u16(), args.u16());
            if let (Some(from), Some(to)) = (image.page(from), image.page(to)) {
                image.note(|| format!("copy page {from} over page {to}"));
                image.copy_page(from, to);
            }
        }
        9 => {
            let (page, offset, len) = (args.u16(), args.u16(), args.u16());
            if let Some(page) = image.page(page) {
                let start = page * PAGE_SIZE + usize::from(offset) % PAGE_SIZE;
                let end = (start + usize::from(len)).min(image.bytes.len());
                if start >= end {
                    return;
                }
                image.note(|| format!("zero bytes {start}..{end}"));
                image.bytes[start..end].fill(0);
                image.touched.extend(start / PAGE_SIZE..end.div_ceil(PAGE_SIZE));
            }
        }
        10 => {
            if let Some(page) = image.page(args.u16()) {
                image.note(|| format!("leave page {page} unsealed"));
                image.unsealed.insert(page);
            }
        }
        _ => {
            let (count, from) = (args.u8() % 8, args.u16());
            let whole = image.bytes.len() / PAGE_SIZE * PAGE_SIZE;
            if let Some(from) = image.page(from)
                && whole > 0
            {
                image.note(|| format!("append {count} copies of page {from}"));
                image.bytes.truncate(whole);
                for _ in 0..count {
                    let start = from.min(whole / PAGE_SIZE - 1) * PAGE_SIZE;
                    image.bytes.extend_from_within(start..start + PAGE_SIZE);
                }
            }
        }
    }
}

/// Argument bytes of each opcode, for the structure-aware mutator.
fn arity(opcode: u8) -> usize {
    [5, 5, 7, 5, 4, 5, 3, 4, 4, 6, 2, 3][usize::from(opcode % OPCODES)]
}

/// One structure-aware mutation of a program: a new operation (most often a header or
/// meta field), a dropped one, another seed image, or a changed argument.
pub fn mutate(rng: &mut Rng, program: &mut Vec<u8>) {
    if program.is_empty() {
        program.push(rng.byte());
    }
    match rng.below(8) {
        0 => program[0] = rng.byte(),
        1 if program.len() > 1 => {
            let at = rng.between(1, program.len() - 1);
            program[at] = rng.byte();
        }
        2 => program.truncate(rng.between(1, program.len())),
        _ => {
            let opcode = *rng.pick(&[0, 1, 2, 3, 3, 4, 4, 4, 5, 5, 6, 7, 8, 9, 10, 11]);
            program.push(opcode);
            for _ in 0..arity(opcode) {
                program.push(rng.byte());
            }
        }
    }
}

/// A random program of one to eight operations.
pub fn generate(rng: &mut Rng) -> Vec<u8> {
    let mut program = vec![rng.byte()];
    for _ in 0..rng.between(1, 8) {
        mutate(rng, &mut program);
    }
    program
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Field writes land where the format puts them, and touched pages are resealed.
    #[test]
    fn meta_field_write_lands_and_is_resealed() {
        let images = vec![vec![0u8; 3 * PAGE_SIZE]];
        // Set page count (field 7) of meta slot 1 to 2^51 + 5 (class 3, k = 5).
        let image = apply(&[0, 4, 1, 7, 3, 5], &images);
        let at = PAGE_SIZE + 72;
        assert_eq!(u64::from_le_bytes(image[at..at + 8].try_into().expect("8 bytes")), (1 << 51) + 5);
        let mut expected = image[PAGE_SIZE..2 * PAGE_SIZE].to_vec();
        page::reseal(&mut expected);
        assert_eq!(&image[PAGE_SIZE..PAGE_SIZE + 4], &expected[..4], "the page is resealed");
        assert_eq!(&image[..PAGE_SIZE], &vec![0u8; PAGE_SIZE][..], "slot 0 is untouched");
    }

    /// Any bytes are a program: truncated arguments, empty images, huge selectors.
    #[test]
    fn any_bytes_are_a_program() {
        let images = vec![Vec::new(), vec![1u8; 2 * PAGE_SIZE + 17]];
        let mut rng = Rng::new(11);
        for _ in 0..5000 {
            let program: Vec<u8> = (0..rng.below(40)).map(|_| rng.byte()).collect();
            let image = apply(&program, &images);
            assert!(image.len() <= (3 + 7 * program.len()) * PAGE_SIZE);
        }
    }
}
