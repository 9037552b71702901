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
    /// True when the numbers are written with a decimal comma: always when the
    /// delimiter is no comma; in a comma-delimited file, when a quoted field shows a
    /// decimal comma that cannot be a thousands separator (`"12,5"`, `"1.013,2"`) and
    /// no field is a number with a decimal point.
    pub decimal_comma: bool,
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
    if complete {
        lines.truncate(without_word_lines(&lines, delimiter));
    }
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
        decimal_comma: decimal_commas(delimiter, &split[preamble_lines..]),
    }
}

/// Whether the numbers of a file are written with a decimal comma: always when its
/// delimiter is no comma; in a comma-delimited file (a European tool's export, every
/// field quoted), when a field shows a decimal comma that cannot be a thousands
/// separator ([`unambiguous_decimal_comma`]: `"12,5"`, `"1.013,25"`) and none is a
/// number with a decimal point (`12.5`). A `"1,234"` alone says neither: the point
/// stays, and it reads as no number, never silently as 1.234.
fn decimal_commas(delimiter: Delimiter, rows: &[Vec<String>]) -> bool {
    if delimiter != Delimiter::Byte(b',') {
        return true;
    }
    let fields = || rows.iter().flatten().map(|field| field.trim());
    fields().any(unambiguous_decimal_comma) && !fields().any(decimal_point)
}

/// A number whose one comma is a decimal comma whichever mark the file uses: digits
/// after it not a group of three (`12,5`, `-0,25`), or points grouping the whole part
/// in threes before it (`1.013,2`, `1.013,250`).
fn unambiguous_decimal_comma(field: &str) -> bool {
    let unsigned = field.strip_prefix(['-', '+']).unwrap_or(field);
    let Some((whole, fraction)) = unsigned.split_once(',') else { return false };
    let digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    let grouped = whole.contains('.') && {
        let mut groups = whole.split('.');
        let first = groups.next().unwrap_or("");
        digits(first) && first.len() <= 3 && groups.all(|group| digits(group) && group.len() == 3)
    };
    digits(fraction) && ((digits(whole) && fraction.len() != 3) || grouped)
}

/// A number with one decimal point and no comma whose digits after the point are not
/// a group of three (`12.5`; `1.013` may be a thousand grouped).
fn decimal_point(field: &str) -> bool {
    let unsigned = field.strip_prefix(['-', '+']).unwrap_or(field);
    let Some((whole, fraction)) = unsigned.split_once('.') else { return false };
    let digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
    digits(whole) && !fraction.is_empty() && digits(fraction) && fraction.len() != 3
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
        // Rows that start with numbers under a header are a table, not notes (Open-Meteo's
        // narrower `location_id,time,…` under its wider block of locations).
        let first_field = |line: &[u8]| split_line(line, Delimiter::Byte(delimiter)).into_iter().next();
        let rows_below = lines[at + 1..].iter().any(|line| first_field(line).is_some_and(|f| looks_numeric(&f)));
        width > 2 && rows_alike && narrower && !rows_below
    };
    (0..lines.len()).find(|&at| blank(&lines[at]) && notes_after(at)).unwrap_or(lines.len())
}

/// How many of `lines` (a whole input) come before the lines of words that end it, each
/// one field of words and nothing else (the Hong Kong Observatory's legend under its
/// rows, `*** 沒有數據/unavailable,,,,`; BADC-CSV's `end data`): notes, as the load
/// reads them. All of them when the line above is no row of several fields.
fn without_word_lines(lines: &[&[u8]], delimiter: Delimiter) -> usize {
    let blank = |line: &[u8]| line.trim_ascii().is_empty();
    let words = |line: &[u8]| {
        let fields = split_line(line, delimiter);
        is_word_line(fields.iter().map(|field| field.as_bytes()))
    };
    let mut end = lines.len();
    while end > 0 && (blank(lines[end - 1]) || words(lines[end - 1])) && lines.len() - end < FOOTER_LINES {
        end -= 1;
    }
    let row_above = end > 0 && split_line(lines[end - 1], delimiter).len() > 1;
    let any_words = lines[end..].iter().any(|line| !blank(line));
    if row_above && any_words { end } else { lines.len() }
}

/// Most lines of words at the end read as notes.
const FOOTER_LINES: usize = 100;

/// Whether a row's fields are one field of words without digits, the others blank (a
/// note under the rows, not a row: a row has its time). Beside blank fields, the words
/// are two or more: a lone word there may be a station whose row lost its values.
pub(crate) fn is_word_line<'a>(mut fields: impl Iterator<Item = &'a [u8]>) -> bool {
    let Some(first) = fields.next() else { return false };
    let text = String::from_utf8_lossy(first);
    let mut others = fields.peekable();
    let alone = others.peek().is_none();
    text.chars().any(char::is_alphabetic)
        && !text.chars().any(|c| c.is_ascii_digit())
        && (alone || text.split_whitespace().count() >= 2)
        && others.all(|field| field.trim_ascii().is_empty())
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
    let mut lines = preamble.iter().rev().map_while(|&line| comment(line)).filter(|text| !text.is_empty());
    let plausible = |names: &Vec<String>| {
        names.len() == body_fields
            && body_fields > 1
            && !names.iter().any(|name| looks_numeric(name))
            && names.iter().all(|name| !name.is_empty())
    };
    let unique = |names: &Vec<String>| names.iter().enumerate().all(|(i, name)| !names[..i].contains(name));
    let last = split_line(lines.next()?, delimiter);
    // A line of units under the names (NOAA NDBC's `#yr mo dy hr mn degT m/s m/s …`
    // under `#YY MM DD hh mm WDIR WSPD GST …`): its units repeat, the names do not.
    let above = lines.next().map(|line| split_line(line, delimiter)).filter(|above| plausible(above) && unique(above));
    match above {
        Some(names) if !unique(&last) => Some(names),
        _ => plausible(&last).then_some(last),
    }
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
mod tests;
