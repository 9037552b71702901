//! Reader of XPath query-set files (T5), as written by the `quiredb-datasets`
//! generator: files named `<collection>-<bucket>.qset`; lines starting with `#` are
//! comments, blank lines are skipped, every other line is
//! `<expected_count>\t<xpath>`.

use crate::error::{BenchError, Result};
use std::path::{Path, PathBuf};

/// One query with the count it must return.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    pub expected: u64,
    pub xpath: String,
}

/// A query set read from one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuerySet {
    pub collection: String,
    pub bucket: String,
    pub path: PathBuf,
    pub queries: Vec<Query>,
}

/// Parses the text of a query-set file (`path` is used in error messages).
pub fn parse(path: &Path, text: &str) -> Result<Vec<Query>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let bad = |reason: &str| BenchError::Parse { path: path.into(), line: i + 1, reason: reason.into() };
        let (count, xpath) = line.split_once('\t').ok_or_else(|| bad("expected `<count>\\t<xpath>`"))?;
        let expected = count.trim().parse().map_err(|_| bad("the count is not a non-negative integer"))?;
        if xpath.trim().is_empty() {
            return Err(bad("empty XPath"));
        }
        out.push(Query { expected, xpath: xpath.trim().to_string() });
    }
    Ok(out)
}

/// Reads one `<collection>-<bucket>.qset` file.
pub fn read(path: &Path) -> Result<QuerySet> {
    let text = std::fs::read_to_string(path).map_err(|e| BenchError::io(path, e))?;
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
    let (collection, bucket) = stem.rsplit_once('-').ok_or_else(|| BenchError::Parse {
        path: path.into(),
        line: 0,
        reason: "file name is not `<collection>-<bucket>.qset`".into(),
    })?;
    Ok(QuerySet {
        collection: collection.into(),
        bucket: bucket.into(),
        path: path.into(),
        queries: parse(path, &text)?,
    })
}

/// Every `.qset` file of `dir`, sorted by name.
pub fn read_dir(dir: &Path) -> Result<Vec<QuerySet>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| BenchError::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "qset"))
        .collect();
    paths.sort();
    paths.iter().map(|p| read(p)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_counts_and_skips_comments() {
        // Proves comments and blank lines are skipped and tabs split count from path.
        let q = parse(Path::new("x.qset"), "# header\n\n3\t//a[./b]//c\n0\t/site/x\n").unwrap();
        assert_eq!(
            q,
            vec![Query { expected: 3, xpath: "//a[./b]//c".into() }, Query { expected: 0, xpath: "/site/x".into() },]
        );
    }

    #[test]
    fn bad_line_names_file_and_line() {
        // Proves a malformed line fails with its line number.
        let err = parse(Path::new("x.qset"), "# c\nfoo //a\n").unwrap_err().to_string();
        assert!(err.contains("x.qset:2"), "{err}");
    }

    #[test]
    fn file_name_gives_collection_and_bucket() {
        // Proves `<collection>-<bucket>.qset` is split at the last dash.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("xmark-f1-10.qset");
        std::fs::write(&path, "1\t/site\n").unwrap();
        let set = read(&path).unwrap();
        assert_eq!((set.collection.as_str(), set.bucket.as_str()), ("xmark-f1", "10"));
        assert_eq!(read_dir(dir.path()).unwrap().len(), 1);
    }
}
