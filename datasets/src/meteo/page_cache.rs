//! Keeps the database file's page cache small during a load: a thread asks the kernel
//! every [`RELEASE_EVERY`] to write back the file's dirty pages and to drop the clean
//! ones (`posix_fadvise(POSIX_FADV_DONTNEED)`, which does both, over the whole file).
//!
//! Why: a load writes every page once (a full meteo load: 7 GB) and never reads one back
//! from the file while it runs (the buffer pool holds what the transaction reads). Kept
//! cached, those pages only take fresh memory for the next ones; dropped, they are
//! reused at once. On this project's VM, which hands free memory back to its host,
//! touching memory that stayed free for a few seconds costs a host fault: writing 1 GiB
//! took 1.19 s of system time on such memory and 0.22 s on just-freed memory. Meteo
//! load of 5 M rows on cold memory: 4.67 s of CPU without, 4.12 / 3.78 s with the file
//! dropped every 0.5 s.
//!
//! Best effort: a file that cannot be opened or advised is left alone. Dropping a page
//! never changes what is read (a dropped page is read again from the disk).

use std::fs::File;
use std::path::Path;
use std::sync::mpsc::{RecvTimeoutError, Sender, channel};
use std::time::Duration;

/// Time between two releases.
pub const RELEASE_EVERY: Duration = Duration::from_millis(250);

/// Releases the page cache of `path` every [`RELEASE_EVERY`] on a scoped thread until
/// the returned sender is dropped (or the scope ends).
pub fn spawn_releaser<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    path: Option<&Path>,
) -> Sender<()> {
    let (stop, stopped) = channel::<()>();
    if let Some(file) = path.and_then(|path| File::open(path).ok()) {
        scope.spawn(move || {
            while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(RELEASE_EVERY) {
                release(&file);
            }
            release(&file);
        });
    }
    stop
}

/// Starts the write-back of `file`'s dirty pages and drops its clean ones.
pub fn release(file: &File) {
    #[cfg(target_os = "linux")]
    let _ = rustix::fs::fadvise(file, 0, None, rustix::fs::Advice::DontNeed);
    #[cfg(not(target_os = "linux"))]
    let _ = file;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// Releasing never changes the file's contents, and a missing file is no error.
    #[test]
    fn released_files_read_back_the_same() {
        let dir = tempfile::tempdir().expect("tmp dir");
        let path = dir.path().join("f");
        let bytes: Vec<u8> = (0..1 << 20).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::File::create(&path).and_then(|mut f| f.write_all(&bytes)).expect("write");
        std::thread::scope(|scope| {
            let stop = spawn_releaser(scope, Some(&path));
            std::thread::sleep(RELEASE_EVERY * 2);
            drop(stop);
            drop(spawn_releaser(scope, Some(&dir.path().join("missing"))));
            drop(spawn_releaser(scope, None));
        });
        let mut back = Vec::new();
        File::open(&path).and_then(|mut f| f.read_to_end(&mut back)).expect("read");
        assert_eq!(back, bytes);
    }
}
