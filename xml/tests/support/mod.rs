//! Helpers of the xml integration tests: sample loading, an independent tag scanner,
//! a BaseX runner, a seeded random query generator.
//!
//! The tag scanner is deliberately not a DOM: it walks `<…>` tags with a stack, so it
//! shares no code and no idea with the reference evaluator it checks.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::PathBuf;
use std::process::Command;

use quiredb_test_support::Rng;
use quiredb_xml::collection::Source;

pub const BASEX_JAR: &str = "/usr/share/java/basex.jar";

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/xml")
}

/// Decompresses a sample into sources (tar members ending in `.xml`, in name order);
/// `None` after printing a SKIP line when the data folder is absent.
pub fn load_sample(name: &str) -> Option<Vec<Source>> {
    let path = data_dir().join(name);
    if !path.exists() {
        println!("SKIP: {} absent (needs ../shared/data)", path.display());
        return None;
    }
    let file = std::fs::File::open(&path).expect("readable sample");
    let mut decoder = zstd::Decoder::new(file).expect("zstd stream");
    decoder.window_log_max(27).expect("window size");
    if !name.ends_with(".tar.zst") {
        let mut text = String::new();
        decoder.read_to_string(&mut text).expect("UTF-8 sample");
        return Some(vec![Source::new(path, text)]);
    }
    let mut sources = Vec::new();
    let mut archive = tar::Archive::new(decoder);
    for entry in archive.entries().expect("tar entries") {
        let mut entry = entry.expect("tar entry");
        let member = entry.path().expect("member path").into_owned();
        if member.extension().is_some_and(|e| e == "xml") {
            let mut text = String::new();
            entry.read_to_string(&mut text).expect("UTF-8 member");
            sources.push(Source::new(member, text));
        }
    }
    sources.sort_by(|a, b| a.path.cmp(&b.path));
    Some(sources)
}

/// Counts per query string, found by the tag scanner.
#[derive(Default)]
pub struct TagCounts {
    /// `/a/b/c` → elements at that root path.
    pub full_paths: BTreeMap<String, usize>,
    /// `//t` → elements named t.
    pub tags: BTreeMap<String, usize>,
    /// `//p/c` → elements c with parent p.
    pub pairs: BTreeMap<String, usize>,
    /// `//t/@a` → attributes a on elements t.
    pub attributes: BTreeMap<String, usize>,
}

/// Scans one document's tags (comments, PIs, CDATA and the DOCTYPE skipped).
pub fn scan_tags(text: &str, counts: &mut TagCounts) {
    let mut stack: Vec<String> = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        rest = &rest[open..];
        let skip_to = |end: &str| rest.find(end).map_or(rest.len(), |i| i + end.len());
        if rest.starts_with("<!--") {
            rest = &rest[skip_to("-->")..];
        } else if rest.starts_with("<?") {
            rest = &rest[skip_to("?>")..];
        } else if rest.starts_with("<![CDATA[") {
            rest = &rest[skip_to("]]>")..];
        } else if rest.starts_with("<!") {
            rest = &rest[skip_to(">")..];
        } else if rest.starts_with("</") {
            stack.pop();
            rest = &rest[skip_to(">")..];
        } else {
            let end = tag_end(rest);
            let tag = &rest[1..end];
            let self_closing = tag.ends_with('/');
            let body = tag.trim_end_matches('/');
            let name_len = body.find(|c: char| c.is_whitespace()).unwrap_or(body.len());
            let name = body[..name_len].to_string();
            record(counts, &stack, &name, &body[name_len..]);
            if !self_closing {
                stack.push(name);
            }
            rest = &rest[end + 1..];
        }
    }
}

/// Index of the `>` closing the tag at the start of `s` (quotes respected).
fn tag_end(s: &str) -> usize {
    let mut quote = None;
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, '>') => return i,
            _ => {}
        }
    }
    s.len() - 1
}

fn record(counts: &mut TagCounts, stack: &[String], name: &str, attributes: &str) {
    let plain = |n: &str| !n.contains(':');
    if !plain(name) || !stack.iter().all(|n| plain(n)) {
        return;
    }
    let full = format!("/{}", stack.iter().chain([&name.to_string()]).cloned().collect::<Vec<_>>().join("/"));
    *counts.full_paths.entry(full).or_default() += 1;
    *counts.tags.entry(format!("//{name}")).or_default() += 1;
    if let Some(parent) = stack.last() {
        *counts.pairs.entry(format!("//{parent}/{name}")).or_default() += 1;
    }
    for attr in attribute_names(attributes) {
        if plain(attr) && attr != "xmlns" {
            *counts.attributes.entry(format!("//{name}/@{attr}")).or_default() += 1;
        }
    }
}

/// Names of `name="value"` pairs, values skipped by their quotes.
fn attribute_names(mut s: &str) -> Vec<&str> {
    let mut names = Vec::new();
    while let Some(eq) = s.find('=') {
        names.push(s[..eq].trim());
        s = s[eq + 1..].trim_start();
        let Some(quote) = s.chars().next() else { break };
        s = &s[1..];
        s = s.find(quote).map_or("", |close| &s[close + 1..]);
    }
    names
}

/// Counts BaseX gives for `queries` on one document, whitespace preserved (`-w`).
pub fn basex_counts(source: &Source, prolog: &str, queries: &[String]) -> Vec<usize> {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("doc.xml");
    std::fs::write(&file, &source.text).expect("write temp doc");
    let counts: Vec<String> = queries.iter().map(|q| format!("count({q})")).collect();
    let xquery = format!("{prolog}string-join(({})!string(), '&#10;')", counts.join(","));
    let output = Command::new("java")
        .args(["-cp", BASEX_JAR, "org.basex.BaseX", "-w", "-i"])
        .arg(&file)
        .arg(xquery)
        .output()
        .expect("java runs");
    assert!(output.status.success(), "BaseX: {}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stdout).expect("UTF-8 output");
    let values: Vec<usize> = text.lines().map(|l| l.trim().parse().expect("a count per line")).collect();
    assert_eq!(values.len(), queries.len(), "one count per query");
    values
}

/// A random query of the subset (the grammar of `parser.rs`, depth-bounded).
pub fn random_query(rng: &mut Rng, depth: usize) -> String {
    let mut q = String::new();
    let paths = 1 + usize::from(depth == 0 && rng.index(4) == 0);
    for i in 0..paths {
        if i > 0 {
            q.push_str(" | ");
        }
        q.push_str(["/", "//", ""][rng.index(3)]);
        q.push_str(&random_steps(rng, depth));
    }
    q
}

fn random_steps(rng: &mut Rng, depth: usize) -> String {
    let mut s = String::new();
    for i in 0..1 + rng.index(4) {
        if i > 0 {
            s.push_str(["/", "//"][rng.index(2)]);
        }
        let tests = ["a", "item", "x-y", "é", "*", "@id", "@*", "text()", "node()", "."];
        let test = tests[rng.index(tests.len())];
        s.push_str(test);
        if test != "." && depth < 2 && rng.index(3) == 0 {
            s.push_str(&format!("[{}]", random_predicate(rng, depth + 1)));
        }
    }
    s
}

fn random_predicate(rng: &mut Rng, depth: usize) -> String {
    let relative = |rng: &mut Rng| random_steps(rng, depth);
    match rng.index(6) {
        0 => format!("{} and {}", relative(rng), relative(rng)),
        1 => format!("({} or {}) and not({})", relative(rng), relative(rng), relative(rng)),
        2 => format!("{} = 'o\"k'", relative(rng)),
        3 => format!("{} >= -1.5", relative(rng)),
        4 => format!("10 != {}", relative(rng)),
        _ => relative(rng),
    }
}
