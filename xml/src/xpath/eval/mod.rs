//! The XPath 1.0 evaluator, over any node model that implements [`Tree`].
//!
//! The semantics live here once: contexts with position and size, predicates that
//! number their nodes along the axis (reverse axes from the nearest node), filter
//! expressions numbered in document order, the four value types and their conversions,
//! comparisons between node-sets and values (§3.4), and the function library. Where the
//! nodes live — a DOM (`reference/expr.rs`) or the store's labels
//! (`store/query/general.rs`) — is the [`Tree`]'s business: axes, string values, names,
//! document order, and optional shortcuts a store takes through its indexes (a path the
//! structural engine answers, a count the path summary knows).
//!
//! A whole collection is the context of a top-level expression: `/` is every document
//! node at once and a relative path starts there too (the subset's rule); functions of
//! the context node take the first document node.
//!
//! Two rewrites keep `//` from visiting every node: `//x`, `//@x` and `//text()` take
//! the descendants the next step wants straight from the tree
//! ([`Tree::fused_descendants`]), grouping them by parent when a predicate counts
//! positions; and `[n]` with a number literal picks the n-th node without evaluating
//! anything per node.
//!
//! What a predicate computes the same way for every context node — an absolute path,
//! a function of literals — is computed once per evaluation or per document, and a
//! comparison with such a node-set probes a hash of its values (`invariant.rs`).
//!
//! Read next: `call.rs` (the function calls), `invariant.rs`, `../functions.rs`, then
//! the two trees.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::Hash;

mod call;
mod invariant;

use crate::error::Result;
use crate::xpath::ast::CompareOp;
use crate::xpath::expr::{ArithOp, Axis, AxisStep, Expr, Path, Start, Test, Type};
use crate::xpath::functions::{self as f, Function};

/// A node model the evaluator can walk.
pub trait Tree {
    type Node: Copy;
    /// Identity and document order of a node.
    type Key: Ord + Hash + Copy;

    fn key(&self, node: Self::Node) -> Self::Key;
    /// The document nodes of the collection, in document order.
    fn roots(&mut self) -> Result<Vec<Self::Node>>;
    /// The document node of `node`'s document.
    fn root_of(&mut self, node: Self::Node) -> Result<Self::Node>;
    /// Appends the nodes on `axis` from `node` that pass `test`, in document order.
    fn axis(&mut self, axis: Axis, test: &Test, node: Self::Node, out: &mut Vec<Self::Node>) -> Result<()>;
    /// [`Tree::axis`] when only the first `n` nodes (in document order) are wanted: a
    /// tree may stop reading after them.
    fn axis_first(
        &mut self,
        axis: Axis,
        test: &Test,
        node: Self::Node,
        n: usize,
        out: &mut Vec<Self::Node>,
    ) -> Result<()> {
        let start = out.len();
        self.axis(axis, test, node, out)?;
        out.truncate(start.saturating_add(n));
        Ok(())
    }
    /// [`Tree::axis`] when only the `n` nodes nearest to `node` on a reverse axis are
    /// wanted (appended in document order): a tree may read backwards from `node`.
    fn axis_last(
        &mut self,
        axis: Axis,
        test: &Test,
        node: Self::Node,
        n: usize,
        out: &mut Vec<Self::Node>,
    ) -> Result<()> {
        let start = out.len();
        self.axis(axis, test, node, out)?;
        keep_last(out, start, n);
        Ok(())
    }
    /// Appends `descendant-or-self::node()/axis::test` from `node` (`axis` is child or
    /// attribute), in any order.
    fn fused_descendants(
        &mut self,
        axis: Axis,
        test: &Test,
        node: Self::Node,
        out: &mut Vec<Self::Node>,
    ) -> Result<()> {
        let mut all = Vec::new();
        self.axis(Axis::DescendantOrSelf, &Test::Node, node, &mut all)?;
        for n in all {
            self.axis(axis, test, n, out)?;
        }
        Ok(())
    }
    /// The parent of each node of `nodes` (sorted, unique), by key: `None` for a
    /// document node.
    fn parents(&mut self, nodes: &[Self::Node], out: &mut Vec<Option<Self::Key>>) -> Result<()> {
        let mut parent = Vec::new();
        for &node in nodes {
            parent.clear();
            self.axis(Axis::Parent, &Test::Node, node, &mut parent)?;
            out.push(parent.first().map(|&p| self.key(p)));
        }
        Ok(())
    }
    /// Appends the nodes on the following or preceding axis of any node of `contexts`
    /// that pass `test`, in document order and once each, when the tree can list that
    /// union at once; `false` (nothing appended) when it cannot.
    fn axis_union(
        &mut self,
        _axis: Axis,
        _test: &Test,
        _contexts: &[Self::Node],
        _out: &mut Vec<Self::Node>,
    ) -> Result<bool> {
        Ok(false)
    }
    /// Whether `axis::test` from `node` selects anything, when the tree knows it
    /// without listing the nodes (`None`: list them).
    fn axis_nonempty(&mut self, _axis: Axis, _test: &Test, _node: Self::Node) -> Result<Option<bool>> {
        Ok(None)
    }
    /// Appends the string value of `node`.
    fn string_value(&mut self, node: Self::Node, out: &mut String) -> Result<()>;
    /// The qualified name (`local`: the local part) of an element, attribute or PI;
    /// empty for other nodes.
    fn name(&mut self, node: Self::Node, local: bool) -> Result<String>;
    /// The namespace URI of an element's or attribute's name; empty for other nodes
    /// and for names in no namespace.
    fn namespace_uri(&mut self, node: Self::Node) -> Result<String>;
    /// Appends the elements of `root`'s document whose ID (an `xml:id`, or an
    /// attribute its internal subset declares `ID`) is one of `tokens` (sorted), in
    /// any order.
    fn elements_with_id(&mut self, root: Self::Node, tokens: &[&str], out: &mut Vec<Self::Node>) -> Result<()>;
    /// The nodes of an absolute path from every document node, when the tree can find
    /// some leading steps faster than the evaluator: the nodes after them and how many
    /// steps that was.
    fn structural(&mut self, _path: &Path) -> Result<Option<(Vec<Self::Node>, usize)>> {
        Ok(None)
    }
    /// The number of nodes of an absolute path, when the tree knows it without listing.
    fn count(&mut self, _path: &Path) -> Result<Option<u64>> {
        Ok(None)
    }
}

/// The value of an expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<N> {
    /// Nodes in document order, without duplicates.
    Nodes(Vec<N>),
    Number(f64),
    String(String),
    Boolean(bool),
}

/// Evaluates `expr` with the whole collection as its context; what does not depend
/// on the context is computed once (`invariant.rs`).
pub fn evaluate<T: Tree>(tree: &mut T, expr: &Expr) -> Result<Value<T::Node>> {
    Eval::new(tree, false).expr(expr, &Ctx { node: None, position: 1, size: 1 })
}

/// [`evaluate`] with every subexpression evaluated in every context it meets and
/// reverse axes and tested paths listed whole, as the recommendation reads: the
/// reference evaluator's way, and the model the invariants and the backward reads
/// are tested against.
pub fn evaluate_as_written<T: Tree>(tree: &mut T, expr: &Expr) -> Result<Value<T::Node>> {
    Eval::new(tree, true).expr(expr, &Ctx { node: None, position: 1, size: 1 })
}

/// The string form of a value (a node-set: its first node's string value).
pub fn value_to_string<T: Tree>(tree: &mut T, value: &Value<T::Node>) -> Result<String> {
    Eval::new(tree, false).string(value)
}

struct Ctx<N> {
    /// `None`: the whole collection (every document node).
    node: Option<N>,
    position: usize,
    size: usize,
}

struct Eval<'a, T: Tree> {
    tree: &'a mut T,
    invariants: invariant::Invariants<T::Node, T::Key>,
    /// Every node of every axis listed, every subexpression evaluated where it stands:
    /// no invariants, reverse axes and tested paths read whole.
    as_written: bool,
    /// The `xml:lang` found for each node `lang()` was asked of (`call.rs`).
    langs: HashMap<T::Key, Option<String>>,
}

impl<'a, T: Tree> Eval<'a, T> {
    fn new(tree: &'a mut T, as_written: bool) -> Self {
        Self { tree, invariants: invariant::Invariants::new(!as_written), as_written, langs: HashMap::new() }
    }

    /// The value of `expr`, computed without looking for it among the invariants.
    fn evaluate_expr(&mut self, expr: &Expr, ctx: &Ctx<T::Node>) -> Result<Value<T::Node>> {
        Ok(match expr {
            Expr::Or(a, b) => Value::Boolean(self.boolean_of(a, ctx)? || self.boolean_of(b, ctx)?),
            Expr::And(a, b) => Value::Boolean(self.boolean_of(a, ctx)? && self.boolean_of(b, ctx)?),
            Expr::Compare(op, a, b) => Value::Boolean(self.compare_exprs(*op, a, b, ctx)?),
            Expr::Arith(op, a, b) => {
                let (a, b) = (self.number_of(a, ctx)?, self.number_of(b, ctx)?);
                Value::Number(arith(*op, a, b))
            }
            Expr::Negate(a) => Value::Number(-self.number_of(a, ctx)?),
            Expr::Union(a, b) => {
                let mut nodes = self.nodes_of(a, ctx)?;
                nodes.extend(self.nodes_of(b, ctx)?);
                self.sort_unique(&mut nodes);
                Value::Nodes(nodes)
            }
            Expr::Path(path) => Value::Nodes(self.path(path, ctx)?),
            Expr::String(s) => Value::String(s.clone()),
            Expr::Number(n, _) => Value::Number(*n),
            Expr::Call(call) => self.call(call, ctx)?,
        })
    }

    fn nodes_of(&mut self, expr: &Expr, ctx: &Ctx<T::Node>) -> Result<Vec<T::Node>> {
        match self.expr(expr, ctx)? {
            Value::Nodes(nodes) => Ok(nodes),
            // The parser checks node-set operands statically.
            _ => Ok(Vec::new()),
        }
    }

    fn evaluate_boolean(&mut self, expr: &Expr, ctx: &Ctx<T::Node>) -> Result<bool> {
        if let Expr::Path(path) = expr {
            return self.exists(path, ctx);
        }
        let value = self.expr(expr, ctx)?;
        Ok(boolean(&value))
    }

    fn number_of(&mut self, expr: &Expr, ctx: &Ctx<T::Node>) -> Result<f64> {
        let value = self.expr(expr, ctx)?;
        self.number(&value)
    }

    fn string_of(&mut self, expr: &Expr, ctx: &Ctx<T::Node>) -> Result<String> {
        Ok(self.text_of(expr, ctx)?.into_owned())
    }

    /// The string of `expr`, borrowed when it is a literal; `.` reads the context
    /// node's string value without building a node-set.
    fn text_of<'e>(&mut self, expr: &'e Expr, ctx: &Ctx<T::Node>) -> Result<Cow<'e, str>> {
        if let Expr::String(s) = expr {
            return Ok(Cow::Borrowed(s));
        }
        if let Some(node) = ctx.node
            && is_context_node(expr)
        {
            return Ok(Cow::Owned(self.node_string(node)?));
        }
        let value = self.expr(expr, ctx)?;
        Ok(Cow::Owned(self.string(&value)?))
    }

    fn string(&mut self, value: &Value<T::Node>) -> Result<String> {
        Ok(match value {
            Value::Nodes(nodes) => match nodes.first() {
                Some(&node) => self.node_string(node)?,
                None => String::new(),
            },
            Value::Number(n) => f::number_to_string(*n),
            Value::String(s) => s.clone(),
            Value::Boolean(b) => b.to_string(),
        })
    }

    fn number(&mut self, value: &Value<T::Node>) -> Result<f64> {
        Ok(match value {
            Value::Number(n) => *n,
            Value::Boolean(b) => f64::from(u8::from(*b)),
            other => f::string_to_number(&self.string(other)?),
        })
    }

    fn node_string(&mut self, node: T::Node) -> Result<String> {
        let mut out = String::new();
        self.tree.string_value(node, &mut out)?;
        Ok(out)
    }

    fn sort_unique(&self, nodes: &mut Vec<T::Node>) {
        nodes.sort_by_key(|&n| self.tree.key(n));
        nodes.dedup_by_key(|n| self.tree.key(*n));
    }

    /// The context as a node-set: its node, or every document node.
    fn context_nodes(&mut self, ctx: &Ctx<T::Node>) -> Result<Vec<T::Node>> {
        match ctx.node {
            Some(node) => Ok(vec![node]),
            None => self.tree.roots(),
        }
    }

    fn path(&mut self, path: &Path, ctx: &Ctx<T::Node>) -> Result<Vec<T::Node>> {
        if let Some(node) = ctx.node
            && is_self_path(path)
        {
            return Ok(vec![node]);
        }
        let from_roots = matches!(path.start, Start::Root) || (ctx.node.is_none() && path.start == Start::Context);
        let (mut nodes, done) = match &path.start {
            _ if from_roots && ctx.node.is_none() => match self.tree.structural(path)? {
                Some(found) => found,
                None => (self.tree.roots()?, 0),
            },
            Start::Root => (vec![self.tree.root_of(ctx.node.expect("from_roots without a node is handled"))?], 0),
            Start::Context => (self.context_nodes(ctx)?, 0),
            Start::Filter(primary, predicates) => {
                let mut nodes = self.nodes_of(primary, ctx)?;
                for predicate in predicates {
                    self.filter(&mut nodes, predicate)?;
                }
                (nodes, 0)
            }
        };
        let mut at = done;
        while at < path.steps.len() {
            let step = &path.steps[at];
            match path.steps.get(at + 1) {
                Some(next) if step.is_descendant_or_self() && matches!(next.axis, Axis::Child | Axis::Attribute) => {
                    nodes = self.fused(&nodes, next)?;
                    at += 2;
                }
                _ => {
                    nodes = self.step(&nodes, step)?;
                    at += 1;
                }
            }
        }
        Ok(nodes)
    }

    /// One step from every context node, predicates numbered per context node.
    fn step(&mut self, contexts: &[T::Node], step: &AxisStep) -> Result<Vec<T::Node>> {
        let mut out = Vec::new();
        // Predicates that ignore the position hold for a node whichever context reached
        // it: the following (preceding) axes of many contexts are one range, listed
        // once, not once per context (`//following::*[x]` was quadratic).
        if !self.as_written
            && contexts.len() > 1
            && matches!(step.axis, Axis::Following | Axis::Preceding)
            && !step.predicates.iter().any(Expr::is_positional_predicate)
            && self.tree.axis_union(step.axis, &step.test, contexts, &mut out)?
        {
            for predicate in &step.predicates {
                self.filter(&mut out, predicate)?;
            }
            return Ok(out);
        }
        let mut found = Vec::new();
        let limit = self.take(step);
        for &context in contexts {
            found.clear();
            self.axis_limited(step.axis, &step.test, context, limit, &mut found)?;
            self.apply_predicates(&mut found, step)?;
            out.extend_from_slice(&found);
        }
        if contexts.len() > 1 {
            self.sort_unique(&mut out);
        }
        Ok(out)
    }

    /// The nodes a step needs from each context node: with `[1]`, `[position() < 4]`
    /// first, that many, the first ones in document order on a forward axis, the
    /// nearest ones on a reverse axis; with `[last()]` first on a reverse axis, the
    /// first node in document order. (Written out, reverse axes are read whole.)
    fn take(&self, step: &AxisStep) -> Option<Take> {
        match step.predicates.first()? {
            _ if self.as_written && step.axis.is_reverse() => None,
            Expr::Call(call) if call.function == Function::Last && step.axis.is_reverse() => Some(Take::First(1)),
            first => positions(first, None).map(|(_, last)| Take::Nearest(last)),
        }
    }

    /// The nodes on `axis` from `node`, or only those `limit` asks for.
    fn axis_limited(
        &mut self,
        axis: Axis,
        test: &Test,
        node: T::Node,
        limit: Option<Take>,
        out: &mut Vec<T::Node>,
    ) -> Result<()> {
        match limit {
            Some(Take::Nearest(n)) if axis.is_reverse() => self.tree.axis_last(axis, test, node, n, out),
            Some(Take::Nearest(n) | Take::First(n)) => self.tree.axis_first(axis, test, node, n, out),
            None => self.tree.axis(axis, test, node, out),
        }
    }

    /// Predicates of `step` over the nodes one context node reached (document order).
    fn apply_predicates(&mut self, nodes: &mut Vec<T::Node>, step: &AxisStep) -> Result<()> {
        if step.predicates.is_empty() {
            return Ok(());
        }
        let reverse = step.axis.is_reverse();
        if reverse {
            nodes.reverse();
        }
        for predicate in &step.predicates {
            self.filter(nodes, predicate)?;
        }
        if reverse {
            nodes.reverse();
        }
        Ok(())
    }

    /// `descendant-or-self::node()/next` from every context node: the tree lists the
    /// candidates; positional predicates count among the children of one parent.
    fn fused(&mut self, contexts: &[T::Node], next: &AxisStep) -> Result<Vec<T::Node>> {
        let mut out = Vec::new();
        for &context in contexts {
            self.tree.fused_descendants(next.axis, &next.test, context, &mut out)?;
        }
        self.sort_unique(&mut out);
        if next.predicates.iter().any(Expr::is_positional_predicate) {
            return self.by_parent(out, next);
        }
        for predicate in &next.predicates {
            self.filter(&mut out, predicate)?;
        }
        Ok(out)
    }

    fn by_parent(&mut self, nodes: Vec<T::Node>, step: &AxisStep) -> Result<Vec<T::Node>> {
        let mut groups: HashMap<T::Key, Vec<T::Node>> = HashMap::new();
        let mut order = Vec::new();
        let mut parents = Vec::with_capacity(nodes.len());
        self.tree.parents(&nodes, &mut parents)?;
        for (node, parent) in nodes.into_iter().zip(parents) {
            let Some(key) = parent else { continue };
            groups
                .entry(key)
                .or_insert_with(|| {
                    order.push(key);
                    Vec::new()
                })
                .push(node);
        }
        let mut out = Vec::new();
        for key in order {
            let mut group = groups.remove(&key).unwrap_or_default();
            self.apply_predicates(&mut group, step)?;
            out.extend(group);
        }
        self.sort_unique(&mut out);
        Ok(out)
    }

    /// Keeps the nodes for which `predicate` holds, numbering them 1.. in the order
    /// given.
    fn filter(&mut self, nodes: &mut Vec<T::Node>, predicate: &Expr) -> Result<()> {
        if let Some((first, last)) = positions(predicate, Some(nodes.len())) {
            let last = last.min(nodes.len());
            if first > last {
                nodes.clear();
            } else {
                nodes.truncate(last);
                nodes.drain(..first - 1);
            }
            return Ok(());
        }
        let size = nodes.len();
        let mut kept = Vec::with_capacity(size);
        for (i, &node) in nodes.iter().enumerate() {
            let ctx = Ctx { node: Some(node), position: i + 1, size };
            let holds = match predicate.result_type() {
                Type::Number => self.number_of(predicate, &ctx)? == (i + 1) as f64,
                _ => self.boolean_of(predicate, &ctx)?,
            };
            if holds {
                kept.push(node);
            }
        }
        *nodes = kept;
        Ok(())
    }

    /// Whether `path` selects anything, stopping at the first node found.
    fn exists(&mut self, path: &Path, ctx: &Ctx<T::Node>) -> Result<bool> {
        if path.steps.is_empty() || matches!(path.start, Start::Filter(..)) || ctx.node.is_none() {
            return Ok(!self.path(path, ctx)?.is_empty());
        }
        let start = match path.start {
            Start::Root => self.tree.root_of(ctx.node.expect("checked above"))?,
            _ => ctx.node.expect("checked above"),
        };
        self.any(&path.steps, start)
    }

    fn any(&mut self, steps: &[AxisStep], node: T::Node) -> Result<bool> {
        let Some((step, rest)) = steps.split_first() else { return Ok(true) };
        let mut found = Vec::new();
        let rest = match rest.split_first() {
            Some((next, after))
                if step.is_descendant_or_self()
                    && matches!(next.axis, Axis::Child | Axis::Attribute)
                    && !next.predicates.iter().any(Expr::is_positional_predicate) =>
            {
                self.tree.fused_descendants(next.axis, &next.test, node, &mut found)?;
                for predicate in &next.predicates {
                    self.filter(&mut found, predicate)?;
                }
                after
            }
            _ => {
                if rest.is_empty() && step.predicates.is_empty() {
                    // The last step: one node answers (`[following::x]` need not list
                    // the rest of the document).
                    if let Some(known) = self.tree.axis_nonempty(step.axis, &step.test, node)? {
                        return Ok(known);
                    }
                    let one = Some(Take::Nearest(1)).filter(|_| !self.as_written);
                    self.axis_limited(step.axis, &step.test, node, one, &mut found)?;
                    return Ok(!found.is_empty());
                }
                self.axis_limited(step.axis, &step.test, node, self.take(step), &mut found)?;
                self.apply_predicates(&mut found, step)?;
                rest
            }
        };
        for n in found {
            if self.any(rest, n)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn compare(&mut self, op: CompareOp, a: &Value<T::Node>, b: &Value<T::Node>) -> Result<bool> {
        match (a, b) {
            (Value::Nodes(x), Value::Nodes(y)) => self.compare_node_sets(op, x, y),
            (Value::Nodes(x), other) => self.compare_nodes(op, x, other),
            (other, Value::Nodes(y)) => self.compare_nodes(op.flipped(), y, other),
            _ => self.compare_atoms(op, a, b),
        }
    }

    /// Some node of `nodes` compares true with the atomic `value` (§3.4).
    fn compare_nodes(&mut self, op: CompareOp, nodes: &[T::Node], value: &Value<T::Node>) -> Result<bool> {
        if let Value::Boolean(b) = value {
            return self.compare_atoms(op, &Value::Boolean(!nodes.is_empty()), &Value::Boolean(*b));
        }
        for &n in nodes {
            let s = Value::String(self.node_string(n)?);
            if self.compare_atoms(op, &s, value)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn compare_atoms(&mut self, op: CompareOp, a: &Value<T::Node>, b: &Value<T::Node>) -> Result<bool> {
        let equality = matches!(op, CompareOp::Eq | CompareOp::Ne);
        if equality && (matches!(a, Value::Boolean(_)) || matches!(b, Value::Boolean(_))) {
            let (x, y) = (boolean(a), boolean(b));
            return Ok(if op == CompareOp::Eq { x == y } else { x != y });
        }
        if !equality || matches!(a, Value::Number(_)) || matches!(b, Value::Number(_)) {
            return Ok(compare_numbers(op, self.number(a)?, self.number(b)?));
        }
        let (x, y) = (self.string(a)?, self.string(b)?);
        Ok(compare_strings(op, &x, &y))
    }
}

/// Which nodes of an axis a step needs when its first predicate picks positions.
#[derive(Clone, Copy)]
enum Take {
    /// The `n` nearest the context node: the first in document order on a forward
    /// axis, the last on a reverse one.
    Nearest(usize),
    /// The first `n` in document order.
    First(usize),
}

/// The positions `first..=last` (from 1) a predicate keeps when it depends on the
/// position alone (`[3]`, `[last()]`, `[position() <= 3]`, `[position() = last() - 1]`,
/// `and`s of them); `size` is the context size, `None` when unknown (then `last()`
/// makes the answer unknown too).
fn positions(predicate: &Expr, size: Option<usize>) -> Option<(usize, usize)> {
    let is_position = |e: &Expr| matches!(e, Expr::Call(c) if c.function == Function::Position);
    let (op, value) = match predicate {
        Expr::Compare(op, a, b) if is_position(a) => (*op, constant(b, size)?),
        Expr::Compare(op, a, b) if is_position(b) => (op.flipped(), constant(a, size)?),
        Expr::And(a, b) => {
            let ((f1, l1), (f2, l2)) = (positions(a, size)?, positions(b, size)?);
            return Some((f1.max(f2), l1.min(l2)));
        }
        other if other.result_type() == Type::Number => (CompareOp::Eq, constant(other, size)?),
        _ => return None,
    };
    const EMPTY: (usize, usize) = (1, 0);
    if value.is_nan() {
        return (op != CompareOp::Ne).then_some(EMPTY);
    }
    let index = |v: f64| {
        if v < 1.0 {
            0
        } else if v >= usize::MAX as f64 {
            usize::MAX
        } else {
            v as usize
        }
    };
    Some(match op {
        CompareOp::Eq if value.fract() == 0.0 && value >= 1.0 => (index(value), index(value)),
        CompareOp::Eq => EMPTY,
        CompareOp::Lt => (1, index(value.ceil() - 1.0)),
        CompareOp::Le => (1, index(value.floor())),
        CompareOp::Gt => (index(value.floor() + 1.0).max(1), usize::MAX),
        CompareOp::Ge => (index(value.ceil()).max(1), usize::MAX),
        CompareOp::Ne => return None,
    })
}

/// The value of a number expression made of literals, `last()` (when the size is
/// known) and arithmetic.
fn constant(expr: &Expr, size: Option<usize>) -> Option<f64> {
    Some(match expr {
        Expr::Number(n, _) => *n,
        Expr::Call(call) if call.function == Function::Last => size? as f64,
        Expr::Arith(op, a, b) => arith(*op, constant(a, size)?, constant(b, size)?),
        Expr::Negate(a) => -constant(a, size)?,
        _ => return None,
    })
}

/// Whether `expr` is `.` (`self::node()`).
fn is_context_node(expr: &Expr) -> bool {
    matches!(expr, Expr::Path(path) if is_self_path(path))
}

fn is_self_path(path: &Path) -> bool {
    path.start == Start::Context
        && matches!(path.steps.as_slice(), [step] if step.axis == Axis::SelfAxis && step.test == Test::Node && step.predicates.is_empty())
}

/// Keeps `out[..start]` and the last `n` nodes after it.
pub(crate) fn keep_last<N>(out: &mut Vec<N>, start: usize, n: usize) {
    let found = out.len() - start;
    out.drain(start..start + found.saturating_sub(n));
}

/// XPath 1.0 `boolean()` of a value.
pub fn boolean<N>(value: &Value<N>) -> bool {
    match value {
        Value::Nodes(nodes) => !nodes.is_empty(),
        Value::Number(n) => f::number_to_boolean(*n),
        Value::String(s) => !s.is_empty(),
        Value::Boolean(b) => *b,
    }
}

fn arith(op: ArithOp, a: f64, b: f64) -> f64 {
    match op {
        ArithOp::Add => a + b,
        ArithOp::Sub => a - b,
        ArithOp::Mul => a * b,
        ArithOp::Div => a / b,
        // Truncating remainder, like Java's `%` and Rust's on floats.
        ArithOp::Mod => a % b,
    }
}

fn compare_strings(op: CompareOp, a: &str, b: &str) -> bool {
    match op {
        CompareOp::Eq => a == b,
        CompareOp::Ne => a != b,
        _ => compare_numbers(op, f::string_to_number(a), f::string_to_number(b)),
    }
}

/// `a op b` on numbers (IEEE: NaN compares false but with `!=`).
pub(crate) fn compare_numbers(op: CompareOp, a: f64, b: f64) -> bool {
    match op {
        CompareOp::Eq => a == b,
        CompareOp::Ne => a != b,
        CompareOp::Lt => a < b,
        CompareOp::Le => a <= b,
        CompareOp::Gt => a > b,
        CompareOp::Ge => a >= b,
    }
}
