//! One way to open and delete every typed structure, from the transaction:
//! `txn.open_table(DEF)?`, `txn.open_queue(DEF)?`, `txn.open_rtree(DEF)?` ([`Structures`],
//! on every kind of transaction) and `txn.delete_table(DEF)?` … ([`StructuresMut`], on a
//! write transaction). Every handle borrows its transaction; in a write transaction an
//! absent structure is created and a second handle to one structure is
//! [`Error::AlreadyOpen`](crate::Error::AlreadyOpen); in a read transaction an absent
//! structure is an error. Stored types are checked on every open
//! ([`Error::TypeMismatch`](crate::Error::TypeMismatch)).
//!
//! A handle kept past its transaction's commit does not compile:
//!
//! ```compile_fail,E0505
//! # use quiredb_engine::{Database, Durability, storage::MemStorage};
//! # use quiredb_structures::{Structures, queue::QueueDef};
//! # let db = Database::builder().with_storage(std::sync::Arc::new(MemStorage::new()), "m").unwrap();
//! const EVENTS: QueueDef<u64> = QueueDef::new("events");
//! let txn = db.begin_write().unwrap();
//! let mut events = txn.open_queue(EVENTS).unwrap();
//! txn.commit(Durability::Checksummed).unwrap(); // error: `txn` is borrowed by `events`
//! events.push_back(1).unwrap();
//! ```

use crate::error::Result;
use crate::queue::{QueueDef, QueueHandle, handle as queue};
use crate::rtree::{Coord, RTree, RTreeDef, handle as rtree};
use crate::table::{Key, Table, TableDef, Value, open as table};
use quiredb_engine::{OwnedReadTxn, PageRead, ReadTxn, WriteTxn};

/// Opening typed structures from a transaction (`use` it to call `txn.open_table`).
pub trait Structures: PageRead + Sized {
    /// Opens the table `def` names (see the module docs).
    fn open_table<K: Key + 'static, V: Value + 'static>(&self, def: TableDef<K, V>) -> Result<Table<'_, Self, K, V>>;
    /// Opens the queue `def` names (see the module docs).
    fn open_queue<Rec: Value + 'static>(&self, def: QueueDef<Rec>) -> Result<QueueHandle<'_, Self, Rec>>;
    /// Opens the R*-tree `def` names (see the module docs).
    fn open_rtree<const D: usize, C: Coord>(&self, def: RTreeDef<D, C>) -> Result<RTree<'_, Self, D, C>>;
}

/// Deleting typed structures in a write transaction: each frees the structure's pages
/// and returns false when it did not exist; refused while a handle to it is open or
/// when its stored types are not `def`'s.
pub trait StructuresMut {
    /// Deletes the table `def` names.
    fn delete_table<K: Key + 'static, V: Value + 'static>(&self, def: TableDef<K, V>) -> Result<bool>;
    /// Deletes the queue `def` names.
    fn delete_queue<Rec: Value + 'static>(&self, def: QueueDef<Rec>) -> Result<bool>;
    /// Deletes the R*-tree `def` names.
    fn delete_rtree<const D: usize, C: Coord>(&self, def: RTreeDef<D, C>) -> Result<bool>;
}

/// Implements [`Structures`] for a read transaction type.
macro_rules! read_structures {
    ($type:ty) => {
        impl Structures for $type {
            fn open_table<K: Key + 'static, V: Value + 'static>(
                &self,
                def: TableDef<K, V>,
            ) -> Result<Table<'_, Self, K, V>> {
                table::open_read(self, def)
            }
            fn open_queue<Rec: Value + 'static>(&self, def: QueueDef<Rec>) -> Result<QueueHandle<'_, Self, Rec>> {
                queue::open_read(self, def)
            }
            fn open_rtree<const D: usize, C: Coord>(&self, def: RTreeDef<D, C>) -> Result<RTree<'_, Self, D, C>> {
                rtree::open_read(self, def)
            }
        }
    };
}

read_structures!(ReadTxn<'_>);
read_structures!(OwnedReadTxn);

impl Structures for WriteTxn<'_> {
    fn open_table<K: Key + 'static, V: Value + 'static>(&self, def: TableDef<K, V>) -> Result<Table<'_, Self, K, V>> {
        table::open_write(self, def)
    }
    fn open_queue<Rec: Value + 'static>(&self, def: QueueDef<Rec>) -> Result<QueueHandle<'_, Self, Rec>> {
        queue::open_write(self, def)
    }
    fn open_rtree<const D: usize, C: Coord>(&self, def: RTreeDef<D, C>) -> Result<RTree<'_, Self, D, C>> {
        rtree::open_write(self, def)
    }
}

impl StructuresMut for WriteTxn<'_> {
    fn delete_table<K: Key + 'static, V: Value + 'static>(&self, def: TableDef<K, V>) -> Result<bool> {
        table::delete(self, def)
    }
    fn delete_queue<Rec: Value + 'static>(&self, def: QueueDef<Rec>) -> Result<bool> {
        queue::delete(self, def)
    }
    fn delete_rtree<const D: usize, C: Coord>(&self, def: RTreeDef<D, C>) -> Result<bool> {
        rtree::delete(self, def)
    }
}
