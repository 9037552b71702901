//! Writing B+tree nodes: whole-node builds from cell lists (splits, merges, bulk
//! load), and in-place insert/remove of one entry (the common case), which shift the
//! dense arrays with `copy_within` and take cells from the top of the free gap.
//!
//! The edits take nodes whose header passed `node::validate`; a cell they read is
//! checked as it is read, and [`compact`] checks every cell before it rebuilds
//! (`node::validate_cells`), so a corrupt node gives `Err(reason)`, never a panic.

use super::node::{
    self, BRANCH_ENTRY, LEAF_ENTRY, NODE_HEADER, arrays_end, cell_key, cell_start, count, garbage, key_prefix, level,
    skip, tail,
};

/// Longest skip a node records (one header byte).
const MAX_SKIP: usize = 255;

/// Length of the common prefix of `a` and `b`, at most [`MAX_SKIP`].
fn common_len(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count().min(MAX_SKIP)
}

fn put_prefix(page: &mut [u8], i: usize, prefix: u64) {
    page[NODE_HEADER + 8 * i..NODE_HEADER + 8 * i + 8].copy_from_slice(&prefix.to_be_bytes());
}

fn put_u16(page: &mut [u8], at: usize, value: usize) {
    page[at..at + 2].copy_from_slice(&(value as u16).to_le_bytes());
}

fn put_u64(page: &mut [u8], at: usize, value: u64) {
    page[at..at + 8].copy_from_slice(&value.to_le_bytes());
}

/// Sets the previous-leaf link.
pub fn set_prev(page: &mut [u8], id: u64) {
    put_u64(page, 8, id);
}

/// Sets the next-leaf link.
pub fn set_next(page: &mut [u8], id: u64) {
    put_u64(page, 16, id);
}

/// Sets child `i` of a branch.
pub fn set_child(page: &mut [u8], i: usize, id: u64) {
    let at = NODE_HEADER + 8 * count(page) + 8 * i;
    put_u64(page, at, id);
}

/// Bytes a node of these cells needs.
pub fn size_of_cells(is_leaf: bool, cells: &[&[u8]]) -> usize {
    arrays_end(is_leaf, cells.len()) + cells.iter().map(|c| c.len()).sum::<usize>()
}

/// Writes a whole node. `children` has `cells.len() + 1` entries for branches.
pub fn build(page: &mut [u8], level: u8, links: (u64, u64), cells: &[&[u8]], children: &[u64]) {
    let is_leaf = level == 0;
    debug_assert!(is_leaf || children.len() == cells.len() + 1, "a branch has one child more than keys");
    assert!(size_of_cells(is_leaf, cells) <= page.len(), "node build overflows the page");
    page[..NODE_HEADER].fill(0);
    let n = cells.len();
    put_u16(page, 0, n);
    page[2] = level;
    set_prev(page, links.0);
    set_next(page, links.1);
    let slots = if is_leaf { NODE_HEADER + 8 * n } else { NODE_HEADER + 16 * n + 8 };
    if !is_leaf {
        for (i, &id) in children.iter().enumerate() {
            put_u64(page, NODE_HEADER + 8 * n + 8 * i, id);
        }
    }
    let skip = match cells {
        [first, .., last] => common_len(cell_key(first, is_leaf), cell_key(last, is_leaf)),
        _ => 0,
    };
    page[3] = skip as u8;
    let mut top = page.len();
    for (i, cell) in cells.iter().enumerate() {
        top -= cell.len();
        page[top..top + cell.len()].copy_from_slice(cell);
        put_u16(page, slots + 2 * i, top);
        put_prefix(page, i, key_prefix(tail(cell_key(cell, is_leaf), skip)));
    }
    put_u16(page, 4, top);
    page[arrays_end(is_leaf, n)..top].fill(0);
}

/// Rebuilds the node in place, squeezing out garbage.
pub fn compact(page: &mut [u8]) -> Result<(), String> {
    node::validate_cells(page, level(page) == 0)?;
    let copy = page.to_vec();
    let n = count(&copy);
    let cells = (0..n).map(|i| node::cell(&copy, i)).collect::<Result<Vec<&[u8]>, _>>()?;
    let children: Vec<u64> =
        if level(&copy) == 0 { Vec::new() } else { (0..=n).map(|i| node::child(&copy, i)).collect() };
    build(page, level(&copy), (node::prev(&copy), node::next(&copy)), &cells, &children);
    Ok(())
}

/// The arrays touched by adding/removing entry `i`: `(element size, count, index)`;
/// a leaf has two (prefixes, slots), a branch three (prefixes, children, slots).
fn shapes(page: &[u8], i: usize) -> ([(usize, usize, usize); 3], usize) {
    let n = count(page);
    if level(page) == 0 {
        ([(8, n, i), (2, n, i), (0, 0, 0)], 2)
    } else {
        ([(8, n, i), (8, n + 1, i + 1), (2, n, i)], 3)
    }
}

/// Opens a gap at the given index of every array (insert) or closes it (remove).
fn reshape(page: &mut [u8], arrays: &[(usize, usize, usize)], insert: bool) {
    let mut old = [0usize; 3];
    let mut new = [0usize; 3];
    let (mut o, mut w) = (NODE_HEADER, NODE_HEADER);
    for (k, &(size, n, _)) in arrays.iter().enumerate() {
        old[k] = o;
        new[k] = w;
        o += size * n;
        w += if insert { size * (n + 1) } else { size * (n - 1) };
    }
    if insert {
        for (k, &(size, n, j)) in arrays.iter().enumerate().rev() {
            page.copy_within(old[k] + size * j..old[k] + size * n, new[k] + size * (j + 1));
            page.copy_within(old[k]..old[k] + size * j, new[k]);
        }
    } else {
        for (k, &(size, n, j)) in arrays.iter().enumerate() {
            page.copy_within(old[k]..old[k] + size * j, new[k]);
            page.copy_within(old[k] + size * (j + 1)..old[k] + size * n, new[k] + size * j);
        }
    }
}

/// Free bytes between the arrays and the cells.
pub fn gap(page: &[u8]) -> usize {
    cell_start(page) - arrays_end(level(page) == 0, count(page))
}

/// Inserts `cell` as entry `i` (and, in a branch, `right_child` as child `i + 1`).
/// Returns false, leaving the node unchanged, if it does not fit even after compaction.
pub fn insert(page: &mut [u8], i: usize, cell: &[u8], right_child: u64) -> Result<bool, String> {
    let is_leaf = level(page) == 0;
    let need = cell.len() + if is_leaf { LEAF_ENTRY } else { BRANCH_ENTRY };
    if gap(page) < need {
        if gap(page) + garbage(page) < need {
            return Ok(false);
        }
        compact(page)?;
    }
    let key = cell_key(cell, is_leaf);
    let (old_skip, new_skip) = skips_after_insert(page, i, key)?;
    if new_skip < old_skip {
        shrink_skip(page, old_skip, new_skip)?;
    }
    let (shapes, arrays) = shapes(page, i);
    reshape(page, &shapes[..arrays], true);
    let n = count(page) + 1;
    put_u16(page, 0, n);
    let top = cell_start(page) - cell.len();
    page[top..top + cell.len()].copy_from_slice(cell);
    put_u16(page, 4, top);
    let slots = if is_leaf { NODE_HEADER + 8 * n } else { NODE_HEADER + 16 * n + 8 };
    put_u16(page, slots + 2 * i, top);
    if !is_leaf {
        set_child(page, i + 1, right_child);
    }
    page[3] = new_skip as u8;
    if new_skip > old_skip {
        for j in 0..n {
            let prefix = key_prefix(tail(node::key(page, j)?, new_skip));
            put_prefix(page, j, prefix);
        }
    } else {
        put_prefix(page, i, key_prefix(tail(key, new_skip)));
    }
    Ok(true)
}

/// The node's skip before and after inserting `key` at `i`: a key inside the range
/// shares what the first and last share; a new first or last key sets the skip to its
/// common prefix with the other end (which may grow it, e.g. from one key to two).
fn skips_after_insert(page: &[u8], i: usize, key: &[u8]) -> Result<(usize, usize), String> {
    let (n, old) = (count(page), skip(page));
    let new = if n == 0 {
        0
    } else if i == 0 {
        common_len(key, node::key(page, n - 1)?)
    } else if i == n {
        common_len(key, node::key(page, 0)?)
    } else {
        old
    };
    Ok((old, new))
}

/// Rewrites the prefixes for a smaller skip without reading the cells: the bytes
/// `new..old`, shared by every key, move into the front of each prefix.
fn shrink_skip(page: &mut [u8], old: usize, new: usize) -> Result<(), String> {
    let n = count(page);
    if n == 0 {
        page[3] = new as u8;
        return Ok(());
    }
    let shared = key_prefix(node::key(page, 0)?.get(new..old).unwrap_or_default());
    let shift = 8 * (old - new);
    for j in 0..n {
        let prefix = if shift >= 64 { shared } else { shared | (node::prefix(page, j) >> shift) };
        put_prefix(page, j, prefix);
    }
    page[3] = new as u8;
    Ok(())
}

/// Removes entry `i` (and, in a branch, child `i + 1`).
pub fn remove(page: &mut [u8], i: usize) -> Result<(), String> {
    let (at, len) = node::cell_span(page, i)?;
    if at != cell_start(page) && garbage(page) + len > page.len() - cell_start(page) {
        return Err(format!("cell {i} at offset {at} overlaps the node's garbage"));
    }
    let (shapes, arrays) = shapes(page, i);
    reshape(page, &shapes[..arrays], false);
    let n = count(page) - 1;
    put_u16(page, 0, n);
    if at == cell_start(page) {
        put_u16(page, 4, at + len);
    } else {
        let dead = garbage(page) + len;
        put_u16(page, 6, dead);
    }
    let end = arrays_end(level(page) == 0, n);
    let stale = if level(page) == 0 { LEAF_ENTRY } else { BRANCH_ENTRY };
    page[end..end + stale].fill(0);
    Ok(())
}

/// Cells kept back-to-back in one buffer (no allocation per entry): the leaves of a
/// bulk load (`bulk.rs`), the entries of a node pair being merged or redistributed
/// (`remove.rs`).
#[derive(Debug, Default)]
pub(super) struct Cells {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Cells {
    pub(super) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Bytes of all the cells.
    pub(super) fn bytes(&self) -> usize {
        self.bytes.len()
    }

    pub(super) fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
    }

    pub(super) fn push(&mut self, cell: &[u8]) {
        self.bytes.extend_from_slice(cell);
        self.ends.push(self.bytes.len());
    }

    pub(super) fn refs(&self) -> Vec<&[u8]> {
        (0..self.len()).map(|i| self.get(i)).collect()
    }

    pub(super) fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }
}
