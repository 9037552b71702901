//! XPath 1.0: tokenizer → parser → trees with spans → evaluator.
//!
//! One parser (`grammar.rs`, on `lexer.rs` and `cursor.rs`). Entry points:
//! [`parse_expr`] for any XPath 1.0 expression (`expr.rs`; refused: the `namespace`
//! axis; variables only as values bound beforehand), evaluated by `eval.rs` over any
//! node model; [`parse`] for the structural subset the store answers with joins alone
//! (its grammar in `parser.rs`, its tree in `ast.rs`): the same parse, then the
//! lowering of `subset.rs`, which as [`subset::lower`] also recognises the subset
//! inside full expressions.

pub mod ast;
pub mod bindings;
mod cursor;
pub mod eval;
pub mod expr;
pub mod functions;
pub mod grammar;
pub mod lexer;
pub mod names;
pub mod parser;
pub mod subset;

pub use ast::{CompareOp, Literal, LocationPath, NodeTest, Predicate, Query, Separator, Span, Step};
pub use grammar::{parse_expr, parse_expr_with};
pub use parser::parse;
