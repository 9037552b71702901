//! The token cursor the XPath parser walks: look-ahead, advancing, positions for
//! spans and errors, and the nesting guard.
//!
//! Read next: `grammar.rs` (the parser), `subset.rs` (which reads the tokens again to
//! see how the text spells a tree).

use std::ops::{Deref, DerefMut};

use crate::error::{Error, Result};
use crate::xpath::ast::Span;
use crate::xpath::lexer::{Tok, Token, column, tokenize};

/// Deepest nesting of predicates, parentheses, calls and unary minus accepted (guards
/// the stack).
pub const MAX_NESTING: usize = 64;

/// Tokens of one query and where the parser is in them.
pub struct Cursor<'s> {
    pub src: &'s str,
    tokens: Vec<Token>,
    at: usize,
    depth: usize,
}

impl<'s> Cursor<'s> {
    /// Tokenizes `src`.
    pub fn new(src: &'s str) -> Result<Self> {
        Ok(Cursor { src, tokens: tokenize(src)?, at: 0, depth: 0 })
    }

    pub fn peek(&self) -> &Tok {
        &self.token(0).tok
    }

    /// The token `ahead` places on (the End token past the end).
    pub fn token(&self, ahead: usize) -> &Token {
        let last = self.tokens.len() - 1; // the End token is always present
        &self.tokens[(self.at + ahead).min(last)]
    }

    pub fn advance(&mut self) -> Token {
        let token = self.token(0).clone();
        if self.at < self.tokens.len() - 1 {
            self.at += 1;
        }
        token
    }

    /// Byte offset of the current token.
    pub fn here(&self) -> usize {
        self.token(0).span.start
    }

    /// End of the last token taken.
    pub fn prev_end(&self) -> usize {
        self.tokens[self.at.saturating_sub(1)].span.end
    }

    /// From `start` to the end of the last token taken.
    pub fn span_from(&self, start: usize) -> Span {
        Span { start, end: self.prev_end() }
    }

    /// A syntax error at the current token.
    pub fn unexpected(&self, expected: &str) -> Error {
        let token = self.token(0);
        let found = match &token.tok {
            Tok::End => "the end of the query".to_string(),
            _ => format!("`{}`", &self.src[token.span.start..token.span.end]),
        };
        Error::XPathSyntax { column: column(self.src, token.span.start), expected: expected.into(), found }
    }

    /// A refused construct starting at byte `at`.
    pub fn unsupported_at(&self, at: usize, construct: impl Into<String>) -> Error {
        Error::XPathUnsupported { column: column(self.src, at), construct: construct.into() }
    }

    pub fn expect(&mut self, tok: Tok, what: &str) -> Result<Span> {
        if *self.peek() == tok { Ok(self.advance().span) } else { Err(self.unexpected(what)) }
    }

    /// Whether the current token is the name `word`.
    pub fn keyword(&self, word: &str) -> bool {
        matches!(self.peek(), Tok::Name(name) if name == word)
    }

    /// One level deeper; an error past [`MAX_NESTING`].
    pub fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.unsupported_at(self.here(), format!("nesting deeper than {MAX_NESTING} levels")));
        }
        Ok(())
    }

    pub fn leave(&mut self) {
        self.depth -= 1;
    }
}

/// A parser of the grammar `G` (a marker type, which may carry what the grammar reads
/// besides the text): a cursor, plus the methods the grammar's own module implements
/// on `Parser<'_, G>`.
pub struct Parser<'s, G>(Cursor<'s>, pub G);

impl<'s, G> Parser<'s, G> {
    /// Tokenizes `src`, for the grammar `grammar`.
    pub fn with(src: &'s str, grammar: G) -> Result<Self> {
        Ok(Parser(Cursor::new(src)?, grammar))
    }

    /// The tokens of the query.
    pub fn into_tokens(self) -> Vec<Token> {
        self.0.tokens
    }

    /// `value` when the whole query was read, else a syntax error expecting `expected`.
    pub fn finish<T>(&self, value: T, expected: &str) -> Result<T> {
        match self.peek() {
            Tok::End => Ok(value),
            _ => Err(self.unexpected(expected)),
        }
    }
}

impl<'s, G> Deref for Parser<'s, G> {
    type Target = Cursor<'s>;
    fn deref(&self) -> &Cursor<'s> {
        &self.0
    }
}

impl<G> DerefMut for Parser<'_, G> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}
