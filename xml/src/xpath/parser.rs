//! Recursive-descent parser for the XPath subset (grammar below).
//!
//! ```text
//! query     := path ('|' path)*
//! path      := '/' steps? | '//' steps | steps
//! steps     := step (('/' | '//') step)*
//! step      := '.' | ('@' (name | '*') | name | '*' | 'text' '(' ')' | 'node' '(' ')') pred*
//! pred      := '[' or ']'
//! or        := and ('or' and)*
//! and       := unary ('and' unary)*
//! unary     := 'not' '(' or ')' | '(' or ')' | operand (cmp operand)?
//! operand   := relative path | string literal | number literal
//! ```
//! Exactly one side of a comparison is a path. Everything else — other axes, function
//! calls, positional predicates, `..`, variables, arithmetic, namespace prefixes — is an
//! [`Error::XPathUnsupported`] naming the construct and its column; malformed text is an
//! [`Error::XPathSyntax`]. The parser never panics on any input.
//!
//! Read next: `ast.rs`, `../reference.rs`.

use crate::error::{Error, Result};
use crate::xpath::ast::{CompareOp, Literal, LocationPath, NodeTest, Predicate, Query, Separator, Span, Step};
use crate::xpath::cursor::Parser;
use crate::xpath::lexer::{Tok, column};

/// Parses a query of the subset.
pub fn parse(src: &str) -> Result<Query> {
    let mut parser = Parser::<Subset>::new(src)?;
    let query = parser.query()?;
    parser.finish(query, "`|` or the end of the query")
}

/// The grammar of this module (the marker of `cursor::Parser`).
#[derive(Default)]
struct Subset;

impl Parser<'_, Subset> {
    fn unsupported(&self, construct: impl Into<String>) -> Error {
        self.unsupported_at(self.here(), construct)
    }

    fn query(&mut self) -> Result<Query> {
        let start = self.token(0).span.start;
        let mut paths = vec![self.path(true)?];
        while *self.peek() == Tok::Pipe {
            self.advance();
            paths.push(self.path(true)?);
        }
        Ok(Query { paths, span: Span { start, end: self.prev_end() } })
    }

    fn path(&mut self, top_level: bool) -> Result<LocationPath> {
        let start = self.token(0).span.start;
        let (absolute, first_separator) = match self.peek() {
            Tok::Slash | Tok::DoubleSlash if !top_level => {
                return Err(self.unsupported("absolute path inside a predicate"));
            }
            Tok::Slash => (true, Some(Separator::Child)),
            Tok::DoubleSlash => (true, Some(Separator::Descendant)),
            _ => (false, None),
        };
        if first_separator.is_some() {
            self.advance();
        }
        let mut steps = Vec::new();
        let bare_root = first_separator == Some(Separator::Child) && !self.starts_step();
        if !bare_root {
            steps.push(self.step(first_separator.unwrap_or(Separator::Child))?);
            while let Some(separator) = self.separator() {
                self.advance();
                steps.push(self.step(separator)?);
            }
        }
        Ok(LocationPath { absolute, steps, span: Span { start, end: self.prev_end() } })
    }

    fn separator(&self) -> Option<Separator> {
        match self.peek() {
            Tok::Slash => Some(Separator::Child),
            Tok::DoubleSlash => Some(Separator::Descendant),
            _ => None,
        }
    }

    fn starts_step(&self) -> bool {
        matches!(self.peek(), Tok::Name(_) | Tok::Star | Tok::At | Tok::Dot | Tok::DotDot)
    }

    fn step(&mut self, separator: Separator) -> Result<Step> {
        let start = self.token(0).span.start;
        let test = self.node_test()?;
        let mut predicates = Vec::new();
        while *self.peek() == Tok::LBracket {
            if test == NodeTest::SelfNode {
                return Err(self.unsupported("predicate after `.`"));
            }
            predicates.push(self.predicate()?);
        }
        Ok(Step { separator, test, predicates, span: Span { start, end: self.prev_end() } })
    }

    fn node_test(&mut self) -> Result<NodeTest> {
        match self.peek().clone() {
            Tok::Dot => {
                self.advance();
                Ok(NodeTest::SelfNode)
            }
            Tok::DotDot => Err(self.unsupported("parent step `..`")),
            Tok::Star => {
                self.advance();
                Ok(NodeTest::AnyElement)
            }
            Tok::At => {
                self.advance();
                match self.peek().clone() {
                    Tok::Star => {
                        self.advance();
                        Ok(NodeTest::AnyAttribute)
                    }
                    Tok::Name(name) => {
                        self.check_plain_name(&name)?;
                        self.advance();
                        Ok(NodeTest::Attribute(name))
                    }
                    _ => Err(self.unexpected("an attribute name or `*` after `@`")),
                }
            }
            Tok::Name(name) => self.named_test(name),
            _ => Err(self.unexpected("a location step")),
        }
    }

    fn named_test(&mut self, name: String) -> Result<NodeTest> {
        match &self.token(1).tok {
            Tok::DoubleColon => Err(self.unsupported(format!("axis `{name}::`"))),
            Tok::LParen => {
                let test = match name.as_str() {
                    "text" => NodeTest::Text,
                    "node" => NodeTest::Node,
                    _ => return Err(self.unsupported(format!("function `{name}()`"))),
                };
                self.advance();
                self.advance();
                self.expect(Tok::RParen, "`)`")?;
                Ok(test)
            }
            _ => {
                self.check_plain_name(&name)?;
                self.advance();
                Ok(NodeTest::Element(name))
            }
        }
    }

    /// A local name, or an expanded `Q{uri}local` (read as `{uri}local`); a prefix
    /// needs the bindings only the full grammar's callers resolve.
    fn check_plain_name(&self, name: &str) -> Result<()> {
        if name.contains(':') && !name.starts_with('{') {
            return Err(self.unsupported(format!("namespace prefix in `{name}`")));
        }
        Ok(())
    }

    fn predicate(&mut self) -> Result<Predicate> {
        self.expect(Tok::LBracket, "`[`")?;
        self.enter()?;
        let predicate = self.or()?;
        self.leave();
        self.expect(Tok::RBracket, "`]` or an operator")?;
        Ok(predicate)
    }

    fn or(&mut self) -> Result<Predicate> {
        let mut left = self.and()?;
        while self.keyword("or") {
            self.advance();
            left = Predicate::Or(Box::new(left), Box::new(self.and()?));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Predicate> {
        let mut left = self.unary()?;
        while self.keyword("and") {
            self.advance();
            left = Predicate::And(Box::new(left), Box::new(self.unary()?));
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Predicate> {
        if self.keyword("not") && self.token(1).tok == Tok::LParen {
            self.advance();
            return Ok(Predicate::Not(Box::new(self.parenthesised()?)));
        }
        if *self.peek() == Tok::LParen {
            return self.parenthesised();
        }
        self.comparison()
    }

    fn parenthesised(&mut self) -> Result<Predicate> {
        self.expect(Tok::LParen, "`(`")?;
        self.enter()?;
        let inner = self.or()?;
        self.leave();
        self.expect(Tok::RParen, "`)` or an operator")?;
        Ok(inner)
    }

    fn comparison(&mut self) -> Result<Predicate> {
        let start = self.token(0).span.start;
        let left = self.operand()?;
        self.reject_arithmetic()?;
        let Some(op) = self.compare_op() else {
            return match left {
                Operand::Path(path) => Ok(Predicate::Exists(path)),
                Operand::Literal(Literal::Number(..)) => Err(self.unsupported_at(start, "positional predicate")),
                Operand::Literal(_) => Err(self.unsupported_at(start, "literal as a predicate")),
            };
        };
        self.advance();
        let right = self.operand()?;
        self.reject_arithmetic()?;
        let span = Span { start, end: self.prev_end() };
        match (left, right) {
            (Operand::Path(path), Operand::Literal(literal)) => Ok(Predicate::Compare { path, op, literal, span }),
            (Operand::Literal(literal), Operand::Path(path)) => {
                Ok(Predicate::Compare { path, op: op.flipped(), literal, span })
            }
            (Operand::Path(_), Operand::Path(_)) => Err(self.unsupported_at(start, "comparison between two paths")),
            (Operand::Literal(_), Operand::Literal(_)) => {
                Err(self.unsupported_at(start, "comparison between two literals"))
            }
        }
    }

    /// Arithmetic after an operand is outside the subset; name it.
    fn reject_arithmetic(&self) -> Result<()> {
        let op = match self.peek() {
            Tok::Name(n) if n == "div" || n == "mod" => n.clone(),
            Tok::Plus => "+".into(),
            Tok::Minus => "-".into(),
            Tok::Star => "*".into(),
            Tok::Pipe => return Err(self.unsupported("union `|` inside a predicate")),
            _ => return Ok(()),
        };
        Err(self.unsupported(format!("arithmetic operator `{op}`")))
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

    fn operand(&mut self) -> Result<Operand> {
        match self.peek().clone() {
            Tok::Str(s) => {
                self.advance();
                Ok(Operand::Literal(Literal::String(s)))
            }
            Tok::Num(value, text) => {
                self.advance();
                Ok(Operand::Literal(Literal::Number(value, text)))
            }
            Tok::Minus => self.negative_number(),
            Tok::Dollar => Err(self.unsupported("variable reference")),
            Tok::Plus => Err(self.unsupported("arithmetic operator `+`")),
            Tok::Name(n) if matches!(n.as_str(), "div" | "mod") => {
                Err(self.unsupported(format!("arithmetic operator `{n}`")))
            }
            _ => Ok(Operand::Path(self.path(false)?)),
        }
    }

    fn negative_number(&mut self) -> Result<Operand> {
        let minus = self.advance();
        match self.peek().clone() {
            Tok::Num(value, text) if minus.span.end == self.token(0).span.start => {
                self.advance();
                Ok(Operand::Literal(Literal::Number(-value, format!("-{text}"))))
            }
            _ => Err(Error::XPathUnsupported {
                column: column(self.src, minus.span.start),
                construct: "arithmetic operator `-`".into(),
            }),
        }
    }
}

enum Operand {
    Path(LocationPath),
    Literal(Literal),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(q: &str) -> String {
        parse(q).unwrap_or_else(|e| panic!("{q}: {e}")).to_string()
    }

    #[test]
    fn parses_and_prints_the_whole_subset() {
        for q in [
            "/",
            "/site/regions//item",
            "//a[./b]//c",
            "a/b/text()",
            "//*/@*",
            "//item[@id = \"item0\"]/node()",
            "//a[b and not(c) or d >= 3]",
            "//a[(b or c) and d]",
            "//a[.//b != 'x\"y']",
            "//a | //b/@c",
            "//a[b[c = -1.5]]",
            "//a[. < 10]",
        ] {
            let printed = round_trip(q);
            assert_eq!(round_trip(&printed), printed, "{q}");
        }
        assert_eq!(round_trip("//a[ 3 > b ]"), "//a[b < 3]");
        assert_eq!(round_trip("a//b"), "a//b");
    }

    #[test]
    fn names_unsupported_constructs_with_their_column() {
        let cases = [
            ("//a[1]", 5, "positional predicate"),
            ("/a/ancestor::b", 4, "axis `ancestor::`"),
            ("//a[count(b) > 1]", 5, "function `count()`"),
            ("//a/..", 5, "parent step `..`"),
            ("//a[$x]", 5, "variable reference"),
            ("//a[b = c]", 5, "comparison between two paths"),
            ("//a[/b]", 5, "absolute path inside a predicate"),
            ("//p:a", 3, "namespace prefix in `p:a`"),
            ("//a[b div 2]", 7, "arithmetic operator `div`"),
        ];
        for (q, want_column, want) in cases {
            match parse(q) {
                Err(Error::XPathUnsupported { column, construct }) => {
                    assert_eq!((column, construct.as_str()), (want_column, want), "{q}")
                }
                other => panic!("{q}: expected unsupported, got {other:?}"),
            }
        }
    }

    #[test]
    fn rejects_malformed_queries_with_positions() {
        for (q, want_column) in [("", 1), ("//", 3), ("/a[", 4), ("/a[b", 5), ("a b", 3), ("/a]", 3), ("@", 2)] {
            match parse(q) {
                Err(Error::XPathSyntax { column, .. }) => assert_eq!(column, want_column, "{q}"),
                other => panic!("{q}: expected a syntax error, got {other:?}"),
            }
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let q = format!("//a{}", "[b".repeat(10_000));
        assert!(matches!(parse(&q), Err(Error::XPathUnsupported { .. })));
    }
}
