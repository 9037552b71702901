//! XPath over the store: the query text is parsed (`crate::xpath`), compiled against
//! the collection's path summary (`plan.rs`) and run as structural joins over the
//! partition index (`exec.rs`, `join.rs`), with comparisons answered from the value
//! index or the document index (`value.rs`).
//!
//! ```text
//! store.prepare("//item[@featured]/name")      parse + compile (path sets, sources)
//!      .run()                                   labels in document order, no duplicates
//!      .run_into(&mut result_set)               the same into a recycled ResultSet
//!      .count()                                 from the summary when the plan allows
//! ```
//!
//! A collection is one label space: an absolute path starts at every document node at
//! once, and the results of all documents come out in document order (the reference
//! evaluator's rule), whatever the number of documents.
//!
//! A [`Prepared`] query keeps its plan and every buffer it used: running it again
//! allocates nothing (T8 counts it). It borrows its store, like every handle of a
//! transaction.
//!
//! Read next: `plan.rs`, then `exec.rs`.

mod exec;
mod explain;
mod general;
mod join;
mod parallel;
mod paths;
mod plan;
mod stream;
mod value;

#[cfg(test)]
mod full_tests;
#[cfg(test)]
mod random_tests;
#[cfg(test)]
mod tests;

use crate::error::{Error, Result};
use crate::store::XmlStore;
use crate::store::record::Label;
use crate::xpath::bindings::Bindings;
use crate::xpath::eval::{self, Value};
use crate::xpath::expr::{Expr, Type};
use crate::xpath::names;
use crate::xpath::{self, lexer, subset};
pub use paths::local_name;

use exec::Exec;
use general::StoreTree;
use plan::Plan;
use quiredb_engine::{PageRead, ResultSet};

/// A compiled query over one collection, with its buffers (see the module docs).
pub struct Prepared<'s, 't, T: PageRead> {
    store: &'s XmlStore<'t, T>,
    expr: Expr,
    /// The join plan when the whole expression is structural.
    plan: Option<Plan>,
    exec: Exec,
    /// The store as the general evaluator sees it, with its caches.
    tree: StoreTree<'s, 't, T>,
    result: Vec<Label>,
}

/// The value of an XPath expression over the store: labels, or an atomic value.
pub type XPathValue = Value<Label>;

impl<'t, T: PageRead> XmlStore<'t, T> {
    /// Parses and compiles `xpath` (any XPath 1.0 expression but the namespace axis;
    /// variables need [`XmlStore::prepare_with`]) for this collection. Errors name the
    /// construct and its column when the query is malformed or refused. A prefix in a
    /// name test (`dc:title`) stands for the one URI the collection's names use with
    /// it: see [`XmlStore::prepare_with`] to bind prefixes.
    pub fn prepare(&self, xpath: &str) -> Result<Prepared<'_, 't, T>> {
        self.prepare_with(xpath, &Bindings::new())
    }

    /// [`XmlStore::prepare`] with prefixes bound to namespace URIs and variables to
    /// values. A prefix `bindings` lacks stands for the one URI the collection's names
    /// use with it (an error when they use none or several), `xml` for the XML
    /// namespace; `$name` is its bound value, as a literal would be (so the prepared
    /// query is specific to the values: prepare again for others).
    pub fn prepare_with(&self, xpath: &str, bindings: &Bindings) -> Result<Prepared<'_, 't, T>> {
        let mut expr = xpath::parse_expr_with(xpath, bindings)?;
        let dict = self.dictionary();
        if !dict.uris_known {
            if let Some(at) = names::first_needing_format_2(&expr).or(bindings.is_strict().then_some(0)) {
                return Err(self.without_uris(lexer::column(xpath, at)));
            }
        } else {
            names::resolve(&mut expr, xpath, bindings, &mut |prefix| Ok(dict.prefix_uris(prefix)))?;
        }
        let plan = subset::lower(&expr).map(|query| Plan::compile(self, &query));
        let tree = StoreTree::new(self);
        Ok(Prepared { store: self, expr, plan, exec: Exec::default(), tree, result: Vec::new() })
    }

    /// The error for a query about namespaces (a namespaced name test, `lang()`,
    /// `namespace-uri()`) or IDs (`id()`) over a collection of format 1, which kept
    /// neither.
    pub(crate) fn without_uris(&self, column: usize) -> Error {
        Error::XPathUnsupported {
            column,
            construct: format!(
                "namespaces or IDs in collection {:?}: an older QuireDB loaded it without namespace URIs and ID attributes; load it again",
                self.name()
            ),
        }
    }

    /// Runs `xpath` once, the pres of its result into `out` (cleared first).
    pub fn query(&self, xpath: &str, out: &mut ResultSet) -> Result<()> {
        self.prepare(xpath)?.run_into(out)
    }
}

impl<T: PageRead> Prepared<'_, '_, T> {
    /// Runs the query; its nodes' labels in document order without duplicates. An
    /// expression that gives a number, a string or a boolean is
    /// [`Error::XPathNotNodes`]: see [`Prepared::value`].
    pub fn run(&mut self) -> Result<&[Label]> {
        match &self.plan {
            Some(plan) => self.exec.run(self.store, plan, &mut self.result)?,
            None => match eval::evaluate(&mut self.tree, &self.expr)? {
                Value::Nodes(nodes) => self.result = nodes,
                other => return Err(Error::XPathNotNodes { found: type_name(&other) }),
            },
        }
        Ok(&self.result)
    }

    /// Evaluates the expression, whatever its type.
    pub fn value(&mut self) -> Result<XPathValue> {
        if self.plan.is_some() || self.expr.result_type() == Type::Nodes {
            return Ok(Value::Nodes(self.run()?.to_vec()));
        }
        eval::evaluate(&mut self.tree, &self.expr)
    }

    /// The string form of a value (nodes: the first node's string value), as XPath's
    /// `string()` gives it.
    pub fn value_string(&mut self, value: &XPathValue) -> Result<String> {
        eval::value_to_string(&mut self.tree, value)
    }

    /// The static type of the expression's value.
    pub fn result_type(&self) -> Type {
        self.expr.result_type()
    }

    /// Runs the query into `out` (cleared first): one row per node, its id the node's
    /// pre.
    pub fn run_into(&mut self, out: &mut ResultSet) -> Result<()> {
        self.run()?;
        out.clear();
        for label in &self.result {
            out.push(label.pre, 0.0);
        }
        Ok(())
    }

    /// Runs the query with up to `threads` threads when its plan allows (see
    /// `parallel.rs`); each thread reads through a transaction from `begin`, which
    /// must be of the same snapshot as the store's (else, one thread runs it all).
    /// Allocates, unlike [`Prepared::run`] run again.
    pub fn run_parallel<U: PageRead>(
        &mut self,
        threads: usize,
        begin: impl Fn() -> Result<U> + Sync,
    ) -> Result<&[Label]> {
        match &self.plan {
            Some(plan) => parallel::run(&mut self.exec, self.store, plan, threads, &begin, &mut self.result)?,
            None => return self.run(),
        }
        Ok(&self.result)
    }

    /// Number of nodes the query selects, without listing them when the path summary
    /// knows it.
    pub fn count(&mut self) -> Result<u64> {
        match &self.plan {
            Some(plan) => self.exec.count(self.store, plan),
            None => Ok(self.run()?.len() as u64),
        }
    }

    /// Appends the XPath string value of node `pre` to `out`, with the query's reused
    /// buffers.
    pub fn string_value(&mut self, pre: u64, out: &mut Vec<u8>) -> Result<()> {
        self.exec.values.string_value(self.store, pre, out)
    }

    /// The plan, one operator a line, with rows and time of the runs so far.
    pub fn explain(&self) -> String {
        match &self.plan {
            Some(plan) => plan.explain(&self.store.dictionary().names),
            None => self.tree.explain(&self.expr),
        }
    }

    /// The parsed expression.
    pub fn expr(&self) -> &Expr {
        &self.expr
    }
}

fn type_name(value: &XPathValue) -> &'static str {
    match value {
        Value::Nodes(_) => "node-set",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Boolean(_) => "boolean",
    }
}
