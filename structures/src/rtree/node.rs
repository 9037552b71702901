//! Node pages (`RTREE_NODE`) and the head page (`RTREE_HEAD`): their byte layouts,
//! decoding into [`Node`] (with checks: a bad page is `Corrupted`, never a panic) and
//! encoding back. Offsets are in the page payload, after the engine's 32-byte header.
//!
//! Node page, `E = 2·D·C::BYTES + 8` bytes per entry:
//!
//! | offset       | size | field   | meaning                                          |
//! |-------------:|-----:|---------|--------------------------------------------------|
//! | 0            | 2    | level   | 0 = leaf; a node at level L points to level L−1   |
//! | 2            | 2    | count   | entries in use                                   |
//! | 4            | 4    | —       | zero                                             |
//! | 8 + i·E      | D·C  | min     | lower corner of entry i (rounded toward −∞)       |
//! | … + D·C      | D·C  | max     | upper corner of entry i (rounded toward +∞)       |
//! | … + 2·D·C    | 8    | id      | payload (leaf) or logical child page (branch)     |
//! | 8 + max·E + g·B | B | group g | box of entries `16g .. 16g+16` (`B = 2·D·C`)       |
//!
//! The group boxes (one per run of [`GROUP`] entries in use, rewritten by every
//! encode) let queries skip 16 entries with one test: a page-sized node is searched
//! like a small two-level tree. `max` is the tree's node capacity (head page).
//!
//! Head page (never moves; the catalog points at it):
//!
//! | offset | size | field  | meaning                                   |
//! |-------:|-----:|--------|-------------------------------------------|
//! | 0      | 4    | magic  | `QRT1`                                    |
//! | 4      | 1    | dims   | D                                         |
//! | 5      | 1    | coord  | 8 = f64, 4 = f32                          |
//! | 6      | 2    | max    | most entries per node                     |
//! | 8      | 8    | root   | logical page of the root node             |
//! | 16     | 4    | height | levels (1 = the root is a leaf)           |
//! | 20     | 2    | min    | fewest entries per non-root node          |
//! | 22     | 2    | —      | zero                                      |
//! | 24     | 8    | len    | entries in the leaves                     |
//! | 32     | 8    | nodes  | node pages                                |

use super::coord::Coord;
use super::geom::Rect;
use crate::error::{Error, Result};
use quiredb_engine::page::{read_u16, read_u32, read_u64, write_u16, write_u32, write_u64};
use quiredb_engine::{PageId, PageKind, PageRead, WriteTxn};
use std::marker::PhantomData;

/// Bytes before the first entry of a node page.
pub(crate) const NODE_HEADER: usize = 8;
/// Entries per group box inside a node.
pub(crate) const GROUP: usize = 16;
/// Magic number of the head page.
pub(crate) const MAGIC: &[u8; 4] = b"QRT1";

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

/// Byte layout of the nodes of one `(D, C)` pair.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout<const D: usize, C: Coord> {
    _coord: PhantomData<C>,
}

impl<const D: usize, C: Coord> Layout<D, C> {
    /// Bytes per entry.
    pub const ENTRY: usize = 2 * D * C::BYTES + 8;

    /// Bytes per group box.
    pub const GROUP_BOX: usize = 2 * D * C::BYTES;

    /// Entries that fit, with their group boxes, in a payload of `payload` bytes.
    pub fn capacity(payload: usize) -> usize {
        let mut max = (payload - NODE_HEADER) / Self::ENTRY;
        while max > 0 && NODE_HEADER + max * Self::ENTRY + max.div_ceil(GROUP) * Self::GROUP_BOX > payload {
            max -= 1;
        }
        max
    }

    /// `(group box, encoded entries of the group)` of a node page whose encoded
    /// entries are `bytes` (from [`Layout::entries`]).
    #[inline]
    pub fn runs<'p>(page: &'p [u8], bytes: &'p [u8], max: usize) -> impl Iterator<Item = (&'p [u8], &'p [u8])> {
        let groups = Self::groups(page, max, bytes.len() / Self::ENTRY);
        groups.chunks_exact(Self::GROUP_BOX).zip(bytes.chunks(GROUP * Self::ENTRY))
    }

    /// The group boxes of a node of `count` entries (one per started run of 16).
    #[inline]
    pub fn groups(page: &[u8], max: usize, count: usize) -> &[u8] {
        let start = NODE_HEADER + max * Self::ENTRY;
        &page[start..start + count.div_ceil(GROUP) * Self::GROUP_BOX]
    }

    /// Box of the encoded entry `chunk`.
    #[inline(always)]
    pub fn rect(chunk: &[u8]) -> Rect<D> {
        let mut rect = Rect::new([0.0; D], [0.0; D]);
        for d in 0..D {
            rect.min[d] = C::read(&chunk[d * C::BYTES..]);
            rect.max[d] = C::read(&chunk[(D + d) * C::BYTES..]);
        }
        rect
    }

    /// Id of the encoded entry `chunk`.
    #[inline(always)]
    pub fn id(chunk: &[u8]) -> u64 {
        let at = 2 * D * C::BYTES;
        u64::from_le_bytes(chunk[at..at + 8].try_into().expect("slice of 8 bytes"))
    }

    /// The level and the encoded entries of a node page, checked against `max`.
    #[inline]
    pub fn entries(page: &[u8], id: PageId, max: usize) -> Result<(u16, &[u8])> {
        let level = u16::from_le_bytes([page[0], page[1]]);
        let count = usize::from(u16::from_le_bytes([page[2], page[3]]));
        if count > max {
            return Err(corrupted(id, format!("node holds {count} entries, more than {max}")));
        }
        Ok((level, &page[NODE_HEADER..NODE_HEADER + count * Self::ENTRY]))
    }

    /// Decodes a node page.
    pub fn decode(page: &[u8], id: PageId, max: usize) -> Result<Node<D>> {
        let (level, bytes) = Self::entries(page, id, max)?;
        let entries = bytes.chunks_exact(Self::ENTRY).map(|c| Entry { rect: Self::rect(c), id: Self::id(c) }).collect();
        Ok(Node { level, entries })
    }

    /// Encodes `node` into a page payload (boxes rounded outward).
    pub fn encode(node: &Node<D>, page: &mut [u8], max: usize) {
        Self::encode_entries(node.level, &node.entries, page, max);
    }

    /// Encodes a node of `level` holding `entries` (and their group boxes) into a
    /// page payload of a tree with node capacity `max`.
    pub fn encode_entries(level: u16, entries: &[Entry<D>], page: &mut [u8], max: usize) {
        assert!(entries.len() <= max, "node holds at most max entries");
        let start = NODE_HEADER + max * Self::ENTRY;
        for (run, chunk) in entries.chunks(GROUP).zip(page[start..].chunks_exact_mut(Self::GROUP_BOX)) {
            let rect = bbox(run);
            for d in 0..D {
                C::write_down(&mut chunk[d * C::BYTES..], rect.min[d]);
                C::write_up(&mut chunk[(D + d) * C::BYTES..], rect.max[d]);
            }
        }
        write_u16(page, 0, level);
        write_u16(page, 2, u16::try_from(entries.len()).expect("node capacity fits in u16"));
        write_u32(page, 4, 0);
        for (e, chunk) in entries.iter().zip(page[NODE_HEADER..].chunks_exact_mut(Self::ENTRY)) {
            for d in 0..D {
                C::write_down(&mut chunk[d * C::BYTES..], e.rect.min[d]);
                C::write_up(&mut chunk[(D + d) * C::BYTES..], e.rect.max[d]);
            }
            let at = 2 * D * C::BYTES;
            chunk[at..at + 8].copy_from_slice(&e.id.to_le_bytes());
        }
    }

    /// Writes `entry` at `index` of an encoded node in place and widens the box of
    /// its group. With `append` the entry is new (`index` = the old count, below
    /// `max`): the count grows by one and a new group starts with this box; without,
    /// the entry replaces one whose box it contains (a child's box that grew).
    pub fn put_entry(page: &mut [u8], index: usize, entry: &Entry<D>, append: bool, max: usize) {
        let at = NODE_HEADER + index * Self::ENTRY;
        Self::write_rect(&mut page[at..], &entry.rect);
        page[at + 2 * D * C::BYTES..at + Self::ENTRY].copy_from_slice(&entry.id.to_le_bytes());
        let group = NODE_HEADER + max * Self::ENTRY + (index / GROUP) * Self::GROUP_BOX;
        let rect = if append && index.is_multiple_of(GROUP) {
            entry.rect
        } else {
            Self::rect(&page[group..]).union(&entry.rect)
        };
        Self::write_rect(&mut page[group..], &rect);
        if append {
            write_u16(page, 2, u16::try_from(index + 1).expect("node capacity fits in u16"));
        }
    }

    #[inline]
    fn write_rect(chunk: &mut [u8], rect: &Rect<D>) {
        for d in 0..D {
            C::write_down(&mut chunk[d * C::BYTES..], rect.min[d]);
            C::write_up(&mut chunk[(D + d) * C::BYTES..], rect.max[d]);
        }
    }

    /// Reads and decodes node `id` (count checked; the level is checked by callers).
    pub fn load(txn: &impl PageRead, id: PageId, max: usize) -> Result<Node<D>> {
        Self::decode(&txn.page(id)?, id, max)
    }

    /// Like [`Layout::load`], also checking the page kind (for the checker).
    pub fn load_checked(txn: &impl PageRead, id: PageId, max: usize) -> Result<Node<D>> {
        let page = txn.page(id)?;
        if page.kind() != PageKind::RTREE_NODE {
            return Err(corrupted(id, format!("page kind {:?} is not an R-tree node", page.kind())));
        }
        let node = Self::decode(&page, id, max)?;
        let groups = Self::groups(&page, max, node.entries.len());
        for (g, (run, chunk)) in node.entries.chunks(GROUP).zip(groups.chunks_exact(Self::GROUP_BOX)).enumerate() {
            if Self::rect(chunk) != bbox(run) {
                return Err(corrupted(id, format!("group box {g} is not the union of its entries")));
            }
        }
        Ok(node)
    }

    /// Writes `node` to page `id`.
    pub fn store(txn: &WriteTxn<'_>, id: PageId, node: &Node<D>, max: usize) -> Result<()> {
        Self::encode(node, &mut txn.page_mut(id)?, max);
        Ok(())
    }

    /// Allocates a node page holding `node`; returns its id.
    pub fn create(txn: &WriteTxn<'_>, node: &Node<D>, max: usize) -> Result<PageId> {
        let mut page = txn.alloc_page(PageKind::RTREE_NODE)?;
        Self::encode(node, &mut page, max);
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
}

impl Head {
    /// Reads the head page `id`.
    pub fn load(txn: &impl PageRead, id: PageId) -> Result<Head> {
        let page = txn.page(id)?;
        if page.kind() != PageKind::RTREE_HEAD || &page[0..4] != MAGIC {
            return Err(corrupted(id, "not an R-tree head page".into()));
        }
        let head = Head {
            dims: page[4],
            coord: page[5],
            max: read_u16(&page, 6),
            root: read_u64(&page, 8),
            height: read_u32(&page, 16),
            min: read_u16(&page, 20),
            len: read_u64(&page, 24),
            nodes: read_u64(&page, 32),
        };
        if head.height == 0 || head.height > 64 || head.min < 1 || head.max < 2 * head.min {
            return Err(corrupted(id, format!("head page holds impossible parameters {head:?}")));
        }
        Ok(head)
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
        write_u16(page, 22, 0);
        write_u64(page, 24, self.len);
        write_u64(page, 32, self.nodes);
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

/// A corruption error naming the R-tree page.
pub(crate) fn corrupted(page: PageId, reason: String) -> Error {
    Error::Corrupted { structure: "rtree".into(), page: page.0, reason }
}
