//! The XPath subset's syntax tree, with source spans, and its canonical printing.
//!
//! A [`Query`] is a union of [`LocationPath`]s. A path is a list of [`Step`]s, each
//! reached from the previous one by `/` (child) or `//` (descendant-or-self::node()
//! then the step's own axis). Predicates hold [`Predicate`] trees over relative paths.
//!
//! Invariants: a path inside a predicate is never absolute; `.` has no predicates;
//! `Display` prints a query that parses back to the same tree (spans aside) — the
//! round-trip test in `tests/xpath.rs` checks this for every generated query.
//!
//! Read next: `subset.rs` (builds it from full trees), `parser.rs` (its grammar),
//! `../reference.rs` (evaluates it).

use std::fmt;

/// A byte range `[start, end)` in the query text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

/// A whole query: one or more paths joined by `|`.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub paths: Vec<LocationPath>,
    pub span: Span,
}

/// An absolute (`/…`, `//…`) or relative location path.
#[derive(Debug, Clone, PartialEq)]
pub struct LocationPath {
    /// Starts at the document root.
    pub absolute: bool,
    /// May be empty only for the absolute path `/`.
    pub steps: Vec<Step>,
    pub span: Span,
}

/// How a step is reached from the previous context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Separator {
    /// `/` (or nothing before the first step of a relative path).
    Child,
    /// `//`, i.e. `/descendant-or-self::node()/`.
    Descendant,
}

/// What a step selects from each context node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeTest {
    /// `name`: child elements with this (local) name.
    Element(String),
    /// `*`: all child elements.
    AnyElement,
    /// `@name`: the attribute with this name.
    Attribute(String),
    /// `@*`: all attributes.
    AnyAttribute,
    /// `text()`: child text nodes.
    Text,
    /// `node()`: all child nodes (elements, text, comments, processing instructions).
    Node,
    /// `.`: the context node itself.
    SelfNode,
}

/// One location step.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub separator: Separator,
    pub test: NodeTest,
    pub predicates: Vec<Predicate>,
    pub span: Span,
}

/// Comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// A literal on one side of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    String(String),
    /// The value and its source text (kept for faithful printing).
    Number(f64, String),
}

/// A predicate expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Predicate {
    /// `a or b`
    Or(Box<Predicate>, Box<Predicate>),
    /// `a and b`
    And(Box<Predicate>, Box<Predicate>),
    /// `not(a)`
    Not(Box<Predicate>),
    /// A relative path: true when it selects something.
    Exists(LocationPath),
    /// `path op literal` (a literal written first is normalised to this form).
    Compare { path: LocationPath, op: CompareOp, literal: Literal, span: Span },
}

impl CompareOp {
    /// The operator that gives the same truth with operands swapped (`1 < a` ≡ `a > 1`).
    pub fn flipped(self) -> Self {
        match self {
            CompareOp::Lt => CompareOp::Gt,
            CompareOp::Le => CompareOp::Ge,
            CompareOp::Gt => CompareOp::Lt,
            CompareOp::Ge => CompareOp::Le,
            other => other,
        }
    }

    pub fn symbol(self) -> &'static str {
        match self {
            CompareOp::Eq => "=",
            CompareOp::Ne => "!=",
            CompareOp::Lt => "<",
            CompareOp::Le => "<=",
            CompareOp::Gt => ">",
            CompareOp::Ge => ">=",
        }
    }
}

impl fmt::Display for Query {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, path) in self.paths.iter().enumerate() {
            if i > 0 {
                f.write_str(" | ")?;
            }
            write!(f, "{path}")?;
        }
        Ok(())
    }
}

impl fmt::Display for LocationPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.absolute && self.steps.is_empty() {
            return f.write_str("/");
        }
        for (i, step) in self.steps.iter().enumerate() {
            match step.separator {
                Separator::Descendant => f.write_str("//")?,
                Separator::Child if i > 0 || self.absolute => f.write_str("/")?,
                Separator::Child => {}
            }
            write!(f, "{step}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.test {
            // An expanded name `{uri}local` (`names.rs`) prints as `Q{uri}local`.
            NodeTest::Element(name) if name.starts_with('{') => write!(f, "Q{name}")?,
            NodeTest::Element(name) => f.write_str(name)?,
            NodeTest::AnyElement => f.write_str("*")?,
            NodeTest::Attribute(name) if name.starts_with('{') => write!(f, "@Q{name}")?,
            NodeTest::Attribute(name) => write!(f, "@{name}")?,
            NodeTest::AnyAttribute => f.write_str("@*")?,
            NodeTest::Text => f.write_str("text()")?,
            NodeTest::Node => f.write_str("node()")?,
            NodeTest::SelfNode => f.write_str(".")?,
        }
        for predicate in &self.predicates {
            write!(f, "[{predicate}]")?;
        }
        Ok(())
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::String(s) if s.contains('"') => write!(f, "'{s}'"),
            Literal::String(s) => write!(f, "\"{s}\""),
            Literal::Number(_, text) => f.write_str(text),
        }
    }
}

impl fmt::Display for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Predicate::Or(a, b) => write!(f, "{a} or {b}"),
            Predicate::And(a, b) => {
                write_operand(f, a)?;
                f.write_str(" and ")?;
                write_operand(f, b)
            }
            Predicate::Not(a) => write!(f, "not({a})"),
            Predicate::Exists(path) => write!(f, "{path}"),
            Predicate::Compare { path, op, literal, .. } => {
                write!(f, "{path} {} {literal}", op.symbol())
            }
        }
    }
}

/// Operands of `and` need parentheses when they are `or`s.
fn write_operand(f: &mut fmt::Formatter<'_>, p: &Predicate) -> fmt::Result {
    match p {
        Predicate::Or(..) => write!(f, "({p})"),
        _ => write!(f, "{p}"),
    }
}
