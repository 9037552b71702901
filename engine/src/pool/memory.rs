//! The memory behind the pool's frames: one anonymous mapping of `frames × page_size`
//! bytes, advised for transparent huge pages unless the database was opened with
//! [`crate::DatabaseBuilder::huge_pages`] off, cut into one disjoint slice per frame.
//!
//! Why one mapping and not a `Box<[u8]>` per frame: a pool larger than the CPU caches
//! is touched at random, one page at a time, and on this project's machine kind (a VM)
//! a page walk through 4 KiB pages dominates that. Measured with a C probe reading
//! random 8 KiB blocks of a 2 GiB area (CPU-bound, one core): 16–26 µs a block with
//! 4 KiB pages, 6.5–12 µs with `MADV_HUGEPAGE`. `malloc`'d frames cannot be advised
//! (they share pages with other allocations and are not 2 MiB aligned); a mapping can.
//!
//! What huge pages cost: a frame's memory is backed on first touch, and the kernel
//! clears a huge page whole. On this machine kind that page is nearly always one the
//! VM's balloon handed back to the host, 3.1–4.0 ms per MiB to touch: a stall of
//! milliseconds inside a read, and a one-transaction load pays it every 2 MiB. The
//! pool's toucher (`toucher.rs`) backs the memory ahead of the frames the pool is about
//! to take, off the reads' and writes' path. Small pages are no way out: at 5 M keys
//! they read 1.1–1.9× slower. So huge pages stay the default, with the toucher
//! (measured side by side in `reports/WRITE-PATH.md` §20); a program with a small
//! working set that opens databases briefly may still turn them off
//! ([`crate::DatabaseBuilder::huge_pages`]).
//!
//! The mapping is made without swap reservation (`MAP_NORESERVE`), so a pool costs
//! memory only as far as its frames are used: the kernel backs a page on first touch
//! (zeroed), as the per-frame allocation did, and `munmap` returns all of it on close.
//! The huge-page advice is best effort: where transparent huge pages are off, frames
//! simply stay on small pages.

use std::ptr::NonNull;
use std::sync::Arc;

/// The mapping; owned by the pool and outliving every [`FrameBytes`] cut from it.
#[derive(Debug)]
pub struct FrameMemory {
    /// Shared with the pool's toucher (`toucher.rs`), which only advises it.
    map: Arc<memmap2::MmapMut>,
}

impl FrameMemory {
    /// Maps `frames × page_size` bytes (none of it backed until touched), advised for
    /// transparent huge pages if `huge_pages` (see the module docs).
    pub fn new(page_size: usize, frames: usize, huge_pages: bool) -> std::io::Result<FrameMemory> {
        let len = page_size.checked_mul(frames).ok_or_else(|| std::io::Error::other("pool size overflows"))?;
        let map = memmap2::MmapOptions::new().len(len).no_reserve_swap().map_anon()?;
        #[cfg(target_os = "linux")]
        if huge_pages {
            // Best effort (see the module docs): a refusal leaves small pages.
            let _ = map.advise(memmap2::Advice::HugePage);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = huge_pages;
        Ok(FrameMemory { map: Arc::new(map) })
    }

    /// Bytes mapped.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// The mapping, for the pool's toucher (`toucher.rs`): it keeps it mapped as long as
    /// it runs, and only advises it.
    pub fn mapping(&self) -> Arc<memmap2::MmapMut> {
        Arc::clone(&self.map)
    }

    /// The mapping's bytes, before any [`FrameMemory::mapping`] is handed out.
    fn bytes_mut(&mut self) -> &mut [u8] {
        Arc::get_mut(&mut self.map).expect("the frames are cut before the toucher starts")
    }

    /// Cuts the mapping into consecutive slices of `page_size` bytes, one per frame, and
    /// gives the [`Prefetcher`] that knows their addresses. Both come from one pointer
    /// to the mapping, so a frame's bytes reached through either are the same memory
    /// under the same provenance.
    ///
    /// Takes `&mut self` and is called once, by the pool that owns `self`: the slices
    /// are then the way to reach the bytes, each through its own frame's lock; the
    /// prefetcher's [`Prefetcher::unlocked`] is the one exception, for the pool's
    /// optimistic reads (`Pool::peek_seen`).
    pub fn cut(&mut self, page_size: usize) -> (Vec<FrameBytes>, Prefetcher) {
        let len = self.map.len();
        let base = NonNull::from(self.bytes_mut()).cast::<u8>();
        let frames = (0..len / page_size)
            .map(|frame| {
                // SAFETY: `frame * page_size + page_size <= len`: in the mapping, and the
                // ranges of different frames are disjoint.
                FrameBytes::new(unsafe {
                    std::slice::from_raw_parts_mut(base.as_ptr().add(frame * page_size), page_size)
                })
            })
            .collect();
        (frames, Prefetcher { base, len, page_size })
    }
}

/// One frame's page bytes: a slice of the pool's [`FrameMemory`].
///
/// Not `Clone`, not constructible outside this module: each value is the one handle on
/// its range, and the pool keeps it inside the frame's `RwLock`, so shared and exclusive
/// access follow that lock exactly as they would for an owned `Box<[u8]>`.
///
/// One word: the slice's start, which is aligned to 4 KiB (the mapping is, and a page
/// is a multiple of it), with the base-2 logarithm of its length in the low bits. So a
/// frame's bookkeeping keeps to one cache line (`pool/mod.rs`).
#[derive(Debug)]
pub struct FrameBytes {
    tagged: NonNull<u8>,
}

/// Low bits of [`FrameBytes::tagged`] that hold the length's logarithm.
const LENGTH_BITS: usize = 0xfff;

impl FrameBytes {
    /// The handle on `chunk`, a power-of-two slice starting 4 KiB-aligned.
    fn new(chunk: &mut [u8]) -> Self {
        let len = chunk.len();
        let start = NonNull::from(chunk).cast::<u8>();
        assert!(len.is_power_of_two() && start.as_ptr().addr() & LENGTH_BITS == 0, "frames are aligned powers of two");
        FrameBytes { tagged: start.map_addr(|addr| addr | len.trailing_zeros() as usize) }
    }

    #[inline(always)]
    fn start(&self) -> *mut u8 {
        self.tagged.as_ptr().map_addr(|addr| addr & !LENGTH_BITS)
    }

    #[inline(always)]
    fn len(&self) -> usize {
        1 << (self.tagged.as_ptr().addr() & LENGTH_BITS)
    }
}

// SAFETY: a `FrameBytes` is a unique handle on a range of memory that no other value
// aliases (ranges are disjoint, see `FrameMemory::cut`), exactly like a `Box<[u8]>`;
// sending it to or sharing it with another thread gives that thread no more than a
// `Box<[u8]>` would: `&` hands out `&[u8]`, `&mut` hands out `&mut [u8]`.
unsafe impl Send for FrameBytes {}
// SAFETY: as for `Send`: `&FrameBytes` only yields `&[u8]`.
unsafe impl Sync for FrameBytes {}

impl std::ops::Deref for FrameBytes {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        // SAFETY: `start..start + len` lies inside the pool's mapping, which lives as long
        // as the pool that owns this value (the pool's frames are dropped before its
        // memory, and every guard on a frame borrows the pool); the range is this
        // value's alone, and `&self` excludes a concurrent `&mut`.
        unsafe { std::slice::from_raw_parts(self.start(), self.len()) }
    }
}

impl std::ops::DerefMut for FrameBytes {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`; `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.start(), self.len()) }
    }
}

/// Asks the CPU to bring bytes of a frame into its caches, without reading them: a
/// hint for a page a query will read next (`Pool::prefetch`), so that its cache
/// misses overlap the work on the current page instead of following it.
///
/// Holds only the mapping's address, never a reference to its bytes: a prefetch
/// neither reads nor writes memory, so it may name a frame another thread is writing.
/// It also gives the bytes of a frame to a caller that proves no one writes them
/// while it reads ([`Prefetcher::unlocked`]).
#[derive(Debug)]
pub struct Prefetcher {
    base: NonNull<u8>,
    len: usize,
    page_size: usize,
}

// SAFETY: the address is only ever passed to the prefetch instruction, which does not
// access memory (see `Prefetcher::prefetch`); any thread may do that.
unsafe impl Send for Prefetcher {}
// SAFETY: as for `Send`.
unsafe impl Sync for Prefetcher {}

/// Bytes of one cache line.
const LINE: usize = 64;

impl Prefetcher {
    /// Prefetches the first `LINES` cache lines of frame `frame` (< the frame count).
    #[inline(always)]
    pub fn prefetch_head<const LINES: usize>(&self, frame: usize) {
        let base = self.base.as_ptr().wrapping_add(frame.wrapping_mul(self.page_size));
        for line in 0..LINES {
            prefetch_line(base.wrapping_add(line * LINE));
        }
    }

    /// The bytes of frame `frame` (< the frame count), read without its lock.
    ///
    /// # Safety
    ///
    /// Nothing may write the frame's bytes, nor hold them through its lock for writing,
    /// while the returned slice lives: the pool's grace periods (`grace.rs`) keep a frame
    /// a reader validated from being written before that reader has moved on.
    #[inline(always)]
    pub unsafe fn unlocked(&self, frame: usize) -> &[u8] {
        debug_assert!((frame + 1) * self.page_size <= self.len);
        // SAFETY: in the mapping (the caller's bound); no writer, by the caller's contract.
        unsafe { std::slice::from_raw_parts(self.base.as_ptr().add(frame * self.page_size), self.page_size) }
    }

    /// Prefetches bytes `range` of frame `frame` (clamped to the frame), one cache line
    /// at a time, into all cache levels.
    #[inline]
    pub fn prefetch(&self, frame: usize, range: std::ops::Range<usize>) {
        let start = frame.saturating_mul(self.page_size).saturating_add(range.start.min(self.page_size));
        let end = frame.saturating_mul(self.page_size).saturating_add(range.end.min(self.page_size));
        let mut at = start - start % LINE;
        while at < end.min(self.len) {
            prefetch_line(self.base.as_ptr().wrapping_add(at));
            at += LINE;
        }
    }
}

/// Asks the CPU to bring the cache lines of `bytes` into its caches: a hint that reads
/// nothing, for bytes a search will touch after a dependent load (a node's slot array
/// once its entry count is known, a cell once its slot is read), so that their misses
/// overlap the work in between.
#[inline]
pub fn prefetch_bytes(bytes: &[u8]) {
    let Some(last) = bytes.len().checked_sub(1) else { return };
    let mut at = 0;
    while at < last {
        prefetch_line(bytes.as_ptr().wrapping_add(at));
        at += LINE;
    }
    prefetch_line(bytes.as_ptr().wrapping_add(last));
}

/// Asks the CPU for the cache line holding `address`; any address (it is never read).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn prefetch_line(address: *const u8) {
    use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
    // SAFETY: `prefetch` is a hint that never faults and neither reads nor writes
    // memory as the program sees it, whatever the address; SSE, which it needs, is part
    // of x86-64.
    unsafe { _mm_prefetch::<_MM_HINT_T0>(address.cast()) }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(crate) fn prefetch_line(_address: *const u8) {}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    #[test]
    fn slices_are_disjoint_zeroed_and_writable() {
        // Proves each frame's slice has its own bytes: writing one leaves the others.
        let mut memory = FrameMemory::new(4096, 8, false).unwrap();
        let (mut slices, _) = memory.cut(4096);
        assert_eq!(slices.len(), 8);
        assert!(slices.iter().all(|bytes| bytes.len() == 4096 && bytes.iter().all(|&b| b == 0)));
        for (index, bytes) in slices.iter_mut().enumerate() {
            bytes.fill(index as u8 + 1);
        }
        for (index, bytes) in slices.iter().enumerate() {
            assert!(bytes.iter().all(|&b| b == index as u8 + 1), "frame {index}");
        }
    }

    #[test]
    fn prefetching_any_range_leaves_every_frame_as_it_was() {
        // A hint only: in range, past a frame's end or past the last frame, nothing changes.
        let mut memory = FrameMemory::new(4096, 4, true).unwrap();
        let (mut slices, prefetcher) = memory.cut(4096);
        slices[1].fill(7);
        for (frame, range) in [(0, 0..4096), (1, 100..300), (3, 4000..9000), (4, 0..64), (usize::MAX, 0..usize::MAX)] {
            prefetcher.prefetch(frame, range);
        }
        assert!(slices[1].iter().all(|&b| b == 7) && slices[0].iter().all(|&b| b == 0));
    }

    #[test]
    fn a_pool_far_larger_than_memory_maps_without_reserving_it() {
        // 64 GiB of frames: mapped, never touched, so it costs nothing (MAP_NORESERVE).
        let memory = FrameMemory::new(8192, 8 << 20, false).unwrap();
        drop(memory);
    }

    /// Field `field` (e.g. `"VmFlags"`, `"Rss"`) of the mapping that starts at `start`,
    /// from `/proc/self/smaps`.
    #[cfg(target_os = "linux")]
    fn smaps_field(start: usize, field: &str) -> String {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut lines = smaps.lines().skip_while(|line| {
            let range = line.split_whitespace().next().unwrap_or("");
            usize::from_str_radix(range.split('-').next().unwrap_or(""), 16).ok() != Some(start)
        });
        let field = lines.find_map(|line| line.strip_prefix(field)?.strip_prefix(':'));
        field.expect("the mapping and its field are listed").trim().to_string()
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn huge_pages_are_asked_for_only_when_wanted() {
        // The advice shows as the mapping's `hg` flag; without it the pool stays on small
        // pages (see the module docs).
        for wanted in [false, true] {
            let mut memory = FrameMemory::new(8192, 1024, wanted).unwrap();
            let start = memory.cut(8192).0[0].start().addr();
            let flags = smaps_field(start, "VmFlags");
            assert_eq!(flags.split_whitespace().any(|flag| flag == "hg"), wanted, "huge pages {wanted}: {flags}");
        }
    }
}
