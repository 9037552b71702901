//! ResultSet recycling: a counting global allocator shows that a repeated query (begin
//! a snapshot, read pages, fill a result set, drop both) allocates nothing in steady
//! state.

use super::common::*;
use quiredb_engine::PageRead;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts allocations made by the current thread.
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: delegates every call to the system allocator unchanged; it only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|count| count.set(count.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|count| count.set(count.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

#[test]
fn repeated_queries_allocate_nothing_in_steady_state() {
    // Proves: with recycling on, a query allocates zero times after warm-up; with a
    // detached (non-recycled) result set it allocates every time.
    let (_storage, db) = memory_db(small_options());
    let ids = committed_pages(&db, 40);
    let query = |recycled: bool| {
        let snapshot = db.begin_read().unwrap();
        let mut result = if recycled { snapshot.result_set() } else { quiredb_engine::ResultSet::detached() };
        for id in &ids {
            let page = snapshot.page(*id).unwrap();
            result.push_with_bytes(id.0, 0.0, &page[..16]);
        }
        assert_eq!(result.len(), ids.len());
    };
    for _ in 0..10 {
        query(true);
    }
    let before = allocations();
    for _ in 0..1000 {
        query(true);
    }
    assert_eq!(allocations() - before, 0, "recycled queries allocated");
    let before = allocations();
    for _ in 0..100 {
        query(false);
    }
    assert!(allocations() - before >= 100, "the counter sees allocations");
}
