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

use super::paths::{PathSet, child_paths, descendant_or_self, descendant_paths, local_name};
use crate::store::XmlStore;
use crate::store::dict::Dictionary;
use crate::store::format::Kind;
use crate::xpath::{CompareOp, Literal, NodeTest, Predicate, Query, Separator, Step};
use quiredb_engine::PageRead;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt::Write as _;

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

/// Rows and time of one operator, summed over a run (for `--explain`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub calls: u64,
    pub rows: u64,
    pub nanos: u64,
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
    pub source: Source,
    pub predicates: Vec<Pred>,
    /// The step's nodes before predicates are exactly the nodes of `source.paths`.
    pub complete: bool,
    pub text: String,
    pub stats: Cell<Stats>,
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
        stats: Cell<Stats>,
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
        let branches = query.paths.iter().map(|p| compiler.steps(&p.steps, &roots, true)).collect();
        Plan { branches, roots: compiler.source(roots) }
    }

    /// The plan as an indented tree, with each operator's rows and time from the
    /// runs so far.
    pub fn explain(&self, names: &[String]) -> String {
        let mut out = String::new();
        if self.branches.len() > 1 {
            out.push_str("union (merge in document order)\n");
        }
        let indent = usize::from(self.branches.len() > 1);
        for branch in &self.branches {
            explain_steps(&mut out, branch, indent, names);
        }
        out
    }
}

struct Compiler<'a, 's, 't, T: PageRead> {
    store: &'a XmlStore<'t, T>,
    dict: &'s Dictionary,
}

impl<T: PageRead> Compiler<'_, '_, '_, T> {
    /// Compiles steps from a context of paths `context` (complete or not).
    fn steps(&self, steps: &[Step], context: &PathSet, mut complete: bool) -> Vec<StepPlan> {
        let mut out = Vec::with_capacity(steps.len());
        let mut context = context.clone();
        for step in steps {
            let (axis, paths) = match (step.separator, &step.test) {
                (Separator::Child, NodeTest::SelfNode) => (Axis::Itself, context.clone()),
                (Separator::Child, test) => (Axis::Child, child_paths(self.dict, &context, test)),
                (Separator::Descendant, NodeTest::SelfNode) => {
                    (Axis::SelfOrDescendant, descendant_or_self(self.dict, &context))
                }
                (Separator::Descendant, test) => (Axis::Descendant, descendant_paths(self.dict, &context, test)),
            };
            let mut predicates: Vec<Pred> = step.predicates.iter().map(|p| self.predicate(p, &paths)).collect();
            predicates.retain(|p| !matches!(p, Pred::Const(true)));
            let source = if predicates.iter().any(|p| matches!(p, Pred::Const(false))) {
                predicates.clear();
                self.source(PathSet::empty(self.dict.paths.len()))
            } else {
                self.source(paths)
            };
            let text = format!("{}::{}", axis.name(), test_text(&step.test));
            let has_predicates = !predicates.is_empty();
            context = source.paths.clone();
            out.push(StepPlan { axis, source, predicates, complete, text, stats: Cell::default() });
            complete = complete && !has_predicates;
        }
        out
    }

    fn predicate(&self, predicate: &Predicate, context: &PathSet) -> Pred {
        match predicate {
            Predicate::And(a, b) => {
                let mut parts = Vec::new();
                for p in [self.predicate(a, context), self.predicate(b, context)] {
                    match p {
                        Pred::Const(true) => {}
                        Pred::Const(false) => return Pred::Const(false),
                        Pred::And(inner) => parts.extend(inner),
                        other => parts.push(other),
                    }
                }
                fold(parts, Pred::And, true)
            }
            Predicate::Or(a, b) => {
                let mut parts = Vec::new();
                for p in [self.predicate(a, context), self.predicate(b, context)] {
                    match p {
                        Pred::Const(false) => {}
                        Pred::Const(true) => return Pred::Const(true),
                        Pred::Or(inner) => parts.extend(inner),
                        other => parts.push(other),
                    }
                }
                fold(parts, Pred::Or, false)
            }
            Predicate::Not(a) => match self.predicate(a, context) {
                Pred::Const(b) => Pred::Const(!b),
                other => Pred::Not(Box::new(other)),
            },
            Predicate::Exists(path) => {
                if self.attribute_always_present(&path.steps, context) {
                    return Pred::Const(true);
                }
                self.path_predicate(&path.steps, context, None)
            }
            Predicate::Compare { path, op, literal, .. } => {
                self.path_predicate(&path.steps, context, Some((*op, literal.clone())))
            }
        }
    }

    fn path_predicate(&self, steps: &[Step], context: &PathSet, compare: Option<(CompareOp, Literal)>) -> Pred {
        let steps = self.steps(steps, context, false);
        if steps.last().is_none_or(|s| s.source.paths.is_empty()) {
            return Pred::Const(false);
        }
        let compare = compare.map(|(op, literal)| {
            let last = &steps[steps.len() - 1].source;
            let indexed = match last.parts.as_slice() {
                [part] if self.store.value_index_complete(part.kind, part.name) => Some((part.kind, part.name)),
                _ => None,
            };
            Comparison { op, literal, indexed }
        });
        Pred::Path { steps, compare, stats: Cell::default() }
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
                info.kind == Kind::Attribute && local_name(&self.dict.names[info.name as usize]) == name
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

/// `Const(empty)` for no parts, the part itself for one, else `wrap(parts)`.
fn fold(mut parts: Vec<Pred>, wrap: fn(Vec<Pred>) -> Pred, empty: bool) -> Pred {
    match parts.len() {
        0 => Pred::Const(empty),
        1 => parts.pop().expect("one part"),
        _ => wrap(parts),
    }
}

fn test_text(test: &NodeTest) -> String {
    match test {
        NodeTest::Element(n) => n.clone(),
        NodeTest::AnyElement => "*".into(),
        NodeTest::Attribute(n) => format!("@{n}"),
        NodeTest::AnyAttribute => "@*".into(),
        NodeTest::Text => "text()".into(),
        NodeTest::Node => "node()".into(),
        NodeTest::SelfNode => "node()".into(),
    }
}

fn explain_steps(out: &mut String, steps: &[StepPlan], indent: usize, names: &[String]) {
    for step in steps {
        let s = step.stats.get();
        let parts: Vec<String> = step
            .source
            .parts
            .iter()
            .map(|p| {
                let name = names.get(p.name as usize).map_or("", String::as_str);
                let filter = if p.filtered { " (path-filtered)" } else { "" };
                format!("{} {name}{filter}", p.kind.name())
            })
            .collect();
        let how = if step.axis == Axis::Itself {
            "the context".to_string()
        } else if step.complete {
            format!("scan of {}", parts.join(", "))
        } else {
            format!("structural join with {}", parts.join(", "))
        };
        let _ = writeln!(
            out,
            "{:indent$}{} — {how}; {} paths, {} nodes in them; {}",
            "",
            step.text,
            step.source.paths.members().len(),
            step.source.count,
            stats_text(s),
            indent = indent * 2
        );
        for p in &step.predicates {
            explain_pred(out, p, indent + 1, names);
        }
    }
}

fn explain_pred(out: &mut String, pred: &Pred, indent: usize, names: &[String]) {
    let pad = indent * 2;
    match pred {
        Pred::Const(b) => {
            let _ = writeln!(out, "{:pad$}[{b} — decided from the path summary]", "");
        }
        Pred::And(list) | Pred::Or(list) => {
            let word = if matches!(pred, Pred::And(_)) { "and" } else { "or" };
            let _ = writeln!(out, "{:pad$}[{word}]", "");
            list.iter().for_each(|p| explain_pred(out, p, indent + 1, names));
        }
        Pred::Not(inner) => {
            let _ = writeln!(out, "{:pad$}[not]", "");
            explain_pred(out, inner, indent + 1, names);
        }
        Pred::Path { steps, compare, stats } => {
            let cmp = match compare {
                None => "exists".to_string(),
                Some(c) => {
                    let how = if c.indexed.is_some() { "value index or values" } else { "values" };
                    format!("compare {:?} {} by {how}", c.op, c.literal)
                }
            };
            let _ = writeln!(out, "{:pad$}[semi-join: {cmp}; {}]", "", stats_text(stats.get()));
            explain_steps(out, steps, indent + 1, names);
        }
    }
}

fn stats_text(s: Stats) -> String {
    if s.calls == 0 {
        return "not run".into();
    }
    format!("{} rows out in {} calls, {:.3} ms", s.rows, s.calls, s.nanos as f64 / 1e6)
}
