//! XPath 1.0's core function library (§4) and value conversions, on plain strings and
//! numbers: what does not depend on where the nodes live.
//!
//! [`Function`] names each function the parser accepts (all of XPath 1.0's), with its
//! arity and result type. The helpers below are the string and number halves of the library;
//! `eval.rs` supplies the node halves (string values, names) through its `Tree`.
//!
//! Read next: `eval.rs`.

use super::expr::Type;
use crate::reference::xpath_number;

/// A function of the core library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Function {
    Last,
    Position,
    Count,
    Name,
    LocalName,
    String,
    Concat,
    StartsWith,
    Contains,
    SubstringBefore,
    SubstringAfter,
    Substring,
    StringLength,
    NormalizeSpace,
    Translate,
    Not,
    True,
    False,
    Boolean,
    Number,
    Sum,
    Floor,
    Ceiling,
    Round,
    NamespaceUri,
    Lang,
    Id,
}

/// Name, fewest and most arguments (`usize::MAX`: any number), result type.
const TABLE: [(Function, &str, usize, usize, Type); 27] = [
    (Function::Last, "last", 0, 0, Type::Number),
    (Function::Position, "position", 0, 0, Type::Number),
    (Function::Count, "count", 1, 1, Type::Number),
    (Function::Name, "name", 0, 1, Type::String),
    (Function::LocalName, "local-name", 0, 1, Type::String),
    (Function::String, "string", 0, 1, Type::String),
    (Function::Concat, "concat", 2, usize::MAX, Type::String),
    (Function::StartsWith, "starts-with", 2, 2, Type::Boolean),
    (Function::Contains, "contains", 2, 2, Type::Boolean),
    (Function::SubstringBefore, "substring-before", 2, 2, Type::String),
    (Function::SubstringAfter, "substring-after", 2, 2, Type::String),
    (Function::Substring, "substring", 2, 3, Type::String),
    (Function::StringLength, "string-length", 0, 1, Type::Number),
    (Function::NormalizeSpace, "normalize-space", 0, 1, Type::String),
    (Function::Translate, "translate", 3, 3, Type::String),
    (Function::Not, "not", 1, 1, Type::Boolean),
    (Function::True, "true", 0, 0, Type::Boolean),
    (Function::False, "false", 0, 0, Type::Boolean),
    (Function::Boolean, "boolean", 1, 1, Type::Boolean),
    (Function::Number, "number", 0, 1, Type::Number),
    (Function::Sum, "sum", 1, 1, Type::Number),
    (Function::Floor, "floor", 1, 1, Type::Number),
    (Function::Ceiling, "ceiling", 1, 1, Type::Number),
    (Function::Round, "round", 1, 1, Type::Number),
    (Function::NamespaceUri, "namespace-uri", 0, 1, Type::String),
    (Function::Lang, "lang", 1, 1, Type::Boolean),
    (Function::Id, "id", 1, 1, Type::Nodes),
];

impl Function {
    fn row(self) -> &'static (Function, &'static str, usize, usize, Type) {
        TABLE.iter().find(|row| row.0 == self).unwrap_or(&TABLE[0])
    }

    /// The function called `name`, if the library has it.
    pub fn from_name(name: &str) -> Option<Function> {
        TABLE.iter().find(|row| row.1 == name).map(|row| row.0)
    }

    pub fn name(self) -> &'static str {
        self.row().1
    }

    /// Whether `n` arguments are accepted.
    pub fn accepts(self, n: usize) -> bool {
        let (_, _, least, most, _) = *self.row();
        (least..=most).contains(&n)
    }

    /// The arities accepted, for error messages.
    pub fn arity_text(self) -> String {
        match *self.row() {
            (_, _, least, most, _) if least == most => format!("{least}"),
            (_, _, least, usize::MAX, _) => format!("{least} or more"),
            (_, _, least, most, _) => format!("{least} to {most}"),
        }
    }

    pub fn result_type(self) -> Type {
        self.row().4
    }

    /// Whether argument `i` must be a node-set.
    pub fn wants_nodes(self, _i: usize) -> bool {
        matches!(self, Function::Count | Function::Sum | Function::Name | Function::LocalName | Function::NamespaceUri)
    }
}

/// XPath 1.0 `string(number)`: integers without a fraction, no exponent, `NaN`,
/// `Infinity`, `-Infinity`, and `-0` as `0`.
pub fn number_to_string(n: f64) -> String {
    if n.is_nan() {
        "NaN".into()
    } else if n.is_infinite() {
        if n > 0.0 { "Infinity".into() } else { "-Infinity".into() }
    } else if n == 0.0 {
        "0".into()
    } else {
        format!("{n}")
    }
}

/// XPath 1.0 `number(string)`.
pub fn string_to_number(s: &str) -> f64 {
    xpath_number(s)
}

/// XPath 1.0 `lang(wanted)` for a node whose nearest `xml:lang` is `declared`: the
/// same language, ignoring case, or a sub-language of it (`en-GB` for `en`).
pub fn lang_matches(declared: &str, wanted: &str) -> bool {
    let (declared, wanted) = (declared.as_bytes(), wanted.as_bytes());
    declared.len() >= wanted.len()
        && declared[..wanted.len()].eq_ignore_ascii_case(wanted)
        && (declared.len() == wanted.len() || declared[wanted.len()] == b'-')
}

/// The IDs `id()` looks for in a string: its whitespace-separated tokens (§4.1).
pub fn id_tokens(s: &str) -> impl Iterator<Item = &str> {
    s.split([' ', '\t', '\n', '\r']).filter(|t| !t.is_empty())
}

/// XPath 1.0 `boolean(number)`.
pub fn number_to_boolean(n: f64) -> bool {
    n != 0.0 && !n.is_nan()
}

/// `round()`: the closest integer, halves towards positive infinity.
pub fn round(n: f64) -> f64 {
    if n.is_nan() || n.is_infinite() {
        return n;
    }
    if (-0.5..0.0).contains(&n) {
        return -0.0;
    }
    (n + 0.5).floor()
}

/// `substring(s, start, length?)` with XPath's rounding and NaN rules: the characters
/// at positions `p` (from 1) with `round(start) <= p < round(start) + round(length)`.
pub fn substring(s: &str, start: f64, length: Option<f64>) -> String {
    let first = round(start);
    let end = length.map_or(f64::INFINITY, |l| first + round(l));
    s.chars()
        .enumerate()
        .filter(|&(i, _)| {
            let p = (i + 1) as f64;
            p >= first && p < end
        })
        .map(|(_, c)| c)
        .collect()
}

/// `substring-before(a, b)`.
pub fn substring_before(a: &str, b: &str) -> String {
    a.find(b).map(|at| a[..at].to_string()).unwrap_or_default()
}

/// `substring-after(a, b)`.
pub fn substring_after(a: &str, b: &str) -> String {
    a.find(b).map(|at| a[at + b.len()..].to_string()).unwrap_or_default()
}

/// `normalize-space(s)`: XML whitespace runs to one space, trimmed.
pub fn normalize_space(s: &str) -> String {
    s.split(is_xml_space).filter(|part| !part.is_empty()).collect::<Vec<_>>().join(" ")
}

fn is_xml_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

/// `translate(s, from, to)`: each character of `from` replaced by the one at the same
/// place in `to`, or removed when `to` is shorter; the first occurrence in `from` wins.
pub fn translate(s: &str, from: &str, to: &str) -> String {
    let from: Vec<char> = from.chars().collect();
    let to: Vec<char> = to.chars().collect();
    s.chars()
        .filter_map(|c| match from.iter().position(|&f| f == c) {
            Some(i) => to.get(i).copied(),
            None => Some(c),
        })
        .collect()
}

/// `string-length(s)` in characters.
pub fn string_length(s: &str) -> f64 {
    s.chars().count() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_as_xpath_1_0_says() {
        assert_eq!(number_to_string(3.0), "3");
        assert_eq!(number_to_string(-0.0), "0");
        assert_eq!(number_to_string(0.5), "0.5");
        assert_eq!(number_to_string(1e21), "1000000000000000000000");
        assert_eq!(number_to_string(f64::NAN), "NaN");
        assert_eq!(number_to_string(f64::NEG_INFINITY), "-Infinity");
    }

    #[test]
    fn string_functions_follow_the_spec_examples() {
        // XPath 1.0 §4.2's own examples.
        assert_eq!(substring("12345", 2.0, Some(3.0)), "234");
        assert_eq!(substring("12345", 2.0, None), "2345");
        assert_eq!(substring("12345", 1.5, Some(2.6)), "234");
        assert_eq!(substring("12345", 0.0, Some(3.0)), "12");
        assert_eq!(substring("12345", f64::NAN, Some(3.0)), "");
        assert_eq!(substring("12345", 1.0, Some(f64::NAN)), "");
        assert_eq!(substring("12345", -42.0, Some(f64::INFINITY)), "12345");
        assert_eq!(substring("12345", f64::NEG_INFINITY, Some(f64::INFINITY)), "");
        assert_eq!(substring_before("1999/04/01", "/"), "1999");
        assert_eq!(substring_after("1999/04/01", "/"), "04/01");
        assert_eq!(substring_after("abc", ""), "abc");
        assert_eq!(translate("bar", "abc", "ABC"), "BAr");
        assert_eq!(translate("--aaa--", "abc-", "ABC"), "AAA");
        assert_eq!(normalize_space("  a \n b\t"), "a b");
        assert_eq!(string_length("héllo"), 5.0);
    }

    #[test]
    fn round_halves_go_up() {
        assert_eq!(round(2.5), 3.0);
        assert_eq!(round(-2.5), -2.0);
        assert!(round(-0.2).is_sign_negative());
        assert!(round(f64::NAN).is_nan());
    }

    #[test]
    fn the_table_is_consistent() {
        for (function, name, ..) in TABLE {
            assert_eq!(Function::from_name(name), Some(function));
            assert_eq!(function.name(), name);
        }
        assert!(Function::Concat.accepts(7));
        assert!(!Function::Concat.accepts(1));
        assert_eq!(Function::Substring.arity_text(), "2 to 3");
    }
}
