//! `quire xpath-ref PATH 'QUERY' [--count] [--ns PREFIX=URI]… [--var NAME=VALUE]…
//! [--var-number NAME=NUMBER]…`: the reference XPath evaluator on files.
//!
//! PATH is one XML file or a folder whose `.xml` files, in name order, form one
//! collection. Prints each result's string value on its own line (`\` and line breaks
//! escaped as `\\`, `\n`, `\r` so that one line is one result), or with `--count` only
//! the number of results. An expression whose value is a number, a string or a boolean
//! (`count(//a)`) prints that value. A closed pipe (`| head`) ends output quietly.
//!
//! Read next: `xml/src/xpath/eval.rs` (the semantics), `xml/src/reference/` (the DOM), `xml/src/collection.rs` (loading).

use std::io::{BufWriter, ErrorKind, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use quiredb_xml::xpath::eval::Value;
use quiredb_xml::{collection, reference, xpath};

/// Arguments of `quire xpath-ref`.
#[derive(clap::Args)]
pub struct Args {
    /// An XML file, or a folder whose .xml files (in name order) form one collection.
    path: PathBuf,
    /// The XPath 1.0 expression. A query that starts with `-` (`-count(//a)`) is read as the query,
    /// not as an option.
    #[arg(allow_hyphen_values = true)]
    query: String,
    /// Print only the number of results.
    #[arg(long)]
    count: bool,
    #[command(flatten)]
    bindings: super::xml_query::BindingArgs,
}

/// Runs the reference evaluator and prints the results.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let bindings = args.bindings.bindings();
    let mut expr = xpath::parse_expr_with(&args.query, &bindings)?;
    let sources = collection::load(&args.path)?;
    let docs = collection::parse_all(&sources)?;
    reference::resolve_namespaces(&mut expr, &args.query, &bindings, &docs)?;
    let value = reference::evaluate_expr(&expr, &docs);
    let mut out = BufWriter::new(std::io::stdout().lock());
    let written = match &value {
        Value::Nodes(items) if args.count => writeln!(out, "{}", items.len()),
        Value::Nodes(items) => items.iter().try_for_each(|item| writeln!(out, "{}", escape(&item.string_value()))),
        other => writeln!(out, "{}", escape(&reference::value_string(other))),
    };
    match written.and_then(|()| out.flush()) {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        other => other.context("cannot write to standard output").map(|()| ExitCode::SUCCESS),
    }
}

/// One result per line: escape the characters that would break lines.
fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('\n', "\\n").replace('\r', "\\r")
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn one_result_per_line_whatever_its_text() {
        assert_eq!(escape("a\nb\r\\c"), "a\\nb\\r\\\\c");
        assert_eq!(escape("plain"), "plain");
    }
}
