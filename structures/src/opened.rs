//! What opening a structure read in a committed snapshot, remembered per thread, so
//! that a hot loop of short read transactions (one lookup each, T1/KV/T8) opens its
//! structure by name without a catalog lookup, a head page read or an allocation.
//!
//! A committed snapshot never changes (see `PageRead::snapshot_token`), so what an
//! open decoded under one token holds for every later transaction with that token.
//! Write transactions have no token and always open from the catalog. Each list is
//! per thread (no lock), keyed by (name, token), and holds at most [`CAPACITY`]
//! entries: a new name evicts the oldest, a new snapshot replaces its name's entry.
//! The B+tree keeps its own typed list ([`remembered_in`]: a hit is a token compare
//! and a name compare, inlined into the caller, with the miss path out of line);
//! other structures share one list of any type ([`remembered`]).

use crate::error::Result;
use quiredb_engine::{PageRead, SnapshotToken};
use std::any::Any;
use std::cell::RefCell;
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
        let entry = list.iter().find(|entry| entry.token == token && same_name(&entry.name, name))?;
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

/// `a == b`, compared inline for names of up to 16 bytes (a call to `memcmp` was a
/// third of a remembered open's instructions).
#[inline]
fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len() && if a.len() <= 16 { a.iter().zip(b).all(|(x, y)| x == y) } else { a == b }
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

thread_local! {
    /// Opens of every kind without a list of its own, told apart by type.
    static ANY: Remembered<Box<dyn Any>> = const { Remembered::new() };
}

/// [`remembered_in`] the list shared by all kinds, for a value of type `V`.
pub(crate) fn remembered<V: Clone + 'static>(
    txn: &impl PageRead,
    name: &str,
    open: impl FnOnce() -> Result<V>,
) -> Result<V> {
    let Some(token) = txn.snapshot_token() else { return open() };
    if let Some(value) = ANY.with(|list| list.get(token, name, |value| value.downcast_ref::<V>().cloned())) {
        return Ok(value);
    }
    let value = open()?;
    ANY.with(|list| list.put(token, name, Box::new(value.clone()), |entry| entry.value.is::<V>()));
    Ok(value)
}
