//! What opening a structure read in a committed snapshot, remembered per thread, so
//! that a hot loop of short read transactions (one lookup each, T1/KV/T8) opens its
//! structure by name without a catalog lookup, a head page read or an allocation.
//!
//! A committed snapshot never changes (see `PageRead::snapshot_token`), so what an
//! open decoded under one token holds for every later transaction with that token.
//! Write transactions have no token and always open from the catalog. The list is
//! per thread (no lock), keyed by (token, name, type of what was decoded), and holds
//! at most [`CAPACITY`] entries: a new name evicts the oldest, a new snapshot
//! replaces its name's entry.

use crate::error::Result;
use quiredb_engine::{PageRead, SnapshotToken};
use std::any::Any;
use std::cell::RefCell;

/// Most structures remembered per thread.
const CAPACITY: usize = 16;

struct Opened {
    token: SnapshotToken,
    name: Box<str>,
    value: Box<dyn Any>,
}

thread_local! {
    static OPENED: RefCell<Vec<Opened>> = const { RefCell::new(Vec::new()) };
}

/// What `open` decodes for structure `name` in `txn`: remembered from an earlier open
/// in the same committed snapshot on this thread, else `open()` (remembered when
/// `txn` reads a committed snapshot).
pub(crate) fn remembered<V: Clone + 'static>(
    txn: &impl PageRead,
    name: &str,
    open: impl FnOnce() -> Result<V>,
) -> Result<V> {
    let Some(token) = txn.snapshot_token() else { return open() };
    let same = |entry: &Opened| &*entry.name == name && entry.value.is::<V>();
    let hit = OPENED.with_borrow(|opened| {
        let entry = opened.iter().find(|entry| same(entry))?;
        let value = entry.value.downcast_ref::<V>().filter(|_| entry.token == token);
        value.cloned()
    });
    if let Some(value) = hit {
        return Ok(value);
    }
    let value = open()?;
    OPENED.with_borrow_mut(|opened| {
        opened.retain(|entry| !same(entry));
        if opened.len() == CAPACITY {
            opened.remove(0);
        }
        opened.push(Opened { token, name: name.into(), value: Box::new(value.clone()) });
    });
    Ok(value)
}
