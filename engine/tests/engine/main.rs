//! Integration tests of quiredb-engine: one binary, one module per concern.
//!
//! - `model`: random transactions of page writes against an in-memory model.
//! - `crash`: a child process killed at random moments (crash torture).
//! - `faults`: an injected fault at every I/O operation of a small workload.
//! - `corruption`: single bit flips in every page; foreign, truncated, newer files.
//! - `durability`: the power cuts, bad reads and stale pages of issue 18, one each.
//! - `crafted`: lying counts, pointers and lists; the image-editing helpers.
//! - `snapshot`: snapshot isolation and page reuse.
//! - `alloc`: a counting allocator shows repeated queries allocate nothing.
//! - `overwrite`: pages allocated for overwrite against zeroed ones.
//! - `log`: the commit log: its writes, faults at every operation, read-only replay.
//! - `pipeline`: group commit's two appends in flight: acknowledgement order, a hole.
//! - `compact`: online compaction beside writers and readers, automatic, under faults.
//! - `direct`: reads past the pool (`read_payloads`) against reads through it.
//! - `mapped`: a mapped page the kernel cannot read is an error, not a `SIGBUS`.
//! - `behind`: transactions whose pages are written before the commit (write-behind)
//!   against the model, under faults at any operation, and a lost page of one.
//!
//! Randomised tests print their seed; set `QUIRE_SEED` to replay one.

mod alloc;
mod behind;
#[path = "../support/child.rs"]
mod child;
mod common;
mod compact;
mod corruption;
mod crafted;
mod crash;
mod direct;
mod durability;
mod faults;
mod log;
mod mapped;
mod model;
mod overwrite;
mod pipeline;
mod snapshot;
