//! Per-thread scratch buffers of the query paths, so a repeated window or kNN query
//! allocates nothing in steady state (the T8 benchmark counts allocator calls).
//!
//! [`take`] moves the thread's buffer out of its `thread_local!` slot (cleared, its
//! capacity kept) and the returned guard puts it back when dropped — also when the
//! query returns early with an error. A nested query on the same thread (a visitor
//! that queries again) finds the slot empty and simply uses a fresh buffer. Buffers
//! grown beyond [`MAX_RETAINED`] elements are freed instead of kept.

use std::cell::RefCell;
use std::ops::{Deref, DerefMut};
use std::thread::LocalKey;

/// Most elements a returned buffer may hold capacity for and still be kept.
const MAX_RETAINED: usize = 1 << 16;

/// A buffer that can be cleared and reports its capacity.
pub(super) trait Buffer: Default + 'static {
    fn clear_all(&mut self);
    fn retained(&self) -> usize;
}

impl<T: 'static> Buffer for Vec<T> {
    fn clear_all(&mut self) {
        self.clear();
    }
    fn retained(&self) -> usize {
        self.capacity()
    }
}

impl<T: Ord + 'static> Buffer for std::collections::BinaryHeap<T> {
    fn clear_all(&mut self) {
        self.clear();
    }
    fn retained(&self) -> usize {
        self.capacity()
    }
}

/// A thread's scratch buffer on loan; returned to its slot on drop.
pub(super) struct Loan<T: Buffer> {
    value: T,
    home: &'static LocalKey<RefCell<T>>,
}

/// Takes the thread's buffer from `home`, empty.
pub(super) fn take<T: Buffer>(home: &'static LocalKey<RefCell<T>>) -> Loan<T> {
    let mut value = home.try_with(|slot| std::mem::take(&mut *slot.borrow_mut())).unwrap_or_default();
    value.clear_all();
    Loan { value, home }
}

impl<T: Buffer> Drop for Loan<T> {
    fn drop(&mut self) {
        if self.value.retained() <= MAX_RETAINED {
            let value = std::mem::take(&mut self.value);
            // During thread teardown the slot may be gone: the buffer is then freed.
            let _ = self.home.try_with(|slot| *slot.borrow_mut() = value);
        }
    }
}

impl<T: Buffer> Deref for Loan<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T: Buffer> DerefMut for Loan<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        static SLOT: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    }

    #[test]
    fn a_returned_buffer_is_reused_empty_and_nested_loans_get_their_own() {
        {
            let mut a = take(&SLOT);
            a.extend(0..100);
            let nested = take(&SLOT);
            assert_eq!(nested.capacity(), 0, "the slot is empty while lent");
        }
        let again = take(&SLOT);
        assert!(again.is_empty());
        assert!(again.capacity() >= 100, "capacity kept: {}", again.capacity());
    }

    #[test]
    fn oversized_buffers_are_not_kept() {
        {
            let mut a = take(&SLOT);
            a.reserve(MAX_RETAINED + 1);
        }
        assert!(take(&SLOT).capacity() <= MAX_RETAINED);
    }
}
