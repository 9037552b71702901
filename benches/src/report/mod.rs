//! Report generator (`quire-bench report`): reads `results/*.jsonl`, keeps the latest
//! run of every workload, and writes `reports/<workload>.md` (tables of median, min–max
//! and CPU-based figures per op and engine, ratios to the best peer, the context
//! block) with one SVG bar chart per op (`svg.rs`), plus the index `reports/README.md`.

mod svg;

use crate::error::{BenchError, Result};
use crate::results::{Record, Unit, advantage, best, format_ratio, format_value, rivals};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Reads every record of the `.jsonl` files in `input`.
pub fn load(input: &Path) -> Result<Vec<Record>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(input)
        .map_err(|e| BenchError::io(input, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(&path).map_err(|e| BenchError::io(&path, e))?;
        for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let record = serde_json::from_str(line).map_err(|e| BenchError::Parse {
                path: path.clone(),
                line: i + 1,
                reason: e.to_string(),
            })?;
            out.push(record);
        }
    }
    Ok(out)
}

/// Keeps the newest record of every (workload, data set, engine, op), in first-seen
/// order: a workload run at several sizes (a peer too slow for the full size runs at
/// the largest that fits, with QuireDB beside it) keeps one table set per size.
pub fn latest(records: Vec<Record>) -> Vec<Record> {
    type Key = (String, String, String, String);
    let mut order: Vec<Key> = Vec::new();
    let mut newest: BTreeMap<Key, Record> = BTreeMap::new();
    for r in records {
        let key = (r.workload.clone(), r.context.dataset.clone(), r.engine.clone(), r.op.clone());
        let newer = newest
            .get(&key)
            .is_none_or(|old| (&r.context.machine.date, &r.run) >= (&old.context.machine.date, &old.run));
        if !newest.contains_key(&key) {
            order.push(key.clone());
        }
        if newer {
            newest.insert(key, r);
        }
    }
    order.into_iter().filter_map(|k| newest.remove(&k)).collect()
}

/// One op's records, the unit and the best peer (QuireDB excluded).
struct OpRows<'a> {
    op: &'a str,
    unit: Unit,
    rows: Vec<&'a Record>,
}

fn group_ops<'a>(records: &[&'a Record]) -> Vec<OpRows<'a>> {
    let mut ops: Vec<OpRows> = Vec::new();
    for &r in records {
        match ops.iter_mut().find(|o| o.op == r.op) {
            Some(o) => o.rows.push(r),
            None => ops.push(OpRows { op: &r.op, unit: r.unit, rows: vec![r] }),
        }
    }
    ops
}

/// The best peer of an op; QuireDB's variants count only in a workload without peers.
fn best_peer<'a>(o: &OpRows<'a>) -> Option<&'a Record> {
    let engines: Vec<&str> = o.rows.iter().map(|r| r.engine.as_str()).collect();
    let rivals = rivals(&engines);
    let peers: Vec<&Record> = o.rows.iter().copied().filter(|r| rivals.contains(&r.engine.as_str())).collect();
    let values: Vec<f64> = peers.iter().map(|r| r.value).collect();
    best(&values, o.unit).map(|(i, _)| peers[i])
}

/// Writes `<output>/<workload>.md`, the SVG charts and `<output>/README.md`.
pub fn generate(input: &Path, output: &Path) -> Result<()> {
    let records = latest(load(input)?);
    if records.is_empty() {
        return Err(BenchError::Usage(format!("no records in {}", input.display())));
    }
    std::fs::create_dir_all(output).map_err(|e| BenchError::io(output, e))?;
    let mut workloads: Vec<String> = records.iter().map(|r| r.workload.clone()).collect();
    workloads.sort();
    workloads.dedup();
    let index_path = output.join("README.md");
    let earlier = std::fs::read_to_string(&index_path).unwrap_or_default();
    let mut kept = kept_rows(&earlier, &workloads);
    let mut rows = IndexRows::default();
    for w in &workloads {
        let rs: Vec<Record> = records.iter().filter(|r| &r.workload == w).cloned().collect();
        let groups = by_dataset(&rs);
        let mut md = page_header(w, &rs);
        let ops = rows.ops.entry(w.clone()).or_default();
        for (i, group) in groups.iter().enumerate() {
            let section = (groups.len() > 1).then(|| (i, group[0].context.dataset.as_str()));
            dataset_section(&mut md, w, section, group, output)?;
            index_rows(ops, w, section.map(|(_, dataset)| dataset), group);
        }
        md.push_str(PAGE_FOOTER);
        let path = output.join(format!("{w}.md"));
        std::fs::write(&path, md).map_err(|e| BenchError::io(&path, e))?;
        rows.notes.insert(w.clone(), notes_row(w, &records));
    }
    let kept_workloads: Vec<String> = kept.ops.keys().cloned().collect();
    rows.ops.append(&mut kept.ops);
    rows.notes.append(&mut kept.notes);
    let mut index = String::from(INDEX_HEADER);
    rows.ops.values().for_each(|lines| index.push_str(lines));
    index.push_str("\n## Data sets, sizes and notes\n\n| workload | data set | repeats | notes |\n|---|---|---|---|\n");
    rows.notes.values().for_each(|line| index.push_str(line));
    if let Some(r) = records.first() {
        let m = &r.context.machine;
        let _ = writeln!(
            index,
            "\nMachine: {} ({} cores, {}), kernel {}; commit {}.",
            m.cpu, m.cores, m.mem, m.kernel, m.commit
        );
    }
    if !kept_workloads.is_empty() {
        let _ = writeln!(
            index,
            "The rows of {} are kept from an earlier run of the reports (their pages name its commit).",
            kept_workloads.join(", ")
        );
    }
    // Hand-written notes on how the committed run was made, kept across regenerations.
    if output.join("RUN.md").exists() {
        index.push_str("\nHow this run was made, and what it could not do: [RUN.md](RUN.md).\n");
    }
    std::fs::write(&index_path, index).map_err(|e| BenchError::io(&index_path, e))?;
    println!("wrote {} workload reports to {}", workloads.len(), output.display());
    Ok(())
}

/// The index's lines by workload: op rows, and the one line of the notes table.
#[derive(Default)]
struct IndexRows {
    ops: BTreeMap<String, String>,
    notes: BTreeMap<String, String>,
}

/// The line of workload `w` in the index's table of data sets, sizes and notes.
fn notes_row(w: &str, records: &[Record]) -> String {
    let rs: Vec<&Record> = records.iter().filter(|r| r.workload == w).collect();
    let notes = distinct_notes(rs.iter().copied());
    let repeats = rs.iter().map(|r| r.repeats).max().unwrap_or(0);
    let owned: Vec<Record> = rs.iter().map(|r| (*r).clone()).collect();
    let datasets: Vec<&str> = by_dataset(&owned).iter().map(|g| g[0].context.dataset.as_str()).collect();
    format!("| [{w}]({w}.md) | {} | {repeats} | {} |\n", datasets.join("; "), notes.join("; "))
}

/// The records' notes, each once, without those another note contains (a record's note
/// with a caveat of its engine appended carries the plain note too).
fn distinct_notes<'a>(rs: impl Iterator<Item = &'a Record>) -> Vec<&'a str> {
    let mut notes: Vec<&str> = rs.map(|r| r.note.as_str()).filter(|n| !n.is_empty()).collect();
    notes.sort_unstable();
    notes.dedup();
    let all = notes.clone();
    notes.retain(|note| !all.iter().any(|other| other != note && other.contains(note)));
    notes
}

/// The rows of an earlier index (`earlier`, the README being replaced) of the workloads
/// not in this run (`regenerated`): a run of some workloads leaves the others' pages, so
/// the index keeps their rows.
fn kept_rows(earlier: &str, regenerated: &[String]) -> IndexRows {
    let mut kept = IndexRows::default();
    let mut in_notes = false;
    for line in earlier.lines() {
        in_notes |= line.starts_with("## Data sets");
        let Some(w) = line.strip_prefix("| [").and_then(|rest| rest.split_once("](")).map(|(w, _)| w) else {
            continue;
        };
        if regenerated.iter().any(|r| r == w) {
            continue;
        }
        let table = if in_notes { &mut kept.notes } else { &mut kept.ops };
        let lines = table.entry(w.to_string()).or_default();
        lines.push_str(line);
        lines.push('\n');
    }
    kept
}

const INDEX_HEADER: &str = "# QuireDB benchmark reports\n\n\
Generated by `quire-bench report` from the JSON lines of `quire-bench` runs (see the\n\
README's Benchmarks section and `../../shared/BENCHMARKS.md` for the rules). One page per\n\
workload; figures are medians of the repeats, wall time unless marked CPU. The best\n\
peer per op (fastest, or smallest for sizes) is the number QuireDB must beat.\n\n\
| workload | op | best peer | median | min–max | from CPU time | quiredb | quiredb vs best peer |\n\
|---|---|---|---|---|---|---|---|\n";

/// The records of one workload split by data set, in first-seen order.
fn by_dataset(rs: &[Record]) -> Vec<Vec<&Record>> {
    let mut groups: Vec<Vec<&Record>> = Vec::new();
    for r in rs {
        match groups.iter_mut().find(|g| g[0].context.dataset == r.context.dataset) {
            Some(group) => group.push(r),
            None => groups.push(vec![r]),
        }
    }
    groups
}

fn index_rows(index: &mut String, w: &str, dataset: Option<&str>, rs: &[&Record]) {
    for o in group_ops(rs) {
        if let Some(b) = best_peer(&o) {
            let u = o.unit;
            let quire = o.rows.iter().find(|r| r.engine == "quiredb");
            let (q, ratio) = quire.map_or(("-".into(), "-".into()), |q| {
                (format_value(q.value, u), format_ratio(advantage(q.value, b.value, u)))
            });
            let _ = writeln!(
                index,
                "| [{w}]({w}.md) | {}{} | {} | {}{} | {}–{} | {} | {q} | {ratio} |",
                o.op,
                dataset.map_or(String::new(), |d| format!(" ({d})")),
                b.engine,
                format_value(b.value, u),
                if u == Unit::Bytes { String::new() } else { format!(" {}", u.label()) },
                format_value(b.min, u),
                format_value(b.max, u),
                cpu_figure(b.cpu_value, u)
            );
        }
    }
}

/// The top of a workload page: data sets, seed, machine, notes.
fn page_header(w: &str, rs: &[Record]) -> String {
    let mut md = format!("# {w}\n\n");
    let first = &rs[0];
    let m = &first.context.machine;
    let datasets: Vec<&str> = by_dataset(rs).iter().map(|g| g[0].context.dataset.as_str()).collect();
    let _ = writeln!(
        md,
        "- dataset: {}\n- seed: {:#x}\n- machine: {} ({} cores, {}), kernel {}\n- commit {}, date {}\n",
        datasets.join("; "),
        first.context.seed,
        m.cpu,
        m.cores,
        m.mem,
        m.kernel,
        m.commit,
        m.date
    );
    for note in distinct_notes(rs.iter()) {
        let _ = writeln!(md, "- **note:** {note}");
    }
    md
}

/// The engines and one table and chart per op of one data set; `section` (its index
/// and name) when the workload ran at several sizes, each then under its own heading.
fn dataset_section(
    md: &mut String,
    w: &str,
    section: Option<(usize, &str)>,
    rs: &[&Record],
    output: &Path,
) -> Result<()> {
    let (heading, chart_prefix) = match section {
        Some((i, dataset)) => {
            let _ = writeln!(md, "\n## {dataset}");
            ("###", if i == 0 { w.to_owned() } else { format!("{w}-{i}") })
        }
        None => ("##", w.to_owned()),
    };
    md.push_str("\n| engine | settings | note |\n|---|---|---|\n");
    let mut seen = Vec::new();
    for r in rs.iter().filter(|r| {
        let new = !seen.contains(&r.engine);
        seen.push(r.engine.clone());
        new
    }) {
        let _ = writeln!(md, "| {} | {} | {} |", r.engine, r.context.settings, r.note);
    }
    let (pages, charted): (Vec<OpRows>, Vec<OpRows>) =
        group_ops(rs).into_iter().partition(|o| o.unit == Unit::PagesPerOp);
    for o in charted {
        let chart = svg::chart(&chart_prefix, w, o.op, o.unit, &o.rows, output)?;
        let u = o.unit;
        let better = if u.higher_is_better() { "higher is better" } else { "lower is better" };
        let _ = writeln!(md, "\n{heading} {} ({}, {better})\n\n![{}]({chart})\n", o.op, u.label(), o.op);
        op_table(md, &o);
    }
    pages_table(md, heading, &pages);
    Ok(())
}

/// Page counts (T4's pages per query) in one compact table, ops down and engines
/// across, without charts: they describe the structure, not a speed to rank.
fn pages_table(md: &mut String, heading: &str, pages: &[OpRows<'_>]) {
    if pages.is_empty() {
        return;
    }
    let mut engines: Vec<&str> = Vec::new();
    for r in pages.iter().flat_map(|o| &o.rows) {
        if !engines.contains(&r.engine.as_str()) {
            engines.push(&r.engine);
        }
    }
    let _ = writeln!(md, "\n{heading} Pages per query (medians of the repeats)\n\n| op | {} |", engines.join(" | "));
    let _ = writeln!(md, "|---|{}", "---|".repeat(engines.len()));
    for o in pages {
        let cells: Vec<String> = engines
            .iter()
            .map(|e| o.rows.iter().find(|r| r.engine == *e).map_or("-".into(), |r| format_value(r.value, o.unit)))
            .collect();
        let _ = writeln!(md, "| {} | {} |", o.op, cells.join(" | "));
    }
}

/// The table of one op: every engine's figures and ratios.
fn op_table(md: &mut String, o: &OpRows<'_>) {
    let u = o.unit;
    let quire = o.rows.iter().find(|r| r.engine == "quiredb");
    let best = best_peer(o);

    md.push_str("| engine | median | min–max | from CPU time | CPU s | n | repeats | vs best peer |");
    md.push_str(if quire.is_some() { " quiredb vs this |\n" } else { "\n" });
    md.push_str("|---|---|---|---|---|---|---|---|");
    md.push_str(if quire.is_some() { "---|\n" } else { "\n" });
    for r in &o.rows {
        let ratio = best.map_or("-".into(), |b| format_ratio(advantage(r.value, b.value, u)));
        let cpu = cpu_figure(r.cpu_value, u);
        let _ = write!(
            md,
            "| {} | {} | {}–{} | {} | {:.3} | {} | {} | {} |",
            r.engine,
            format_value(r.value, u),
            format_value(r.min, u),
            format_value(r.max, u),
            cpu,
            r.cpu_s,
            r.n,
            r.repeats,
            ratio
        );
        match quire {
            Some(_) if r.engine == "quiredb" => md.push_str(" - |\n"),
            Some(q) => {
                let _ = writeln!(md, " {} |", format_ratio(advantage(q.value, r.value, u)));
            }
            None => md.push('\n'),
        }
    }
}

/// The explanation of the ratio columns at the end of a page.
const PAGE_FOOTER: &str = "\n\"vs best peer\": the engine's figure relative to the best peer's (> 1 better, < 1 worse; \
         QuireDB's variants such as `quiredb-full` are not peers). \"quiredb vs this\": QuireDB's figure \
         relative to this engine's, measured in the same run (> 1: QuireDB better).\n";

/// The "from CPU time" figure: "-" for untimed units and for records that mark it
/// unknown with a negative value (T4 query sets timed before commit 15ad450, whose
/// figure divided the median CPU time by the first repeat's count of varying passes;
/// `reports/RUN.md` says which).
fn cpu_figure(value: f64, u: Unit) -> String {
    if u.is_timed() && value >= 0.0 { format_value(value, u) } else { "-".into() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::RecordContext;

    #[test]
    fn a_negative_cpu_figure_reads_as_unknown() {
        // Proves records marked with a negative CPU figure, and untimed units, print "-".
        assert_eq!(cpu_figure(-1.0, Unit::OpsPerSec), "-");
        assert_eq!(cpu_figure(5.0, Unit::Bytes), "-");
        assert_eq!(cpu_figure(2500.0, Unit::OpsPerSec), format_value(2500.0, Unit::OpsPerSec));
    }

    fn record(engine: &str, op: &str, value: f64, run: &str) -> Record {
        Record {
            workload: "T1".into(),
            engine: engine.into(),
            op: op.into(),
            unit: Unit::MsPerOp,
            value,
            min: value,
            max: value,
            cpu_value: value,
            cpu_s: 0.1,
            wall_s: 0.1,
            n: 10,
            repeats: 3,
            run: run.into(),
            note: String::new(),
            context: RecordContext {
                machine: crate::context::Machine {
                    commit: "c".into(),
                    cpu: "cpu".into(),
                    cores: 2,
                    mem: "1 kB".into(),
                    kernel: "k".into(),
                    date: "2026-01-01T00:00:00Z".into(),
                },
                dataset: "d".into(),
                seed: 1,
                settings: "s".into(),
            },
        }
    }

    #[test]
    fn latest_keeps_newest_per_engine_and_op() {
        // Proves a later run replaces an earlier one, op by op, keeping first-seen order.
        let rs = vec![
            record("redb", "insert", 2.0, "a"),
            record("lmdb", "insert", 3.0, "a"),
            record("redb", "insert", 1.0, "b"),
        ];
        let l = latest(rs);
        assert_eq!(l.len(), 2);
        assert_eq!((l[0].engine.as_str(), l[0].value), ("redb", 1.0));
    }

    #[test]
    fn report_round_trip_writes_pages_and_charts() {
        // Proves JSONL written by the harness is read back and rendered with an SVG.
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("results");
        let rs = vec![record("redb", "insert", 2.0, "a"), record("lmdb", "insert", 3.0, "a")];
        crate::results::append_jsonl(&input.join("x-T1.jsonl"), &rs).unwrap();
        let out = dir.path().join("reports");
        generate(&input, &out).unwrap();
        let page = std::fs::read_to_string(out.join("T1.md")).unwrap();
        assert!(page.contains("| redb | 2.00 |"), "{page}");
        let index = std::fs::read_to_string(out.join("README.md")).unwrap();
        assert!(index.contains("| insert | redb |"), "{index}");
        let svgs = std::fs::read_dir(&out)
            .unwrap()
            .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "svg"))
            .count();
        assert_eq!(svgs, 1);
    }

    #[test]
    fn page_counts_share_one_table_without_charts() {
        // Proves pages/op records land in one table (ops down, engines across), not charts.
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("results");
        let mut rs = vec![record("quiredb", "window", 1000.0, "a"), record("rstar", "window", 900.0, "a")];
        for (engine, op, value) in [("quiredb", "window: pages read", 3.5), ("quiredb-f32", "window: pages read", 2.0)]
        {
            let mut r = record(engine, op, value, "a");
            r.unit = Unit::PagesPerOp;
            rs.push(r);
        }
        crate::results::append_jsonl(&input.join("x-T1.jsonl"), &rs).unwrap();
        let out = dir.path().join("reports");
        generate(&input, &out).unwrap();
        let page = std::fs::read_to_string(out.join("T1.md")).unwrap();
        assert!(
            page.contains("| op | quiredb | quiredb-f32 |\n|---|---|---|\n| window: pages read | 3.50 | 2.00 |"),
            "{page}"
        );
        let svgs = std::fs::read_dir(&out)
            .unwrap()
            .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "svg"));
        assert_eq!(svgs.count(), 1, "one chart: the timed window op");
    }

    #[test]
    fn a_workload_run_at_two_sizes_gets_a_section_and_charts_per_size() {
        // Proves records of two data sets are neither merged nor replaced by each other:
        // each size has its own heading, ratios and charts (QuireDB beside each group).
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("results");
        let sized = |engine: &str, value: f64, dataset: &str| {
            let mut r = record(engine, "insert", value, "a");
            r.context.dataset = dataset.into();
            r
        };
        let rs = vec![
            sized("quiredb", 1.0, "1 M keys"),
            sized("lmdb", 2.0, "1 M keys"),
            sized("quiredb", 4.0, "100 k keys"),
            sized("sqlite-wal", 2.0, "100 k keys"),
        ];
        crate::results::append_jsonl(&input.join("x-T1.jsonl"), &rs).unwrap();
        let out = dir.path().join("reports");
        generate(&input, &out).unwrap();
        let page = std::fs::read_to_string(out.join("T1.md")).unwrap();
        assert!(page.contains("\n## 1 M keys\n") && page.contains("\n## 100 k keys\n"), "{page}");
        assert!(page.contains("| sqlite-wal | 2.00 |") && page.contains("| quiredb | 4.00 |"), "{page}");
        assert!(page.contains("T1-insert.svg") && page.contains("T1-1-insert.svg"), "{page}");
        let index = std::fs::read_to_string(out.join("README.md")).unwrap();
        assert!(
            index.contains("| insert (1 M keys) | lmdb |") && index.contains("| insert (100 k keys) | sqlite-wal |")
        );
    }

    #[test]
    fn a_run_of_some_workloads_keeps_the_index_rows_of_the_others() {
        // Proves regenerating T2 alone replaces T2's rows and keeps T1's (page and index),
        // in workload order; a second regeneration does not repeat the kept rows.
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("reports");
        let in_workload = |w: &str, engine: &str, value: f64| {
            let mut r = record(engine, "insert", value, "a");
            r.workload = w.into();
            r
        };
        let first = dir.path().join("first");
        let rs =
            vec![in_workload("T1", "quiredb", 1.0), in_workload("T1", "lmdb", 2.0), in_workload("T2", "lmdb", 5.0)];
        crate::results::append_jsonl(&first.join("a.jsonl"), &rs).unwrap();
        generate(&first, &out).unwrap();
        let second = dir.path().join("second");
        crate::results::append_jsonl(&second.join("b.jsonl"), &[in_workload("T2", "lmdb", 7.0)]).unwrap();
        generate(&second, &out).unwrap();
        generate(&second, &out).unwrap();
        let index = std::fs::read_to_string(out.join("README.md")).unwrap();
        let t1 = index.find("| [T1](T1.md) | insert | lmdb | 2.00").expect("T1's row kept");
        let t2 = index.find("| [T2](T2.md) | insert | lmdb | 7.00").expect("T2's new row");
        assert!(t1 < t2 && !index.contains("| 5.00"), "{index}");
        assert_eq!(index.matches("| [T1](T1.md) |").count(), 2, "one op row, one notes row: {index}");
        assert!(index.contains("The rows of T1 are kept"), "{index}");
        assert!(out.join("T1.md").exists());
    }
    #[test]
    fn a_note_another_note_contains_is_shown_once() {
        // Proves a note repeated inside a longer one (an engine's caveat appended) is
        // listed only in the longer one, on the page and in the index.
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("results");
        let mut plain = record("quiredb", "insert", 1.0, "a");
        plain.note = "full size".into();
        let mut longer = record("lmdb", "insert", 2.0, "a");
        longer.note = "full size; no cache knob".into();
        crate::results::append_jsonl(&input.join("x-T1.jsonl"), &[plain, longer]).unwrap();
        let out = dir.path().join("reports");
        generate(&input, &out).unwrap();
        let page = std::fs::read_to_string(out.join("T1.md")).unwrap();
        assert!(
            page.contains("- **note:** full size; no cache knob\n") && !page.contains("- **note:** full size\n"),
            "{page}"
        );
        let index = std::fs::read_to_string(out.join("README.md")).unwrap();
        assert!(index.contains("| 3 | full size; no cache knob |"), "{index}");
    }
}
