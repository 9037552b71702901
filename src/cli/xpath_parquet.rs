//! `quire xpath DB NAME QUERY --format parquet --out FILE` (feature `parquet`): the
//! result nodes as a Parquet file, one row per node in document order: `pre` (the node's
//! number), `size` (descendants), `level`, `name` (the last step of its path: `item`,
//! `@id`, `text()`), `path` and `value` (its XPath string value).

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use arrow_array::builder::{StringBuilder, UInt32Builder, UInt64Builder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use quiredb_engine::PageRead;
use quiredb_xml::store::{Label, Prepared, XmlStore};

/// `--format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Apache Parquet.
    Parquet,
}

/// Writes the nodes of `labels` to `path`; returns their number.
pub fn write<T: PageRead>(
    store: &XmlStore<'_, T>,
    prepared: &mut Prepared<'_, '_, T>,
    labels: &[Label],
    path: &Path,
) -> Result<usize> {
    let dict = store.dictionary();
    let (mut pre, mut size, mut level) = (UInt64Builder::new(), UInt64Builder::new(), UInt32Builder::new());
    let (mut name, mut path_text, mut value) = (StringBuilder::new(), StringBuilder::new(), StringBuilder::new());
    let mut text = Vec::new();
    for label in labels {
        pre.append_value(label.pre);
        size.append_value(label.size);
        level.append_value(label.level);
        name.append_value(dict.step_text(label.path));
        path_text.append_value(dict.path_text(label.path));
        text.clear();
        prepared.string_value(label.pre, &mut text)?;
        value.append_value(String::from_utf8_lossy(&text));
    }
    let schema = Arc::new(Schema::new(vec![
        Field::new("pre", DataType::UInt64, false),
        Field::new("size", DataType::UInt64, false),
        Field::new("level", DataType::UInt32, false),
        Field::new("name", DataType::Utf8, false),
        Field::new("path", DataType::Utf8, false),
        Field::new("value", DataType::Utf8, false),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(pre.finish()),
        Arc::new(size.finish()),
        Arc::new(level.finish()),
        Arc::new(name.finish()),
        Arc::new(path_text.finish()),
        Arc::new(value.finish()),
    ];
    let batch = RecordBatch::try_new(Arc::clone(&schema), columns)?;
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut writer = ArrowWriter::try_new(file, schema, None)?;
    writer.write(&batch)?;
    writer.close()?;
    Ok(labels.len())
}
