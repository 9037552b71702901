//! Key ranges in both directions: [`Entries`] (stored bytes read in place, the core)
//! and [`Range`] (owned copies), each a `DoubleEndedIterator`.
//!
//! Two cursors walk in from the two ends; each end yields a key only while it lies
//! inside the bounds and strictly beyond the last key the other end yielded, so the
//! ends stop where they meet and no entry comes out twice.

use super::BTree;
use super::cursor::Cursor;
use super::pinned::Pinned;
use crate::error::Result;
use quiredb_engine::PageRead;
use std::ops::Bound;

/// The entries of a key range as stored bytes read in place ([`Pinned`]), ascending
/// from the front and descending from the back.
pub struct Entries<'b, 't, T: PageRead> {
    front: Cursor<'b, 't, T>,
    back: Cursor<'b, 't, T>,
    low: Bound<Vec<u8>>,
    high: Bound<Vec<u8>>,
    front_started: bool,
    back_started: bool,
    done: bool,
}

fn owned(bound: Bound<&[u8]>) -> Bound<Vec<u8>> {
    bound.map(<[u8]>::to_vec)
}

/// True when `key` is on the inner side of `bound` (`low`: at or above it).
fn within(key: &[u8], bound: &Bound<Vec<u8>>, low: bool) -> bool {
    match bound {
        Bound::Unbounded => true,
        Bound::Included(edge) if low => key >= edge.as_slice(),
        Bound::Excluded(edge) if low => key > edge.as_slice(),
        Bound::Included(edge) => key <= edge.as_slice(),
        Bound::Excluded(edge) => key < edge.as_slice(),
    }
}

/// Moves `cursor` one entry onward: forward from the front, backward from the back.
fn advance<T: PageRead>(cursor: &mut Cursor<'_, '_, T>, front: bool) -> Result<()> {
    if front {
        cursor.move_next()?;
    } else {
        cursor.move_prev()?;
    }
    Ok(())
}

/// Puts `cursor` on the first entry inside `bound` seen from its end.
fn position<T: PageRead>(cursor: &mut Cursor<'_, '_, T>, bound: &Bound<Vec<u8>>, front: bool) -> Result<()> {
    match bound {
        _ if front => return cursor.seek_from(bound.as_ref().map(Vec::as_slice)),
        Bound::Unbounded => cursor.seek_last()?,
        Bound::Included(key) | Bound::Excluded(key) => cursor.seek_floor(key)?,
    }
    if let (Bound::Excluded(key), Some(at)) = (bound, cursor.key())
        && at == key.as_slice()
    {
        advance(cursor, front)?;
    }
    Ok(())
}

impl<'b, 't, T: PageRead> Entries<'b, 't, T> {
    /// Moves the cursor of one end (`front`, else the back) onto its next entry; false
    /// when the range is used up (out of the bounds, or met by the other end).
    fn step(&mut self, front: bool) -> Result<bool> {
        let (cursor, started, other, other_started, start, end) = if front {
            (&mut self.front, &mut self.front_started, &self.back, self.back_started, &self.low, &self.high)
        } else {
            (&mut self.back, &mut self.back_started, &self.front, self.front_started, &self.high, &self.low)
        };
        if *started {
            advance(cursor, front)?;
        } else {
            *started = true;
            position(cursor, start, front)?;
        }
        let Some(key) = cursor.key() else { return Ok(false) };
        let short_of_other = !other_started || other.key().is_some_and(|at| if front { key < at } else { key > at });
        Ok(within(key, end, !front) && short_of_other)
    }

    /// The entry `step` moved onto, or the end (after which the iterator is fused).
    fn yield_from(&mut self, stepped: Result<bool>, front: bool) -> Option<Result<(Pinned<'t>, Pinned<'t>)>> {
        let cursor = if front { &mut self.front } else { &mut self.back };
        match stepped.and_then(|inside| if inside { cursor.pinned() } else { Ok(None) }) {
            Ok(Some(entry)) => Some(Ok(entry)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(error) => {
                self.done = true;
                Some(Err(error))
            }
        }
    }
}

impl<'t, T: PageRead> Iterator for Entries<'_, 't, T> {
    type Item = Result<(Pinned<'t>, Pinned<'t>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let stepped = self.step(true);
        self.yield_from(stepped, true)
    }
}

impl<T: PageRead> DoubleEndedIterator for Entries<'_, '_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let stepped = self.step(false);
        self.yield_from(stepped, false)
    }
}

/// The entries of a key range as owned `(key, value)` vectors, ascending from the
/// front and descending from the back (`.rev()`).
pub struct Range<'b, 't, T: PageRead>(Entries<'b, 't, T>);

fn to_owned((key, value): (Pinned<'_>, Pinned<'_>)) -> (Vec<u8>, Vec<u8>) {
    (key.to_vec(), value.to_vec())
}

impl<T: PageRead> Iterator for Range<'_, '_, T> {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|entry| entry.map(to_owned))
    }
}

impl<T: PageRead> DoubleEndedIterator for Range<'_, '_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|entry| entry.map(to_owned))
    }
}

impl<'t, T: PageRead> BTree<'t, T> {
    /// Entries with `low ≤ key ≤ high` (per the bounds), read in place; ascending, or
    /// descending with `.rev()`.
    pub fn entries(&self, low: Bound<&[u8]>, high: Bound<&[u8]>) -> Entries<'_, 't, T> {
        Entries {
            front: self.cursor(),
            back: self.cursor(),
            low: owned(low),
            high: owned(high),
            front_started: false,
            back_started: false,
            done: false,
        }
    }

    /// Entries with `low ≤ key ≤ high` (per the bounds) as owned vectors; ascending, or
    /// descending with `.rev()`.
    pub fn range(&self, low: Bound<&[u8]>, high: Bound<&[u8]>) -> Range<'_, 't, T> {
        Range(self.entries(low, high))
    }
}
