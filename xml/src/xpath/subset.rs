//! Which XPath 1.0 expressions are structural: the lowering from [`Expr`] to the
//! subset's [`Query`] that the store answers with joins alone.
//!
//! A union of location paths from the root (or relative at the top level) whose steps
//! are child, `//`-descendant, attribute or `.` steps with name, `*`, `text()` or
//! `node()` tests, and whose predicates are `and`, `or`, `not()`, relative paths of the
//! same kind and comparisons of such a path with a literal. Everything else — other
//! axes, positions, functions — is answered by the general evaluator, which still hands
//! the longest structural prefix of each absolute path to the joins
//! ([`lower_prefix`]).
//!
//! Read next: `../store/query/general.rs` (who uses both).

use super::ast::{Literal, LocationPath, NodeTest, Predicate, Query, Separator, Span, Step};
use super::expr::{Axis, AxisStep, Expr, Path, Start, Test};
use super::functions::Function;

/// The subset query equal to `expr`, when there is one.
pub fn lower(expr: &Expr) -> Option<Query> {
    let mut paths = Vec::new();
    collect_union(expr, &mut paths)?;
    Some(Query { paths, span: Span::default() })
}

fn collect_union(expr: &Expr, out: &mut Vec<LocationPath>) -> Option<()> {
    match expr {
        Expr::Union(a, b) => {
            collect_union(a, out)?;
            collect_union(b, out)
        }
        Expr::Path(path) => {
            let absolute = match path.start {
                Start::Root => true,
                Start::Context => false,
                Start::Filter(..) => return None,
            };
            out.push(LocationPath { absolute, steps: lower_steps(&path.steps)?, span: path.span });
            Some(())
        }
        _ => None,
    }
}

/// The longest leading steps of an absolute path that form a subset path: the path
/// and how many steps of `path` it covers (at least one), or `None`.
pub fn lower_prefix(path: &Path) -> Option<(LocationPath, usize)> {
    (1..=path.steps.len()).rev().find_map(|k| {
        let steps = lower_steps(&path.steps[..k])?;
        Some((LocationPath { absolute: true, steps, span: path.span }, k))
    })
}

fn lower_steps(steps: &[AxisStep]) -> Option<Vec<Step>> {
    let mut out = Vec::new();
    let mut separator = Separator::Child;
    for step in steps {
        if step.is_descendant_or_self() && separator == Separator::Child {
            separator = Separator::Descendant;
            continue;
        }
        out.push(lower_step(step, separator)?);
        separator = Separator::Child;
    }
    // A trailing `//` has no subset form.
    (separator == Separator::Child).then_some(out)
}

fn lower_step(step: &AxisStep, separator: Separator) -> Option<Step> {
    let test = match (step.axis, &step.test) {
        (Axis::Child, Test::Name(name)) => NodeTest::Element(name.clone()),
        (Axis::Child, Test::Any) => NodeTest::AnyElement,
        (Axis::Child, Test::Text) => NodeTest::Text,
        (Axis::Child, Test::Node) => NodeTest::Node,
        (Axis::Attribute, Test::Name(name)) => NodeTest::Attribute(name.clone()),
        (Axis::Attribute, Test::Any | Test::Node) => NodeTest::AnyAttribute,
        (Axis::SelfAxis, Test::Node) if step.predicates.is_empty() => NodeTest::SelfNode,
        _ => return None,
    };
    let predicates = step.predicates.iter().map(lower_predicate).collect::<Option<Vec<_>>>()?;
    Some(Step { separator, test, predicates, span: step.span })
}

fn lower_predicate(expr: &Expr) -> Option<Predicate> {
    Some(match expr {
        Expr::Or(a, b) => Predicate::Or(Box::new(lower_predicate(a)?), Box::new(lower_predicate(b)?)),
        Expr::And(a, b) => Predicate::And(Box::new(lower_predicate(a)?), Box::new(lower_predicate(b)?)),
        Expr::Call(call) if call.function == Function::Not => Predicate::Not(Box::new(lower_predicate(&call.args[0])?)),
        Expr::Path(path) => Predicate::Exists(relative(path)?),
        Expr::Compare(op, a, b) => match (a.as_ref(), b.as_ref()) {
            (Expr::Path(path), other) => {
                Predicate::Compare { path: relative(path)?, op: *op, literal: literal(other)?, span: path.span }
            }
            (other, Expr::Path(path)) => Predicate::Compare {
                path: relative(path)?,
                op: op.flipped(),
                literal: literal(other)?,
                span: path.span,
            },
            _ => return None,
        },
        _ => return None,
    })
}

fn relative(path: &Path) -> Option<LocationPath> {
    (path.start == Start::Context).then_some(())?;
    Some(LocationPath { absolute: false, steps: lower_steps(&path.steps)?, span: path.span })
}

fn literal(expr: &Expr) -> Option<Literal> {
    match expr {
        Expr::String(s) => Some(Literal::String(s.clone())),
        Expr::Number(n, text) => Some(Literal::Number(*n, text.clone())),
        Expr::Negate(inner) => match inner.as_ref() {
            Expr::Number(n, text) => Some(Literal::Number(-n, format!("-{text}"))),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xpath::{parse, parse_expr};

    #[test]
    fn structural_queries_lower_to_the_subset_tree() {
        for q in [
            "/",
            "/site/regions//item",
            "//a[./b]//c",
            "a/b/text()",
            "//*/@*",
            "//item[@id = \"item0\"]/node()",
            "//a[b and not(c) or d >= 3]",
            "//a[.//b != 'x']",
            "//a | //b/@c",
            "//a[b[c = -1.5]]",
            "//a[. < 10]",
            "//a[3 > b]",
            "a//.",
        ] {
            let lowered = lower(&parse_expr(q).expect("parses")).unwrap_or_else(|| panic!("{q} did not lower"));
            assert_eq!(lowered.to_string(), parse(q).expect("subset").to_string(), "{q}");
        }
    }

    #[test]
    fn the_rest_does_not_lower() {
        for q in ["//a[1]", "count(//a)", "//a/..", "//a[b = c]", "//a[/b]", "//a//", "//comment()", "//a[true()]"] {
            let Ok(expr) = parse_expr(q) else { continue };
            assert!(lower(&expr).is_none(), "{q}");
        }
        let expr = parse_expr("/site//item[1]/name").expect("parses");
        let Expr::Path(path) = expr else { panic!("a path") };
        let (prefix, steps) = lower_prefix(&path).expect("a prefix");
        assert_eq!((prefix.to_string(), steps), ("/site".to_string(), 1));
    }
}
