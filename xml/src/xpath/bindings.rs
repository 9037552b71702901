//! What a caller binds for a query (XPath 1.0 §1's expression context): namespace
//! prefixes to URIs, and variables to values.
//!
//! A variable is bound to a string, a number or a boolean and replaces `$name` when
//! the query is parsed, as the literal would (`grammar.rs`): a prepared query is
//! specific to its values, and a value needs no quoting, so a string holding both `'`
//! and `"` (which no XPath 1.0 literal can) is searched for as itself. Node-set
//! variables are not offered: a query reaches nodes by its paths.
//!
//! Read next: `names.rs` (how prefixes are resolved), `grammar.rs` (variables).

use super::names::XML_NAMESPACE;

/// A variable's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Atom {
    String(String),
    Number(f64),
    Boolean(bool),
}

/// Namespace prefixes and variables bound by the caller (`--ns p=URI`, `--var n=v`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bindings {
    namespaces: Vec<(String, String)>,
    variables: Vec<(String, Atom)>,
    /// `None`: a name test without a prefix matches the local name in any namespace
    /// (QuireDB's reading); `Some(uri)`: XPath's, an element test in namespace `uri`
    /// (empty: none) and an attribute test in none.
    strict: Option<String>,
}

impl Bindings {
    /// Nothing bound: prefixes come from the data, and `$name` is an error.
    pub fn new() -> Self {
        Self::default()
    }

    /// Binds `prefix` to `uri` (a later binding of the same prefix replaces it).
    pub fn namespace(&mut self, prefix: &str, uri: &str) -> &mut Self {
        self.namespaces.retain(|(p, _)| p != prefix);
        self.namespaces.push((prefix.to_owned(), uri.to_owned()));
        self
    }

    /// Binds `$name` to `value` (a later binding of the same name replaces it).
    pub fn variable(&mut self, name: &str, value: Atom) -> &mut Self {
        self.variables.retain(|(n, _)| n != name);
        self.variables.push((name.to_owned(), value));
        self
    }

    /// Reads name tests without a prefix as XPath 1.0 does: elements and attributes in
    /// no namespace, or with `default_element_namespace` (XPath 2.0's default element
    /// namespace) elements in that one. `//entry` then finds nothing in an Atom feed,
    /// as in lxml and BaseX, unless Atom's URI is that default.
    pub fn strict_names(&mut self, default_element_namespace: Option<&str>) -> &mut Self {
        self.strict = Some(default_element_namespace.unwrap_or_default().to_owned());
        self
    }

    /// Whether [`Bindings::strict_names`] is on.
    pub fn is_strict(&self) -> bool {
        self.strict.is_some()
    }

    /// The namespace a name test without a prefix asks for (`attribute`: on the
    /// attribute axis); `None`: any namespace.
    pub fn unprefixed(&self, attribute: bool) -> Option<&str> {
        self.strict.as_deref().map(|uri| if attribute { "" } else { uri })
    }

    /// The URI the caller bound `prefix` to.
    pub fn uri(&self, prefix: &str) -> Option<&str> {
        self.namespaces.iter().find(|(p, _)| p == prefix).map(|(_, uri)| uri.as_str())
    }

    /// The value bound to `$name`.
    pub fn value(&self, name: &str) -> Option<&Atom> {
        self.variables.iter().find(|(n, _)| n == name).map(|(_, value)| value)
    }

    /// Reads `prefix=uri`, as `--ns` takes it.
    pub fn parse_namespace(text: &str) -> Result<(String, String), String> {
        let (prefix, uri) = text.split_once('=').ok_or_else(|| format!("`{text}` is not PREFIX=URI"))?;
        Self::check_namespace(prefix, uri)?;
        Ok((prefix.to_owned(), uri.to_owned()))
    }

    /// Whether `prefix` may be bound to `uri`: a name without `:`, a URI that is not
    /// empty, and `xml` only to the XML namespace.
    pub fn check_namespace(prefix: &str, uri: &str) -> Result<(), String> {
        if !is_ncname(prefix) {
            return Err(format!("`{prefix}` is not a namespace prefix (a name without `:`)"));
        }
        if prefix == "xml" && uri != XML_NAMESPACE {
            return Err(format!("the prefix `xml` is bound to {XML_NAMESPACE} only"));
        }
        if uri.is_empty() {
            return Err(format!("the prefix `{prefix}` needs a namespace URI"));
        }
        Ok(())
    }

    /// Reads `name=value`, as `--var` takes it (the value a string).
    pub fn parse_variable(text: &str) -> Result<(String, String), String> {
        let (name, value) = text.split_once('=').ok_or_else(|| format!("`{text}` is not NAME=VALUE"))?;
        Self::check_variable(name)?;
        Ok((name.to_owned(), value.to_owned()))
    }

    /// Whether `name` may name a variable (`$name`): a name without `:`.
    pub fn check_variable(name: &str) -> Result<(), String> {
        if is_ncname(name) { Ok(()) } else { Err(format!("`{name}` is not a variable name")) }
    }

    /// Reads `name=number`, as `--var-number` takes it.
    pub fn parse_number(text: &str) -> Result<(String, f64), String> {
        let (name, value) = Self::parse_variable(text)?;
        let number = value.trim().parse::<f64>().map_err(|_| format!("`{value}` is not a number"))?;
        Ok((name, number))
    }
}

/// A name without a colon, as XPath's prefixes and variable names are (ASCII rules
/// are not enforced beyond the lexer's: letters, digits, `_`, `-`, `.`).
fn is_ncname(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bindings_are_checked_and_replaced_by_later_ones() {
        assert_eq!(Bindings::parse_namespace("dc=urn:x=y"), Ok(("dc".into(), "urn:x=y".into())));
        assert!(Bindings::parse_namespace("dc").is_err());
        assert!(Bindings::parse_namespace("a:b=urn:x").is_err());
        assert!(Bindings::parse_namespace("xml=urn:x").is_err());
        assert!(Bindings::parse_namespace("p=").is_err());
        assert_eq!(Bindings::parse_variable("who=O'Brien \"Jr\""), Ok(("who".into(), "O'Brien \"Jr\"".into())));
        assert_eq!(Bindings::parse_variable("v="), Ok(("v".into(), String::new())));
        assert!(Bindings::parse_variable("$v=1").is_err());
        assert_eq!(Bindings::parse_number("n= 2.5 "), Ok(("n".into(), 2.5)));
        assert!(Bindings::parse_number("n=two").is_err());
        let mut b = Bindings::new();
        b.namespace("p", "urn:1").namespace("p", "urn:2").variable("v", Atom::Number(1.0));
        b.variable("v", Atom::Boolean(true));
        assert_eq!((b.uri("p"), b.value("v")), (Some("urn:2"), Some(&Atom::Boolean(true))));
    }
}
