//! The keyword options of `Database.load_csv`: exactly the column-mapping flags of
//! `quire load-csv` (`preset="beijing"`, `station="site"`, `time="year,month,day,hour"`,
//! `no_header=True`, `na=["-99", "M"]`, …), turned into command-line flags and parsed
//! by the CLI's own [`MappingArgs`], so the names, defaults and errors are the same.

use clap::Parser;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyTuple};
use quiredb::datasets::meteo::Schema;
use quiredb::load_schema::MappingArgs;

/// The mapping flags alone, as clap parses them.
#[derive(Parser)]
#[command(name = "load_csv", no_binary_name = true, disable_help_flag = true)]
struct Mapping {
    #[command(flatten)]
    mapping: MappingArgs,
}

/// The schema the keyword `options` describe (none: the generator's layout).
pub fn schema(options: Option<&Bound<'_, PyDict>>) -> PyResult<Schema> {
    let mut flags = Vec::new();
    for (key, value) in options.into_iter().flat_map(|dict| dict.iter()) {
        let flag = format!("--{}", key.extract::<String>()?.replace('_', "-"));
        if value.is_none() {
            continue;
        }
        if let Ok(set) = value.cast::<PyBool>() {
            if set.is_true() {
                flags.push(flag);
            }
            continue;
        }
        flags.push(format!("{flag}={}", text(&value)?));
    }
    let parsed = Mapping::try_parse_from(&flags).map_err(|error| {
        let message = error.to_string();
        let first = message.lines().next().unwrap_or_default().trim_start_matches("error: ").to_owned();
        PyValueError::new_err(format!("load_csv options: {first}"))
    })?;
    parsed.mapping.schema().map_err(|error| PyValueError::new_err(format!("load_csv options: {error:#}")))
}

/// A value as its flag takes it: lists and tuples comma-joined, anything else `str()`.
fn text(value: &Bound<'_, PyAny>) -> PyResult<String> {
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let parts: Vec<String> = value.try_iter()?.map(|item| item?.str()?.extract()).collect::<PyResult<_>>()?;
        return Ok(parts.join(","));
    }
    value.str()?.extract()
}
