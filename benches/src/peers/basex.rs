//! BaseX 9.7 peer (`basex`): the Debian package run as a subprocess on the JVM,
//! `java -Dorg.basex.DBPATH=<dir> -cp /usr/share/java/basex.jar org.basex.BaseX -V
//! -c …`, one `-c` per command, databases on disk with default indexes. Timings are
//! BaseX's own (`-V`: "created in … ms", "Total Time: … ms"), so JVM start-up is not
//! counted. `count(path)` is folded at compile time, so the count comes from one
//! `count()` run and the timed runs evaluate `prof:void(path)` after a warm-up in
//! the same JVM. XML family (T5).

use crate::error::{BenchError, Result};
use crate::family::{QueryTiming, XmlEngine, dir_size};
use std::path::{Path, PathBuf};
use std::process::Command;

const ID: &str = "basex";
/// Where the Debian package puts the jar.
pub const JAR: &str = "/usr/share/java/basex.jar";
/// Warm-up evaluations before the timed runs (BENCHMARKS.md: at least 10 per JVM).
const WARMUP_RUNS: usize = 10;

/// A BaseX installation with its database directory.
pub struct Basex {
    db_path: PathBuf,
}

/// Opener for `basex`; fails loudly when Java or the jar is missing.
pub fn open(dir: &Path) -> Result<Box<dyn XmlEngine>> {
    if !Path::new(JAR).exists() {
        return Err(BenchError::MissingEngine {
            workload: "T5".into(),
            engine: ID.into(),
            reason: format!("{JAR} not found: run benches/install-peers.sh"),
        });
    }
    std::fs::create_dir_all(dir).map_err(|e| BenchError::io(dir, e))?;
    Ok(Box::new(Basex { db_path: dir.into() }))
}

impl Basex {
    /// Runs one JVM with the given commands and returns its stdout.
    fn run(&self, commands: &[String]) -> Result<String> {
        let mut cmd = Command::new("java");
        cmd.arg(format!("-Dorg.basex.DBPATH={}", self.db_path.display())).args([
            "-Xmx4g",
            "-cp",
            JAR,
            "org.basex.BaseX",
            "-V",
        ]);
        for c in commands {
            cmd.arg("-c").arg(c);
        }
        let out = cmd.output().map_err(|e| BenchError::engine(ID, format!("cannot start java: {e}")))?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            return Err(BenchError::engine(ID, format!("exit {}: {}", out.status, stderr.trim())));
        }
        Ok(stdout)
    }
}

/// Milliseconds of every "Total Time: X ms" line, in order (one per XQUERY command).
pub fn total_times_ms(stdout: &str) -> Vec<f64> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("Total Time: "))
        .filter_map(|l| l.trim_end_matches(" ms").trim().parse().ok())
        .collect()
}

/// Values of every "COUNT:<n>" line, in order.
pub fn counts(stdout: &str) -> Vec<u64> {
    stdout.lines().filter_map(|l| l.trim().strip_prefix("COUNT:")).filter_map(|n| n.trim().parse().ok()).collect()
}

/// The plan of commands for one query set and the index of each timed command's
/// "Total Time" line: counts first, warm-up, then `runs` rounds over all queries.
pub fn plan(name: &str, queries: &[String], runs: usize) -> (Vec<String>, usize) {
    let mut commands = vec![format!("OPEN {name}")];
    commands.extend(queries.iter().map(|q| format!("XQUERY 'COUNT:' || count({q})")));
    let warm = WARMUP_RUNS.div_ceil(queries.len().max(1)).max(1);
    for _ in 0..warm {
        commands.extend(queries.iter().map(|q| format!("XQUERY prof:void({q})")));
    }
    let skip = queries.len() * (1 + warm);
    for _ in 0..runs {
        commands.extend(queries.iter().map(|q| format!("XQUERY prof:void({q})")));
    }
    (commands, skip)
}

impl XmlEngine for Basex {
    fn load(&mut self, name: &str, file: &Path) -> Result<Option<f64>> {
        let out = self.run(&[format!("CREATE DB {name} {}", file.display())])?;
        let prefix = format!("Database '{name}' created in ");
        let ms = out
            .lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()))
            .and_then(|rest| rest.trim_end_matches(" ms.").trim().parse::<f64>().ok());
        match ms {
            Some(ms) => Ok(Some(ms / 1e3)),
            None => Err(BenchError::engine(ID, format!("CREATE DB said: {}", out.trim()))),
        }
    }

    fn run_queries(&mut self, name: &str, queries: &[String], runs: usize) -> Result<Vec<QueryTiming>> {
        let (commands, skip) = plan(name, queries, runs);
        let out = self.run(&commands)?;
        let counts = counts(&out);
        let times = total_times_ms(&out);
        let expected_times = skip + runs * queries.len();
        if counts.len() != queries.len() || times.len() != expected_times {
            return Err(BenchError::engine(
                ID,
                format!(
                    "expected {} counts and {expected_times} timings, got {} and {}",
                    queries.len(),
                    counts.len(),
                    times.len()
                ),
            ));
        }
        Ok((0..queries.len())
            .map(|q| QueryTiming {
                count: counts[q],
                runs_s: (0..runs).map(|r| times[skip + r * queries.len() + q] / 1e3).collect(),
            })
            .collect())
    }

    fn size_bytes(&mut self, name: &str) -> Result<u64> {
        dir_size(&self.db_path.join(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_verbose_output() {
        // Proves counts and timings are read from BaseX -V output in command order.
        let out =
            "COUNT:7014\nQuery:\ncount(//k)\nTotal Time: 521.09 ms\n\nQuery:\nprof:void(//k)\nTotal Time: 64.43 ms\n";
        assert_eq!(counts(out), vec![7014]);
        assert_eq!(total_times_ms(out), vec![521.09, 64.43]);
    }

    #[test]
    fn plan_places_timed_runs_last() {
        // Proves the timed commands follow counts and warm-up, one round per run.
        let qs = vec!["//a".to_string(), "//b".to_string()];
        let (cmds, skip) = plan("x", &qs, 5);
        assert_eq!(cmds[0], "OPEN x");
        assert_eq!(cmds.len() - 1 - skip, 10);
        assert_eq!(skip, 2 + 2 * 5);
        assert_eq!(cmds.last().map(String::as_str), Some("XQUERY prof:void(//b)"));
    }
}
