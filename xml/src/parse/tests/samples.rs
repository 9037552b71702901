//! The real samples in `../shared/data/xml`: every document's events equal roxmltree's
//! DOM (SKIP printed when the data folder is absent), and, ignored by default, the
//! throughput on XMark in release mode.
//!
//! Run the throughput probe with:
//! `cargo test --release -p quiredb-xml parse::tests::samples::throughput -- --ignored --nocapture`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::{oracle, ours};

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/xml")
}

/// The `.xml` documents of a sample as raw bytes, in name order; `None` (after a SKIP
/// line) when the data folder is absent.
pub(crate) fn documents(name: &str) -> Option<Vec<(PathBuf, Vec<u8>)>> {
    let path = data_dir().join(name);
    if !path.exists() {
        println!("SKIP: {} absent (needs ../shared/data)", path.display());
        return None;
    }
    let mut decoder = zstd::Decoder::new(std::fs::File::open(&path).expect("readable sample")).expect("zstd");
    decoder.window_log_max(27).expect("window size");
    if !name.ends_with(".tar.zst") {
        let mut bytes = Vec::new();
        decoder.read_to_end(&mut bytes).expect("decompresses");
        return Some(vec![(path, bytes)]);
    }
    let mut out = Vec::new();
    for entry in tar::Archive::new(decoder).entries().expect("tar entries") {
        let mut entry = entry.expect("tar entry");
        let member = entry.path().expect("member path").into_owned();
        if member.extension().is_some_and(|e| e == "xml") {
            let mut bytes = Vec::new();
            entry.read_to_end(&mut bytes).expect("tar member");
            out.push((member, bytes));
        }
    }
    out.sort();
    Some(out)
}

fn sample_matches_roxmltree(name: &str) {
    let Some(documents) = documents(name) else { return };
    for (path, bytes) in &documents {
        let expected = oracle(bytes).unwrap_or_else(|e| panic!("roxmltree: {}: {e}", path.display()));
        let lines = ours(bytes).unwrap_or_else(|e| panic!("ours: {}: {e}", path.display()));
        assert!(lines == expected, "{}: outlines differ", path.display());
    }
    println!("{name}: {} documents equal", documents.len());
}

#[test]
fn xmark_equals_roxmltree() {
    sample_matches_roxmltree("xmark_f0.1.xml.zst");
}

#[test]
fn dblp_equals_roxmltree() {
    sample_matches_roxmltree("dblp_sample.tar.zst");
}

#[test]
fn shakespeare_equals_roxmltree() {
    sample_matches_roxmltree("shakespeare_bosak.tar.zst");
}

#[test]
fn swissprot_equals_roxmltree() {
    sample_matches_roxmltree("swissprot_uniprot_samples.tar.zst");
}

#[test]
#[ignore = "100 MB: run in release mode"]
fn xmark_f1_equals_roxmltree() {
    sample_matches_roxmltree("xmark_f1.xml.zst");
}

/// Counts events, so the probe measures the parser alone.
struct Count(u64);

impl super::Sink for Count {
    fn event(&mut self, _: super::Event<'_>) -> crate::Result<()> {
        self.0 += 1;
        Ok(())
    }
}

#[test]
#[ignore = "a throughput probe: run in release mode"]
fn throughput() {
    for name in ["xmark_f0.1.xml.zst", "xmark_f1.xml.zst"] {
        let Some(documents) = documents(name) else { return };
        let bytes = &documents[0].1;
        let mut best = f64::MAX;
        let mut events = 0;
        for _ in 0..3 {
            let started = Instant::now();
            let mut count = Count(0);
            super::parse(&bytes[..], Path::new(name), &mut count).expect("parses");
            best = best.min(started.elapsed().as_secs_f64());
            events = count.0;
        }
        let mb_per_s = bytes.len() as f64 / 1e6 / best;
        println!("{name}: {} bytes, {events} events, {mb_per_s:.0} MB/s (best of 3)", bytes.len());
    }
}
