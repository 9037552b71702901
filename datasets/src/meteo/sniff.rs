//! Layout detection on the first bytes of an input (at most `reader.rs`'s peek): the
//! delimiter, the preamble, whether the first row after it is a header, and the text
//! encoding. Used by `ObservationReader::new` and by `quire load-csv --inspect`.
//!
//! - Delimiter (when `Auto`): each of `;` tab `,` `|` splits every sampled line; the
//!   *body width* of a candidate is its most frequent field count after the first line
//!   (ties: the wider). The candidate whose body width is > 1 and shared by the most
//!   lines wins (ties in that order, so `1,5;2,3` rows are `;` with decimal commas);
//!   with none, runs of whitespace when they split the lines alike, else `,`.
//! - Preamble (when `Auto`): the leading lines that start with `#` or have fewer fields
//!   than the body (station metadata above the header), and a metadata block ended by
//!   a blank line; `--skip-lines` when they do not.
//! - Header (when `Auto`): the first row after the preamble is a header when none of
//!   its fields starts like a number, or when one of its fields is no number (nor a
//!   missing marker) where the next row has a number (`2020_01` above `1.5`), or when
//!   three of its fields name periods (`period.rs`); always for a wide layout.
//!
//! Lines are split by `\n`, or by `\r` when there is no `\n` (a quoted field holding a
//! line break only spoils the sample).
//! A UTF-16 input (Excel's "Unicode text", found by its byte order mark: [`utf16_bom`])
//! is sniffed as its UTF-8 text ([`utf16_text`]).

use super::period::PeriodPattern;
use super::schema::{Delimiter, Encoding, HeaderMode, Layout, MissingValues, Preamble, Schema, TextEncoding};

/// Lines sampled from the start of the input.
pub const SAMPLE_LINES: usize = 200;

/// The UTF-16 encoding whose byte order mark starts `start`, if any.
pub fn utf16_bom(start: &[u8]) -> Option<&'static encoding_rs::Encoding> {
    match start {
        [0xFF, 0xFE, ..] => Some(encoding_rs::UTF_16LE),
        [0xFE, 0xFF, ..] => Some(encoding_rs::UTF_16BE),
        _ => None,
    }
}

/// The start of a UTF-16 input as UTF-8 text, its byte order mark removed (an odd
/// byte or a pair split at the end only spoils the last, partial line).
pub fn utf16_text(start: &[u8], utf16: &'static encoding_rs::Encoding) -> String {
    utf16.decode_with_bom_removal(&start[..start.len() & !1]).0.into_owned()
}

/// What the start of an input looks like.
#[derive(Debug, Clone, PartialEq)]
pub struct Sniffed {
    /// The delimiter found (or given): a byte or [`Delimiter::Whitespace`].
    pub delimiter: Delimiter,
    /// Lines before the header (or first data row).
    pub preamble_lines: usize,
    /// Bytes of those lines, terminators included.
    pub preamble_bytes: usize,
    /// The preamble lines' fields (trimmed).
    pub preamble: Vec<Vec<String>>,
    /// True when the first row after the preamble is a header, or when the header is
    /// the preamble's last line (see [`Sniffed::header_in_preamble`]).
    pub header: bool,
    /// True when the header is the preamble's last comment line (`# STN,YYYYMMDD,…`, as
    /// KNMI writes it): [`Sniffed::rows`]' first row, and the first row after the
    /// preamble is data.
    pub header_in_preamble: bool,
    /// Whether the header's names are written on two lines (a Davis WeatherLink
    /// export: `Temp`, `Hi` over `Out`, `Temp`), and which: [`Sniffed::rows`]' first row
    /// joins the two lines' names (`Temp Out`, `Hi Temp`).
    pub names_joined: Joined,
    /// Rows right after the header that are not data (units, a logger's processing
    /// row): no field looks like a number, some field is text that marks no missing
    /// value, and a data row follows. Skipped by the load.
    pub units_rows: usize,
    /// Field count of most body rows.
    pub body_fields: usize,
    /// The first rows after the preamble (header included, units rows left out), split
    /// into fields.
    pub rows: Vec<Vec<String>>,
    /// The text's encoding (the schema's, or [`sample_encoding`]'s guess): UTF-8 or
    /// one the load transcodes from.
    pub encoding: &'static Encoding,
    /// True when lines end with a lone `\r` (no `\n` in the sample).
    pub cr_lines: bool,
    /// True when every line of the sample ends with an HTML line break (`<br />`),
    /// which the load drops ([`HTML_BREAKS`]).
    pub html_breaks: bool,
}

/// Where the second line of a header written on two lines is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Joined {
    /// The header is one line.
    #[default]
    No,
    /// The names start on the preamble's last line, right above the header's line.
    WithLineAbove,
    /// The names end on the line under the header's, skipped as the first units row.
    WithLineBelow,
}

/// Detects the layout of `start` (the input's first bytes, BOM removed); `complete` is
/// true when `start` holds the whole input (else its last, partial line is ignored).
/// The sample is decoded first ([`sample_encoding`]); [`Sniffed::preamble_bytes`]
/// counts `start`'s own bytes (line ends are the same bytes in every encoding read here).
pub fn sniff(start: &[u8], complete: bool, schema: &Schema) -> Sniffed {
    let encoding = sample_encoding(start, complete, schema);
    let decoded = (encoding != encoding_rs::UTF_8).then(|| encoding.decode_without_bom_handling(start).0.into_owned());
    let text = decoded.as_ref().map_or(start, |text| text.as_bytes());
    let end = line_end(text);
    let mut lines = sample_lines(text, complete, end);
    let html_breaks = ends_in_html_breaks(&lines);
    if html_breaks {
        lines.iter_mut().for_each(|line| *line = without_html_break(line));
    }
    if complete {
        lines.truncate(without_notes(&lines));
    }
    let delimiter = match schema.delimiter {
        Delimiter::Auto => detect_delimiter(&lines),
        given => given,
    };
    let split: Vec<Vec<String>> = lines.iter().map(|line| split_line(line, delimiter)).collect();
    let body_fields = body_width(&uncommented(&lines, &split));
    let preamble_lines = match schema.preamble {
        Preamble::Lines(count) => count.min(lines.len()),
        Preamble::Auto => detect_preamble(&lines, &split, body_fields),
    };
    let mut line_ends = start.iter().enumerate().filter(|&(_, &byte)| byte == end).map(|(at, _)| at + 1);
    let preamble_bytes = preamble_lines.checked_sub(1).map_or(0, |last| line_ends.nth(last).unwrap_or(start.len()));
    let mut rows = split[preamble_lines..].to_vec();
    let first_is_header = rows.first().is_some_and(|first| is_header(first, rows.get(1), &schema.missing));
    let commented = match schema.header {
        HeaderMode::Absent => None,
        _ if first_is_header => None,
        _ => commented_header(&lines[..preamble_lines], delimiter, body_fields),
    };
    let header_in_preamble = commented.is_some();
    rows.splice(0..0, commented);
    let header = match schema.header {
        HeaderMode::Present => true,
        HeaderMode::Absent => false,
        _ if header_in_preamble => true,
        HeaderMode::Auto if matches!(schema.layout, Layout::Wide { .. }) => true,
        HeaderMode::Auto => first_is_header,
    };
    let units_rows =
        if header && !header_in_preamble { units_rows(&rows[1.min(rows.len())..], &schema.missing) } else { 0 };
    let above = preamble_lines.checked_sub(1).map(|last| &split[last]);
    let mut names_joined = Joined::No;
    if header && !header_in_preamble {
        let with_above = above.and_then(|above| two_line_names(above, &rows[0], false));
        let with_below = || (units_rows > 0).then(|| two_line_names(&rows[0], &rows[1], true)).flatten();
        if let Some(names) = with_above {
            (rows[0], names_joined) = (names, Joined::WithLineAbove);
        } else if let Some(names) = with_below() {
            (rows[0], names_joined) = (names, Joined::WithLineBelow);
        }
    }
    rows.drain(1..1 + units_rows);
    Sniffed {
        delimiter,
        preamble_lines,
        preamble_bytes,
        preamble: split[..preamble_lines].to_vec(),
        header,
        header_in_preamble,
        names_joined,
        units_rows,
        body_fields,
        rows,
        encoding,
        cr_lines: end == b'\r',
        html_breaks,
    }
}

/// The HTML line breaks that may end a line of text saved from a web page.
pub const HTML_BREAKS: [&[u8]; 3] = [b"<br />", b"<br/>", b"<br>"];

/// `line` without the HTML line break that ends it, if any.
pub fn without_html_break(line: &[u8]) -> &[u8] {
    HTML_BREAKS.iter().find_map(|br| line.strip_suffix(*br)).unwrap_or(line)
}

/// Whether every line of the sample that is not blank ends with an HTML line break
/// (Weather Underground's old history files: `…,2015-01-01 05:51:00<br />`).
fn ends_in_html_breaks(lines: &[&[u8]]) -> bool {
    let filled: Vec<&&[u8]> = lines.iter().filter(|line| !line.trim_ascii().is_empty()).collect();
    !filled.is_empty() && filled.iter().all(|line| without_html_break(line).len() < line.len())
}

/// The encoding of a sample: the schema's; else UTF-8 when `start` is UTF-8 (a
/// character cut by the end of an incomplete sample allowed); else `chardetng`'s guess
/// (Windows-1252 for Western text, Shift_JIS for a Japanese agency's file, GBK, EUC-KR,
/// …). UTF-16 reads as UTF-8: its callers decode it before they sniff.
pub fn sample_encoding(start: &[u8], complete: bool, schema: &Schema) -> &'static Encoding {
    match schema.encoding {
        TextEncoding::Named(encoding) if encoding.output_encoding() == encoding => encoding,
        TextEncoding::Named(_) => encoding_rs::UTF_8,
        TextEncoding::Auto => {
            let utf8 = match std::str::from_utf8(start) {
                Ok(_) => true,
                Err(error) => error.error_len().is_none() && !complete,
            };
            if utf8 {
                return encoding_rs::UTF_8;
            }
            let mut detector = chardetng::EncodingDetector::new();
            detector.feed(start, complete);
            detector.guess(None, false)
        }
    }
}

/// The byte that ends `start`'s lines: `\n`, or `\r` in a file with no `\n` (the
/// "CSV (Macintosh)" of old spreadsheets; the `csv` crate reads it as such too).
fn line_end(start: &[u8]) -> u8 {
    if !start.contains(&b'\n') && start.contains(&b'\r') { b'\r' } else { b'\n' }
}

/// The complete lines of `start` ended by `end` (without `\r\n`), at most
/// [`SAMPLE_LINES`].
fn sample_lines(start: &[u8], complete: bool, end: u8) -> Vec<&[u8]> {
    let mut lines: Vec<&[u8]> = start.split(|&byte| byte == end).collect();
    let last_is_partial = !complete || lines.last().is_some_and(|line| line.is_empty());
    if last_is_partial && lines.len() > 1 {
        lines.pop();
    }
    lines.truncate(SAMPLE_LINES);
    lines.into_iter().map(|line| line.strip_suffix(b"\r").unwrap_or(line)).collect()
}

/// How many of `lines` (a whole input) come before the notes at its end: the lines
/// after the first blank line below which every line has fewer fields than each of the
/// [`LEAST_ROWS_ABOVE_NOTES`] lines above it, split by whichever delimiter splits the
/// last of those most (PVGIS's legend of its columns, then its copyright, under the
/// rows). All of them when there is no such blank line.
fn without_notes(lines: &[&[u8]]) -> usize {
    let blank = |line: &&[u8]| line.trim_ascii().is_empty();
    let fields = |line: &[u8], delimiter: u8| split_line(line, Delimiter::Byte(delimiter)).len();
    let notes_after = |at: usize| {
        let rows = lines[..at].iter().rev().take(LEAST_ROWS_ABOVE_NOTES).collect::<Vec<_>>();
        if rows.len() < LEAST_ROWS_ABOVE_NOTES || rows.iter().any(|row| blank(row)) {
            return false;
        }
        let delimiter = [b',', b';', b'\t', b'|'].into_iter().max_by_key(|&d| fields(rows[0], d)).unwrap_or(b',');
        let width = fields(rows[0], delimiter);
        let rows_alike = rows.iter().all(|row| fields(row, delimiter) == width);
        let narrower = lines[at + 1..].iter().all(|line| blank(line) || fields(line, delimiter) < width);
        width > 2 && rows_alike && narrower
    };
    (0..lines.len()).find(|&at| blank(&lines[at]) && notes_after(at)).unwrap_or(lines.len())
}

/// Lines of one width right above a blank line, for what follows it to be notes.
const LEAST_ROWS_ABOVE_NOTES: usize = 3;

/// The fields of one line, trimmed (lossy UTF-8). Quotes are honoured as the `csv`
/// crate does for one line (a quoted field may hold the delimiter; `""` is a quote);
/// a `csv` reader per sampled line would cost more than the load of a small file.
pub fn split_line(line: &[u8], delimiter: Delimiter) -> Vec<String> {
    let text = |field: &[u8]| String::from_utf8_lossy(field).trim().to_owned();
    let byte = match delimiter {
        Delimiter::Byte(byte) => byte,
        Delimiter::Auto => b',',
        Delimiter::Whitespace => {
            return line.split(u8::is_ascii_whitespace).filter(|f| !f.is_empty()).map(text).collect();
        }
    };
    let (mut fields, mut field, mut quoted) = (Vec::new(), Vec::new(), false);
    let mut bytes = line.iter().copied().peekable();
    while let Some(current) = bytes.next() {
        match current {
            b'"' if quoted && bytes.peek() == Some(&b'"') => {
                field.push(b'"');
                bytes.next();
            }
            b'"' => quoted = !quoted,
            _ if current == byte && !quoted => fields.push(text(&std::mem::take(&mut field))),
            _ => field.push(current),
        }
    }
    fields.push(text(&field));
    fields
}

/// The most frequent field count in the sample's second half (ties: the larger), where
/// the body is even under a long preamble (ECA&D's 19 lines of text above a few rows);
/// after the first line in a sample of up to 4 lines; the first line's count when it is
/// alone.
fn body_width(split: &[Vec<String>]) -> usize {
    let body = match split.len() {
        0 | 1 => split,
        2..=4 => &split[1..],
        lines => &split[lines / 2..],
    };
    let mut counts = std::collections::BTreeMap::<usize, usize>::new();
    for fields in body {
        *counts.entry(fields.len()).or_default() += 1;
    }
    counts.into_iter().max_by_key(|&(width, lines)| (lines, width)).map_or(0, |(width, _)| width)
}

/// The rows of `split` whose lines do not start with `#`, when two or more do: a long
/// commented preamble (CAMS's forty lines of `# …`) above a few rows does not decide
/// the body's width.
fn uncommented(lines: &[&[u8]], split: &[Vec<String>]) -> Vec<Vec<String>> {
    let rows: Vec<Vec<String>> =
        lines.iter().zip(split).filter(|(line, _)| !line.starts_with(b"#")).map(|(_, row)| row.clone()).collect();
    if rows.len() >= 2 { rows } else { split.to_vec() }
}

fn detect_delimiter(lines: &[&[u8]]) -> Delimiter {
    let mut best: Option<(usize, Delimiter)> = None;
    for byte in [b';', b'\t', b',', b'|'] {
        let delimiter = Delimiter::Byte(byte);
        let split: Vec<Vec<String>> = lines.iter().map(|line| split_line(line, delimiter)).collect();
        let split = uncommented(lines, &split);
        let width = body_width(&split);
        let agreeing = split.iter().filter(|fields| fields.len() == width).count();
        if width > 1 && best.is_none_or(|(lines, _)| agreeing > lines) {
            best = Some((agreeing, delimiter));
        }
    }
    if let Some((_, delimiter)) = best {
        return delimiter;
    }
    let split: Vec<Vec<String>> = lines.iter().map(|line| split_line(line, Delimiter::Whitespace)).collect();
    if body_width(&uncommented(lines, &split)) > 1 { Delimiter::Whitespace } else { Delimiter::Byte(b',') }
}

/// The leading lines that start with `#` or have fewer fields than the body; when a
/// blank line among the first [`BLANK_LINE_REACH`] lines is followed by a line of the
/// body's width and no line above it has that width with more than one field filled,
/// everything up to it too (a metadata block wider than the body, or a spreadsheet's
/// title rows).
fn detect_preamble(lines: &[&[u8]], split: &[Vec<String>], body_fields: usize) -> usize {
    let numbered = first_column_numeric(split, body_fields);
    let is_preamble = |index: usize| {
        lines[index].starts_with(b"#")
            || split[index].len() < body_fields
            || (index == 0 && is_logger_line(&split[0]))
            || is_title_row(&split[index], body_fields)
            || (numbered && is_keyword_line(&split[index], body_fields))
    };
    // Above the blank line, rows of another width, or of one filled field (a title row
    // of a spreadsheet, padded to the sheet's width).
    let metadata =
        |fields: &Vec<String>| fields.len() != body_fields || fields.iter().filter(|f| !f.is_empty()).count() <= 1;
    let blank = (0..lines.len().min(BLANK_LINE_REACH))
        .filter(|&index| lines[index].trim_ascii().is_empty())
        .rfind(|&index| split.get(index + 1).is_some_and(|next| next.len() == body_fields))
        .filter(|&index| split[..index].iter().all(metadata))
        .map_or(0, |index| index + 1);
    let leading = blank + (blank..lines.len()).take_while(|&index| is_preamble(index)).count();
    let leading = leading.max(header_below_notes(split, body_fields)).max(header_above_data(split, body_fields));
    if leading == lines.len() { 0 } else { leading }
}

/// Whether the body's rows (those of its width in the sample's second half) all start
/// with a number, as rows that start with their date do.
fn first_column_numeric(split: &[Vec<String>], body_fields: usize) -> bool {
    let mut body = split[split.len() / 2..].iter().filter(|fields| fields.len() == body_fields).peekable();
    body.peek().is_some() && body.all(|fields| fields.first().is_some_and(|first| looks_numeric(first)))
}

/// Whether `fields` is a keyword line of a header block wider than the body (an
/// EnergyPlus weather file's `DESIGN CONDITIONS,1,…` or `GROUND TEMPERATURES,3,…`
/// above rows that start with their year): a first field of words, then numbers among
/// more fields than a row has (a header wider than its rows has no numbers). Asked
/// only when the body's rows start with numbers.
fn is_keyword_line(fields: &[String], body_fields: usize) -> bool {
    fields.len() > body_fields
        && fields.first().is_some_and(|first| first.chars().any(char::is_alphabetic))
        && fields.iter().skip(1).any(|field| is_number(field))
}

/// The lines above a header that sits right above the first data row, under lines of
/// the body's width that are no data (NSRDB's PSM3 files: a line of metadata names and
/// one of their values, then the header; a line of a title and the station's place
/// padded to the body's width; a line of column groups above the names). The data
/// rows are those with a number, or nothing, in each column where every row of the
/// sample's second half has one; the header is the fullest of the (at most
/// [`MOST_UNITS_ROWS`] + 1) lines of text right above the first of them whose names
/// differ (all of them if none does), or the first of these that names its first
/// column a time or a date; the lines under it are units rows. 0 when the first data row is the first line, or no line of
/// text lies above it.
fn header_above_data(split: &[Vec<String>], body_fields: usize) -> usize {
    let body: Vec<&Vec<String>> =
        split[split.len() / 2..].iter().filter(|fields| fields.len() == body_fields).collect();
    let numeric: Vec<usize> = (0..body_fields)
        .filter(|&column| {
            let mut values =
                body.iter().map(|fields| fields[column].as_str()).filter(|value| !value.is_empty()).peekable();
            values.peek().is_some() && values.all(looks_numeric)
        })
        .collect();
    let is_data = |fields: &Vec<String>| {
        let cells = || numeric.iter().map(|&column| fields[column].as_str());
        fields.len() == body_fields
            && cells().all(|cell| cell.is_empty() || looks_numeric(cell))
            && cells().any(looks_numeric)
    };
    let Some(first_data) = split.iter().position(is_data) else { return 0 };
    let filled = |fields: &Vec<String>| fields.iter().filter(|field| !field.is_empty()).count();
    let text = |fields: &&Vec<String>| filled(fields) > 1 && !fields.iter().any(|field| looks_numeric(field));
    let above = split[..first_data].iter().rev().take(MOST_UNITS_ROWS + 1).take_while(text).count();
    let block = first_data - above..first_data;
    // Names differ; a metadata line of a key and one value a column (meteoblue's
    // `resolution,hourly,hourly,…` above its `timestamp,…` names) repeats them.
    let distinct = |index: &usize| {
        let names: Vec<&String> = split[*index].iter().filter(|field| !field.is_empty()).collect();
        names.iter().enumerate().all(|(i, name)| !names[..i].contains(name))
    };
    let named: Vec<usize> = block.clone().filter(distinct).collect();
    let candidates = if named.is_empty() { block.collect() } else { named };
    // A line that names its first column a time or a date is the names' line (above
    // meteoblue's data, its `unit,°C,mm` line has distinct fields too).
    let dating = |index: &&usize| {
        let first = split[**index].first().map(|field| field.to_ascii_lowercase()).unwrap_or_default();
        first.contains("time") || first.contains("date")
    };
    if let Some(&index) = candidates.iter().find(dating) {
        return index;
    }
    let fullest = candidates.iter().map(|&index| filled(&split[index])).max().unwrap_or(0);
    candidates.into_iter().find(|&index| filled(&split[index]) == fullest).unwrap_or(0)
}

/// The lines above a header that sits under notes of other widths (the Met Office's
/// station files: a name, a location, sentences on flags, then `yyyy mm tmax …`): the
/// first line among the first [`BLANK_LINE_REACH`] of the body's width with no field
/// like a number, data within [`MOST_UNITS_ROWS`] lines under it, and no line above it
/// of the body's width with more than one field filled. 0 when there is none.
fn header_below_notes(split: &[Vec<String>], body_fields: usize) -> usize {
    let filled = |fields: &Vec<String>| fields.iter().filter(|field| !field.is_empty()).count();
    let is_data = |fields: &Vec<String>| fields.len() == body_fields && fields.iter().any(|f| looks_numeric(f));
    let header = |index: usize| {
        let fields = &split[index];
        fields.len() == body_fields
            && filled(fields) > 1
            && !fields.iter().any(|field| looks_numeric(field))
            && split[index + 1..].iter().take(MOST_UNITS_ROWS + 1).any(is_data)
    };
    let reach = split.len().min(BLANK_LINE_REACH);
    let found = (1..reach)
        .find(|&index| header(index))
        .filter(|&index| split[..index].iter().all(|fields| fields.len() != body_fields || filled(fields) <= 1));
    found.unwrap_or(0)
}

/// Whether `fields` is a title row padded to the body's width, as a spreadsheet exports
/// one above its header (`Hilltop station hourly data,,,`): one filled field, of two or
/// more words with letters, in a body of three or more columns. A data row has a time,
/// and a time has no letters.
fn is_title_row(fields: &[String], body_fields: usize) -> bool {
    let mut filled = fields.iter().filter(|field| !field.trim().is_empty());
    let (Some(only), None) = (filled.next(), filled.next()) else { return false };
    let words = only.split_whitespace().filter(|word| word.chars().any(char::is_alphabetic)).count();
    body_fields >= 3 && words >= 2
}

/// The names of a header written as the preamble's last comment line (`# STN,YYYYMMDD,
/// HH, T`, KNMI's files): the last line starting with `#` that holds more than the `#`,
/// split after the `#`, when it is as wide as the body and no name looks like a number.
fn commented_header<'a>(preamble: &[&'a [u8]], delimiter: Delimiter, body_fields: usize) -> Option<Vec<String>> {
    let comment = |line: &'a [u8]| line.trim_ascii_start().strip_prefix(b"#").map(<[u8]>::trim_ascii);
    let last = preamble.iter().rev().map_while(|&line| comment(line)).find(|text| !text.is_empty())?;
    let names = split_line(last, delimiter);
    let plausible = names.len() == body_fields && body_fields > 1 && !names.iter().any(|name| looks_numeric(name));
    (plausible && names.iter().all(|name| !name.is_empty())).then_some(names)
}

/// How far down a blank line may end a preamble.
const BLANK_LINE_REACH: usize = 30;

/// Most units rows under a header.
const MOST_UNITS_ROWS: usize = 3;

/// Whether `fields` is the file-information line that starts a Campbell Scientific
/// logger's table file (`"TOA5","station","CR1000",…`, or the older `TOACI1`): a
/// preamble line even when it has more fields than the rows.
pub(crate) fn is_logger_line(fields: &[String]) -> bool {
    matches!(fields.first().map(String::as_str), Some("TOA5" | "TOACI1"))
}

/// How many of `rows` (those after a header) are units rows (see [`Sniffed::units_rows`]):
/// the rows before the first one with a number, if each has no number and some text
/// (not a missing marker) above a number of that data row. A data row whose measures
/// are all missing has markers there, so it is never taken for units.
fn units_rows(rows: &[Vec<String>], missing: &MissingValues) -> usize {
    let numeric = |row: &Vec<String>| row.iter().any(|field| looks_numeric(field));
    let Some(data) = rows.iter().take(MOST_UNITS_ROWS + 1).position(numeric) else { return 0 };
    let marker = |field: &String| field.is_empty() || missing.tokens.iter().any(|t| t.eq_ignore_ascii_case(field));
    let labels =
        |row: &Vec<String>| row.iter().zip(&rows[data]).any(|(unit, value)| !marker(unit) && looks_numeric(value));
    if rows[..data].iter().all(labels) { data } else { 0 }
}

fn is_header(first: &[String], next: Option<&Vec<String>>, missing: &MissingValues) -> bool {
    if !first.iter().any(|field| looks_numeric(field)) || PeriodPattern::detect(first).is_some() {
        return true;
    }
    let is_text = |field: &String| !is_number(field) && !missing.tokens.iter().any(|t| t.eq_ignore_ascii_case(field));
    next.is_some_and(|next| first.iter().zip(next).any(|(head, value)| is_text(head) && is_number(value)))
}

/// The names of a header written on two lines, `upper` over `lower`, joined (`Temp`
/// over `Out` is `Temp Out`; `below` when the header is the upper line and the lower
/// one the first units row): when the lines are as wide, neither has a number, the
/// upper one has two names or more, the header's line alone leaves a name empty or
/// repeats one (WeatherLink's `Temp` under both `Hi` and `Low`, `Wind` over `Speed`
/// and `Dir`), and the joined names do neither. `None` otherwise: a units row (`degC` under `tmax`) or
/// a line of groups over names that are enough alone stays what it is.
fn two_line_names(upper: &[String], lower: &[String], below: bool) -> Option<Vec<String>> {
    let filled = |names: &[String]| names.iter().filter(|name| !name.is_empty()).count();
    let clear = |names: &[String]| {
        let repeated = names.iter().enumerate().any(|(i, name)| !name.is_empty() && names[..i].contains(name));
        !repeated && filled(names) + trailing_empty(names) == names.len()
    };
    let numbers = upper.iter().chain(lower).any(|field| looks_numeric(field));
    let header = if below { upper } else { lower };
    if upper.len() != lower.len() || numbers || filled(upper) < 2 || clear(header) {
        return None;
    }
    let joined: Vec<String> = upper.iter().zip(lower).map(|(upper, lower)| join_names(upper, lower)).collect();
    clear(&joined).then_some(joined)
}

/// Empty names at the end of a line (a delimiter after its last name).
fn trailing_empty(names: &[String]) -> usize {
    names.iter().rev().take_while(|name| name.is_empty()).count()
}

/// A column's name written on two lines: the upper words, a space, the lower ones.
fn join_names(upper: &str, lower: &str) -> String {
    [upper.trim(), lower.trim()].iter().filter(|part| !part.is_empty()).copied().collect::<Vec<_>>().join(" ")
}

/// True when `field` is a number (a decimal comma allowed).
fn is_number(field: &str) -> bool {
    field.trim().replacen(',', ".", 1).parse::<f64>().is_ok()
}

/// True when `field` starts like a number (`-3`, `+1,5`, `2013-03-01`).
pub fn looks_numeric(field: &str) -> bool {
    let unsigned = field.trim().trim_start_matches(['-', '+']);
    unsigned.bytes().next().is_some_and(|byte| byte.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sniffed(text: &str) -> Sniffed {
        sniff(text.as_bytes(), true, &Schema::default())
    }

    /// A preamble of station metadata above a `;` header with decimal commas.
    #[test]
    fn preamble_semicolons_and_header() {
        let text = "Station;Berlin-Dahlem\nLat;52,45\n\nDatum;Zeit;T2m;RR\n01.01.2020;00:00;1,5;0\n\
                    01.01.2020;01:00;-0,5;0,2\n01.01.2020;02:00;2;0\n";
        let found = sniffed(text);
        assert_eq!(found.delimiter, Delimiter::Byte(b';'));
        assert_eq!((found.preamble_lines, found.body_fields, found.header), (3, 4, true));
        assert_eq!(found.preamble[0], ["Station", "Berlin-Dahlem"]);
        let quoted = split_line(b"724666,\"DENVER, CO\",\"a \"\"b\"\"\",", Delimiter::Byte(b','));
        assert_eq!(quoted, ["724666", "DENVER, CO", "a \"b\"", ""]);
        assert_eq!(&text[found.preamble_bytes..found.preamble_bytes + 5], "Datum");
        let crlf = text.replace('\n', "\r\n");
        let found = sniffed(&crlf);
        assert_eq!(&crlf[found.preamble_bytes..found.preamble_bytes + 5], "Datum", "CRLF lines are two bytes longer");
        assert!(!found.cr_lines);
        let cr = text.replace('\n', "\r");
        let found = sniffed(&cr);
        assert_eq!((found.preamble_lines, found.body_fields, found.header, found.cr_lines), (3, 4, true, true));
        assert_eq!(&cr[found.preamble_bytes..found.preamble_bytes + 5], "Datum", "lines ended by a lone CR");
    }

    /// A long preamble of prose above a few rows (a short ECA&D series): the body's
    /// width is the sample's second half's, so the prose does not make the file look
    /// whitespace-aligned.
    #[test]
    fn a_long_prose_preamble_above_a_few_rows() {
        let mut text = String::from("EUROPEAN CLIMATE ASSESSMENT & DATASET (ECA&D), file created on 22-11-2021\n");
        for line in 0..17 {
            text.push_str(&format!(
                "{}\n",
                if line % 4 == 0 { "" } else { "Some words of the licence, and more of them" }
            ));
        }
        text.push_str("\n SOUID,    DATE,   TG, Q_TG\n");
        for day in 1..=6 {
            text.push_str(&format!("100003,1860010{day},   2{day},    0\n"));
        }
        let found = sniffed(&text);
        assert_eq!(found.delimiter, Delimiter::Byte(b','));
        assert_eq!((found.preamble_lines, found.body_fields, found.header), (19, 4, true));
    }

    /// A title row padded to the body's width above the header is preamble (with or
    /// without a blank line under it); a first data row with only its time filled is not.
    #[test]
    fn a_padded_title_row_above_the_header() {
        let text = "Hilltop station hourly data,,,\nDate,Time,Temperature (C),Rain (mm)\n\
                    2020-01-01,00:00,12.41,0\n2020-01-01,01:00,11.97,0.2\n2020-01-01,02:00,,0\n";
        let found = sniffed(text);
        assert_eq!((found.preamble_lines, found.body_fields, found.header), (1, 4, true));
        let times_only = "2020-01-01 00:00,,,\n2020-01-01 01:00,1,2,3\n2020-01-01 02:00,1,2,3\n";
        assert_eq!(sniffed(times_only).preamble_lines, 0);
    }

    /// Rows of units under a header are skipped; a first row of missing values is data.
    #[test]
    fn units_rows_under_the_header() {
        let toa5 = "\"TOA5\",\"Hill\",\"CR1000\",\"1\",\"os\",\"prog\",\"7\",\"Hourly\"\n\
                    TIMESTAMP,RECORD,AirTC\nTS,RN,Deg C\n,,Avg\n2021-06-01 01:00:00,1,12.4\n2021-06-01 02:00:00,2,12.1\n";
        let found = sniffed(toa5);
        assert_eq!((found.preamble_lines, found.header, found.units_rows, found.body_fields), (1, true, 2, 3));
        assert_eq!(found.rows[1][2], "12.4", "units rows are left out of the sample rows");
        let title = sniffed("Station: Hill,,\n\nDate,T,RH\n2021-06-01,1.5,80\n2021-06-02,1.7,81\n");
        assert_eq!((title.preamble_lines, title.header), (2, true), "a padded title row above a blank line");
        let missing_first = sniffed("station,temp,rh\nS1,NA,\nS2,1.5,80\n");
        assert_eq!((missing_first.header, missing_first.units_rows), (true, 0));
        let text_rows = sniffed("a,b\nx,y\nz,w\n");
        assert_eq!(text_rows.units_rows, 0, "no data row follows");
    }

    /// Whitespace-aligned columns without a header; a header whose names start with
    /// digits is still a header.
    #[test]
    fn whitespace_columns_and_digit_headers() {
        let found = sniffed("1901 01 01 06   -78 -9999\n1901 01 01 13   -72 -9999\n1901 01 01 20   -94 -9999\n");
        assert_eq!((found.delimiter, found.header, found.body_fields), (Delimiter::Whitespace, false, 6));
        let found = sniffed("time,2m_temp,10m_wind\n2020-01-01,1.5,3\n2020-01-02,NA,4\n");
        assert!(found.header);
        let found = sniffed("S1,2020-01-01,NA,4\nS1,2020-01-02,1.5,4\n");
        assert!(!found.header, "a missing marker above a number is no header");
    }

    /// Notes of other widths above a header (the Met Office's station files: a name, a
    /// location, sentences on flags) are preamble, the units row under the header is
    /// skipped; a text row of the body's width under a data row ends no preamble.
    #[test]
    fn notes_above_a_header() {
        let text = "Oxford\nLocation: 450900E 207200N, Lat 51.761 Lon -1.262, 63 metres amsl\n\
                    Estimated data is marked with a * after the value.\n   yyyy  mm   tmax    tmin\n\
                    \x20             degC    degC\n   1853   1    8.4     2.7\n   1853   2    3.2    -1.8\n\
                    \x20  1853   3    7.7*   -0.6\n";
        let found = sniffed(text);
        assert_eq!(found.delimiter, Delimiter::Whitespace);
        assert_eq!((found.preamble_lines, found.header, found.units_rows, found.body_fields), (3, true, 1, 4));
        assert_eq!(found.rows[0], ["yyyy", "mm", "tmax", "tmin"]);
        let data_first = sniffed("1 2 3\na b c\n4 5 6\n7 8 9\n");
        assert_eq!(data_first.preamble_lines, 0);
    }

    /// A header written as the preamble's last comment line (KNMI's files) names the
    /// columns, and the first row after the preamble is data; not when that row is a
    /// header itself, nor with `--no-header`, nor when the comment is no header.
    #[test]
    fn a_header_in_the_last_comment_line() {
        let text = "# BRON: KNMI\n# \n# STN,YYYYMMDD,   HH,    T\n# \n  260,20230101,    1,  150\n\
                    \x20 260,20230101,    2,  148\n  260,20230101,    3,  146\n";
        let found = sniffed(text);
        assert_eq!((found.preamble_lines, found.header, found.header_in_preamble), (4, true, true));
        assert_eq!(found.rows[0], ["STN", "YYYYMMDD", "HH", "T"]);
        assert_eq!(found.rows[1][3], "150");
        let absent = sniff(text.as_bytes(), true, &Schema { header: HeaderMode::Absent, ..Schema::default() });
        assert!(!absent.header && !absent.header_in_preamble);
        let twice = text.replace("# \n  260,20230101,    1", "# \nSTN,DATE,HH,T\n  260,20230101,    1");
        assert!(!sniffed(&twice).header_in_preamble, "the row after the preamble is the header");
        let prose = text.replace("STN,YYYYMMDD,   HH,    T", "made by a script, 2023");
        assert!(!sniffed(&prose).header_in_preamble);
    }

    /// A metadata block as wide as the body or wider, ended by a blank line (as
    /// Open-Meteo writes it), is preamble.
    #[test]
    fn metadata_block_before_a_blank_line() {
        let text = "latitude,longitude,elevation,timezone\n52.52,13.41,38.0,GMT\n\ntime,temp (C),rain (mm)\n\
                    2023-01-01T00:00,1.2,0\n2023-01-01T01:00,1.0,0.1\n";
        let found = sniffed(text);
        assert_eq!((found.preamble_lines, found.header, found.body_fields), (3, true, 3));
        assert_eq!(found.preamble[1][0], "52.52");
        let found = sniffed("a,b\n1,2\n\n3,4\n");
        assert_eq!(found.preamble_lines, 0, "a blank line between data rows ends no preamble");
    }

    /// A header written on two lines (a Davis WeatherLink export): the names join the
    /// upper line's words, when that line is as wide, has no number, and the lower
    /// names alone repeat or leave one empty. Names that are enough alone stay as they
    /// are, and a line of groups over them stays preamble.
    #[test]
    fn names_written_on_two_lines() {
        let text = "\t\tTemp\tHi\tLow\tBar\n Date\tTime\tOut\tTemp\tTemp\t\n1/01/20\t12:05a\t41.2\t41.3\t41.2\t30.1\n\
                    1/01/20\t12:10a\t41.0\t41.2\t41.0\t30.1\n";
        let found = sniffed(text);
        // The upper line's names differ, so it is the header and the lower a units row.
        assert_eq!((found.preamble_lines, found.header, found.names_joined), (0, true, Joined::WithLineBelow));
        assert_eq!(found.rows[0], ["Date", "Time", "Temp Out", "Hi Temp", "Low Temp", "Bar"]);
        // The upper line repeats a name, the lower leaves one empty: the lower is the
        // header, its names begun above.
        let both = "\t\tWind\tWind\tBar\tRain\nDate\tTime\tSpeed\tDir\t\tRate\n1/01/20\t12:05a\t2\t3\t30.1\t0\n\
                    1/01/20\t12:10a\t1\t4\t30.2\t0\n";
        let above = sniffed(both);
        assert_eq!((above.preamble_lines, above.names_joined), (1, Joined::WithLineAbove));
        assert_eq!(above.rows[0], ["Date", "Time", "Wind Speed", "Wind Dir", "Bar", "Rain Rate"]);
        let clear = text.replace("Temp\tTemp\t\n", "High\tLow\tBar\n");
        let found = sniffed(&clear);
        assert_eq!(found.names_joined, Joined::No);
        assert_eq!(found.rows[0], ["Date", "Time", "Out", "High", "Low", "Bar"]);
        let numbered = text.replace("\t\tTemp\tHi", "\t\t2020\tHi");
        assert_eq!(sniffed(&numbered).names_joined, Joined::No, "a line with a number names no columns");
    }

    /// Lines that all end with an HTML line break (Weather Underground's history files)
    /// are sniffed without it; one line without it leaves every line as it is.
    #[test]
    fn html_line_breaks_at_the_ends_of_lines() {
        let text = "\r\nTime,Temp,DateUTC<br />\r\n12:51 AM,41.0,2015-01-01 05:51:00<br />\r\n\
                    1:51 AM,39.9,2015-01-01 06:51:00<br/>\r\n";
        let found = sniffed(text);
        assert!(found.html_breaks);
        assert_eq!(found.rows[0], ["Time", "Temp", "DateUTC"]);
        assert_eq!(found.rows[2][2], "2015-01-01 06:51:00");
        let one_without = text.replace("06:51:00<br/>", "06:51:00");
        assert!(!sniffed(&one_without).html_breaks);
    }
}
