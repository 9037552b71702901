//! XPath query sets (QuickXDB method) and their file format.
//!
//! File format, one file per set named `<collection>-<bucket>.qset`, bucket `100`, `10`
//! or `1` (selectivity ≤ 100 %, ≤ 10 %, ≤ 1 %), UTF-8 text:
//! ```text
//! # quiredb query set
//! # generator: quiredb-queryset 2
//! # collection: xmark_f1
//! # bucket: 10
//! # seed: 42
//! 1234<TAB>//site/regions//item[./location]/name
//! ```
//! Lines starting with `#` are comments (`key: value` comments for `generator`,
//! `collection`, `bucket`, `seed` are read back into the struct, others are kept as
//! they are); every other non-empty line is `<expected_count>\t<xpath>`, the count being
//! the reference evaluator's answer on the collection.
//!
//! Selectivity of a query is |result| / |all elements named like its last step| (for
//! `//a[./b]//c`: count(//a[./b]//c) div count(//c)), as in QuickXDB.
//!
//! Read next: `queryset/generate.rs` for how queries are drawn.

pub mod generate;
#[cfg(test)]
mod tests;

pub use generate::{GeneratorOptions, generate_sets};

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Version written in the `generator:` comment.
pub const GENERATOR_VERSION: &str = "quiredb-queryset 2";

/// Selectivity bucket of a set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Bucket {
    /// Selectivity ≤ 100 % (every query).
    All,
    /// Selectivity ≤ 10 %.
    Ten,
    /// Selectivity ≤ 1 %.
    One,
}

impl Bucket {
    /// The three buckets, widest first.
    pub const ALL: [Bucket; 3] = [Bucket::All, Bucket::Ten, Bucket::One];

    /// The bucket's bound in percent, as written in file names (`100`, `10`, `1`).
    pub fn percent(self) -> u32 {
        match self {
            Bucket::All => 100,
            Bucket::Ten => 10,
            Bucket::One => 1,
        }
    }

    /// The bucket written as `percent`.
    pub fn from_percent(percent: u32) -> Option<Bucket> {
        Bucket::ALL.into_iter().find(|b| b.percent() == percent)
    }

    /// Whether a selectivity (a fraction in [0, 1]) fits the bucket.
    pub fn admits(self, selectivity: f64) -> bool {
        selectivity <= f64::from(self.percent()) / 100.0
    }
}

/// A query set: queries with their expected result counts.
#[derive(Debug, Clone, PartialEq)]
pub struct QuerySet {
    pub collection: String,
    pub bucket: Bucket,
    pub seed: u64,
    pub generator: String,
    /// Other comment lines, without their `#`.
    pub comments: Vec<String>,
    /// (expected count, XPath query).
    pub queries: Vec<(usize, String)>,
}

impl QuerySet {
    /// The file name this set is saved under: `<collection>-<bucket>.qset`.
    pub fn file_name(&self) -> String {
        format!("{}-{}.qset", self.collection, self.bucket.percent())
    }

    /// The file's text.
    pub fn to_text(&self) -> String {
        let mut text = String::from("# quiredb query set\n");
        let _ = writeln!(text, "# generator: {}", self.generator);
        let _ = writeln!(text, "# collection: {}", self.collection);
        let _ = writeln!(text, "# bucket: {}", self.bucket.percent());
        let _ = writeln!(text, "# seed: {}", self.seed);
        for comment in &self.comments {
            let _ = writeln!(text, "#{comment}");
        }
        for (count, query) in &self.queries {
            let _ = writeln!(text, "{count}\t{query}");
        }
        text
    }

    /// Parses a file's text; `label` names it in errors.
    pub fn from_text(text: &str, label: &str) -> Result<QuerySet> {
        let bad = |line: usize, why: &str| Error::Profile(format!("{label}, line {line}: {why}"));
        let mut set = QuerySet {
            collection: String::new(),
            bucket: Bucket::All,
            seed: 0,
            generator: String::new(),
            comments: Vec::new(),
            queries: Vec::new(),
        };
        for (index, line) in text.lines().enumerate() {
            let number = index + 1;
            if let Some(comment) = line.strip_prefix('#') {
                set.read_comment(comment).map_err(|why| bad(number, &why))?;
            } else if !line.trim().is_empty() {
                let (count, query) =
                    line.split_once('\t').ok_or_else(|| bad(number, "expected `<count>\\t<xpath>`"))?;
                let count = count.trim().parse().map_err(|_| bad(number, "count is not a number"))?;
                set.queries.push((count, query.to_string()));
            }
        }
        Ok(set)
    }

    fn read_comment(&mut self, comment: &str) -> std::result::Result<(), String> {
        let Some((key, value)) = comment.trim().split_once(": ") else {
            if comment.trim() != "quiredb query set" {
                self.comments.push(comment.to_string());
            }
            return Ok(());
        };
        match key {
            "generator" => self.generator = value.to_string(),
            "collection" => self.collection = value.to_string(),
            "bucket" => {
                let percent = value.parse().map_err(|_| format!("bad bucket `{value}`"))?;
                self.bucket =
                    Bucket::from_percent(percent).ok_or_else(|| format!("bucket `{value}` is not 100, 10 or 1"))?;
            }
            "seed" => self.seed = value.parse().map_err(|_| format!("bad seed `{value}`"))?,
            _ => self.comments.push(comment.to_string()),
        }
        Ok(())
    }
}

/// Reads a `.qset` file.
pub fn read_qset(path: &Path) -> Result<QuerySet> {
    let text = std::fs::read_to_string(path)?;
    QuerySet::from_text(&text, &path.display().to_string())
}

/// Writes `set` into folder `dir` as `<collection>-<bucket>.qset`; returns the path.
pub fn write_qset(dir: &Path, set: &QuerySet) -> Result<PathBuf> {
    let path = dir.join(set.file_name());
    std::fs::write(&path, set.to_text())?;
    Ok(path)
}

#[cfg(test)]
mod format_tests {
    use super::*;

    #[test]
    fn query_sets_round_trip_through_files() {
        let set = QuerySet {
            collection: "xmark_f0.1".into(),
            bucket: Bucket::Ten,
            seed: 42,
            generator: GENERATOR_VERSION.into(),
            comments: vec![" selectivity = count(q) div count(//last-step)".into()],
            queries: vec![(3, "//a[b = \"x\ty\"]".into()), (0, "//c".into())],
        };
        let dir = tempfile::tempdir().expect("temp dir");
        let path = write_qset(dir.path(), &set).expect("write");
        assert!(path.ends_with("xmark_f0.1-10.qset"));
        assert_eq!(read_qset(&path).expect("read"), set);
    }

    #[test]
    fn malformed_lines_name_the_line() {
        let err = QuerySet::from_text("# bucket: 10\n12 //a\n", "x.qset").unwrap_err();
        assert!(err.to_string().contains("x.qset, line 2"), "{err}");
        let err = QuerySet::from_text("# bucket: 5\n", "x.qset").unwrap_err();
        assert!(err.to_string().contains("line 1"), "{err}");
    }
}
