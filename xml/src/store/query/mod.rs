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
mod join;
mod parallel;
mod paths;
mod plan;
mod stream;
mod value;

#[cfg(test)]
mod random_tests;
#[cfg(test)]
mod tests;

use crate::error::Result;
use crate::store::XmlStore;
use crate::store::record::Label;
use crate::xpath::{self, Query};
use exec::Exec;
use plan::Plan;
use quiredb_engine::{PageRead, ResultSet};

/// A compiled query over one collection, with its buffers (see the module docs).
pub struct Prepared<'s, 't, T: PageRead> {
    store: &'s XmlStore<'t, T>,
    query: Query,
    plan: Plan,
    exec: Exec,
    result: Vec<Label>,
}

impl<'t, T: PageRead> XmlStore<'t, T> {
    /// Parses and compiles `xpath` for this collection. Errors name the construct and
    /// its column when the query is malformed or outside the supported subset.
    pub fn prepare(&self, xpath: &str) -> Result<Prepared<'_, 't, T>> {
        let query = xpath::parse(xpath)?;
        let plan = Plan::compile(self, &query);
        Ok(Prepared { store: self, query, plan, exec: Exec::default(), result: Vec::new() })
    }

    /// Runs `xpath` once, the pres of its result into `out` (cleared first).
    pub fn query(&self, xpath: &str, out: &mut ResultSet) -> Result<()> {
        self.prepare(xpath)?.run_into(out)
    }
}

impl<T: PageRead> Prepared<'_, '_, T> {
    /// Runs the query; its nodes' labels in document order without duplicates.
    pub fn run(&mut self) -> Result<&[Label]> {
        self.exec.run(self.store, &self.plan, &mut self.result)?;
        Ok(&self.result)
    }

    /// Runs the query into `out` (cleared first): one row per node, its id the node's
    /// pre.
    pub fn run_into(&mut self, out: &mut ResultSet) -> Result<()> {
        self.exec.run(self.store, &self.plan, &mut self.result)?;
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
        parallel::run(&mut self.exec, self.store, &self.plan, threads, &begin, &mut self.result)?;
        Ok(&self.result)
    }

    /// Number of nodes the query selects, without listing them when the path summary
    /// knows it.
    pub fn count(&mut self) -> Result<u64> {
        self.exec.count(self.store, &self.plan)
    }

    /// Appends the XPath string value of node `pre` to `out`, with the query's reused
    /// buffers.
    pub fn string_value(&mut self, pre: u64, out: &mut Vec<u8>) -> Result<()> {
        self.exec.values.string_value(self.store, pre, out)
    }

    /// The plan, one operator a line, with rows and time of the runs so far.
    pub fn explain(&self) -> String {
        self.plan.explain(&self.store.dictionary().names)
    }

    /// The parsed query.
    pub fn query(&self) -> &Query {
        &self.query
    }
}
