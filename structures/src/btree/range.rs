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

impl<'b, 't, T: PageRead> Entries<'b, 't, T> {
    /// Moves the front cursor onto its next entry; false when the range is used up.
    fn step_front(&mut self) -> Result<bool> {
        if !self.front_started {
            self.front_started = true;
            match &self.low {
                Bound::Unbounded => self.front.seek_first()?,
                Bound::Included(key) | Bound::Excluded(key) => self.front.seek(key)?,
            }
            if let (Bound::Excluded(key), Some(at)) = (&self.low, self.front.key())
                && at == key.as_slice()
            {
                self.front.move_next()?;
            }
        } else {
            self.front.move_next()?;
        }
        let Some(key) = self.front.key() else { return Ok(false) };
        let before_back = !self.back_started || self.back.key().is_some_and(|back| key < back);
        Ok(within(key, &self.high, false) && before_back)
    }

    /// Moves the back cursor onto its previous entry; false when the range is used up.
    fn step_back(&mut self) -> Result<bool> {
        if !self.back_started {
            self.back_started = true;
            match &self.high {
                Bound::Unbounded => self.back.seek_last()?,
                Bound::Included(key) | Bound::Excluded(key) => self.back.seek_floor(key)?,
            }
            if let (Bound::Excluded(key), Some(at)) = (&self.high, self.back.key())
                && at == key.as_slice()
            {
                self.back.move_prev()?;
            }
        } else {
            self.back.move_prev()?;
        }
        let Some(key) = self.back.key() else { return Ok(false) };
        let after_front = !self.front_started || self.front.key().is_some_and(|front| key > front);
        Ok(within(key, &self.low, true) && after_front)
    }

    /// The entry `step` moved onto, or the end (after which the iterator is fused).
    fn yield_from(&mut self, stepped: Result<bool>, front: bool) -> Option<Result<(Pinned<'t>, Pinned<'t>)>> {
        let cursor = if front { &self.front } else { &self.back };
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
        let stepped = self.step_front();
        self.yield_from(stepped, true)
    }
}

impl<T: PageRead> DoubleEndedIterator for Entries<'_, '_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let stepped = self.step_back();
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
