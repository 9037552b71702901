//! Node pages (`NODE_PAGE`) and the head page (`HEAD_PAGE`): their byte layouts,
//! decoding into [`Node`] (with checks: a bad page is `Corrupted`, never a panic) and
//! encoding back. Offsets are in the page payload, after the engine's 32-byte header.
//!
//! Node page. A *box* node stores `E = 2·D·C::BYTES + 8` bytes per entry; a *point*
//! leaf (a tree created with `RTreeOptions::points`) stores `E = D·C::BYTES + 8`
//! (the point once, not as a degenerate box: 48 instead of 88 bytes in 5-D f64), so
//! its leaves hold about twice the entries. Branches always use boxes.
//!
//! | offset       | size | field   | meaning                                          |
//! |-------------:|-----:|---------|--------------------------------------------------|
//! | 0            | 2    | level   | 0 = leaf; a node at level L points to level L−1   |
//! | 2            | 2    | count   | entries in use                                   |
//! | 4            | 1    | form    | 0 = box entries, 1 = point entries (leaves only)  |
//! | 5            | 3    | —       | zero                                             |
//! | 8 + i·E      | D·C  | min     | lower corner of entry i (rounded toward −∞), or the point |
//! | … + D·C      | D·C  | max     | upper corner of entry i (rounded toward +∞); absent in a point leaf |
//! | … + (1 or 2)·D·C | 8 | id     | payload (leaf) or logical child page (branch)     |
//! | 8 + max·E + g·B | B | group g | box of entries `16g .. 16g+16` as f32 (`B = 2·D·4`) |
//!
//! The group boxes (one per run of [`GROUP`] entries in use, rewritten by every
//! encode) let queries skip 16 entries with one test: a page-sized node is searched
//! like a small two-level tree. They are stored as f32 in every tree, rounded
//! outward (min toward −∞, max toward +∞), so each contains the exact union of its
//! entries and every test on it stays conservative; at half the bytes of f64 boxes a
//! query reads half the cache lines for them (format version 2: version 1, head magic
//! `QRT1`, stored them in the tree's coordinate type and is refused on open with
//! [`Error::RTreeFormat`]). `max` is the node capacity of the node's form (head
//! page: `max` for branches and box leaves, `leaf max` for point leaves).
//!
//! Head page (never moves; the catalog points at it):
//!
//! | offset | size | field  | meaning                                   |
//! |-------:|-----:|--------|-------------------------------------------|
//! | 0      | 4    | magic  | `QRT2` (format version 2)                 |
//! | 4      | 1    | dims   | D                                         |
//! | 5      | 1    | coord  | 8 = f64, 4 = f32                          |
//! | 6      | 2    | max    | most entries per node                     |
//! | 8      | 8    | root   | logical page of the root node             |
//! | 16     | 4    | height | levels (1 = the root is a leaf)           |
//! | 20     | 2    | min    | fewest entries per non-root node          |
//! | 22     | 2    | flags  | bit 0: leaves hold points (point form)    |
//! | 24     | 8    | len    | entries in the leaves                     |
//! | 32     | 8    | nodes  | node pages                                |
//! | 40     | 2    | leaf max | most entries per point leaf (0 = `max`) |
//! | 42     | 2    | leaf min | fewest per non-root point leaf (0 = `min`) |

use super::coord::{Coord, at};
use super::geom::Rect;
use crate::error::{Error, Result};
use quiredb_engine::page::{read_u16, read_u32, read_u64, write_u16, write_u32, write_u64};
use quiredb_engine::{PageId, PageKind, PageRead, WriteTxn};
use std::marker::PhantomData;

/// Bytes before the first entry of a node page.
pub(crate) const NODE_HEADER: usize = 8;
/// Entries per group box inside a node.
pub(crate) const GROUP: usize = 16;
/// Magic number of the head page (format version 2: f32 group boxes).
pub(crate) const MAGIC: &[u8; 4] = b"QRT2";
/// Magic number of format version 1 (group boxes in the tree's coordinate type).
pub(crate) const MAGIC_V1: &[u8; 4] = b"QRT1";
/// The stored format version this build reads and writes.
pub(crate) const FORMAT_VERSION: u32 = 2;

/// The coordinate type of the group boxes (in every tree).
pub(crate) type GroupCoord = f32;

/// One entry: a box and a payload (leaf) or child page (branch).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Entry<const D: usize> {
    pub rect: Rect<D>,
    pub id: u64,
}

/// A decoded node.
#[derive(Clone, Debug)]
pub(crate) struct Node<const D: usize> {
    pub level: u16,
    pub entries: Vec<Entry<D>>,
}

impl<const D: usize> Node<D> {
    /// The union of the entries' boxes.
    pub fn bbox(&self) -> Rect<D> {
        bbox(&self.entries)
    }
}

/// The union of the boxes of `entries`.
pub(crate) fn bbox<const D: usize>(entries: &[Entry<D>]) -> Rect<D> {
    let mut out = Rect::empty();
    for e in entries {
        out.expand(&e.rect);
    }
    out
}

/// How one node is laid out: its capacity and whether its entries are points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Form {
    /// Node capacity (sets where the group boxes start).
    pub max: usize,
    /// Point entries (`D` coordinates) instead of boxes (`2·D`).
    pub point: bool,
}

/// Byte layout of the nodes of one `(D, C)` pair.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout<const D: usize, C: Coord> {
    _coord: PhantomData<C>,
}

impl<const D: usize, C: Coord> Layout<D, C> {
    /// Bytes per box entry.
    pub const ENTRY: usize = 2 * D * C::BYTES + 8;

    /// Bytes per point entry.
    pub const POINT: usize = D * C::BYTES + 8;

    /// Bytes per group box (f32, see [`GroupCoord`]).
    pub const GROUP_BOX: usize = 2 * D * GroupCoord::BYTES;

    /// Bytes per entry of a node of this form.
    #[inline(always)]
    pub const fn stride(point: bool) -> usize {
        if point { Self::POINT } else { Self::ENTRY }
    }

    /// Entries that fit, with their group boxes, in a payload of `payload` bytes.
    pub fn capacity(payload: usize, point: bool) -> usize {
        let entry = Self::stride(point);
        let mut max = (payload - NODE_HEADER) / entry;
        while max > 0 && NODE_HEADER + max * entry + max.div_ceil(GROUP) * Self::GROUP_BOX > payload {
            max -= 1;
        }
        max
    }

    /// `(group box, encoded entries of the group)` of a node page whose encoded
    /// entries are `bytes` (from [`Layout::entries`]).
    #[inline]
    pub fn runs<'p>(page: &'p [u8], bytes: &'p [u8], form: Form) -> impl Iterator<Item = (&'p [u8], &'p [u8])> {
        let stride = Self::stride(form.point);
        let groups = Self::groups(page, form, bytes.len() / stride);
        groups.chunks_exact(Self::GROUP_BOX).zip(bytes.chunks(GROUP * stride))
    }

    /// The group boxes of a node of `count` entries (one per started run of 16).
    #[inline]
    pub fn groups(page: &[u8], form: Form, count: usize) -> &[u8] {
        let start = NODE_HEADER + form.max * Self::stride(form.point);
        &page[start..start + count.div_ceil(GROUP) * Self::GROUP_BOX]
    }

    /// Where a node of `form` keeps what a query reads first: its header and its
    /// group boxes (those of a full node), as payload byte ranges.
    #[inline(always)]
    pub fn head_ranges(form: Form) -> [std::ops::Range<usize>; 2] {
        let start = NODE_HEADER + form.max * Self::stride(form.point);
        [0..NODE_HEADER, start..start + form.max.div_ceil(GROUP) * Self::GROUP_BOX]
    }

    /// Box of the encoded group box `chunk`.
    #[inline(always)]
    pub fn group_rect(chunk: &[u8]) -> Rect<D> {
        Layout::<D, GroupCoord>::rect(chunk)
    }

    /// Writes `rect` as a group box, rounded outward to f32.
    #[inline]
    fn write_group(chunk: &mut [u8], rect: &Rect<D>) {
        Layout::<D, GroupCoord>::write_rect(chunk, rect);
    }

    /// `rect` as a group box stores it (rounded outward to f32).
    pub fn group_of(rect: &Rect<D>) -> Rect<D> {
        let mut out = *rect;
        for d in 0..D {
            out.min[d] = GroupCoord::round_down(rect.min[d]);
            out.max[d] = GroupCoord::round_up(rect.max[d]);
        }
        out
    }

    /// Box of the encoded box entry `chunk`.
    #[inline(always)]
    pub fn rect(chunk: &[u8]) -> Rect<D> {
        let mut rect = Rect::new([0.0; D], [0.0; D]);
        let b = &chunk[..2 * D * C::BYTES];
        for d in 0..D {
            rect.min[d] = at::<C>(b, d);
            rect.max[d] = at::<C>(b, D + d);
        }
        rect
    }

    /// The point of the encoded point entry `chunk`.
    #[inline(always)]
    pub fn point(chunk: &[u8]) -> [f64; D] {
        let b = &chunk[..D * C::BYTES];
        std::array::from_fn(|d| at::<C>(b, d))
    }

    /// Box of an encoded entry of either form.
    #[inline(always)]
    pub fn entry_rect(chunk: &[u8], point: bool) -> Rect<D> {
        if point { Rect::point(Self::point(chunk)) } else { Self::rect(chunk) }
    }

    /// Id of the encoded box entry `chunk`.
    #[inline(always)]
    pub fn id(chunk: &[u8]) -> u64 {
        Self::id_at(chunk, 2 * D * C::BYTES)
    }

    /// Id of the encoded point entry `chunk`.
    #[inline(always)]
    pub fn point_id(chunk: &[u8]) -> u64 {
        Self::id_at(chunk, D * C::BYTES)
    }

    /// Id of an encoded entry of either form.
    #[inline(always)]
    pub fn entry_id(chunk: &[u8], point: bool) -> u64 {
        if point { Self::point_id(chunk) } else { Self::id(chunk) }
    }

    #[inline(always)]
    fn id_at(chunk: &[u8], at: usize) -> u64 {
        u64::from_le_bytes(chunk[at..at + 8].try_into().expect("slice of 8 bytes"))
    }

    /// The level and the encoded entries of a node page, checked against `form`.
    #[inline(always)]
    pub fn entries(page: &[u8], id: PageId, form: Form) -> Result<(u16, &[u8])> {
        let header = &page[..NODE_HEADER];
        let level = u16::from_le_bytes([header[0], header[1]]);
        let count = usize::from(u16::from_le_bytes([header[2], header[3]]));
        if count > form.max || header[4] != u8::from(form.point) {
            return Err(bad_header(header, id, form));
        }
        Ok((level, &page[NODE_HEADER..NODE_HEADER + count * Self::stride(form.point)]))
    }

    /// Decodes a node page.
    pub fn decode(page: &[u8], id: PageId, form: Form) -> Result<Node<D>> {
        let (level, bytes) = Self::entries(page, id, form)?;
        let entries = bytes
            .chunks_exact(Self::stride(form.point))
            .map(|c| Entry { rect: Self::entry_rect(c, form.point), id: Self::entry_id(c, form.point) })
            .collect();
        Ok(Node { level, entries })
    }

    /// Encodes a node of `level` holding `entries` (and their group boxes) into a
    /// page payload, in `form` (a point form stores each entry's lower corner).
    pub fn encode_entries(level: u16, entries: &[Entry<D>], page: &mut [u8], form: Form) {
        assert!(entries.len() <= form.max, "node holds at most max entries");
        let stride = Self::stride(form.point);
        let start = NODE_HEADER + form.max * stride;
        for (run, chunk) in entries.chunks(GROUP).zip(page[start..].chunks_exact_mut(Self::GROUP_BOX)) {
            Self::write_group(chunk, &bbox(run));
        }
        write_u16(page, 0, level);
        write_u16(page, 2, u16::try_from(entries.len()).expect("node capacity fits in u16"));
        write_u32(page, 4, u32::from(form.point));
        for (e, chunk) in entries.iter().zip(page[NODE_HEADER..].chunks_exact_mut(stride)) {
            Self::write_entry(chunk, e, form.point);
        }
    }

    /// Writes `entry` at `index` of an encoded node in place and widens the box of
    /// its group. With `append` the entry is new (`index` = the old count, below
    /// `max`): the count grows by one and a new group starts with this box; without,
    /// the entry replaces one whose box it contains (a child's box that grew).
    pub fn put_entry(page: &mut [u8], index: usize, entry: &Entry<D>, append: bool, form: Form) {
        let stride = Self::stride(form.point);
        let at = NODE_HEADER + index * stride;
        Self::write_entry(&mut page[at..at + stride], entry, form.point);
        let group = NODE_HEADER + form.max * stride + (index / GROUP) * Self::GROUP_BOX;
        let rect = if append && index.is_multiple_of(GROUP) {
            entry.rect
        } else {
            Self::group_rect(&page[group..]).union(&entry.rect)
        };
        Self::write_group(&mut page[group..], &rect);
        if append {
            write_u16(page, 2, u16::try_from(index + 1).expect("node capacity fits in u16"));
        }
    }

    #[inline]
    fn write_entry(chunk: &mut [u8], e: &Entry<D>, point: bool) {
        if point {
            debug_assert!(e.rect.min == e.rect.max, "a point leaf holds points");
            for d in 0..D {
                C::write_down(&mut chunk[d * C::BYTES..], e.rect.min[d]);
            }
        } else {
            Self::write_rect(chunk, &e.rect);
        }
        let at = D * C::BYTES * if point { 1 } else { 2 };
        chunk[at..at + 8].copy_from_slice(&e.id.to_le_bytes());
    }

    #[inline]
    fn write_rect(chunk: &mut [u8], rect: &Rect<D>) {
        for d in 0..D {
            C::write_down(&mut chunk[d * C::BYTES..], rect.min[d]);
            C::write_up(&mut chunk[(D + d) * C::BYTES..], rect.max[d]);
        }
    }

    /// Reads and decodes node `id` (count and form checked; the level by callers).
    pub fn load(txn: &impl PageRead, id: PageId, form: Form) -> Result<Node<D>> {
        Self::decode(&txn.page(id)?, id, form)
    }

    /// Like [`Layout::load`], also checking the page kind and the group boxes (for
    /// the checker).
    pub fn load_checked(txn: &impl PageRead, id: PageId, form: Form) -> Result<Node<D>> {
        let page = txn.page(id)?;
        if page.kind() != super::NODE_PAGE {
            return Err(corrupted(id, format!("page kind {:?} is not an R-tree node", page.kind())));
        }
        let node = Self::decode(&page, id, form)?;
        let groups = Self::groups(&page, form, node.entries.len());
        for (g, (run, chunk)) in node.entries.chunks(GROUP).zip(groups.chunks_exact(Self::GROUP_BOX)).enumerate() {
            if Self::group_rect(chunk) != Self::group_of(&bbox(run)) {
                return Err(corrupted(id, format!("group box {g} is not the union of its entries")));
            }
        }
        Ok(node)
    }

    /// Writes `node` to page `id`.
    pub fn store(txn: &WriteTxn<'_>, id: PageId, node: &Node<D>, form: Form) -> Result<()> {
        Self::encode_entries(node.level, &node.entries, &mut txn.page_mut(id)?, form);
        Ok(())
    }

    /// Allocates a node page holding `node`; returns its id.
    pub fn create(txn: &WriteTxn<'_>, node: &Node<D>, form: Form) -> Result<PageId> {
        let mut page = txn.alloc_page(super::NODE_PAGE)?;
        Self::encode_entries(node.level, &node.entries, &mut page, form);
        Ok(page.id())
    }
}

/// The head page, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Head {
    pub dims: u8,
    pub coord: u8,
    pub max: u16,
    pub min: u16,
    pub root: u64,
    pub height: u32,
    pub len: u64,
    pub nodes: u64,
    /// Leaves hold points (flag bit 0).
    pub points: bool,
    pub leaf_max: u16,
    pub leaf_min: u16,
}

impl Head {
    /// Reads the head page `id`.
    pub fn load(txn: &impl PageRead, id: PageId) -> Result<Head> {
        let page = txn.page(id)?;
        Self::parse(&page, page.kind(), id)
    }

    /// Decodes the head page `id` (of kind `kind`) whose payload is `page`.
    pub fn parse(page: &[u8], kind: PageKind, id: PageId) -> Result<Head> {
        if kind != super::HEAD_PAGE || page.len() < 44 || &page[0..4] != MAGIC {
            return Err(not_a_head(page, id));
        }
        let head = Head {
            dims: page[4],
            coord: page[5],
            max: read_u16(page, 6),
            root: read_u64(page, 8),
            height: read_u32(page, 16),
            min: read_u16(page, 20),
            len: read_u64(page, 24),
            nodes: read_u64(page, 32),
            points: read_u16(page, 22) & 1 == 1,
            leaf_max: read_u16(page, 40),
            leaf_min: read_u16(page, 42),
        };
        let leaf_bad = head.points && (head.leaf_min < 1 || head.leaf_max < 2 * head.leaf_min);
        if head.height == 0 || head.height > 64 || head.min < 1 || head.max < 2 * head.min || leaf_bad {
            return Err(corrupted(id, format!("head page holds impossible parameters {head:?}")));
        }
        Ok(head)
    }

    /// The root's page and level only (the query paths): checks the kind, the magic
    /// and the height, skipping the rest of [`Head::load`]'s decoding.
    #[inline]
    pub fn root(txn: &impl PageRead, id: PageId) -> Result<(u64, u16)> {
        let page = txn.page(id)?;
        let bytes: &[u8] = &page;
        if page.kind() != super::HEAD_PAGE || bytes.len() < 20 || &bytes[0..4] != MAGIC {
            return Err(not_a_head(bytes, id));
        }
        let height = read_u32(bytes, 16);
        if height == 0 || height > 64 {
            return Err(corrupted(id, format!("head page holds an impossible height {height}")));
        }
        Ok((read_u64(bytes, 8), (height - 1) as u16))
    }

    /// Writes the head into `page`.
    pub fn encode(&self, page: &mut [u8]) {
        page[0..4].copy_from_slice(MAGIC);
        page[4] = self.dims;
        page[5] = self.coord;
        write_u16(page, 6, self.max);
        write_u64(page, 8, self.root);
        write_u32(page, 16, self.height);
        write_u16(page, 20, self.min);
        write_u16(page, 22, u16::from(self.points));
        write_u64(page, 24, self.len);
        write_u64(page, 32, self.nodes);
        write_u16(page, 40, if self.points { self.leaf_max } else { 0 });
        write_u16(page, 42, if self.points { self.leaf_min } else { 0 });
    }

    /// Writes the head to page `id`.
    pub fn store(&self, txn: &WriteTxn<'_>, id: PageId) -> Result<()> {
        self.encode(&mut txn.page_mut(id)?);
        Ok(())
    }

    /// Level of the root node.
    pub fn root_level(&self) -> u16 {
        u16::try_from(self.height - 1).expect("height checked at load")
    }
}

/// The format version of a head page of an older format, from its magic.
pub(crate) fn old_version(page: &[u8]) -> Option<u32> {
    (page.get(0..4) == Some(MAGIC_V1.as_slice())).then_some(1)
}

/// The error of a page that is not a head page of this format (a head page of format
/// version 1 says so).
#[cold]
#[inline(never)]
fn not_a_head(page: &[u8], id: PageId) -> Error {
    match old_version(page) {
        Some(found) => corrupted(
            id,
            format!(
                "R-tree head page of format version {found}; this build reads version {FORMAT_VERSION} (rebuild the tree)"
            ),
        ),
        None => corrupted(id, "not an R-tree head page".into()),
    }
}

/// The error of a node header whose count or form does not fit `form` (kept out of
/// the inlined read path).
#[cold]
#[inline(never)]
fn bad_header(header: &[u8], id: PageId, form: Form) -> Error {
    let count = u16::from_le_bytes([header[2], header[3]]);
    if usize::from(count) > form.max {
        return corrupted(id, format!("node holds {count} entries, more than {}", form.max));
    }
    corrupted(id, format!("node has form {}, expected {}", header[4], u8::from(form.point)))
}

/// A corruption error naming the R-tree page.
pub(crate) fn corrupted(page: PageId, reason: String) -> Error {
    Error::Corrupted { structure: "rtree".into(), page: page.0, reason }
}
