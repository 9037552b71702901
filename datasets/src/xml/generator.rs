//! Replays a [`Profile`] as a stream of XML: deterministic for a seed, scaled by a
//! factor, constant memory (output is written as it is produced, ≥ 1.1 GB is fine).
//!
//! How counts stay calibrated: a child count of a state that occurs once in the sample
//! (a container such as `<regions>`, depth ≤ 3) and is ≥ 10 is multiplied by `factor × scale`;
//! every other count is drawn from its per-instance histogram at a low-discrepancy
//! quantile (golden-ratio sequence from a seeded start), so per-tag totals track the
//! sample's means closely instead of wandering like independent draws would.
//! Element-only content gets a newline after each tag, as xmlgen writes it; mixed
//! content interleaves text runs with the (shuffled) child elements.
//!
//! Read next: `profile.rs` (the model), `mod.rs` (the public entry point).

use std::collections::{BTreeMap, HashMap};
use std::io::Write;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::profile::{Profile, Value, WordTable};
use crate::error::Result;

/// What a generation produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    pub bytes: u64,
    pub elements: u64,
    pub attributes: u64,
    /// Depth of the deepest element (the root has depth 1).
    pub max_depth: u32,
    /// Elements per tag.
    pub per_tag: BTreeMap<String, u64>,
}

/// Child counts at least this large under a singleton state scale with the factor.
const SCALED_FANOUT: u32 = 10;

/// … and only under containers this close to the root (site/regions/africa).
const SCALED_DEPTH: u32 = 3;

/// 1/φ: consecutive multiples modulo 1 spread evenly over [0, 1).
const GOLDEN: f64 = 0.618_033_988_749_894_9;

/// Writes one document following `profile` at `factor` to `out`.
pub fn replay<W: Write>(profile: &Profile, factor: f64, seed: u64, out: W) -> Result<Stats> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let phases = profile.states.iter().map(|s| s.children.iter().map(|_| rng.random::<f64>()).collect()).collect();
    let mut replayer = Replayer {
        profile,
        factor,
        rng,
        out: CountingWriter { inner: std::io::BufWriter::with_capacity(1 << 20, out), bytes: 0 },
        words: WordTable::new(&profile.vocabulary),
        phases,
        instances: vec![0; profile.states.len()],
        sequences: HashMap::new(),
        stats: Stats::default(),
    };
    replayer.out.write_all(b"<?xml version=\"1.0\" standalone=\"yes\"?>\n")?;
    if !profile.states.is_empty() {
        replayer.element(0, 1)?;
    }
    replayer.out.write_all(b"\n")?;
    replayer.out.inner.flush()?;
    let mut stats = replayer.stats;
    for (state, &n) in profile.states.iter().zip(&replayer.instances).filter(|(_, n)| **n > 0) {
        *stats.per_tag.entry(state.tag.clone()).or_default() += n;
    }
    stats.bytes = replayer.out.bytes;
    Ok(stats)
}

struct CountingWriter<W: Write> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for CountingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

struct Replayer<'p, W: Write> {
    profile: &'p Profile,
    factor: f64,
    rng: ChaCha8Rng,
    out: CountingWriter<std::io::BufWriter<W>>,
    words: WordTable<'p>,
    /// Per state, per child: the start of its low-discrepancy sequence.
    phases: Vec<Vec<f64>>,
    /// Per state: instances generated so far.
    instances: Vec<u64>,
    /// Next number of each `Sequence` prefix.
    sequences: HashMap<&'p str, u64>,
    stats: Stats,
}

impl<'p, W: Write> Replayer<'p, W> {
    fn element(&mut self, id: usize, depth: u32) -> Result<()> {
        let profile = self.profile;
        let state = &profile.states[id];
        let instance = self.instances[id];
        self.instances[id] += 1;
        self.stats.elements += 1;
        self.stats.max_depth = self.stats.max_depth.max(depth);
        write!(self.out, "<{}", state.tag)?;
        for attribute in &state.attributes {
            if attribute.presence >= 1.0 || self.rng.random::<f64>() < attribute.presence {
                let value = self.value(&attribute.value);
                write!(self.out, " {}=\"", attribute.name)?;
                write_escaped(&mut self.out, &value)?;
                self.out.write_all(b"\"")?;
                self.stats.attributes += 1;
            }
        }
        let children = self.child_sequence(id, instance);
        let text = state.text.as_ref();
        if children.is_empty() {
            match text.filter(|t| t.presence >= 1.0 || self.rng.random::<f64>() < t.presence) {
                Some(t) => {
                    self.out.write_all(b">")?;
                    let value = self.value(&t.value);
                    write_escaped(&mut self.out, &value)?;
                }
                None => return Ok(self.out.write_all(b"/>")?),
            }
        } else if state.mixed {
            self.mixed_content(id, children, depth)?;
        } else {
            self.out.write_all(b">\n")?;
            for child in children {
                self.element(child, depth + 1)?;
                self.out.write_all(b"\n")?;
            }
        }
        Ok(write!(self.out, "</{}>", state.tag)?)
    }

    fn mixed_content(&mut self, id: usize, mut children: Vec<usize>, depth: u32) -> Result<()> {
        let profile = self.profile;
        let text = profile.states[id].text.as_ref();
        children.shuffle(&mut self.rng);
        self.out.write_all(b">")?;
        for (slot, child) in children.iter().map(Some).chain([None]).enumerate() {
            if let Some(t) = text.filter(|t| slot == 0 || self.rng.random::<f64>() < t.presence) {
                let value = self.value(&t.value);
                write_escaped(&mut self.out, &value)?;
                self.out.write_all(b" ")?;
            }
            if let Some(&child) = child {
                self.element(child, depth + 1)?;
                self.out.write_all(b" ")?;
            }
        }
        Ok(())
    }

    /// Child state ids of one instance, in the state's child order.
    fn child_sequence(&mut self, id: usize, instance: u64) -> Vec<usize> {
        let state = &self.profile.states[id];
        let mut sequence = Vec::new();
        for (j, child) in state.children.iter().enumerate() {
            let k = match child.histogram.as_slice() {
                [(k, _)] if state.count == 1 && state.depth <= SCALED_DEPTH && *k >= SCALED_FANOUT => {
                    (f64::from(*k) * self.factor * self.profile.scale).round() as u64
                }
                _ => {
                    let u = (self.phases[id][j] + instance as f64 * GOLDEN).fract();
                    u64::from(child.quantile(u))
                }
            };
            sequence.extend(std::iter::repeat_n(child.state, k as usize));
        }
        sequence
    }

    fn value(&mut self, value: &'p Value) -> String {
        match value {
            Value::Sequence { prefix } => {
                let next = self.sequences.entry(prefix.as_str()).or_default();
                *next += 1;
                format!("{prefix}{}", *next - 1)
            }
            Value::Reference { prefix, bound } => {
                let scaled = ((*bound as f64) * self.factor * self.profile.scale).round();
                format!("{prefix}{}", self.rng.random_range(0..(scaled as u64).max(1)))
            }
            Value::Choice { values } => {
                let total: u64 = values.iter().map(|(_, w)| w).sum();
                let mut x = self.rng.random_range(0..total.max(1));
                for (v, w) in values {
                    if x < *w {
                        return v.clone();
                    }
                    x -= w;
                }
                String::new()
            }
            Value::Number { min, max, decimals } => {
                let x = if max > min { self.rng.random_range(*min..=*max) } else { *min };
                format!("{x:.*}", *decimals as usize)
            }
            Value::Words { mean } => {
                let n = (mean * (0.5 + self.rng.random::<f64>())).round().max(1.0) as usize;
                let mut text = String::new();
                for i in 0..n {
                    if i > 0 {
                        text.push(' ');
                    }
                    text.push_str(self.words.draw(&mut self.rng));
                }
                text
            }
        }
    }
}

/// Writes text with `&`, `<`, `>` and `"` escaped.
fn write_escaped(out: &mut impl Write, text: &str) -> std::io::Result<()> {
    let mut start = 0;
    for (i, b) in text.bytes().enumerate() {
        let escape: &[u8] = match b {
            b'&' => b"&amp;",
            b'<' => b"&lt;",
            b'>' => b"&gt;",
            b'"' => b"&quot;",
            _ => continue,
        };
        out.write_all(&text.as_bytes()[start..i])?;
        out.write_all(escape)?;
        start = i + 1;
    }
    out.write_all(&text.as_bytes()[start..])
}
