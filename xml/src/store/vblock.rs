//! Blocks of the value index: runs of (key, posting list) entries in key order, with
//! front coding, stored as B+tree values.
//!
//! Tree key: the block's first entry key followed by the first pre of that entry's
//! postings in the block (u64 BE), so a long posting list can continue over several
//! blocks, each under its own key, and every block stays in a leaf. Block:
//!
//! | field    | encoding |
//! |----------|----------|
//! | count    | varint entries |
//! | per entry: shared | varint bytes shared with the previous key (the first entry shares all of the block's first key) |
//! | suffix   | varint length + bytes |
//! | postings | varint count, then varint pre deltas (the first from 0) |
//!
//! A key appears once per block; across blocks, the pieces of one list are in pre
//! order. Why blocks: a B+tree cell per distinct value costs 16 bytes of overhead plus
//! the repeated name prefix (24.3 MB on XMark f=1; blocks: 9.5 MB), and a list
//! over a quarter page became a blob that took a whole page.
//!
//! Read next: `values.rs` (keys, loading, lookups).

use super::format::{Reader, put_varint};
use crate::error::Result;
use quiredb_engine::WriteTxn;
use quiredb_structures::btree::BTree;
use std::ops::Bound;

/// One decoded entry.
pub type Entry = (Vec<u8>, Vec<u64>);
/// One entry to write: a key and its postings.
pub type Run<'a> = (&'a [u8], &'a [u64]);

/// The first entry key and first pre a tree key names.
pub fn split_tree_key(tree_key: &[u8]) -> Option<(&[u8], u64)> {
    let at = tree_key.len().checked_sub(8)?;
    Some((&tree_key[..at], u64::from_be_bytes(tree_key[at..].try_into().ok()?)))
}

/// Decodes a block stored under `tree_key`, calling `visit` for each entry.
pub fn decode(
    tree_key: &[u8],
    bytes: &[u8],
    visit: impl FnMut(&[u8], &mut Vec<u64>) -> Result<()>,
) -> Result<std::result::Result<(), String>> {
    decode_with(tree_key, bytes, &mut Vec::new(), &mut Vec::new(), visit)
}

/// [`decode`] with the key and posting buffers given (reused, nothing allocated once
/// they have grown).
pub fn decode_with(
    tree_key: &[u8],
    bytes: &[u8],
    key: &mut Vec<u8>,
    pres: &mut Vec<u64>,
    mut visit: impl FnMut(&[u8], &mut Vec<u64>) -> Result<()>,
) -> Result<std::result::Result<(), String>> {
    let Some((first_key, first_pre)) = split_tree_key(tree_key) else {
        return Ok(Err("value-block key shorter than 8 bytes".into()));
    };
    let mut r = Reader::new(bytes);
    key.clear();
    key.extend_from_slice(first_key);
    let count = match r.varint() {
        Ok(count) if count > 0 && count <= bytes.len() as u64 => count,
        Ok(count) => return Ok(Err(format!("value block claims {count} entries"))),
        Err(e) => return Ok(Err(e)),
    };
    for i in 0..count {
        if let Err(reason) = entry(&mut r, i, key, pres, bytes.len()) {
            return Ok(Err(reason));
        }
        if i == 0 && pres[0] != first_pre {
            return Ok(Err(format!("block key names pre {first_pre}, its first posting is {}", pres[0])));
        }
        visit(key, pres)?;
    }
    if !r.is_empty() {
        return Ok(Err("trailing bytes after the last entry".into()));
    }
    Ok(Ok(()))
}

/// Reads entry `i` into `key` (holding the previous key) and `pres`.
fn entry(
    r: &mut Reader<'_>,
    i: u64,
    key: &mut Vec<u8>,
    pres: &mut Vec<u64>,
    limit: usize,
) -> std::result::Result<(), String> {
    let shared = r.varint()? as usize;
    let suffix_len = r.varint()? as usize;
    if shared > key.len()
        || (i == 0 && (shared != key.len() || suffix_len != 0))
        || (i > 0 && suffix_len == 0 && shared == key.len())
    {
        return Err(format!("entry {i} shares {shared} bytes of a {}-byte key", key.len()));
    }
    key.truncate(shared);
    key.extend_from_slice(r.bytes(suffix_len)?);
    let n = r.varint()?;
    if n == 0 || n > limit as u64 {
        return Err(format!("entry {i} claims {n} postings"));
    }
    pres.clear();
    let mut pre = 0u64;
    for j in 0..n {
        let delta = r.varint()?;
        if j > 0 && delta == 0 {
            return Err(format!("entry {i} repeats a node"));
        }
        pre = pre.checked_add(delta).ok_or("posting overflows")?;
        pres.push(pre);
    }
    Ok(())
}

fn varint_len(value: u64) -> usize {
    (64 - value.max(1).leading_zeros() as usize).div_ceil(7)
}

/// Encodes `entries` (strictly ascending keys) into blocks whose tree key and bytes
/// take at most about `limit` bytes together, returning (tree key, block bytes) pairs;
/// a long list continues over blocks.
pub fn encode(entries: &[Run<'_>], limit: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut blocks = Vec::new();
    let mut body = Vec::new();
    let (mut count, mut first_key): (u64, Option<Vec<u8>>) = (0, None);
    let mut previous: &[u8] = &[];
    for &(key, pres) in entries {
        let mut rest = pres;
        while let Some(&head) = rest.first() {
            let shared = if first_key.is_some() {
                key.iter().zip(previous).take_while(|(a, b)| a == b).count()
            } else {
                key.len()
            };
            let header = varint_len(shared as u64) + varint_len((key.len() - shared) as u64) + key.len() - shared + 5;
            // The tree key shares the leaf cell with the block.
            let tree_key_len = first_key.as_ref().map_or(key.len() + 8, Vec::len);
            let mut room = limit.saturating_sub(body.len() + header + tree_key_len);
            let (mut n, mut last) = (0, 0);
            while n < rest.len() && varint_len(rest[n] - last) <= room {
                room -= varint_len(rest[n] - last);
                last = rest[n];
                n += 1;
            }
            if n < rest.len() && first_key.is_some() {
                // Split a list only when it does not fit a block of its own.
                blocks.push(finish(first_key.take(), count, &mut body));
                count = 0;
                continue;
            }
            let n = n.max(1);
            if first_key.is_none() {
                let mut tree_key = key.to_vec();
                tree_key.extend_from_slice(&head.to_be_bytes());
                first_key = Some(tree_key);
            }
            put_varint(&mut body, shared as u64);
            put_varint(&mut body, (key.len() - shared) as u64);
            body.extend_from_slice(&key[shared..]);
            put_varint(&mut body, n as u64);
            let mut last = 0;
            for &pre in &rest[..n] {
                put_varint(&mut body, pre - last);
                last = pre;
            }
            count += 1;
            previous = key;
            rest = &rest[n..];
            if !rest.is_empty() {
                blocks.push(finish(first_key.take(), count, &mut body));
                count = 0;
            }
        }
    }
    if first_key.is_some() {
        blocks.push(finish(first_key.take(), count, &mut body));
    }
    blocks
}

fn finish(tree_key: Option<Vec<u8>>, count: u64, body: &mut Vec<u8>) -> (Vec<u8>, Vec<u8>) {
    let mut block = Vec::with_capacity(body.len() + 4);
    put_varint(&mut block, count);
    block.append(body);
    (tree_key.expect("a block has a first entry"), block)
}

/// Merges `new` (ascending keys, pres later than any stored) into the tree: each run
/// of new entries goes into the block it falls in (the last block whose key is not
/// greater, or the first block), which is decoded, merged and rewritten.
pub fn merge(tree: &mut BTree<'_, WriteTxn<'_>>, new: &[Run<'_>], limit: usize) -> Result<()> {
    let composite = |(key, pres): &Run<'_>| {
        let mut c = key.to_vec();
        c.extend_from_slice(&pres[0].to_be_bytes());
        c
    };
    let mut i = 0;
    while i < new.len() {
        let block = match tree.floor(&composite(&new[i]))? {
            Some(block) => Some(block),
            None => tree.first()?,
        };
        let Some((key, value)) = block else {
            for (key, value) in encode(&new[i..], limit) {
                tree.insert(&key, &value)?;
            }
            return Ok(());
        };
        let next = tree.range(Bound::Excluded(key.as_slice()), Bound::Unbounded).next().transpose()?;
        let end = match next {
            Some((next, _)) => i + new[i..].iter().take_while(|e| composite(e) < next).count(),
            None => new.len(),
        };
        let mut old = Vec::new();
        decode(&key, &value, |k, pres| {
            old.push((k.to_vec(), std::mem::take(pres)));
            Ok(())
        })?
        .map_err(|reason| super::corrupted(tree.name(), 0, format!("value block: {reason}")))?;
        tree.remove(&key)?;
        let merged = merge_sorted(old, &new[i..end]);
        let runs: Vec<Run<'_>> = merged.iter().map(|(k, p)| (k.as_slice(), p.as_slice())).collect();
        for (key, value) in encode(&runs, limit) {
            tree.insert(&key, &value)?;
        }
        i = end;
    }
    Ok(())
}

/// Merges two ascending entry lists; equal keys concatenate their postings.
fn merge_sorted(old: Vec<Entry>, new: &[Run<'_>]) -> Vec<Entry> {
    let mut out = Vec::with_capacity(old.len() + new.len());
    let mut new = new.iter().peekable();
    for (key, mut pres) in old {
        while let Some(&&(k, p)) = new.peek().filter(|(k, _)| *k < key.as_slice()) {
            out.push((k.to_vec(), p.to_vec()));
            new.next();
        }
        if let Some(&&(_, p)) = new.peek().filter(|(k, _)| *k == key.as_slice()) {
            pres.extend_from_slice(p);
            new.next();
        }
        out.push((key, pres));
    }
    out.extend(new.map(|&(k, p)| (k.to_vec(), p.to_vec())));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_round_trip_and_split_at_the_limit() {
        let entries: Vec<Entry> = (0..500u64)
            .map(|i| (format!("sname{:05}", i * 7).into_bytes(), (0..i % 4 + 1).map(|j| i * 10 + j).collect()))
            .collect();
        let runs: Vec<Run<'_>> = entries.iter().map(|(k, p)| (k.as_slice(), p.as_slice())).collect();
        let blocks = encode(&runs, 300);
        assert!(blocks.len() > 10);
        let mut back = Vec::new();
        for (key, block) in &blocks {
            assert!(key.len() + block.len() <= 300 + 8);
            decode(key, block, |k, p| {
                back.push((k.to_vec(), p.clone()));
                Ok(())
            })
            .expect("no sink error")
            .expect("decodes");
        }
        assert_eq!(back, entries);
        let long: Vec<Entry> = vec![(b"a".to_vec(), vec![1]), (b"b".to_vec(), (0..2000).map(|i| i * 1000).collect())];
        let runs: Vec<Run<'_>> = long.iter().map(|(k, p)| (k.as_slice(), p.as_slice())).collect();
        let blocks = encode(&runs, 300);
        assert!(blocks.iter().all(|(k, b)| k.len() + b.len() <= 300 + 8), "a long list continues over blocks");
        let mut pieces = Vec::new();
        for (key, block) in &blocks {
            decode(key, block, |k, p| {
                pieces.push((k.to_vec(), p.clone()));
                Ok(())
            })
            .expect("no sink error")
            .expect("decodes");
        }
        let b: Vec<u64> = pieces.iter().filter(|(k, _)| k == b"b").flat_map(|(_, p)| p.clone()).collect();
        assert_eq!(b, long[1].1);
        let (key, block) = &blocks[0];
        for cut in 0..block.len() {
            let decoded = decode(key, &block[..cut], |_, _| Ok(())).expect("no sink error");
            assert!(decoded.is_err(), "truncated at {cut}");
        }
    }

    #[test]
    fn merging_concatenates_equal_keys_in_order() {
        let old = vec![(b"b".to_vec(), vec![1]), (b"d".to_vec(), vec![2])];
        let new: [Run<'_>; 3] = [(b"a", &[5]), (b"d", &[6]), (b"e", &[7])];
        let merged = merge_sorted(old, &new);
        let keys: Vec<&[u8]> = merged.iter().map(|(k, _)| k.as_slice()).collect();
        assert_eq!(keys, [b"a".as_slice(), b"b", b"d", b"e"]);
        assert_eq!(merged[2].1, [2, 6]);
    }
}
