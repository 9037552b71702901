//! The syntax tree of full XPath 1.0 expressions, with spans, and its canonical printing.
//!
//! An [`Expr`] is what `grammar.rs` parses: operators, literals, function calls and
//! [`Path`]s. A path starts at the root, at the context node or at a filter expression
//! (`(//a)[1]/b`), then takes [`AxisStep`]s; `//` is spelled out as the step
//! `descendant-or-self::node()` and `..`, `.`, `@` as `parent::node()`, `self::node()`
//! and `attribute::`. [`super::subset::lower`] recognises the expressions the structural
//! engine answers (the older [`super::Query`] tree) so that those keep their joins.
//!
//! Invariants: `Display` prints an expression that parses back to the same tree (spans
//! aside), with steps' axes spelled out and only the parentheses the grammar's
//! precedence needs (so the printed form never nests deeper than the source).
//!
//! Read next: `grammar.rs` (builds it), `functions.rs` (the function library),
//! `../reference/expr.rs` (evaluates it over DOMs), `../store/query/general/` (over the
//! store).

use std::fmt;

use super::ast::{CompareOp, Span};
use super::functions::Function;

/// Arithmetic operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

/// An XPath 1.0 expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Or(Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Compare(CompareOp, Box<Expr>, Box<Expr>),
    Arith(ArithOp, Box<Expr>, Box<Expr>),
    Negate(Box<Expr>),
    Union(Box<Expr>, Box<Expr>),
    Path(Path),
    String(String),
    /// The value and its source text (kept for faithful printing).
    Number(f64, String),
    Call(Call),
}

/// A function call.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub function: Function,
    pub args: Vec<Expr>,
    pub span: Span,
}

/// Where a path starts.
#[derive(Debug, Clone, PartialEq)]
pub enum Start {
    /// `/…`: the document node(s).
    Root,
    /// A relative path: the context node.
    Context,
    /// A filter expression: a primary expression (which must give a node-set) and
    /// predicates over it, positions counted in document order.
    Filter(Box<Expr>, Vec<Expr>),
}

/// A location path or a filter expression followed by steps.
#[derive(Debug, Clone, PartialEq)]
pub struct Path {
    pub start: Start,
    pub steps: Vec<AxisStep>,
    pub span: Span,
}

/// The thirteen axes of XPath 1.0 but `namespace` (refused by the parser).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Axis {
    Child,
    Descendant,
    DescendantOrSelf,
    Parent,
    Ancestor,
    AncestorOrSelf,
    Following,
    FollowingSibling,
    Preceding,
    PrecedingSibling,
    Attribute,
    SelfAxis,
}

impl Axis {
    pub const ALL: [Axis; 12] = [
        Axis::Child,
        Axis::Descendant,
        Axis::DescendantOrSelf,
        Axis::Parent,
        Axis::Ancestor,
        Axis::AncestorOrSelf,
        Axis::Following,
        Axis::FollowingSibling,
        Axis::Preceding,
        Axis::PrecedingSibling,
        Axis::Attribute,
        Axis::SelfAxis,
    ];

    /// The axis's name in XPath syntax.
    pub fn name(self) -> &'static str {
        match self {
            Axis::Child => "child",
            Axis::Descendant => "descendant",
            Axis::DescendantOrSelf => "descendant-or-self",
            Axis::Parent => "parent",
            Axis::Ancestor => "ancestor",
            Axis::AncestorOrSelf => "ancestor-or-self",
            Axis::Following => "following",
            Axis::FollowingSibling => "following-sibling",
            Axis::Preceding => "preceding",
            Axis::PrecedingSibling => "preceding-sibling",
            Axis::Attribute => "attribute",
            Axis::SelfAxis => "self",
        }
    }

    /// The axis with this name.
    pub fn from_name(name: &str) -> Option<Axis> {
        Axis::ALL.into_iter().find(|axis| axis.name() == name)
    }

    /// Reverse axes number their nodes in reverse document order (XPath 1.0 §2.4).
    pub fn is_reverse(self) -> bool {
        matches!(self, Axis::Parent | Axis::Ancestor | Axis::AncestorOrSelf | Axis::Preceding | Axis::PrecedingSibling)
    }
}

/// A node test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Test {
    /// A name: of elements, or of attributes on the attribute axis. A local name
    /// (matched in any namespace), a prefixed one (`p:local`, `p:*`; resolved before
    /// evaluation) or an expanded one (`{uri}local`, `{uri}*`): see `names.rs`.
    Name(String),
    /// `*`: every node of the axis's principal kind.
    Any,
    Text,
    Comment,
    /// `processing-instruction()`, or with a target literal.
    Pi(Option<String>),
    Node,
}

/// One step: an axis, a node test and predicates.
#[derive(Debug, Clone, PartialEq)]
pub struct AxisStep {
    pub axis: Axis,
    pub test: Test,
    pub predicates: Vec<Expr>,
    pub span: Span,
}

impl AxisStep {
    /// `descendant-or-self::node()`, what `//` stands for.
    pub fn descendant_or_self(span: Span) -> AxisStep {
        AxisStep { axis: Axis::DescendantOrSelf, test: Test::Node, predicates: Vec::new(), span }
    }

    /// Whether this is a bare `descendant-or-self::node()` (the `//` step).
    pub fn is_descendant_or_self(&self) -> bool {
        self.axis == Axis::DescendantOrSelf && self.test == Test::Node && self.predicates.is_empty()
    }
}

/// The static type of an expression's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    Nodes,
    Number,
    String,
    Boolean,
}

/// What an expression's value depends on, from least to most ([`Expr::dependence`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Dependence {
    /// Literals and functions of them: one value for the whole evaluation.
    Constant,
    /// One value for each document of the collection.
    Document,
    /// A value for each context (node, position, size).
    Context,
}

impl Expr {
    /// The type every evaluation of this expression returns (XPath 1.0 is statically
    /// typed but for variables, which are refused).
    pub fn result_type(&self) -> Type {
        match self {
            Expr::Or(..) | Expr::And(..) | Expr::Compare(..) => Type::Boolean,
            Expr::Arith(..) | Expr::Negate(_) | Expr::Number(..) => Type::Number,
            Expr::Union(..) | Expr::Path(_) => Type::Nodes,
            Expr::String(_) => Type::String,
            Expr::Call(call) => call.function.result_type(),
        }
    }

    /// Whether the value depends on the context position or size (`position()`,
    /// `last()` outside nested predicates, or a number used as a predicate).
    pub fn uses_position(&self) -> bool {
        match self {
            Expr::Or(a, b) | Expr::And(a, b) | Expr::Compare(_, a, b) | Expr::Arith(_, a, b) | Expr::Union(a, b) => {
                a.uses_position() || b.uses_position()
            }
            Expr::Negate(a) => a.uses_position(),
            Expr::Path(path) => match &path.start {
                Start::Filter(primary, _) => primary.uses_position(),
                _ => false,
            },
            Expr::String(_) | Expr::Number(..) => false,
            Expr::Call(call) => {
                matches!(call.function, Function::Position | Function::Last)
                    || call.args.iter().any(Expr::uses_position)
            }
        }
    }

    /// What the value depends on besides the variables' bindings: nothing, the
    /// context node's document (an absolute path, `id()`), or the context itself (a
    /// relative path, `position()`, a function of the context node). Predicates have
    /// contexts of their own, so a path's predicates never make it depend on more.
    pub fn dependence(&self) -> Dependence {
        match self {
            Expr::Or(a, b) | Expr::And(a, b) | Expr::Compare(_, a, b) | Expr::Arith(_, a, b) | Expr::Union(a, b) => {
                a.dependence().max(b.dependence())
            }
            Expr::Negate(a) => a.dependence(),
            Expr::Path(path) => match &path.start {
                Start::Root => Dependence::Document,
                Start::Context => Dependence::Context,
                Start::Filter(primary, _) => primary.dependence(),
            },
            Expr::String(_) | Expr::Number(..) => Dependence::Constant,
            Expr::Call(call) => {
                let own = match call.function {
                    Function::Position | Function::Last | Function::Lang => Dependence::Context,
                    Function::Name
                    | Function::LocalName
                    | Function::NamespaceUri
                    | Function::String
                    | Function::StringLength
                    | Function::NormalizeSpace
                    | Function::Number
                        if call.args.is_empty() =>
                    {
                        Dependence::Context
                    }
                    Function::Id => Dependence::Document,
                    _ => Dependence::Constant,
                };
                call.args.iter().map(Expr::dependence).fold(own, Dependence::max)
            }
        }
    }

    /// Whether a predicate `[self]` depends on the position: a numeric predicate is a
    /// position test.
    pub fn is_positional_predicate(&self) -> bool {
        self.result_type() == Type::Number || self.uses_position()
    }
}

impl Expr {
    /// Binding strength in the grammar (`or` binds loosest); operands of lower
    /// strength than their operator print in parentheses.
    fn precedence(&self) -> u8 {
        match self {
            Expr::Or(..) => 1,
            Expr::And(..) => 2,
            Expr::Compare(CompareOp::Eq | CompareOp::Ne, ..) => 3,
            Expr::Compare(..) => 4,
            Expr::Arith(ArithOp::Add | ArithOp::Sub, ..) => 5,
            Expr::Arith(..) => 6,
            Expr::Negate(_) => 7,
            Expr::Union(..) => 8,
            _ => 9,
        }
    }

    /// `a op b`, left-associative: the right operand needs parentheses at equal strength.
    fn write_binary(&self, f: &mut fmt::Formatter<'_>, a: &Expr, symbol: &str, b: &Expr) -> fmt::Result {
        let own = self.precedence();
        // A bare `/` before `or`, `and`, `div`, `mod` or `*` would take it as a name test.
        let wordy = symbol == "*" || symbol.starts_with(|c: char| c.is_ascii_alphabetic());
        write_operand(f, a, a.precedence() < own || (wordy && ends_with_root(a)))?;
        write!(f, " {symbol} ")?;
        write_operand(f, b, b.precedence() <= own)
    }
}

/// Whether `e` prints ending with a bare `/` (the root alone).
fn ends_with_root(e: &Expr) -> bool {
    match e {
        Expr::Path(path) => path.start == Start::Root && path.steps.is_empty(),
        Expr::Or(_, b) | Expr::And(_, b) | Expr::Compare(_, _, b) | Expr::Arith(_, _, b) | Expr::Union(_, b) => {
            ends_with_root(b)
        }
        Expr::Negate(a) => ends_with_root(a),
        _ => false,
    }
}

fn write_operand(f: &mut fmt::Formatter<'_>, e: &Expr, parenthesised: bool) -> fmt::Result {
    if parenthesised { write!(f, "({e})") } else { write!(f, "{e}") }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Or(a, b) => self.write_binary(f, a, "or", b),
            Expr::And(a, b) => self.write_binary(f, a, "and", b),
            Expr::Compare(op, a, b) => self.write_binary(f, a, op.symbol(), b),
            Expr::Arith(op, a, b) => {
                let symbol = match op {
                    ArithOp::Add => "+",
                    ArithOp::Sub => "-",
                    ArithOp::Mul => "*",
                    ArithOp::Div => "div",
                    ArithOp::Mod => "mod",
                };
                self.write_binary(f, a, symbol, b)
            }
            Expr::Negate(a) => {
                f.write_str("-")?;
                write_operand(f, a, a.precedence() < self.precedence())
            }
            Expr::Union(a, b) => self.write_binary(f, a, "|", b),
            Expr::Path(path) => write!(f, "{path}"),
            // No XPath 1.0 literal holds both quotes: such a string (from a bound
            // variable) prints as the `concat` of its pieces around each `'`.
            Expr::String(s) if s.contains('"') && s.contains('\'') => {
                f.write_str("concat(")?;
                for (i, piece) in s.split('\'').enumerate() {
                    if i > 0 {
                        f.write_str(", \"'\", ")?;
                    }
                    write!(f, "{}", Expr::String(piece.to_owned()))?;
                }
                f.write_str(")")
            }
            Expr::String(s) if s.contains('"') => write!(f, "'{s}'"),
            Expr::String(s) => write!(f, "\"{s}\""),
            Expr::Number(_, text) => f.write_str(text),
            Expr::Call(call) => {
                write!(f, "{}(", call.function.name())?;
                for (i, arg) in call.args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{arg}")?;
                }
                f.write_str(")")
            }
        }
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.start {
            Start::Root if self.steps.is_empty() => return f.write_str("/"),
            Start::Root => f.write_str("/")?,
            Start::Context => {}
            Start::Filter(primary, predicates) => {
                write!(f, "({primary})")?;
                for predicate in predicates {
                    write!(f, "[{predicate}]")?;
                }
                if !self.steps.is_empty() {
                    f.write_str("/")?;
                }
            }
        }
        for (i, step) in self.steps.iter().enumerate() {
            if i > 0 {
                f.write_str("/")?;
            }
            write!(f, "{step}")?;
        }
        Ok(())
    }
}

impl fmt::Display for AxisStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}::{}", self.axis.name(), self.test)?;
        for predicate in &self.predicates {
            write!(f, "[{predicate}]")?;
        }
        Ok(())
    }
}

impl fmt::Display for Test {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // An expanded name `{uri}local` prints as XPath 3.0's `Q{uri}local`.
            Test::Name(name) if name.starts_with('{') => write!(f, "Q{name}"),
            Test::Name(name) => f.write_str(name),
            Test::Any => f.write_str("*"),
            Test::Text => f.write_str("text()"),
            Test::Comment => f.write_str("comment()"),
            Test::Pi(None) => f.write_str("processing-instruction()"),
            // A literal holds one kind of quote at most, so the other one delimits it.
            Test::Pi(Some(target)) if target.contains('"') => write!(f, "processing-instruction('{target}')"),
            Test::Pi(Some(target)) => write!(f, "processing-instruction(\"{target}\")"),
            Test::Node => f.write_str("node()"),
        }
    }
}
