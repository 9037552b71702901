//! Page deltas for the commit log: a page as the byte runs in which it differs from its
//! *base* (the version it was copied from, or zeros for a new page). A one-key commit
//! changes a few hundred bytes of each page it writes, so a logged commit carries those
//! runs instead of whole page images and its record fits in one page.
//!
//! Encoding of one page (little-endian): `phys: u64`, `base: u64` (0 = zeros),
//! `runs: u32`, then per run `offset: u32`, `len: u32` and the `len` bytes — or, when
//! bit 31 of `len` is set, no bytes: the run is that many zeros. Runs are found eight
//! bytes at a time and two runs closer than [`MERGE_GAP`] bytes are one, so a run's
//! header costs less than the equal bytes it would skip; a stretch of at least
//! [`ZERO_MIN`] zero bytes is a zero run. A page whose runs would take more room than
//! the page itself is one run of the whole page.

use crate::error::{Error, Result};
use crate::page::{self, PhysId};

/// Two runs closer than this (in bytes) are written as one.
const MERGE_GAP: usize = 16;
/// Bytes compared at once before looking closer.
const SPAN: usize = 512;
/// Bytes whose differing words are found as one mask.
const BLOCK: usize = 64;
/// Fewest zero bytes written as a zero run rather than as bytes.
const ZERO_MIN: usize = 32;
/// The bit of a run's length that makes it a run of zeros (no bytes follow).
const ZEROS_FLAG: u32 = 1 << 31;
/// Bytes of a run's header (offset and length).
const RUN_HEADER: usize = 8;
/// Bytes of a page's header in the encoding (phys, base, runs).
pub(crate) const PAGE_HEADER: usize = 20;

/// Most bytes [`encode`] appends for one page of `page_size` bytes.
pub(crate) fn max_encoded(page_size: usize) -> usize {
    PAGE_HEADER + RUN_HEADER + page_size
}

/// The byte ranges (start, end) in which `new` differs from `base` (zeros if `None`),
/// at eight-byte granularity, runs closer than [`MERGE_GAP`] merged. Equal stretches of
/// [`SPAN`] bytes are skipped with one slice comparison; in the others each block of
/// [`BLOCK`] bytes becomes a mask of its differing words and the runs are read off the
/// mask's bits (a comparison per 64-byte block, then a test per word, cost a one-key
/// commit 40 % of its instructions).
fn runs(new: &[u8], base: Option<&[u8]>, found: &mut Vec<(usize, usize)>) {
    const ZEROS: [u8; SPAN] = [0; SPAN];
    found.clear();
    let mut push = |start: usize, end: usize| match found.last_mut() {
        Some((_, last)) if start - *last < MERGE_GAP => *last = end,
        _ => found.push((start, end)),
    };
    for span in (0..new.len()).step_by(SPAN) {
        let end = (span + SPAN).min(new.len());
        let old = base.map_or(&ZEROS[..end - span], |base| &base[span..end]);
        if new[span..end] == *old {
            continue;
        }
        for (index, (new_block, old_block)) in new[span..end].chunks(BLOCK).zip(old.chunks(BLOCK)).enumerate() {
            let at = span + index * BLOCK;
            let mut mask = differing_words(new_block, old_block);
            while mask != 0 {
                let first = mask.trailing_zeros() as usize;
                let count = (mask >> first).trailing_ones() as usize;
                push(at + first * 8, at + (first + count) * 8);
                mask &= !(((1u16 << count) - 1) << first) as u8;
            }
        }
    }
}

/// Bit `w` set when word `w` of the two blocks (at most eight words) differs.
fn differing_words(new: &[u8], old: &[u8]) -> u8 {
    new.chunks_exact(8)
        .zip(old.chunks_exact(8))
        .enumerate()
        .fold(0u8, |mask, (w, (a, b))| mask | (u8::from(a != b) << w))
}

/// A run as it is written: literal bytes, or zeros.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Bytes,
    Zeros,
}

/// Splits the runs into literal and zero segments: a stretch of at least [`ZERO_MIN`]
/// zero bytes is written as its length alone (a leaf split zeroes the half it gave
/// away: 4 KiB of the left leaf's delta).
fn segments(new: &[u8], runs: &[(usize, usize)], out: &mut Vec<(usize, usize, Kind)>) {
    let zero = |at: usize| new[at..at + 8] == [0; 8];
    out.clear();
    for &(start, end) in runs {
        let (mut literal, mut at) = (start, start);
        while at < end {
            if !zero(at) {
                at += 8;
                continue;
            }
            let zeros = at;
            while at < end && zero(at) {
                at += 8;
            }
            if at - zeros >= ZERO_MIN {
                if zeros > literal {
                    out.push((literal, zeros, Kind::Bytes));
                }
                out.push((zeros, at, Kind::Zeros));
                literal = at;
            }
        }
        if end > literal {
            out.push((literal, end, Kind::Bytes));
        }
    }
}

/// The vectors [`encode`] finds a page's runs in, kept from page to page of a record.
#[derive(Default)]
pub(crate) struct Scratch {
    runs: Vec<(usize, usize)>,
    segments: Vec<(usize, usize, Kind)>,
}

/// Appends the encoding of page `phys` holding `new`, against `base` (`(phys, bytes)`
/// of the version it replaces) or zeros, to `out`.
pub(crate) fn encode(out: &mut Vec<u8>, scratch: &mut Scratch, phys: u64, new: &[u8], base: Option<(u64, &[u8])>) {
    debug_assert!(new.len().is_multiple_of(8), "pages are a multiple of eight bytes");
    runs(new, base.map(|(_, bytes)| bytes), &mut scratch.runs);
    segments(new, &scratch.runs, &mut scratch.segments);
    let found = &mut scratch.segments;
    let size =
        |(start, end, kind): &(usize, usize, Kind)| RUN_HEADER + if *kind == Kind::Zeros { 0 } else { end - start };
    if found.iter().map(size).sum::<usize>() > RUN_HEADER + new.len() {
        found.clear();
        found.push((0, new.len(), Kind::Bytes));
    }
    out.extend_from_slice(&phys.to_le_bytes());
    out.extend_from_slice(&base.map_or(0, |(id, _)| id).to_le_bytes());
    out.extend_from_slice(&(found.len() as u32).to_le_bytes());
    for &(start, end, kind) in found.iter() {
        out.extend_from_slice(&(start as u32).to_le_bytes());
        let flag = if kind == Kind::Zeros { ZEROS_FLAG } else { 0 };
        out.extend_from_slice(&((end - start) as u32 | flag).to_le_bytes());
        if kind == Kind::Bytes {
            out.extend_from_slice(&new[start..end]);
        }
    }
}

/// One page decoded: its id, its base (0 = zeros) and its runs, still to be applied.
pub(crate) struct Delta<'a> {
    pub phys: u64,
    pub base: u64,
    /// (offset, bytes); `None` bytes: that many zeros (`usize`).
    runs: Vec<(usize, usize, Option<&'a [u8]>)>,
}

impl Delta<'_> {
    /// The page: `base` (the base's bytes, or zeros) with the runs applied.
    #[cfg(test)]
    pub(crate) fn apply(&self, base: Option<&[u8]>, page_size: usize) -> Vec<u8> {
        let mut page = Vec::with_capacity(page_size);
        self.apply_into(base, page_size, &mut page);
        page
    }

    /// The page (`base`, or zeros, with the runs applied) built in `page` (a buffer
    /// reused: its old contents are replaced).
    pub(crate) fn apply_into(&self, base: Option<&[u8]>, page_size: usize, page: &mut Vec<u8>) {
        page.clear();
        match base {
            Some(base) => page.extend_from_slice(base),
            None => page.resize(page_size, 0),
        }
        for &(at, len, bytes) in &self.runs {
            match bytes {
                Some(bytes) => page[at..at + len].copy_from_slice(bytes),
                None => page[at..at + len].fill(0),
            }
        }
    }
}

/// Decodes the page at `bytes[*at..]` (the record was found at `record`), advancing `at`.
/// Runs must lie inside a page of `page_size` bytes.
pub(crate) fn decode<'a>(bytes: &'a [u8], at: &mut usize, page_size: usize, record: PhysId) -> Result<Delta<'a>> {
    let bad = || Error::corrupted(record, "a commit log record's page delta runs past the record or its page");
    let header = bytes.get(*at..*at + PAGE_HEADER).ok_or_else(bad)?;
    let (phys, base, count) = (page::read_u64(header, 0), page::read_u64(header, 8), page::read_u32(header, 16));
    *at += PAGE_HEADER;
    let mut runs = Vec::with_capacity((count as usize).min(page_size / 8));
    for _ in 0..count {
        let head = bytes.get(*at..*at + RUN_HEADER).ok_or_else(bad)?;
        let (start, field) = (page::read_u32(head, 0) as usize, page::read_u32(head, 4));
        let len = (field & !ZEROS_FLAG) as usize;
        if start.checked_add(len).is_none_or(|end| end > page_size) {
            return Err(bad());
        }
        *at += RUN_HEADER;
        if field & ZEROS_FLAG != 0 {
            runs.push((start, len, None));
            continue;
        }
        let run = bytes.get(*at..*at + len).ok_or_else(bad)?;
        runs.push((start, len, Some(run)));
        *at += len;
    }
    Ok(Delta { phys, base, runs })
}

#[cfg(test)]
mod tests {
    use super::*;
    use quiredb_test_support::{Rng, random_seed};

    #[test]
    fn a_page_rebuilt_from_its_delta_equals_the_page() {
        let mut rng = Rng::new(random_seed());
        for round in 0..2_000 {
            let size = 512;
            let base: Vec<u8> = (0..size).map(|_| rng.below(4) as u8).collect();
            let mut new = base.clone();
            for _ in 0..rng.below(40) {
                let at = rng.below(size as u64) as usize;
                new[at] = rng.below(256) as u8;
            }
            for _ in 0..rng.below(3) {
                let at = rng.below(size as u64) as usize;
                let end = (at + rng.below(200) as usize).min(size);
                new[at..end].fill(0); // zero runs, long and short
            }
            let with_base = rng.below(2) == 0;
            let mut out = Vec::new();
            encode(&mut out, &mut Scratch::default(), 7, &new, with_base.then_some((3, &base[..])));
            assert!(out.len() <= max_encoded(size), "round {round}: {} bytes", out.len());
            let mut at = 0;
            let delta = decode(&out, &mut at, size, PhysId(1)).unwrap();
            assert_eq!((delta.phys, delta.base, at), (7, if with_base { 3 } else { 0 }, out.len()));
            assert_eq!(delta.apply(with_base.then_some(&base[..]), size), new, "round {round}");
        }
    }

    #[test]
    fn a_zeroed_half_page_costs_a_run_header() {
        let base: Vec<u8> = (0..8192).map(|at| (at % 251) as u8 | 1).collect();
        let mut new = base.clone();
        new[4096..].fill(0);
        let mut out = Vec::new();
        encode(&mut out, &mut Scratch::default(), 7, &new, Some((3, &base)));
        assert_eq!(out.len(), PAGE_HEADER + RUN_HEADER, "one zero run, no bytes");
    }

    #[test]
    fn a_delta_running_past_its_page_or_record_is_corruption() {
        let mut out = Vec::new();
        encode(&mut out, &mut Scratch::default(), 7, &[1u8; 64], None);
        assert!(decode(&out, &mut 0, 32, PhysId(1)).is_err(), "a run past the page");
        assert!(decode(&out[..out.len() - 1], &mut 0, 64, PhysId(1)).is_err(), "a run past the record");
    }
}
