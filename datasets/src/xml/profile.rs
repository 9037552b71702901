//! A collection profile: the statistical model generators replay, learned from a real
//! sample by `learn.rs` and stored as JSON in `profiles/`.
//!
//! A *state* is an element in context: (parent tag, tag, depth). For each state the
//! profile keeps how many instances the sample holds, the distribution of each child
//! state's count per instance (children in their usual order), each attribute's
//! presence probability and value model, and the text model. Keying on depth bounds the
//! depth to the sample's, and since child counts are replayed with their per-instance
//! means, the expected number of elements of every tag equals the sample's (scaled).
//!
//! Invariants: `states[0]` is the root; child ids index `states`; every histogram is
//! non-empty, sorted by count, with positive frequencies.
//!
//! Read next: `generator.rs` (replays a profile), `learn.rs` (builds one).

use rand::Rng;
use serde::{Deserialize, Serialize};

/// A whole collection model.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Profile {
    /// Name of the sample it was learned from.
    pub source: String,
    /// Bytes of the sample (factor 1 output is about `scale × bytes`).
    pub sample_bytes: u64,
    /// Multiplier applied to the root's large fanouts at factor 1.
    pub scale: f64,
    /// Element states; `states[0]` is the root.
    pub states: Vec<State>,
    /// Words of text, with their frequencies in the sample.
    pub vocabulary: Vec<(String, u32)>,
}

/// One element in context.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct State {
    pub tag: String,
    pub depth: u32,
    /// Instances in the sample.
    pub count: u64,
    /// Child states in document order, with per-instance count distributions.
    pub children: Vec<Child>,
    pub attributes: Vec<Attribute>,
    /// Model of the text of a leaf element, or of each text run of a mixed one.
    pub text: Option<Text>,
    /// Text runs interleave with child elements (mixed content).
    pub mixed: bool,
}

/// A child state and how many of it an instance of the parent has.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Child {
    pub state: usize,
    /// (count per parent instance, number of parent instances with that count).
    pub histogram: Vec<(u32, u64)>,
}

/// An attribute of a state.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Attribute {
    pub name: String,
    /// Fraction of instances that carry it.
    pub presence: f64,
    pub value: Value,
}

/// Text of a state.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Text {
    /// Fraction of instances (leaf) or of text slots (mixed) that hold text.
    pub presence: f64,
    pub value: Value,
}

/// How values are drawn.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Value {
    /// Unique identifiers `prefix0`, `prefix1`, … in document order.
    Sequence { prefix: String },
    /// References `prefix<n>` with n uniform below `bound × factor`.
    Reference { prefix: String, bound: u64 },
    /// One of these values, with these weights.
    Choice { values: Vec<(String, u64)> },
    /// A number uniform in [min, max] with this many decimals.
    Number { min: f64, max: f64, decimals: u32 },
    /// Words from the vocabulary, `mean` of them on average.
    Words { mean: f64 },
}

impl Child {
    /// The count at quantile `u` ∈ [0, 1) of the histogram.
    pub fn quantile(&self, u: f64) -> u32 {
        let total: u64 = self.histogram.iter().map(|&(_, f)| f).sum();
        let target = (u * total as f64) as u64;
        let mut seen = 0;
        for &(k, f) in &self.histogram {
            seen += f;
            if target < seen {
                return k;
            }
        }
        self.histogram.last().map_or(0, |&(k, _)| k)
    }

    /// Mean count per parent instance.
    pub fn mean(&self) -> f64 {
        let total: u64 = self.histogram.iter().map(|&(_, f)| f).sum();
        let sum: u64 = self.histogram.iter().map(|&(k, f)| u64::from(k) * f).sum();
        sum as f64 / total.max(1) as f64
    }
}

/// Cumulative weights for drawing words in O(log n).
pub struct WordTable<'p> {
    words: Vec<&'p str>,
    cumulative: Vec<u64>,
}

impl<'p> WordTable<'p> {
    pub fn new(vocabulary: &'p [(String, u32)]) -> Self {
        let mut total = 0;
        let cumulative = vocabulary
            .iter()
            .map(|(_, w)| {
                total += u64::from(*w);
                total
            })
            .collect();
        WordTable { words: vocabulary.iter().map(|(w, _)| w.as_str()).collect(), cumulative }
    }

    pub fn draw(&self, rng: &mut impl Rng) -> &'p str {
        let Some(&total) = self.cumulative.last() else { return "lorem" };
        let x = rng.random_range(0..total);
        let index = self.cumulative.partition_point(|&c| c <= x);
        self.words.get(index).copied().unwrap_or("lorem")
    }
}
