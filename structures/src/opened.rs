//! What opening a structure read in a committed snapshot, remembered per thread, so
//! that a hot loop of short read transactions (one lookup each, T1/KV/T8) opens its
//! structure by name without a catalog lookup, a head page read or an allocation.
//!
//! A committed snapshot never changes (see `PageRead::snapshot_token`), so what an
//! open decoded under one token holds for every later transaction with that token.
//! Write transactions have no token and always open from the catalog. Each list is
//! per thread (no lock), keyed by (name, token), and holds at most [`CAPACITY`]
//! entries: a new name evicts the oldest, a new snapshot replaces its name's entry.
//! Each kind keeps its own typed list of a `Copy` value ([`remembered_in`]) and, in
//! front of it, its last open ([`LastOpen`], [`remembered_last`]): a loop of
//! one-query snapshots opens one structure again and again, and the last open costs a
//! copy and two compares where the list costs a borrow, a walk and a name compare
//! (≈ 100 instructions of a 2,000-instruction lookup in T1). The B+tree remembers its
//! head, the R*-tree its parameters and root.

use crate::error::Result;
use quiredb_engine::SnapshotToken;
use std::cell::{Cell, RefCell};
use std::thread::LocalKey;

/// Most structures remembered per list and thread.
const CAPACITY: usize = 16;

/// One thread's list of opens of one kind.
pub(crate) struct Remembered<V>(RefCell<Vec<Opened<V>>>);

struct Opened<V> {
    token: SnapshotToken,
    name: Box<str>,
    value: V,
}

impl<V> Remembered<V> {
    pub(crate) const fn new() -> Self {
        Remembered(RefCell::new(Vec::new()))
    }

    /// `take` of the value remembered for `name` under `token`, if any.
    #[inline]
    fn get<R>(&self, token: SnapshotToken, name: &str, take: impl FnOnce(&V) -> Option<R>) -> Option<R> {
        let list = self.0.borrow();
        let entry =
            list.iter().find(|entry| entry.token == token && same_name(entry.name.as_bytes(), name.as_bytes()))?;
        take(&entry.value)
    }

    /// Remembers `value` for `name` under `token`, replacing the entry `same` as it.
    fn put(&self, token: SnapshotToken, name: &str, value: V, same: impl Fn(&Opened<V>) -> bool) {
        let mut list = self.0.borrow_mut();
        list.retain(|entry| !(&*entry.name == name && same(entry)));
        if list.len() == CAPACITY {
            list.remove(0);
        }
        list.push(Opened { token, name: name.into(), value });
    }
}

/// `a == b` for names' bytes, compared inline for names of up to [`LAST_NAME_BYTES`]
/// (a call to `memcmp` was a third of a remembered open's instructions).
#[inline]
fn same_name(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && if a.len() <= LAST_NAME_BYTES { a.iter().zip(b).all(|(x, y)| x == y) } else { a == b }
}

/// What `open` decodes for structure `name` in the committed snapshot `token`,
/// remembered in the list `cache`: from an earlier open in the same snapshot on this
/// thread, else `open()` (then remembered). The hit is inlined into the caller (a hot
/// loop of one-lookup snapshots opens its tree on every lookup).
#[inline]
pub(crate) fn remembered_in<V: Copy>(
    cache: &'static LocalKey<Remembered<V>>,
    token: SnapshotToken,
    name: &str,
    open: impl FnOnce() -> Result<V>,
) -> Result<V> {
    match cache.with(|list| list.get(token, name, |value| Some(*value))) {
        Some(value) => Ok(value),
        None => remember_in(cache, token, name, open()?),
    }
}

/// Remembers `value` in `cache` (the miss path of [`remembered_in`], out of line).
#[cold]
#[inline(never)]
fn remember_in<V: Copy>(
    cache: &'static LocalKey<Remembered<V>>,
    token: SnapshotToken,
    name: &str,
    value: V,
) -> Result<V> {
    cache.with(|list| list.put(token, name, value, |_| true));
    Ok(value)
}

/// Longest name [`LastOpen`] holds (longer ones always go through the list).
const LAST_NAME_BYTES: usize = 24;

/// A thread's last open of one kind in a committed snapshot, with its name inline.
#[derive(Clone, Copy)]
pub(crate) struct LastOpen<V> {
    token: SnapshotToken,
    name_len: usize,
    name: [u8; LAST_NAME_BYTES],
    value: V,
}

impl<V: Copy> LastOpen<V> {
    /// The value if this is `name`'s open under `token`.
    #[inline]
    fn matches(&self, token: SnapshotToken, name: &str) -> Option<V> {
        let held = self.name.get(..self.name_len)?;
        (self.token == token && same_name(held, name.as_bytes())).then_some(self.value)
    }
}

/// [`remembered_in`] with `last` checked first: the value of `name` under `token` from
/// the thread's last open of the kind, else from its list `cache` or `open()`; then
/// remembered as the last (a name longer than [`LAST_NAME_BYTES`] only in the list).
#[inline]
pub(crate) fn remembered_last<V: Copy>(
    last: &'static LocalKey<Cell<Option<LastOpen<V>>>>,
    cache: &'static LocalKey<Remembered<V>>,
    token: SnapshotToken,
    name: &str,
    open: impl FnOnce() -> Result<V>,
) -> Result<V> {
    if let Some(value) = last.with(Cell::get).and_then(|held| held.matches(token, name)) {
        return Ok(value);
    }
    let value = remembered_in(cache, token, name, open)?;
    remember_as_last(last, token, name, value);
    Ok(value)
}

/// Makes `value` the last open of its kind, `name`'s under `token` (out of line: the
/// miss path of [`remembered_last`]).
#[cold]
#[inline(never)]
fn remember_as_last<V: Copy>(
    last: &'static LocalKey<Cell<Option<LastOpen<V>>>>,
    token: SnapshotToken,
    name: &str,
    value: V,
) {
    let mut inline = [0u8; LAST_NAME_BYTES];
    if let Some(slot) = inline.get_mut(..name.len()) {
        slot.copy_from_slice(name.as_bytes());
        last.with(|cell| cell.set(Some(LastOpen { token, name_len: name.len(), name: inline, value })));
    }
}
