//! The structural operators over labels in document order (Stack-Tree joins of
//! Al-Khalifa et al., with skipping):
//! - [`join`]: the nodes of a stream that stand in the axis relation to some context
//!   node — one pass over both, a stack holding the context nodes that contain the
//!   current position, and a seek of the stream whenever the stack empties, so only
//!   blocks inside the context's subtrees are decoded;
//! - [`semi`]: the context nodes that have some related node in a list (predicates);
//! - [`union`], [`minus`], [`intersect_pres`]: merges of sorted lists.
//!
//! Every operator is linear in its inputs and output, writes into buffers it is given
//! (cleared first) and allocates nothing once they have grown.
//!
//! Why the top of the stack decides: the context nodes containing a position form a
//! chain of ancestors; the deepest is the top. A node's parent is its deepest ancestor,
//! so it is in the context iff it is the top and one level up; a node has some context
//! ancestor iff the stack is not empty.
//!
//! Read next: `exec.rs`, which composes these into a query.

use super::plan::Axis;
use super::stream::SourceStream;
use crate::error::Result;
use crate::store::record::Label;
use quiredb_engine::PageRead;

/// Last pre inside `l`'s subtree.
#[inline]
fn end(l: &Label) -> u64 {
    l.pre + l.size
}

/// Whether `d` stands in relation `axis` to `c` (`d_attribute`: `d` is an attribute).
#[inline]
pub fn related(axis: Axis, c: &Label, d: &Label, d_attribute: bool) -> bool {
    match axis {
        Axis::Child => c.is_parent_of(d),
        Axis::Descendant => c.contains(d),
        Axis::SelfOrDescendant => c.pre == d.pre || (c.contains(d) && !d_attribute),
        Axis::Itself => c.pre == d.pre,
    }
}

/// 1 when the axis excludes the context node itself.
fn lead(axis: Axis) -> u64 {
    u64::from(matches!(axis, Axis::Child | Axis::Descendant))
}

/// The labels of `stream` related by `axis` to some label of `context` (sorted,
/// unique), in document order, into `out`.
pub fn join<T: PageRead>(
    context: &[Label],
    axis: Axis,
    stream: &mut SourceStream<'_, '_, T>,
    is_attribute: &impl Fn(&Label) -> bool,
    out: &mut Vec<Label>,
    stack: &mut Vec<Label>,
) -> Result<()> {
    out.clear();
    stack.clear();
    let Some(first) = context.first() else { return Ok(()) };
    let lead = lead(axis);
    let mut i = 0;
    stream.seek(first.pre + lead)?;
    while let Some(d) = stream.peek()? {
        while i < context.len() && context[i].pre + lead <= d.pre {
            let c = context[i];
            while stack.last().is_some_and(|t| end(t) < c.pre) {
                stack.pop();
            }
            stack.push(c);
            i += 1;
        }
        while stack.last().is_some_and(|t| end(t) < d.pre) {
            stack.pop();
        }
        let Some(top) = stack.last() else {
            if i == context.len() {
                break;
            }
            stream.seek(context[i].pre + lead)?;
            continue;
        };
        if related(axis, top, &d, is_attribute(&d)) {
            out.push(d);
        }
        stream.advance()?;
    }
    Ok(())
}

/// The last pre inside any subtree of `context` (0 for none): a stream joined with
/// it needs nothing beyond.
pub fn reach(context: &[Label]) -> u64 {
    context.iter().map(end).max().unwrap_or(0)
}

/// True when some label of `context` lies inside the subtree of an earlier one.
pub fn nested(context: &[Label]) -> bool {
    context.windows(2).any(|w| w[1].pre <= end(&w[0]))
}

/// The labels of `context` that have a child (`Axis::Child`; the context must not be
/// [`nested`]) or a descendant (`Axis::Descendant`) in `stream`, into `out`: one seek
/// and the first labels of each subtree, instead of every related label — what an
/// existence test needs.
pub fn having<T: PageRead>(
    context: &[Label],
    axis: Axis,
    stream: &mut SourceStream<'_, '_, T>,
    out: &mut Vec<Label>,
) -> Result<()> {
    out.clear();
    for c in context {
        stream.seek(c.pre + 1)?;
        while let Some(d) = stream.peek()? {
            if d.pre > end(c) {
                break;
            }
            if axis == Axis::Descendant || d.level == c.level + 1 {
                out.push(*c);
                break;
            }
            stream.advance()?;
        }
    }
    Ok(())
}

/// The labels of `context` to which some label of `found` is related by `axis`, into
/// `out`. `stack` holds context indexes, `marks` one flag per context label.
pub fn semi(
    context: &[Label],
    found: &[Label],
    axis: Axis,
    is_attribute: &impl Fn(&Label) -> bool,
    out: &mut Vec<Label>,
    stack: &mut Vec<usize>,
    marks: &mut Vec<bool>,
) {
    out.clear();
    stack.clear();
    marks.clear();
    marks.resize(context.len(), false);
    let lead = lead(axis);
    let mut i = 0;
    let mut j = 0;
    while j < found.len() {
        let d = found[j];
        while i < context.len() && context[i].pre + lead <= d.pre {
            while stack.last().is_some_and(|&t| end(&context[t]) < context[i].pre) {
                stack.pop();
            }
            stack.push(i);
            i += 1;
        }
        while stack.last().is_some_and(|&t| end(&context[t]) < d.pre) {
            stack.pop();
        }
        let Some(&top) = stack.last() else {
            if i == context.len() {
                break;
            }
            // Nothing open: skip the found labels before the next context label.
            let target = context[i].pre + lead;
            j += gallop(&found[j..], target);
            continue;
        };
        let attribute = is_attribute(&d);
        match axis {
            Axis::Descendant => mark_chain(stack, marks),
            Axis::SelfOrDescendant if !attribute => mark_chain(stack, marks),
            _ => {
                if related(axis, &context[top], &d, attribute) {
                    marks[top] = true;
                }
            }
        }
        j += 1;
    }
    out.extend(context.iter().zip(marks.iter()).filter(|(_, m)| **m).map(|(l, _)| *l));
}

/// Marks every context label on the stack (all contain the current position),
/// stopping at one already marked: everything below it was marked with it.
fn mark_chain(stack: &[usize], marks: &mut [bool]) {
    for &t in stack.iter().rev() {
        if marks[t] {
            break;
        }
        marks[t] = true;
    }
}

/// Number of leading labels of `list` with pre below `target` (exponential search).
fn gallop(list: &[Label], target: u64) -> usize {
    let mut bound = 1;
    while bound < list.len() && list[bound].pre < target {
        bound *= 2;
    }
    let hi = bound.min(list.len());
    let lo = bound / 2;
    lo + list[lo..hi].partition_point(|l| l.pre < target)
}

/// The union of two sorted, unique lists, into `out`.
pub fn union(a: &[Label], b: &[Label], out: &mut Vec<Label>) {
    out.clear();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].pre.cmp(&b[j].pre) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
}

/// The labels of `a` not in `b` (both sorted), into `out`.
pub fn minus(a: &[Label], b: &[Label], out: &mut Vec<Label>) {
    out.clear();
    let mut j = 0;
    for l in a {
        while j < b.len() && b[j].pre < l.pre {
            j += 1;
        }
        if b.get(j).is_none_or(|x| x.pre != l.pre) {
            out.push(*l);
        }
    }
}

/// The labels of `a` whose pre is in `pres` (both sorted), into `out`.
pub fn intersect_pres(a: &[Label], pres: &[u64], out: &mut Vec<Label>) {
    out.clear();
    let mut j = 0;
    for l in a {
        if j < pres.len() && pres[j] < l.pre {
            j += pres[j..].partition_point(|&p| p < l.pre);
        }
        if pres.get(j) == Some(&l.pre) {
            out.push(*l);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(pre: u64, size: u64, level: u32) -> Label {
        Label { pre, size, level, path: 0 }
    }

    #[test]
    fn semi_marks_every_nested_ancestor_for_descendants_and_only_the_parent_for_children() {
        // 0(size 5) ⊃ 1(size 3) ⊃ 2(size 1) ⊃ 3 ; 5 sibling of 1.
        let context = [l(0, 5, 0), l(1, 3, 1), l(2, 1, 2), l(5, 0, 1)];
        let found = [l(3, 0, 3)];
        let (mut out, mut stack, mut marks) = (Vec::new(), Vec::new(), Vec::new());
        semi(&context, &found, Axis::Descendant, &|_| false, &mut out, &mut stack, &mut marks);
        assert_eq!(out.iter().map(|l| l.pre).collect::<Vec<_>>(), [0, 1, 2]);
        semi(&context, &found, Axis::Child, &|_| false, &mut out, &mut stack, &mut marks);
        assert_eq!(out.iter().map(|l| l.pre).collect::<Vec<_>>(), [2]);
        semi(&context, &[l(5, 0, 1)], Axis::SelfOrDescendant, &|_| false, &mut out, &mut stack, &mut marks);
        assert_eq!(out.iter().map(|l| l.pre).collect::<Vec<_>>(), [0, 5]);
    }

    #[test]
    fn merges_are_sorted_and_unique() {
        let a = [l(1, 0, 1), l(3, 0, 1), l(5, 0, 1)];
        let b = [l(2, 0, 1), l(3, 0, 1)];
        let mut out = Vec::new();
        union(&a, &b, &mut out);
        assert_eq!(out.iter().map(|l| l.pre).collect::<Vec<_>>(), [1, 2, 3, 5]);
        minus(&a, &b, &mut out);
        assert_eq!(out.iter().map(|l| l.pre).collect::<Vec<_>>(), [1, 5]);
        intersect_pres(&a, &[0, 3, 4, 5, 9], &mut out);
        assert_eq!(out.iter().map(|l| l.pre).collect::<Vec<_>>(), [3, 5]);
        assert_eq!(gallop(&a, 4), 2);
        assert_eq!(gallop(&a, 0), 0);
        assert_eq!(gallop(&a, 9), 3);
    }
}
