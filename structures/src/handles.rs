//! Which structures have a handle open in which write transaction, so that a second
//! handle to one structure in one write transaction is refused with
//! [`Error::AlreadyOpen`] (two handles would each cache the structure's root and
//! write over each other's changes).
//!
//! A handle holds an [`OpenMark`] and borrows its transaction, so the transaction
//! neither moves nor ends while the mark lives; the mark names the transaction by its
//! address (unique among live transactions; its id is not fixed until it first
//! writes) and is removed when the handle drops. A handle leaked with `mem::forget`
//! keeps its name marked for a later write transaction at the same address. The list is process-wide and
//! holds one entry per open write handle (a few at a time), so a linear scan is the
//! cheapest lookup.

use crate::error::{Error, Result};
use quiredb_engine::{PageRead, WriteTxn};
use std::sync::Mutex;

/// (transaction address, structure name) of every open write handle.
static OPEN: Mutex<Vec<(usize, String)>> = Mutex::new(Vec::new());

/// The record that a handle to structure `name` is open in a write transaction;
/// dropping it closes the handle.
#[derive(Debug)]
pub(crate) struct OpenMark {
    txn: usize,
    name: String,
}

fn open_list() -> std::sync::MutexGuard<'static, Vec<(usize, String)>> {
    // A panic while the list was held left it consistent (each edit is one call).
    OPEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn listed(open: &[(usize, String)], address: usize, name: &str) -> bool {
    open.iter().any(|(a, n)| *a == address && n == name)
}

impl OpenMark {
    /// Marks `name` open in `txn` (a write transaction); `AlreadyOpen` when another
    /// handle has it.
    pub(crate) fn claim(txn: &impl PageRead, name: &str) -> Result<OpenMark> {
        let address = std::ptr::from_ref(txn).addr();
        let mut open = open_list();
        if listed(&open, address, name) {
            return Err(Error::AlreadyOpen { name: name.to_owned() });
        }
        open.push((address, name.to_owned()));
        // Made only once recorded: dropping a mark removes its entry.
        Ok(OpenMark { txn: address, name: name.to_owned() })
    }

    /// True when `name` has a handle open in `txn`.
    pub(crate) fn is_open(txn: &impl PageRead, name: &str) -> bool {
        listed(&open_list(), std::ptr::from_ref(txn).addr(), name)
    }

    fn is(&self, (txn, name): &(usize, String)) -> bool {
        *txn == self.txn && *name == self.name
    }
}

impl Drop for OpenMark {
    fn drop(&mut self) {
        let mut open = open_list();
        if let Some(at) = open.iter().position(|entry| self.is(entry)) {
            open.swap_remove(at);
        }
    }
}

/// Whether structure `name` can be deleted in `txn`: false when it does not exist,
/// `AlreadyOpen` while a handle to it is open.
pub(crate) fn deletable(txn: &WriteTxn<'_>, name: &str) -> Result<bool> {
    if OpenMark::is_open(txn, name) {
        return Err(Error::AlreadyOpen { name: name.to_owned() });
    }
    Ok(txn.catalog_entry(name)?.is_some())
}
