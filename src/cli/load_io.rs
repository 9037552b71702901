//! Small I/O adapters shared by `quire load-csv` and the Python package's `load_csv`:
//! a reader that counts the bytes read through it (for progress), and a skip report
//! file created only at its first write.

use std::fs::File;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Counts the bytes read through it into a shared counter (for a progress bar or
/// callback over compressed input).
pub struct CountingReader<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R> CountingReader<R> {
    /// Reads from `inner`, adding what it reads to `count`.
    pub fn new(inner: R, count: Arc<AtomicU64>) -> Self {
        CountingReader { inner, count }
    }
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let read = self.inner.read(buffer)?;
        self.count.fetch_add(read as u64, Ordering::Relaxed);
        Ok(read)
    }
}

/// A file created on the first write (so a clean load leaves no empty skip report).
pub struct LazyFile {
    path: PathBuf,
    file: Option<File>,
}

impl LazyFile {
    /// The file at `path`, not created yet.
    pub fn new(path: PathBuf) -> Self {
        LazyFile { path, file: None }
    }
}

impl Write for LazyFile {
    fn write(&mut self, buffer: &[u8]) -> std::io::Result<usize> {
        let file = match &mut self.file {
            Some(file) => file,
            None => self.file.insert(File::create(&self.path)?),
        };
        file.write(buffer)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.as_mut().map_or(Ok(()), Write::flush)
    }
}
