//! [`Range`]: the entries of a typed table in a key range, as guards over the pinned
//! leaves (see `btree/range.rs` for how the two ends meet).

use super::guard::{KeyGuard, ValueGuard};
use super::types::{Key, Value};
use crate::btree::{Entries, Pinned};
use crate::error::Result;
use quiredb_engine::PageRead;
use std::marker::PhantomData;

/// Entries of a typed table in a key range: ascending from the front, descending
/// from the back (`.rev()`). The guards borrow the table, so it cannot change while
/// they pin its leaves.
pub struct Range<'b, 't, T: PageRead, K: Key + 'static, V: Value + 'static> {
    entries: Entries<'b, 't, T>,
    table: &'b str,
    types: PhantomData<fn() -> (K, V)>,
}

impl<'b, 't, T: PageRead, K: Key + 'static, V: Value + 'static> Range<'b, 't, T, K, V> {
    pub(crate) fn new(entries: Entries<'b, 't, T>, table: &'b str) -> Self {
        Range { entries, table, types: PhantomData }
    }

    fn guards(&self, entry: Result<(Pinned<'t>, Pinned<'t>)>) -> Result<(KeyGuard<'b, K>, ValueGuard<'b, V>)> {
        let (key, value) = entry?;
        Ok((KeyGuard::new(key, self.table)?, ValueGuard::new(value, self.table)?))
    }
}

impl<'b, T: PageRead, K: Key + 'static, V: Value + 'static> Iterator for Range<'b, '_, T, K, V> {
    type Item = Result<(KeyGuard<'b, K>, ValueGuard<'b, V>)>;

    fn next(&mut self) -> Option<Self::Item> {
        let entry = self.entries.next()?;
        Some(self.guards(entry))
    }
}

impl<T: PageRead, K: Key + 'static, V: Value + 'static> DoubleEndedIterator for Range<'_, '_, T, K, V> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let entry = self.entries.next_back()?;
        Some(self.guards(entry))
    }
}
