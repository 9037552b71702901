//! Output of the meteorological queries (`range`, `window`, `knn`, `agg`):
//! `--format table|csv|jsonl` and `--limit`.
//!
//! Records: `table` prints each stored line as loaded (kNN: distance, tab, line);
//! `csv` re-writes its fields as standard CSV (`,`, quoted where needed; kNN: distance
//! first); `jsonl` one object a line: `{"distance"?, "station"?, "time"?, "record",
//! "measures"}` (a range query's station and UTC time; the measures read with the
//! load's record layout when the database has one).

use std::io::Write;

use anyhow::Result;
use quiredb_datasets::meteo::aggregate::RecordLayout;
use quiredb_datasets::meteo::query::Found;

/// How answers are printed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Lines as loaded (agg: aligned columns).
    #[default]
    Table,
    /// Standard CSV.
    Csv,
    /// One JSON object a line.
    Jsonl,
}

/// The `--format` and `--limit` flags.
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Print at most this many answers.
    #[arg(long)]
    pub limit: Option<usize>,
}

/// What the records' fields mean: the layout and measure names, when known.
pub struct RecordMeaning {
    /// The load's record layout.
    pub layout: Option<RecordLayout>,
    /// The measure names.
    pub names: Vec<String>,
    /// The delimiter of the stored lines (`,` when unknown).
    pub delimiter: u8,
}

/// Writes `found` (at most `--limit`) in `--format`.
pub fn write_records(out: &mut impl Write, found: &[Found], output: OutputArgs, meaning: &RecordMeaning) -> Result<()> {
    for answer in found.iter().take(output.limit.unwrap_or(usize::MAX)) {
        match output.format {
            Format::Table => {
                if let Some(distance) = answer.distance {
                    write!(out, "{distance:.4}\t")?;
                }
                out.write_all(&answer.raw)?;
                out.write_all(b"\n")?;
            }
            Format::Csv => {
                let mut fields: Vec<Vec<u8>> =
                    answer.distance.map(|d| format!("{d}").into_bytes()).into_iter().collect();
                fields.extend(split(&answer.raw, meaning.delimiter));
                out.write_all(&csv_line(&fields)?)?;
            }
            Format::Jsonl => {
                let mut object = serde_json::Map::new();
                if let Some(distance) = answer.distance {
                    object.insert("distance".into(), distance.into());
                }
                if let Some((station, time)) = &answer.key {
                    let mut text = Vec::new();
                    quiredb_datasets::meteo::fields::format_timestamp(*time, &mut text);
                    object.insert("station".into(), station.clone().into());
                    object.insert("time".into(), String::from_utf8_lossy(&text).into_owned().into());
                }
                object.insert("record".into(), String::from_utf8_lossy(&answer.raw).into_owned().into());
                if let Some(layout) = &meaning.layout {
                    let measures = meaning
                        .names
                        .iter()
                        .enumerate()
                        .map(|(i, name)| (name.clone(), layout.value(&answer.raw, i).into()));
                    object.insert("measures".into(), serde_json::Value::Object(measures.collect()));
                }
                writeln!(out, "{}", serde_json::Value::Object(object))?;
            }
        }
    }
    Ok(())
}

/// `fields` as one CSV line (`,`, quoted where needed, `\n` at the end).
pub fn csv_line<T: AsRef<[u8]>>(fields: &[T]) -> Result<Vec<u8>> {
    let mut writer = csv::WriterBuilder::new().flexible(true).from_writer(Vec::new());
    writer.write_record(fields)?;
    writer.into_inner().map_err(|error| anyhow::anyhow!("{}", error.error()))
}

/// The fields of a stored line.
fn split(raw: &[u8], delimiter: u8) -> Vec<Vec<u8>> {
    let mut reader = csv::ReaderBuilder::new().has_headers(false).delimiter(delimiter).from_reader(raw);
    let mut record = csv::ByteRecord::new();
    match reader.read_byte_record(&mut record) {
        Ok(true) => record.iter().map(<[u8]>::to_vec).collect(),
        _ => vec![raw.to_vec()],
    }
}
