//! [`FileMap`]: a read-only memory map of the page file whose failed reads become
//! errors instead of killing the process.
//!
//! Reading a mapped page the kernel cannot fetch (a disk read error, or a page past an
//! end of file that another process cut) raises `SIGBUS` in the reading thread, and
//! the default action ends the process: LMDB lives with that. Here every live map is
//! listed in a fixed table, and a `SIGBUS` handler, installed with the first map and
//! chained to the one before it, looks the faulting address up. When a map holds it,
//! the handler maps a page of zeros over the OS page, notes the fault in the map's
//! entry and returns, so the faulting load completes (with zeros). Addresses no map
//! holds go to the previous handler, or to the default action.
//!
//! A reader therefore asks [`FileMap::faulted`] after it has read bytes from the map
//! and before it trusts them: once a map has faulted, its reads are retried with
//! `pread`, which reports the disk's error as an [`std::io::Error`]. A map that faulted
//! stays wrong at that OS page for good and is replaced ([`crate::core::Core`] maps the
//! file again). Pages that a reader uses more than once are touched, one load an OS
//! page, before each use ([`FileMap::touch`]), so the check covers them too.
//!
//! What remains unguarded: the kernel dropping a page between the touch and the use and
//! then failing to read it back. The reader then sees zeros in that OS page, as a
//! corrupt page; the next page read of any reader of that map falls back to `pread`.

use std::sync::Once;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Live maps the fault handler can tell apart; a map beyond them is not made (reads
/// then go through `pread`).
const SLOTS: usize = 64;

/// One live map's address range, and where it first faulted.
struct Slot {
    /// First mapped address; 0 while the slot is free.
    start: AtomicUsize,
    /// One past the last mapped address.
    end: AtomicUsize,
    /// Faults noted in the map (0 while none).
    faults: AtomicUsize,
}

static TABLE: [Slot; SLOTS] =
    [const { Slot { start: AtomicUsize::new(0), end: AtomicUsize::new(0), faults: AtomicUsize::new(0) } }; SLOTS];

/// Most OS pages [`FileMap::resident`] asks about at once.
const RESIDENT_PAGES: usize = 512;

/// The OS page size, read when the handler is installed.
static OS_PAGE: AtomicUsize = AtomicUsize::new(4096);

/// The `SIGBUS` action before ours, called for faults outside every map.
static PREVIOUS: std::sync::OnceLock<libc::sigaction> = std::sync::OnceLock::new();

static INSTALL: Once = Once::new();

/// A read-only memory map of the whole page file, listed for the fault handler.
#[derive(Debug)]
pub struct FileMap {
    map: memmap2::Mmap,
    /// The map's entry in the fault handler's table.
    slot: usize,
}

impl FileMap {
    /// Lists `map` for the fault handler, installing it first if needed. `None` when
    /// the table is full or the handler cannot be installed: the caller reads without
    /// a map.
    pub fn new(map: memmap2::Mmap) -> Option<FileMap> {
        if !install() {
            return None;
        }
        let start = map.as_ptr() as usize;
        let slot = TABLE
            .iter()
            .position(|slot| slot.start.compare_exchange(0, usize::MAX, Ordering::AcqRel, Ordering::Relaxed).is_ok())?;
        TABLE[slot].faults.store(0, Ordering::Relaxed);
        TABLE[slot].end.store(start + map.len(), Ordering::Release);
        TABLE[slot].start.store(start, Ordering::Release);
        Some(FileMap { map, slot })
    }

    /// Length of the map in bytes.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// The mapped bytes of `range`, `None` past the map's end. Check [`FileMap::faulted`]
    /// after reading them.
    pub fn get(&self, range: std::ops::Range<usize>) -> Option<&[u8]> {
        self.map.get(range)
    }

    /// The mapped bytes of page `range`, touched ([`FileMap::touch`]) so that a
    /// structure may read them as they are; `None` past the map's end or when the map
    /// has faulted (the caller reads with `pread`, which reports the disk's error).
    #[inline]
    pub fn page(&self, range: std::ops::Range<usize>) -> Option<&[u8]> {
        self.map.get(range).filter(|bytes| self.touch(bytes))
    }

    /// Whether every OS page of `range` (clipped to the map, and to [`RESIDENT_PAGES`]
    /// OS pages) is in the OS page cache now (`mincore`); true when the kernel cannot
    /// say. Touches nothing.
    pub fn resident(&self, range: std::ops::Range<usize>) -> bool {
        let step = OS_PAGE.load(Ordering::Relaxed);
        let start = range.start & !(step - 1);
        let end = range.end.min(self.map.len()).min(start + RESIDENT_PAGES * step);
        if start >= end {
            return true;
        }
        let mut pages = [0u8; RESIDENT_PAGES];
        let count = (end - start).div_ceil(step);
        // SAFETY: `start..end` lies inside this live map, and `start` is a multiple of
        // the OS page from the map's start, which is page-aligned, as mincore asks;
        // the kernel writes one byte for each of the `count` OS pages into `pages`,
        // which holds `RESIDENT_PAGES` >= `count` of them.
        let rc = unsafe {
            libc::mincore(self.map.as_ptr().add(start) as *mut libc::c_void, end - start, pages.as_mut_ptr())
        };
        rc != 0 || pages[..count].iter().all(|byte| byte & 1 == 1)
    }

    /// Whether a read of this map has faulted since it was made: its bytes may then be
    /// zeros where the file's are not, and reads must go through `pread` instead.
    pub fn faulted(&self) -> bool {
        // mutant: faults in the map go unnoticed, so their zeros are served as the page
        if cfg!(quire_mutant = "map_fault_unseen") {
            return false;
        }
        TABLE[self.slot].faults.load(Ordering::Acquire) != 0
    }

    /// Loads one byte of each OS page of `bytes` (a slice of this map), so that a page
    /// the kernel cannot read back faults now, before [`FileMap::faulted`] is asked,
    /// rather than while a structure reads it. Returns `!faulted()`.
    #[inline]
    fn touch(&self, bytes: &[u8]) -> bool {
        let step = OS_PAGE.load(Ordering::Relaxed);
        for at in (0..bytes.len()).step_by(step) {
            std::hint::black_box(bytes[at]);
        }
        !self.faulted()
    }
}

impl Drop for FileMap {
    fn drop(&mut self) {
        // Unlisted before `memmap2` unmaps it (fields drop after this body): no reader
        // holds the map any more, so no fault in it can be under way.
        TABLE[self.slot].start.store(0, Ordering::Release);
    }
}

/// Installs the `SIGBUS` handler once per process; false if that failed.
fn install() -> bool {
    // mutant: no handler, so a failed read of the map ends the process
    if cfg!(quire_mutant = "no_sigbus_handler") {
        return true;
    }
    INSTALL.call_once(|| {
        // SAFETY: sysconf reads a constant of the system.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if let Ok(page) = usize::try_from(page)
            && page.is_power_of_two()
        {
            OS_PAGE.store(page, Ordering::Relaxed);
        }
        // SAFETY: a zeroed sigaction is a valid value to fill in; the handler has the
        // three-argument signature SA_SIGINFO asks for and only does what is safe in a
        // signal handler (atomic loads and stores, mmap, sigaction, raise).
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, &action, &mut previous) == 0 {
                let _ = PREVIOUS.set(previous);
            }
        }
    });
    PREVIOUS.get().is_some()
}

/// The `SIGBUS` handler: a fault inside a listed map reads zeros and is noted; any
/// other goes on to the previous action.
extern "C" fn on_sigbus(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo_t to an SA_SIGINFO handler.
    let (code, address) = unsafe { ((*info).si_code, (*info).si_addr() as usize) };
    // A signal sent by a process (code <= 0) carries no fault address.
    for slot in TABLE.iter().filter(|_| code > 0) {
        let start = slot.start.load(Ordering::Acquire);
        if start == 0 || start == usize::MAX || address < start || address >= slot.end.load(Ordering::Acquire) {
            continue;
        }
        let page = address & !(OS_PAGE.load(Ordering::Relaxed) - 1);
        // SAFETY: the OS page lies inside a live map that a reader is reading (a map is
        // unlisted before it is unmapped, and not unmapped while borrowed): replacing
        // it with a private zero page changes no memory Rust owns.
        let zeros = unsafe {
            libc::mmap(
                page as *mut libc::c_void,
                OS_PAGE.load(Ordering::Relaxed),
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if zeros != libc::MAP_FAILED {
            slot.faults.fetch_add(1, Ordering::AcqRel);
            return;
        }
    }
    // SAFETY: as for the handler itself; see `chain`.
    unsafe { chain(signal, info, context) }
}

/// Passes a fault no map holds to the action that was in place before ours: its
/// handler, or the default action (the process ends with `SIGBUS`).
///
/// # Safety
///
/// Called only from the signal handler with the arguments it was given.
unsafe fn chain(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    let handler = PREVIOUS.get().map_or(libc::SIG_DFL, |previous| previous.sa_sigaction);
    let flags = PREVIOUS.get().map_or(0, |previous| previous.sa_flags);
    if handler != libc::SIG_DFL && handler != libc::SIG_IGN {
        // SAFETY: the previous action's handler, called as its flags say it expects.
        unsafe {
            if flags & libc::SA_SIGINFO != 0 {
                let call: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                    std::mem::transmute(handler);
                call(signal, info, context);
            } else {
                let call: extern "C" fn(libc::c_int) = std::mem::transmute(handler);
                call(signal);
            }
        }
        return;
    }
    // The default action: restore it and let the fault happen again (a hardware fault
    // re-executes the load), or raise the signal again if it was sent, not a fault.
    // SAFETY: sigaction and raise are async-signal-safe.
    unsafe {
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(libc::SIGBUS, &default, std::ptr::null_mut());
        if (*info).si_code <= 0 {
            libc::raise(signal);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn pages_just_written_are_resident() {
        // Proves `resident` asks about the range it is given, clipped to the map: the
        // pages of a file just written are in the page cache, and a range past the map's
        // end asks nothing (and says so).
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::File::create(&path).unwrap().write_all(&vec![7u8; 1 << 20]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        // SAFETY: the file is this test's own and no one changes it while it is mapped.
        let map = FileMap::new(unsafe { memmap2::Mmap::map(&file) }.unwrap()).expect("a map");
        assert!(map.resident(0..1 << 20));
        assert!(map.resident(4096 + 100..3 * 4096 + 1));
        assert!(map.resident(2 << 20..3 << 20), "past the end: nothing to ask");
    }
}
