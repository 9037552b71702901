//! Loop-invariant subexpressions: what a predicate computes the same way for every
//! context node is computed once.
//!
//! `//item[@id = /site/closed_auctions/closed_auction/itemref/@item]` asks, for each
//! item, a question about one fixed node-set. Evaluated as written that is a path walk
//! and a string compare per item and per `itemref`: O(n·m). An expression whose
//! [`Dependence`] is less than the context is evaluated once per evaluation
//! ([`Dependence::Constant`]) or once per document ([`Dependence::Document`], keyed by
//! the document node) and kept by its address in the borrowed expression tree, which
//! does not move while an evaluation runs. A comparison with such a node-set goes
//! further: the set's string values are hashed and its numbers sorted once
//! ([`NodeValues`]), so each context pays one probe — the hash join a database would
//! plan for the value join, found here without a planner.
//!
//! Read next: `mod.rs` (the evaluator this caches for).

use rustc_hash::{FxHashMap, FxHashSet};

use super::{Ctx, Eval, Tree, Value, boolean};
use crate::error::Result;
use crate::xpath::ast::CompareOp;
use crate::xpath::expr::{Dependence, Expr, Start, Type};
use crate::xpath::functions as f;

/// A node-set on the other side of a comparison above this many nodes is indexed
/// even when it is not invariant (one hash per node instead of a compare per pair).
const INDEX_ABOVE: usize = 16;

/// An invariant's identity: the expression's address and, for a document-dependent
/// one, its document node's key.
type Slot<K> = (usize, Option<K>);

/// The invariants one evaluation has met.
pub(super) struct Invariants<N, K> {
    /// Off for the reference evaluator, which evaluates everything as written.
    enabled: bool,
    dependence: FxHashMap<usize, Dependence>,
    entries: FxHashMap<Slot<K>, Entry<N>>,
}

impl<N, K> Invariants<N, K> {
    pub(super) fn new(enabled: bool) -> Self {
        Self { enabled, dependence: FxHashMap::default(), entries: FxHashMap::default() }
    }
}

/// What is known of one invariant: its value, its truth (a path tested for
/// existence stops at the first node, so it may be known without the value), and
/// the index of its node values once a comparison wanted it.
struct Entry<N> {
    value: Option<Value<N>>,
    truth: Option<bool>,
    index: Option<NodeValues>,
}

impl<N> Default for Entry<N> {
    fn default() -> Self {
        Self { value: None, truth: None, index: None }
    }
}

/// The string values of a node-set, ready to answer "does some node compare true
/// with `x`?" in one probe.
#[derive(Default)]
pub(super) struct NodeValues {
    strings: FxHashSet<String>,
    /// The numbers of the strings that are numbers, sorted, `-0` as `0`.
    numbers: Vec<f64>,
    /// Whether some string is not a number.
    nan: bool,
}

impl NodeValues {
    fn insert(&mut self, s: String) {
        let n = f::string_to_number(&s);
        if n.is_nan() {
            self.nan = true;
        } else {
            self.numbers.push(n + 0.0);
        }
        self.strings.insert(s);
    }

    fn finish(&mut self) {
        self.numbers.sort_by(f64::total_cmp);
        self.numbers.dedup();
    }

    fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }

    /// Whether `s op y` holds for the string value `y` of some node (§3.4: `=` and
    /// `!=` compare strings, the others numbers).
    pub(super) fn any_string(&self, op: CompareOp, s: &str) -> bool {
        match op {
            CompareOp::Eq => self.strings.contains(s),
            CompareOp::Ne => self.strings.len() > 1 || (self.strings.len() == 1 && !self.strings.contains(s)),
            _ => self.any_number(op, f::string_to_number(s)),
        }
    }

    /// Whether `x op number(y)` holds for the string value `y` of some node.
    pub(super) fn any_number(&self, op: CompareOp, x: f64) -> bool {
        let (min, max) = (self.numbers.first(), self.numbers.last());
        match op {
            CompareOp::Eq => self.numbers.binary_search_by(|y| y.total_cmp(&(x + 0.0))).is_ok(),
            // NaN differs from everything, itself included.
            CompareOp::Ne if x.is_nan() => !self.is_empty(),
            CompareOp::Ne => self.nan || min.is_some_and(|&y| y != x) || max.is_some_and(|&y| y != x),
            CompareOp::Lt => max.is_some_and(|&y| x < y),
            CompareOp::Le => max.is_some_and(|&y| x <= y),
            CompareOp::Gt => min.is_some_and(|&y| x > y),
            CompareOp::Ge => min.is_some_and(|&y| x >= y),
        }
    }
}

impl<T: Tree> Eval<'_, T> {
    /// The value of `expr`, computed once when it is invariant in this context.
    pub(super) fn expr(&mut self, expr: &Expr, ctx: &Ctx<T::Node>) -> Result<Value<T::Node>> {
        let Some(slot) = self.invariant_slot(expr, ctx)? else {
            return self.evaluate_expr(expr, ctx);
        };
        self.cached_value(expr, ctx, slot).cloned()
    }

    /// `boolean(expr)`, computed once when it is invariant in this context.
    pub(super) fn boolean_of(&mut self, expr: &Expr, ctx: &Ctx<T::Node>) -> Result<bool> {
        let Some(slot) = self.invariant_slot(expr, ctx)? else {
            return self.evaluate_boolean(expr, ctx);
        };
        let entry = self.invariants.entries.entry(slot).or_default();
        if let Some(truth) = entry.truth.or_else(|| entry.value.as_ref().map(boolean)) {
            return Ok(truth);
        }
        let truth = self.evaluate_boolean(expr, ctx)?;
        self.invariants.entries.entry(slot).or_default().truth = Some(truth);
        Ok(truth)
    }

    /// `a op b` (§3.4), one side looked up in an index when it is an invariant
    /// node-set.
    pub(super) fn compare_exprs(&mut self, op: CompareOp, a: &Expr, b: &Expr, ctx: &Ctx<T::Node>) -> Result<bool> {
        if let Some(slot) = self.invariant_nodes(b, ctx)? {
            let x = self.expr(a, ctx)?;
            self.indexed(b, ctx, slot)?;
            return self.compare_indexed(op, &x, slot);
        }
        if let Some(slot) = self.invariant_nodes(a, ctx)? {
            self.indexed(a, ctx, slot)?;
            let y = self.expr(b, ctx)?;
            // Some `x op y` ⟺ some `y flipped(op) x`.
            return self.compare_indexed(op.flipped(), &y, slot);
        }
        let (x, y) = (self.expr(a, ctx)?, self.expr(b, ctx)?);
        self.compare(op, &x, &y)
    }

    /// Whether some `x op y` holds for `x` in `nodes` and `y` in `others`, for
    /// node-sets the caller did not index.
    pub(super) fn compare_node_sets(&mut self, op: CompareOp, nodes: &[T::Node], others: &[T::Node]) -> Result<bool> {
        if self.invariants.enabled && others.len() > INDEX_ABOVE && nodes.len() > 1 {
            let index = self.node_values(others)?;
            for &n in nodes {
                if index.any_string(op, &self.node_string(n)?) {
                    return Ok(true);
                }
            }
            return Ok(false);
        }
        let ys = others.iter().map(|&n| self.node_string(n)).collect::<Result<Vec<_>>>()?;
        for &n in nodes {
            let s = self.node_string(n)?;
            if ys.iter().any(|t| super::compare_strings(op, &s, t)) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether `other op y` holds for some node `y` of the invariant at `slot`,
    /// whose index is built.
    fn compare_indexed(&mut self, op: CompareOp, other: &Value<T::Node>, slot: Slot<T::Key>) -> Result<bool> {
        let Eval { tree, invariants, .. } = self;
        let index = invariants.entries[&slot].index.as_ref().expect("indexed before the comparison");
        Ok(match other {
            Value::Nodes(nodes) => {
                let mut s = String::new();
                for &n in nodes {
                    s.clear();
                    tree.string_value(n, &mut s)?;
                    if index.any_string(op, &s) {
                        return Ok(true);
                    }
                }
                false
            }
            Value::String(s) => index.any_string(op, s),
            Value::Number(x) => index.any_number(op, *x),
            Value::Boolean(b) => {
                let nonempty = !index.is_empty();
                super::compare_numbers(op, f64::from(u8::from(*b)), f64::from(u8::from(nonempty)))
            }
        })
    }

    /// Builds the index of the invariant node-set at `slot` unless it is there.
    fn indexed(&mut self, expr: &Expr, ctx: &Ctx<T::Node>, slot: Slot<T::Key>) -> Result<()> {
        if self.invariants.entries.get(&slot).is_some_and(|e| e.index.is_some()) {
            return Ok(());
        }
        let nodes = match self.cached_value(expr, ctx, slot)? {
            Value::Nodes(nodes) => nodes.clone(),
            _ => Vec::new(),
        };
        let index = self.node_values(&nodes)?;
        self.invariants.entries.entry(slot).or_default().index = Some(index);
        Ok(())
    }

    fn node_values(&mut self, nodes: &[T::Node]) -> Result<NodeValues> {
        let mut index = NodeValues::default();
        for &n in nodes {
            index.insert(self.node_string(n)?);
        }
        index.finish();
        Ok(index)
    }

    /// The value of the invariant at `slot`, evaluated the first time.
    fn cached_value(&mut self, expr: &Expr, ctx: &Ctx<T::Node>, slot: Slot<T::Key>) -> Result<&Value<T::Node>> {
        if self.invariants.entries.get(&slot).is_none_or(|e| e.value.is_none()) {
            let value = self.evaluate_expr(expr, ctx)?;
            self.invariants.entries.entry(slot).or_default().value = Some(value);
        }
        Ok(self.invariants.entries[&slot].value.as_ref().expect("stored above"))
    }

    /// The slot of `expr` when it is an invariant node-set in this context.
    fn invariant_nodes(&mut self, expr: &Expr, ctx: &Ctx<T::Node>) -> Result<Option<Slot<T::Key>>> {
        if expr.result_type() != Type::Nodes {
            return Ok(None);
        }
        self.invariant_slot(expr, ctx)
    }

    /// Where `expr`'s value is kept when it does not depend on the context: only
    /// inside a context node (the top level runs once anyway), and never for
    /// literals or relative paths, which are cheaper than a lookup.
    fn invariant_slot(&mut self, expr: &Expr, ctx: &Ctx<T::Node>) -> Result<Option<Slot<T::Key>>> {
        let Some(node) = ctx.node.filter(|_| self.invariants.enabled) else { return Ok(None) };
        if matches!(expr, Expr::String(_) | Expr::Number(..))
            || matches!(expr, Expr::Path(path) if path.start == Start::Context)
        {
            return Ok(None);
        }
        let address = std::ptr::from_ref(expr) as usize;
        let dependence = *self.invariants.dependence.entry(address).or_insert_with(|| expr.dependence());
        Ok(match dependence {
            Dependence::Context => None,
            Dependence::Constant => Some((address, None)),
            Dependence::Document => {
                let root = self.tree.root_of(node)?;
                Some((address, Some(self.tree.key(root))))
            }
        })
    }
}
