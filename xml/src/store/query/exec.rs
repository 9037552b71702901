//! Running a plan: location steps as joins over partition streams, predicates as
//! semi-joins, all on lists of labels in document order taken from a pool that the
//! prepared query keeps, so a second run allocates nothing.
//!
//! A path is evaluated left to right. A complete step (see `plan.rs`) that the plan
//! scans is not joined: its nodes are its partitions' labels on its paths, and when
//! the next step is scanned too they are not even read. A predicate path `s1/…/sk` from context `C` is
//! evaluated the way it is defined: `X = join(C, s1)` (only inside `C`'s subtrees),
//! `X` filtered by `s1`'s predicates, by the rest of the path (recursively) or by the
//! comparison, then `semi(C, X)` keeps the context nodes that reached something.
//!
//! Read next: `join.rs` (the operators), `value.rs` (comparisons).

use super::join::{self, minus, semi, union};
use super::plan::{Axis, Comparison, Plan, Pred, Source, Stats, StepPlan};
use super::stream::{SourceStream, StreamBuffers};
use super::value::ValueReader;
use crate::error::Result;
use crate::store::XmlStore;
use crate::store::format::Kind;
use crate::store::record::Label;
use quiredb_engine::PageRead;
use std::time::Instant;

/// The reusable state of a prepared query.
#[derive(Debug, Default)]
pub struct Exec {
    lists: Vec<Vec<Label>>,
    stack: Vec<Label>,
    index_stack: Vec<usize>,
    marks: Vec<bool>,
    streams: StreamBuffers,
    pub values: ValueReader,
}

impl Exec {
    /// Evaluates `plan` into `out` (sorted by pre, unique).
    pub fn run<T: PageRead>(&mut self, store: &XmlStore<'_, T>, plan: &Plan, out: &mut Vec<Label>) -> Result<()> {
        out.clear();
        for branch in &plan.branches {
            let result = self.branch(store, plan, branch)?;
            if out.is_empty() {
                out.extend_from_slice(&result);
            } else {
                let mut merged = self.take();
                union(out, &result, &mut merged);
                out.clear();
                out.extend_from_slice(&merged);
                self.give(merged);
            }
            self.give(result);
        }
        Ok(())
    }

    /// Number of nodes `plan` selects, read from the summary when the plan allows.
    pub fn count<T: PageRead>(&mut self, store: &XmlStore<'_, T>, plan: &Plan) -> Result<u64> {
        if let [branch] = plan.branches.as_slice() {
            match branch.last() {
                None => return Ok(plan.roots.count),
                Some(last) if last.complete && last.predicates.is_empty() => return Ok(last.source.count),
                _ => {}
            }
        }
        let mut out = self.take();
        self.run(store, plan, &mut out)?;
        let n = out.len() as u64;
        self.give(out);
        Ok(n)
    }

    fn take(&mut self) -> Vec<Label> {
        self.lists.pop().unwrap_or_default()
    }

    fn give(&mut self, mut list: Vec<Label>) {
        list.clear();
        self.lists.push(list);
    }

    fn copy(&mut self, list: &[Label]) -> Vec<Label> {
        let mut out = self.take();
        out.extend_from_slice(list);
        out
    }

    /// The nodes one path selects from the document nodes.
    fn branch<T: PageRead>(&mut self, store: &XmlStore<'_, T>, plan: &Plan, steps: &[StepPlan]) -> Result<Vec<Label>> {
        Ok(self.steps_from(store, &plan.roots, steps, None, None)?.1)
    }

    /// Runs `steps` from `current` (the document nodes when `None`). With `split`,
    /// stops before the first step that joins a context of at least `split.0` labels
    /// and returns its index with that context; otherwise returns `steps.len()` and the
    /// result. `split.1` makes every step join (a part of a parallel run must not scan
    /// whole partitions).
    pub(super) fn steps_from<T: PageRead>(
        &mut self,
        store: &XmlStore<'_, T>,
        roots: &Source,
        steps: &[StepPlan],
        mut current: Option<Vec<Label>>,
        split: Option<(usize, bool)>,
    ) -> Result<(usize, Vec<Label>)> {
        let join_all = split.is_some_and(|(_, all)| all);
        let mut complete: &Source = roots;
        for (k, step) in steps.iter().enumerate() {
            let start = Instant::now();
            let scan = step.scan && !join_all;
            let mut next = if scan {
                let next_scans = steps.get(k + 1).is_some_and(|s| s.scan && !join_all);
                if step.predicates.is_empty() && next_scans {
                    complete = &step.source;
                    continue;
                }
                self.scan(store, &step.source)?
            } else {
                let context = match current.take() {
                    Some(list) => list,
                    None => self.scan(store, complete)?,
                };
                if step.axis == Axis::Itself {
                    context
                } else if split.is_some_and(|(min, all)| !all && context.len() >= min) {
                    return Ok((k, context));
                } else {
                    let out = self.join(store, &context, step)?;
                    self.give(context);
                    out
                }
            };
            next = self.filter_all(store, next, &step.predicates)?;
            record(&step.stats, next.len(), start);
            if let Some(old) = current.replace(next) {
                self.give(old);
            }
        }
        let result = match current {
            Some(list) => list,
            None => self.scan(store, complete)?,
        };
        Ok((steps.len(), result))
    }

    /// Every label of `source` on its paths.
    fn scan<T: PageRead>(&mut self, store: &XmlStore<'_, T>, source: &Source) -> Result<Vec<Label>> {
        let mut out = self.take();
        let mut stream = SourceStream::open(store, source, &mut self.streams);
        while let Some(label) = stream.peek()? {
            out.push(label);
            stream.advance()?;
        }
        Ok(out)
    }

    /// The nodes of `step`'s source related to some node of `context`.
    fn join<T: PageRead>(&mut self, store: &XmlStore<'_, T>, context: &[Label], step: &StepPlan) -> Result<Vec<Label>> {
        let mut out = self.take();
        if step.source.parts.is_empty() {
            return Ok(out);
        }
        let paths = &store.dictionary.paths;
        let is_attribute = |l: &Label| paths[l.path as usize].kind == Kind::Attribute;
        let limit = join::reach(context);
        let mut stream = SourceStream::open(store, &step.source, &mut self.streams).limit(limit);
        join::join(context, step.axis, &mut stream, &is_attribute, &mut out, &mut self.stack)?;
        Ok(out)
    }

    fn filter_all<T: PageRead>(
        &mut self,
        store: &XmlStore<'_, T>,
        mut list: Vec<Label>,
        predicates: &[Pred],
    ) -> Result<Vec<Label>> {
        for predicate in predicates {
            if list.is_empty() {
                break;
            }
            list = self.filter(store, list, predicate)?;
        }
        Ok(list)
    }

    /// The labels of `list` for which `predicate` holds.
    fn filter<T: PageRead>(
        &mut self,
        store: &XmlStore<'_, T>,
        mut list: Vec<Label>,
        predicate: &Pred,
    ) -> Result<Vec<Label>> {
        match predicate {
            Pred::Const(true) => Ok(list),
            Pred::Const(false) => {
                list.clear();
                Ok(list)
            }
            Pred::And(parts) => self.filter_all(store, list, parts),
            Pred::Or(parts) => {
                let mut found = self.take();
                for part in parts {
                    let copy = self.copy(&list);
                    let kept = self.filter(store, copy, part)?;
                    let mut merged = self.take();
                    union(&found, &kept, &mut merged);
                    self.give(kept);
                    self.give(std::mem::replace(&mut found, merged));
                }
                self.give(list);
                Ok(found)
            }
            Pred::Not(inner) => {
                let copy = self.copy(&list);
                let kept = self.filter(store, copy, inner)?;
                let mut out = self.take();
                minus(&list, &kept, &mut out);
                self.give(kept);
                self.give(list);
                Ok(out)
            }
            Pred::Path { steps, compare, stats } => {
                let start = Instant::now();
                let out = self.exists(store, &list, steps, compare.as_ref())?;
                record(stats, out.len(), start);
                self.give(list);
                Ok(out)
            }
        }
    }

    /// The labels of `context` from which `steps` select some node (that passes
    /// `compare`).
    fn exists<T: PageRead>(
        &mut self,
        store: &XmlStore<'_, T>,
        context: &[Label],
        steps: &[StepPlan],
        compare: Option<&Comparison>,
    ) -> Result<Vec<Label>> {
        let Some((step, rest)) = steps.split_first() else { return Ok(self.copy(context)) };
        let start = Instant::now();
        let probe = match step.axis {
            Axis::Descendant => true,
            Axis::Child => !join::nested(context),
            Axis::SelfOrDescendant | Axis::Itself => false,
        };
        if rest.is_empty() && compare.is_none() && step.predicates.is_empty() && probe {
            let mut out = self.take();
            if !step.source.parts.is_empty() {
                let limit = join::reach(context);
                let mut stream = SourceStream::open(store, &step.source, &mut self.streams).limit(limit);
                join::having(context, step.axis, &mut stream, &mut out)?;
            }
            record(&step.stats, out.len(), start);
            return Ok(out);
        }
        let mut found = if step.axis == Axis::Itself { self.copy(context) } else { self.join(store, context, step)? };
        found = self.filter_all(store, found, &step.predicates)?;
        if !rest.is_empty() {
            let deeper = self.exists(store, &found, rest, compare)?;
            self.give(std::mem::replace(&mut found, deeper));
        } else if let Some(comparison) = compare {
            let mut kept = self.take();
            self.values.filter(store, &found, comparison, &mut kept)?;
            self.give(std::mem::replace(&mut found, kept));
        }
        record(&step.stats, found.len(), start);
        if step.axis == Axis::Itself {
            return Ok(found);
        }
        let paths = &store.dictionary.paths;
        let is_attribute = |l: &Label| paths[l.path as usize].kind == Kind::Attribute;
        let mut out = self.take();
        semi(context, &found, step.axis, &is_attribute, &mut out, &mut self.index_stack, &mut self.marks);
        self.give(found);
        Ok(out)
    }
}

/// Adds one call producing `rows` rows since `start` to `stats`.
fn record(stats: &Stats, rows: usize, start: Instant) {
    stats.add(rows as u64, start.elapsed().as_nanos() as u64);
}
