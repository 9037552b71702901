//! AFL++ harness of the `xml-store` fuzz target (persistent mode; see `fuzz/README.md`):
//! `cargo afl build --release -p quiredb-fuzz --features afl --bin afl-xml-store`. A panic, an
//! abort or an allocation over 1 GiB (the guard aborts) is a crash for AFL.

use quiredb_fuzz::Target;
use quiredb_fuzz::alloc_guard::Guard;

#[global_allocator]
static GUARD: Guard = Guard;

fn main() {
    // Build what the target caches (the db target's seed images) before the loop.
    drop(Target::XmlStore.seeds());
    afl::fuzz!(|data: &[u8]| Target::XmlStore.run(data));
}
