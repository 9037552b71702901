//! Reading B+tree nodes (layout table in `mod.rs`): header fields, the dense prefix
//! array, the search, cells, and header validation.
//!
//! Search: a target that does not start with the node's shared bytes (`skip`) sorts
//! before or after every key. Otherwise the 8 target bytes after them are located in
//! the prefix array: small nodes by a branchless binary search (`select_unpredictable`
//! keeps it a conditional move), large ones by interpolating between the first and
//! last prefix, galloping from the guess and a binary search of what is left. Only
//! entries whose prefix equals the target's are compared in full (from the shared
//! bytes on), by a second binary search over that (usually empty or one-entry) run.

use crate::blob::BlobRef;
use std::cmp::Ordering;

/// Bytes of the node header.
pub const NODE_HEADER: usize = 32;
/// Fixed bytes per leaf entry outside its cell: prefix + slot.
pub const LEAF_ENTRY: usize = 10;
/// Fixed bytes per branch entry outside its cell: prefix + child + slot.
pub const BRANCH_ENTRY: usize = 18;
/// Leaf cell header: u16 key length + u32 value word.
pub const LEAF_CELL_HEADER: usize = 6;
/// Branch cell header: u16 key length.
pub const BRANCH_CELL_HEADER: usize = 2;
/// Bit of the value word marking a value stored as a blob (the cell holds a `BlobRef`).
pub const BLOB_FLAG: u32 = 1 << 31;

/// Little-endian u16 at `at` (one bounds check for both bytes).
#[inline]
fn u16_at(page: &[u8], at: usize) -> usize {
    usize::from(u16::from_le_bytes(page[at..at + 2].try_into().expect("2 bytes")))
}

/// Little-endian u64 at `at`.
#[inline]
pub fn u64_at(page: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(page[at..at + 8].try_into().expect("8 bytes"))
}

/// Entries in the node.
#[inline]
pub fn count(page: &[u8]) -> usize {
    u16_at(page, 0)
}

/// 0 for leaves, the height above the leaves for branches.
#[inline]
pub fn level(page: &[u8]) -> u8 {
    page[2]
}

/// Start of the cell area.
#[inline]
pub fn cell_start(page: &[u8]) -> usize {
    u16_at(page, 4)
}

/// Dead bytes inside the cell area.
#[inline]
pub fn garbage(page: &[u8]) -> usize {
    u16_at(page, 6)
}

/// Previous leaf (0 = none).
pub fn prev(page: &[u8]) -> u64 {
    u64_at(page, 8)
}

/// Next leaf (0 = none).
pub fn next(page: &[u8]) -> u64 {
    u64_at(page, 16)
}

/// End of the arrays (prefixes, children, slots) for `n` entries.
pub fn arrays_end(is_leaf: bool, n: usize) -> usize {
    if is_leaf { NODE_HEADER + LEAF_ENTRY * n } else { NODE_HEADER + BRANCH_ENTRY * n + 8 }
}

/// Offset of the slot array.
#[inline]
fn slots_at(page: &[u8], n: usize) -> usize {
    if level(page) == 0 { NODE_HEADER + 8 * n } else { NODE_HEADER + 16 * n + 8 }
}

/// Child `i` (0..=count) of a branch.
#[inline]
pub fn child(page: &[u8], i: usize) -> u64 {
    u64_at(page, NODE_HEADER + 8 * count(page) + 8 * i)
}

/// Offset of cell `i` (`i < count` of a node that passed [`validate`]).
pub fn slot(page: &[u8], i: usize) -> usize {
    u16_at(page, slots_at(page, count(page)) + 2 * i)
}

/// Stored value bytes for a value word.
pub fn stored_len(word: u32) -> usize {
    if word & BLOB_FLAG != 0 { BlobRef::SIZE } else { word as usize }
}

/// Bytes of the cell header.
fn cell_header(is_leaf: bool) -> usize {
    if is_leaf { LEAF_CELL_HEADER } else { BRANCH_CELL_HEADER }
}

/// Why cell `i` (at offset `at`) is unreadable; cold, so the checks stay one compare.
#[cold]
#[inline(never)]
fn bad_cell(i: usize, at: usize) -> String {
    format!("cell {i} at offset {at} lies outside the cell area")
}

/// Offset and length of cell `i`, checked to lie inside the cell area: the one check
/// every cell read makes (a node's header fields are checked by [`validate`] when it is
/// pinned; a slot or a length inside a cell is checked here, when it is read).
#[inline]
pub fn cell_span(page: &[u8], i: usize) -> Result<(usize, usize), String> {
    let at = slot(page, i);
    let is_leaf = level(page) == 0;
    let header = match page.get(at..at + cell_header(is_leaf)) {
        Some(header) if at >= cell_start(page) => header,
        _ => return Err(bad_cell(i, at)),
    };
    let key_len = usize::from(u16::from_le_bytes([header[0], header[1]]));
    let len = if is_leaf {
        LEAF_CELL_HEADER + key_len + stored_len(u32::from_le_bytes([header[2], header[3], header[4], header[5]]))
    } else {
        BRANCH_CELL_HEADER + key_len
    };
    if at + len > page.len() {
        return Err(bad_cell(i, at));
    }
    Ok((at, len))
}

/// Where leaf entry `i` keeps its key and value, for a reader that knows the leaf's
/// slot array offset (`slots`, see [`slots_offset`]): the checks of [`cell_span`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeafSpan {
    /// Offset of the cell.
    pub at: usize,
    /// Bytes of the cell.
    pub len: usize,
    /// Bytes of the key (it starts at `at + LEAF_CELL_HEADER`).
    pub key_len: usize,
    /// The value is a blob reference, not the value's bytes.
    pub blob: bool,
}

/// [`cell_span`] of leaf entry `i`, given the leaf's slot array offset.
#[inline]
pub fn leaf_span(page: &[u8], slots: usize, i: usize) -> Result<LeafSpan, String> {
    let at = u16_at(page, slots + 2 * i);
    let header = match page.get(at..at + LEAF_CELL_HEADER) {
        Some(header) if at >= cell_start(page) => header,
        _ => return Err(bad_cell(i, at)),
    };
    let key_len = usize::from(u16::from_le_bytes([header[0], header[1]]));
    let word = u32::from_le_bytes([header[2], header[3], header[4], header[5]]);
    let len = LEAF_CELL_HEADER + key_len + stored_len(word);
    if at + len > page.len() {
        return Err(bad_cell(i, at));
    }
    Ok(LeafSpan { at, len, key_len, blob: word & BLOB_FLAG != 0 })
}

/// Offset of the slot array of a node with `n` entries (one that passed [`validate`]).
#[inline]
pub fn slots_offset(page: &[u8], n: usize) -> usize {
    slots_at(page, n)
}

fn value_word_at(page: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([page[at + 2], page[at + 3], page[at + 4], page[at + 5]])
}

/// The bytes of cell `i`.
#[inline]
pub fn cell(page: &[u8], i: usize) -> Result<&[u8], String> {
    let (at, len) = cell_span(page, i)?;
    Ok(&page[at..at + len])
}

/// Key of entry `i` (its value's length is not checked: [`value`] does that).
#[inline]
pub fn key(page: &[u8], i: usize) -> Result<&[u8], String> {
    let at = slot(page, i);
    let header = cell_header(level(page) == 0);
    if at < cell_start(page) || at + header > page.len() {
        return Err(bad_cell(i, at));
    }
    let start = at + header;
    page.get(start..start + u16_at(page, at)).ok_or_else(|| bad_cell(i, at))
}

/// Key inside a raw cell (one returned by [`cell`], or built by the writer).
pub fn cell_key(cell: &[u8], is_leaf: bool) -> &[u8] {
    let header = cell_header(is_leaf);
    &cell[header..header + u16_at(cell, 0)]
}

/// A leaf value as stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    /// Stored in the leaf.
    Inline(&'a [u8]),
    /// Stored as a blob.
    Blob(BlobRef),
}

/// Value of leaf entry `i`.
pub fn value(page: &[u8], i: usize) -> Result<Value<'_>, String> {
    cell(page, i).map(cell_value)
}

/// Value inside a raw leaf cell (one returned by [`cell`], or built by the writer).
pub fn cell_value(cell: &[u8]) -> Value<'_> {
    let key_len = u16_at(cell, 0);
    let word = value_word_at(cell, 0);
    let bytes = &cell[LEAF_CELL_HEADER + key_len..];
    if word & BLOB_FLAG != 0 {
        Value::Blob(BlobRef::from_bytes(bytes).expect("a blob cell's length counts 16 reference bytes"))
    } else {
        Value::Inline(bytes)
    }
}

/// The 8-byte big-endian prefix of a key (zero padded). A key of 8 bytes or more (a
/// search target's tail, usually) is one load, not a copy of a variable length.
#[inline]
pub fn key_prefix(key: &[u8]) -> u64 {
    if let Some(first) = key.first_chunk::<8>() {
        return u64::from_be_bytes(*first);
    }
    let mut bytes = [0u8; 8];
    let take = key.len().min(8);
    bytes[..take].copy_from_slice(&key[..take]);
    u64::from_be_bytes(bytes)
}

/// Bytes shared by every key of the node (header byte 3): the prefix array holds the
/// 8 key bytes that follow them.
#[inline]
pub fn skip(page: &[u8]) -> usize {
    usize::from(page[3])
}

/// The part of `key` after the first `skip` bytes (empty if shorter: corrupt node).
pub fn tail(key: &[u8], skip: usize) -> &[u8] {
    key.get(skip..).unwrap_or_default()
}

/// Prefix `i`, as a big-endian u64.
#[inline]
pub fn prefix(page: &[u8], i: usize) -> u64 {
    u64::from_be_bytes(page[NODE_HEADER + 8 * i..NODE_HEADER + 8 * i + 8].try_into().expect("8 bytes"))
}

/// The prefix array of a node with `n` entries (one that passed [`validate`]): a
/// search reads prefix `i` with one bounds check (`i < n`) instead of two on the page.
#[derive(Clone, Copy)]
struct Prefixes<'a>(&'a [[u8; 8]]);

impl<'a> Prefixes<'a> {
    #[inline]
    fn new(page: &'a [u8], n: usize) -> Self {
        Prefixes(page[NODE_HEADER..NODE_HEADER + 8 * n].as_chunks::<8>().0)
    }

    /// Prefix `i`, as a big-endian u64 (the [`prefix`] of the page).
    #[inline]
    fn at(self, i: usize) -> u64 {
        u64::from_be_bytes(self.0[i])
    }

    /// Number of prefixes.
    #[inline]
    fn len(self) -> usize {
        self.0.len()
    }
}

/// Number of prefixes in `[low, high)` below `target`, plus `low` (branchless binary
/// search).
#[inline]
fn lower_between(prefixes: Prefixes, low: usize, high: usize, target: u64) -> usize {
    if low >= high {
        return low;
    }
    let mut base = low;
    let mut size = high - low;
    while size > 1 {
        let half = size / 2;
        let mid = base + half;
        base = std::hint::select_unpredictable(prefixes.at(mid) < target, mid, base);
        size -= half;
    }
    base + usize::from(prefixes.at(base) < target)
}

/// Nodes with fewer entries use a plain binary search.
const INTERPOLATE_FROM: usize = 24;

/// Number of prefixes below `target`. Large nodes guess the position by interpolating
/// between the first and last prefix (keys after the shared bytes are often evenly
/// spread: times, counters, hashes), then gallop from the guess and finish with a
/// binary search, so a search touches about three cache lines of the prefix array
/// instead of one per halving; a bad guess costs at most twice the binary search.
fn lower_in(prefixes: Prefixes, target: u64) -> usize {
    let n = prefixes.len();
    if n < INTERPOLATE_FROM {
        return lower_between(prefixes, 0, n, target);
    }
    let (first, last) = (prefixes.at(0), prefixes.at(n - 1));
    if target <= first {
        return 0;
    }
    if target > last {
        return n;
    }
    // Now first < target <= last: the answer is in 1..n.
    // 32 significant bits of the spread are plenty for a guess, and keep the
    // product in a u64 (n < 2^16).
    let spread = last - first;
    let shift = (64 - spread.leading_zeros()).saturating_sub(32);
    let offset = (target - first - 1) >> shift;
    let guess = 1 + (offset * (n as u64 - 1) / ((spread >> shift).max(1))) as usize;
    let guess = guess.min(n - 1);
    let (low, high) = if prefixes.at(guess) < target {
        gallop_up(prefixes, guess + 1, n - 1, target)
    } else {
        gallop_down(prefixes, 1, guess, target)
    };
    lower_between(prefixes, low, high, target)
}

/// Number of the first `n` prefixes of `page` below `target` ([`lower_in`]).
#[cfg(test)]
pub(super) fn prefix_lower(page: &[u8], n: usize, target: u64) -> usize {
    lower_in(Prefixes::new(page, n), target)
}

/// The answer is in `[low, bound]` (prefix `bound` ≥ `target`): narrows it by steps
/// of 1, 2, 4, … upwards from `low`; returns a range `[low, high)` plus `high` itself.
#[inline]
fn gallop_up(prefixes: Prefixes, mut low: usize, bound: usize, target: u64) -> (usize, usize) {
    let mut step = 1;
    while low + step - 1 < bound {
        let probe = low + step - 1;
        if prefixes.at(probe) >= target {
            return (low, probe);
        }
        low = probe + 1;
        step *= 2;
    }
    (low, bound)
}

/// The answer is in `[floor, high]` (prefix `floor − 1` < `target` ≤ prefix `high`):
/// narrows it by steps of 1, 2, 4, … downwards from `high`.
#[inline]
fn gallop_down(prefixes: Prefixes, floor: usize, mut high: usize, target: u64) -> (usize, usize) {
    let mut step = 1;
    while high >= floor + step {
        let probe = high - step;
        if prefixes.at(probe) < target {
            return (probe + 1, high);
        }
        high = probe;
        step *= 2;
    }
    (floor, high)
}

/// Bytes of a cell asked for before it is read (a key and a short value).
const CELL_PREFETCH: usize = 256;

/// Asks the CPU for the first [`CELL_PREFETCH`] bytes at offset `at` (a cell). A cell
/// that far from the page's end (all but the last few) asks for a constant length, so
/// the prefetches are unrolled instead of looped.
#[inline]
fn prefetch_cell_at(page: &[u8], at: usize) {
    if let Some(cell) = page.get(at..at + CELL_PREFETCH) {
        quiredb_engine::prefetch_bytes(cell);
    } else if let Some(cell) = page.get(at..) {
        quiredb_engine::prefetch_bytes(cell);
    }
}

/// Asks the CPU for the cache lines of `bytes`, as `quiredb_engine::prefetch_bytes`
/// does, but a range of up to 128 bytes (the slot array of a node of up to 64 entries)
/// without a loop: its first, 65th and last bytes lie in every line it touches.
#[inline]
fn prefetch_range(bytes: &[u8]) {
    if bytes.len() > 128 {
        quiredb_engine::prefetch_bytes(bytes);
    } else if let (Some(first), Some(last)) = (bytes.first_chunk::<1>(), bytes.last_chunk::<1>()) {
        quiredb_engine::prefetch_bytes(first);
        quiredb_engine::prefetch_bytes(bytes.get(64..65).unwrap_or(first));
        quiredb_engine::prefetch_bytes(last);
    }
}

/// Asks the CPU for the cell of leaf entry `i`, given the slot array offset (see
/// [`leaf_span`]), ahead of a cursor reaching it.
#[inline]
pub fn prefetch_leaf_cell(page: &[u8], slots: usize, i: usize) {
    if let Some(slot) = page.get(slots + 2 * i..slots + 2 * i + 2) {
        prefetch_cell_at(page, usize::from(u16::from_le_bytes([slot[0], slot[1]])));
    }
}

/// A decoded node header for searching: count, key-cell header size and slot array.
struct Keys<'a> {
    page: &'a [u8],
    slots: usize,
    cell_header: usize,
}

impl<'a> Keys<'a> {
    fn new(page: &'a [u8], n: usize) -> Self {
        let cell_header = if level(page) == 0 { LEAF_CELL_HEADER } else { BRANCH_CELL_HEADER };
        Keys { page, slots: slots_at(page, n), cell_header }
    }

    /// Asks for the cache lines of the slot array, whose place is known once the entry
    /// count is: they arrive while the prefixes are searched.
    #[inline]
    fn prefetch_slots(&self, n: usize) {
        if let Some(slots) = self.page.get(self.slots..self.slots + 2 * n) {
            prefetch_range(slots);
        }
    }

    /// Asks for the cache lines of the prefix array past what the page's read asked
    /// for ([`quiredb_engine::PREFETCHED_PAYLOAD`]): in a node of more than ~55 entries
    /// an interpolation's guess and gallop land there, each line otherwise waiting for
    /// the one before (T2's shape at 30 M keys: a lookup 14 % shorter).
    #[inline]
    fn prefetch_prefixes(&self, n: usize) {
        if let Some(prefixes) = self.page.get(quiredb_engine::PREFETCHED_PAYLOAD..NODE_HEADER + 8 * n) {
            quiredb_engine::prefetch_bytes(prefixes);
        }
    }

    /// Asks for the first [`CELL_PREFETCH`] bytes of cell `i`: its key is compared next,
    /// and a lookup then copies the value after it.
    #[inline]
    fn prefetch_cell(&self, i: usize) {
        prefetch_cell_at(self.page, u16_at(self.page, self.slots + 2 * i));
    }

    /// Key `i`, checked to lie inside the page.
    #[inline]
    fn key(&self, i: usize) -> Result<&'a [u8], String> {
        let at = u16_at(self.page, self.slots + 2 * i);
        let start = at + self.cell_header;
        let len = self.page.get(at..at + 2).map(|_| u16_at(self.page, at)).ok_or_else(|| bad_cell(i, at))?;
        self.page.get(start..start + len).ok_or_else(|| bad_cell(i, at))
    }
}

/// Where a search ends: `Ok(i)` if entry `i` equals the target, else `Err(i)` with
/// `i` the first entry greater than it.
pub type Position = Result<usize, usize>;

/// Position of `target` ([`Position`]); `Err(reason)` if a key it compares lies
/// outside the page.
///
/// The prefix array is searched for the 8 target bytes after the node's shared bytes
/// (window order implies key order, zero padding included), and only entries with an
/// equal window are compared in full, from the shared bytes on. Then the target's
/// first `skip` bytes are checked against the shared bytes of an entry read anyway
/// (the one found, usually): a target without them sorts before or after every key.
#[inline]
pub fn search(page: &[u8], target: &[u8]) -> Result<Position, String> {
    search_ahead(page, target, 0)
}

/// [`search`], also asking for the cells of the entry found and the `ahead` after it
/// as soon as its place in the prefix array is known: a cursor's seek reads them next,
/// and their memory round trips then overlap the found entry's.
#[inline]
pub fn search_ahead(page: &[u8], target: &[u8], ahead: usize) -> Result<Position, String> {
    let n = count(page);
    if n == 0 {
        return Ok(Err(0));
    }
    let keys = Keys::new(page, n);
    keys.prefetch_slots(n);
    keys.prefetch_prefixes(n);
    let skip = skip(page);
    let found = search_tails(page, &keys, n, ahead, skip, tail(target, skip))?;
    if skip > 0 {
        let shared = keys.key(found.unwrap_or_else(|i| i.min(n - 1)))?;
        match target[..skip.min(target.len())].cmp(&shared[..skip.min(shared.len())]) {
            Ordering::Less => return Ok(Err(0)),
            Ordering::Greater => return Ok(Err(n)),
            Ordering::Equal if target.len() < skip => return Ok(Err(0)),
            Ordering::Equal => {}
        }
    }
    Ok(found)
}

/// [`search_ahead`] assuming the target has the node's shared bytes; `target` is the rest.
#[inline]
fn search_tails(
    page: &[u8],
    keys: &Keys,
    n: usize,
    ahead: usize,
    skip: usize,
    target: &[u8],
) -> Result<Position, String> {
    let wanted = key_prefix(target);
    let prefixes = Prefixes::new(page, n);
    let low = lower_in(prefixes, wanted);
    if ahead > 0 {
        for i in low..(low + 1 + ahead).min(n) {
            keys.prefetch_cell(i);
        }
    }
    if low == n || prefixes.at(low) != wanted {
        return Ok(Err(low));
    }
    let high = if low + 1 == n || prefixes.at(low + 1) != wanted {
        low + 1
    } else {
        wanted.checked_add(1).map_or(n, |above| lower_in(prefixes, above))
    };
    let (mut low, mut high) = (low, high);
    keys.prefetch_cell((low + high) / 2);
    while low < high {
        let mid = (low + high) / 2;
        match tail(keys.key(mid)?, skip).cmp(target) {
            Ordering::Less => low = mid + 1,
            Ordering::Equal => return Ok(Ok(mid)),
            Ordering::Greater => high = mid,
        }
    }
    Ok(Err(low))
}

/// The child of a branch to descend into for `target`.
#[inline]
pub fn child_index(page: &[u8], target: &[u8]) -> Result<usize, String> {
    Ok(match search(page, target)? {
        Ok(i) => i + 1,
        Err(i) => i,
    })
}

/// Bytes used by the node (header, arrays, live cells).
pub fn used_bytes(page: &[u8]) -> usize {
    let n = count(page);
    arrays_end(level(page) == 0, n) + (page.len() - cell_start(page)) - garbage(page)
}

/// Checks the header fields against the page size; `Err(reason)` if impossible.
/// Inlined into every descent step; the reasons are built out of line.
#[inline]
pub fn validate(page: &[u8], kind_is_leaf: bool) -> Result<(), String> {
    let n = count(page);
    let start = cell_start(page);
    let fits = arrays_end(kind_is_leaf, n) <= start && start <= page.len() && garbage(page) <= page.len() - start;
    if (level(page) == 0) != kind_is_leaf || !fits {
        return Err(invalid_header(page, kind_is_leaf));
    }
    Ok(())
}

/// Why [`validate`] refused a node header.
#[cold]
#[inline(never)]
fn invalid_header(page: &[u8], kind_is_leaf: bool) -> String {
    if (level(page) == 0) != kind_is_leaf {
        return format!("level {} does not match the page kind", level(page));
    }
    format!("{} entries, cells from {}, garbage {} do not fit", count(page), cell_start(page), garbage(page))
}

/// [`validate`] plus every cell: inside the cell area, and live bytes plus garbage
/// equal to the area (so a rebuild from the cells fits in a page). O(count): run by the
/// writes that rebuild a node from its own cells (compaction, splits); merges and
/// redistributions check the size of what they build instead, reads check cells one by
/// one.
pub fn validate_cells(page: &[u8], kind_is_leaf: bool) -> Result<(), String> {
    validate(page, kind_is_leaf)?;
    let mut live = 0;
    for i in 0..count(page) {
        live += cell_span(page, i)?.1;
    }
    let area = page.len() - cell_start(page);
    if live + garbage(page) != area {
        return Err(format!("{live} live + {} garbage bytes != cell area {area}", garbage(page)));
    }
    Ok(())
}
