//! The XPath subset QuireDB answers: tokenizer → parser → AST with spans.
//!
//! Entry point: [`parse`]. Read `parser.rs` for the grammar and what is rejected,
//! `ast.rs` for the tree and its canonical printing.

pub mod ast;
pub mod eval;
pub mod expr;
pub mod functions;
pub mod grammar;
pub mod lexer;
pub mod parser;
pub mod subset;

pub use ast::{CompareOp, Literal, LocationPath, NodeTest, Predicate, Query, Separator, Span, Step};
pub use grammar::parse_expr;
pub use parser::parse;
