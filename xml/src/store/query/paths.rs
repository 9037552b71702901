//! Path sets: which path-summary ids a step can reach, computed once per query from
//! the summary alone (no node is read).
//!
//! Every node carries its path id, so a step's candidates are the nodes of its
//! partitions whose path is in the step's [`PathSet`]. The summary is a tree in which
//! a path's parent always has a smaller id, so "descendant of a path in S" is one
//! forward pass over the ids.
//!
//! Name tests match the *local* name (the part after the last `:`), as the reference
//! evaluator does: `item` matches `item` and `x:item`.
//!
//! Read next: `plan.rs`, which turns these sets into sources and joins.

use crate::store::dict::Dictionary;
use crate::store::format::Kind;
use crate::xpath::NodeTest;

/// A set of path ids: a bitmap over the summary plus the sorted members.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PathSet {
    bits: Vec<u64>,
    members: Vec<u32>,
}

impl PathSet {
    /// The empty set over a summary of `paths` paths.
    pub fn empty(paths: usize) -> Self {
        PathSet { bits: vec![0; paths.div_ceil(64)], members: Vec::new() }
    }

    /// The set holding only path `id`.
    pub fn single(paths: usize, id: u32) -> Self {
        let mut set = PathSet::empty(paths);
        set.insert(id);
        set
    }

    fn insert(&mut self, id: u32) {
        let (word, bit) = (id as usize / 64, id % 64);
        if self.bits[word] & (1 << bit) == 0 {
            self.bits[word] |= 1 << bit;
            self.members.push(id);
        }
    }

    /// True when `id` is in the set.
    #[inline]
    pub fn contains(&self, id: u32) -> bool {
        self.bits.get(id as usize / 64).is_some_and(|w| w & (1 << (id % 64)) != 0)
    }

    /// The members in increasing order.
    pub fn members(&self) -> &[u32] {
        &self.members
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    fn sort(&mut self) {
        self.members.sort_unstable();
    }

    /// The members of `self` that are also in `other`.
    pub fn intersect(&self, other: &PathSet) -> PathSet {
        let mut out = PathSet::empty(self.bits.len() * 64);
        for &id in &self.members {
            if other.contains(id) {
                out.insert(id);
            }
        }
        out
    }

    /// The members of either set.
    pub fn union(&self, other: &PathSet) -> PathSet {
        let mut out = self.clone();
        for &id in &other.members {
            out.insert(id);
        }
        out.sort();
        out
    }
}

/// The local part of a name (after the last `:`), as name tests match it.
pub use crate::xpath::names::local_part as local_name;

/// Whether nodes of `kind` pass `test`'s kind requirement on the child or attribute
/// axis (names aside).
pub fn kind_passes(test: &NodeTest, kind: Kind) -> bool {
    match test {
        NodeTest::Element(_) | NodeTest::AnyElement => kind == Kind::Element,
        NodeTest::Attribute(_) | NodeTest::AnyAttribute => kind == Kind::Attribute,
        NodeTest::Text => kind == Kind::Text,
        NodeTest::Node => matches!(kind, Kind::Element | Kind::Text | Kind::Comment | Kind::Pi),
        NodeTest::SelfNode => false,
    }
}

/// The paths a child-axis (or attribute) step with `test` reaches from `context`.
pub fn child_paths(dict: &Dictionary, context: &PathSet, test: &NodeTest) -> PathSet {
    let mut out = PathSet::empty(dict.paths.len());
    let mut matches = name_matcher(dict, test);
    for &parent in context.members() {
        for child in dict.children(parent) {
            if matches(child) {
                out.insert(child);
            }
        }
    }
    out.sort();
    out
}

/// The paths of `context` and of all their (non-attribute) descendants: the
/// `descendant-or-self::node()` of XPath's `//`.
pub fn descendant_or_self(dict: &Dictionary, context: &PathSet) -> PathSet {
    let mut out = context.clone();
    for (id, info) in dict.paths.iter().enumerate().skip(1) {
        let id = id as u32;
        if info.kind != Kind::Attribute && !out.contains(id) && out.contains(info.parent) {
            let parent_kind = dict.paths[info.parent as usize].kind;
            if parent_kind != Kind::Attribute {
                out.insert(id);
            }
        }
    }
    out.sort();
    out
}

/// The paths a `//test` step reaches from `context`.
pub fn descendant_paths(dict: &Dictionary, context: &PathSet, test: &NodeTest) -> PathSet {
    let below = descendant_or_self(dict, context);
    if *test == NodeTest::SelfNode {
        return below;
    }
    let mut out = PathSet::empty(dict.paths.len());
    let mut matches = name_matcher(dict, test);
    for (id, info) in dict.paths.iter().enumerate().skip(1) {
        let id = id as u32;
        if below.contains(info.parent) && dict.paths[info.parent as usize].kind != Kind::Attribute && matches(id) {
            out.insert(id);
        }
    }
    out
}

/// How a step's paths relate to its context's paths (mirrors `plan::Axis`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathAxis {
    Child,
    Descendant,
    SelfOrDescendant,
    Itself,
}

/// The paths from which some path of `found` is reached along `axis`: parents,
/// ancestors, or the paths themselves. Ancestor walks stop at a path already marked
/// (the marked set is closed upwards), so the cost is one visit per path at most.
pub fn reaching(dict: &Dictionary, found: &PathSet, axis: PathAxis) -> PathSet {
    let mut out = PathSet::empty(dict.paths.len());
    let mut ancestors = PathSet::empty(dict.paths.len());
    for &q in found.members() {
        let info = dict.paths[q as usize];
        match axis {
            PathAxis::Child => out.insert(info.parent),
            PathAxis::Itself => out.insert(q),
            PathAxis::SelfOrDescendant if info.kind == Kind::Attribute => out.insert(q),
            PathAxis::SelfOrDescendant | PathAxis::Descendant => {
                if axis == PathAxis::SelfOrDescendant {
                    out.insert(q);
                }
                if q == 0 {
                    continue;
                }
                let mut at = info.parent;
                while !ancestors.contains(at) {
                    ancestors.insert(at);
                    if at == 0 {
                        break;
                    }
                    at = dict.paths[at as usize].parent;
                }
            }
        }
    }
    for &a in ancestors.members() {
        out.insert(a);
    }
    out.sort();
    out
}

/// A test of path ids against `test`, comparing each name once.
fn name_matcher<'d>(dict: &'d Dictionary, test: &'d NodeTest) -> impl FnMut(u32) -> bool + 'd {
    let wanted = match test {
        NodeTest::Element(n) | NodeTest::Attribute(n) => Some(n.as_str()),
        _ => None,
    };
    let mut memo: Vec<Option<bool>> = vec![None; dict.names.len()];
    move |path: u32| {
        let info = dict.paths[path as usize];
        let name_ok = match wanted {
            None => true,
            Some(w) => match memo.get_mut(info.name as usize) {
                Some(slot) => *slot.get_or_insert_with(|| dict.name_passes(info.name, w)),
                None => false,
            },
        };
        name_ok && kind_passes(test, info.kind)
    }
}
