//! [`QueueDef`] and [`QueueHandle`]: a queue of records of one [`Value`] type,
//! declared as a constant and opened from a transaction (`txn.open_queue(DEF)?`, trait
//! [`crate::Structures`]). The handle borrows its transaction, like a
//! [`crate::table::Table`]; a second handle to one queue in one write transaction is
//! [`crate::Error::AlreadyOpen`] (two appenders would lock the same pages). The record type
//! is stored in the catalog after the queue's version byte and checked on open
//! ([`crate::Error::TypeMismatch`]); a queue made untyped holds `&[u8]` records.

use super::{Queue, RecordId};
use crate::btree::Pinned;
use crate::error::Result;
use crate::handles::deletable;
use crate::table::{StoredTypes, Value, ValueGuard};
use quiredb_engine::{PageRead, WriteTxn};
use std::borrow::Borrow;
use std::marker::PhantomData;

/// A queue of `Rec` records, by name.
///
/// ```
/// use quiredb_structures::queue::QueueDef;
/// const EVENTS: QueueDef<&str> = QueueDef::new("events");
/// assert_eq!(EVENTS.name(), "events");
/// ```
pub struct QueueDef<Rec: Value + 'static> {
    name: &'static str,
    types: PhantomData<fn() -> Rec>,
}

impl<Rec: Value + 'static> QueueDef<Rec> {
    /// The queue named `name`.
    pub const fn new(name: &'static str) -> Self {
        QueueDef { name, types: PhantomData }
    }

    /// Catalog name.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    fn types() -> StoredTypes {
        StoredTypes::new("record id".to_owned(), Rec::type_name())
    }
}

impl<Rec: Value + 'static> Clone for QueueDef<Rec> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<Rec: Value + 'static> Copy for QueueDef<Rec> {}

/// A queue opened in a transaction. Reads work in any transaction; writes need a
/// write transaction.
pub struct QueueHandle<'t, T: PageRead, Rec: Value + 'static> {
    queue: Queue<'t, T>,
    types: PhantomData<fn() -> Rec>,
}

/// Opens `def`'s queue, checking its record type.
fn open_checked<T: PageRead, Rec: Value + 'static>(txn: &T, def: QueueDef<Rec>) -> Result<Queue<'_, T>> {
    let (queue, extra) = Queue::open_with_params(txn, def.name)?;
    let stored = match extra.is_empty() {
        true => QueueDef::<&'static [u8]>::types(),
        false => StoredTypes::from_params(def.name, &extra)?,
    };
    stored.check(def.name, &QueueDef::<Rec>::types())?;
    Ok(queue)
}

/// Opens an existing queue in a read transaction.
pub(crate) fn open_read<T: PageRead, Rec: Value + 'static>(
    txn: &T,
    def: QueueDef<Rec>,
) -> Result<QueueHandle<'_, T, Rec>> {
    Ok(QueueHandle { queue: open_checked(txn, def)?, types: PhantomData })
}

/// Opens (creating when absent) a queue in a write transaction.
pub(crate) fn open_write<'t, 'db, Rec: Value + 'static>(
    txn: &'t WriteTxn<'db>,
    def: QueueDef<Rec>,
) -> Result<QueueHandle<'t, WriteTxn<'db>, Rec>> {
    let queue = match txn.catalog_entry(def.name)? {
        Some(_) => open_checked(txn, def)?,
        None => Queue::create_with_params(txn, def.name, &QueueDef::<Rec>::types().to_params())?,
    };
    Ok(QueueHandle { queue, types: PhantomData })
}

/// Deletes `def`'s queue; false when absent.
pub(crate) fn delete<Rec: Value + 'static>(txn: &WriteTxn<'_>, def: QueueDef<Rec>) -> Result<bool> {
    if !deletable(txn, def.name)? {
        return Ok(false);
    }
    open_checked(txn, def)?.drop_queue()?;
    Ok(true)
}

impl<T: PageRead, Rec: Value + 'static> QueueHandle<'_, T, Rec> {
    /// The untyped queue underneath.
    pub fn raw(&self) -> &Queue<'_, T> {
        &self.queue
    }

    /// Catalog name.
    pub fn name(&self) -> &str {
        self.queue.name()
    }

    /// Number of live records.
    pub fn len(&self) -> Result<u64> {
        self.queue.len()
    }

    /// True when the queue holds no record.
    pub fn is_empty(&self) -> Result<bool> {
        self.queue.is_empty()
    }

    /// The live record `id` (a copy: records may span pages); `None` when not live.
    pub fn get(&self, id: RecordId) -> Result<Option<ValueGuard<'static, Rec>>> {
        let mut out = Vec::new();
        if !self.queue.get(id, &mut out)? {
            return Ok(None);
        }
        ValueGuard::new(Pinned::owned(out), self.name()).map(Some)
    }
}

impl<Rec: Value + 'static> QueueHandle<'_, WriteTxn<'_>, Rec> {
    /// Appends `record` at the tail; returns its id.
    pub fn push_back<'r>(&mut self, record: impl Borrow<Rec::SelfType<'r>>) -> Result<RecordId> {
        let mut bytes = Vec::new();
        Rec::encode_value(record.borrow(), &mut bytes);
        self.queue.append(&bytes)
    }

    /// Removes the record at the head; returns it with its id.
    pub fn pop_front(&mut self) -> Result<Option<(RecordId, ValueGuard<'static, Rec>)>> {
        let mut out = Vec::new();
        let Some(id) = self.queue.consume(&mut out)? else { return Ok(None) };
        Ok(Some((id, ValueGuard::new(Pinned::owned(out), self.queue.name())?)))
    }

    /// Removes every record; returns how many.
    pub fn clear(&mut self) -> Result<u64> {
        self.queue.clear()
    }
}
