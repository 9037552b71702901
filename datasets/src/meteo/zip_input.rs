//! Zip archives as loader input (the downloads of DWD, ECA&D and KNMI come as `.zip`):
//! the archive's data files (`files.rs`'s extensions), or those whose names match a
//! pattern (`--member 'produkt_*'`), each one input, in name order.
//!
//! A member is read straight from the archive file: its compressed bytes (from the
//! central directory's offset) through `flate2`'s raw deflate decoder, or as they are
//! when stored, and checked against its CRC-32 and size at its end. So a member is
//! streamed, never held in memory, and the file is opened only when the load reaches
//! the member ([`Lazy`]): an archive of ten thousand series needs one descriptor at a
//! time. Other compression methods (bzip2, LZMA, …) are refused by name.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Whether `path` names a zip archive.
pub fn is_zip(path: &Path) -> bool {
    path.extension().is_some_and(|extension| extension.eq_ignore_ascii_case("zip"))
}

/// One member of an archive, as its central directory describes it.
#[derive(Debug, Clone)]
pub struct Member {
    /// The archive.
    pub archive: PathBuf,
    /// The member's name in the archive.
    pub name: String,
    start: u64,
    compressed: u64,
    size: u64,
    crc: u32,
    deflated: bool,
}

/// A `--member` pattern for the data members of an archive whose members' names start
/// differently (DWD's `produkt_*` beside `Metadaten_*`): the start of the largest
/// member's name, up to its first `_`, `-`, `.` or digit, then `*`. `None` when every
/// member's name starts alike, or the start would be empty.
pub fn data_member_pattern(members: &[Member]) -> Option<String> {
    let start = |name: &str| {
        let base = Path::new(name).file_name().map_or(name.to_owned(), |base| base.to_string_lossy().into_owned());
        base.split(|c: char| c == '_' || c == '-' || c == '.' || c.is_ascii_digit()).next().unwrap_or("").to_owned()
    };
    let largest = members.iter().max_by_key(|member| member.size)?;
    let prefix = start(&largest.name);
    let mixed = members.iter().any(|member| start(&member.name) != prefix);
    (mixed && !prefix.is_empty()).then(|| format!("{prefix}*"))
}

/// The members of the archive at `path` to load, in name order: those whose name
/// matches `pattern` (a glob on the name without its folder), else its data files.
/// An error for a damaged archive, a member compressed other than by deflate, or
/// nothing to load.
pub fn members(path: &Path, pattern: Option<&str>) -> Result<Vec<Member>> {
    let damaged = |error: zip::result::ZipError| {
        Error::Argument(format!("{}: not a readable zip archive: {error}", path.display()))
    };
    let pattern = pattern
        .map(glob::Pattern::new)
        .transpose()
        .map_err(|error| Error::Argument(format!("bad --member pattern: {error}")))?;
    let mut archive = zip::ZipArchive::new(File::open(path)?).map_err(damaged)?;
    let mut found = Vec::new();
    for index in 0..archive.len() {
        let entry = archive.by_index_raw(index).map_err(damaged)?;
        let name = entry.name().map_err(damaged)?.into_owned();
        let base = Path::new(&name).file_name().map(|base| base.to_string_lossy().into_owned()).unwrap_or_default();
        let wanted = match &pattern {
            Some(pattern) => pattern.matches(&base),
            None => super::files::is_data_file(Path::new(&base)),
        };
        if entry.is_dir() || !wanted {
            continue;
        }
        let deflated = match entry.compression() {
            zip::CompressionMethod::Stored => false,
            zip::CompressionMethod::Deflated => true,
            other => {
                let message = format!("{}: member {name} is compressed with {other}; unzip it first", path.display());
                return Err(Error::Argument(message));
            }
        };
        let start = entry
            .data_start()
            .ok_or_else(|| damaged(zip::result::ZipError::InvalidArchive("no data offset".into())))?;
        let (compressed, size, crc) = (entry.compressed_size(), entry.size(), entry.crc32());
        found.push(Member { archive: path.to_owned(), name, start, compressed, size, crc, deflated });
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    if found.is_empty() {
        let wanted =
            pattern.map_or_else(|| "no data file".to_owned(), |p| format!("no member named like {}", p.as_str()));
        return Err(Error::Argument(format!("{} holds {wanted}", path.display())));
    }
    Ok(found)
}

impl Member {
    /// The member's compressed size (what reading it reads of the archive).
    pub fn compressed_size(&self) -> u64 {
        self.compressed
    }

    /// The member's bytes, read from `file` (the archive, opened) and checked at the end.
    pub fn reader(&self, mut file: File, wrap: impl FnOnce(File) -> Box<dyn Read>) -> std::io::Result<Box<dyn Read>> {
        file.seek(SeekFrom::Start(self.start))?;
        let raw = wrap(file).take(self.compressed);
        let bytes: Box<dyn Read> = match self.deflated {
            true => Box::new(flate2::read::DeflateDecoder::new(raw)),
            false => Box::new(raw),
        };
        Ok(Box::new(Checked { inner: bytes, hasher: crc32fast::Hasher::new(), seen: 0, member: self.clone() }))
    }
}

/// A member's bytes, checked against its CRC-32 and size when they end.
struct Checked {
    inner: Box<dyn Read>,
    hasher: crc32fast::Hasher,
    seen: u64,
    member: Member,
}

impl Read for Checked {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let read = self.inner.read(buffer)?;
        self.hasher.update(&buffer[..read]);
        self.seen += read as u64;
        if read == 0
            && !buffer.is_empty()
            && (self.hasher.clone().finalize() != self.member.crc || self.seen != self.member.size)
        {
            let (archive, name) = (self.member.archive.display(), &self.member.name);
            let message = format!("{archive}: member {name} is damaged (its CRC-32 or size does not match)");
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, message));
        }
        Ok(read)
    }
}

/// What makes a [`Lazy`] reader's inner one.
type Make = Box<dyn FnOnce() -> std::io::Result<Box<dyn Read>>>;

/// A reader made on its first read (a zip member's file opened only when the load
/// reaches it).
pub struct Lazy {
    make: Option<Make>,
    inner: Option<Box<dyn Read>>,
}

impl Lazy {
    /// A reader that `make` makes when it is first read.
    pub fn new(make: impl FnOnce() -> std::io::Result<Box<dyn Read>> + 'static) -> Self {
        Lazy { make: Some(Box::new(make)), inner: None }
    }
}

impl Read for Lazy {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        if let Some(make) = self.make.take() {
            self.inner = Some(make()?);
        }
        self.inner.as_mut().map_or(Ok(0), |inner| inner.read(buffer))
    }
}
