//! Namespaces in name tests: prefixes bound to URIs, and expanded names.
//!
//! A name test as the parser reads it is a local name (`title`), a prefixed name
//! (`dc:title`, `dc:*`) or an expanded name written `Q{uri}local` (XPath 3.0's
//! notation, accepted so that a resolved query prints and parses back). [`resolve`]
//! turns every prefixed test into an expanded one, `{uri}local` inside [`Test::Name`]:
//! the prefix `xml` is the XML namespace's, others come from the caller's
//! [`Bindings`], then from the data (a prefix its names use with one URI only).
//!
//! Matching ([`NameTest::matches`]): an expanded test wants the namespace URI and the
//! local name (`*`: any); a test without a prefix wants the local name only, in any
//! namespace or none. That is wider than XPath 1.0, where `title` selects only names
//! in no namespace, and it is what QuireDB has always done: `//entry` finds the
//! entries of an Atom feed, whose names are all in Atom's default namespace.
//! [`Bindings::strict_names`] asks for XPath 1.0's reading (as lxml and BaseX give
//! it), optionally with a default element namespace: [`resolve`] then expands the
//! tests without a prefix too.
//!
//! Read next: `grammar.rs` (reads the tests), `../store/query/paths.rs` (matches them
//! against the dictionary).

use super::bindings::Bindings;
use super::expr::{Axis, Call, Expr, Start, Test};
use super::functions::Function;
use super::lexer::column;
use crate::error::{Error, Result};

/// The namespace the prefix `xml` is bound to in every document.
pub const XML_NAMESPACE: &str = "http://www.w3.org/XML/1998/namespace";

/// A name test, read from the string of a [`Test::Name`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameTest<'a> {
    /// `local`: that local name in any namespace or none.
    Local(&'a str),
    /// `{uri}local`, or `{uri}*` (`local` `None`).
    Expanded { uri: &'a str, local: Option<&'a str> },
    /// `p:local` or `p:*` not yet resolved: matches nothing.
    Prefixed,
}

impl<'a> NameTest<'a> {
    pub fn of(name: &'a str) -> Self {
        // A local name holds no `}`; a URI may (a bound or a declared one).
        if let Some(rest) = name.strip_prefix('{')
            && let Some((uri, local)) = rest.rsplit_once('}')
        {
            return NameTest::Expanded { uri, local: (local != "*").then_some(local) };
        }
        if name.contains(':') { NameTest::Prefixed } else { NameTest::Local(name) }
    }

    /// Whether a node whose qualified name is `qname`, in namespace `uri` (empty:
    /// none), passes.
    pub fn matches(self, qname: &str, uri: &str) -> bool {
        match self {
            NameTest::Local(want) => local_part(qname) == want,
            NameTest::Expanded { uri: want, local } => uri == want && local.is_none_or(|l| local_part(qname) == l),
            NameTest::Prefixed => false,
        }
    }
}

/// The local part of a qualified name (after the last `:`).
pub fn local_part(name: &str) -> &str {
    name.rsplit_once(':').map_or(name, |(_, local)| local)
}

/// The string of an expanded name test.
pub fn expanded(uri: &str, local: &str) -> String {
    format!("{{{uri}}}{local}")
}

/// Rewrites every prefixed name test of `expr` as an expanded one. `bound` comes
/// first; a prefix it lacks is looked up with `in_data`, which lists the URIs the
/// data's names use with that prefix (one: that one; none or several: an error naming
/// the prefix, its column in `src`, and `--ns`).
pub fn resolve(
    expr: &mut Expr,
    src: &str,
    bound: &Bindings,
    in_data: &mut dyn FnMut(&str) -> Result<Vec<String>>,
) -> Result<()> {
    let mut fail = None;
    visit_tests(expr, &mut |test, axis, at| {
        let Test::Name(name) = test else { return };
        if name.starts_with('{') {
            return;
        }
        let Some((prefix, local)) = name.split_once(':') else {
            if let Some(uri) = bound.unprefixed(axis == Axis::Attribute) {
                *name = expanded(uri, name);
            }
            return;
        };
        let uri = match (prefix, bound.uri(prefix)) {
            ("xml", _) => Ok(XML_NAMESPACE.to_owned()),
            (_, Some(uri)) => Ok(uri.to_owned()),
            _ => in_data(prefix).and_then(|uris| match uris.as_slice() {
                [uri] => Ok(uri.clone()),
                [] => Err(unbound(src, at, prefix, "no name in the data uses it")),
                _ => Err(unbound(src, at, prefix, &format!("the data binds it to {} URIs", uris.len()))),
            }),
        };
        match uri {
            Ok(uri) => *name = expanded(&uri, local),
            Err(e) => {
                fail.get_or_insert(e);
            }
        }
    });
    fail.map_or(Ok(()), Err)
}

fn unbound(src: &str, at: usize, prefix: &str, why: &str) -> Error {
    Error::XPathNamespace {
        column: column(src, at),
        prefix: prefix.to_owned(),
        reason: format!("{why}; bind it to a URI (`--ns {prefix}=URI`, or `Bindings::namespace`)"),
    }
}

/// The byte offset of the first part of `expr` that depends on namespace URIs or on
/// which attributes are IDs: a prefixed or expanded name test, `lang()`,
/// `namespace-uri()` or `id()` (what collections of format 1 did not keep).
pub fn first_needing_format_2(expr: &Expr) -> Option<usize> {
    let mut expr = expr.clone();
    let (mut tests, mut calls) = (Vec::new(), Vec::new());
    visit(
        &mut expr,
        &mut |test, _, at| {
            if matches!(test, Test::Name(name) if name.contains([':', '{'])) {
                tests.push(at);
            }
        },
        &mut |call| {
            if matches!(call.function, Function::Lang | Function::NamespaceUri | Function::Id) {
                calls.push(call.span.start);
            }
        },
    );
    tests.into_iter().chain(calls).min()
}

/// Calls `f` on every node test of `expr` with its step's axis and byte offset.
fn visit_tests(expr: &mut Expr, f: &mut dyn FnMut(&mut Test, Axis, usize)) {
    visit(expr, f, &mut |_| {});
}

/// Calls `test` on every node test of `expr` with its step's axis and byte offset, and
/// `call` on every function call.
fn visit(expr: &mut Expr, test: &mut dyn FnMut(&mut Test, Axis, usize), call: &mut dyn FnMut(&Call)) {
    match expr {
        Expr::Or(a, b) | Expr::And(a, b) | Expr::Compare(_, a, b) | Expr::Arith(_, a, b) | Expr::Union(a, b) => {
            visit(a, test, call);
            visit(b, test, call);
        }
        Expr::Negate(a) => visit(a, test, call),
        Expr::Path(path) => {
            if let Start::Filter(primary, predicates) = &mut path.start {
                visit(primary, test, call);
                predicates.iter_mut().for_each(|p| visit(p, test, call));
            }
            for step in &mut path.steps {
                test(&mut step.test, step.axis, step.span.start);
                step.predicates.iter_mut().for_each(|p| visit(p, test, call));
            }
        }
        Expr::String(_) | Expr::Number(..) => {}
        Expr::Call(c) => {
            call(c);
            c.args.iter_mut().for_each(|a| visit(a, test, call));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xpath::parse_expr;

    fn resolved(query: &str, bound: &Bindings, data: &[(&str, &str)]) -> Result<String> {
        let mut expr = parse_expr(query)?;
        resolve(&mut expr, query, bound, &mut |p| {
            Ok(data.iter().filter(|(q, _)| *q == p).map(|(_, u)| u.to_string()).collect())
        })?;
        Ok(expr.to_string())
    }

    #[test]
    fn prefixes_resolve_from_bindings_then_data_and_xml_is_fixed() {
        let mut bound = Bindings::new();
        bound.namespace("a", "urn:a");
        let data = [("dc", "urn:dc"), ("a", "urn:other")];
        let printed = resolved("//a:x/dc:*/@xml:lang", &bound, &data).unwrap();
        assert_eq!(
            printed,
            format!(
                "/descendant-or-self::node()/child::Q{{urn:a}}x/child::Q{{urn:dc}}*/attribute::Q{{{XML_NAMESPACE}}}lang"
            )
        );
        // The printed form parses back to the same tree.
        assert_eq!(resolved(&printed, &Bindings::new(), &[]).unwrap(), printed);
    }

    #[test]
    fn an_unbound_or_ambiguous_prefix_is_an_error_with_its_column() {
        let err = resolved("count(//p:x)", &Bindings::new(), &[]).unwrap_err().to_string();
        assert!(err.contains("column 9") && err.contains("`p`") && err.contains("--ns p=URI"), "{err}");
        let data = [("p", "urn:1"), ("p", "urn:2")];
        let err = resolved("//q[p:x]", &Bindings::new(), &data).unwrap_err().to_string();
        assert!(err.contains("column 5") && err.contains("2 URIs"), "{err}");
    }

    #[test]
    fn tests_match_local_names_anywhere_and_expanded_names_exactly() {
        assert!(NameTest::of("title").matches("dc:title", "urn:dc"));
        assert!(NameTest::of("title").matches("title", ""));
        assert!(NameTest::of("{urn:dc}title").matches("d:title", "urn:dc"));
        assert!(!NameTest::of("{urn:dc}title").matches("dc:title", "urn:other"));
        assert!(NameTest::of("{urn:dc}*").matches("dc:creator", "urn:dc"));
        assert!(!NameTest::of("{}title").matches("dc:title", "urn:dc"));
        assert!(NameTest::of("{}title").matches("title", ""));
        assert!(!NameTest::of("dc:title").matches("dc:title", "urn:dc"));
        assert!(NameTest::of("{urn:a}b}c").matches("p:c", "urn:a}b"));
    }
}
