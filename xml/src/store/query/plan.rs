//! The query plan: the AST compiled against one collection's path summary.
//!
//! Each location step becomes a [`StepPlan`]: its axis, the path ids it can reach
//! ([`PathSet`], from `paths.rs`), the partitions holding nodes of those paths (a
//! [`Source`]) and its predicates, simplified where the summary decides them:
//! - a predicate path that reaches no path of the summary is false;
//! - `@a` is true when every context path has exactly one `a` attribute path as many
//!   times as it has nodes (attributes are unique per element, so each node has one);
//! - constants fold through `and`, `or` and `not`.
//!
//! A step is **complete** when its context is every node of the context's paths (the
//! document nodes are; a step without predicates over a complete context is): then the
//! step's nodes are exactly the nodes of its paths, read from its partitions without a
//! join, and counted from the summary without reading anything.
//!
//! Read next: `exec.rs` (running a plan), `join.rs` (the operators).

use super::paths::{PathAxis, PathSet, child_paths, descendant_or_self, descendant_paths, reaching};
use crate::store::XmlStore;
use crate::store::dict::Dictionary;
use crate::store::format::Kind;
use crate::xpath::{CompareOp, Literal, NodeTest, Predicate, Query, Separator, Step};
use quiredb_engine::PageRead;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// How a step's nodes relate to its context node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    /// Children and attributes (level + 1 inside the context's subtree).
    Child,
    /// Proper descendants (attributes of the context and its descendants included).
    Descendant,
    /// The context itself and its non-attribute descendants (`//.`).
    SelfOrDescendant,
    /// The context itself (`.`).
    Itself,
}

impl Axis {
    fn name(self) -> &'static str {
        match self {
            Axis::Child => "child",
            Axis::Descendant => "descendant",
            Axis::SelfOrDescendant => "descendant-or-self",
            Axis::Itself => "self",
        }
    }
}

/// One partition a source reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    pub kind: Kind,
    pub name: u32,
    /// True when some of its labels have paths outside the source's set.
    pub filtered: bool,
}

/// Where a step's candidate nodes come from.
#[derive(Clone, Debug, Default)]
pub struct Source {
    pub parts: Vec<Part>,
    pub paths: PathSet,
    /// Nodes with a path in `paths`.
    pub count: u64,
}

/// Rows and time of one operator, summed over runs (for `--explain`); atomic so a
/// plan can be shared by the threads of a parallel run.
#[derive(Debug, Default)]
pub struct Stats {
    calls: AtomicU64,
    rows: AtomicU64,
    nanos: AtomicU64,
}

impl Stats {
    /// Adds one call that produced `rows` rows in `nanos` nanoseconds.
    pub fn add(&self, rows: u64, nanos: u64) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.rows.fetch_add(rows, Ordering::Relaxed);
        self.nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    pub fn text(&self) -> String {
        let calls = self.calls.load(Ordering::Relaxed);
        if calls == 0 {
            return "not run".into();
        }
        let (rows, nanos) = (self.rows.load(Ordering::Relaxed), self.nanos.load(Ordering::Relaxed));
        format!("{rows} rows out in {calls} calls, {:.3} ms", nanos as f64 / 1e6)
    }
}

/// A comparison with a literal on a predicate path's last step.
#[derive(Clone, Debug)]
pub struct Comparison {
    pub op: CompareOp,
    pub literal: Literal,
    /// The last step's single partition when the value index holds every one of its
    /// nodes' values (then a lookup is exact).
    pub indexed: Option<(Kind, u32)>,
}

/// One compiled location step.
#[derive(Debug)]
pub struct StepPlan {
    pub axis: Axis,
    pub test: NodeTest,
    pub source: Source,
    pub predicates: Vec<Pred>,
    /// The step's nodes before predicates are exactly the nodes of `source.paths`.
    pub complete: bool,
    /// A complete step read by scanning its partitions whole (true), or by a join
    /// with its context that reads only the blocks inside the context's subtrees —
    /// cheaper when the path filter keeps few of the partitions' nodes and the
    /// context is small. Steps that are not complete always join.
    pub scan: bool,
    pub text: String,
    pub stats: Stats,
}

/// A compiled predicate.
#[derive(Debug)]
pub enum Pred {
    Const(bool),
    And(Vec<Pred>),
    Or(Vec<Pred>),
    Not(Box<Pred>),
    /// True when the relative path selects some node (passing the comparison).
    Path {
        steps: Vec<StepPlan>,
        compare: Option<Comparison>,
        stats: Stats,
    },
}

/// A compiled query: a union of paths from the document nodes.
#[derive(Debug)]
pub struct Plan {
    pub branches: Vec<Vec<StepPlan>>,
    /// The source of the document nodes (path 0).
    pub roots: Source,
}

impl Plan {
    /// Compiles `query` against the store's summary.
    pub fn compile<T: PageRead>(store: &XmlStore<'_, T>, query: &Query) -> Plan {
        let dict = store.dictionary();
        let roots = PathSet::single(dict.paths.len().max(1), 0);
        let compiler = Compiler { store, dict };
        let roots = compiler.source(roots);
        let mut branches: Vec<Vec<StepPlan>> =
            query.paths.iter().map(|p| compiler.path(&p.steps, &roots.paths, true).0).collect();
        for branch in &mut branches {
            compiler.finish(branch, roots.count);
        }
        Plan { branches, roots }
    }
}

struct Compiler<'a, 's, 't, T: PageRead> {
    store: &'a XmlStore<'t, T>,
    dict: &'s Dictionary,
}

/// The axis of a step.
fn axis_of(step: &Step) -> Axis {
    match (step.separator, &step.test) {
        (Separator::Child, NodeTest::SelfNode) => Axis::Itself,
        (Separator::Child, _) => Axis::Child,
        (Separator::Descendant, NodeTest::SelfNode) => Axis::SelfOrDescendant,
        (Separator::Descendant, _) => Axis::Descendant,
    }
}

fn path_axis(axis: Axis) -> PathAxis {
    match axis {
        Axis::Child => PathAxis::Child,
        Axis::Descendant => PathAxis::Descendant,
        Axis::SelfOrDescendant => PathAxis::SelfOrDescendant,
        Axis::Itself => PathAxis::Itself,
    }
}

/// A predicate path without its leading `.` steps (`./a` is `a`, `.//a` is `//a`),
/// keeping a lone `.`.
fn strip_self(steps: &[Step]) -> &[Step] {
    let mut steps = steps;
    while steps.len() > 1 && axis_of(&steps[0]) == Axis::Itself && steps[0].predicates.is_empty() {
        steps = &steps[1..];
    }
    steps
}

/// The paths a step with `axis` and `test` reaches from `context`.
fn forward(dict: &Dictionary, axis: Axis, test: &NodeTest, context: &PathSet) -> PathSet {
    match axis {
        Axis::Itself => context.clone(),
        Axis::Child => child_paths(dict, context, test),
        Axis::SelfOrDescendant => descendant_or_self(dict, context),
        Axis::Descendant => descendant_paths(dict, context, test),
    }
}

impl<T: PageRead> Compiler<'_, '_, '_, T> {
    /// Compiles a location path from context paths `context` (all of their nodes when
    /// `complete`). Returns the steps and the paths of `context` from which the path
    /// can select something.
    ///
    /// Each step's paths are first what the summary reaches from the previous step,
    /// less the paths where its predicates cannot hold; then, backwards, less the
    /// paths from which the next step reaches nothing; then the predicates are
    /// narrowed to the paths left.
    fn path(&self, steps: &[Step], context: &PathSet, mut complete: bool) -> (Vec<StepPlan>, PathSet) {
        let mut plans: Vec<StepPlan> = Vec::with_capacity(steps.len());
        let mut at = context.clone();
        for step in steps {
            let axis = axis_of(step);
            let mut paths = forward(self.dict, axis, &step.test, &at);
            let mut predicates = Vec::with_capacity(step.predicates.len());
            for predicate in &step.predicates {
                let (compiled, feasible) = self.predicate(predicate, &paths);
                paths = feasible;
                predicates.push(compiled);
            }
            predicates.retain(|p| !matches!(p, Pred::Const(true)));
            if predicates.iter().any(|p| matches!(p, Pred::Const(false))) {
                predicates.clear();
                paths = PathSet::empty(self.dict.paths.len());
            }
            let text = format!("{}::{}", axis.name(), test_text(&step.test));
            let has_predicates = !predicates.is_empty();
            at = paths.clone();
            let source = Source { paths, ..Source::default() };
            let test = step.test.clone();
            let stats = Stats::default();
            plans.push(StepPlan { axis, test, source, predicates, complete, scan: complete, text, stats });
            complete = complete && !has_predicates;
        }
        for i in (0..plans.len().saturating_sub(1)).rev() {
            let reach = reaching(self.dict, &plans[i + 1].source.paths, path_axis(plans[i + 1].axis));
            plans[i].source.paths = plans[i].source.paths.intersect(&reach);
        }
        for plan in &mut plans {
            for predicate in &mut plan.predicates {
                self.narrow(predicate, &plan.source.paths);
            }
        }
        let reach = match plans.first() {
            Some(first) => context.intersect(&reaching(self.dict, &first.source.paths, path_axis(first.axis))),
            None => context.clone(),
        };
        (plans, reach)
    }

    /// Narrows the path sets of a compiled predicate to a smaller context.
    fn narrow(&self, predicate: &mut Pred, context: &PathSet) {
        match predicate {
            Pred::Const(_) => {}
            Pred::And(list) | Pred::Or(list) => list.iter_mut().for_each(|p| self.narrow(p, context)),
            Pred::Not(inner) => self.narrow(inner, context),
            Pred::Path { steps, .. } => {
                let mut at = context.clone();
                for step in steps {
                    let reached = forward(self.dict, step.axis, &step.test, &at);
                    step.source.paths = step.source.paths.intersect(&reached);
                    for p in &mut step.predicates {
                        self.narrow(p, &step.source.paths);
                    }
                    at = step.source.paths.clone();
                }
            }
        }
    }

    /// Compiles a predicate over context paths `context`; returns it with the paths
    /// of `context` on which it can hold.
    fn predicate(&self, predicate: &Predicate, context: &PathSet) -> (Pred, PathSet) {
        match predicate {
            Predicate::And(a, b) => {
                let (first, feasible) = self.predicate(a, context);
                let (second, feasible) = self.predicate(b, &feasible);
                let mut parts = Vec::new();
                for p in [first, second] {
                    match p {
                        Pred::Const(true) => {}
                        Pred::Const(false) => return (Pred::Const(false), PathSet::empty(self.dict.paths.len())),
                        Pred::And(inner) => parts.extend(inner),
                        other => parts.push(other),
                    }
                }
                (fold(parts, Pred::And, true), feasible)
            }
            Predicate::Or(a, b) => {
                let (first, feasible_a) = self.predicate(a, context);
                let (second, feasible_b) = self.predicate(b, context);
                let mut parts = Vec::new();
                for p in [first, second] {
                    match p {
                        Pred::Const(false) => {}
                        Pred::Const(true) => return (Pred::Const(true), context.clone()),
                        Pred::Or(inner) => parts.extend(inner),
                        other => parts.push(other),
                    }
                }
                (fold(parts, Pred::Or, false), feasible_a.union(&feasible_b))
            }
            Predicate::Not(a) => match self.predicate(a, context).0 {
                Pred::Const(b) if b => (Pred::Const(false), PathSet::empty(self.dict.paths.len())),
                Pred::Const(_) => (Pred::Const(true), context.clone()),
                other => (Pred::Not(Box::new(other)), context.clone()),
            },
            Predicate::Exists(path) => {
                let steps = strip_self(&path.steps);
                if self.attribute_always_present(steps, context) {
                    return (Pred::Const(true), context.clone());
                }
                self.path_predicate(steps, context, None)
            }
            Predicate::Compare { path, op, literal, .. } => {
                self.path_predicate(strip_self(&path.steps), context, Some((*op, literal.clone())))
            }
        }
    }

    fn path_predicate(
        &self,
        steps: &[Step],
        context: &PathSet,
        compare: Option<(CompareOp, Literal)>,
    ) -> (Pred, PathSet) {
        let (steps, feasible) = self.path(steps, context, false);
        if feasible.is_empty() || steps.last().is_none_or(|s| s.source.paths.is_empty()) {
            return (Pred::Const(false), PathSet::empty(self.dict.paths.len()));
        }
        let compare = compare.map(|(op, literal)| Comparison { op, literal, indexed: None });
        (Pred::Path { steps, compare, stats: Stats::default() }, feasible)
    }

    /// Fills in the partitions of every step's source, which comparisons the value
    /// index can answer, and how complete steps are read: scanning a source reads
    /// every label of its partitions; a join reads about the labels of the source
    /// inside the context (twice the nodes of its paths, say) after the context
    /// itself has been read (`context_nodes` of them at the start).
    fn finish(&self, steps: &mut [StepPlan], context_nodes: u64) {
        let (mut context_cost, mut context_nodes) = (context_nodes, context_nodes);
        for step in steps.iter_mut() {
            step.source = self.source(std::mem::take(&mut step.source.paths));
            for predicate in &mut step.predicates {
                self.finish_predicate(predicate);
            }
            // Predicates here are not positional, so their order is free: the cheapest
            // first, the later ones then run on fewer nodes.
            step.predicates.sort_by_key(cost);
            let join_cost = context_cost + context_nodes + 2 * step.source.count;
            let scan_cost: u64 =
                step.source.parts.iter().map(|p| self.dict.counts.get(&(p.kind, p.name)).copied().unwrap_or(0)).sum();
            step.scan = step.complete && step.axis != Axis::Itself && scan_cost <= join_cost;
            context_cost = if step.scan { scan_cost } else { join_cost };
            context_nodes = step.source.count;
        }
    }

    fn finish_predicate(&self, predicate: &mut Pred) {
        match predicate {
            Pred::Const(_) => {}
            Pred::And(list) => {
                list.iter_mut().for_each(|p| self.finish_predicate(p));
                list.sort_by_key(cost);
            }
            Pred::Or(list) => list.iter_mut().for_each(|p| self.finish_predicate(p)),
            Pred::Not(inner) => self.finish_predicate(inner),
            Pred::Path { steps, compare, .. } => {
                self.finish(steps, 0);
                if let (Some(comparison), Some(last)) = (compare, steps.last()) {
                    comparison.indexed = match last.source.parts.as_slice() {
                        [part] if self.store.value_index_complete(part.kind, part.name) => Some((part.kind, part.name)),
                        _ => None,
                    };
                }
            }
        }
    }

    /// `[@a]` over paths whose every node has exactly one `a` attribute.
    fn attribute_always_present(&self, steps: &[Step], context: &PathSet) -> bool {
        let [step] = steps else { return false };
        let NodeTest::Attribute(name) = &step.test else { return false };
        if step.separator != Separator::Child || !step.predicates.is_empty() || context.is_empty() {
            return false;
        }
        context.members().iter().all(|&parent| {
            let mut matching = self.dict.children(parent).filter(|&c| {
                let info = self.dict.paths[c as usize];
                info.kind == Kind::Attribute && self.dict.name_passes(info.name, name)
            });
            let (first, second) = (matching.next(), matching.next());
            match (first, second) {
                (Some(a), None) => self.dict.paths[a as usize].count == self.dict.paths[parent as usize].count,
                _ => false,
            }
        })
    }

    /// The partitions holding the nodes of `paths`.
    fn source(&self, paths: PathSet) -> Source {
        let mut by_part: BTreeMap<(Kind, u32), u64> = BTreeMap::new();
        for &id in paths.members() {
            let info = self.dict.paths[id as usize];
            *by_part.entry((info.kind, info.name)).or_default() += info.count;
        }
        let count = by_part.values().sum();
        let parts = by_part
            .into_iter()
            .map(|((kind, name), n)| {
                let total = self.dict.counts.get(&(kind, name)).copied().unwrap_or(0);
                Part { kind, name, filtered: n != total }
            })
            .collect();
        Source { parts, paths, count }
    }
}

/// An estimate of a predicate's work: the nodes of the paths its steps read (a
/// comparison reads values too, so it counts twice).
fn cost(predicate: &Pred) -> u64 {
    match predicate {
        Pred::Const(_) => 0,
        Pred::And(list) | Pred::Or(list) => list.iter().map(cost).sum(),
        Pred::Not(inner) => cost(inner),
        Pred::Path { steps, compare, .. } => {
            let read: u64 = steps.iter().map(|s| s.source.count + s.predicates.iter().map(cost).sum::<u64>()).sum();
            if compare.is_some() { 2 * read } else { read }
        }
    }
}

/// `Const(empty)` for no parts, the part itself for one, else `wrap(parts)`.
fn fold(mut parts: Vec<Pred>, wrap: fn(Vec<Pred>) -> Pred, empty: bool) -> Pred {
    match parts.len() {
        0 => Pred::Const(empty),
        1 => parts.pop().expect("one part"),
        _ => wrap(parts),
    }
}

fn test_text(test: &NodeTest) -> String {
    // An expanded name `{uri}local` shows as the query may write it, `Q{uri}local`.
    let shown = |n: &str| if n.starts_with('{') { format!("Q{n}") } else { n.to_owned() };
    match test {
        NodeTest::Element(n) => shown(n),
        NodeTest::AnyElement => "*".into(),
        NodeTest::Attribute(n) => format!("@{}", shown(n)),
        NodeTest::AnyAttribute => "@*".into(),
        NodeTest::Text => "text()".into(),
        NodeTest::Node => "node()".into(),
        NodeTest::SelfNode => "node()".into(),
    }
}
