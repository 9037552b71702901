//! Tests of the XML generators: calibration against the real XMark documents,
//! determinism for a seed, well-formedness and depth of every kind.
//!
//! Also holds the ignored `regenerate_profiles`, which rebuilds `profiles/*.json` from
//! `../shared/data/xml` (run: `cargo test -p quiredb-datasets --release
//! regenerate_profiles -- --ignored`).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::PathBuf;

use super::*;

fn data_file(name: &str) -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/xml").join(name);
    if path.exists() {
        Some(path)
    } else {
        println!("SKIP: {} absent (needs ../shared/data)", path.display());
        None
    }
}

/// Decompressed texts of a sample: the document, or the `.xml` members of a tarball.
pub(crate) fn sample_texts(name: &str) -> Option<Vec<String>> {
    let file = std::fs::File::open(data_file(name)?).expect("readable sample");
    let mut decoder = zstd::Decoder::new(file).expect("zstd stream");
    decoder.window_log_max(27).expect("window size");
    if !name.ends_with(".tar.zst") {
        let mut text = String::new();
        decoder.read_to_string(&mut text).expect("UTF-8 sample");
        return Some(vec![text]);
    }
    let mut members = BTreeMap::new();
    let mut archive = tar::Archive::new(decoder);
    for entry in archive.entries().expect("tar entries") {
        let mut entry = entry.expect("tar entry");
        let path = entry.path().expect("member path").into_owned();
        if path.extension().is_some_and(|e| e == "xml") {
            let mut text = String::new();
            entry.read_to_string(&mut text).expect("UTF-8 member");
            members.insert(path, text);
        }
    }
    Some(members.into_values().collect())
}

fn tag_counts(text: &str) -> (BTreeMap<String, u64>, u32) {
    let source = quiredb_xml::collection::Source::new("sample".into(), text.to_string());
    let doc = quiredb_xml::collection::parse_document(&source.text, &source.path).expect("XML");
    let mut counts = BTreeMap::new();
    let mut depth = 0;
    for node in doc.descendants().filter(|n| n.is_element()) {
        *counts.entry(node.tag_name().name().to_string()).or_default() += 1;
        depth = depth.max(node.ancestors().count() as u32 - 1);
    }
    (counts, depth)
}

fn worst_relative_error(want: &BTreeMap<String, u64>, got: &BTreeMap<String, u64>) -> (f64, String) {
    let mut worst = (0.0, String::new());
    for (tag, &w) in want {
        let g = got.get(tag).copied().unwrap_or(0);
        let error = (g as f64 - w as f64).abs() / w as f64;
        if error > worst.0 {
            worst = (error, format!("{tag}: want {w}, got {g}"));
        }
    }
    assert_eq!(want.len(), got.len(), "same tags");
    worst
}

#[test]
fn xmark_factor_1_matches_real_f1_element_counts_per_tag_and_depth() {
    // The profile records the real xmark_f1 counts per state (learned from the file).
    let profile = Kind::Xmark.profile().expect("profile").expect("xmark is profiled");
    let mut want = BTreeMap::new();
    for state in &profile.states {
        *want.entry(state.tag.clone()).or_default() += state.count;
    }
    assert_eq!(want.values().sum::<u64>(), 1_666_315, "profile holds xmark_f1's elements");
    let stats = generate(Kind::Xmark, 1.0, 7, std::io::sink()).expect("generate");
    let (error, worst) = worst_relative_error(&want, &stats.per_tag);
    println!("xmark f1: {} elements, {} bytes, worst tag {worst}", stats.elements, stats.bytes);
    assert!(error <= 0.02, "worst tag off by {:.2}%: {worst}", error * 100.0);
    assert_eq!(stats.max_depth, 12);
}

#[test]
fn xmark_factor_0_1_tracks_the_real_f0_1_document() {
    let Some(texts) = sample_texts("xmark_f0.1.xml.zst") else { return };
    let (want, depth) = tag_counts(&texts[0]);
    let mut generated = Vec::new();
    let stats = generate(Kind::Xmark, 0.1, 11, &mut generated).expect("generate");
    let text = String::from_utf8(generated).expect("UTF-8 output");
    let (got, got_depth) = tag_counts(&text);
    assert_eq!(got, stats.per_tag, "statistics count what was written");
    // xmlgen's own f0.1 strays from its f1 proportions (education: 603 where f1's
    // ratio gives 654), so allow 2% or four binomial standard deviations.
    for (tag, &w) in &want {
        let g = got.get(tag).copied().unwrap_or(0);
        let allowed = (0.02 * w as f64).max(4.0 * (w as f64).sqrt());
        assert!((g as f64 - w as f64).abs() <= allowed, "{tag}: want {w}, got {g}");
    }
    let (error, worst) = worst_relative_error(&want, &got);
    println!("xmark f0.1: worst tag {worst} ({:.2}%)", error * 100.0);
    assert_eq!(got_depth, depth);
}

#[test]
fn every_kind_is_well_formed_deterministic_and_seed_dependent() {
    for kind in Kind::ALL {
        let run = |seed| {
            let mut out = Vec::new();
            let stats = generate(kind, 0.002, seed, &mut out).expect("generate");
            (out, stats)
        };
        let (a, stats) = run(1);
        let (b, _) = run(1);
        let (c, _) = run(2);
        assert!(a == b, "{kind:?}: same seed, same bytes");
        assert!(a != c, "{kind:?}: another seed, other bytes");
        assert_eq!(stats.bytes, a.len() as u64);
        let text = String::from_utf8(a).expect("UTF-8");
        let (counts, depth) = tag_counts(&text);
        assert_eq!(counts, stats.per_tag, "{kind:?}");
        assert_eq!(depth, stats.max_depth, "{kind:?}");
        assert!(stats.elements > 100, "{kind:?}: {}", stats.elements);
    }
}

#[test]
fn treebank_is_deep_and_capped() {
    let stats = generate(Kind::Treebank, 0.01, 3, std::io::sink()).expect("generate");
    assert!((20..=36).contains(&stats.max_depth), "depth {}", stats.max_depth);
}

#[test]
fn bad_factors_and_kinds_are_errors() {
    for factor in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(generate(Kind::Dblp, factor, 1, std::io::sink()).is_err(), "{factor}");
    }
    assert!("xmarks".parse::<Kind>().is_err());
    assert_eq!("swissprot".parse::<Kind>().expect("kind"), Kind::Swissprot);
}

/// Rebuilds the committed profiles from the real samples (see the module docs).
#[test]
#[ignore = "rewrites src/xml/profiles from ../shared/data; run by hand"]
fn regenerate_profiles() {
    const FACTOR_1_BYTES: f64 = 116_524_435.0;
    for (kind, sample) in [
        (Kind::Xmark, "xmark_f1.xml.zst"),
        (Kind::Dblp, "dblp_sample.tar.zst"),
        (Kind::Swissprot, "swissprot_uniprot_samples.tar.zst"),
    ] {
        let texts = sample_texts(sample).expect("the samples are needed to calibrate");
        let sources: Vec<_> =
            texts.into_iter().map(|t| quiredb_xml::collection::Source::new(sample.into(), t)).collect();
        let docs = quiredb_xml::collection::parse_all(&sources).expect("well-formed samples");
        let bytes: u64 = sources.iter().map(|s| s.text.len() as u64).sum();
        let scale = if kind == Kind::Xmark { 1.0 } else { FACTOR_1_BYTES / bytes as f64 };
        let profile = learn::learn(sample, &docs, bytes, scale);
        let json = serde_json::to_string(&profile).expect("serializable");
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("src/xml/profiles/{}.json", kind.name()));
        std::fs::write(&path, json).expect("write profile");
        println!("{}: {} states, {} bytes", path.display(), profile.states.len(), bytes);
    }
}
