//! `quire agg DB [--station S] --every hour|day|month|year --measure M --fn
//! mean,min,max,count,sum [--from T --to T] [--format table|csv|jsonl] [--limit N]`:
//! aggregates of one measure per station and period, streamed over the B+tree by
//! [`quiredb_datasets::meteo::aggregate`] and printed as each bucket completes.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Result, bail};
use quiredb_datasets::meteo::aggregate::{AggregateQuery, Bucket, Every, aggregate, stored_measure_names};
use quiredb_datasets::meteo::fields::format_timestamp;

use super::meteo_output::{Format, OutputArgs, csv_line};
use super::meteo_query::{interval, open};

/// Arguments of `quire agg`.
#[derive(clap::Args)]
pub struct AggArgs {
    /// Database file.
    pub db: PathBuf,
    /// One station (default: every station).
    #[arg(long)]
    pub station: Option<String>,
    /// The bucket period.
    #[arg(long, value_enum)]
    pub every: EveryArg,
    /// The measure, as `load-csv --measures` names it: a name recorded at load time (see
    /// `quire stats`), that name without its unit (TEMP for "TEMP (C)"), or the 0-based
    /// column number of a file without header (4 for "column 5").
    #[arg(long)]
    pub measure: String,
    /// Functions, comma-separated: mean, min, max, count, sum.
    #[arg(long = "fn", default_value = "mean,min,max,count")]
    pub functions: String,
    /// First time (inclusive; a year such as 2013 is its first second; default: the beginning).
    #[arg(long)]
    pub from: Option<String>,
    /// Last time (inclusive; a year is through its last second; default: the end).
    #[arg(long)]
    pub to: Option<String>,
    /// Output format and limit (of buckets).
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `--every`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum EveryArg {
    /// Clock hours.
    Hour,
    /// Days (UTC).
    Day,
    /// Calendar months.
    Month,
    /// Calendar years.
    Year,
}

/// One aggregate function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Function {
    Mean,
    Min,
    Max,
    Count,
    Sum,
}

impl Function {
    fn parse(list: &str) -> Result<Vec<Function>> {
        let one = |name: &str| match name.trim() {
            "mean" | "avg" => Ok(Function::Mean),
            "min" => Ok(Function::Min),
            "max" => Ok(Function::Max),
            "count" => Ok(Function::Count),
            "sum" => Ok(Function::Sum),
            other => bail!("unknown function {other:?} in --fn; known: mean, min, max, count, sum"),
        };
        list.split(',').map(one).collect()
    }

    fn name(self) -> &'static str {
        match self {
            Function::Mean => "mean",
            Function::Min => "min",
            Function::Max => "max",
            Function::Count => "count",
            Function::Sum => "sum",
        }
    }

    /// The value for `bucket`; `None` without values (count is then 0).
    fn value(self, bucket: &Bucket) -> Option<f64> {
        match self {
            Function::Count => Some(bucket.count as f64),
            _ if bucket.count == 0 => None,
            Function::Mean => bucket.mean(),
            Function::Min => Some(bucket.min),
            Function::Max => Some(bucket.max),
            Function::Sum => Some(bucket.sum),
        }
    }
}

/// The stored name `given` means, in the forms `load-csv --measures` takes (see
/// [`AggArgs::measure`]); `given` itself when none fits, for `aggregate`'s error to name
/// the stored measures.
fn stored_measure(given: &str, names: &[String]) -> String {
    let wanted = given.trim();
    let bare = |name: &str| name.split(['(', '[']).next().unwrap_or(name).trim().to_owned();
    let column = wanted.parse::<usize>().ok().map(|index| format!("column {}", index + 1));
    let found = names
        .iter()
        .find(|name| name.eq_ignore_ascii_case(wanted))
        .or_else(|| names.iter().find(|name| bare(name).eq_ignore_ascii_case(wanted)))
        .or_else(|| column.and_then(|column| names.iter().find(|name| **name == column)));
    found.map_or_else(|| given.to_owned(), Clone::clone)
}

/// Runs `quire agg`.
pub fn run(args: AggArgs) -> Result<ExitCode> {
    let functions = Function::parse(&args.functions)?;
    let (from, to) = interval(args.from.as_deref(), args.to.as_deref())?;
    let query = AggregateQuery {
        station: args.station.clone(),
        from,
        to,
        every: match args.every {
            EveryArg::Hour => Every::Hour,
            EveryArg::Day => Every::Day,
            EveryArg::Month => Every::Month,
            EveryArg::Year => Every::Year,
        },
        measure: String::new(),
    };
    let db = open(&args.db)?;
    let txn = db.begin_read()?;
    let query = AggregateQuery { measure: stored_measure(&args.measure, &stored_measure_names(&txn)?), ..query };
    let started = Instant::now();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut printer =
        Printer { format: args.output.format, functions, limit: args.output.limit.unwrap_or(usize::MAX), printed: 0 };
    printer.header(&mut out)?;
    let mut failed = None;
    let buckets = aggregate(&txn, &query, &mut |bucket| match printer.bucket(&mut out, bucket) {
        Ok(more) => Ok(more),
        Err(error) => {
            failed = Some(error);
            Ok(false)
        }
    })?;
    if let Some(error) = failed {
        return Err(error);
    }
    out.flush()?;
    eprintln!(
        "{} buckets of {} in {:.3} ms",
        buckets.min(printer.printed as u64),
        args.measure,
        started.elapsed().as_secs_f64() * 1e3
    );
    Ok(ExitCode::SUCCESS)
}

/// Prints buckets as they come.
struct Printer {
    format: Format,
    functions: Vec<Function>,
    limit: usize,
    printed: usize,
}

impl Printer {
    fn header(&self, out: &mut impl Write) -> Result<()> {
        let names: Vec<&str> = self.functions.iter().map(|f| f.name()).collect();
        match self.format {
            Format::Table => writeln!(
                out,
                "{:<20} {:<16} {}",
                "station",
                "start",
                names.iter().map(|n| format!("{n:>12}")).collect::<String>()
            )?,
            Format::Csv => writeln!(out, "station,start,{}", names.join(","))?,
            Format::Jsonl => {}
        }
        Ok(())
    }

    /// Prints one bucket; false once the limit is reached.
    fn bucket(&mut self, out: &mut impl Write, bucket: &Bucket) -> Result<bool> {
        if self.printed >= self.limit {
            return Ok(false);
        }
        self.printed += 1;
        let mut start = Vec::new();
        format_timestamp(bucket.start, &mut start);
        let start = String::from_utf8_lossy(&start);
        let values: Vec<Option<f64>> = self.functions.iter().map(|f| f.value(bucket)).collect();
        let text = |value: &Option<f64>| value.map_or(String::new(), |v| format!("{}", (v * 1e6).round() / 1e6));
        match self.format {
            Format::Table => {
                let cells: String = values.iter().map(|v| format!("{:>12}", text(v))).collect();
                writeln!(out, "{:<20} {start:<16} {cells}", bucket.station)?;
            }
            Format::Csv => {
                let mut record = vec![bucket.station.clone(), start.into_owned()];
                record.extend(values.iter().map(text));
                out.write_all(&csv_line(&record)?)?;
            }
            Format::Jsonl => {
                let mut object = serde_json::Map::new();
                object.insert("station".into(), bucket.station.clone().into());
                object.insert("start".into(), start.into_owned().into());
                for (function, value) in self.functions.iter().zip(&values) {
                    let value = match function {
                        Function::Count => bucket.count.into(),
                        _ => (*value).into(),
                    };
                    object.insert(function.name().into(), value);
                }
                writeln!(out, "{}", serde_json::Value::Object(object))?;
            }
        }
        Ok(self.printed < self.limit)
    }
}

#[cfg(test)]
mod tests {
    use super::stored_measure;

    /// `--measure` finds a stored name by itself (case aside), without its unit, or by
    /// the 0-based column number of a file without header; anything else is kept.
    #[test]
    fn measure_forms_of_load_csv() {
        let names = ["TEMP (C)".to_owned(), "column 5".to_owned()];
        assert_eq!(stored_measure("temp (c)", &names), "TEMP (C)");
        assert_eq!(stored_measure("TEMP", &names), "TEMP (C)");
        assert_eq!(stored_measure("4", &names), "column 5");
        assert_eq!(stored_measure("5", &names), "5");
    }
}
