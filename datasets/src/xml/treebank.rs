//! TreeBank-like collection: parse trees of English sentences, deep, recursive and
//! irregular, generated from a small weighted grammar of Penn Treebank categories.
//!
//! No TreeBank sample is shipped in `../shared/data`, so this generator is calibrated
//! on the published figures of the UW XML repository's `treebank_e.xml` (82 MB,
//! 2,437,666 elements, maximum depth 36, average depth 7.87): the grammar's recursion is
//! subcritical (average element depth 8.9 counting the three wrapper levels), depth is
//! capped at 36 by forcing non-recursive rules near the cap, and
//! factor 1 is about 116 MB like the other kinds. Tag names follow the UW file
//! (`_NONE_`, `_COMMA_` for categories that are not XML names).
//!
//! Read next: `mod.rs` (dispatch), `generator.rs` (the profile-driven kinds).

use std::io::Write;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::generator::Stats;
use crate::error::Result;

/// Sentences at factor 1 (≈ 116 MB, measured).
pub const SENTENCES_PER_FACTOR: f64 = 325_000.0;
/// Deepest element, as in the UW TreeBank.
const MAX_DEPTH: u32 = 36;
/// Sentences per `<FILE>`.
const SENTENCES_PER_FILE: u64 = 50;

/// A weighted right-hand side of a grammar rule.
type Rule = (u32, &'static [&'static str]);

/// (category, weighted right-hand sides); the first rule of each is non-recursive.
const RULES: &[(&str, &[Rule])] = &[
    (
        "S",
        &[
            (30, &["NP", "VP"]),
            (12, &["NP", "VP", "_PERIOD_"]),
            (8, &["PP", "_COMMA_", "NP", "VP"]),
            (6, &["S", "CC", "S"]),
            (6, &["SBAR", "_COMMA_", "NP", "VP"]),
            (4, &["NP", "ADVP", "VP"]),
        ],
    ),
    (
        "NP",
        &[
            (22, &["DT", "NN"]),
            (10, &["DT", "JJ", "NN"]),
            (10, &["NNP", "NNP"]),
            (10, &["PRP"]),
            (8, &["NNS"]),
            (5, &["CD", "NNS"]),
            (5, &["_NONE_"]),
            (8, &["NP", "PP"]),
            (4, &["NP", "SBAR"]),
            (3, &["NP", "CC", "NP"]),
            (3, &["DT", "ADJP", "NN"]),
            (2, &["NP", "_COMMA_", "NP", "_COMMA_"]),
        ],
    ),
    (
        "VP",
        &[
            (18, &["VBD", "NP"]),
            (8, &["VBZ", "ADJP"]),
            (10, &["VBZ", "NP"]),
            (9, &["VB", "NP", "PP"]),
            (6, &["MD", "VP"]),
            (5, &["VBD", "SBAR"]),
            (8, &["VBN", "PP"]),
            (5, &["TO", "VP"]),
            (5, &["VBG", "NP"]),
            (4, &["VBD", "S"]),
            (4, &["VP", "CC", "VP"]),
        ],
    ),
    ("PP", &[(1, &["IN", "NP"])]),
    ("SBAR", &[(5, &["IN", "S"]), (4, &["WHNP", "S"])]),
    ("WHNP", &[(3, &["WDT"]), (2, &["WP"])]),
    ("ADJP", &[(5, &["JJ"]), (3, &["RB", "JJ"]), (1, &["JJ", "PP"])]),
    ("ADVP", &[(1, &["RB"])]),
];

/// Words of each part of speech (the UW file encrypts words; ours are readable).
const WORDS: &[(&str, &[&str])] = &[
    ("DT", &["the", "a", "an", "this", "that", "some", "no", "every"]),
    ("NN", &["market", "company", "year", "share", "price", "stock", "bank", "rate", "trade", "week"]),
    ("NNS", &["investors", "shares", "prices", "years", "analysts", "sales", "bonds", "funds"]),
    ("NNP", &["Mr.", "Corp.", "Inc.", "Friday", "Japan", "Smith", "Jones", "York", "Bush", "IBM"]),
    ("JJ", &["new", "last", "big", "federal", "other", "major", "financial", "high", "early"]),
    ("PRP", &["it", "he", "they", "we", "she", "I"]),
    ("CD", &["one", "two", "10", "1989", "million", "50", "100", "3.5"]),
    ("VBD", &["said", "rose", "fell", "was", "had", "reported", "agreed", "bought"]),
    ("VBZ", &["is", "has", "says", "expects", "remains", "owns"]),
    ("VB", &["be", "buy", "sell", "make", "pay", "take", "help"]),
    ("VBN", &["expected", "based", "made", "sold", "reported", "known"]),
    ("VBG", &["making", "selling", "including", "trading", "rising"]),
    ("MD", &["will", "would", "could", "may", "can", "should"]),
    ("TO", &["to"]),
    ("IN", &["of", "in", "for", "on", "that", "by", "with", "at", "from", "as"]),
    ("CC", &["and", "but", "or"]),
    ("RB", &["also", "not", "only", "still", "very", "now", "about"]),
    ("WDT", &["which", "that"]),
    ("WP", &["who", "what"]),
    ("_COMMA_", &[","]),
    ("_PERIOD_", &["."]),
    ("_NONE_", &["*T*-1", "*U*", "0", "*"]),
];

/// Writes a TreeBank-like document of `factor × SENTENCES_PER_FACTOR` sentences.
pub fn generate<W: Write>(factor: f64, seed: u64, out: W) -> Result<Stats> {
    let mut tree = Tree {
        rng: ChaCha8Rng::seed_from_u64(seed),
        out: std::io::BufWriter::with_capacity(1 << 20, out),
        stats: Stats::default(),
    };
    let sentences = (factor * SENTENCES_PER_FACTOR).round().max(1.0) as u64;
    tree.write("<?xml version=\"1.0\" standalone=\"yes\"?>\n<alltreebank>\n")?;
    tree.count("alltreebank", 1);
    for first in (0..sentences).step_by(SENTENCES_PER_FILE as usize) {
        tree.write("<FILE>\n")?;
        tree.count("FILE", 2);
        for _ in first..sentences.min(first + SENTENCES_PER_FILE) {
            tree.write("<EMPTY>")?;
            tree.count("EMPTY", 3);
            tree.category("S", 4)?;
            tree.write("</EMPTY>\n")?;
        }
        tree.write("</FILE>\n")?;
    }
    tree.write("</alltreebank>\n")?;
    tree.out.flush()?;
    Ok(tree.stats)
}

struct Tree<W: Write> {
    rng: ChaCha8Rng,
    out: std::io::BufWriter<W>,
    stats: Stats,
}

impl<W: Write> Tree<W> {
    fn write(&mut self, s: &str) -> Result<()> {
        self.stats.bytes += s.len() as u64;
        Ok(self.out.write_all(s.as_bytes())?)
    }

    fn count(&mut self, tag: &str, depth: u32) {
        self.stats.elements += 1;
        self.stats.max_depth = self.stats.max_depth.max(depth);
        *self.stats.per_tag.entry(tag.to_string()).or_default() += 1;
    }

    fn category(&mut self, tag: &str, depth: u32) -> Result<()> {
        self.count(tag, depth);
        self.write(&format!("<{tag}>"))?;
        if let Some((_, words)) = WORDS.iter().find(|(t, _)| *t == tag) {
            let word = words[self.rng.random_range(0..words.len())];
            self.write(word)?;
        } else {
            for child in self.expand(tag, depth) {
                self.category(child, depth + 1)?;
            }
        }
        self.write(&format!("</{tag}>"))
    }

    /// A right-hand side for `tag`; near the depth cap, only the first (flat) rule.
    fn expand(&mut self, tag: &str, depth: u32) -> &'static [&'static str] {
        let Some((_, rules)) = RULES.iter().find(|(t, _)| *t == tag) else { return &[] };
        if depth + 4 >= MAX_DEPTH {
            return rules[0].1;
        }
        let total: u32 = rules.iter().map(|(w, _)| w).sum();
        let mut x = self.rng.random_range(0..total);
        for (w, rhs) in rules.iter() {
            if x < *w {
                return rhs;
            }
            x -= w;
        }
        rules[0].1
    }
}
