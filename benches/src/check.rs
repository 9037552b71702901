//! Cross-checks: every engine reports its answers (counts, sums of ids, hashes of kNN
//! id sets) under a check name; all engines — and every repeat of each engine — must
//! agree, and must agree with the expected value when the workload knows it. A fast
//! wrong answer therefore fails the run, naming who disagrees.

use crate::error::{BenchError, Result};
use std::collections::BTreeMap;

/// The pseudo-engine name under which a workload records a known-correct value.
pub const EXPECTED: &str = "expected";

/// Answers of one workload, by check name then engine.
#[derive(Debug, Default)]
pub struct Checks {
    workload: String,
    answers: BTreeMap<String, BTreeMap<String, u64>>,
}

impl Checks {
    /// Empty checks for `workload`.
    pub fn new(workload: &str) -> Checks {
        Checks { workload: workload.into(), answers: BTreeMap::new() }
    }

    /// Records `engine`'s answer to `check`; a different answer from an earlier repeat
    /// of the same engine fails at once.
    pub fn record(&mut self, engine: &str, check: &str, value: u64) -> Result<()> {
        let per_engine = self.answers.entry(check.into()).or_default();
        match per_engine.get(engine) {
            Some(&old) if old != value => Err(BenchError::CrossCheck {
                workload: self.workload.clone(),
                check: check.into(),
                detail: format!("{engine} answered {old} then {value} on the same data"),
            }),
            _ => {
                per_engine.insert(engine.into(), value);
                Ok(())
            }
        }
    }

    /// Records the known-correct answer to `check`.
    pub fn expect(&mut self, check: &str, value: u64) -> Result<()> {
        self.record(EXPECTED, check, value)
    }

    /// Fails when any check has two different answers, naming every answer.
    pub fn verify(&self) -> Result<()> {
        for (check, per_engine) in &self.answers {
            let mut values: Vec<u64> = per_engine.values().copied().collect();
            values.dedup();
            values.sort_unstable();
            values.dedup();
            if values.len() > 1 {
                let detail = per_engine.iter().map(|(e, v)| format!("{e}={v}")).collect::<Vec<_>>().join(", ");
                return Err(BenchError::CrossCheck { workload: self.workload.clone(), check: check.clone(), detail });
            }
        }
        Ok(())
    }

    /// Number of distinct checks and of engine answers recorded.
    pub fn counts(&self) -> (usize, usize) {
        let answers = self.answers.values().map(BTreeMap::len).sum();
        (self.answers.len(), answers)
    }
}

/// An order-independent fingerprint of an id set (for kNN answers).
pub fn id_set_hash(ids: &[u64]) -> u64 {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    sorted.iter().fold(0xcbf2_9ce4_8422_2325, |h, &id| (h ^ id).wrapping_mul(0x0100_0000_01b3))
}

/// FNV-1a over bytes, used to fingerprint values and records.
pub fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// A cheap fingerprint of a record, 8 bytes at a time (scan paths, where FNV's
/// byte loop would dominate the measured time).
pub fn word_hash(bytes: &[u8]) -> u64 {
    let mut h = bytes.len() as u64;
    for chunk in bytes.chunks(8) {
        let mut w = [0u8; 8];
        w[..chunk.len()].copy_from_slice(chunk);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreeing_engines_pass() {
        // Proves identical answers from several engines verify.
        let mut c = Checks::new("T1");
        c.record("redb", "found", 10).unwrap();
        c.record("lmdb", "found", 10).unwrap();
        c.expect("found", 10).unwrap();
        c.verify().unwrap();
        assert_eq!(c.counts(), (1, 3));
    }

    #[test]
    fn disagreement_names_the_engines() {
        // Proves a wrong answer fails verify and the message names both engines.
        let mut c = Checks::new("T4");
        c.record("rstar", "window", 5).unwrap();
        c.record("boost", "window", 6).unwrap();
        let err = c.verify().unwrap_err().to_string();
        assert!(err.contains("rstar=5") && err.contains("boost=6"), "{err}");
        assert!(err.contains("T4") && err.contains("window"), "{err}");
    }

    #[test]
    fn expected_value_is_enforced() {
        // Proves engines that agree with each other but not with the truth still fail.
        let mut c = Checks::new("T1");
        c.record("redb", "found", 9).unwrap();
        c.record("lmdb", "found", 9).unwrap();
        c.expect("found", 10).unwrap();
        assert!(c.verify().is_err());
    }

    #[test]
    fn repeat_disagreement_fails_immediately() {
        // Proves an engine that changes its answer between repeats is caught.
        let mut c = Checks::new("T3");
        c.record("bdb-queue", "scan", 1).unwrap();
        assert!(c.record("bdb-queue", "scan", 2).is_err());
    }

    #[test]
    fn id_set_hash_ignores_order() {
        // Proves kNN answers compare as sets.
        assert_eq!(id_set_hash(&[3, 1, 2]), id_set_hash(&[1, 2, 3]));
        assert_ne!(id_set_hash(&[1, 2, 3]), id_set_hash(&[1, 2, 4]));
    }
}
