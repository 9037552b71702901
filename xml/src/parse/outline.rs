//! A document as a flat list of nodes in document order, each with its depth: the
//! form in which the streaming parser's events ([`Outline`], a [`Sink`]) and
//! roxmltree's DOM ([`of_document`]) are compared, by the unit tests, the sample tests
//! and the `xml` fuzz target. Preorder plus depth fixes the tree, so equal outlines are
//! equal trees. Names are local names: roxmltree keeps no prefixes, and the reference
//! evaluator matches local names.
//!
//! Read next: `tests.rs`.

use super::{Event, Sink};
use crate::error::Result;

/// One node; `depth` counts its element ancestors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    Element { depth: usize, name: String, attributes: Vec<(String, String)> },
    Text { depth: usize, text: String },
    Comment { depth: usize, text: String },
    Pi { depth: usize, target: String, value: Option<String> },
}

fn local(name: &str) -> &str {
    name.split_once(':').map_or(name, |(_, local)| local)
}

/// Builds the outline of the events it receives.
#[derive(Debug, Default)]
pub struct Outline {
    pub lines: Vec<Line>,
    depth: usize,
}

impl Sink for Outline {
    fn event(&mut self, event: Event<'_>) -> Result<()> {
        let depth = self.depth;
        match event {
            Event::Open { name, .. } => {
                self.lines.push(Line::Element { depth, name: local(name).into(), attributes: Vec::new() });
                self.depth += 1;
            }
            Event::Attribute { name, value, .. } => match self.lines.last_mut() {
                Some(Line::Element { attributes, .. }) => attributes.push((local(name).into(), value.into())),
                other => panic!("an attribute must follow its element's Open, not {other:?}"),
            },
            Event::Text(text) => self.lines.push(Line::Text { depth, text: text.into() }),
            Event::Comment(text) => self.lines.push(Line::Comment { depth, text: text.into() }),
            Event::Pi { target, value } => {
                self.lines.push(Line::Pi { depth, target: target.into(), value: value.map(Into::into) })
            }
            Event::Close => self.depth = self.depth.checked_sub(1).expect("Close matches an Open"),
            Event::Namespace { .. } => {}
        }
        Ok(())
    }
}

/// The outline of roxmltree's DOM, walked without recursion.
pub fn of_document(document: &roxmltree::Document) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut open = vec![document.root().id()];
    for node in document.root().descendants().skip(1) {
        let parent = node.parent().expect("a node below the root has a parent").id();
        while open.last() != Some(&parent) {
            open.pop().expect("a node's parent is open");
        }
        let depth = open.len() - 1;
        lines.push(match node.node_type() {
            roxmltree::NodeType::Element => {
                open.push(node.id());
                let attributes = node.attributes().map(|a| (a.name().into(), a.value().into())).collect();
                Line::Element { depth, name: node.tag_name().name().into(), attributes }
            }
            roxmltree::NodeType::Text => Line::Text { depth, text: node.text().unwrap_or("").into() },
            roxmltree::NodeType::Comment => {
                Line::Comment { depth, text: super::normalize_line_ends(node.text().unwrap_or("")).into() }
            }
            roxmltree::NodeType::PI => {
                let pi = node.pi().expect("a PI node has PI data");
                Line::Pi {
                    depth,
                    target: pi.target.into(),
                    value: pi.value.map(|v| super::normalize_line_ends(v).into()),
                }
            }
            roxmltree::NodeType::Root => unreachable!("the root is skipped"),
        });
    }
    lines
}
