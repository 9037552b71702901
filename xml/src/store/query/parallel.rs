//! A query split across threads.
//!
//! Every axis the engine answers goes down the tree (child, descendant, self), so once
//! a path's context is known, the rest of the path can be run on disjoint parts of it
//! independently: each part's results lie inside its own subtrees, and the parts'
//! results concatenated are in document order without duplicates. A run therefore
//! goes on one thread until a join's context holds at least [`SPLIT_AT`] labels, cuts
//! that context into one part per thread — only between subtrees, never inside one —
//! and runs the rest of the path on each part.
//!
//! A thread reads through its own transaction (transactions are not shared between
//! threads) which must be of the same snapshot, checked by [`PageRead::snapshot_token`];
//! when it is not, or the context never grows large, the query runs on one thread.
//! The parts use their own buffers: a parallel run allocates, unlike a run again on
//! one thread.
//!
//! Read next: `exec.rs` (`steps_from`, which both halves use).

use super::exec::Exec;
use super::join::union;
use super::plan::{Plan, StepPlan};
use crate::error::Result;
use crate::store::XmlStore;
use crate::store::record::Label;
use quiredb_engine::PageRead;
use rayon::prelude::*;

/// Context size from which a join is split across threads.
pub const SPLIT_AT: usize = 4096;

/// Runs `plan` with up to `threads` threads, each beginning its transaction with
/// `begin`, into `out` (sorted by pre, unique).
pub fn run<T, U, B>(
    exec: &mut Exec,
    store: &XmlStore<'_, T>,
    plan: &Plan,
    threads: usize,
    begin: &B,
    out: &mut Vec<Label>,
) -> Result<()>
where
    T: PageRead,
    U: PageRead,
    B: Fn() -> Result<U> + Sync,
{
    out.clear();
    let mut merged = Vec::new();
    for steps in &plan.branches {
        let (k, context) = exec.steps_from(store, &plan.roots, steps, None, Some((SPLIT_AT, false)))?;
        let result = if k == steps.len() || threads < 2 {
            if k == steps.len() {
                context
            } else {
                exec.steps_from(store, &plan.roots, &steps[k..], Some(context), None)?.1
            }
        } else {
            split_run(store, plan, &steps[k..], &context, threads, begin)?.map_or_else(
                || exec.steps_from(store, &plan.roots, &steps[k..], Some(context), None).map(|r| r.1),
                Ok,
            )?
        };
        union(out, &result, &mut merged);
        std::mem::swap(out, &mut merged);
    }
    Ok(())
}

/// Runs `steps` on parts of `context` in parallel; `None` when a
/// thread's transaction is not of the store's snapshot.
fn split_run<T, U, B>(
    store: &XmlStore<'_, T>,
    plan: &Plan,
    steps: &[StepPlan],
    context: &[Label],
    threads: usize,
    begin: &B,
) -> Result<Option<Vec<Label>>>
where
    T: PageRead,
    U: PageRead,
    B: Fn() -> Result<U> + Sync,
{
    let shared = store.share();
    let results: Vec<Result<Option<Vec<Label>>>> = cut(context, threads)
        .into_par_iter()
        .map(|part| {
            let txn = begin()?;
            let Some(part_store) = shared.open(&txn)? else { return Ok(None) };
            let mut exec = Exec::default();
            let run = exec.steps_from(&part_store, &plan.roots, steps, Some(part.to_vec()), Some((usize::MAX, true)));
            run.map(|(_, labels)| Some(labels))
        })
        .collect();
    let mut out = Vec::new();
    for result in results {
        match result? {
            Some(labels) => out.extend(labels),
            None => return Ok(None),
        }
    }
    Ok(Some(out))
}

/// Cuts a sorted context into at most `n` parts of about equal size, only where no
/// earlier label's subtree reaches across.
fn cut(context: &[Label], n: usize) -> Vec<&[Label]> {
    let target = context.len().div_ceil(n.max(1));
    let mut parts = Vec::with_capacity(n);
    let (mut start, mut reach) = (0, 0u64);
    for (i, label) in context.iter().enumerate() {
        if i > start && i - start >= target && label.pre > reach {
            parts.push(&context[start..i]);
            start = i;
        }
        reach = reach.max(label.pre + label.size);
    }
    parts.push(&context[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_never_split_a_subtree() {
        let l = |pre, size| Label { pre, size, level: 1, path: 0 };
        // 0 contains 1..=3; 4 and 5 are separate; 6 contains 7.
        let context = [l(0, 3), l(1, 0), l(2, 0), l(3, 0), l(4, 0), l(5, 0), l(6, 1), l(7, 0)];
        let parts = cut(&context, 4);
        assert_eq!(parts.iter().map(|p| p.len()).sum::<usize>(), context.len());
        for part in &parts {
            let first = part[0];
            assert!(context.iter().all(|c| c.pre >= first.pre || c.pre + c.size < first.pre));
        }
        assert!(parts.len() > 1);
    }
}
