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
//! Two uses, one walk: [`lower`] judges the tree alone (the store's choice of plan, so
//! `child::a` lowers as `a` does); `lower_text` also reads the text the tree was
//! parsed from (its tokens), for `parser::parse`: the subset's syntax (`parser.rs`) has
//! no spelled-out axes, no parentheses around paths or comparison operands, and signs
//! only glued to numbers, which the tree no longer shows. It names the first construct
//! outside the subset in text order, with its column, and gives the subset tree the
//! spans of the text (a comparison spans both operands).
//!
//! Read next: `parser.rs` (the subset's grammar), `../store/query/general.rs` (who uses
//! both).

use super::ast::{CompareOp, Literal, LocationPath, NodeTest, Predicate, Query, Separator, Span, Step};
use super::expr::{ArithOp, Axis, AxisStep, Expr, Path, Start, Test};
use super::functions::Function;
use super::lexer::{Tok, Token, column};
use crate::error::Error;

/// The subset query equal to `expr`, when there is one.
pub fn lower(expr: &Expr) -> Option<Query> {
    Lowering { text: None }.query(expr).ok()
}

/// The subset query that `src` spells, `expr` and `tokens` being what the full grammar
/// read from it; else [`Error::XPathUnsupported`] naming the first construct (in text
/// order) outside the subset, and its column.
pub(crate) fn lower_text(src: &str, expr: &Expr, tokens: &[Token]) -> Result<Query, Error> {
    let literals = tokens.iter().enumerate().filter(|(_, t)| matches!(t.tok, Tok::Str(_) | Tok::Num(..)));
    let text = Text { tokens, literals: literals.map(|(i, _)| i).collect(), taken: 0, passed: 0 };
    Lowering { text: Some(text) }
        .query(expr)
        .map_err(|refusal| Error::XPathUnsupported { column: column(src, refusal.at), construct: refusal.construct })
}

/// The longest leading steps of an absolute path that form a subset path: the path
/// and how many steps of `path` it covers (at least one), or `None`.
pub fn lower_prefix(path: &Path) -> Option<(LocationPath, usize)> {
    (1..=path.steps.len()).rev().find_map(|k| {
        let steps = Lowering { text: None }.steps(&path.steps[..k]).ok()?;
        Some((LocationPath { absolute: true, steps, span: path.span }, k))
    })
}

/// Why an expression is outside the subset: the construct and its byte offset.
struct Refusal {
    at: usize,
    construct: String,
}

fn refuse<T>(at: usize, construct: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal { at, construct: construct.into() })
}

/// The tokens behind the tree, read in text order alongside the walk (which visits
/// the tree in text order and stops at the first refusal).
struct Text<'t> {
    tokens: &'t [Token],
    /// Indexes of the string and number tokens, and how many the walk has taken.
    literals: Vec<usize>,
    taken: usize,
    /// Byte offset up to which the walk has read the text.
    passed: usize,
}

impl Text<'_> {
    /// The index of the first token starting at or after byte `at`.
    fn index_at(&self, at: usize) -> usize {
        self.tokens.partition_point(|t| t.span.start < at)
    }

    fn tok(&self, index: usize) -> &Tok {
        self.tokens.get(index).map_or(&Tok::End, |t| &t.tok)
    }

    fn start(&self, index: usize) -> usize {
        self.tokens.get(index).map_or(0, |t| t.span.start)
    }

    /// The next literal's token index (not taken).
    fn next_literal(&self) -> usize {
        self.literals.get(self.taken).copied().unwrap_or(usize::MAX)
    }

    /// The first `-` at or after what the walk has read: the sign the walk meets next.
    fn next_minus(&self) -> usize {
        let from = self.index_at(self.passed);
        (from..self.tokens.len()).find(|&i| *self.tok(i) == Tok::Minus).unwrap_or(from)
    }

    /// The operator after an operand the walk has just read (past closing parentheses).
    fn operator_after(&self) -> usize {
        let from = self.index_at(self.passed);
        let at = (from..self.tokens.len()).find(|&i| *self.tok(i) != Tok::RParen).unwrap_or(from);
        self.start(at)
    }

    fn pass(&mut self, end: usize) {
        self.passed = self.passed.max(end);
    }
}

/// A comparison operand: a relative path or a literal.
enum Operand {
    Path(LocationPath),
    Literal(Literal),
}

/// The walk; `text` is present for [`lower_text`].
struct Lowering<'t> {
    text: Option<Text<'t>>,
}

impl Lowering<'_> {
    fn query(&mut self, expr: &Expr) -> Result<Query, Refusal> {
        let mut paths = Vec::new();
        self.union(expr, &mut paths)?;
        let (start, end) = (paths.first().map_or(0, |p| p.span.start), paths.last().map_or(0, |p| p.span.end));
        Ok(Query { paths, span: Span { start, end } })
    }

    fn union(&mut self, expr: &Expr, out: &mut Vec<LocationPath>) -> Result<(), Refusal> {
        match expr {
            Expr::Union(a, b) => {
                self.union(a, out)?;
                self.union(b, out)
            }
            Expr::Path(path) => {
                self.unparenthesised(path.span.start)?;
                let absolute = match &path.start {
                    Start::Root => true,
                    Start::Context => false,
                    Start::Filter(primary, _) => return self.filter(primary, path),
                };
                out.push(LocationPath { absolute, steps: self.steps(&path.steps)?, span: path.span });
                self.pass(path.span.end);
                Ok(())
            }
            Expr::Call(call) => refuse(call.span.start, format!("function `{}()`", call.function.name())),
            Expr::Or(a, _) | Expr::And(a, _) | Expr::Compare(_, a, _) => {
                let start = self.start(expr);
                self.leading(a)?;
                refuse(start, "a boolean expression (`or`, `and`, a comparison) outside a predicate")
            }
            Expr::Arith(op, a, _) => {
                self.leading(a)?;
                refuse(self.operator_after(), format!("arithmetic operator `{}`", arith_symbol(*op)))
            }
            Expr::String(_) | Expr::Number(..) | Expr::Negate(_) => {
                let start = self.start(expr);
                self.operand(expr)?;
                refuse(start, "a literal as the query")
            }
        }
    }

    /// The left operand of an operator outside predicates, read as a query (so that
    /// what is refused in it comes first, in text order).
    fn leading(&mut self, expr: &Expr) -> Result<(), Refusal> {
        match expr {
            Expr::String(_) | Expr::Number(..) | Expr::Negate(_) => self.operand(expr).map(drop),
            _ => self.union(expr, &mut Vec::new()),
        }
    }

    /// A top-level path must not stand in parentheses, which the tree does not keep.
    fn unparenthesised(&self, start: usize) -> Result<(), Refusal> {
        let Some(text) = &self.text else { return Ok(()) };
        let first = text.index_at(start);
        let mut open = first;
        while open > 0 && *text.tok(open - 1) == Tok::LParen {
            open -= 1;
        }
        if open == first { Ok(()) } else { refuse(text.start(open), "parentheses around a location path") }
    }

    /// A path starting at a filter expression (`id('a')/b`, `(//a)[1]`).
    fn filter<T>(&self, primary: &Expr, path: &Path) -> Result<T, Refusal> {
        match primary {
            Expr::Call(call) => refuse(call.span.start, format!("function `{}()`", call.function.name())),
            _ => refuse(path.span.start, "parentheses around a location path"),
        }
    }

    fn steps(&mut self, steps: &[AxisStep]) -> Result<Vec<Step>, Refusal> {
        let mut out = Vec::new();
        let mut separator = Separator::Child;
        for step in steps {
            self.abbreviated(step)?;
            if step.is_descendant_or_self() && separator == Separator::Child {
                separator = Separator::Descendant;
                continue;
            }
            out.push(self.step(step, separator)?);
            separator = Separator::Child;
        }
        match separator {
            Separator::Child => Ok(out),
            // A trailing `//` has no subset form (and no text spells it).
            Separator::Descendant => refuse(steps.last().map_or(0, |s| s.span.start), "a trailing `//`"),
        }
    }

    /// The subset writes axes abbreviated only (`@a`, `.`, `//`, none for `child`).
    fn abbreviated(&self, step: &AxisStep) -> Result<(), Refusal> {
        let Some(text) = &self.text else { return Ok(()) };
        let at = text.index_at(step.span.start);
        match (text.tok(at), text.tok(at + 1)) {
            (Tok::Name(_), Tok::DoubleColon) => refuse(step.span.start, format!("axis `{}::`", step.axis.name())),
            _ => Ok(()),
        }
    }

    fn step(&mut self, step: &AxisStep, separator: Separator) -> Result<Step, Refusal> {
        let test = self.node_test(step)?;
        let predicates = step.predicates.iter().map(|p| self.predicate(p)).collect::<Result<Vec<_>, _>>()?;
        Ok(Step { separator, test, predicates, span: step.span })
    }

    fn node_test(&self, step: &AxisStep) -> Result<NodeTest, Refusal> {
        let at = step.span.start;
        Ok(match (step.axis, &step.test) {
            (Axis::Child, Test::Name(name)) => NodeTest::Element(self.plain_name(name, at)?),
            (Axis::Child, Test::Any) => NodeTest::AnyElement,
            (Axis::Child, Test::Text) => NodeTest::Text,
            (Axis::Child, Test::Node) => NodeTest::Node,
            (Axis::Child, Test::Comment) => return refuse(at, "function `comment()`"),
            (Axis::Child, Test::Pi(_)) => return refuse(at, "function `processing-instruction()`"),
            (Axis::Attribute, Test::Name(name)) => NodeTest::Attribute(self.plain_name(name, self.after_at(at))?),
            (Axis::Attribute, Test::Any) => NodeTest::AnyAttribute,
            (Axis::Attribute, Test::Node) if self.text.is_none() => NodeTest::AnyAttribute,
            (Axis::Attribute, test) => {
                return refuse(at, format!("node test `{test}` on the attribute axis"));
            }
            (Axis::SelfAxis, Test::Node) if step.predicates.is_empty() => NodeTest::SelfNode,
            (Axis::Parent, Test::Node) => return refuse(at, "parent step `..`"),
            (axis, _) => return refuse(at, format!("axis `{}::`", axis.name())),
        })
    }

    /// Where the name after `@` starts.
    fn after_at(&self, at: usize) -> usize {
        self.text.as_ref().map_or(at, |text| text.start(text.index_at(at) + 1))
    }

    /// A local name, or an expanded `{uri}local`; a prefix needs the bindings only the
    /// full grammar's callers resolve (`names.rs`), so the text may not hold one.
    fn plain_name(&self, name: &str, at: usize) -> Result<String, Refusal> {
        if self.text.is_some() && name.contains(':') && !name.starts_with('{') {
            return refuse(at, format!("namespace prefix in `{name}`"));
        }
        Ok(name.to_owned())
    }

    fn predicate(&mut self, expr: &Expr) -> Result<Predicate, Refusal> {
        Ok(match expr {
            Expr::Or(a, b) => Predicate::Or(Box::new(self.predicate(a)?), Box::new(self.predicate(b)?)),
            Expr::And(a, b) => Predicate::And(Box::new(self.predicate(a)?), Box::new(self.predicate(b)?)),
            Expr::Call(call) if call.function == Function::Not && call.args.len() == 1 => {
                Predicate::Not(Box::new(self.predicate(&call.args[0])?))
            }
            Expr::Compare(op, a, b) => self.comparison(*op, a, b)?,
            _ => {
                let start = self.start(expr);
                match self.operand(expr)? {
                    Operand::Path(path) => Predicate::Exists(path),
                    Operand::Literal(Literal::Number(..)) => return refuse(start, "positional predicate"),
                    Operand::Literal(_) => return refuse(start, "literal as a predicate"),
                }
            }
        })
    }

    /// `path op literal` or `literal op path`, operands bare.
    fn comparison(&mut self, op: CompareOp, a: &Expr, b: &Expr) -> Result<Predicate, Refusal> {
        let start = self.start(a);
        let left = self.operand(a)?;
        self.operator_follows(start)?;
        let right_start = self.start(b);
        self.operator_precedes(right_start)?;
        let right = self.operand(b)?;
        let span = Span { start, end: self.passed() };
        let (path, op, literal) = match (left, right) {
            (Operand::Path(path), Operand::Literal(literal)) => (path, op, literal),
            (Operand::Literal(literal), Operand::Path(path)) => (path, op.flipped(), literal),
            (Operand::Path(_), Operand::Path(_)) => return refuse(start, "comparison between two paths"),
            (Operand::Literal(_), Operand::Literal(_)) => return refuse(start, "comparison between two literals"),
        };
        let span = if self.text.is_some() { span } else { path.span };
        Ok(Predicate::Compare { path, op, literal, span })
    }

    /// After a comparison's left operand (just read) the operator follows; a `)` there
    /// closes parentheses around the operand, which the subset does not write.
    fn operator_follows(&self, start: usize) -> Result<(), Refusal> {
        let Some(text) = &self.text else { return Ok(()) };
        match text.tok(text.index_at(text.passed)) {
            Tok::Eq | Tok::Ne | Tok::Lt | Tok::Le | Tok::Gt | Tok::Ge => Ok(()),
            _ => refuse(text.start(text.index_at(start).saturating_sub(1)), PARENTHESISED_OPERAND),
        }
    }

    /// Before a comparison's right operand, starting at byte `start`, the operator.
    fn operator_precedes(&self, start: usize) -> Result<(), Refusal> {
        let Some(text) = &self.text else { return Ok(()) };
        let before = text.index_at(start).saturating_sub(1);
        match text.tok(before) {
            Tok::Eq | Tok::Ne | Tok::Lt | Tok::Le | Tok::Gt | Tok::Ge => Ok(()),
            _ => refuse(text.start(before), PARENTHESISED_OPERAND),
        }
    }

    /// A comparison operand or a predicate's value: a relative path or a literal.
    fn operand(&mut self, expr: &Expr) -> Result<Operand, Refusal> {
        Ok(match expr {
            Expr::Path(path) => Operand::Path(self.relative(path)?),
            Expr::String(s) => {
                self.take_literal();
                Operand::Literal(Literal::String(s.clone()))
            }
            Expr::Number(n, digits) => {
                self.take_literal();
                Operand::Literal(Literal::Number(*n, digits.clone()))
            }
            Expr::Negate(inner) => match inner.as_ref() {
                Expr::Number(n, digits) => {
                    self.glued_sign()?;
                    self.take_literal();
                    Operand::Literal(Literal::Number(-n, format!("-{digits}")))
                }
                _ => return refuse(self.start(expr), "arithmetic operator `-`"),
            },
            Expr::Arith(op, a, _) => {
                self.operand(a)?;
                return refuse(self.operator_after(), format!("arithmetic operator `{}`", arith_symbol(*op)));
            }
            Expr::Union(a, _) => {
                self.operand(a)?;
                return refuse(self.operator_after(), "union `|` inside a predicate");
            }
            Expr::Call(call) => return refuse(call.span.start, format!("function `{}()`", call.function.name())),
            Expr::Or(..) | Expr::And(..) | Expr::Compare(..) => {
                let start = self.start(expr);
                self.predicate(expr)?;
                return refuse(start, "a boolean expression (`or`, `and`, a comparison) as an operand");
            }
        })
    }

    fn relative(&mut self, path: &Path) -> Result<LocationPath, Refusal> {
        match &path.start {
            Start::Context => {}
            Start::Root => return refuse(path.span.start, "absolute path inside a predicate"),
            Start::Filter(primary, _) => return self.filter(primary, path),
        }
        let steps = self.steps(&path.steps)?;
        self.pass(path.span.end);
        Ok(LocationPath { absolute: false, steps, span: path.span })
    }

    /// A negative number's sign touches its digits (`-1`); `- 1` and `-(1)` are
    /// arithmetic in the subset's grammar.
    fn glued_sign(&self) -> Result<(), Refusal> {
        let Some(text) = &self.text else { return Ok(()) };
        let (minus, number) = (text.next_minus(), text.next_literal());
        let end = text.tokens.get(minus).map_or(0, |t| t.span.end);
        if minus + 1 == number && end == text.start(number) {
            return Ok(());
        }
        refuse(text.start(minus), "arithmetic operator `-`")
    }

    /// Where `expr`'s text starts (parentheses aside); 0 without the text.
    fn start(&self, expr: &Expr) -> usize {
        let Some(text) = &self.text else { return 0 };
        match expr {
            Expr::Or(a, _) | Expr::And(a, _) | Expr::Compare(_, a, _) | Expr::Arith(_, a, _) | Expr::Union(a, _) => {
                self.start(a)
            }
            Expr::Negate(_) => text.start(text.next_minus()),
            Expr::Path(path) => path.span.start,
            Expr::Call(call) => call.span.start,
            Expr::String(_) | Expr::Number(..) => text.start(text.next_literal()),
        }
    }

    fn operator_after(&self) -> usize {
        self.text.as_ref().map_or(0, Text::operator_after)
    }

    fn take_literal(&mut self) {
        if let Some(text) = &mut self.text {
            let end = text.tokens.get(text.next_literal()).map_or(0, |t| t.span.end);
            text.taken += 1;
            text.pass(end);
        }
    }

    fn pass(&mut self, end: usize) {
        if let Some(text) = &mut self.text {
            text.pass(end);
        }
    }

    fn passed(&self) -> usize {
        self.text.as_ref().map_or(0, |t| t.passed)
    }
}

const PARENTHESISED_OPERAND: &str = "parentheses around an operand of a comparison";

fn arith_symbol(op: ArithOp) -> &'static str {
    match op {
        ArithOp::Add => "+",
        ArithOp::Sub => "-",
        ArithOp::Mul => "*",
        ArithOp::Div => "div",
        ArithOp::Mod => "mod",
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
    fn the_tree_alone_lowers_what_the_text_spells_otherwise() {
        // Proves: `lower` judges the tree (the store plans `child::a` as `a`), while
        // `lower_text` refuses what the subset's grammar does not write.
        for (q, as_subset) in [
            ("child::a/attribute::b", "a/@b"),
            ("(//a)", "//a"),
            ("//a[(b) = -(1)]", "//a[b = -1]"),
            ("//@node()", "//@*"),
        ] {
            let lowered = lower(&parse_expr(q).expect("parses")).unwrap_or_else(|| panic!("{q} did not lower"));
            assert_eq!(lowered.to_string(), as_subset, "{q}");
            assert!(matches!(parse(q), Err(crate::error::Error::XPathUnsupported { .. })), "{q}");
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
