//! quiredb-structures: the index structures of QuireDB, built only on the engine's
//! logical page API (`quiredb_engine::raw`): B+tree, blobs, paged queue and R*-tree,
//! and typed tables over the B+tree ([`table`]). Each opens by name through the
//! engine's catalog. An application declares its structures as constants
//! ([`table::TableDef`], [`queue::QueueDef`], [`rtree::RTreeDef`]) and opens them from
//! a transaction with [`Structures`]; the untyped handles (`BTree`, `Queue`, `RTree`)
//! stay for byte-level use and for structure authors. Every handle, typed or not,
//! borrows the transaction it was opened in (one handle model, as redb's), and a
//! write transaction has at most one handle per structure
//! ([`Error::AlreadyOpen`]).
#![forbid(unsafe_code)]

pub mod blob;
pub mod btree;
pub mod check;
pub mod error;
mod handles;
mod open;
mod opened;
pub mod queue;
pub mod rtree;
pub mod table;

pub use error::{Error, Result};
pub use open::{Structures, StructuresMut};

use quiredb_engine::KindName;

/// Every page kind the structures define, with its name, for `quire check`. Each is
/// defined in its structure's module; the codes are 16..=23 (the XML store has 24).
pub const PAGE_KINDS: &[KindName] = &[
    KindName { kind: btree::LEAF_PAGE, name: "B+tree leaf" },
    KindName { kind: btree::BRANCH_PAGE, name: "B+tree branch" },
    KindName { kind: btree::HEAD_PAGE, name: "B+tree head" },
    KindName { kind: blob::BLOB_PAGE, name: "blob" },
    KindName { kind: rtree::NODE_PAGE, name: "R*-tree node" },
    KindName { kind: rtree::HEAD_PAGE, name: "R*-tree head" },
    KindName { kind: queue::DATA_PAGE, name: "queue data" },
    KindName { kind: queue::HEAD_PAGE, name: "queue head" },
];

#[cfg(test)]
mod tests {
    use super::PAGE_KINDS;

    #[test]
    fn page_kind_codes_are_distinct_structure_codes_and_inner_pages_are_flagged() {
        // Proves the kinds keep the codes files were written with (16..=23, so old
        // files still open) and that exactly the pages a search passes are flagged.
        let codes: Vec<u8> = PAGE_KINDS.iter().map(|named| named.kind.code()).collect();
        assert_eq!(codes, (16..=23).collect::<Vec<u8>>());
        let flagged: Vec<&str> =
            PAGE_KINDS.iter().filter(|named| named.kind.indexes_others()).map(|named| named.name).collect();
        assert_eq!(flagged, ["B+tree branch", "B+tree head", "R*-tree head", "queue head"]);
    }
}
