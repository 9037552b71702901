//! T5 — QuickXDB: XPath query sets run on an XML engine. Per collection: load time and
//! size; per query set: every query run 5 times after a warm-up in the same process,
//! the set's total per run (median, min–max over the 5 runs). Counts are checked
//! against the expected counts of the query-set file. Query sets come from
//! `--qsets DIR` (`<collection>-<bucket>.qset`, documents `<collection>.xml` or
//! `.xml.zst` in `--xml-dir`); without them a synthetic collection with counts known
//! by construction is generated (`synthetic-all`).

use super::{Config, Outcome, remove_dir};
use crate::check::Checks;
use crate::error::{BenchError, Result};
use crate::qset::{self, Query, QuerySet};
use crate::registry;
use crate::results::{Collector, Unit};
use std::path::{Path, PathBuf};

/// Timed runs per query.
const RUNS: usize = 5;

/// Runs T5 for every selected XML engine.
pub fn run(cfg: &Config) -> Result<Outcome> {
    let input = cfg.work_dir.join("T5-input");
    std::fs::create_dir_all(&input).map_err(|e| BenchError::io(&input, e))?;
    let (sets, xml_dir, dataset) = match &cfg.qsets {
        Some(dir) => {
            let xml_dir = cfg.xml_dir.clone().unwrap_or_else(|| dir.clone());
            (qset::read_dir(dir)?, xml_dir, format!("query sets of {}", dir.display()))
        }
        None => {
            let items = cfg.count(200, 20_000, 200_000);
            let set = synthetic(&input, items)?;
            (vec![set], input.clone(), format!("synthetic collection of {items} items (no --qsets given)"))
        }
    };
    if sets.is_empty() {
        return Err(BenchError::Usage("T5: the query-set directory has no .qset files".into()));
    }
    let engines = cfg.select("T5", registry::xml())?;
    let mut collector = Collector::default();
    let mut checks = Checks::new("T5");
    let mut load_only = Vec::new();
    let mut per_query = PerQuery::default();
    for set in &sets {
        for (i, q) in set.queries.iter().enumerate() {
            checks.expect(&check_name(set, i, q), q.expected)?;
        }
    }
    for entry in &engines {
        collector.set_settings(entry.id, entry.settings);
        let dir = cfg.scratch("T5", entry.id)?;
        let mut engine = (entry.open)(&dir)?;
        if !engine.answers_queries() {
            load_only.push(entry.id);
        }
        let mut loaded: Vec<String> = Vec::new();
        for set in &sets {
            let name = set.collection.replace(|c: char| !c.is_ascii_alphanumeric(), "_");
            if !loaded.contains(&name) {
                let file = document(&xml_dir, &input, &set.collection)?;
                let (reported, s) = crate::measure::time(1, || engine.load(&name, &file))?;
                let s = crate::measure::Sample { wall_s: reported.unwrap_or(s.wall_s), ..s };
                collector.add(entry.id, &format!("load {}", set.collection), Unit::Seconds, s);
                collector.add_bytes(entry.id, &format!("size {}", set.collection), engine.size_bytes(&name)?);
                loaded.push(name.clone());
            }
            if cfg.t5_load_only || !engine.answers_queries() {
                continue;
            }
            let xpaths: Vec<String> = set.queries.iter().map(|q| q.xpath.clone()).collect();
            let timings = engine.run_queries(&name, &xpaths, RUNS)?;
            for (i, (q, t)) in set.queries.iter().zip(&timings).enumerate() {
                checks.record(entry.id, &check_name(set, i, q), t.count)?;
                per_query.add(&check_name(set, i, q), entry.id, t);
            }
            for run in 0..RUNS {
                let total: f64 = timings.iter().map(|t| t.runs_s[run]).sum();
                let s = crate::measure::Sample { wall_s: total, cpu_s: total, n: xpaths.len() as u64 };
                collector.add(
                    entry.id,
                    &format!("set {}-{} ({} queries)", set.collection, set.bucket, xpaths.len()),
                    Unit::Seconds,
                    s,
                );
            }
        }
        drop(engine);
        remove_dir(&dir)?;
    }
    per_query.report(cfg)?;
    let dataset = if cfg.t5_load_only {
        format!("{dataset}; load and size only (--load-only)")
    } else if load_only.is_empty() {
        dataset
    } else {
        format!("{dataset}; load and size only for {}", load_only.join(", "))
    };
    Ok(Outcome { collector, checks, dataset })
}

fn check_name(set: &QuerySet, i: usize, q: &Query) -> String {
    format!("{}-{} #{i} {}", set.collection, set.bucket, q.xpath)
}

/// The document of `collection`: `<dir>/<collection>.xml`, or `.xml.zst` decompressed
/// into `scratch`.
fn document(dir: &Path, scratch: &Path, collection: &str) -> Result<PathBuf> {
    let plain = dir.join(format!("{collection}.xml"));
    if plain.exists() {
        return Ok(plain);
    }
    let packed = dir.join(format!("{collection}.xml.zst"));
    let out = scratch.join(format!("{collection}.xml"));
    if !out.exists() {
        let input = std::fs::File::open(&packed).map_err(|e| BenchError::io(&packed, e))?;
        let mut output = std::fs::File::create(&out).map_err(|e| BenchError::io(&out, e))?;
        zstd::stream::copy_decode(input, &mut output).map_err(|e| BenchError::io(&packed, e))?;
    }
    Ok(out)
}

/// The synthetic collection: `items` items with i % 3 keywords, a location when i is
/// even and an `id`, and items / 2 people (T8 queries it too).
pub fn synthetic_xml(items: usize) -> String {
    let mut xml = String::from("<site><regions>");
    for i in 0..items {
        xml.push_str(&format!("<item id=\"i{i}\"><name>item {i}</name>"));
        for k in 0..i % 3 {
            xml.push_str(&format!("<keyword>k{k}</keyword>"));
        }
        if i % 2 == 0 {
            xml.push_str("<location>here</location>");
        }
        xml.push_str("</item>");
    }
    xml.push_str("</regions><people>");
    for p in 0..items / 2 {
        xml.push_str(&format!("<person id=\"p{p}\"><name>person {p}</name></person>"));
    }
    xml.push_str("</people></site>\n");
    xml
}

/// Writes `synthetic.xml` ([`synthetic_xml`]) and returns its query set with counts
/// known by construction.
fn synthetic(dir: &Path, items: usize) -> Result<QuerySet> {
    let path = dir.join("synthetic.xml");
    std::fs::write(&path, synthetic_xml(items)).map_err(|e| BenchError::io(&path, e))?;
    let keywords: usize = (0..items).map(|i| i % 3).sum();
    let located = items.div_ceil(2);
    let located_with_keyword = (0..items).filter(|i| i % 2 == 0 && i % 3 != 0).count();
    let q = |expected: usize, xpath: &str| Query { expected: expected as u64, xpath: xpath.into() };
    Ok(QuerySet {
        collection: "synthetic".into(),
        bucket: "all".into(),
        path: dir.join("synthetic-all.qset"),
        queries: vec![
            q(items, "/site/regions/item"),
            q(keywords, "//keyword"),
            q(keywords, "/site/regions//item//keyword"),
            q(located, "//item[./location]/name"),
            q(located_with_keyword, "/site/regions//item[./location and .//keyword]/name"),
            q(items / 2, "/site/people/person/name"),
            q(items + items / 2, "//name"),
        ],
    })
}

/// Median run time of every query per engine: the goal "no single query slower than
/// the best peer's" needs them, the set totals hide them.
#[derive(Default)]
struct PerQuery {
    /// (query, engine, median seconds), in run order.
    rows: Vec<(String, String, f64)>,
}

impl PerQuery {
    fn add(&mut self, query: &str, engine: &str, timing: &crate::family::QueryTiming) {
        let mut runs = timing.runs_s.clone();
        runs.sort_by(f64::total_cmp);
        let median = runs.get(runs.len() / 2).copied().unwrap_or(f64::NAN);
        self.rows.push((query.to_owned(), engine.to_owned(), median));
    }

    /// The queries on which `engine` is slower than the fastest engine of the other
    /// side, with the ratio, worst first.
    fn losses(&self, engine: &str) -> Vec<(f64, &String)> {
        let ours = |id: &str| id.starts_with("quiredb");
        let mut slower = Vec::new();
        for (q, _, s) in self.rows.iter().filter(|r| r.1 == engine) {
            let best_other = self
                .rows
                .iter()
                .filter(|r| r.0 == *q && ours(&r.1) != ours(engine))
                .map(|r| r.2)
                .fold(f64::INFINITY, f64::min);
            if best_other.is_finite() && *s > best_other {
                slower.push((s / best_other, q));
            }
        }
        slower.sort_by(|a, b| b.0.total_cmp(&a.0));
        slower
    }

    /// Writes `results/T5-per-query-<run>.tsv` and prints, per engine, the queries on
    /// which it is slower than the fastest engine of the other side (QuireDB's
    /// variants against the peers, a peer against QuireDB's variants).
    fn report(&self, cfg: &Config) -> Result<()> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let mut text = String::from("query\tengine\tmedian_s\n");
        for (q, e, s) in &self.rows {
            text.push_str(&format!("{q}\t{e}\t{s:.6}\n"));
        }
        let dir = Path::new("results");
        std::fs::create_dir_all(dir).map_err(|e| BenchError::io(dir, e))?;
        let path = dir.join(format!("T5-per-query-{}.tsv", cfg.run_id));
        std::fs::write(&path, text).map_err(|e| BenchError::io(&path, e))?;
        let engines: Vec<&str> = {
            let mut v: Vec<&str> = self.rows.iter().map(|r| r.1.as_str()).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        for engine in &engines {
            let slower = self.losses(engine);
            let total = self.rows.iter().filter(|r| r.1 == *engine).count();
            println!(
                "T5 per query: {engine} slower than the other side's fastest on {} of {total} queries",
                slower.len()
            );
            for (ratio, q) in slower.iter().take(10) {
                println!("  {ratio:.2}x  {q}");
            }
        }
        println!("T5 per-query medians: {}", path.display());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::PerQuery;

    #[test]
    fn a_variant_is_compared_with_the_peers_not_with_the_other_variant() {
        let rows = [
            ("q1", "quiredb", 2.0),
            ("q1", "quiredb-2t", 1.0),
            ("q1", "basex", 3.0),
            ("q2", "quiredb", 4.0),
            ("q2", "basex", 3.0),
        ];
        let per_query = PerQuery { rows: rows.iter().map(|(q, e, s)| (q.to_string(), e.to_string(), *s)).collect() };
        let losses = per_query.losses("quiredb");
        assert_eq!(losses.len(), 1, "only q2 is lost to a peer");
        assert_eq!(losses[0].1, "q2");
        assert!(per_query.losses("quiredb-2t").is_empty());
        assert_eq!(per_query.losses("basex").len(), 1, "basex loses q1 to QuireDB's fastest variant");
    }
}
