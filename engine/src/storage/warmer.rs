//! [`CacheWarmer`]: a thread that reads the chunk the file just grew by, so that the
//! kernel's page cache holds its pages before the commits that fill it write there.
//!
//! Why: a buffered write into a page of the file that the page cache does not hold
//! makes the kernel take a fresh page of memory and copy into it; on this project's
//! machine kind (a VM whose balloon hands free memory back to the host) that first
//! touch cost 1.3–6.3 s per GiB written, against 0.14 s into pages already cached
//! (`pwrite` of 1 GiB in 4 MiB calls into a preallocated file, with and without the
//! file read first). A load that grows the file — a bulk load, T2's sorted insert, a
//! queue's appends — paid it inside its commits: `perf` of 30 M sorted inserts put a
//! third of the CPU in `copy_folio_from_iter_atomic`. Reading a preallocated,
//! never-written range costs no disk I/O (the file system returns zeros) and moves that
//! first touch to this thread, ahead of the writer, as the pool's toucher does for the
//! frames (`pool/toucher.rs`).
//!
//! The reads are hints: their errors are ignored, and a page the writer reaches first
//! is written as before (a read racing a write of the same page reads either version
//! and discards it). The thread holds a duplicate of the file's descriptor, which shares
//! its lock, so dropping the warmer stops and joins it: once the storage is gone, the
//! file is unlocked.

use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::thread::JoinHandle;

/// Bytes read per call (the stop flag is checked between calls).
const READ_BYTES: usize = 1 << 20;

#[derive(Default)]
struct State {
    /// Ranges still to read, oldest first.
    ranges: VecDeque<Range<u64>>,
    stop: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

/// The warming thread of one open file (see the module docs).
pub struct CacheWarmer {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl CacheWarmer {
    /// Starts the thread over `file` (a duplicate of the storage's descriptor); `None`
    /// if no thread can be started (the file is then only not warmed).
    pub fn start(file: File) -> Option<CacheWarmer> {
        let shared = Arc::new(Shared::default());
        let theirs = Arc::clone(&shared);
        let thread =
            std::thread::Builder::new().name("quire-cache-warmer".into()).spawn(move || run(&theirs, &file)).ok()?;
        Some(CacheWarmer { shared, thread: Some(thread) })
    }

    /// Asks for `range` of the file to be read into the page cache.
    pub fn warm(&self, range: Range<u64>) {
        if range.is_empty() {
            return;
        }
        self.shared.state.lock().ranges.push_back(range);
        self.shared.wake.notify_one();
    }
}

/// The thread: reads each range asked for, a megabyte at a time, until stopped.
fn run(shared: &Shared, file: &File) {
    let mut buffer = vec![0u8; READ_BYTES];
    loop {
        let mut range = {
            let mut state = shared.state.lock();
            loop {
                if state.stop {
                    return;
                }
                if let Some(range) = state.ranges.pop_front() {
                    break range;
                }
                shared.wake.wait(&mut state);
            }
        };
        while !range.is_empty() {
            if shared.state.lock().stop {
                return;
            }
            let len = (range.end - range.start).min(READ_BYTES as u64) as usize;
            match file.read_at(&mut buffer[..len], range.start) {
                Ok(read) if read > 0 => range.start += read as u64,
                _ => break, // past the end (truncated meanwhile) or an error: a hint only
            }
        }
    }
}

impl Drop for CacheWarmer {
    fn drop(&mut self) {
        self.shared.state.lock().stop = true;
        self.shared.wake.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl std::fmt::Debug for CacheWarmer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CacheWarmer").finish_non_exhaustive()
    }
}
