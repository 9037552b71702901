//! A global allocator that refuses single allocations above [`LIMIT_BYTES`]: it
//! writes what happened to stderr and aborts, so a length read from a corrupt file
//! and passed to `Vec::with_capacity` is a finding (an abort AFL records, a non-zero
//! exit of the in-process driver) instead of a machine swapping or an overcommitted
//! mapping that passes unnoticed.
//!
//! Install in a fuzz binary with
//! `#[global_allocator] static GUARD: quiredb_fuzz::alloc_guard::Guard = quiredb_fuzz::alloc_guard::Guard;`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};

/// The index of the input being run, set by the driver, printed when an allocation
/// is refused (the driver's seed and this index regenerate the input).
pub static CURRENT_INPUT: AtomicU64 = AtomicU64::new(u64::MAX);

/// Largest single allocation allowed: 1 GiB.
pub const LIMIT_BYTES: usize = 1 << 30;

/// The guarding allocator (forwards to [`System`]).
#[derive(Debug, Clone, Copy)]
pub struct Guard;

fn refuse(size: usize) -> ! {
    // The message first without allocating: a fixed buffer and an unbuffered stderr.
    let mut text = [0u8; 160];
    let mut cursor = &mut text[..];
    let input = CURRENT_INPUT.load(Ordering::Relaxed);
    let _ = writeln!(cursor, "quiredb-fuzz: allocation of {size} bytes refused (limit 1 GiB), input #{input}");
    let written = 160 - cursor.len();
    let _ = std::io::stderr().write_all(&text[..written]);
    // The backtrace allocates, but only small blocks, through this same guard.
    let _ = writeln!(std::io::stderr(), "{}", std::backtrace::Backtrace::force_capture());
    std::process::abort()
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged,
// after a size check that either passes or aborts; `System` upholds the contract.
unsafe impl GlobalAlloc for Guard {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > LIMIT_BYTES {
            refuse(layout.size());
        }
        // SAFETY: forwarded with the caller's layout (non-zero size per the contract).
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() > LIMIT_BYTES {
            refuse(layout.size());
        }
        // SAFETY: as in `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` (through this wrapper) with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > LIMIT_BYTES {
            refuse(new_size);
        }
        // SAFETY: `ptr`/`layout` come from this allocator; `new_size` is the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}
