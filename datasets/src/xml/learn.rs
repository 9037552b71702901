//! Learns a [`Profile`] from real documents (the calibration step).
//!
//! All documents of a sample are read as children of one virtual root when their root
//! tags agree, so a folder of 11 UniProt files teaches one `<uniprot>` with 20 entries.
//! Value models are chosen in this order: unique `prefix<digits>` → Sequence; shared
//! `prefix<digits>` → Reference; ≤ 32 distinct values → Choice; all numbers → Number;
//! anything else → Words (mean words per value). Whitespace-only text is ignored.
//!
//! Read next: `profile.rs` for the model, `tests/datasets.rs` (the ignored
//! `regenerate_profiles` test) for how the committed profiles were produced.

use std::collections::{BTreeMap, HashMap, HashSet};

use roxmltree::{Document, Node};

use super::profile::{Attribute, Child, Profile, State, Text, Value};

/// Values kept to decide on a Choice.
const MAX_CHOICES: usize = 32;
/// Words kept in the vocabulary.
const VOCABULARY: usize = 20_000;

type Key = (String, String, u32); // (parent tag, tag, depth)

#[derive(Default)]
struct StateStats {
    count: u64,
    /// child key → (count per instance → instances)
    children: BTreeMap<usize, HashMap<u32, u64>>,
    /// child key → sum of first positions, for ordering
    first_position: HashMap<usize, (f64, u64)>,
    attributes: BTreeMap<String, ValueStats>,
    text: ValueStats,
    text_slots: u64,
    mixed: bool,
}

#[derive(Default)]
struct ValueStats {
    n: u64,
    distinct: HashMap<String, u64>,
    overflow: bool,
    numeric: bool,
    min: f64,
    max: f64,
    decimals: u32,
    /// Common `prefix` of prefix+digits values, with the set of numbers seen.
    pattern: Option<(String, HashSet<u64>)>,
    pattern_broken: bool,
    words: u64,
}

/// Learns a profile from parsed documents whose text totals `sample_bytes`.
pub fn learn(source: &str, docs: &[Document<'_>], sample_bytes: u64, scale: f64) -> Profile {
    let mut learner = Learner::default();
    let roots: Vec<Node<'_, '_>> = docs.iter().filter_map(|d| d.root().first_element_child()).collect();
    if let Some(first) = roots.first() {
        let root_id = learner.id(("".into(), first.tag_name().name().into(), 1));
        learner.stats[root_id].count = 1;
        let same = roots.iter().all(|r| r.tag_name() == first.tag_name());
        if same {
            let children: Vec<_> = roots.iter().flat_map(|r| r.children()).collect();
            learner.visit_content(root_id, roots[0], &children, 1);
        } else {
            learner.visit(*first, "", 1);
        }
    }
    learner.into_profile(source, sample_bytes, scale)
}

#[derive(Default)]
struct Learner {
    ids: HashMap<Key, usize>,
    keys: Vec<Key>,
    stats: Vec<StateStats>,
    words: HashMap<String, u32>,
}

impl Learner {
    fn id(&mut self, key: Key) -> usize {
        if let Some(&id) = self.ids.get(&key) {
            return id;
        }
        self.ids.insert(key.clone(), self.keys.len());
        self.keys.push(key);
        self.stats.push(StateStats::default());
        self.keys.len() - 1
    }

    fn visit(&mut self, node: Node<'_, '_>, parent: &str, depth: u32) -> usize {
        let id = self.id((parent.into(), node.tag_name().name().into(), depth));
        self.stats[id].count += 1;
        let children: Vec<_> = node.children().collect();
        self.visit_content(id, node, &children, depth);
        id
    }

    fn visit_content(&mut self, id: usize, node: Node<'_, '_>, children: &[Node<'_, '_>], depth: u32) {
        for a in node.attributes() {
            if !a.name().contains(':') && a.namespace().is_none() {
                self.stats[id].attributes.entry(a.name().into()).or_default().add(a.value());
            }
        }
        let tag = node.tag_name().name().to_string();
        let mut counts: HashMap<usize, u32> = HashMap::new();
        let (mut texts, mut elements) = (Vec::new(), 0u32);
        for child in children {
            if child.is_element() {
                let child_id = self.visit(*child, &tag, depth + 1);
                let seen = counts.entry(child_id).or_default();
                if *seen == 0 {
                    let entry = self.stats[id].first_position.entry(child_id).or_default();
                    entry.0 += f64::from(elements);
                    entry.1 += 1;
                }
                *seen += 1;
                elements += 1;
            } else if let Some(text) = child.text().filter(|t| !t.trim().is_empty()) {
                texts.push(text.trim().to_string());
            }
        }
        let stats = &mut self.stats[id];
        for (child_id, k) in counts {
            *stats.children.entry(child_id).or_default().entry(k).or_default() += 1;
        }
        stats.mixed |= elements > 0 && !texts.is_empty();
        stats.text_slots += if elements > 0 { u64::from(elements) + 1 } else { 1 };
        for text in texts {
            for word in text.split_whitespace() {
                *self.words.entry(word.to_string()).or_default() += 1;
            }
            stats.text.add(&text);
        }
    }

    fn into_profile(self, source: &str, sample_bytes: u64, scale: f64) -> Profile {
        let states = self.stats.iter().enumerate().map(|(id, s)| self.state(id, s)).collect();
        let mut vocabulary: Vec<(String, u32)> = self.words.into_iter().collect();
        vocabulary.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        vocabulary.truncate(VOCABULARY);
        Profile { source: source.into(), sample_bytes, scale, states, vocabulary }
    }

    fn state(&self, id: usize, s: &StateStats) -> State {
        let mut children: Vec<(f64, Child)> = s
            .children
            .iter()
            .map(|(&child, histogram)| {
                let present: u64 = histogram.values().sum();
                let mut histogram: Vec<(u32, u64)> = histogram.iter().map(|(&k, &f)| (k, f)).collect();
                if s.count > present {
                    histogram.push((0, s.count - present));
                }
                histogram.sort_unstable();
                let (sum, n) = s.first_position[&child];
                (sum / n as f64, Child { state: child, histogram })
            })
            .collect();
        children.sort_by(|a, b| a.0.total_cmp(&b.0));
        let attributes = s
            .attributes
            .iter()
            .map(|(name, v)| Attribute { name: name.clone(), presence: v.n as f64 / s.count as f64, value: v.model() })
            .collect();
        let text = (s.text.n > 0)
            .then(|| Text { presence: (s.text.n as f64 / s.text_slots.max(1) as f64).min(1.0), value: s.text.model() });
        State {
            tag: self.keys[id].1.clone(),
            depth: self.keys[id].2,
            count: s.count,
            children: children.into_iter().map(|(_, c)| c).collect(),
            attributes,
            text,
            mixed: s.mixed,
        }
    }
}

/// Splits `item123` into ("item", 123).
fn prefix_number(value: &str) -> Option<(&str, u64)> {
    let digits = value.len() - value.bytes().rev().take_while(u8::is_ascii_digit).count();
    let (prefix, number) = value.split_at(digits);
    let valid = !prefix.is_empty() && !number.is_empty() && number.len() < 16;
    let prefix_ok = prefix.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_');
    (valid && prefix_ok).then(|| number.parse().ok().map(|n| (prefix, n))).flatten()
}

impl ValueStats {
    fn add(&mut self, value: &str) {
        if self.n == 0 {
            self.numeric = true;
            self.min = f64::INFINITY;
            self.max = f64::NEG_INFINITY;
        }
        self.n += 1;
        self.words += value.split_whitespace().count() as u64;
        if !self.overflow {
            *self.distinct.entry(value.to_string()).or_default() += 1;
            self.overflow = self.distinct.len() > MAX_CHOICES;
        }
        match value.trim().parse::<f64>() {
            Ok(x) if self.numeric && x.is_finite() && !value.contains(['e', 'E', '+']) => {
                self.min = self.min.min(x);
                self.max = self.max.max(x);
                let decimals = value.split_once('.').map_or(0, |(_, f)| f.len() as u32);
                self.decimals = self.decimals.max(decimals);
            }
            _ => self.numeric = false,
        }
        self.add_pattern(value);
    }

    fn add_pattern(&mut self, value: &str) {
        if self.pattern_broken {
            return;
        }
        match (prefix_number(value), &mut self.pattern) {
            (Some((prefix, n)), None) => self.pattern = Some((prefix.into(), HashSet::from([n]))),
            (Some((prefix, n)), Some((p, seen))) if p == prefix => {
                seen.insert(n);
            }
            _ => {
                self.pattern_broken = true;
                self.pattern = None;
            }
        }
    }

    fn model(&self) -> Value {
        if let Some((prefix, seen)) = &self.pattern {
            if seen.len() as u64 == self.n && self.n > 1 {
                return Value::Sequence { prefix: prefix.clone() };
            }
            let bound = seen.iter().max().map_or(1, |m| m + 1);
            return Value::Reference { prefix: prefix.clone(), bound };
        }
        if !self.overflow {
            let mut values: Vec<(String, u64)> = self.distinct.iter().map(|(v, &n)| (v.clone(), n)).collect();
            values.sort();
            return Value::Choice { values };
        }
        if self.numeric {
            return Value::Number { min: self.min, max: self.max, decimals: self.decimals };
        }
        Value::Words { mean: self.words as f64 / self.n.max(1) as f64 }
    }
}
