//! The function library's calls (XPath 1.0 §4): each function's arguments evaluated
//! in the caller's context and handed to `functions.rs` for the string and number
//! work; `count()` asks the tree's summary first.
//!
//! Read next: `../functions.rs`.

use super::{Ctx, Eval, Tree, Value};
use crate::error::Result;
use crate::xpath::expr::{Axis, Call, Expr, Start, Test};
use crate::xpath::functions::{self as f, Function};
use crate::xpath::names::{XML_NAMESPACE, expanded};

impl<T: Tree> Eval<'_, T> {
    pub(super) fn call(&mut self, call: &Call, ctx: &Ctx<T::Node>) -> Result<Value<T::Node>> {
        let args = &call.args;
        Ok(match call.function {
            Function::Last => Value::Number(ctx.size as f64),
            Function::Position => Value::Number(ctx.position as f64),
            Function::Count => Value::Number(self.count(&args[0], ctx)?),
            Function::Name | Function::LocalName | Function::NamespaceUri => {
                let nodes = match args.first() {
                    Some(arg) => self.nodes_of(arg, ctx)?,
                    None => self.context_nodes(ctx)?,
                };
                Value::String(match (nodes.first(), call.function) {
                    (None, _) => String::new(),
                    (Some(&n), Function::NamespaceUri) => self.tree.namespace_uri(n)?,
                    (Some(&n), function) => self.tree.name(n, function == Function::LocalName)?,
                })
            }
            Function::Id => Value::Nodes(self.id(&args[0], ctx)?),
            Function::Lang => {
                let wanted = self.string_of(&args[0], ctx)?;
                Value::Boolean(self.lang(ctx)?.is_some_and(|declared| f::lang_matches(&declared, &wanted)))
            }
            Function::String => Value::String(self.string_arg(args, ctx)?),
            Function::Concat => {
                let mut out = String::new();
                for arg in args {
                    out.push_str(&self.text_of(arg, ctx)?);
                }
                Value::String(out)
            }
            Function::StartsWith => {
                let (a, b) = (self.text_of(&args[0], ctx)?, self.text_of(&args[1], ctx)?);
                Value::Boolean(a.starts_with(b.as_ref()))
            }
            Function::Contains => {
                let (a, b) = (self.text_of(&args[0], ctx)?, self.text_of(&args[1], ctx)?);
                Value::Boolean(a.contains(b.as_ref()))
            }
            Function::SubstringBefore => {
                let (a, b) = (self.text_of(&args[0], ctx)?, self.text_of(&args[1], ctx)?);
                Value::String(f::substring_before(&a, &b))
            }
            Function::SubstringAfter => {
                let (a, b) = (self.text_of(&args[0], ctx)?, self.text_of(&args[1], ctx)?);
                Value::String(f::substring_after(&a, &b))
            }
            Function::Substring => {
                let s = self.string_of(&args[0], ctx)?;
                let start = self.number_of(&args[1], ctx)?;
                let length = match args.get(2) {
                    Some(arg) => Some(self.number_of(arg, ctx)?),
                    None => None,
                };
                Value::String(f::substring(&s, start, length))
            }
            Function::StringLength => Value::Number(f::string_length(&self.string_arg(args, ctx)?)),
            Function::NormalizeSpace => Value::String(f::normalize_space(&self.string_arg(args, ctx)?)),
            Function::Translate => {
                let s = self.text_of(&args[0], ctx)?;
                let (from, to) = (self.text_of(&args[1], ctx)?, self.text_of(&args[2], ctx)?);
                Value::String(f::translate(&s, &from, &to))
            }
            Function::Not => Value::Boolean(!self.boolean_of(&args[0], ctx)?),
            Function::True => Value::Boolean(true),
            Function::False => Value::Boolean(false),
            Function::Boolean => Value::Boolean(self.boolean_of(&args[0], ctx)?),
            Function::Number => {
                let value = match args.first() {
                    Some(arg) => self.expr(arg, ctx)?,
                    None => Value::Nodes(self.context_nodes(ctx)?),
                };
                Value::Number(self.number(&value)?)
            }
            Function::Sum => {
                let mut total = 0.0;
                for n in self.nodes_of(&args[0], ctx)? {
                    total += f::string_to_number(&self.node_string(n)?);
                }
                Value::Number(total)
            }
            Function::Floor => Value::Number(self.number_of(&args[0], ctx)?.floor()),
            Function::Ceiling => Value::Number(self.number_of(&args[0], ctx)?.ceil()),
            Function::Round => Value::Number(f::round(self.number_of(&args[0], ctx)?)),
        })
    }

    /// `count(arg)`, from the tree's summary when it knows the path's count.
    fn count(&mut self, arg: &Expr, ctx: &Ctx<T::Node>) -> Result<f64> {
        if let Expr::Path(path) = arg
            && matches!(path.start, Start::Root | Start::Context)
            && ctx.node.is_none()
            && let Some(n) = self.tree.count(path)?
        {
            return Ok(n as f64);
        }
        Ok(self.nodes_of(arg, ctx)?.len() as f64)
    }

    /// `id(arg)` (§4.1): the elements, in the context node's document (every document
    /// at the top), whose ID is one of the tokens of `arg`'s string, or of each of its
    /// nodes' string values.
    fn id(&mut self, arg: &Expr, ctx: &Ctx<T::Node>) -> Result<Vec<T::Node>> {
        let strings = match self.expr(arg, ctx)? {
            Value::Nodes(nodes) => nodes.into_iter().map(|n| self.node_string(n)).collect::<Result<Vec<_>>>()?,
            other => vec![self.string(&other)?],
        };
        let mut tokens: Vec<&str> = strings.iter().flat_map(|s| f::id_tokens(s)).collect();
        tokens.sort_unstable();
        tokens.dedup();
        let roots = match ctx.node {
            Some(node) => vec![self.tree.root_of(node)?],
            None => self.tree.roots()?,
        };
        let mut out = Vec::new();
        if !tokens.is_empty() {
            for root in roots {
                self.tree.elements_with_id(root, &tokens, &mut out)?;
            }
        }
        self.sort_unique(&mut out);
        Ok(out)
    }

    /// The `xml:lang` of the context node or of its nearest ancestor that has one.
    /// Except as written, each node's answer is kept for the rest of the evaluation and
    /// a walk up stops at the first node already answered, so a predicate testing
    /// `lang()` on every node of a deep document walks each parent link once.
    fn lang(&mut self, ctx: &Ctx<T::Node>) -> Result<Option<String>> {
        let Some(node) = ctx.node else { return Ok(None) };
        if self.as_written {
            return self.lang_walk(node);
        }
        let xml_lang = Test::Name(expanded(XML_NAMESPACE, "lang"));
        let (mut walked, mut near, mut current) = (Vec::new(), Vec::new(), node);
        let found = loop {
            let key = self.tree.key(current);
            if let Some(known) = self.langs.get(&key) {
                break known.clone();
            }
            walked.push(key);
            near.clear();
            self.tree.axis(Axis::Attribute, &xml_lang, current, &mut near)?;
            if let Some(&attribute) = near.first() {
                break Some(self.node_string(attribute)?);
            }
            near.clear();
            self.tree.axis(Axis::Parent, &Test::Any, current, &mut near)?;
            match near.first() {
                Some(&parent) => current = parent,
                None => break None,
            }
        };
        for key in walked {
            self.langs.insert(key, found.clone());
        }
        Ok(found)
    }

    /// [`Self::lang`] as written: the ancestors read whole, nearest first.
    fn lang_walk(&mut self, node: T::Node) -> Result<Option<String>> {
        let (mut elements, mut attribute) = (Vec::new(), Vec::new());
        self.tree.axis(Axis::AncestorOrSelf, &Test::Any, node, &mut elements)?;
        let xml_lang = Test::Name(expanded(XML_NAMESPACE, "lang"));
        for &element in elements.iter().rev() {
            self.tree.axis(Axis::Attribute, &xml_lang, element, &mut attribute)?;
            if let Some(&found) = attribute.first() {
                return self.node_string(found).map(Some);
            }
        }
        Ok(None)
    }

    /// The string of the only argument, or of the context node when there is none.
    fn string_arg(&mut self, args: &[Expr], ctx: &Ctx<T::Node>) -> Result<String> {
        match args.first() {
            Some(arg) => self.string_of(arg, ctx),
            None if ctx.node.is_some() => self.node_string(ctx.node.expect("checked")),
            None => {
                let nodes = self.context_nodes(ctx)?;
                self.string(&Value::Nodes(nodes))
            }
        }
    }
}
