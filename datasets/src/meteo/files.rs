//! The files of a load: folders expanded to their data files (in name order) and
//! compressed files opened through a decoder (`.gz` with `flate2`, `.zst` with
//! `zstd`), so `quire load-csv` takes what an archive download leaves.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Extensions of the data files taken from a folder (before `.gz` / `.zst`).
pub const DATA_EXTENSIONS: [&str; 6] = ["csv", "txt", "dat", "tsv", "asc", "dly"];

/// `paths` with each folder replaced by its data files (see [`DATA_EXTENSIONS`]; also
/// `.gz`/`.zst` files with no other extension, and spreadsheets), in name order; an error for a path that does not exist or a folder with no data file.
pub fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        if !path.is_dir() {
            if !path.exists() {
                return Err(Error::Argument(format!("{} does not exist", path.display())));
            }
            files.push(path.clone());
            continue;
        }
        let mut found: Vec<PathBuf> =
            std::fs::read_dir(path)?.map(|entry| entry.map(|entry| entry.path())).collect::<std::io::Result<_>>()?;
        found.retain(|file| file.is_file() && (is_data_file(file) || is_sheet_file(file)));
        if found.is_empty() {
            return Err(Error::Argument(format!(
                "{} holds no data file ({}, {})",
                path.display(),
                DATA_EXTENSIONS.join(", "),
                super::sheet_input::SHEET_EXTENSIONS.join(", ")
            )));
        }
        found.sort();
        files.extend(found);
    }
    Ok(files)
}

/// A data file: a name ending in one of [`DATA_EXTENSIONS`], perhaps compressed; or a
/// compressed file whose name has no other extension (ISD-Lite's `010010-99999-2019.gz`).
pub(crate) fn is_data_file(path: &Path) -> bool {
    let name = path.file_name().map(|name| name.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    let stem = name.strip_suffix(".gz").or_else(|| name.strip_suffix(".zst"));
    if stem.is_some_and(|stem| !stem.is_empty() && !stem.contains('.')) {
        return true;
    }
    let name = stem.unwrap_or(&name);
    DATA_EXTENSIONS.iter().any(|extension| name.ends_with(&format!(".{extension}")))
}

/// A spreadsheet, but not the lock file a spreadsheet program leaves beside an open one
/// (`~$book.xlsx`).
fn is_sheet_file(path: &Path) -> bool {
    let lock = path.file_name().is_some_and(|name| name.to_string_lossy().starts_with("~$"));
    super::sheet_input::is_spreadsheet(path) && !lock
}

/// The text of the input file `path` whose bytes `input` reads: a spreadsheet's
/// worksheet `sheet` (see `sheet_input.rs`) or, with the feature `parquet`, a Parquet
/// file, read as the CSV of their rows (from `path`: `input` is not read); a GHCN-Daily
/// `.dly` file, or a file whose first line has GHCN's fixed-width form, [`decompressed`]
/// and read as the CSV of a by-year file (`dly_input.rs`); NOAA's Global Hourly CSV
/// (a header `STATION,DATE,…` with packed `TMP`, `WND`, …) with its packed fields as
/// plain numbers (`isd_input.rs`); any other file's bytes [`decompressed`].
pub fn open_input<'a>(path: &Path, input: impl Read + 'a, sheet: Option<&str>) -> Result<Box<dyn Read + 'a>> {
    if super::sheet_input::is_spreadsheet(path) {
        return super::sheet_input::csv_stream(path, sheet);
    }
    #[cfg(feature = "parquet")]
    if super::parquet_input::is_parquet(path) {
        return super::parquet_input::csv_stream(path);
    }
    let mut input = decompressed(path, input)?;
    if super::dly_input::is_dly(path) {
        return Ok(super::dly_input::csv_stream(super::dly_input::Form::Daily, input));
    }
    let first = first_line(&mut input)?;
    let (form, hourly) = (super::dly_input::sniff(&first), super::isd_input::sniff(&first));
    let input = std::io::Cursor::new(first).chain(input);
    Ok(match form {
        Some(form) => super::dly_input::csv_stream(form, input),
        None if hourly => super::isd_input::csv_stream(input),
        None => Box::new(input),
    })
}

/// The first line of `input` (with its line end), or its first 512 bytes if longer.
fn first_line(input: &mut impl Read) -> Result<Vec<u8>> {
    let mut first = Vec::new();
    let mut byte = [0u8; 1];
    while first.len() < 512 && !first.ends_with(b"\n") && input.read(&mut byte)? == 1 {
        first.push(byte[0]);
    }
    Ok(first)
}

/// `input` (the bytes of the file `path`) decompressed by its extension.
pub fn decompressed<'a>(path: &Path, input: impl Read + 'a) -> Result<Box<dyn Read + 'a>> {
    match path.extension().and_then(|extension| extension.to_str()) {
        Some("gz") => Ok(Box::new(flate2::read::MultiGzDecoder::new(input))),
        Some("zst") => {
            let mut decoder = zstd::Decoder::new(input)?;
            decoder.window_log_max(31)?;
            Ok(Box::new(decoder))
        }
        _ => Ok(Box::new(input)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file is read as GHCN's fixed-width form when its first line has it, whatever
    /// its name; other files come through byte for byte.
    #[test]
    fn ghcn_fixed_width_files_are_known_by_their_first_line() {
        let monthly = format!("ACW00011604{}TAVG{}\n", 1961, " -142  k".repeat(12));
        let read = |name: &str, bytes: &[u8]| {
            let mut text = String::new();
            open_input(Path::new(name), bytes, None).unwrap().read_to_string(&mut text).unwrap();
            text
        };
        assert!(read("ghcnm.tavg.v4.qcu.dat", monthly.as_bytes()).starts_with("ACW00011604,19610101,TAVG,-142,,,k,\n"));
        for other in ["station,date,t\nA,2020-01-01,1\n", "x", ""] {
            assert_eq!(read("a.dat", other.as_bytes()), other);
        }
    }

    /// Data files by extension, compressed or not, and compressed files without another
    /// extension (ISD-Lite downloads); not other files.
    #[test]
    fn data_files_of_a_folder() {
        for taken in
            ["a.csv", "A.TXT", "b.csv.gz", "c.dat.zst", "010010-99999-2019.gz", "725030-14732-2020.zst", "d.dly"]
        {
            assert!(is_data_file(Path::new(taken)), "{taken}");
        }
        for left in ["README", "notes.md", "archive.tar.gz", "x.json.zst", ".gz", "010010-99999-2019"] {
            assert!(!is_data_file(Path::new(left)), "{left}");
        }
    }
}
