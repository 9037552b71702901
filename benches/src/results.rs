//! Measurements of one workload run: the collector that gathers samples per
//! (engine, op) over repeats, the JSON-lines record appended to
//! `results/<date>-<workload>.jsonl`, and the plain-text table printed per workload.
//! Read next: report/ turns these records into Markdown and SVG.

use crate::context::Machine;
use crate::error::{BenchError, Result};
use crate::measure::{Sample, Summary};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// The unit of a reported value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unit {
    #[serde(rename = "ms/op")]
    MsPerOp,
    #[serde(rename = "ops/s")]
    OpsPerSec,
    #[serde(rename = "s")]
    Seconds,
    #[serde(rename = "bytes")]
    Bytes,
    /// Allocator calls per operation (T8); the sample's seconds fields carry the count.
    #[serde(rename = "allocs/op")]
    AllocsPerOp,
    /// Bytes allocated per operation (T8); the sample's seconds fields carry the bytes.
    #[serde(rename = "B/op")]
    BytesPerOp,
    /// Pages per operation (T4: pages requested from, or read into, the buffer pool);
    /// the sample's seconds fields carry the count.
    #[serde(rename = "pages/op")]
    PagesPerOp,
}

impl Unit {
    /// The value of a sample in this unit, from wall or CPU seconds.
    pub fn value(self, seconds: f64, n: u64) -> f64 {
        match self {
            Unit::MsPerOp => seconds * 1e3 / n.max(1) as f64,
            Unit::OpsPerSec => n as f64 / seconds.max(1e-12),
            Unit::Seconds | Unit::Bytes => seconds,
            Unit::AllocsPerOp | Unit::BytesPerOp | Unit::PagesPerOp => seconds / n.max(1) as f64,
        }
    }

    /// True when the value comes from a clock (false for sizes and counts).
    pub fn is_timed(self) -> bool {
        matches!(self, Unit::MsPerOp | Unit::OpsPerSec | Unit::Seconds)
    }

    /// True when a bigger value is better.
    pub fn higher_is_better(self) -> bool {
        self == Unit::OpsPerSec
    }

    /// The unit as written in JSON.
    pub fn label(self) -> &'static str {
        match self {
            Unit::MsPerOp => "ms/op",
            Unit::OpsPerSec => "ops/s",
            Unit::Seconds => "s",
            Unit::Bytes => "bytes",
            Unit::AllocsPerOp => "allocs/op",
            Unit::BytesPerOp => "B/op",
            Unit::PagesPerOp => "pages/op",
        }
    }
}

/// What a record says about where it was measured.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RecordContext {
    #[serde(flatten)]
    pub machine: Machine,
    pub dataset: String,
    pub seed: u64,
    pub settings: String,
}

/// One JSON line: the summary of one (engine, op) over all repeats.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Record {
    pub workload: String,
    pub engine: String,
    pub op: String,
    pub unit: Unit,
    /// Median over repeats, from wall time.
    pub value: f64,
    pub min: f64,
    pub max: f64,
    /// The same figure computed from process CPU time (median).
    pub cpu_value: f64,
    /// Median CPU seconds of one repeat of the op.
    pub cpu_s: f64,
    /// Median wall seconds of one repeat of the op.
    pub wall_s: f64,
    /// Operations per repeat.
    pub n: u64,
    pub repeats: usize,
    /// Run identifier shared by every record of one invocation.
    pub run: String,
    /// Free text, e.g. why this engine ran at a reduced size.
    #[serde(default)]
    pub note: String,
    pub context: RecordContext,
}

#[derive(Debug, Default)]
struct Series {
    unit: Option<Unit>,
    samples: Vec<Sample>,
}

/// Gathers the samples of one workload run, in engine and op insertion order.
#[derive(Debug, Default)]
pub struct Collector {
    series: BTreeMap<(usize, usize), Series>,
    engines: Vec<String>,
    ops: Vec<String>,
    settings: BTreeMap<String, String>,
    notes: BTreeMap<String, String>,
}

fn index_of(list: &mut Vec<String>, name: &str) -> usize {
    list.iter().position(|x| x == name).unwrap_or_else(|| {
        list.push(name.to_string());
        list.len() - 1
    })
}

impl Collector {
    /// Adds one timed sample of `op` by `engine`.
    pub fn add(&mut self, engine: &str, op: &str, unit: Unit, sample: Sample) {
        let key = (index_of(&mut self.engines, engine), index_of(&mut self.ops, op));
        let series = self.series.entry(key).or_default();
        assert!(series.unit.is_none_or(|u| u == unit), "op {op} of {engine} measured in two units");
        series.unit = Some(unit);
        series.samples.push(sample);
    }

    /// Adds a size in bytes (no timing).
    pub fn add_bytes(&mut self, engine: &str, op: &str, bytes: u64) {
        let sample = Sample { wall_s: bytes as f64, cpu_s: bytes as f64, n: 1 };
        self.add(engine, op, Unit::Bytes, sample);
    }

    /// Records the settings string of an engine (durability, cache, parameters).
    pub fn set_settings(&mut self, engine: &str, settings: &str) {
        self.settings.insert(engine.into(), settings.into());
    }

    /// Attaches a note to an engine (e.g. a reduced size).
    pub fn set_note(&mut self, engine: &str, note: &str) {
        self.notes.insert(engine.into(), note.into());
    }

    /// Appends `note` to the note of every engine measured so far.
    pub fn note_all(&mut self, note: &str) {
        for engine in &self.engines {
            let entry = self.notes.entry(engine.clone()).or_default();
            if !entry.is_empty() {
                entry.push_str("; ");
            }
            entry.push_str(note);
        }
    }

    /// The records of this run, one per (engine, op).
    pub fn records(&self, workload: &str, run: &str, base: &RecordContext) -> Vec<Record> {
        let mut out = Vec::new();
        for (&(e, o), series) in &self.series {
            let unit = series.unit.expect("a series exists only after a sample");
            let engine = &self.engines[e];
            let walls: Vec<f64> = series.samples.iter().map(|s| unit.value(s.wall_s, s.n)).collect();
            let cpus: Vec<f64> = series.samples.iter().map(|s| s.cpu_s).collect();
            // Per repeat, like the wall figure: a repeat's op count may differ from the
            // others' (T4 times as many passes of a query set as fit its minimum time).
            let cpu_values: Vec<f64> = series.samples.iter().map(|s| unit.value(s.cpu_s, s.n)).collect();
            let wall_s = Summary::of(&series.samples.iter().map(|s| s.wall_s).collect::<Vec<_>>());
            let summary = Summary::of(&walls);
            let cpu = Summary::of(&cpus);
            let n = series.samples[0].n;
            let mut context = base.clone();
            context.settings = self.settings.get(engine).cloned().unwrap_or_default();
            out.push(Record {
                workload: workload.into(),
                engine: engine.clone(),
                op: self.ops[o].clone(),
                unit,
                value: summary.median,
                min: summary.min,
                max: summary.max,
                cpu_value: if unit.is_timed() { Summary::of(&cpu_values).median } else { unit.value(cpu.median, n) },
                cpu_s: if unit.is_timed() { cpu.median } else { 0.0 },
                wall_s: if unit.is_timed() { wall_s.median } else { 0.0 },
                n,
                repeats: series.samples.len(),
                run: run.into(),
                note: self.notes.get(engine).cloned().unwrap_or_default(),
                context,
            });
        }
        out.sort_by_key(|r| {
            (self.ops.iter().position(|o| *o == r.op), self.engines.iter().position(|e| *e == r.engine))
        });
        out
    }
}

/// Appends records as JSON lines to `path`, creating parent directories.
pub fn append_jsonl(path: &Path, records: &[Record]) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| BenchError::io(dir, e))?;
    }
    let mut file =
        std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(|e| BenchError::io(path, e))?;
    let mut text = String::new();
    for r in records {
        text.push_str(&serde_json::to_string(r).expect("a record always serialises"));
        text.push('\n');
    }
    file.write_all(text.as_bytes()).map_err(|e| BenchError::io(path, e))
}

/// Formats a value compactly for tables.
pub fn format_value(value: f64, unit: Unit) -> String {
    match unit {
        Unit::Bytes if value >= 1e6 => format!("{:.1} MB", value / 1e6),
        Unit::Bytes => format!("{value:.0} B"),
        Unit::OpsPerSec if value >= 1e6 => format!("{:.2} M", value / 1e6),
        Unit::OpsPerSec if value >= 1e3 => format!("{:.1} k", value / 1e3),
        _ if value >= 100.0 => format!("{value:.0}"),
        _ if value >= 1.0 => format!("{value:.2}"),
        _ => format!("{value:.4}"),
    }
}

/// QuireDB's value over the best peer's, oriented so that > 1 means QuireDB is better
/// (two zeros compare equal; a zero cost against a non-zero one is infinitely better).
pub fn advantage(quiredb: f64, best_peer: f64, unit: Unit) -> f64 {
    let (better, worse) = if unit.higher_is_better() { (quiredb, best_peer) } else { (best_peer, quiredb) };
    if better == worse { 1.0 } else { better / worse }
}

/// A ratio as printed: `1.23x`, or `∞` for a zero cost against a non-zero one.
pub fn format_ratio(ratio: f64) -> String {
    if ratio.is_infinite() { "∞".into() } else { format!("{ratio:.2}x") }
}

/// True for a peer engine; false for QuireDB and its variants (`quiredb-full`, …),
/// which are never "the best peer".
pub fn is_peer(engine: &str) -> bool {
    !engine.starts_with("quiredb")
}

/// The engines `quiredb` is compared with: the peers, or — in a workload without
/// peers (T8) — QuireDB's variants.
pub fn rivals<'a>(engines: &[&'a str]) -> Vec<&'a str> {
    let peers: Vec<&str> = engines.iter().copied().filter(|e| is_peer(e)).collect();
    if peers.is_empty() { engines.iter().copied().filter(|e| *e != "quiredb").collect() } else { peers }
}

/// The best value of a list in this unit, with its index.
pub fn best(values: &[f64], unit: Unit) -> Option<(usize, f64)> {
    let cmp = |a: &&f64, b: &&f64| a.total_cmp(b);
    let it = values.iter().enumerate();
    let found =
        if unit.higher_is_better() { it.max_by(|a, b| cmp(&a.1, &b.1)) } else { it.min_by(|a, b| cmp(&a.1, &b.1)) };
    found.map(|(i, v)| (i, *v))
}

/// A plain-text table: ops as rows, engines as columns, a ratio column when `quiredb`
/// is present (QuireDB's advantage over the best peer — QuireDB's own variants such as
/// `quiredb-full` are not peers — > 1 = QuireDB better).
pub fn table(records: &[Record]) -> String {
    let mut engines: Vec<&str> = Vec::new();
    let mut ops: Vec<(&str, Unit)> = Vec::new();
    for r in records {
        if !engines.contains(&r.engine.as_str()) {
            engines.push(&r.engine);
        }
        if !ops.iter().any(|(o, _)| *o == r.op) {
            ops.push((&r.op, r.unit));
        }
    }
    let has_quire = engines.contains(&"quiredb");
    let mut rows = vec![{
        let mut h = vec!["op".to_string(), "unit".to_string()];
        h.extend(engines.iter().map(|e| e.to_string()));
        if has_quire {
            h.push("quiredb vs best peer".into());
        }
        h
    }];
    let rivals = rivals(&engines);
    for (op, unit) in &ops {
        let mut row = vec![op.to_string(), unit.label().to_string()];
        let mut peers = Vec::new();
        let mut quire = None;
        for e in &engines {
            let r = records.iter().find(|r| r.op == *op && r.engine == *e);
            row.push(r.map_or("-".into(), |r| format_value(r.value, *unit)));
            match r {
                Some(r) if *e == "quiredb" => quire = Some(r.value),
                Some(r) if rivals.contains(e) => peers.push(r.value),
                _ => {}
            }
        }
        if has_quire {
            let ratio = quire.zip(best(&peers, *unit)).map(|(q, (_, b))| advantage(q, b, *unit));
            row.push(ratio.map_or("-".into(), format_ratio));
        }
        rows.push(row);
    }
    render(&rows)
}

fn render(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width: Vec<usize> =
        (0..cols).map(|c| rows.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for row in rows {
        for (c, cell) in row.iter().enumerate() {
            out.push_str(&format!("{:<w$}  ", cell, w = width[c]));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context() -> RecordContext {
        RecordContext {
            machine: Machine {
                commit: "abc".into(),
                cpu: "cpu".into(),
                cores: 2,
                mem: "1 kB".into(),
                kernel: "6".into(),
                date: "2026-11-29T00:00:00Z".into(),
            },
            dataset: "d".into(),
            seed: 7,
            settings: String::new(),
        }
    }

    fn collector() -> Collector {
        let mut c = Collector::default();
        for (engine, wall) in [("quiredb", 1.0), ("redb", 2.0), ("lmdb", 4.0)] {
            for extra in [0.0, 0.5, 1.0] {
                c.add(engine, "insert", Unit::OpsPerSec, Sample { wall_s: wall + extra, cpu_s: wall, n: 100 });
            }
            c.set_settings(engine, "durable");
        }
        c
    }

    #[test]
    fn json_line_has_the_documented_fields() {
        // Proves every key of the documented JSON line is present with the right types.
        let records = collector().records("T2", "run1", &context());
        let line = serde_json::to_string(&records[0]).unwrap();
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        for key in ["workload", "engine", "op", "unit", "value", "cpu_s", "n", "context"] {
            assert!(v.get(key).is_some(), "missing {key} in {line}");
        }
        assert_eq!(v["unit"], "ops/s");
        assert_eq!(v["workload"], "T2");
        for key in ["commit", "cpu", "cores", "mem", "kernel", "date", "dataset", "seed", "settings"] {
            assert!(v["context"].get(key).is_some(), "missing context.{key} in {line}");
        }
        assert_eq!(v["context"]["settings"], "durable");
    }

    #[test]
    fn median_and_extremes_over_repeats() {
        // Proves the value is the median of the repeats and min/max bracket it (ops/s).
        let records = collector().records("T2", "run1", &context());
        let redb = records.iter().find(|r| r.engine == "redb").unwrap();
        assert_eq!((redb.value, redb.min, redb.max), (100.0 / 2.5, 100.0 / 3.0, 100.0 / 2.0));
        assert_eq!(redb.repeats, 3);
        assert_eq!(redb.cpu_value, 50.0);
    }

    #[test]
    fn cpu_figure_is_the_median_of_each_repeats_own_rate() {
        // Proves repeats of different op counts (T4's timed passes) each give their own
        // CPU rate, and the figure is the median of those rates.
        let mut c = Collector::default();
        for (n, cpu_s) in [(10, 1.0), (600, 2.0), (50, 1.0)] {
            c.add("quiredb", "kNN", Unit::OpsPerSec, Sample { wall_s: cpu_s * 2.0, cpu_s, n });
        }
        let records = c.records("T4", "run1", &context());
        // Rates 10, 300, 50: median 50 (wall: 5, 150, 25 -> 25). The first repeat's count
        // over the median CPU time would have said 10 / 1 = 10.
        assert_eq!((records[0].cpu_value, records[0].value), (50.0, 25.0));
    }

    #[test]
    fn ratio_column_only_with_quiredb() {
        // Proves the table gains the ratio column when quiredb is present, against the best peer.
        let records = collector().records("T2", "run1", &context());
        let text = table(&records);
        assert!(text.contains("quiredb vs best peer"), "{text}");
        // quiredb median 1.5 s vs best peer redb 2.5 s for 100 ops: 66.7/40 = 1.67x.
        assert!(text.contains("1.67x"), "{text}");
        let peers: Vec<Record> = records.into_iter().filter(|r| r.engine != "quiredb").collect();
        assert!(!table(&peers).contains("vs best peer"));
    }

    #[test]
    fn variants_are_not_peers_and_zero_costs_compare() {
        // Proves quiredb-full is not taken as the best peer, that a workload with only
        // variants (T8) compares with them, and that zero allocations print as ∞.
        assert_eq!(rivals(&["quiredb", "quiredb-full", "redb"]), vec!["redb"]);
        assert_eq!(rivals(&["quiredb", "quiredb-detached"]), vec!["quiredb-detached"]);
        assert_eq!(format_ratio(advantage(0.0, 6.0, Unit::AllocsPerOp)), "∞");
        assert_eq!(advantage(0.0, 0.0, Unit::AllocsPerOp), 1.0);
        assert_eq!(Unit::AllocsPerOp.value(30.0, 10), 3.0);
        assert!(!Unit::AllocsPerOp.is_timed() && Unit::OpsPerSec.is_timed());
    }

    #[test]
    fn jsonl_appends_lines() {
        // Proves append_jsonl adds one parseable line per record and keeps earlier lines.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r/x.jsonl");
        let records = collector().records("T2", "run1", &context());
        append_jsonl(&path, &records).unwrap();
        append_jsonl(&path, &records).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 6);
        assert!(text.lines().all(|l| serde_json::from_str::<Record>(l).is_ok()));
    }
}
