//! The engines each workload family runs, in table order. To add QuireDB to a family,
//! write its adapter as `peers/quiredb_<family>.rs` implementing the family trait of
//! `family.rs` and add one `Entry { id: "quiredb", … }` at the top of the list below;
//! the tables then gain the "quiredb vs best peer" column by themselves.
//! Native peers exist only with `--features peers` (module `native`); `native_missing`
//! lists what a build without them lacks, so the harness says so loudly.

use crate::family::{BlobOpen, Entry, KvOpen, QueueOpen, SpatialOpen, XmlOpen};
use crate::peers;

const QUIREDB_KV: &str = "B+tree, Durability::Checksummed per commit through the default 512-page commit log, group commit (the default), page 8 KiB, pool = cache budget or 1 GiB";
const QUIREDB_KV_INPLACE: &str = "B+tree, Durability::Checksummed per commit written in place (no commit log), page 8 KiB, pool = cache budget or 1 GiB";
const QUIREDB_KV_LOG: &str = "B+tree, Durability::Checksummed per commit through a 2,048-page commit log, group commit, page 8 KiB, pool = cache budget or 1 GiB";
const QUIREDB_KV_SOLO: &str = "B+tree, Durability::Checksummed per commit through the default 512-page commit log, group commit off (each commit its own durable append), page 8 KiB, pool = cache budget or 1 GiB";
const QUIREDB_KV_PREAD: &str = "B+tree, Durability::Checksummed per commit through the default commit log, page 8 KiB, pool = cache budget or 1 GiB, every pool miss read with pread (mmap_reads off)";
const QUIREDB_KV_SMALL: &str = "B+tree, Durability::Checksummed per commit through the default commit log, page 8 KiB, pool = cache budget or 1 GiB on small pages (huge_pages off)";
const QUIREDB_KV_FULL: &str =
    "B+tree, Durability::Full per commit written in place (no commit log), page 8 KiB, pool = cache budget or 1 GiB";
const QUIREDB_BLOBS: &str = "blobs + B+tree id index, Durability::Checksummed, page 4 KiB, pool 256 MiB, pages past the pool read in place from a memory map";
const QUIREDB_BLOBS_PREAD: &str = "blobs + B+tree id index, Durability::Checksummed, page 4 KiB, pool 256 MiB, every pool miss read with pread (mmap_reads off)";
const SQLITE_WAL: &str = "journal_mode=WAL, synchronous=FULL, page 4 KiB";
const SQLITE_DELETE: &str = "journal_mode=DELETE, synchronous=FULL, page 4 KiB";
const FJALL: &str = "fjall 3, write batch per commit with PersistMode::SyncData (journal fdatasync), cache = cache budget or fjall's default";
const LMDB: &str = "heed 0.23, default flags (sync per commit), no cache knob";

/// Ordered key-value engines (T1, T2, T7).
pub fn kv() -> Vec<Entry<KvOpen>> {
    let mut v: Vec<Entry<KvOpen>> = vec![
        Entry { id: "quiredb", settings: QUIREDB_KV, open: peers::quiredb_kv::QuireKv::open },
        Entry { id: "quiredb-inplace", settings: QUIREDB_KV_INPLACE, open: peers::quiredb_kv::QuireKv::open_in_place },
        Entry { id: "quiredb-full", settings: QUIREDB_KV_FULL, open: peers::quiredb_kv::QuireKv::open_full },
        Entry { id: "quiredb-pread", settings: QUIREDB_KV_PREAD, open: peers::quiredb_kv::QuireKv::open_pread },
        Entry { id: "quiredb-small", settings: QUIREDB_KV_SMALL, open: peers::quiredb_kv::QuireKv::open_small },
        Entry { id: "quiredb-log", settings: QUIREDB_KV_LOG, open: peers::quiredb_kv::QuireKv::open_log },
        Entry { id: "quiredb-solo", settings: QUIREDB_KV_SOLO, open: peers::quiredb_kv::QuireKv::open_solo },
        Entry { id: "sqlite-wal", settings: SQLITE_WAL, open: peers::sqlite::SqliteKv::open_wal },
        Entry { id: "sqlite-delete", settings: SQLITE_DELETE, open: peers::sqlite::SqliteKv::open_delete },
        Entry { id: "lmdb", settings: LMDB, open: peers::lmdb::Lmdb::open },
        Entry { id: "redb", settings: "redb 4, Durability::Immediate", open: peers::redb::Redb::open },
        Entry { id: "fjall", settings: FJALL, open: peers::fjall::Fjall::open },
    ];
    v.extend(native::kv());
    v
}

/// Heap-table / queue engines (T3).
pub fn queue() -> Vec<Entry<QueueOpen>> {
    let mut v: Vec<Entry<QueueOpen>> = vec![
        Entry {
            id: "quiredb",
            settings: "paged queue, Durability::Checksummed (one sync) per batch, page 8 KiB, pool 64 MiB",
            open: peers::quiredb_queue::QuireQueue::open,
        },
        Entry {
            id: "quiredb-full",
            settings: "paged queue, Durability::Full (two syncs) per batch, page 8 KiB, pool 64 MiB",
            open: peers::quiredb_queue::QuireQueue::open_full,
        },
        Entry {
            id: "quiredb-pread",
            settings: "paged queue, Durability::Checksummed (one sync) per batch, page 8 KiB, pool 64 MiB, pool misses read with pread (mmap_reads off)",
            open: peers::quiredb_queue::QuireQueue::open_pread,
        },
        Entry { id: "sqlite-wal", settings: "rowid table, WAL, FULL", open: peers::sqlite::SqliteHeap::open },
        Entry { id: "files", settings: "flat file, sync_data per batch", open: peers::files::FlatFile::open },
    ];
    v.extend(native::queue());
    v
}

/// Spatial engines (T4).
pub fn spatial() -> Vec<Entry<SpatialOpen>> {
    let mut v: Vec<Entry<SpatialOpen>> = vec![
        Entry {
            id: "quiredb",
            settings: "R*-tree on 8 KiB pages, f64 point leaves, 256 MiB pool, packing bulk load",
            open: peers::quiredb_spatial::open,
        },
        Entry {
            id: "quiredb-boxes",
            settings: "R*-tree on 8 KiB pages, f64, points as degenerate boxes, 256 MiB pool",
            open: peers::quiredb_spatial::open_boxes,
        },
        Entry {
            id: "quiredb-f32",
            settings: "R*-tree on 8 KiB pages, f32 point leaves (exact for T4 points), 256 MiB pool",
            open: peers::quiredb_spatial::open_f32,
        },
        Entry {
            id: "quiredb-hilbert",
            settings: "R*-tree on 8 KiB pages, f64 point leaves, 256 MiB pool, Hilbert-order bulk load",
            open: peers::quiredb_spatial::open_hilbert,
        },
        Entry { id: "rstar", settings: "rstar 0.14, default (max 6), memory", open: peers::rstar::open_default },
        Entry { id: "rstar-6-16", settings: "rstar 0.14, min 6 / max 16, memory", open: peers::rstar::open_6_16 },
        Entry { id: "sqlite-rtree", settings: "R*Tree module, float32, WAL, FULL", open: peers::sqlite_rtree::open },
    ];
    v.extend(native::spatial());
    v
}

/// XML engines (T5).
pub fn xml() -> Vec<Entry<XmlOpen>> {
    let settings = "BaseX 9.7.2 (Debian), disk, default indexes, -Xmx4g";
    let quiredb = "native XML store, one file per collection, Durability::Checksummed, pool 256 MiB; \
                   XPath by structural joins, one thread";
    let parallel = "the same, each query split across 2 threads where its plan allows (run_parallel)";
    vec![
        Entry { id: "quiredb", settings: quiredb, open: peers::quiredb_xml::open },
        Entry { id: "quiredb-2t", settings: parallel, open: peers::quiredb_xml::open_parallel },
        Entry { id: "basex", settings, open: peers::basex::open },
    ]
}

/// Blob engines (T6).
pub fn blobs() -> Vec<Entry<BlobOpen>> {
    vec![
        Entry { id: "quiredb", settings: QUIREDB_BLOBS, open: peers::quiredb_blobs::QuireBlobs::open },
        Entry {
            id: "quiredb-pread",
            settings: QUIREDB_BLOBS_PREAD,
            open: peers::quiredb_blobs::QuireBlobs::open_pread,
        },
        Entry { id: "files", settings: "one file per blob, no fsync", open: peers::files::BlobFiles::open },
        Entry { id: "sqlite-wal", settings: "SQL reads, WAL, FULL", open: peers::sqlite::SqliteBlobs::open_sql },
        Entry {
            id: "sqlite-wal-blobio",
            settings: "sqlite3_blob_read, WAL, FULL",
            open: peers::sqlite::SqliteBlobs::open_blobio,
        },
    ]
}

/// Engines of the full peer list that this build lacks (empty with `peers`).
pub fn native_missing() -> &'static [&'static str] {
    native::MISSING
}

/// Keeps the entries whose id is in `only` (all when `only` is empty).
pub fn select<O: Copy>(entries: Vec<Entry<O>>, only: &[String]) -> Vec<Entry<O>> {
    if only.is_empty() {
        return entries;
    }
    entries.into_iter().filter(|e| only.iter().any(|o| o == e.id)).collect()
}

#[cfg(feature = "peers")]
mod native {
    use super::*;

    pub const MISSING: &[&str] = &[];

    pub fn kv() -> Vec<Entry<KvOpen>> {
        let settings = "BDB 5.3 B-tree, transactional, synchronous commit, page 8 KiB, DB_THREAD";
        vec![Entry { id: "bdb", settings, open: peers::bdb::Bdb::open_btree }]
    }

    pub fn queue() -> Vec<Entry<QueueOpen>> {
        vec![
            Entry {
                id: "bdb-queue",
                settings: "BDB 5.3 Queue, DB_APPEND, page 8 KiB",
                open: peers::bdb::Bdb::open_queue,
            },
            Entry {
                id: "bdb-recno",
                settings: "BDB 5.3 Recno, DB_APPEND, page 8 KiB",
                open: peers::bdb::Bdb::open_recno,
            },
        ]
    }

    pub fn spatial() -> Vec<Entry<SpatialOpen>> {
        vec![
            Entry { id: "boost", settings: "Boost 1.74 rtree rstar<16>, packing", open: peers::boost::open_rstar },
            Entry {
                id: "boost-quadratic-16",
                settings: "Boost 1.74 rtree quadratic<16>",
                open: peers::boost::open_quadratic,
            },
            Entry {
                id: "libspatialindex-mem",
                settings: "libspatialindex 1.9.3 R*, memory, STR bulk load",
                open: peers::spatialindex::open_memory,
            },
            Entry {
                id: "libspatialindex-disk",
                settings: "libspatialindex 1.9.3 R*, disk, 8 KiB pages, STR bulk load",
                open: peers::spatialindex::open_disk,
            },
        ]
    }
}

#[cfg(not(feature = "peers"))]
mod native {
    use super::*;

    pub const MISSING: &[&str] = &[
        "bdb",
        "bdb-queue",
        "bdb-recno",
        "boost",
        "boost-quadratic-16",
        "libspatialindex-mem",
        "libspatialindex-disk",
    ];

    pub fn kv() -> Vec<Entry<KvOpen>> {
        Vec::new()
    }

    pub fn queue() -> Vec<Entry<QueueOpen>> {
        Vec::new()
    }

    pub fn spatial() -> Vec<Entry<SpatialOpen>> {
        Vec::new()
    }
}
