//! Small I/O adapters shared by `quire load-csv` and the Python package's `load_csv`:
//! a reader that counts the bytes read through it (for progress), a skip report file
//! created only at its first write, and [`releasing_page_cache`], which keeps the
//! database file's page cache small while a load runs.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::Duration;

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

/// The inputs of a load: each with the name its messages give it, the bytes read so far
/// (of the files as stored: compressed, or the archive's) and their total size.
pub struct Inputs {
    /// (name, text) of each input, in load order.
    pub files: Vec<(String, Box<dyn Read>)>,
    /// Bytes of the stored files read so far (for progress).
    pub read_bytes: Arc<AtomicU64>,
    /// The stored files' total size.
    pub total_bytes: u64,
}

/// Opens the inputs of `paths`: folders expanded to their data files, zip archives to
/// their data files or the members named like `member` (`archive.zip/member` in
/// messages; each opened when the load reaches it), compressed files decompressed,
/// spreadsheets (worksheet `sheet`) and Parquet files read as the CSV of their rows.
pub fn open_inputs(paths: &[PathBuf], sheet: Option<&str>, member: Option<&str>) -> anyhow::Result<Inputs> {
    use anyhow::Context;
    use quiredb_datasets::meteo::{files, zip_input};
    let read_bytes = Arc::new(AtomicU64::new(0));
    let (mut inputs, mut total_bytes) = (Vec::new(), 0);
    for path in files::expand(paths)? {
        if zip_input::is_zip(&path) {
            for part in zip_input::members(&path, member)? {
                total_bytes += part.compressed_size();
                let name = format!("{}/{}", path.display(), part.name);
                let (count, sheet) = (Arc::clone(&read_bytes), sheet.map(str::to_owned));
                let open = move || {
                    let file = File::open(&part.archive)?;
                    let bytes = part.reader(file, |file| Box::new(CountingReader::new(file, count)))?;
                    files::open_input(Path::new(&part.name), bytes, sheet.as_deref()).map_err(std::io::Error::other)
                };
                inputs.push((name, Box::new(zip_input::Lazy::new(open)) as Box<dyn Read>));
            }
            continue;
        }
        let file = File::open(&path).with_context(|| format!("cannot open {}", path.display()))?;
        total_bytes += file.metadata()?.len();
        // Spreadsheets and Parquet files are read from their path: no byte progress.
        let counting = CountingReader::new(file, Arc::clone(&read_bytes));
        inputs.push((path.display().to_string(), files::open_input(&path, counting, sheet)?));
    }
    Ok(Inputs { files: inputs, read_bytes, total_bytes })
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

/// Time between two releases of the page cache.
pub const RELEASE_EVERY: Duration = Duration::from_millis(250);

/// Runs `work` (a load into the database file at `path`) while a thread asks the
/// kernel every [`RELEASE_EVERY`], and once at the end, to write back the file's dirty
/// pages and drop its clean ones (`posix_fadvise(POSIX_FADV_DONTNEED)`, Linux only).
///
/// Why: a load writes every page once and never reads one back from the file (the
/// buffer pool holds what it reads); kept cached, those pages only take fresh memory
/// for the next ones, which on a VM that hands free memory back to its host costs a
/// host fault per page (5 M meteo rows: 4.67 s of CPU without, 3.78 s with). Best
/// effort: a file that cannot be opened is left alone; dropping a page never changes
/// what is read.
pub fn releasing_page_cache<T>(path: Option<&Path>, work: impl FnOnce() -> T) -> T {
    std::thread::scope(|scope| {
        let (stop, stopped) = channel::<()>();
        if let Some(file) = path.and_then(|path| File::open(path).ok()) {
            scope.spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(RELEASE_EVERY) {
                    release(&file);
                }
                release(&file);
            });
        }
        let result = work();
        drop(stop);
        result
    })
}

/// Starts the write-back of `file`'s dirty pages and drops its clean ones.
fn release(file: &File) {
    #[cfg(target_os = "linux")]
    let _ = rustix::fs::fadvise(file, 0, None, rustix::fs::Advice::DontNeed);
    #[cfg(not(target_os = "linux"))]
    let _ = file;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn released_files_read_back_the_same() {
        // Proves: releasing never changes a file's contents, the work's result comes
        // back, and a missing file or none is no error.
        let dir = tempfile::tempdir().expect("tmp dir");
        let path = dir.path().join("f");
        let bytes: Vec<u8> = (0..1 << 20).map(|i| (i * 7 % 251) as u8).collect();
        File::create(&path).and_then(|mut f| f.write_all(&bytes)).expect("write");
        let answer = releasing_page_cache(Some(&path), || {
            std::thread::sleep(RELEASE_EVERY * 2);
            42
        });
        assert_eq!(answer, 42);
        assert_eq!(releasing_page_cache(Some(&dir.path().join("missing")), || 1), 1);
        assert_eq!(releasing_page_cache(None, || 2), 2);
        let mut back = Vec::new();
        File::open(&path).and_then(|mut f| f.read_to_end(&mut back)).expect("read");
        assert_eq!(back, bytes);
    }
}
