//! `quire load-csv FILE --inspect`: prints what [`quiredb_datasets::meteo::inspect`]
//! finds at the start of the file (delimiter, decimal mark, encoding, preamble, header,
//! column kinds, layout) and the exact `quire load-csv` command line that loads it,
//! then checks that command's mapping on the same start. Never writes.

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use quiredb_datasets::meteo::inspect::{ColumnKind, Inspection, inspect};
use quiredb_datasets::meteo::sniff::{Joined, utf16_bom, utf16_text};
use quiredb_datasets::meteo::{Delimiter, Schema, TextEncoding};

use super::load_schema::MappingArgs;

/// Bytes of the file looked at.
const INSPECT_BYTES: u64 = 64 * 1024;

/// Runs the inspection of `input` (the file `path`, decompressed).
pub fn run(path: &Path, input: Box<dyn Read>, schema: &Schema, mapping: &MappingArgs) -> Result<ExitCode> {
    let mut start = Vec::new();
    input.take(INSPECT_BYTES + 1).read_to_end(&mut start)?;
    let complete = start.len() as u64 <= INSPECT_BYTES;
    if utf16_bom(&start).is_none()
        && schema.encoding == TextEncoding::Auto
        && let Some(what) = binary_kind(&start)
    {
        anyhow::bail!(
            "{} is {what}, not a text table: --inspect reads CSV and other delimited or aligned text, \
             spreadsheets, zip archives of them and, with the parquet feature, Parquet files",
            path.display()
        );
    }
    let (found, encoding) = match utf16_bom(&start) {
        Some(utf16) => {
            let text = utf16_text(&start, utf16);
            (inspect(text.as_bytes(), complete, schema), format!("{}, with a BOM", utf16.name()))
        }
        None => {
            let bom = start.starts_with(b"\xEF\xBB\xBF");
            let found = inspect(&start[if bom { 3 } else { 0 }..], complete, schema);
            let name = match found.sniffed.encoding.name() {
                "UTF-8" => "UTF-8".to_owned(),
                other if schema.encoding == TextEncoding::Auto => format!("not UTF-8: read as {other} (a guess)"),
                other => other.to_owned(),
            };
            (found, format!("{name}{}", if bom { ", with a BOM" } else { "" }))
        }
    };
    if quiredb_datasets::meteo::zip_input::is_zip(path) {
        let members = quiredb_datasets::meteo::zip_input::members(path, mapping.member.as_deref())?;
        let names: Vec<&str> = members.iter().map(|member| member.name.as_str()).collect();
        outln!("archive:       {} member(s) to load, the first inspected: {}", names.len(), names.join(", "))?;
        match &mapping.member {
            Some(pattern) => outln!("               (--member {pattern}; another PATTERN chooses others)")?,
            None => outln!("               (--member PATTERN chooses which, e.g. 'produkt_*')")?,
        }
    }
    print_layout(&found, &encoding)?;
    let command = command_line(path, &found, mapping);
    let missing = missing_parts(&found);
    if missing.is_empty() {
        outln!("\nload it with:\n  {command}")?;
    } else {
        outln!()?;
        for part in &missing {
            outln!("not found:     {part}")?;
        }
        outln!("\nload it with (the words in capitals are yours to fill in):\n  {command}")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What the start of a file that is no text is, if it says so: the magic numbers of the
/// binary formats weather data also comes in (gridded NetCDF, HDF5, GRIB), of
/// compressions the loader does not undo, or else a NUL byte, which no text table in a
/// single-byte or UTF-8 encoding holds.
fn binary_kind(start: &[u8]) -> Option<String> {
    const MAGIC: [(&[u8], &str); 7] = [
        (b"CDF\x01", "a NetCDF file"),
        (b"CDF\x02", "a NetCDF file"),
        (b"CDF\x05", "a NetCDF file"),
        (b"\x89HDF\r\n\x1a\n", "an HDF5 (or NetCDF-4) file"),
        (b"GRIB", "a GRIB file"),
        (b"BZh", "compressed with bzip2 (decompress it first)"),
        (b"\xFD7zXZ\x00", "compressed with xz (decompress it first)"),
    ];
    if let Some((_, what)) = MAGIC.iter().find(|(magic, _)| start.starts_with(magic)) {
        return Some((*what).to_owned());
    }
    let at = start.iter().position(|&byte| byte == 0)?;
    Some(format!("binary data (a NUL byte at byte {at})"))
}

/// `mapping`, with `--member` set to the data members' pattern when `path` is an
/// archive whose members' names start differently and no `--member` was given (DWD's
/// `produkt_*` beside its `Metadaten_*` files): the largest member is the data.
pub fn with_data_member(path: &Path, mapping: &MappingArgs) -> Result<MappingArgs> {
    use quiredb_datasets::meteo::zip_input;
    let mut mapping = mapping.clone();
    if mapping.member.is_none() && zip_input::is_zip(path) {
        mapping.member = zip_input::data_member_pattern(&zip_input::members(path, None)?);
    }
    Ok(mapping)
}

/// What the guess could not find, said as the flag the user must give: no time
/// column (a long or variable-column file's default would read the second column as
/// Unix seconds), or no measure.
fn missing_parts(found: &Inspection) -> Vec<&'static str> {
    let given = |flag: &str| found.flags.iter().any(|(name, value)| name == flag && value.as_deref() != Some(""));
    let mut missing = Vec::new();
    if !found.layout.starts_with("wide") && !given("--time") {
        missing.push("a time column: --time COLUMN[,COLUMN…] (with --time-format when it is no ISO 8601 time)");
    }
    if !found.layout.starts_with("wide") && !given("--measures") {
        missing.push("a measure column: --measures COLUMN,…");
    }
    missing
}

fn print_layout(found: &Inspection, encoding: &str) -> std::io::Result<()> {
    let sniffed = &found.sniffed;
    let delimiter = match sniffed.delimiter {
        Delimiter::Byte(b'\t') => "tab".to_owned(),
        Delimiter::Byte(byte) => format!("{:?}", char::from(byte)),
        _ => "runs of whitespace (aligned columns)".to_owned(),
    };
    let decimal = match (sniffed.delimiter == Delimiter::Byte(b','), sniffed.decimal_comma) {
        (true, true) => "comma (in quoted fields: \"12,5\")",
        (true, false) => "point",
        (false, _) => "point or comma",
    };
    outln!("delimiter:     {delimiter}; decimal mark: {decimal}")?;
    outln!("encoding:      {encoding}")?;
    outln!("preamble:      {} line(s)", sniffed.preamble_lines)?;
    for (number, fields) in sniffed.preamble.iter().enumerate() {
        outln!("  {}: {}", number + 1, fields.join(" | "))?;
    }
    let header = match (sniffed.header, sniffed.header_in_preamble, sniffed.names_joined) {
        (true, true, _) => "yes (the preamble's last comment line, after its #)",
        (true, false, Joined::WithLineAbove) => "yes (line {}, its names begun on the line above)",
        (true, false, Joined::WithLineBelow) => "yes (line {}, its names ended on the line below)",
        (true, false, Joined::No) => "yes (line {})",
        (false, ..) => "no (line {} is data)",
    };
    outln!("header:        {}", header.replace("{}", &(sniffed.preamble_lines + 1).to_string()))?;
    if sniffed.units_rows > 0 {
        outln!("units rows:    {} under the header, skipped", sniffed.units_rows)?;
    }
    outln!("body:          {} fields a row; layout {}", sniffed.body_fields, found.layout)?;
    outln!("columns:")?;
    for (index, column) in found.columns.iter().enumerate() {
        outln!("  {index:>3}  {:<28} {}", column.name, kind_name(&column.kind))?;
    }
    for note in &found.notes {
        outln!("note:          {note}")?;
    }
    Ok(())
}

fn kind_name(kind: &ColumnKind) -> String {
    match kind {
        ColumnKind::Empty => "empty".into(),
        ColumnKind::Integer => "integer".into(),
        ColumnKind::Number => "number".into(),
        ColumnKind::Timestamp => "timestamp (ISO 8601)".into(),
        ColumnKind::Date(format) => format!("date {format}"),
        ColumnKind::TimeOfDay(format) => format!("time of day {format}"),
        ColumnKind::Flagged { suffixes, words } => {
            let mut seen: Vec<String> = suffixes.chars().map(|flag| format!("a number then {flag}")).collect();
            seen.extend(words.iter().map(|word| format!("{word:?}")));
            format!("number; also {}", seen.join(", "))
        }
        ColumnKind::Text => "text".into(),
    }
}

/// `quire load-csv PATH --db STEM.quire FLAGS…`, each argument shell-quoted; flags the
/// user gave that the guess lacks are kept.
fn command_line(path: &Path, found: &Inspection, mapping: &MappingArgs) -> String {
    let db = format!("{}.quire", quiredb_datasets::meteo::StationSpec::file_stem(&path.display().to_string()));
    let mut words =
        vec!["quire".to_owned(), "load-csv".into(), quote(&path.display().to_string()), "--db".into(), quote(&db)];
    for (flag, value) in &found.flags {
        words.push(flag.clone());
        words.extend(value.as_deref().map(|value| if value.is_empty() { "MEASURES".to_owned() } else { quote(value) }));
    }
    if !found.layout.starts_with("wide") && !found.flags.iter().any(|(flag, _)| flag == "--time") {
        words.extend(["--time".to_owned(), "TIME".to_owned()]);
    }
    if let Some(offset) = &mapping.utc_offset {
        words.extend(["--utc-offset".to_owned(), quote(offset)]);
    }
    if let Some(zone) = &mapping.time_zone {
        words.extend(["--time-zone".to_owned(), quote(zone)]);
    }
    if let Some(member) = &mapping.member {
        words.extend(["--member".to_owned(), quote(member)]);
    }
    words.join(" ")
}

/// `text` as one shell word.
fn quote(text: &str) -> String {
    let plain = !text.is_empty() && text.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.,/:+=@".contains(&b));
    if plain { text.to_owned() } else { format!("'{}'", text.replace('\'', "'\\''")) }
}
