//! Tests of query-set generation on generated and real collections: every query is
//! non-empty, distinct, round-trips through the parser, carries the reference count,
//! and (when BaseX is installed) BaseX counts the same.

use std::path::Path;
use std::process::Command;

use super::*;
use crate::xml::{Kind, generate};
use quiredb_xml::{collection, reference, xpath};

const BASEX_JAR: &str = "/usr/share/java/basex.jar";

/// Counts BaseX gives for `queries` on the XML file `file`, whitespace preserved (`-w`).
fn basex_counts(file: &Path, queries: &[&str]) -> Vec<usize> {
    let counts: Vec<String> = queries.iter().map(|q| format!("count({q})")).collect();
    let xquery = format!("string-join(({})!string(), '&#10;')", counts.join(","));
    let output = Command::new("java")
        .args(["-cp", BASEX_JAR, "org.basex.BaseX", "-w", "-i"])
        .arg(file)
        .arg(xquery)
        .output()
        .expect("java runs");
    assert!(output.status.success(), "BaseX: {}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stdout).expect("UTF-8 output");
    text.lines().map(|l| l.trim().parse().expect("a count per line")).collect()
}

fn check_sets(sets: &[QuerySet], docs: &[roxmltree::Document<'_>]) -> Vec<(usize, String)> {
    let mut all = Vec::new();
    for set in sets {
        for (count, q) in &set.queries {
            let query = xpath::parse(q).unwrap_or_else(|e| panic!("{q}: {e}"));
            let printed = query.to_string();
            assert_eq!(xpath::parse(&printed).expect("reparses").to_string(), printed, "{q}");
            assert_eq!(reference::count(&query, docs), *count, "{q}");
            assert!(*count > 0, "{q}");
            all.push((*count, q.clone()));
        }
    }
    let mut distinct: Vec<_> = all.iter().map(|(_, q)| q).collect();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), all.len(), "queries are distinct across sets");
    all
}

#[test]
fn xmark_sets_fill_round_trip_and_agree_with_basex_when_installed() {
    let seed = 5;
    println!("seed {seed}");
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("xmark.xml");
    let out = std::fs::File::create(&file).expect("create");
    generate(Kind::Xmark, 0.002, seed, out).expect("generate");
    let sources = collection::load(&file).expect("load");
    let docs = collection::parse_all(&sources).expect("well-formed");
    let options = GeneratorOptions { seed, per_set: 12, max_attempts: 3000, avoid_basex_bug: true };
    let sets = generate_sets("xmark", &docs, &options).expect("sets");
    for set in &sets {
        assert_eq!(set.queries.len(), 12, "bucket {} fills", set.bucket.percent());
        let path = write_qset(dir.path(), set).expect("write");
        assert_eq!(&read_qset(&path).expect("read"), set);
    }
    let all = check_sets(&sets, &docs);
    if !Path::new(BASEX_JAR).exists() {
        println!("SKIP BaseX comparison: {BASEX_JAR} absent");
        return;
    }
    let queries: Vec<&str> = all.iter().map(|(_, q)| q.as_str()).collect();
    let theirs = basex_counts(&file, &queries);
    let ours: Vec<usize> = all.iter().map(|(c, _)| *c).collect();
    assert_eq!(ours, theirs, "BaseX counts equal the reference counts");
}

#[test]
fn every_generated_kind_yields_query_sets() {
    for kind in [Kind::Dblp, Kind::Swissprot, Kind::Treebank] {
        let mut text = Vec::new();
        generate(kind, 0.001, 1, &mut text).expect("generate");
        let text = String::from_utf8(text).expect("UTF-8");
        let doc = roxmltree::Document::parse(&text).expect("well-formed");
        let docs = [doc];
        let options = GeneratorOptions { seed: 1, per_set: 5, max_attempts: 1500, avoid_basex_bug: true };
        let sets = generate_sets(kind.name(), &docs, &options).expect("sets");
        let all = check_sets(&sets, &docs);
        println!("{}: {} queries", kind.name(), all.len());
        assert!(sets[0].queries.len() == 5, "{}: the 100 % set fills", kind.name());
    }
}
