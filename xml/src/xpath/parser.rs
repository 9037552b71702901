//! The XPath subset: its grammar, and [`parse`], which reads a query of it as the full
//! XPath 1.0 grammar does (`grammar.rs`) and lowers the tree into the subset's
//! [`Query`] (`subset.rs`). There is one XPath parser; this module only says which of
//! its sentences the subset is.
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
//! Exactly one side of a comparison is a path. Text that is not XPath 1.0 is an
//! [`Error::XPathSyntax`](crate::Error::XPathSyntax) (the full grammar's); XPath
//! outside the subset — other axes or axes spelled out, function calls, positional
//! predicates, `..`, variables, arithmetic, namespace prefixes, parentheses around paths
//! or comparison operands — is an
//! [`Error::XPathUnsupported`](crate::Error::XPathUnsupported) naming the first such
//! construct and its column.
//! Never panics on any input.
//!
//! Read next: `subset.rs` (the lowering), `ast.rs`, `../reference.rs`.

use crate::error::Result;
use crate::xpath::ast::Query;
use crate::xpath::bindings::Bindings;
use crate::xpath::grammar::parse_expr_tokens;
use crate::xpath::subset::lower_text;

/// Parses a query of the subset.
pub fn parse(src: &str) -> Result<Query> {
    let (expr, tokens) = parse_expr_tokens(src, &Bindings::new())?;
    lower_text(src, &expr, &tokens)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::xpath::ast::Predicate;

    fn round_trip(q: &str) -> String {
        parse(q).unwrap_or_else(|e| panic!("{q}: {e}")).to_string()
    }

    /// Each query is refused, naming the construct at the column.
    fn assert_unsupported(cases: &[(&str, usize, &str)]) {
        for &(q, want_column, want) in cases {
            match parse(q) {
                Err(Error::XPathUnsupported { column, construct }) => {
                    assert_eq!((column, construct.as_str()), (want_column, want), "{q}")
                }
                other => panic!("{q}: expected unsupported, got {other:?}"),
            }
        }
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
            ("//a[$x]", 5, "variable `$x` (no value is bound to it; `--var x=VALUE`)"),
            ("//a[b = c]", 5, "comparison between two paths"),
            ("//a[/b]", 5, "absolute path inside a predicate"),
            ("//p:a", 3, "namespace prefix in `p:a`"),
            ("//a[b div 2]", 7, "arithmetic operator `div`"),
            // The lowering reads the text behind the full grammar's tree, so that
            // spelled-out axes, parentheses around paths or comparison operands, signs
            // apart from their digits and `@node()` stay outside, as the grammar says.
            ("child::a", 1, "axis `child::`"),
            ("//a/self::node()", 5, "axis `self::`"),
            ("a/descendant-or-self::node()/b", 3, "axis `descendant-or-self::`"),
            ("(//a) | //b", 1, "parentheses around a location path"),
            ("//a | (//b)", 7, "parentheses around a location path"),
            ("//a[(b)/c]", 5, "parentheses around a location path"),
            ("//a[(b) = 1]", 5, "parentheses around an operand of a comparison"),
            ("//a[b = (1)]", 9, "parentheses around an operand of a comparison"),
            ("//a[b = - 1]", 9, "arithmetic operator `-`"),
            ("//a[b = -(1)]", 9, "arithmetic operator `-`"),
            ("//a[- 1]", 5, "arithmetic operator `-`"),
            ("//a/@node()", 5, "node test `node()` on the attribute axis"),
            ("//@ p:a", 5, "namespace prefix in `p:a`"),
            ("//a[b | c]", 7, "union `|` inside a predicate"),
        ];
        assert_unsupported(&cases);
        let spans = parse("//a[1.5 <= b]").expect("subset");
        let Predicate::Compare { span, .. } = &spans.paths[0].steps[0].predicates[0] else { panic!("a comparison") };
        assert_eq!((span.start, span.end), (4, 12), "a comparison spans both operands");
    }

    #[test]
    fn valid_xpath_outside_the_subset_is_unsupported_and_malformed_text_a_syntax_error() {
        // Proves: the verdict is the full grammar's first (text that is not XPath 1.0 is
        // a syntax error even after a construct outside the subset), then the
        // lowering's (XPath outside the subset is unsupported, wherever it stands).
        for q in ["1", "a = 1", "count(//a) + 1", "(//a)[1]", "//a[b = 1 = 2]", "$x", "//a[not(b) = 1]"] {
            assert!(matches!(parse(q), Err(Error::XPathUnsupported { .. })), "{q}: {:?}", parse(q));
        }
        for q in ["//a[1", "//a/..[", "//a[.[b]]", "//a[b/not(c)]", "//a[$ x]", "//a[count('x')]"] {
            assert!(matches!(parse(q), Err(Error::XPathSyntax { .. })), "{q}: {:?}", parse(q));
        }
        // `div` and `mod` where an operand is expected are names (XPath 1.0 §3.7).
        assert_eq!(round_trip("//a[div and mod = 1]"), "//a[div and mod = 1]");
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
