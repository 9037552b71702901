//! Parquet input of `quire load-csv` (feature `parquet`): a Parquet file read as the
//! CSV text of its rows, so that every column option of the CSV loader (station, time
//! and its format, measures, missing markers, wide and variable-column layouts) applies
//! unchanged and the stored records are the same lines a CSV export of the file gives.
//!
//! [`csv_stream`] renders the record batches one at a time: a header of the column
//! names, then one line per row, fields written by `arrow-cast`'s display (numbers as
//! written, timestamps in ISO 8601 with `Z` or their offset (named zones too), nulls empty, which the
//! loader reads as missing) and quoted by the `csv` crate where needed. Messages about a
//! bad value name "line N": row N − 1 of the file (the header is line 1).

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use arrow_cast::display::{ArrayFormatter, FormatOptions};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};

use super::rendered::{Render, Rendered, write_csv};
use crate::error::{Error, Result};

/// True for a `.parquet` (or `.parq`) file name.
pub fn is_parquet(path: &Path) -> bool {
    path.extension()
        .and_then(|extension| extension.to_str())
        .is_some_and(|extension| extension.eq_ignore_ascii_case("parquet") || extension.eq_ignore_ascii_case("parq"))
}

/// The Parquet file at `path` as a stream of CSV text.
pub fn csv_stream(path: &Path) -> Result<Box<dyn Read>> {
    let file = File::open(path)?;
    let bad = |error: parquet::errors::ParquetError| Error::InFile {
        file: path.display().to_string(),
        source: Box::new(Error::Parquet(error)),
    };
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(bad)?;
    let names: Vec<String> = builder.schema().fields().iter().map(|field| field.name().clone()).collect();
    let reader = builder.build().map_err(bad)?;
    let mut header = Vec::new();
    write_csv(&mut header, |writer| writer.write_record(&names).map_err(io::Error::other))?;
    Ok(Box::new(Rendered::new(Batches(reader), header)))
}

/// A Parquet file's record batches, rendered as CSV text a batch at a time.
struct Batches(ParquetRecordBatchReader);

impl Render for Batches {
    fn render_next(&mut self, out: &mut Vec<u8>) -> io::Result<bool> {
        let Some(batch) = self.0.next() else { return Ok(false) };
        let batch = batch.map_err(io::Error::other)?;
        let options = FormatOptions::default().with_null("");
        let formatters: Vec<ArrayFormatter<'_>> = batch
            .columns()
            .iter()
            .map(|column| ArrayFormatter::try_new(column.as_ref(), &options))
            .collect::<std::result::Result<_, _>>()
            .map_err(io::Error::other)?;
        let mut fields: Vec<String> = vec![String::new(); formatters.len()];
        write_csv(out, |writer| {
            for row in 0..batch.num_rows() {
                for (field, formatter) in fields.iter_mut().zip(&formatters) {
                    field.clear();
                    std::fmt::write(field, format_args!("{}", formatter.value(row))).map_err(io::Error::other)?;
                }
                writer.write_record(&fields).map_err(io::Error::other)?;
            }
            Ok(())
        })?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Float64Array, RecordBatch, StringArray, TimestampSecondArray};
    use parquet::arrow::ArrowWriter;

    use super::*;

    #[test]
    fn rows_become_csv_lines_with_nulls_empty_and_quotes_where_needed() {
        // Proves: the text a Parquet file turns into is the header and one CSV line per
        // row, in order, whatever the number of batches.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.parquet");
        let columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from(vec!["a", "b, c", "d"])),
            Arc::new(TimestampSecondArray::from(vec![0, 3600, 7200]).with_timezone("UTC")),
            Arc::new(Float64Array::from(vec![Some(1.5), None, Some(-2.0)])),
        ];
        let batch = RecordBatch::try_from_iter(["station", "time", "temp"].into_iter().zip(columns)).unwrap();
        let mut writer = ArrowWriter::try_new(File::create(&path).unwrap(), batch.schema(), None).unwrap();
        writer.write(&batch.slice(0, 2)).unwrap();
        writer.flush().unwrap();
        writer.write(&batch.slice(2, 1)).unwrap();
        writer.close().unwrap();
        let mut text = String::new();
        csv_stream(&path).unwrap().read_to_string(&mut text).unwrap();
        assert_eq!(
            text,
            "station,time,temp\na,1970-01-01T00:00:00Z,1.5\n\"b, c\",1970-01-01T01:00:00Z,\nd,1970-01-01T02:00:00Z,-2.0\n"
        );
        assert!(is_parquet(&path) && !is_parquet(Path::new("w.csv")));
    }

    #[test]
    fn a_file_that_is_not_parquet_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.parquet");
        std::fs::write(&path, b"station,time\n").unwrap();
        let error = csv_stream(&path).err().expect("not Parquet");
        assert!(error.to_string().contains("bad.parquet"), "{error}");
    }
}
