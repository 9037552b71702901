//! XPath tokenizer: turns query text into tokens with byte spans.
//!
//! Invariants: tokens cover the input left to right, whitespace between them is
//! skipped, every token's span is a valid byte range of the input. Unknown characters
//! and unterminated literals are errors with a 1-based character column.
//! `and`, `or`, `not`, `text`, `node` are plain names here; the parser gives them
//! meaning from context, as XPath 1.0 §3.7 prescribes.
//!
//! Read next: `grammar.rs`.

use crate::error::{Error, Result};
use crate::xpath::ast::Span;

/// One token kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    Slash,
    DoubleSlash,
    LBracket,
    RBracket,
    LParen,
    RParen,
    At,
    Star,
    Pipe,
    Dot,
    DotDot,
    Comma,
    DoubleColon,
    Dollar,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Plus,
    Minus,
    /// A name (NCName, or QName with a prefix).
    Name(String),
    /// A string literal, quotes removed.
    Str(String),
    /// A number literal: its value and its source text.
    Num(f64, String),
    /// End of input.
    End,
}

/// A token and where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
}

/// 1-based character column of byte offset `at` in `src`.
pub fn column(src: &str, at: usize) -> usize {
    src.get(..at).map_or(at, |prefix| prefix.chars().count()) + 1
}

/// Tokenizes the whole query.
pub fn tokenize(src: &str) -> Result<Vec<Token>> {
    let mut lexer = Lexer { src, pos: 0, out: Vec::new() };
    lexer.run()?;
    Ok(lexer.out)
}

struct Lexer<'s> {
    src: &'s str,
    pos: usize,
    out: Vec<Token>,
}

fn is_name_start(c: char) -> bool {
    c.is_alphabetic() || c == '_' || (!c.is_ascii() && !c.is_whitespace())
}

fn is_name_char(c: char) -> bool {
    is_name_start(c) || c.is_ascii_digit() || c == '-' || c == '.'
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.src[self.pos..].chars().nth(ahead)
    }

    fn push(&mut self, tok: Tok, start: usize) {
        self.out.push(Token { tok, span: Span { start, end: self.pos } });
    }

    fn run(&mut self) -> Result<()> {
        while let Some(c) = self.peek(0) {
            let start = self.pos;
            if matches!(c, ' ' | '\t' | '\r' | '\n') {
                self.pos += 1;
                continue;
            }
            // Numbers before punctuation: `.5` is a number, not `.` then `5`.
            if c.is_ascii_digit() || (c == '.' && self.peek(1).is_some_and(|d| d.is_ascii_digit())) {
                self.number();
            } else if let Some((tok, len)) = self.punctuation(c) {
                self.pos += len;
                self.push(tok, start);
            } else if c == '"' || c == '\'' {
                self.string(c)?;
            } else if is_name_start(c) {
                self.name();
            } else {
                return Err(Error::XPathSyntax {
                    column: column(self.src, start),
                    expected: "a token".into(),
                    found: format!("character `{c}`"),
                });
            }
        }
        let end = self.src.len();
        self.out.push(Token { tok: Tok::End, span: Span { start: end, end } });
        Ok(())
    }

    /// Single- and two-character punctuation tokens.
    fn punctuation(&self, c: char) -> Option<(Tok, usize)> {
        let next = self.peek(1);
        let two = |second: char, both: Tok, one: Tok| {
            if next == Some(second) { (both, 2) } else { (one, 1) }
        };
        Some(match c {
            '/' => two('/', Tok::DoubleSlash, Tok::Slash),
            '.' => two('.', Tok::DotDot, Tok::Dot),
            '<' => two('=', Tok::Le, Tok::Lt),
            '>' => two('=', Tok::Ge, Tok::Gt),
            '!' if next == Some('=') => (Tok::Ne, 2),
            ':' if next == Some(':') => (Tok::DoubleColon, 2),
            '[' => (Tok::LBracket, 1),
            ']' => (Tok::RBracket, 1),
            '(' => (Tok::LParen, 1),
            ')' => (Tok::RParen, 1),
            '@' => (Tok::At, 1),
            '*' => (Tok::Star, 1),
            '|' => (Tok::Pipe, 1),
            ',' => (Tok::Comma, 1),
            '$' => (Tok::Dollar, 1),
            '=' => (Tok::Eq, 1),
            '+' => (Tok::Plus, 1),
            '-' => (Tok::Minus, 1),
            _ => return None,
        })
    }

    fn string(&mut self, quote: char) -> Result<()> {
        let start = self.pos;
        let body = &self.src[start + 1..];
        match body.find(quote) {
            Some(len) => {
                self.pos = start + 1 + len + 1;
                self.push(Tok::Str(body[..len].to_string()), start);
                Ok(())
            }
            None => Err(Error::XPathSyntax {
                column: column(self.src, start),
                expected: format!("a closing {quote} for this string literal"),
                found: "end of query".into(),
            }),
        }
    }

    fn number(&mut self) {
        let start = self.pos;
        let rest = &self.src[start..];
        let mut len = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        if rest[len..].starts_with('.') {
            len += 1;
            len += rest[len..].find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len() - len);
        }
        let text = &rest[..len];
        // Digits with at most one dot always parse as f64.
        let value = text.parse::<f64>().unwrap_or(f64::NAN);
        self.pos += len;
        self.push(Tok::Num(value, text.to_string()), start);
    }

    fn name(&mut self) {
        let start = self.pos;
        let rest = &self.src[start..];
        if let Some(len) = expanded_name(rest) {
            self.pos += len;
            let (uri, local) = rest[2..len].split_once('}').expect("checked by expanded_name");
            self.push(Tok::Name(format!("{{{uri}}}{local}")), start);
            return;
        }
        let mut len = rest.find(|c: char| !is_name_char(c)).unwrap_or(rest.len());
        // A QName prefix `p:local` (but not an axis `p::`).
        let after = &rest[len..];
        if after.starts_with(':') && !after.starts_with("::") {
            let local = &after[1..];
            if local.chars().next().is_some_and(|c| is_name_start(c) || c == '*') {
                let local_len = if local.starts_with('*') {
                    1
                } else {
                    local.find(|c: char| !is_name_char(c)).unwrap_or(local.len())
                };
                len += 1 + local_len;
            }
        }
        self.pos += len;
        self.push(Tok::Name(rest[..len].to_string()), start);
    }
}

/// The length of the expanded name `Q{uri}local` or `Q{uri}*` at the start of `rest`.
fn expanded_name(rest: &str) -> Option<usize> {
    let uri_len = rest.strip_prefix("Q{")?.find(['{', '}'])?;
    let local = &rest[2 + uri_len..].strip_prefix('}')?;
    let local_len = if local.starts_with('*') {
        1
    } else if local.chars().next().is_some_and(is_name_start) {
        local.find(|c: char| !is_name_char(c) || c == ':').unwrap_or(local.len())
    } else {
        return None;
    };
    Some(3 + uri_len + local_len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Tok> {
        tokenize(src).expect("valid").into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn tokenizes_paths_predicates_and_literals() {
        assert_eq!(
            kinds("//a[@b>=1.5 and .//c!='x']"),
            vec![
                Tok::DoubleSlash,
                Tok::Name("a".into()),
                Tok::LBracket,
                Tok::At,
                Tok::Name("b".into()),
                Tok::Ge,
                Tok::Num(1.5, "1.5".into()),
                Tok::Name("and".into()),
                Tok::Dot,
                Tok::DoubleSlash,
                Tok::Name("c".into()),
                Tok::Ne,
                Tok::Str("x".into()),
                Tok::RBracket,
                Tok::End,
            ]
        );
    }

    #[test]
    fn names_may_hold_dashes_dots_and_prefixes() {
        assert_eq!(kinds("a-b.c"), vec![Tok::Name("a-b.c".into()), Tok::End]);
        assert_eq!(kinds("p:q"), vec![Tok::Name("p:q".into()), Tok::End]);
        assert_eq!(kinds("Q{urn:a}q"), vec![Tok::Name("{urn:a}q".into()), Tok::End]);
        assert_eq!(kinds("Q{}*"), vec![Tok::Name("{}*".into()), Tok::End]);
        assert_eq!(kinds("child::x")[1], Tok::DoubleColon);
    }

    #[test]
    fn reports_unterminated_strings_and_strange_characters_with_columns() {
        let err = tokenize("a[b='x]").unwrap_err();
        assert!(matches!(err, Error::XPathSyntax { column: 5, .. }), "{err}");
        let err = tokenize("a#b").unwrap_err();
        assert!(matches!(err, Error::XPathSyntax { column: 2, .. }), "{err}");
    }
}
