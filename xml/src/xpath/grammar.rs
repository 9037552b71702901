//! Recursive-descent parser for full XPath 1.0 expressions (the grammar of the
//! recommendation, §3), building [`Expr`] trees with spans.
//!
//! ```text
//! or         := and ('or' and)*
//! and        := equality ('and' equality)*
//! equality   := relational (('=' | '!=') relational)*
//! relational := additive (('<' | '<=' | '>' | '>=') additive)*
//! additive   := multiply (('+' | '-') multiply)*
//! multiply   := unary (('*' | 'div' | 'mod') unary)*
//! unary      := '-' unary | union
//! union      := pathexpr ('|' pathexpr)*
//! pathexpr   := '/' relative? | '//' relative | relative
//!             | primary pred* (('/' | '//') relative)?
//! relative   := step (('/' | '//') step)*
//! step       := '.' | '..' | (axis '::' | '@')? test pred*
//! primary    := '(' or ')' | literal | number | function '(' (or (',' or)*)? ')'
//! ```
//! After an operand, `*` and the names `and`, `or`, `div`, `mod` are operators (§3.7);
//! a name before `(` is a function unless it is a node type. Refused with
//! [`Error::XPathUnsupported`] naming the construct and its column: the `namespace`
//! axis and a variable no value is bound to ([`parse_expr_with`] replaces
//! `$name` by its bound value). Prefixed name tests (`dc:title`) are read as written
//! and resolved by `names.rs`; `Q{uri}local` is read as an expanded name.
//! Type errors XPath 1.0 can see statically (a predicate or a step after a number, a
//! union of strings, `count("a")`) and wrong arities are [`Error::XPathSyntax`]. The
//! parser never panics on any input.
//!
//! Read next: `expr.rs`, `eval.rs`.

use crate::error::{Error, Result};
use crate::xpath::ast::{CompareOp, Span};
use crate::xpath::bindings::{Atom, Bindings};
use crate::xpath::cursor::Parser;
use crate::xpath::expr::{ArithOp, Axis, AxisStep, Call, Expr, Path, Start, Test, Type};
use crate::xpath::functions::{Function, number_to_string};
use crate::xpath::lexer::{Tok, Token, column};

/// Parses a full XPath 1.0 expression (a variable reference is an error: nothing is
/// bound; see [`parse_expr_with`]).
pub fn parse_expr(src: &str) -> Result<Expr> {
    parse_expr_with(src, &Bindings::new())
}

/// Parses a full XPath 1.0 expression, each variable reference `$name` replaced by the
/// value `bindings` gives it, as the literal of that value would be.
pub fn parse_expr_with(src: &str, bindings: &Bindings) -> Result<Expr> {
    parse_expr_tokens(src, bindings).map(|(expr, _)| expr)
}

/// [`parse_expr_with`], with the tokens read (for `subset::lower_text`, which checks
/// how the text spells the tree).
pub(crate) fn parse_expr_tokens(src: &str, bindings: &Bindings) -> Result<(Expr, Vec<Token>)> {
    let mut parser = Parser::with(src, Full { bindings })?;
    let expr = parser.or()?;
    let expr = parser.finish(expr, "an operator or the end of the query")?;
    Ok((expr, parser.into_tokens()))
}

/// The grammar of this module (the marker of `cursor::Parser`), with the variables.
struct Full<'b> {
    bindings: &'b Bindings,
}

impl Parser<'_, Full<'_>> {
    fn type_error(&self, at: usize, expected: &str, found: &str) -> Error {
        Error::XPathSyntax { column: column(self.src, at), expected: expected.into(), found: found.into() }
    }

    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        self.enter()?;
        let out = f(self);
        self.leave();
        out
    }

    fn or(&mut self) -> Result<Expr> {
        let mut left = self.and()?;
        while self.keyword("or") {
            self.advance();
            left = Expr::Or(Box::new(left), Box::new(self.and()?));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr> {
        let mut left = self.equality()?;
        while self.keyword("and") {
            self.advance();
            left = Expr::And(Box::new(left), Box::new(self.equality()?));
        }
        Ok(left)
    }

    fn equality(&mut self) -> Result<Expr> {
        let mut left = self.relational()?;
        while let Some(op @ (CompareOp::Eq | CompareOp::Ne)) = self.compare_op() {
            self.advance();
            left = Expr::Compare(op, Box::new(left), Box::new(self.relational()?));
        }
        Ok(left)
    }

    fn relational(&mut self) -> Result<Expr> {
        let mut left = self.additive()?;
        while let Some(op @ (CompareOp::Lt | CompareOp::Le | CompareOp::Gt | CompareOp::Ge)) = self.compare_op() {
            self.advance();
            left = Expr::Compare(op, Box::new(left), Box::new(self.additive()?));
        }
        Ok(left)
    }

    fn compare_op(&self) -> Option<CompareOp> {
        Some(match self.peek() {
            Tok::Eq => CompareOp::Eq,
            Tok::Ne => CompareOp::Ne,
            Tok::Lt => CompareOp::Lt,
            Tok::Le => CompareOp::Le,
            Tok::Gt => CompareOp::Gt,
            Tok::Ge => CompareOp::Ge,
            _ => return None,
        })
    }

    fn additive(&mut self) -> Result<Expr> {
        let mut left = self.multiplicative()?;
        loop {
            let op = match self.peek() {
                Tok::Plus => ArithOp::Add,
                Tok::Minus => ArithOp::Sub,
                _ => return Ok(left),
            };
            self.advance();
            left = Expr::Arith(op, Box::new(left), Box::new(self.multiplicative()?));
        }
    }

    fn multiplicative(&mut self) -> Result<Expr> {
        let mut left = self.unary()?;
        loop {
            let op = match self.peek() {
                Tok::Star => ArithOp::Mul,
                Tok::Name(n) if n == "div" => ArithOp::Div,
                Tok::Name(n) if n == "mod" => ArithOp::Mod,
                _ => return Ok(left),
            };
            self.advance();
            left = Expr::Arith(op, Box::new(left), Box::new(self.unary()?));
        }
    }

    fn unary(&mut self) -> Result<Expr> {
        if *self.peek() == Tok::Minus {
            self.advance();
            // A sign before a number goes no deeper: only a chain `--…` needs the guard.
            if let Tok::Num(..) = self.peek() {
                return Ok(Expr::Negate(Box::new(self.unary()?)));
            }
            return self.nested(|p| Ok(Expr::Negate(Box::new(p.unary()?))));
        }
        self.union()
    }

    fn union(&mut self) -> Result<Expr> {
        let start = self.here();
        let mut left = self.path_expr()?;
        while *self.peek() == Tok::Pipe {
            if left.result_type() != Type::Nodes {
                return Err(self.type_error(start, "node-sets on both sides of `|`", "another value"));
            }
            self.advance();
            let right_start = self.here();
            let right = self.path_expr()?;
            if right.result_type() != Type::Nodes {
                return Err(self.type_error(right_start, "node-sets on both sides of `|`", "another value"));
            }
            left = Expr::Union(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn path_expr(&mut self) -> Result<Expr> {
        let start = self.here();
        match self.peek() {
            Tok::Slash => {
                self.advance();
                let steps = if self.starts_step() { self.relative()? } else { Vec::new() };
                Ok(self.path(Start::Root, steps, start))
            }
            Tok::DoubleSlash => {
                let span = self.advance().span;
                let mut steps = vec![AxisStep::descendant_or_self(span)];
                steps.extend(self.relative()?);
                Ok(self.path(Start::Root, steps, start))
            }
            _ if self.starts_step() => {
                let steps = self.relative()?;
                Ok(self.path(Start::Context, steps, start))
            }
            _ => self.filter_expr(),
        }
    }

    fn path(&self, start: Start, steps: Vec<AxisStep>, at: usize) -> Expr {
        Expr::Path(Path { start, steps, span: Span { start: at, end: self.prev_end() } })
    }

    fn filter_expr(&mut self) -> Result<Expr> {
        let start = self.here();
        let primary = self.primary()?;
        let mut predicates = Vec::new();
        while *self.peek() == Tok::LBracket {
            if primary.result_type() != Type::Nodes {
                return Err(self.type_error(self.here(), "a node-set before a predicate", "another value"));
            }
            predicates.push(self.predicate()?);
        }
        let steps = match self.peek() {
            Tok::Slash | Tok::DoubleSlash if primary.result_type() != Type::Nodes => {
                return Err(self.type_error(self.here(), "a node-set before `/`", "another value"));
            }
            Tok::Slash => {
                self.advance();
                self.relative()?
            }
            Tok::DoubleSlash => {
                let span = self.advance().span;
                let mut steps = vec![AxisStep::descendant_or_self(span)];
                steps.extend(self.relative()?);
                steps
            }
            _ if predicates.is_empty() => return Ok(primary),
            _ => Vec::new(),
        };
        Ok(self.path(Start::Filter(Box::new(primary), predicates), steps, start))
    }

    fn primary(&mut self) -> Result<Expr> {
        match self.peek().clone() {
            Tok::Dollar => self.variable(),
            Tok::LParen => {
                self.advance();
                let inner = self.nested(|p| p.or())?;
                self.expect(Tok::RParen, "`)` or an operator")?;
                Ok(inner)
            }
            Tok::Str(s) => {
                self.advance();
                Ok(Expr::String(s))
            }
            Tok::Num(value, text) => {
                self.advance();
                Ok(Expr::Number(value, text))
            }
            Tok::Name(name) if self.token(1).tok == Tok::LParen => self.call(&name),
            _ => Err(self.unexpected("an expression")),
        }
    }

    /// `$name`: the bound value as an expression (`grammar.rs`'s literals, `true()`,
    /// `false()`, and a number that has no literal spelled with `number()` or `-`).
    fn variable(&mut self) -> Result<Expr> {
        let start = self.advance().span.start;
        let name = match self.peek().clone() {
            Tok::Name(name) if self.here() == start + 1 => name,
            _ => return Err(self.unexpected("a variable name right after `$`")),
        };
        if name.contains(':') || name.starts_with('{') {
            return Err(self.unsupported_at(start, format!("variable `${name}` (a variable's name has no prefix)")));
        }
        let Some(value) = self.1.bindings.value(&name) else {
            let construct = format!("variable `${name}` (no value is bound to it; `--var {name}=VALUE`)");
            return Err(self.unsupported_at(start, construct));
        };
        let value = value.clone();
        let span = Span { start, end: self.advance().span.end };
        let call = |function, args| Expr::Call(Call { function, args, span });
        Ok(match value {
            Atom::String(s) => Expr::String(s),
            Atom::Boolean(b) => call(if b { Function::True } else { Function::False }, Vec::new()),
            Atom::Number(n) if n.is_finite() && n.is_sign_positive() => Expr::Number(n, number_literal(n)),
            Atom::Number(n) if n.is_finite() => Expr::Negate(Box::new(Expr::Number(-n, number_literal(-n)))),
            Atom::Number(n) => call(Function::Number, vec![Expr::String(number_to_string(n))]),
        })
    }

    fn call(&mut self, name: &str) -> Result<Expr> {
        let start = self.here();
        let Some(function) = Function::from_name(name) else {
            return Err(self.unsupported_at(start, format!("unknown function `{name}()`")));
        };
        self.advance();
        self.advance();
        let mut args = Vec::new();
        if *self.peek() != Tok::RParen {
            loop {
                let arg_start = self.here();
                let arg = self.nested(|p| p.or())?;
                if function.wants_nodes(args.len()) && arg.result_type() != Type::Nodes {
                    return Err(self.type_error(
                        arg_start,
                        &format!("a node-set argument to `{name}()`"),
                        "another value",
                    ));
                }
                args.push(arg);
                if *self.peek() != Tok::Comma {
                    break;
                }
                self.advance();
            }
        }
        self.expect(Tok::RParen, "`,` or `)`")?;
        if !function.accepts(args.len()) {
            return Err(self.type_error(
                start,
                &format!("{} arguments to `{name}()`", function.arity_text()),
                &args.len().to_string(),
            ));
        }
        Ok(Expr::Call(Call { function, args, span: Span { start, end: self.prev_end() } }))
    }

    fn predicate(&mut self) -> Result<Expr> {
        self.expect(Tok::LBracket, "`[`")?;
        let predicate = self.nested(|p| p.or())?;
        self.expect(Tok::RBracket, "`]` or an operator")?;
        Ok(predicate)
    }

    fn starts_step(&self) -> bool {
        match self.peek() {
            Tok::Star | Tok::At | Tok::Dot | Tok::DotDot => true,
            Tok::Name(name) => self.token(1).tok != Tok::LParen || is_node_type(name),
            _ => false,
        }
    }

    fn relative(&mut self) -> Result<Vec<AxisStep>> {
        let mut steps = vec![self.step()?];
        loop {
            match self.peek() {
                Tok::Slash => {
                    self.advance();
                }
                Tok::DoubleSlash => {
                    let span = self.advance().span;
                    steps.push(AxisStep::descendant_or_self(span));
                }
                _ => return Ok(steps),
            }
            steps.push(self.step()?);
        }
    }

    fn step(&mut self) -> Result<AxisStep> {
        let start = self.here();
        let abbreviated = match self.peek() {
            Tok::Dot => Some(Axis::SelfAxis),
            Tok::DotDot => Some(Axis::Parent),
            _ => None,
        };
        if let Some(axis) = abbreviated {
            self.advance();
            if *self.peek() == Tok::LBracket {
                return Err(self.unexpected("a step after `.` or `..` (they take no predicates)"));
            }
            return Ok(AxisStep { axis, test: Test::Node, predicates: Vec::new(), span: self.span_from(start) });
        }
        let axis = self.axis()?;
        let test = self.node_test()?;
        let mut predicates = Vec::new();
        while *self.peek() == Tok::LBracket {
            predicates.push(self.predicate()?);
        }
        Ok(AxisStep { axis, test, predicates, span: self.span_from(start) })
    }

    fn axis(&mut self) -> Result<Axis> {
        if *self.peek() == Tok::At {
            self.advance();
            return Ok(Axis::Attribute);
        }
        let Tok::Name(name) = self.peek().clone() else { return Ok(Axis::Child) };
        if self.token(1).tok != Tok::DoubleColon {
            return Ok(Axis::Child);
        }
        if name == "namespace" {
            return Err(self.unsupported_at(self.here(), "axis `namespace::`"));
        }
        let axis = Axis::from_name(&name).ok_or_else(|| self.unexpected("an axis name before `::`"))?;
        self.advance();
        self.advance();
        Ok(axis)
    }

    fn node_test(&mut self) -> Result<Test> {
        match self.peek().clone() {
            Tok::Star => {
                self.advance();
                Ok(Test::Any)
            }
            Tok::Name(name) if self.token(1).tok == Tok::LParen && is_node_type(&name) => self.node_type(&name),
            Tok::Name(_) if self.token(1).tok == Tok::LParen => {
                Err(self.unexpected("a node test (a function call cannot follow an axis)"))
            }
            // `p:local` is resolved to `{uri}local` before evaluation (`names.rs`).
            Tok::Name(name) => {
                self.advance();
                Ok(Test::Name(name))
            }
            _ => Err(self.unexpected("a node test")),
        }
    }

    fn node_type(&mut self, name: &str) -> Result<Test> {
        self.advance();
        self.advance();
        let test = match (name, self.peek().clone()) {
            ("processing-instruction", Tok::Str(target)) => {
                self.advance();
                Test::Pi(Some(target))
            }
            ("processing-instruction", _) => Test::Pi(None),
            ("text", _) => Test::Text,
            ("comment", _) => Test::Comment,
            _ => Test::Node,
        };
        self.expect(Tok::RParen, "`)`")?;
        Ok(test)
    }
}

/// A number literal for finite `n ≥ 0` that reads back as `n`: Rust prints floats in
/// full decimal, never with an exponent, which XPath 1.0 literals lack.
fn number_literal(n: f64) -> String {
    format!("{n}")
}

fn is_node_type(name: &str) -> bool {
    matches!(name, "text" | "node" | "comment" | "processing-instruction")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xpath::cursor::MAX_NESTING;

    fn printed(q: &str) -> String {
        parse_expr(q).unwrap_or_else(|e| panic!("{q}: {e}")).to_string()
    }

    #[test]
    fn parses_and_prints_every_construct() {
        for q in [
            "/",
            "//item[1]",
            "//person[not(@income)]",
            "//text()[contains(., \"gold\")]",
            "count(//open_auction)",
            "../name",
            "following-sibling::*[last()]",
            "(//a)[position() < 3]/b",
            "//a[. = 'x' or -@n >= 2 * 3 div 4 mod 5 - 1]",
            "ancestor-or-self::node()/preceding::comment()",
            "processing-instruction('t') | //processing-instruction()",
            "//processing-instruction('a\"b') | processing-instruction(\"c'd\")",
            "concat(name(), local-name(..), substring('abc', 2, 1))",
            "sum(//b) + round(floor(1.5) + ceiling(-0.5))",
            "boolean(1) = true() and false() != not(0)",
            "-(-3)",
            "div div div",
            "*[* * *]",
        ] {
            let once = printed(q);
            assert_eq!(printed(&once), once, "{q}");
        }
        assert_eq!(printed("//a"), "/descendant-or-self::node()/child::a");
        assert_eq!(printed("@*/.."), "attribute::*/parent::node()");
        assert_eq!(printed("1 + 2 * 3"), "1 + 2 * 3");
        assert_eq!(printed("(1 + 2) * 3 - (4 - 5)"), "(1 + 2) * 3 - (4 - 5)");
        assert_eq!(printed("(a or b) and c = (d < e)"), "(child::a or child::b) and child::c = child::d < child::e");
        assert_eq!(printed("- -1"), "--1");
        assert_eq!(printed("div div div"), "child::div div child::div");
    }

    #[test]
    fn variables_are_their_bound_values_and_print_as_literals_that_read_back() {
        let mut b = Bindings::new();
        b.variable("s", Atom::String("O'Brien said \"hi\"".into()));
        b.variable("q", Atom::String("it's".into())).variable("n", Atom::Number(-2.5));
        b.variable("tiny", Atom::Number(1e-7)).variable("nan", Atom::Number(f64::NAN));
        b.variable("t", Atom::Boolean(true)).variable("z", Atom::Number(-0.0));
        let cases = [
            (
                "//a[@k = $s]",
                "/descendant-or-self::node()/child::a[attribute::k = concat(\"O\", \"'\", 'Brien said \"hi\"')]",
            ),
            ("$q", "\"it's\""),
            ("$n * 2", "-2.5 * 2"),
            ("$tiny", "0.0000001"),
            ("$nan", "number(\"NaN\")"),
            ("$t and $z = 0", "true() and -0 = 0"),
        ];
        for (query, printed) in cases {
            let expr = parse_expr_with(query, &b).unwrap_or_else(|e| panic!("{query}: {e}"));
            assert_eq!(expr.to_string(), printed, "{query}");
            let again = parse_expr(printed).unwrap_or_else(|e| panic!("{printed}: {e}"));
            assert_eq!(again.to_string(), printed, "{query}");
        }
        assert_eq!(parse_expr_with("$s", &b).unwrap(), Expr::String("O'Brien said \"hi\"".into()));
        assert_eq!(parse_expr_with("$tiny", &b).unwrap(), Expr::Number(1e-7, "0.0000001".into()));
        for (query, column) in [("1 + $missing", 5), ("$ s", 3), ("count($s)", 7), ("//a[$p:s]", 5)] {
            let error = parse_expr_with(query, &b).err().unwrap_or_else(|| panic!("{query} must fail"));
            assert!(error.to_string().contains(&format!("column {column}")), "{query}: {error}");
        }
    }

    #[test]
    fn refuses_with_the_construct_and_its_column() {
        let cases = [
            ("//a[$x]", 5, "variable `$x` (no value is bound to it; `--var x=VALUE`)"),
            ("/a/namespace::b", 4, "axis `namespace::`"),
            ("frobnicate(1)", 1, "unknown function `frobnicate()`"),
        ];
        for (q, want_column, want) in cases {
            match parse_expr(q) {
                Err(Error::XPathUnsupported { column, construct }) => {
                    assert_eq!((column, construct.as_str()), (want_column, want), "{q}")
                }
                other => panic!("{q}: expected unsupported, got {other:?}"),
            }
        }
    }

    #[test]
    fn static_type_and_arity_errors_have_positions() {
        for (q, want_column) in [
            ("count('a')", 7),
            ("1 | //a", 1),
            ("(1)[1]", 4),
            ("substring('a')", 1),
            ("true(1)", 1),
            ("(1)/a", 4),
            ("", 1),
            ("//a[", 5),
            ("a/..[1]", 5),
            ("foo::a", 1),
        ] {
            match parse_expr(q) {
                Err(Error::XPathSyntax { column, .. }) => assert_eq!(column, want_column, "{q}"),
                other => panic!("{q}: expected a syntax error, got {other:?}"),
            }
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        for q in [format!("//a{}", "[b".repeat(10_000)), "-".repeat(10_000) + "1", "(".repeat(10_000)] {
            assert!(matches!(parse_expr(&q), Err(Error::XPathUnsupported { .. })));
        }
        // A sign before a number takes no level of its own (`-1` nests as `1` does).
        let deepest = |inner: &str| format!("//a{}[{inner}{}", "[b".repeat(MAX_NESTING - 1), "]".repeat(MAX_NESTING));
        assert!(parse_expr(&deepest("c = -1")).is_ok());
        assert!(matches!(parse_expr(&deepest("c = --1")), Err(Error::XPathUnsupported { .. })));
    }
}
